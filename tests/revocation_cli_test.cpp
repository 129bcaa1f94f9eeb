// SPDX-License-Identifier: MIT
// `spotdnn simulate` and `spotdnn replan` end to end, and the revocation JSON readers and writers.
#include <doctest/doctest.h>

#include <algorithm>
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

TEST_CASE("spotdnn simulate --plot draws the finish-time histogram and reports checkpoint intervals") {
  const std::string svg = std::string(SPOTDNN_TEST_BINARY_DIR) + "/revocation_histogram.svg";
  std::remove(svg.c_str());
  const auto r = run_cli("simulate --cluster g4dn.4xlarge=4 --target-loss 0.8 --deadline 1h --fallback-hazard 0.5 "
                         "--scenarios 2000 --replacement same-type --checkpoint-write 1m --plot '" + svg + "'");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("P(finish <= deadline)") != std::string::npos);
  CHECK(r.out.find("checkpoint every (Daly)") != std::string::npos);
  std::ifstream file(svg);
  std::stringstream text;
  text << file.rdbuf();
  CHECK(text.str().find("<svg") != std::string::npos);
  CHECK(text.str().find("deadline 60 min") != std::string::npos);
  CHECK(text.str().find("g4dn.4xlarge=4: P(finish by 60 min) = ") != std::string::npos);
  CHECK(text.str().find("never finished: ") != std::string::npos);
  CHECK(text.str().find("time to reach the target loss [min]") != std::string::npos);
}

TEST_CASE("spotdnn simulate takes durations with units for --deadline, --join-delay, --notice and --checkpoint-write") {
  const std::string base = "simulate --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --fallback-hazard 0.3 "
                           "--replacement same-type --scenarios 300 --format json ";
  const auto units = run_cli(base + "--deadline 45m --join-delay 90s --notice 2m --checkpoint-write 5m");
  const auto seconds = run_cli(base + "--deadline 2700 --join-delay 90 --notice 120 --checkpoint-write 300");
  REQUIRE(units.exit_code == 0);
  CHECK(units.out == seconds.out);
  CHECK(parse(units.out)["deadline_s"] == 2700);
  // No notice and an instant join are allowed; a zero or negative deadline or checkpoint write is not.
  CHECK(run_cli(base + "--deadline 45m --join-delay 0 --notice 0").exit_code == 0);
  check_bad_input(run_cli(base + "--deadline 0"));
  check_bad_input(run_cli(base + "--deadline 45x"));
  check_bad_input(run_cli(base + "--deadline 45m --notice -1m"));
  check_bad_input(run_cli(base + "--deadline 45m --checkpoint-write 0"));
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

TEST_CASE("spotdnn simulate --format csv writes one header and one row with the JSON's figures") {
  const std::string base = "simulate --cluster p3.2xlarge=2,g3.8xlarge=2 --target-loss 0.8 --deadline 2600 "
                           "--fallback-hazard 0.2 --scenarios 800 --seed 5 --checkpoint-write 1m ";
  const auto csv = run_cli(base + "--format csv");
  const auto json = run_cli(base + "--format json");
  INFO(csv.err);
  REQUIRE(csv.exit_code == 0);
  REQUIRE(json.exit_code == 0);
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  const std::string row = csv.out.substr(header.size() + 1);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 2);
  CHECK(header.rfind("cluster,target_loss,deadline_s,scenarios,seed,replacement,ps_charged,probability_meets_deadline,", 0) == 0);
  CHECK(std::count(header.begin(), header.end(), ',') == std::count(row.begin(), row.end(), ','));
  CHECK(row.rfind("g3.8xlarge=2;p3.2xlarge=2,0.8,2600,800,5,none,true,", 0) == 0);
  const io::Json j = parse(json.out);
  const double estimate = j.at("probability_meets_deadline").at("estimate").get<double>();
  CHECK(row.find("," + spotdnn::detail::format_number(estimate) + ",") != std::string::npos);
  CHECK(row.find("," + spotdnn::detail::format_number(j.at("checkpoint").at("daly_interval_s").get<double>())) != std::string::npos);
}

TEST_CASE("spotdnn simulate needs hazards only for the types of its cluster") {
  // The preset catalog gives no hazard for any type: a hazard for p3.2xlarge is enough to simulate it.
  const auto ok = run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 45m --hazard p3.2xlarge=0.1 "
                          "--scenarios 500 --format json");
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  // A type of the cluster without a hazard is named, with how to give one.
  const auto missing = run_cli("simulate --cluster p3.2xlarge=2,g3.8xlarge=2 --target-loss 0.8 --deadline 45m "
                               "--hazard p3.2xlarge=0.1 --scenarios 500");
  check_bad_input(missing);
  CHECK(missing.err.find("g3.8xlarge") != std::string::npos);
  CHECK(missing.err.find("--hazard") != std::string::npos);
  CHECK(missing.err.find("p3.2xlarge\"") == std::string::npos);
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

