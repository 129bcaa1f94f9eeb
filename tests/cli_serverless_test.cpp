// SPDX-License-Identifier: MIT
// `spotdnn serverless plan` and `spotdnn compare` end to end: the reference optimum (with FasDL's rounding
// down, --fasdl-rounding), plans that train at least the epochs asked, the three planners, pricing and
// transfer-table switches, every format, and bad input as one line with exit 2.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/serverless/transfer_table.hpp>

#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::run_cli;
using spotdnn::test::write_temp_file;

namespace {

/// The reference profile of docs/model.md ("Serverless reference figures").
const std::string kReferenceProfile =
    R"({"kind": "spotdnn.serverless_profile", "name": "reference", "model_size_mb": 44.7, "samples_per_epoch": 50000,
        "a": 60, "b": 8, "m": 200, "k1": 20, "k2": -0.8})";

std::string profile_path() { return write_temp_file("cli_serverless_profile.json", kReferenceProfile); }

/// The embedded FasDL table as a --transfer CSV, each time multiplied by `scale`.
std::string transfer_csv(double scale) {
  std::string text = "memory_mb,object_mb,upload_s,download_s\n";
  for (const auto& c : spotdnn::serverless::TransferTable::fasdl_measured().cells()) {
    text += spotdnn::detail::format_number(c.memory_mb) + "," + spotdnn::detail::format_number(c.object_mb) + "," +
            spotdnn::detail::format_number(c.upload_s * scale) + "," + spotdnn::detail::format_number(c.download_s * scale) + "\n";
  }
  return text;
}

bool rounds_to(double value, double quoted, int decimals) {
  return std::fabs(value - quoted) <= 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9);
}

}  // namespace

TEST_CASE("serverless plan with --fasdl-rounding finds the reference optimum for a 3000 s deadline") {
  const auto r = run_cli("serverless plan --profile " + profile_path() + " --epochs 10 --deadline 3000 --fasdl-rounding --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const Json j = Json::parse(r.out);
  CHECK(j["kind"] == "spotdnn.serverless_plan");
  CHECK(j["schema_version"] == 2);
  CHECK(j["status"] == "optimal");
  CHECK(j["algorithm"] == "exact");
  CHECK(j["workers"] == 9);
  CHECK(j["memory_mb"] == 1536);
  CHECK(j["aggregators"] == 2);
  CHECK(j["batch"] == 32);
  CHECK(j["non_aggregator_batch"] == 130);
  CHECK(j["iterations"] == 513);
  CHECK(rounds_to(j["training_time_s"].get<double>(), 2911.8008, 4));
  CHECK(rounds_to(j["cost_usd"].get<double>(), 0.707900, 6));
  CHECK(j["lambda_cost_usd"].get<double>() + j["s3_cost_usd"].get<double>() == doctest::Approx(j["cost_usd"].get<double>()));
  CHECK(j["samples_trained"].get<double>() == 513.0 * (2 * 32 + 7 * 130));
  CHECK(j["samples_asked"].get<double>() == 500000);
  CHECK(j["iteration_rounding"] == "fasdl_floor");
  CHECK(j["extrapolated"] == false);
  CHECK(j["pricing"] == "aws");
  CHECK(j["epochs"] == 10);
  CHECK(j["deadline_s"] == 3000);

  // The same with a duration, in a table, and from stdin.
  const auto table = run_cli("serverless plan --profile " + profile_path() + " --epochs 10 --deadline 50m --fasdl-rounding");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("optimal") != std::string::npos);
  CHECK(table.out.find("$0.7079") != std::string::npos);
  CHECK(table.out.find("1536 MB") != std::string::npos);
  CHECK(table.out.find("trains 499,662 of the 500,000 samples asked") != std::string::npos);
  const auto piped = spotdnn::test::run_shell("'" + std::string(SPOTDNN_CLI_PATH) +
                                              "' serverless plan --profile - --epochs 10 --deadline 3000 --fasdl-rounding --format csv < '" +
                                              profile_path() + "'");
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.out.rfind("status,algorithm,deadline_s,workers,memory_mb,aggregators,", 0) == 0);
  CHECK(piped.out.find("\noptimal,exact,3000,9,1536,2,32,130,513,") != std::string::npos);
  CHECK(piped.out.find(",499662,500000,") != std::string::npos);
}

