// SPDX-License-Identifier: MIT
// `spotdnn serverless fit` end to end: the table, the profile document (--format json, what `serverless plan
// --profile` reads), standard input, --plot, and the exit codes: 2 with one line on stderr for bad input
// (naming FILE:LINE for a bad trace row), 3 with the reason when the trace cannot identify the coefficients.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>

#include <spotdnn/io/json.hpp>
#include <spotdnn/io/serverless_profile_json.hpp>
#include <spotdnn/serverless/function_time.hpp>

#include <doctest/doctest.h>

#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::run_cli;
using spotdnn::test::write_temp_file;

namespace {

/// a = 60, b = 8, m = 200, k1 = 20, k2 = −0.8 at batches {8..128} × memories {512..3008}, relative noise `noise`.
std::string trace_csv(double noise, bool with_transform = true, bool one_memory = false) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::ostringstream csv;
  csv.precision(17);
  csv << "batch,memory_mb,train_time_s,transform_time_s\n";
  for (double memory : {512.0, 1024.0, 1536.0, 2048.0, 2560.0, 3008.0}) {
    if (one_memory && memory != 1024) continue;
    for (double batch : {8.0, 16.0, 32.0, 64.0, 128.0}) {
      csv << batch << ',' << memory << ',' << spotdnn::serverless::train_time_s<double>(batch, memory, 60, 8, 200) * (1 + noise * gauss(rng)) << ",\n";
    }
    if (with_transform) csv << ',' << memory << ",," << spotdnn::serverless::transform_time_s<double>(memory, 20, -0.8) * (1 + noise * gauss(rng)) << '\n';
  }
  return csv.str();
}

/// Clean train times as trace_csv, transform times 20*M^k2 with relative noise `noise` (fixed seed).
std::string flat_transform_csv(double k2, double noise) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::ostringstream csv;
  csv.precision(17);
  csv << "batch,memory_mb,train_time_s,transform_time_s\n";
  for (double memory : {512.0, 1024.0, 1536.0, 2048.0, 2560.0, 3008.0}) {
    for (double batch : {8.0, 16.0, 32.0, 64.0, 128.0}) {
      csv << batch << ',' << memory << ',' << spotdnn::serverless::train_time_s<double>(batch, memory, 60, 8, 200) << ",\n";
    }
    csv << ',' << memory << ",," << spotdnn::serverless::transform_time_s<double>(memory, 20, k2) * (1 + noise * gauss(rng)) << '\n';
  }
  return csv.str();
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

const std::string kSizes = " --model-size-mb 97.5 --samples-per-epoch 50000";

}  // namespace

TEST_CASE("serverless fit prints the profile table with intervals for a clean trace") {
  const std::string trace = write_temp_file("sfit_clean.csv", trace_csv(0.0));
  const auto r = run_cli("serverless fit --trace " + quoted(trace) + kSizes + " --name resnet50");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("spotdnn serverless fit: ") == 0);
  CHECK(r.out.find("resnet50") != std::string::npos);
  CHECK(r.out.find("converged") != std::string::npos);
  CHECK(r.out.find("s*MB/sample") != std::string::npos);
  CHECK(r.out.find("--format json") != std::string::npos);
}

TEST_CASE("serverless fit --format json prints the profile document the planner reads") {
  const std::string trace = write_temp_file("sfit_noisy.csv", trace_csv(0.02));
  const auto r = run_cli("serverless fit --trace " + quoted(trace) + kSizes + " --relative --format json");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  CHECK(doc["kind"] == "spotdnn.serverless_profile");
  CHECK(doc["name"] == "serverless-profile");
  CHECK(doc["model_size_mb"] == 97.5);
  CHECK(doc["fit"]["residuals"] == "relative");
  CHECK(doc["fit"]["status"] == "converged");
  CHECK(doc["a"].get<double>() == doctest::Approx(60).epsilon(0.1));
  CHECK(doc["fit"]["a"]["ci95_low"].get<double>() < doc["a"].get<double>());
  const auto profile = spotdnn::io::serverless_profile_from_json(doc);
  CHECK(profile.m == doctest::Approx(200).epsilon(0.2));
  CHECK(profile.k2 == doctest::Approx(-0.8).epsilon(0.05));
}

TEST_CASE("serverless fit reads the trace from standard input with --trace -") {
  const std::string trace = write_temp_file("sfit_stdin.csv", trace_csv(0.0));
  const auto from_file = run_cli("serverless fit --trace " + quoted(trace) + kSizes + " --format json");
  const auto from_stdin = run_cli("serverless fit --trace -" + kSizes + " --format json < " + quoted(trace));
  INFO(from_stdin.err);
  REQUIRE(from_stdin.exit_code == 0);
  CHECK(Json::parse(from_stdin.out)["a"] == Json::parse(from_file.out)["a"]);
}