TEST_CASE("spotdnn plan --confidence returns a plan shown to reach the level, next to the deterministic one") {
  // A cap of 20,000 scenarios cannot tell the third plan (P about 0.899) from 0.9: it is passed over.
  const auto r = run_cli("plan --target-loss 0.8 --deadline 43m20s --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 20000 "
                         "--seed 7 --format json");
  REQUIRE(r.exit_code == 0);
  const io::Json j = io::Json::parse(r.out);
  CHECK(j["kind"] == "spotdnn.plan");
  CHECK(j["deadline_s"] == 2600);
  CHECK(j["status"] == "feasible");
  CHECK(j["confidence"] == 0.9);
  CHECK(j["tolerance"] == 0);
  CHECK(j["error_rate"] == 0.05);
  CHECK(j["max_scenarios"] == 20000);
  const io::Json& p = j["probability_meets_deadline"];
  CHECK(p["lower"].get<double>() > 0.9);
  CHECK(p["trials"].get<int>() <= 20000);
  CHECK(j["simulation"]["probability_meets_deadline"] == p);
  CHECK(j["deterministic"]["probability_meets_deadline"]["upper"].get<double>() < 0.9);  // P about 0.80
  CHECK(j["prediction"]["cost_usd"].get<double>() > j["deterministic"]["cost_usd"].get<double>());
  // Every cheaper candidate was decided to fall short or left undecided; the last one simulated is the plan.
  const io::Json& simulated = j["simulated"];
  REQUIRE(simulated.size() == j["candidates_simulated"].get<std::size_t>());
  std::size_t undecided = 0;
  for (std::size_t i = 0; i + 1 < simulated.size(); ++i) {
    if (simulated[i]["decision"] == "undecided") {
      ++undecided;
      CHECK(simulated[i]["scenarios"] == 20000);
    } else {
      CHECK(simulated[i]["decision"] == "falls_short");
      CHECK(simulated[i]["upper"].get<double>() < 0.9);
    }
  }
  CHECK(undecided >= 1);
  CHECK(j["candidates_undecided"] == undecided);
  CHECK(simulated.back()["decision"] == "meets");
  CHECK(simulated.back()["cluster"] == j["cluster"]);
  CHECK(j["message"].get<std::string>().find("stayed undecided") != std::string::npos);

  // The table states the interval, the scenarios, the tolerance and the error rate; and the undecided plan.
  const auto table = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 20000 "
                             "--seed 7");
  REQUIRE(table.exit_code == 0);
  CAPTURE(table.out);
  CHECK(table.out.find("deterministic (exact)") != std::string::npos);
  CHECK(table.out.find("with confidence") != std::string::npos);
  CHECK(table.out.find("[exact interval]") != std::string::npos);
  CHECK(table.out.find("tolerance 0:") != std::string::npos);
  CHECK(table.out.find("Error rate 0.05") != std::string::npos);
  CHECK(table.out.find("undecided at the cap of 20000 scenarios") != std::string::npos);
  CHECK(table.out.find("stayed undecided") != std::string::npos);

  // CSV: a header and one row per plan (the deterministic plan, then the confidence plan).
  const auto csv = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 20000 "
                           "--seed 7 --format csv");
  REQUIRE(csv.exit_code == 0);
  std::istringstream lines(csv.out);
  std::string header, deterministic, confident, extra;
  std::getline(lines, header);
  std::getline(lines, deterministic);
  std::getline(lines, confident);
  CHECK_FALSE(std::getline(lines, extra));
  CHECK(header == "plan,status,cluster,workers,cost_usd,training_time_s,probability,lower,upper,scenarios,decision,confidence,"
                  "tolerance,error_rate,calibrated");
  CHECK(deterministic.rfind("deterministic,feasible,g3.8xlarge=2;p3.2xlarge=2,4,", 0) == 0);
  CHECK(confident.rfind("confidence,feasible," + j["cluster"].begin().key(), 0) == 0);
  CHECK(confident.find(",meets,0.9,0,0.05,false") != std::string::npos);

  // Progress goes to stderr (with --progress even off a terminal) and changes nothing on stdout.
  const auto progress = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 20000 "
                                "--seed 7 --progress");
  REQUIRE(progress.exit_code == 0);
  CHECK(progress.out == table.out);
  CHECK(progress.err.find("confidence search: 0 of ") != std::string::npos);
  CHECK(progress.err.find(" candidates (100%)") != std::string::npos);
}