TEST_CASE("serverless plan without a configuration meeting the deadline names the fastest and exits 3") {
  const auto r = run_cli("serverless plan --profile " + profile_path() + " --epochs 10 --deadline 1000 --fasdl-rounding --format json");
  CHECK(r.exit_code == 3);
  CHECK(r.err.empty());
  const Json j = Json::parse(r.out);
  CHECK(j["status"] == "infeasible");
  CHECK(j["workers"].is_null());
  REQUIRE(j["fastest"].is_object());
  CHECK(rounds_to(j["fastest"]["training_time_s"].get<double>(), 1389.08, 2));
  CHECK(j["fastest"]["workers"] == 6);
  CHECK(j["fastest"]["memory_mb"] == 10240);
  CHECK(j["fastest"]["aggregators"] == 3);
  CHECK(j["message"].get<std::string>().find("1389") != std::string::npos);
  CHECK(j["samples_asked"].get<double>() == 500000);
  CHECK(j["samples_trained"].is_null());
  CHECK(j["fastest"]["samples_asked"].get<double>() == 500000);
  const auto table = run_cli("serverless plan --profile " + profile_path() + " --epochs 10 --deadline 1000");
  CHECK(table.exit_code == 3);
  CHECK(table.out.find("infeasible") != std::string::npos);
}

TEST_CASE("serverless plan: exhaustive agrees with exact and FasDL's search is never cheaper") {
  for (const char* deadline : {"2000", "3000", "5000", "9000"}) {
    CAPTURE(deadline);
    const std::string base = "serverless plan --profile " + profile_path() + " --epochs 10 --format json --deadline " + deadline;
    const auto exact = run_cli(base);
    const auto exhaustive = run_cli(base + " --algorithm exhaustive");
    const auto fasdl = run_cli(base + " --algorithm fasdl");
    REQUIRE(exact.exit_code == 0);
    REQUIRE(exhaustive.exit_code == 0);
    const Json e = Json::parse(exact.out), x = Json::parse(exhaustive.out), f = Json::parse(fasdl.out);
    for (const char* key : {"workers", "memory_mb", "aggregators", "cost_usd", "training_time_s"}) CHECK(e[key] == x[key]);
    CHECK(x["algorithm"] == "exhaustive");
    CHECK(f["algorithm"] == "fasdl");
    if (fasdl.exit_code == 0) {
      CHECK(f["status"] == "feasible");
      CHECK(f["cost_usd"].get<double>() >= e["cost_usd"].get<double>());
      CHECK(f["training_time_s"].get<double>() <= std::stod(deadline));
    } else {
      CHECK(fasdl.exit_code == 3);
      CHECK(f["status"] == "infeasible");
      CHECK(f["message"].get<std::string>().find("FasDL") != std::string::npos);
    }
  }
}

TEST_CASE("serverless plan: FasDL's pricing, a measured transfer table and the memory grid change the answer as they should") {
  const std::string base = "serverless plan --profile " + profile_path() + " --epochs 10 --deadline 3000 --format json";
  const Json aws = Json::parse(run_cli(base).out);
  const Json fasdl = Json::parse(run_cli(base + " --fasdl-pricing").out);
  CHECK(fasdl["pricing"] == "fasdl");
  // The same configuration priced per MB-second without the request fee (the optimum may move; price the
  // AWS optimum's figures both ways through its own configuration instead).
  const Json pinned = Json::parse(run_cli(base + " --fasdl-pricing --min-memory-mb 1536 --max-memory-mb 1536").out);
  if (pinned["workers"] == 9 && pinned["aggregators"] == 2) {
    CHECK(pinned["lambda_cost_usd"].get<double>() == doctest::Approx(1.64e-8 * 1536 * 9 * aws["training_time_s"].get<double>()));
  }
  // The embedded table written out and read back: the same answer, byte for byte.
  const auto same = run_cli(base + " --transfer " + write_temp_file("cli_serverless_transfer_same.csv", transfer_csv(1)));
  REQUIRE(same.exit_code == 0);
  CHECK(Json::parse(same.out) == aws);
  // Transfers twice as slow: a slower, different optimum.
  const auto slow = run_cli(base + " --transfer " + write_temp_file("cli_serverless_transfer_slow.csv", transfer_csv(2)));
  CHECK(slow.exit_code <= 3);
  const Json s = Json::parse(slow.out);
  CHECK(s != aws);
  // Lambda's 1 MB lattice on a narrow range finds a configuration at least as cheap as the 64 MB grid's.
  const Json fine = Json::parse(run_cli(base + " --memory-step-mb 1 --min-memory-mb 1400 --max-memory-mb 1700").out);
  CHECK(fine["status"] == "optimal");
  CHECK(fine["cost_usd"].get<double>() <= aws["cost_usd"].get<double>());
}

