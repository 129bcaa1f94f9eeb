// SPDX-License-Identifier: MIT
// `spotdnn frontier --confidence C` end to end: one confidence search per sampled deadline, each answer beside
// the deterministic plan of its deadline, the calibration statement of the types the plans use (constant-rate,
// or a hand-written revocation model), the plot script, and the inputs it refuses; on a catalog with zone
// prices each deadline's plan lives in the zone plan --confidence picks there.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/io/revocation_model_json.hpp>
#include <spotdnn/presets.hpp>
#include <spotdnn/revocation/revocation_model.hpp>

#include "support/run_command.hpp"

using namespace spotdnn;
using spotdnn::test::run_cli;
using spotdnn::test::run_shell;
using spotdnn::test::write_temp_file;

namespace {

/// The preset question the cases ask; --max-scenarios is small to keep each search quick.
const std::string kQuestion =
    "frontier --target-loss 0.8 --deadlines 40m:2h:4 --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 20000";

io::Json parse(const std::string& text) { return io::Json::parse(text); }

void check_bad_input(const spotdnn::test::CommandResult& r) {
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
}

/// A revocation model with one pool, p3.2xlarge in us-east-1a, revoked at a constant 0.1 per hour from
/// age 0 (one hazard bin), every instance there at once, no waits, no bursts; written as its JSON document.
std::string p3_revocation_model_file() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  HazardBin bin;
  bin.from_age_s = 0;
  bin.to_age_s = kInf;
  bin.events = 10;
  bin.exposure_s = 100 * 3600.0;
  bin.hazard_per_hour = 0.1;
  bin.lower_per_hour = 0.05;
  bin.upper_per_hour = 0.18;
  PoolModel pool;
  pool.pool = {"p3.2xlarge", "us-east-1a"};
  pool.sources = {"hand-written"};
  pool.to_s = 100 * 3600.0;
  pool.tick_s = 60;
  pool.instances = 10;
  pool.preemptions = 10;
  pool.exposure_s = 100 * 3600.0;
  pool.hazard_by_age = {bin};
  pool.trigger_hazard_by_age = {bin};
  pool.parametric.exponential_hazard_per_hour = 0.1;
  pool.parametric.weibull_scale_s = 36000;
  pool.parametric.best_by_aic = "exponential";
  pool.start.up_share = 1;
  RevocationModel model;
  model.age_bin_edges_s = {0};
  model.pools = {pool};
  model.assumptions = {"hand-written for a test: a constant hazard of 0.1 per hour"};
  return write_temp_file("cli_confidence_frontier_revocations.json", io::to_json(model).dump(2));
}

/// The preset catalog with p3.2xlarge alone, as a catalog file.
std::string p3_only_catalog_file() {
  Catalog catalog = presets::resnet110_catalog();
  std::vector<InstanceType> kept;
  for (const InstanceType& t : catalog.instance_types) {
    if (t.name == "p3.2xlarge") kept.push_back(t);
  }
  REQUIRE(kept.size() == 1);
  catalog.instance_types = kept;
  return write_temp_file("cli_confidence_frontier_p3_catalog.json", io::to_json(catalog).dump(2));
}

/// The types the samples' confidence plans (else their deterministic plans) use.
std::set<std::string> types_shown(const io::Json& j) {
  std::set<std::string> types;
  for (const io::Json& s : j["samples"]) {
    const io::Json& cluster = s["cluster"].is_null() ? s["deterministic_cluster"] : s["cluster"];
    if (cluster.is_null()) continue;
    for (const auto& [type, count] : cluster.items()) types.insert(type);
  }
  return types;
}

}  // namespace

