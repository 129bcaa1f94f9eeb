// SPDX-License-Identifier: MIT
// `spotdnn simulate` and `spotdnn replan` end to end, and the revocation JSON readers and writers.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/planner.hpp>

#include "support/run_command.hpp"

using namespace spotdnn;
using spotdnn::test::run_cli;
using spotdnn::test::write_temp_file;

namespace {

io::Json parse(const std::string& text) { return io::Json::parse(text); }

void check_bad_input(const spotdnn::test::CommandResult& r) {
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
}

}  // namespace

TEST_CASE("spotdnn simulate without revocations reports the deterministic prediction with probability 1") {
  const auto r = run_cli("simulate --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --deadline 2600 "
                         "--fallback-hazard 0 --scenarios 200 --format json");
  REQUIRE(r.exit_code == 0);
  const io::Json j = parse(r.out);
  CHECK(j["status"] == "feasible");
  CHECK(j["probability_meets_deadline"]["estimate"] == 1.0);
  CHECK(j["deterministic_time_s"].get<double>() == doctest::Approx(2340.729669).epsilon(1e-9));
  CHECK(j["time_s"]["p50"].get<double>() == j["deterministic_time_s"].get<double>());
  CHECK(j["time_s"]["p99"].get<double>() == j["deterministic_time_s"].get<double>());
  CHECK(j["mean_time_s"].get<double>() == doctest::Approx(j["deterministic_time_s"].get<double>()).epsilon(1e-13));
  CHECK(j["mean_cost_usd"].get<double>() == doctest::Approx(3.097565595).epsilon(1e-9));
  CHECK(j["interruption"]["types"][0]["source"] == "fallback");
}

TEST_CASE("spotdnn simulate gives the same answer for a seed whatever the thread count") {
  const std::string args = "simulate --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --deadline 2600 "
                           "--fallback-band '>20%' --hazard g3.8xlarge=0.4 --scenarios 3000 --seed 17 --format json";
  const auto one = run_cli(args + " --threads 1");
  const auto two = run_cli(args + " --threads 2");
  REQUIRE(one.exit_code == 0);
  CHECK(one.out == two.out);
  const io::Json j = parse(one.out);
  CHECK(j["probability_meets_deadline"]["estimate"].get<double>() < 1.0);
  CHECK(j["mean_revocations"].get<double>() > 0.0);
  CHECK(j["interruption"]["types"][2]["source"] == "override");
  const auto other = run_cli("simulate --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --deadline 2600 "
                             "--fallback-band '>20%' --hazard g3.8xlarge=0.4 --scenarios 3000 --seed 18 --format json");
  CHECK(other.out != one.out);
}

TEST_CASE("spotdnn simulate draws a histogram and reports checkpoint intervals") {
  const std::string svg = std::string(SPOTDNN_TEST_BINARY_DIR) + "/revocation_histogram.svg";
  std::remove(svg.c_str());
  const auto r = run_cli("simulate --cluster g4dn.4xlarge=4 --target-loss 0.8 --deadline 3600 --fallback-hazard 0.5 "
                         "--scenarios 2000 --replacement same-type --checkpoint-write 60 --histogram '" + svg + "'");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("P(finish <= deadline)") != std::string::npos);
  CHECK(r.out.find("checkpoint every (Daly)") != std::string::npos);
  std::ifstream file(svg);
  std::stringstream text;
  text << file.rdbuf();
  CHECK(text.str().find("<svg") != std::string::npos);
  CHECK(text.str().find("deadline 3600 s") != std::string::npos);
  CHECK(text.str().find("P(finish &lt;= 3600 s)") != std::string::npos);
}

