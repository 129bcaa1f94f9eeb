// SPDX-License-Identifier: MIT
// `spotdnn predict` end to end: reference figures in JSON, and every bad input exits 2 with one line.
#include <doctest/doctest.h>

#include <string>

#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::run_cli;

TEST_CASE("spotdnn predict on the preset returns the reference figures in JSON") {
  const auto r = run_cli("predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const Json j = Json::parse(r.out);
  CHECK(j["status"] == "feasible");
  CHECK(j["weighted_batch"].get<double>() == doctest::Approx(1024).epsilon(1e-9));
  CHECK(j["samples_per_s"].get<double>() == doctest::Approx(7842.0).epsilon(1e-9));
  CHECK(j["iterations"].get<double>() == doctest::Approx(17925.783265603666).epsilon(1e-9));
  CHECK(j["training_time_s"].get<double>() == doctest::Approx(2340.729669).epsilon(1e-9));
  CHECK(j["cost_usd"].get<double>() == doctest::Approx(3.097565595).epsilon(1e-9));

  const auto no_ps = run_cli("predict --cluster p3.2xlarge=2,g3.8xlarge=2 --target-loss 0.9 --no-ps-cost --format json");
  REQUIRE(no_ps.exit_code == 0);
  const Json k = Json::parse(no_ps.out);
  CHECK(k["cost_usd"].get<double>() == doctest::Approx(1.669754048).epsilon(1e-9));
  CHECK(k["ps_cost_usd"].get<double>() == 0.0);
}

TEST_CASE("spotdnn predict prints an aligned table by default") {
  const auto r = run_cli("predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("p3.2xlarge      2     1   1024") != std::string::npos);
  CHECK(r.out.find("training time            2340.7 s (39 min 01 s)") != std::string::npos);
  CHECK(r.out.find("$3.0976 (workers $2.9727 + PS $0.1248)") != std::string::npos);
}

TEST_CASE("spotdnn predict reads --workload and --catalog files") {
  const std::string w = spotdnn::test::write_temp_file(
      "cli_workload.json", spotdnn::io::to_json(spotdnn::presets::resnet110_workload()).dump());
  const std::string c = spotdnn::test::write_temp_file(
      "cli_catalog.json", spotdnn::io::to_json(spotdnn::presets::resnet110_catalog()).dump());
  const auto r = run_cli("predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --format json --workload '" + w +
                         "' --catalog '" + c + "'");
  REQUIRE(r.exit_code == 0);
  CHECK(Json::parse(r.out)["cost_usd"].get<double>() == doctest::Approx(3.097565595).epsilon(1e-9));
}

TEST_CASE("every bad input to spotdnn predict exits 2 with one line on stderr and nothing on stdout") {
  const std::string bad_json = spotdnn::test::write_temp_file("cli_bad_workload.json", "{\"name\": ");
  Json negative = spotdnn::io::to_json(spotdnn::presets::resnet110_workload());
  negative["param_bytes"] = -1;
  const std::string negative_path = spotdnn::test::write_temp_file("cli_negative_workload.json", negative.dump());
  struct Case {
    const char* arguments;
    const char* expected;
  };
  const std::string bad_json_args = "predict --cluster p3.2xlarge=1 --target-loss 0.8 --workload '" + bad_json + "'";
  const std::string negative_args = "predict --cluster p3.2xlarge=1 --target-loss 0.8 --workload '" + negative_path + "'";
  const Case cases[] = {
      {"predict --cluster g5.xlarge=2 --target-loss 0.8", "unknown instance type"},
      {"predict --cluster p3.2xlarge=-1 --target-loss 0.8", "must not be negative"},
      {"predict --cluster p3.2xlarge=0 --target-loss 0.8", "give at least one worker"},
      {"predict --cluster '' --target-loss 0.8", "TYPE=N"},
      {"predict --cluster p3.2xlarge=2 --target-loss 0.4", "asymptote"},
      {"predict --cluster p3.2xlarge=2 --target-loss nan", "target_loss = nan"},
      {"predict --cluster p3.2xlarge=2 --target-loss abc", "--target-loss"},
      {"predict --target-loss 0.8", "--cluster is required"},
      {"predict --cluster p3.2xlarge=2 --target-loss 0.8 --format xml", "this command writes table, json or csv"},
      {"predict --cluster p3.2xlarge=2 --target-loss 0.8 --workload /nonexistent.json", "cannot open the file"},
      {"frobnicate", "frobnicate"},
      {bad_json_args.c_str(), "malformed JSON"},
      {negative_args.c_str(), "workload.param_bytes = -1"},
  };
  for (const Case& c : cases) {
    const std::string arguments = c.arguments;
    CAPTURE(arguments);
    const auto r = run_cli(c.arguments);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK_MESSAGE(r.err.find(c.expected) != std::string::npos, r.err);
  }
}