TEST_CASE("frontier --confidence answers every sampled deadline with a plan never cheaper than the deterministic one and shown to reach the level") {
  const auto r = run_cli(kQuestion + " --format json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const io::Json j = parse(r.out);
  CHECK(j["kind"] == "spotdnn.confidence_frontier");
  CHECK(j["schema_version"] == 1);
  CHECK(j["target_loss"] == 0.8);
  CHECK(j["confidence"] == 0.9);
  CHECK(j["tolerance"] == 0.0);
  CHECK(j["error_rate"] == 0.05);
  CHECK(j["zone"].is_null());
  REQUIRE(j["samples"].size() == 4);
  double previous_cost = std::numeric_limits<double>::infinity();
  int plans = 0, dearer_than_deterministic = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const io::Json& s = j["samples"][i];
    CAPTURE(i);
    // 40m to 2h in 4 evenly spaced deadlines.
    CHECK(s["deadline_s"].get<double>() == doctest::Approx(2400 + 1600.0 * double(i)).epsilon(1e-12));
    REQUIRE(!s["deterministic_cost_usd"].is_null());
    if (s["cluster"].is_null()) {
      CHECK(s["status"] != "feasible");
      CHECK(s["cost_usd"].is_null());
      CHECK(s["probability_meets_deadline"].is_null());
      continue;
    }
    ++plans;
    CHECK(s["status"] == "feasible");
    const double cost = s["cost_usd"].get<double>();
    const double deterministic = s["deterministic_cost_usd"].get<double>();
    // Non-increasing in the deadline; never below the deterministic optimum (relative slack 1e-12 for
    // rounding: the two costs are computed by different calls).
    CHECK(cost <= previous_cost * (1 + 1e-12));
    CHECK(cost >= deterministic * (1 - 1e-12));
    if (cost > deterministic * (1 + 1e-9)) ++dearer_than_deterministic;
    previous_cost = cost;
    const io::Json& p = s["probability_meets_deadline"];
    CHECK(p["lower"].get<double>() > 0.9);
    CHECK(p["lower"].get<double>() <= p["estimate"].get<double>());
    CHECK(p["estimate"].get<double>() <= p["upper"].get<double>());
    CHECK(p["trials"].get<int>() >= 1000);
    CHECK(p["trials"].get<int>() <= 20000);
  }
  CHECK(plans == 4);
  // At a hazard of 0.1 per hour the deterministic plans do not all reach 0.9: some answer costs more.
  CHECK(dearer_than_deterministic >= 1);
  CHECK(j["calibration"]["calibrated"] == false);
  CHECK(j["calibration"]["model"] == "constant-rate");
  CHECK(j["calibration"]["uncalibrated_types"].size() == types_shown(j).size());

  const auto table = run_cli(kQuestion);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("spotdnn frontier (confidence 0.9)") != std::string::npos);
  CHECK(table.out.find("P(meets deadline) [exact interval]") != std::string::npos);
  CHECK(table.out.find("deterministic cost") != std::string::npos);
  CHECK(table.out.find("UNCALIBRATED (") != std::string::npos);
  CHECK(table.out.find("    assumes: ") != std::string::npos);
  CHECK(table.out.find("for all 4 deadlines together, with probability >= 0.8 (union bound)") != std::string::npos);

  const auto csv = run_cli(kQuestion + " --format csv");
  REQUIRE(csv.exit_code == 0);
  std::istringstream lines(csv.out);
  std::string header, line;
  std::getline(lines, header);
  CHECK(header.rfind("deadline_s,status,cluster,workers,cost_usd,", 0) == 0);
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    CHECK(line.find(",feasible,") != std::string::npos);
    CHECK(line.substr(line.size() - 6) == ",false");
  }
  CHECK(rows == 4);
}