TEST_CASE("serverless fit refuses bad input with exit code 2 and one line on stderr") {
  const std::string good = write_temp_file("sfit_good.csv", trace_csv(0.0));
  const std::string bad_row = write_temp_file("sfit_bad.csv", "batch,memory_mb,train_time_s,transform_time_s\n32,512,1.5,\n32,20000,1.5,\n");
  const std::string nan_time = write_temp_file("sfit_nan.csv", "batch,memory_mb,train_time_s,transform_time_s\n32,512,nan,\n");
  struct Case {
    std::string arguments, expected;
  };
  const Case cases[] = {
      {"serverless fit --trace " + quoted(bad_row) + kSizes, "sfit_bad.csv\": line 3: memory_mb = \"20000\": must be in 1..10240 MB"},
      {"serverless fit --trace " + quoted(nan_time) + kSizes, "sfit_nan.csv\": line 2: train_time_s = \"nan\": NaN is not a measurement"},
      {"serverless fit --trace " + quoted(good) + " --model-size-mb 0 --samples-per-epoch 5", "--model-size-mb \"0\": must be a finite number greater than zero"},
      {"serverless fit --trace " + quoted(good) + " --model-size-mb nan --samples-per-epoch 5", "--model-size-mb"},
      {"serverless fit --trace " + quoted(good) + " --model-size-mb 1 --samples-per-epoch -5", "--samples-per-epoch"},
      {"serverless fit --trace " + quoted(good) + " --samples-per-epoch 5", "--model-size-mb is required"},
      {"serverless fit --trace nonexistent.csv" + kSizes, "nonexistent.csv"},
      {"serverless fit --trace " + quoted(good) + kSizes + " --format csv", "this command writes table or json"},
      {"serverless fit --trace " + quoted(good) + kSizes + " --plot out.txt", "--plot"},
      {"serverless fit --trace " + quoted(good) + kSizes + " --name \"$(printf 'bad\\033name')\"", "control characters"},
      {"serverless fit --trace " + quoted(good) + kSizes + " --relativ", "did you mean --relative"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli(c.arguments);
    INFO(c.arguments << "\n -> " << r.exit_code << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK(r.err.rfind("spotdnn serverless fit: error: ", 0) == 0);
    CHECK(r.err.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("serverless fit exits 3 with the reason when the trace cannot identify the coefficients") {
  const std::string one_memory = write_temp_file("sfit_one_memory.csv", trace_csv(0.0, true, true));
  const auto r = run_cli("serverless fit --trace " + quoted(one_memory) + kSizes);
  CHECK(r.exit_code == 3);
  CHECK(r.err.empty());
  CHECK(r.out.find("not_identifiable") != std::string::npos);
  CHECK(r.out.find("profile at least two memories") != std::string::npos);
  const std::string no_transform = write_temp_file("sfit_no_transform.csv", trace_csv(0.0, false));
  const auto j = run_cli("serverless fit --trace " + quoted(no_transform) + kSizes + " --format json");
  REQUIRE(j.exit_code == 3);
  const Json doc = Json::parse(j.out);
  CHECK(doc["fit"]["status"] == "not_identifiable");
  CHECK(doc["k1"].is_null());
  CHECK(doc["a"].get<double>() == doctest::Approx(60).epsilon(1e-6));  // the train part still answered
}

TEST_CASE("serverless fit --help names its options") {
  const auto r = run_cli("serverless fit --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--model-size-mb") != std::string::npos);
  CHECK(r.out.find("--samples-per-epoch") != std::string::npos);
  CHECK(r.out.find("--relative") != std::string::npos);
}

TEST_CASE("serverless fit --plot draws the measured and fitted times") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: gnuplot is not installed");
    return;
  }
  const std::string trace = write_temp_file("sfit_plot.csv", trace_csv(0.02));
  const std::string svg = std::string(SPOTDNN_TEST_BINARY_DIR) + "/sfit_plot.svg";
  std::remove(svg.c_str());
  const auto r = run_cli("serverless fit --trace " + quoted(trace) + kSizes + " --plot " + quoted(svg));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::FILE* file = std::fopen(svg.c_str(), "rb");
  REQUIRE(file != nullptr);
  char head[512] = {};
  const std::size_t got = std::fread(head, 1, sizeof head - 1, file);
  std::fclose(file);
  CHECK(got > 0);
  CHECK(std::string(head).find("<svg") != std::string::npos);
}

TEST_CASE("serverless fit flags a coefficient whose standard error exceeds it in the table and the profile document") {
  // Transform times that hardly change with memory (k2 = -0.002) under 3% noise: k2's standard error is
  // larger than k2; the noise-free train times determine a, b and m.
  const std::string trace = write_temp_file("sfit_uncertain.csv", flat_transform_csv(-0.002, 0.03));
  const auto table = run_cli("serverless fit --trace " + quoted(trace) + kSizes);
  INFO(table.out << table.err);
  REQUIRE(table.exit_code == 0);
  std::istringstream rows(table.out);
  int marked = 0;
  for (std::string row; std::getline(rows, row);) {
    if (row.find("uncertain*") == std::string::npos) continue;
    CHECK(row.rfind("  k2 ", 0) == 0);  // the table is indented by two spaces
    ++marked;
  }
  CHECK(marked == 1);
  CHECK(table.out.find("\n  * uncertain: the standard error of k2 is larger than its estimate's magnitude") != std::string::npos);

  const auto json = run_cli("serverless fit --trace " + quoted(trace) + kSizes + " --format json");
  REQUIRE(json.exit_code == 0);
  const Json doc = Json::parse(json.out);
  CHECK(doc["fit"]["uncertain_parameters"] == Json::array({"k2"}));
  for (const char* name : {"a", "b", "m", "k1", "k2"}) {
    INFO(name);
    const Json& c = doc["fit"][name];
    CHECK(c["uncertain"] == (c["std_error"].get<double>() > std::abs(c["estimate"].get<double>())));
    CHECK(c["uncertain"] == (std::string(name) == "k2"));
  }
  // The planner still reads the document (the flags are part of the report it ignores).
  CHECK(spotdnn::io::serverless_profile_from_json(doc).k2 == doc["k2"].get<double>());

  // A clean trace flags nothing.
  const auto clean = run_cli("serverless fit --trace " + quoted(write_temp_file("sfit_certain.csv", trace_csv(0.0))) + kSizes + " --format json");
  REQUIRE(clean.exit_code == 0);
  CHECK(Json::parse(clean.out)["fit"]["uncertain_parameters"] == Json::array());
}