TEST_CASE("serverless plan trains at least the epochs asked, and --fasdl-rounding reproduces FasDL's rounding down and says so") {
  // Issue 21: with I = ⌊D·E/P⌋ this question answered one iteration of 251,713 samples for 500,000 asked.
  const std::string base = "serverless plan --profile " + profile_path() + " --epochs 10 --deadline 50m --batch 1 --max-global-batch 100000000";
  const auto up = run_cli(base + " --format json");
  INFO(up.err);
  REQUIRE(up.exit_code == 0);
  const Json u = Json::parse(up.out);
  CHECK(u["status"] == "optimal");
  CHECK(u["iteration_rounding"] == "up");
  CHECK(u["samples_asked"].get<double>() == 500000);
  const double per_iteration = u["aggregators"].get<double>() * u["batch"].get<double>() +
                               (u["workers"].get<double>() - u["aggregators"].get<double>()) * u["non_aggregator_batch"].get<double>();
  CHECK(u["samples_trained"].get<double>() == u["iterations"].get<double>() * per_iteration);
  CHECK(u["samples_trained"].get<double>() >= 500000);
  CHECK(u["samples_trained"].get<double>() < 500000 + per_iteration);
  CHECK(u["training_time_s"].get<double>() <= 3000);
  // Here the optimum is the same W 185 × 128 MB, K 1, run twice: 503,426 samples for twice the cost.
  CHECK(u["workers"] == 185);
  CHECK(u["memory_mb"] == 128);
  CHECK(u["iterations"] == 2);
  CHECK(u["samples_trained"].get<double>() == 503426);

  const auto floor = run_cli(base + " --fasdl-rounding --format json");
  REQUIRE(floor.exit_code == 0);
  const Json f = Json::parse(floor.out);
  CHECK(f["iteration_rounding"] == "fasdl_floor");
  CHECK(f["workers"] == 185);
  CHECK(f["memory_mb"] == 128);
  CHECK(f["iterations"] == 1);
  CHECK(f["samples_trained"].get<double>() == 251713);
  CHECK(f["samples_asked"].get<double>() == 500000);
  CHECK(f["cost_usd"].get<double>() < u["cost_usd"].get<double>());

  // The table shows both counts; only FasDL's rounding says, in words, that the plan trains less.
  const auto table = run_cli(base);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("samples asked (D × E)") != std::string::npos);
  CHECK(table.out.find("samples trained (I × global batch)") != std::string::npos);
  CHECK(table.out.find("fewer") == std::string::npos);
  const auto floor_table = run_cli(base + " --fasdl-rounding");
  REQUIRE(floor_table.exit_code == 0);
  CHECK(floor_table.out.find("FasDL's rounding") != std::string::npos);
  CHECK(floor_table.out.find("trains 251,713 of the 500,000 samples asked (50.3%): 5.03 of 10 epochs, fewer than asked") !=
        std::string::npos);

  // CSV: samples_trained and samples_asked side by side, and the rule.
  const auto csv = run_cli(base + " --fasdl-rounding --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find(",samples_trained,samples_asked,extrapolated,iteration_rounding,message\n") != std::string::npos);
  CHECK(csv.out.find(",251713,500000,true,fasdl_floor,") != std::string::npos);  // true: 128 MB is extrapolated
  const auto csv_up = run_cli(base + " --format csv");
  REQUIRE(csv_up.exit_code == 0);
  CHECK(csv_up.out.find(",503426,500000,true,up,") != std::string::npos);

  // Bg = 100,000: FasDL's rounding trained 84% of the work; rounded up, all of it.
  const std::string narrower = "serverless plan --profile " + profile_path() + " --epochs 10 --deadline 50m --batch 1 --max-global-batch 100000 --format json";
  const Json n = Json::parse(run_cli(narrower + " --fasdl-rounding").out);
  CHECK(n["samples_trained"].get<double>() / 500000 == doctest::Approx(0.84).epsilon(0.01 / 0.84));
  CHECK(Json::parse(run_cli(narrower).out)["samples_trained"].get<double>() >= 500000);
}