TEST_CASE("frontier --confidence with --revocations is calibrated only when every type its plans use has a fitted pool") {
  const std::string model_path = p3_revocation_model_file();
  const auto all = run_cli(kQuestion + " --format json --revocations '" + model_path + "'");
  CAPTURE(all.err);
  REQUIRE(all.exit_code == 0);
  const io::Json j = parse(all.out);
  const std::set<std::string> shown = types_shown(j);
  CAPTURE(j["calibration"].dump());
  REQUIRE(shown.count("p3.2xlarge") == 1);
  REQUIRE(shown.size() >= 2);  // the 40-minute plan needs another type besides p3.2xlarge
  CHECK(j["calibration"]["calibrated"] == false);
  CHECK(j["calibration"]["model"] == "fitted (" + model_path + ")");
  std::set<std::string> uncalibrated;
  for (const io::Json& t : j["calibration"]["uncalibrated_types"]) uncalibrated.insert(t.get<std::string>());
  std::set<std::string> others = shown;
  others.erase("p3.2xlarge");
  CHECK(uncalibrated == others);

  // With p3.2xlarge alone in the catalog every plan draws from the fitted pool.
  const std::string catalog_path = p3_only_catalog_file();
  const auto only = run_cli(kQuestion + " --format json --revocations '" + model_path + "' --catalog '" + catalog_path + "'");
  CAPTURE(only.err);
  REQUIRE(only.exit_code == 0);
  const io::Json o = parse(only.out);
  REQUIRE(o["samples"].size() == 4);
  CHECK(o["calibration"]["calibrated"] == true);
  CHECK(o["calibration"]["uncalibrated_types"].empty());
  int plans = 0;
  for (const io::Json& s : o["samples"]) {
    if (s["cluster"].is_null()) continue;
    ++plans;
    CHECK(s["cluster"].size() == 1);
    CHECK(s["probability_meets_deadline"]["lower"].get<double>() > 0.9);
  }
  CHECK(plans >= 1);
  const auto table = run_cli(kQuestion + " --revocations '" + model_path + "' --catalog '" + catalog_path + "'");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("calibrated: drawn from the revocation model fitted to traces") != std::string::npos);
  CHECK(table.out.find("assumes: hand-written for a test") != std::string::npos);
  CHECK(table.out.find("UNCALIBRATED") == std::string::npos);
}

TEST_CASE("frontier --confidence exits 3 when no sampled deadline has a plan meeting the level") {
  // p3.2xlarge alone (a few candidates, so the searches are quick) at 3 revocations per hour: no cluster
  // finishes within the hour with probability 0.99.
  const auto r = run_cli("frontier --target-loss 0.8 --deadlines 40m:1h:2 --confidence 0.99 --fallback-hazard 3 "
                         "--max-scenarios 2000 --format json --catalog '" + p3_only_catalog_file() + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 3);
  const io::Json j = parse(r.out);
  REQUIRE(j["samples"].size() == 2);
  for (const io::Json& s : j["samples"]) {
    CHECK(s["status"] != "feasible");
    CHECK(s["cluster"].is_null());
    CHECK(s["probability_meets_deadline"].is_null());
  }
}

TEST_CASE("frontier --confidence says once that the target is met before training starts, and exits 3") {
  const auto r = run_cli("frontier --target-loss 1.6 --deadlines 600:7200:3 --confidence 0.9 --fallback-hazard 0.1");
  CHECK(r.exit_code == 3);
  CHECK(r.err.empty());
  const std::string why = "target_met_at_start: the target loss 1.6 is met before training starts";
  const std::size_t at = r.out.find(why);
  REQUIRE(at != std::string::npos);
  CHECK(r.out.find("the target loss 1.6 is met", at + why.size()) == std::string::npos);  // said once
  const auto json = run_cli("frontier --target-loss 1.6 --deadlines 600:7200:3 --confidence 0.9 --fallback-hazard 0.1 --format json");
  CHECK(json.exit_code == 3);
  const io::Json j = parse(json.out);
  REQUIRE(j["samples"].size() == 3);
  for (const io::Json& s : j["samples"]) CHECK(s["status"] == "target_met_at_start");
}