TEST_CASE("spotdnn simulate rejects bad input with one line on stderr") {
  check_bad_input(run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 2600"));  // no hazard
  check_bad_input(run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 2600 --fallback-hazard 0.1 "
                          "--replacement sometimes"));
  check_bad_input(run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 2600 --hazard p3.2xlarge=-1"));
  check_bad_input(run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 0 --fallback-hazard 0.1"));
  check_bad_input(run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 100 --fallback-band 7%"));
  check_bad_input(run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.3 --deadline 100 --fallback-hazard 0.1"));
}

TEST_CASE("spotdnn replan adds the cheapest instances, or says no set can meet the deadline") {
  const std::string state = write_temp_file(
      "revocation_state.json",
      R"({"survivors": {"p3.2xlarge": 2}, "elapsed_s": 1276.5, "deadline_s": 2600, "target_loss": 0.8, "loss_reached": 1.0676})");
  const auto ok = run_cli("replan --state '" + state + "' --format json");
  REQUIRE(ok.exit_code == 0);
  const io::Json j = parse(ok.out);
  CHECK(j["status"] == "optimal");
  CHECK(j["survivors"]["p3.2xlarge"] == 2);
  CHECK(j["cluster"]["p3.2xlarge"] == 2);
  CHECK_FALSE(j["additions"].empty());
  CHECK(j["completion_time_s"].get<double>() <= 2600);

  const auto late = run_cli("replan --state '" + state + "' --join-delay 1200 --format json");
  REQUIRE(late.exit_code == 3);  // infeasible: printed, exit code 3 as for `plan`
  const io::Json l = parse(late.out);
  CHECK(l["status"] == "infeasible");
  CHECK(l["fastest_finish_time_s"].get<double>() > l["remaining_time_s"].get<double>());

  const auto table = run_cli("replan --state '" + state + "' --exclude g3.8xlarge");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("add ") != std::string::npos);
  CHECK(table.out.find("g3.8xlarge") == std::string::npos);
}

TEST_CASE("spotdnn replan rejects a bad state file with one line on stderr") {
  const std::string unknown = write_temp_file(
      "revocation_state_unknown.json",
      R"({"survivors": {}, "elapsed_s": 1, "deadline_s": 2600, "target_loss": 0.8, "loss": 1.0})");
  check_bad_input(run_cli("replan --state '" + unknown + "'"));
  const std::string both = write_temp_file(
      "revocation_state_both.json",
      R"({"survivors": {}, "elapsed_s": 1, "deadline_s": 2600, "target_loss": 0.8, "loss_reached": 1.0, "samples_trained": 5, "trained_on": {"p3.2xlarge": 1}})");
  check_bad_input(run_cli("replan --state '" + both + "'"));
  check_bad_input(run_cli("replan --state /nonexistent/state.json"));
  const std::string type = write_temp_file(
      "revocation_state_type.json",
      R"({"survivors": {"t2.nano": 1}, "elapsed_s": 1, "deadline_s": 2600, "target_loss": 0.8, "loss_reached": 1.0})");
  check_bad_input(run_cli("replan --state '" + type + "'"));
}

TEST_CASE("a replan state survives a JSON round trip") {
  io::ReplanState s;
  s.request.survivors = Cluster{{"p3.2xlarge", 2}};
  s.request.elapsed_s = 100.5;
  s.request.deadline_s = 2600;
  s.request.target_loss = 0.8;
  s.request.samples_trained = 12345;
  s.request.trained_on = Cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 1}};
  s.options.join_delay_s = 90;
  s.options.exclude_types = {"g3.8xlarge"};
  s.options.plan.charge_parameter_server = false;
  const io::ReplanState back = io::replan_state_from_json(io::to_json(s));
  CHECK(back.request.survivors == s.request.survivors);
  CHECK(back.request.elapsed_s == s.request.elapsed_s);
  CHECK(*back.request.samples_trained == *s.request.samples_trained);
  CHECK(back.request.trained_on == s.request.trained_on);
  CHECK_FALSE(back.request.loss_reached.has_value());
  CHECK(back.options.join_delay_s == 90);
  CHECK(back.options.exclude_types == s.options.exclude_types);
  CHECK_FALSE(back.options.plan.charge_parameter_server);
}

TEST_CASE("spotdnn plan --confidence returns a plan at least as likely to finish as asked, next to the deterministic one") {
  const auto r = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --scenarios 2000 "
                         "--seed 7 --format json");
  REQUIRE(r.exit_code == 0);
  const io::Json j = io::Json::parse(r.out);
  CHECK(j["status"] == "feasible");
  CHECK(j["scenarios"] == 2000);
  CHECK(j["simulation"]["probability_meets_deadline"]["estimate"].get<double>() >= 0.9);
  const double deterministic_p = j["deterministic"]["probability_meets_deadline"]["estimate"].get<double>();
  CHECK(deterministic_p < 0.9);  // at 0.1 revocations per hour the cheapest plan is too fragile (P ≈ 0.79)
  CHECK(j["prediction"]["cost_usd"].get<double>() > j["deterministic"]["cost_usd"].get<double>());
  // Every cheaper candidate was simulated and fell short; the last one simulated is the plan.
  const io::Json& simulated = j["simulated"];
  REQUIRE(simulated.size() == j["candidates_simulated"].get<std::size_t>());
  for (std::size_t i = 0; i + 1 < simulated.size(); ++i) CHECK(simulated[i]["probability"].get<double>() < 0.9);
  CHECK(simulated.back()["cluster"] == j["cluster"]);

  const auto table = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --seed 7");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("deterministic (exact)") != std::string::npos);
  CHECK(table.out.find("with confidence") != std::string::npos);
}

TEST_CASE("spotdnn plan --confidence refuses what it cannot honour") {
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9"));  // no hazard for the preset
  check_bad_input(run_cli("plan --target-loss 0.8 --budget 3 --confidence 0.9 --fallback-hazard 0.1"));
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 1.5 --fallback-hazard 0.1"));
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --hazard p3.2xlarge=-1"));
  const auto none = run_cli("plan --target-loss 0.8 --deadline 1500 --confidence 0.9 --fallback-hazard 0.1");
  CHECK(none.exit_code == 3);  // no plan meets a deadline below the fastest achievable time
}
