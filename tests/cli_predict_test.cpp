// SPDX-License-Identifier: MIT
// `spotdnn predict` end to end: reference figures in JSON, and every bad input exits 2 with one line; `plan`
// shows the samples it trains as predict does; durations for people in d/h/min.
#define FMT_HEADER_ONLY  // the CLI's table.hpp uses fmt, which the tests do not link
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

#include "../examples/cli/table.hpp"
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
      {"predict --cluster p3.2xlarge=2 --target-loss nan", "must be a finite number"},
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
  // A target at or below the loss model's asymptote is a valid question without an answer: exit 3, why on stdout.
  const auto unreachable = run_cli("predict --cluster p3.2xlarge=2 --target-loss 0.4");
  CHECK(unreachable.exit_code == 3);
  CHECK(unreachable.out.find("asymptote") != std::string::npos);
}

TEST_CASE("plan shows the samples it trains in its table, JSON and CSV, as predict does") {
  const auto predicted = run_cli("predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --format json");
  REQUIRE(predicted.exit_code == 0);
  const double samples = Json::parse(predicted.out)["samples_to_train"].get<double>();
  CHECK(samples == doctest::Approx(1024 * 17925.783265603666).epsilon(1e-9));  // b_w * j, docs/model.md eq. (8)
  // The plan for 2400 s is that cluster (the reference plan).
  const auto json = run_cli("plan --target-loss 0.8 --deadline 2400 --format json");
  REQUIRE(json.exit_code == 0);
  const Json j = Json::parse(json.out);
  REQUIRE(j["cluster"] == Json::parse(R"({"g3.8xlarge": 4, "p3.2xlarge": 2})"));
  CHECK(j["samples_to_train"].get<double>() == doctest::Approx(samples).epsilon(1e-12));
  const auto table = run_cli("plan --target-loss 0.8 --deadline 2400");
  REQUIRE(table.exit_code == 0);
  const std::size_t at = table.out.find("  samples to train  ");
  REQUIRE(at != std::string::npos);
  const std::string line = table.out.substr(at, table.out.find('\n', at) - at);
  CHECK(line.substr(line.find_last_of(' ') + 1) == spotdnn::detail::format_count(samples));  // grouped: 18,356,002
  const auto csv = run_cli("plan --target-loss 0.8 --deadline 2400 --format csv");
  REQUIRE(csv.exit_code == 0);
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  CHECK(header.find(",weighted_batch,samples_to_train,message") != std::string::npos);
  // The row's field under samples_to_train (every field before message is free of commas).
  auto fields_of = [](const std::string& line) {
    std::vector<std::string> fields(1);
    for (char c : line) {
      if (c == ',') {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    return fields;
  };
  const std::vector<std::string> names = fields_of(header);
  const std::string row = csv.out.substr(header.size() + 1, csv.out.find('\n', header.size() + 1) - header.size() - 1);
  const std::vector<std::string> values = fields_of(row);
  std::size_t column = 0;
  while (column < names.size() && names[column] != "samples_to_train") ++column;
  REQUIRE(column < values.size());
  CHECK(std::stod(values[column]) == doctest::Approx(samples).epsilon(1e-12));
}

TEST_CASE("durations for people read in d/h/min, the seconds to one decimal in front") {
  using spotdnn::cli::format_duration;
  using spotdnn::cli::format_duration_words;
  CHECK(format_duration(2340.729669) == "2340.7 s (39 min 01 s)");
  CHECK(format_duration(2423.554537097722) == "2423.6 s (40 min 24 s)");
  CHECK(format_duration(7199.4) == "7199.4 s (1 h 59 min)");
  CHECK(format_duration(200000) == "200000.0 s (2 d 07 h)");
  CHECK(format_duration_words(0) == "0 min 00 s");
  CHECK(format_duration_words(59.6) == "1 min 00 s");
  CHECK(format_duration_words(86399.6) == "1 d 00 h");
  CHECK(format_duration_words(631152000) == "7305 d 00 h");  // 20 years
  CHECK(format_duration(-1) == "never");
  CHECK(format_duration(std::numeric_limits<double>::quiet_NaN()) == "never");
  CHECK(format_duration(std::numeric_limits<double>::infinity()) == "never");
}