TEST_CASE("serverless plan refuses bad input with one line naming the option or field") {
  const std::string profile = profile_path();
  const std::string base = "serverless plan --profile " + profile + " --epochs 10 --deadline 3000";
  struct Case {
    std::string arguments;
    std::string expected;
  };
  const Case cases[] = {
      {"serverless plan --profile " + profile + " --epochs -1 --deadline 3000", "epochs"},
      {"serverless plan --profile " + profile + " --epochs nan --deadline 3000", "epochs"},
      {"serverless plan --profile " + profile + " --epochs 10", "--deadline"},
      {"serverless plan --epochs 10 --deadline 3000", "--profile"},
      {base + " --memory-step-mb 0", "--memory-step-mb"},
      {base + " --min-memory-mb 64", "--min-memory-mb"},
      {base + " --max-memory-mb 20000", "--max-memory-mb"},
      {base + " --min-memory-mb 2048 --max-memory-mb 1024", "--max-memory-mb"},
      {base + " --batch 2000", "--batch \"2000\""},
      {base + " --algorithm greedy", "--algorithm"},
      {base + " --format yaml", "--format"},
      {"serverless plan --profile /nonexistent/p.json --epochs 10 --deadline 3000", "/nonexistent/p.json"},
      {base + " --transfer " + write_temp_file("cli_serverless_transfer_bad.csv", "memory_mb,object_mb,upload_s,download_s\n128,1,abc,0.1\n"),
       "line 2: upload_s"},
      {"serverless plan --profile " + write_temp_file("cli_serverless_bad_kind.json", R"({"kind": "spotdnn.plan"})") +
           " --epochs 10 --deadline 3000",
       "kind"},
      {"serverless plann", "plan"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.arguments);
    const auto r = run_cli(c.arguments);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("compare plans spot and serverless for the same samples, side by side") {
  const auto r = run_cli("compare --target-loss 0.8 --deadline 20h --serverless-profile " + profile_path() + " --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["spot"]["status"] == "optimal");
  CHECK(j["spot"]["kind"] == "spotdnn.plan");
  CHECK(j["serverless"]["kind"] == "spotdnn.serverless_plan");
  CHECK(j["work_from"] == "the spot plan's samples");
  const double samples = j["spot"]["samples_to_train"].get<double>();
  CHECK(j["epochs"].get<double>() == doctest::Approx(samples / 50000).epsilon(1e-12));
  CHECK(j["serverless"]["samples_to_train"].get<double>() == doctest::Approx(samples).epsilon(1e-12));
  if (j["serverless"]["status"] == "optimal") {
    CHECK(j["serverless"]["samples_trained"].get<double>() >= samples);  // the iteration count rounds up
    const double spot_cost = j["spot"]["cost_usd"].get<double>(), lambda_cost = j["serverless"]["cost_usd"].get<double>();
    CHECK(j["cheaper"] == (spot_cost < lambda_cost ? "spot" : "serverless"));
  }
  const auto table = run_cli("compare --target-loss 0.8 --deadline 20h --serverless-profile " + profile_path());
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("spot") != std::string::npos);
  CHECK(table.out.find("serverless") != std::string::npos);
  CHECK(table.out.find("the same work on both") != std::string::npos);
  // Counts for people: the samples with their thousands grouped, not "6.96269e+06".
  CHECK(table.out.find(spotdnn::detail::format_count(samples) + " samples") != std::string::npos);
  CHECK(table.out.find("e+0") == std::string::npos);
  const auto csv = run_cli("compare --target-loss 0.8 --deadline 20h --serverless-profile " + profile_path() + " --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("side,status,plan,training_time_s,cost_usd,samples,message\nspot,optimal,", 0) == 0);
  CHECK(csv.out.find("\nserverless,") != std::string::npos);
}

TEST_CASE("compare: one side without a plan does not hide the other") {
  // 45 min: the spot plan exists; the serverless side needs far longer for the same ~18 million samples.
  const auto r = run_cli("compare --target-loss 0.8 --deadline 45m --serverless-profile " + profile_path() + " --format json");
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["spot"]["status"] == "optimal");
  CHECK(j["serverless"]["status"] == "infeasible");
  CHECK(j["serverless"]["fastest"].is_object());
  CHECK(j["cheaper"] == "spot");
  // With the serverless work given outright, the serverless side has a plan.
  const auto e = run_cli("compare --target-loss 0.8 --deadline 45m --epochs 10 --serverless-profile " + profile_path() + " --format json");
  REQUIRE(e.exit_code == 0);
  const Json k = Json::parse(e.out);
  CHECK(k["work_from"] == "--epochs");
  CHECK(k["serverless"]["status"] == "optimal");
  // A target below the loss model's asymptote: no spot samples, so the serverless side asks for --epochs.
  const auto none = run_cli("compare --target-loss 0.0001 --deadline 45m --serverless-profile " + profile_path() + " --format json");
  CHECK(none.exit_code == 3);
  const Json n = Json::parse(none.out);
  CHECK(n["spot"]["status"] == "infeasible");
  CHECK(n["serverless"]["status"] == "invalid_input");
  CHECK(n["serverless"]["message"].get<std::string>().find("--epochs") != std::string::npos);
}

TEST_CASE("the README's serverless plan example prints what the README shows") {
  std::ifstream file(std::string(SPOTDNN_TEST_SOURCE_DIR) + "/README.md");
  std::stringstream readme;
  readme << file.rdbuf();
  const std::string text = readme.str();
  const std::string first = "spotdnn serverless plan: fasdl-reference";
  const std::size_t begin = text.find(first);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = text.find("\n```", begin);
  REQUIRE(end != std::string::npos);
  const std::string shown = text.substr(begin, end - begin + 1);
  const auto r = spotdnn::test::run_shell("cd '" + std::string(SPOTDNN_TEST_SOURCE_DIR) + "' && '" + std::string(SPOTDNN_CLI_PATH) +
                                          "' serverless plan --profile examples/fasdl-profile.json --epochs 10 --deadline 50m");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.substr(0, shown.size()) == shown);
}