TEST_CASE("spotdnn plan --confidence refuses what it cannot honour") {
  // No hazard for a type the candidates use: one line naming it and how to give one.
  const auto no_hazard = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9");
  check_bad_input(no_hazard);
  CHECK(no_hazard.err.find("hazard of \"p3.2xlarge\" is missing: a candidate plan uses it") != std::string::npos);
  CHECK(no_hazard.err.find("--hazard p3.2xlarge=RATE") != std::string::npos);
  check_bad_input(run_cli("plan --target-loss 0.8 --budget 3 --confidence 0.9 --fallback-hazard 0.1"));
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 1.5 --fallback-hazard 0.1"));
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --hazard p3.2xlarge=-1"));
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --tolerance 0.95"));
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --error-rate 0.7"));
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 0"));
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --deadline 40x"));
  // The old options say what replaced them.
  const auto scenarios = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --scenarios 2000");
  check_bad_input(scenarios);
  CHECK(scenarios.err.find("--max-scenarios") != std::string::npos);
  check_bad_input(run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --lower-bound"));
  // A valid question without an answer exits 3, in every format.
  for (const char* format : {"table", "json", "csv"}) {
    const auto none = run_cli(std::string("plan --target-loss 0.8 --deadline 1500 --confidence 0.9 --fallback-hazard 0.1 --format ") + format);
    CHECK(none.exit_code == 3);  // no plan meets a deadline below the fastest achievable time
  }
  const auto unreachable = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.999 --fallback-hazard 2 --max-scenarios 2000");
  CHECK(unreachable.exit_code == 3);
  CHECK(unreachable.out.find("reaches probability 0.999") != std::string::npos);
}

TEST_CASE("spotdnn plan --confidence needs hazards only for the types its candidates can use") {
  Catalog catalog = presets::resnet110_catalog();
  for (InstanceType& type : catalog.instance_types) {
    if (type.name == "g3.16xlarge" || type.name == "p2.8xlarge") type.quota = 0;
  }
  const std::string path = write_temp_file("revocation_cli_quota0_catalog.json", io::to_json(catalog).dump());
  const auto r = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --max-scenarios 20000 --catalog '" + path +
                         "' --hazard 'p3.2xlarge=0.1,g4dn.4xlarge=0.1;g3.8xlarge=0.1' --format json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(io::Json::parse(r.out)["status"] == "feasible");
  const auto missing = run_cli("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --catalog '" + path +
                               "' --hazard p3.2xlarge=0.1,g3.8xlarge=0.1");
  check_bad_input(missing);
  CHECK(missing.err.find("\"g4dn.4xlarge\"") != std::string::npos);
}

TEST_CASE("spotdnn plan takes durations, lists with commas or semicolons, and writes CSV") {
  const auto plain = run_cli("plan --target-loss 0.8 --deadline 2600 --format json");
  const auto duration = run_cli("plan --target-loss 0.8 --deadline 43m20s --format json");
  REQUIRE(plain.exit_code == 0);
  CHECK(duration.out == plain.out);
  const auto keep_comma = run_cli("plan --target-loss 0.8 --deadline 2600 --keep g4dn.4xlarge=1,g3.8xlarge=1 --on-demand p3.2xlarge,g3.8xlarge --format json");
  const auto keep_semicolon = run_cli("plan --target-loss 0.8 --deadline 2600 --keep 'g4dn.4xlarge=1;g3.8xlarge=1' --on-demand 'p3.2xlarge;g3.8xlarge' --format json");
  REQUIRE(keep_comma.exit_code == 0);
  CHECK(keep_semicolon.out == keep_comma.out);
  const io::Json kept = io::Json::parse(keep_comma.out);
  CHECK(kept["cluster"]["g4dn.4xlarge"].get<int>() >= 1);
  const auto csv = run_cli("plan --target-loss 0.8 --deadline 2600 --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("plan,status,objective,target_loss,deadline_s,budget_usd,ps_charged,cluster,workers,training_time_s,", 0) == 0);
  CHECK(csv.out.find("\nexact,optimal,min_cost,0.8,2600,,true,g3.8xlarge=2;p3.2xlarge=2,4,") != std::string::npos);
  const auto none = run_cli("plan --target-loss 0.8 --deadline 1500 --format csv");
  CHECK(none.exit_code == 3);
  CHECK(none.out.find("\nexact,infeasible,") != std::string::npos);
}

TEST_CASE("the README's plan --confidence example prints exactly what the README shows") {
  // The README's "Revocations" section shows `$ spotdnn plan ... --confidence 0.9 ...` and its output in
  // one fenced block; run that command and compare the output byte for byte.
  std::ifstream file(std::string(SPOTDNN_TEST_SOURCE_DIR) + "/README.md");
  REQUIRE(file);
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string readme = buffer.str();
  const std::string prompt = "$ spotdnn plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1\n";
  const std::size_t at = readme.find(prompt);
  REQUIRE(at != std::string::npos);
  const std::size_t begin = at + prompt.size();
  const std::size_t end = readme.find("```", begin);
  REQUIRE(end != std::string::npos);
  const std::string shown = readme.substr(begin, end - begin);
  const auto r = run_cli(prompt.substr(std::string("$ spotdnn ").size(), prompt.size() - std::string("$ spotdnn ").size() - 1));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == shown);
}