TEST_CASE("frontier --confidence --plot draws the confidence plans beside the deterministic staircase") {
  const std::filesystem::path dir = std::string(SPOTDNN_TEST_BINARY_DIR) + "/cli_confidence_frontier_plot_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "bin");
  {
    std::ofstream fake(dir / "bin/gnuplot");
    fake << "#!/bin/sh\ncat > \"$(dirname \"$0\")/script.gp\"\necho '<svg></svg>'\n";
  }
  std::filesystem::permissions(dir / "bin/gnuplot", std::filesystem::perms::owner_all);
  const std::string svg = (dir / "frontier.svg").string();
  const auto r = run_shell("PATH='" + (dir / "bin").string() + "':\"$PATH\" '" + SPOTDNN_CLI_PATH + "' " + kQuestion +
                           " --format json --plot '" + svg + "'");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(parse(r.out)["plot"] == svg);
  std::ifstream file(dir / "bin/script.gp");
  std::stringstream script;
  script << file.rdbuf();
  const std::string s = script.str();
  CAPTURE(s);
  CHECK(s.find("$frontier << EOD") != std::string::npos);
  CHECK(s.find("$deterministic << EOD") != std::string::npos);
  // Four confidence points in minutes (40, 66.67, 93.33, 120), none without a plan.
  const std::size_t points = s.find("$confidence << EOD\n");
  REQUIRE(points != std::string::npos);
  const std::size_t end = s.find("EOD\n", points + 19);
  std::istringstream block(s.substr(points + 19, end - points - 19));
  int count = 0;
  std::string row;
  while (std::getline(block, row)) ++count;
  CHECK(count == 4);
  CHECK(s.find("$none << EOD") == std::string::npos);
  CHECK(s.find("UNCALIBRATED") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("frontier refuses a confidence frontier without COUNT, with too many deadlines or a bad level, and confidence options without --confidence") {
  const std::string base = "frontier --target-loss 0.8 --fallback-hazard 0.1 --max-scenarios 2000 ";
  {
    const auto r = run_cli(base + "--deadlines 40m:2h --confidence 0.9");
    check_bad_input(r);
    CHECK(r.err.find("--deadlines") != std::string::npos);
    CHECK(r.err.find("COUNT") != std::string::npos);
  }
  {
    const auto r = run_cli(base + "--deadlines 40m:2h:51 --confidence 0.9");
    check_bad_input(r);
    CHECK(r.err.find("--deadlines COUNT = 51") != std::string::npos);
    CHECK(r.err.find("at most 50") != std::string::npos);
  }
  check_bad_input(run_cli(base + "--deadlines 40m:2h:4 --confidence 1.5"));
  check_bad_input(run_cli(base + "--deadlines 40m:2h:4 --confidence 1"));
  {
    const auto r = run_cli(base + "--deadlines 40m:2h:4 --confidence 0.9 --replacement replan");
    check_bad_input(r);
    CHECK(r.err.find("--replacement") != std::string::npos);
  }
  {
    const auto r = run_cli("frontier --target-loss 0.8 --deadlines 40m:2h:4 --seed 3 --fallback-hazard 0.1");
    check_bad_input(r);
    CHECK(r.err.find("--seed, --fallback-hazard: only with --confidence") != std::string::npos);
  }
  // Without --confidence, COUNT beyond 50 is still the deterministic frontier's to take.
  const auto deterministic = run_cli("frontier --target-loss 0.8 --deadlines 40m:2h:51 --format json");
  CHECK(deterministic.exit_code == 0);
  CHECK(parse(deterministic.out)["samples"].size() == 51);
}

TEST_CASE("plan --confidence lists every plan it simulated, and its count line agrees with the rows shown") {
  const std::string question = "plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 20000";
  const auto json = run_cli(question + " --format json");
  REQUIRE(json.exit_code == 0);
  const io::Json j = parse(json.out);
  const std::size_t simulated = j["simulated"].size();
  REQUIRE(simulated >= 2);
  REQUIRE(simulated <= 20);  // all fit in the table
  CHECK(j["candidates_simulated"] == simulated);
  const auto table = run_cli(question);
  REQUIRE(table.exit_code == 0);
  CAPTURE(table.out);
  // One numbered row per simulated plan, in cost order: the first is the deterministic plan, the last the accepted one.
  for (std::size_t i = 0; i < simulated; ++i) {
    const io::Json& c = j["simulated"][i];
    std::string cluster;
    for (const auto& [type, count] : c["cluster"].items()) cluster += (cluster.empty() ? "" : ",") + type + "=" + std::to_string(count.get<int>());
    const std::size_t row = table.out.find("\n  " + std::to_string(i + 1) + " ");
    REQUIRE_MESSAGE(row != std::string::npos, std::to_string(i + 1));
    const std::string line = table.out.substr(row + 1, table.out.find('\n', row + 1) - row - 1);
    CHECK_MESSAGE(line.find(cluster) != std::string::npos, line);
    if (i == 0) CHECK(line.find("deterministic (exact)") != std::string::npos);
    if (i + 1 == simulated) CHECK(line.find("with confidence") != std::string::npos);
  }
  CHECK(table.out.find("\n  " + std::to_string(simulated + 1) + " ") == std::string::npos);
  const std::string count_line = std::to_string(simulated) + " of " + std::to_string(j["candidates"].get<std::size_t>()) +
                                 " candidate plans simulated in cost order";
  CHECK(table.out.find(count_line) != std::string::npos);
  const std::size_t rest = j["candidates"].get<std::size_t>() - simulated;
  CHECK(table.out.find("\n  all " + std::to_string(simulated) + " in the table above; the other " + std::to_string(rest) +
                       " cost more and were not simulated: the search stops at the first plan shown to meet the level\n") !=
        std::string::npos);
  // And the samples the plan trains, as predict shows them.
  const std::string samples = "the plan trains " + spotdnn::detail::format_count(j["prediction"]["samples_to_train"].get<double>()) + " samples";
  CHECK(table.out.find(samples) != std::string::npos);
}

TEST_CASE("frontier --confidence on a catalog with zone prices plans each deadline in the zone plan --confidence picks there") {
  // The ResNet-110 preset with per-zone spot prices (p3.2xlarge cheapest in us-east-1b, g4dn.4xlarge only in
  // 1a and 1c), as cli_zone_test.cpp builds it.
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) {
    if (t.name == "p3.2xlarge") t.zone_prices_usd_per_hour = {{"us-east-1a", 1.2}, {"us-east-1b", 0.918}, {"us-east-1c", 1.5}};
    if (t.name == "g4dn.4xlarge") t.zone_prices_usd_per_hour = {{"us-east-1a", 0.3612}, {"us-east-1c", 0.5}};
  }
  const std::string catalog = " --catalog '" + write_temp_file("cli_confidence_frontier_zoned_catalog.json", io::to_json(c).dump()) + "'";
  const std::string options = " --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 20000 --seed 7 --no-progress";
  const auto r = run_cli("frontier --target-loss 0.8 --deadlines 40m:2h:3" + options + catalog + " --format json");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("lowest price") == std::string::npos);  // no "each type at its lowest price over the zones" warning
  const io::Json j = parse(r.out);
  REQUIRE(j["samples"].size() == 3);
  for (const io::Json& s : j["samples"]) {
    const double deadline_s = s["deadline_s"].get<double>();
    CAPTURE(deadline_s);
    const auto plan = run_cli("plan --target-loss 0.8 --deadline " + detail::format_number(deadline_s) + options + catalog + " --format json");
    CAPTURE(plan.err);
    REQUIRE((plan.exit_code == 0 || plan.exit_code == 3));
    const io::Json p = parse(plan.out);
    CHECK(s["zone"] == p["zone"]);
    if (!s["cluster"].is_null()) CHECK(s["cluster"] == p["cluster"]);
    CHECK(s["cluster"].is_null() == (plan.exit_code == 3));
  }
  // The table and the CSV name each deadline's zone.
  const auto table = run_cli("frontier --target-loss 0.8 --deadlines 40m:2h:3" + options + catalog);
  CHECK(table.out.find("  zone: each deadline's plan in the cheapest zone") != std::string::npos);
  const auto csv = run_cli("frontier --target-loss 0.8 --deadlines 40m:2h:3" + options + catalog + " --format csv");
  CHECK(csv.out.substr(0, csv.out.find('\n')).find(",calibrated,zone") != std::string::npos);
}
