// SPDX-License-Identifier: MIT
// Availability Zones on the command line: `plan` plans every zone a catalog prices and reports the cheapest
// (`zone` in the table and the plan document), `--zone` pins one (and the cost follows that zone's prices),
// unknown zones exit 2 naming the known ones, `replan`, `simulate` and `frontier` take `--zone`, a plan
// document with a zone launches in that zone's subnet, and plans and replans mark estimated profiles.
// `frontier` and `compare` price per zone (each frontier step and the compared spot plan in the cheapest
// zone, or the pinned one), name the zone in every output and show the plans' Spot Placement Scores.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

#include "support/cli_refusal.hpp"
#include "support/run_command.hpp"

using namespace spotdnn;
using io::Json;
using spotdnn::test::CommandResult;
using spotdnn::test::run_cli;
using spotdnn::test::check_cli_refused;
using spotdnn::test::write_temp_file;

namespace {

const std::string kState = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/hostile/state.json";
const std::string kSubnetA = "subnet-0aaaaaaaaaaaaaaaa";
const std::string kSubnetB = "subnet-0bbbbbbbbbbbbbbbb";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The ResNet-110 preset catalog with spot prices per zone: p3.2xlarge 1.2 / 0.918 / 1.5 in us-east-1a /
/// 1b / 1c, g4dn.4xlarge only in 1a (0.3612) and 1c (0.5); written to a file, its path returned.
std::string zoned_catalog_file() {
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) {
    if (t.name == "p3.2xlarge") t.zone_prices_usd_per_hour = {{"us-east-1a", 1.2}, {"us-east-1b", 0.918}, {"us-east-1c", 1.5}};
    if (t.name == "g4dn.4xlarge") t.zone_prices_usd_per_hour = {{"us-east-1a", 0.3612}, {"us-east-1c", 0.5}};
  }
  return write_temp_file("cli_zone_catalog.json", io::to_json(c).dump());
}

/// The preset workload with g3.8xlarge's profile marked as estimated from p3.2xlarge.
std::string estimated_workload_file() {
  Workload w = presets::resnet110_workload();
  w.profiles.at("g3.8xlarge").estimated_from = "p3.2xlarge";
  return write_temp_file("cli_zone_estimated_workload.json", io::to_json(w).dump());
}

/// An AWS configuration with a subnet for us-east-1a and us-east-1b (and, with `subnet_id`, one for plans
/// without a zone).
std::string aws_file(bool subnet_id) {
  Json aws = {{"region", "us-east-1"},
              {"subnet_ids", {{"us-east-1a", kSubnetA}, {"us-east-1b", kSubnetB}}},
              {"security_group_ids", {"sg-0123456789abcdef0"}},
              {"image_id", "ami-0123456789abcdef0"},
              {"checkpoint_s3_uri", "s3://bucket/ckpt"}};
  if (subnet_id) aws["subnet_id"] = "subnet-0123456789abcdef0";
  return write_temp_file(subnet_id ? "cli_zone_aws_both.json" : "cli_zone_aws.json", aws.dump());
}

const std::string kPlan = "plan --target-loss 0.8 --deadline 2400";

Json cli_json(const std::string& arguments, int exit_code = 0) {
  const CommandResult r = run_cli(arguments);
  CAPTURE(arguments);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == exit_code);
  return Json::parse(r.out);
}

/// The price the plan's per_type lists for `type`.
double price_of(const Json& plan, const std::string& type) {
  for (const Json& t : plan.at("per_type")) {
    if (t.at("type") == type) return t.at("price_usd_per_hour").get<double>();
  }
  FAIL("no per_type entry for " << type);
  return 0;
}


}  // namespace

TEST_CASE("plan plans every zone and reports the cheapest in the table and the plan document") {
  const std::string catalog = zoned_catalog_file();
  const CommandResult table = run_cli(kPlan + " --catalog '" + catalog + "'");
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "  zone: us-east-1b, the cheapest of 3 zones (us-east-1a $"));
  const Json plan = cli_json(kPlan + " --catalog '" + catalog + "' --format json");
  CHECK(plan.at("zone") == "us-east-1b");
  CHECK(price_of(plan, "p3.2xlarge") == doctest::Approx(0.918).epsilon(1e-12));
  const CommandResult csv = run_cli(kPlan + " --catalog '" + catalog + "' --format csv");
  CHECK(contains(csv.out.substr(0, csv.out.find('\n')), ",message,zone"));
  CHECK(csv.out.size() > 12);
  CHECK(csv.out.substr(csv.out.size() - 12) == ",us-east-1b\n");
  for (const std::string zone : {"us-east-1a", "us-east-1c"}) {
    const Json other = cli_json(kPlan + " --catalog '" + catalog + "' --zone " + zone + " --format json");
    CHECK(other.at("zone") == zone);
    CHECK(other.at("cost_usd").get<double>() >= plan.at("cost_usd").get<double>());
  }
  // Without zone prices nothing changes but the null zone.
  const Json preset = cli_json(kPlan + " --format json");
  CHECK(preset.at("zone").is_null());
  CHECK(preset.at("cost_usd").get<double>() == doctest::Approx(3.097565595).epsilon(1e-9));
  CHECK_FALSE(contains(run_cli(kPlan).out, "zone"));
}

TEST_CASE("plan --min-placement-score leaves out low-scored pools and every plan output shows the chosen types' scores") {
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) {
    if (t.name == "p3.2xlarge") t.zone_prices_usd_per_hour = {{"us-east-1a", 1.2}, {"us-east-1b", 0.918}, {"us-east-1c", 1.5}};
  }
  c.placement_scores = {{"us-east-1b", 2, 4, "units", {"p3.2xlarge"}, ""}, {"us-east-1a", 9, 4, "units", {"p3.2xlarge"}, ""}};
  const std::string catalog = write_temp_file("cli_zone_scored_catalog.json", io::to_json(c).dump());
  const Json free_plan = cli_json(kPlan + " --catalog '" + catalog + "' --format json");
  CHECK(free_plan.at("zone") == "us-east-1b");
  CHECK(free_plan.at("placement_scores").at("p3.2xlarge") == 2);

  const CommandResult scored = run_cli(kPlan + " --catalog '" + catalog + "' --min-placement-score 5 --format json");
  REQUIRE(scored.exit_code == 0);
  CHECK(contains(scored.err, "--min-placement-score 5 leaves out p3.2xlarge in us-east-1b (score 2)"));
  const Json plan = Json::parse(scored.out);
  CHECK(plan.at("zone") != "us-east-1b");
  if (plan.at("cluster").contains("p3.2xlarge")) CHECK(plan.at("placement_scores").at("p3.2xlarge") == 9);
  for (const auto& entry : plan.at("cluster").items()) {
    const std::string type = entry.key();
    CAPTURE(type);
    CHECK(plan.at("placement_scores").contains(type));
  }
  const CommandResult table = run_cli(kPlan + " --catalog '" + catalog + "' --zone us-east-1a");
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "  placement score: "));
  CHECK(contains(table.out, "(AWS Spot Placement Scores, 1 to 10, in us-east-1a)"));
  const CommandResult csv = run_cli(kPlan + " --catalog '" + catalog + "' --zone us-east-1a --format csv");
  CHECK(contains(csv.out.substr(0, csv.out.find('\n')), ",zone,placement_scores"));

  // Out of range, or a catalog without scores: one line, exit 2.
  check_cli_refused(kPlan + " --catalog '" + catalog + "' --min-placement-score 11", {"--min-placement-score"});
  check_cli_refused(kPlan + " --min-placement-score 5", {"--min-placement-score 5", "no Spot Placement Scores"});
}

TEST_CASE("plan --zone pins a zone and the cost changes as that zone's prices say") {
  const std::string catalog = zoned_catalog_file();
  const Json b = cli_json(kPlan + " --catalog '" + catalog + "' --zone us-east-1b --format json");
  const Json c = cli_json(kPlan + " --catalog '" + catalog + "' --zone us-east-1c --format json");
  CHECK(c.at("zone") == "us-east-1c");
  CHECK(price_of(c, "p3.2xlarge") == 1.5);
  REQUIRE(b.at("cluster") == c.at("cluster"));  // g3.8xlarge=4, p3.2xlarge=2: the same cluster, dearer p3
  const double hours = b.at("training_time_s").get<double>() / 3600;
  const double p3 = b.at("cluster").at("p3.2xlarge").get<double>();
  CHECK(c.at("cost_usd").get<double>() - b.at("cost_usd").get<double>() == doctest::Approx(p3 * (1.5 - 0.918) * hours).epsilon(1e-9));
  const CommandResult table = run_cli(kPlan + " --catalog '" + catalog + "' --zone us-east-1c");
  CHECK(contains(table.out, "  zone: us-east-1c (pinned)\n"));
}

TEST_CASE("an unknown zone exits 2 naming the known zones and a catalog without zone prices has none to pin") {
  const std::string catalog = zoned_catalog_file();
  check_cli_refused(kPlan + " --catalog '" + catalog + "' --zone us-east-1z",
                {"spotdnn plan: error: --zone \"us-east-1z\"", "known: us-east-1a, us-east-1b, us-east-1c",
                 "AZ names differ between AWS accounts"});
  check_cli_refused(kPlan + " --zone us-east-1a", {"--zone \"us-east-1a\"", "no per-zone prices"});
  check_cli_refused(kPlan + " --catalog '" + catalog + "' --zone ''", {"--zone \"\": give an Availability Zone name"});
  check_cli_refused("frontier --target-loss 0.8 --catalog '" + catalog + "' --zone ''", {"spotdnn frontier: error: --zone \"\""});
  check_cli_refused("replan --state '" + kState + "' --catalog '" + catalog + "' --zone nowhere", {"spotdnn replan: error", "known: us-east-1a"});
  check_cli_refused("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 1h --catalog '" + catalog + "' --zone nowhere",
                {"spotdnn simulate: error", "known: us-east-1a"});
  check_cli_refused("frontier --target-loss 0.8 --catalog '" + catalog + "' --zone nowhere", {"spotdnn frontier: error", "known:"});
}

TEST_CASE("a type not sold in a zone is not planned there and keeping it there is infeasible") {
  const std::string catalog = zoned_catalog_file();
  // g4dn.4xlarge has no price in us-east-1b: a budget plan that would take it elsewhere does without it.
  const std::string budget = "plan --target-loss 0.8 --budget 3 --catalog '" + catalog + "' --format json";
  const Json b = cli_json(budget + " --zone us-east-1b");
  CHECK_FALSE(b.at("cluster").contains("g4dn.4xlarge"));
  const CommandResult kept = run_cli(kPlan + " --catalog '" + catalog + "' --zone us-east-1b --keep g4dn.4xlarge=1");
  CHECK(kept.exit_code == 3);
  CHECK(contains(kept.out, "no spot price in zone us-east-1b"));
  // Without --zone, the zones that sell it are planned and the cheapest of them is kept.
  const Json any = cli_json(kPlan + " --catalog '" + catalog + "' --keep g4dn.4xlarge=1 --format json");
  CHECK(any.at("zone") != "us-east-1b");
  CHECK(any.at("cluster").at("g4dn.4xlarge").get<int>() >= 1);
}

TEST_CASE("replan --zone prices the additions in the running job's zone and the replan document carries it") {
  const std::string catalog = zoned_catalog_file();
  const std::string replan = "replan --state '" + kState + "' --catalog '" + catalog + "'";
  const Json c = cli_json(replan + " --zone us-east-1c --format json");
  CHECK(c.at("kind") == "spotdnn.replan");
  CHECK(c.at("zone") == "us-east-1c");
  const Json b = cli_json(replan + " --zone us-east-1b --format json");
  CHECK(b.at("zone") == "us-east-1b");
  CHECK(c.at("cost_usd").get<double>() > b.at("cost_usd").get<double>());  // the survivors' p3.2xlarge cost more in 1c
  const CommandResult table = run_cli(replan + " --zone us-east-1c");
  CHECK(contains(table.out, "  zone           us-east-1c\n"));
  // Without --zone the running job's zone would be guessed (and its additions launched in subnet_id):
  // refused, naming the zones.
  const CommandResult unpinned = run_cli(replan + " --format json");
  CHECK(unpinned.exit_code == 2);
  CHECK(unpinned.out.empty());
  CHECK(unpinned.err_lines() == 1);
  CHECK(contains(unpinned.err, "spotdnn replan: error: --zone: the catalog prices 3 Availability Zones"));
}

TEST_CASE("simulate --zone prices the cluster at that zone's prices") {
  const std::string catalog = zoned_catalog_file();
  const std::string simulate = "simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 1h --scenarios 200 --fallback-hazard 0.05 "
                               "--no-progress --catalog '" + catalog + "' --format json";
  const Json b = cli_json(simulate + " --zone us-east-1b");
  const Json c = cli_json(simulate + " --zone us-east-1c");
  CHECK(b.at("zone") == "us-east-1b");
  CHECK(c.at("zone") == "us-east-1c");
  CHECK(c.at("deterministic_cost_usd").get<double>() > b.at("deterministic_cost_usd").get<double>());
  CHECK(contains(run_cli(simulate).err, "spotdnn simulate: warning: the catalog prices 3 Availability Zones"));
}

TEST_CASE("frontier --zone writes the zone at the top and in every step's plan document") {
  const Json f = cli_json("frontier --target-loss 0.8 --deadlines 30m:2h --catalog '" + zoned_catalog_file() + "' --zone us-east-1a --format json");
  CHECK(f.at("zone") == "us-east-1a");
  REQUIRE_FALSE(f.at("steps").empty());
  for (const Json& step : f.at("steps")) CHECK(step.at("plan").at("zone") == "us-east-1a");
}

TEST_CASE("a plan document with a zone launches in that zone's subnet and one without in subnet_id") {
  const std::string catalog = zoned_catalog_file();
  const std::string plan_b = write_temp_file("cli_zone_plan_b.json", run_cli(kPlan + " --catalog '" + catalog + "' --format json").out);
  const CommandResult launch = run_cli("launch --plan '" + plan_b + "' --aws '" + aws_file(false) + "'");
  CAPTURE(launch.err);
  REQUIRE(launch.exit_code == 0);
  CHECK(contains(launch.out, "readonly SUBNET_ID='" + kSubnetB + "'\n"));
  CHECK(contains(launch.out, "# Availability Zone: us-east-1b"));
  const Json about = cli_json("launch --plan '" + plan_b + "' --aws '" + aws_file(false) + "' --format json");
  CHECK(about.at("zone") == "us-east-1b");
  CHECK(about.at("subnet_id") == kSubnetB);
  const CommandResult fleet = run_cli("launch --plan '" + plan_b + "' --aws '" + aws_file(false) + "' --fleet");
  REQUIRE(fleet.exit_code == 0);
  CHECK(contains(fleet.out, "\"SubnetId\":\"" + kSubnetB + "\""));

  // A zone the configuration gives no subnet for: exit 2 naming the zone and the key, even with subnet_id.
  const std::string plan_c =
      write_temp_file("cli_zone_plan_c.json", run_cli(kPlan + " --catalog '" + catalog + "' --zone us-east-1c --format json").out);
  check_cli_refused("launch --plan '" + plan_c + "' --aws '" + aws_file(true) + "'",
                {"spotdnn launch: error", "us-east-1c", "subnet_ids", "cannot be checked"});

  // A plan without a zone uses subnet_id; without one it is refused.
  const std::string plain = write_temp_file("cli_zone_plan_plain.json", run_cli(kPlan + " --format json").out);
  const CommandResult unzoned = run_cli("launch --plan '" + plain + "' --aws '" + aws_file(true) + "'");
  REQUIRE(unzoned.exit_code == 0);
  CHECK(contains(unzoned.out, "readonly SUBNET_ID='subnet-0123456789abcdef0'\n"));
  check_cli_refused("launch --plan '" + plain + "' --aws '" + aws_file(false) + "'", {"spotdnn launch: error", "subnet_id is missing"});
}

TEST_CASE("a replan document with a zone joins its run in that zone's subnet") {
  const std::string catalog = zoned_catalog_file();
  const std::string replan = write_temp_file(
      "cli_zone_replan.json", run_cli("replan --state '" + kState + "' --catalog '" + catalog + "' --zone us-east-1a --format json").out);
  const CommandResult join = run_cli("launch --plan '" + replan + "' --aws '" + aws_file(false) + "' --join 20260301-120000-0a1b2c");
  CAPTURE(join.err);
  REQUIRE(join.exit_code == 0);
  CHECK(contains(join.out, "readonly SUBNET_ID='" + kSubnetA + "'\n"));
}

TEST_CASE("plan and replan mark every cluster type whose profile is estimated") {
  const std::string workload = estimated_workload_file();
  const Json plan = cli_json(kPlan + " --workload '" + workload + "' --format json");
  REQUIRE(plan.at("cluster").contains("g3.8xlarge"));
  CHECK(plan.at("estimated_profiles") == Json{{"g3.8xlarge", "p3.2xlarge"}});
  const CommandResult table = run_cli(kPlan + " --workload '" + workload + "'");
  CHECK(contains(table.out, "  estimated: g3.8xlarge from p3.2xlarge (GPU peak), not measured: fit throughput replaces it\n"));
  CHECK_FALSE(contains(table.out, "estimated: p3.2xlarge"));
  // Measured profiles: always the key, empty.
  CHECK(cli_json(kPlan + " --format json").at("estimated_profiles") == Json::object());
  CHECK_FALSE(contains(run_cli(kPlan).out, "estimated:"));

  const std::string replan = "replan --state '" + kState + "' --workload '" + workload + "'";
  const Json r = cli_json(replan + " --format json");
  REQUIRE(r.at("additions").contains("g3.8xlarge"));
  CHECK(r.at("estimated_profiles") == Json{{"g3.8xlarge", "p3.2xlarge"}});
  CHECK(contains(run_cli(replan).out, "  estimated: g3.8xlarge from p3.2xlarge (GPU peak), not measured: fit throughput replaces it\n"));
  CHECK(cli_json("replan --state '" + kState + "' --format json").at("estimated_profiles") == Json::object());
}

TEST_CASE("plan --confidence plans every zone and writes the chosen zone") {
  const Json plan = cli_json(kPlan + " --catalog '" + zoned_catalog_file() +
                             "' --confidence 0.9 --fallback-hazard 0.05 --max-scenarios 4000 --no-progress --format json");
  CHECK(plan.at("zone") == "us-east-1b");
  CHECK(plan.at("estimated_profiles") == Json::object());
}

// ---- frontier and compare per zone, and their placement scores ----

namespace {

const std::string kFrontier = "frontier --target-loss 0.8 --deadlines 30m:2h:8";

/// The frontier's cost at each sampled deadline (NaN where it has no plan).
std::vector<double> sampled_costs(const Json& frontier) {
  std::vector<double> costs;
  for (const Json& s : frontier.at("samples")) costs.push_back(s.at("cost_usd").is_null() ? std::nan("") : s.at("cost_usd").get<double>());
  return costs;
}

std::string serverless_profile_file() {
  return write_temp_file("cli_zone_serverless_profile.json",
                         R"({"kind": "spotdnn.serverless_profile", "name": "reference", "model_size_mb": 44.7, "samples_per_epoch": 50000,
                             "a": 60, "b": 8, "m": 200, "k1": 20, "k2": -0.8})");
}

/// zoned_catalog_file() with Spot Placement Scores: p3.2xlarge 3 in us-east-1a and 8 in us-east-1b.
std::string scored_zoned_catalog_file() {
  Catalog c = io::catalog_from_json(io::read_json_file(zoned_catalog_file()));
  c.placement_scores = {{"us-east-1a", 3, 4, "units", {"p3.2xlarge"}, ""}, {"us-east-1b", 8, 4, "units", {"p3.2xlarge"}, ""}};
  return write_temp_file("cli_zone_scored_zoned_catalog.json", io::to_json(c).dump());
}

}  // namespace

TEST_CASE("frontier on a zoned catalog makes each step the cheapest over the zones, each in one zone it names") {
  const std::string catalog = zoned_catalog_file();
  const CommandResult run = run_cli(kFrontier + " --catalog '" + catalog + "' --format json");
  REQUIRE(run.exit_code == 0);
  CHECK_FALSE(contains(run.err, "Availability Zones"));  // no mixed-zone warning any more: nothing is mixed
  const Json f = Json::parse(run.out);
  CHECK(f.at("zone").is_null());
  CHECK(f.at("zones") == Json::array({"us-east-1a", "us-east-1b", "us-east-1c"}));
  REQUIRE_FALSE(f.at("steps").empty());
  double previous_cost = std::numeric_limits<double>::infinity();
  for (const Json& step : f.at("steps")) {
    const std::string zone = step.at("zone").get<std::string>();
    CAPTURE(zone);
    CHECK(step.at("plan").at("zone") == zone);
    if (step.at("plan").at("cluster").contains("p3.2xlarge")) {
      const double expected = zone == "us-east-1a" ? 1.2 : zone == "us-east-1b" ? 0.918 : 1.5;
      CHECK(price_of(step.at("plan"), "p3.2xlarge") == doctest::Approx(expected).epsilon(1e-12));
    }
    CHECK(step.at("cost_usd").get<double>() < previous_cost);  // a staircase: costs fall with the deadline
    previous_cost = step.at("cost_usd").get<double>();
  }
  // At every sampled deadline, the merged cost is the cheapest of the pinned zones' costs (1e-12 relative).
  const std::vector<double> merged = sampled_costs(f);
  std::vector<double> best(merged.size(), std::numeric_limits<double>::infinity());
  for (const std::string zone : {"us-east-1a", "us-east-1b", "us-east-1c"}) {
    const Json pinned = cli_json(kFrontier + " --catalog '" + catalog + "' --zone " + zone + " --format json");
    for (const Json& step : pinned.at("steps")) CHECK(step.at("zone") == zone);
    const std::vector<double> costs = sampled_costs(pinned);
    for (std::size_t i = 0; i < costs.size(); ++i) {
      if (!std::isnan(costs[i])) best[i] = std::min(best[i], costs[i]);
    }
  }
  bool some = false;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    CAPTURE(i);
    if (std::isinf(best[i])) {
      CHECK(std::isnan(merged[i]));
    } else {
      some = true;
      CHECK(merged[i] == doctest::Approx(best[i]).epsilon(1e-12));
      CHECK(f.at("samples")[i].contains("zone"));
    }
  }
  CHECK(some);

  const CommandResult table = run_cli(kFrontier + " --catalog '" + catalog + "'");
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "  zone: each step is the cheapest of 3 Availability Zones (us-east-1a, us-east-1b, us-east-1c); a run stays in one zone"));
  CHECK(contains(table.out, " zone "));
  CHECK(contains(table.out, "us-east-1b"));
  const CommandResult csv = run_cli(kFrontier + " --catalog '" + catalog + "' --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("from_deadline_s,to_deadline_s,training_time_s,cost_usd,worker_cost_usd,ps_cost_usd,workers,cluster,zone\n", 0) == 0);
  const std::size_t rows = std::size_t(std::count(csv.out.begin(), csv.out.end(), '\n'));
  CHECK(rows == f.at("steps").size() + 1);
  CHECK(contains(csv.out, ",us-east-1"));
}

TEST_CASE("frontier --step N of a zoned frontier prints that step's plan document priced in its zone") {
  const std::string catalog = zoned_catalog_file();
  const Json f = cli_json(kFrontier + " --catalog '" + catalog + "' --format json");
  for (std::size_t n = 1; n <= f.at("steps").size(); ++n) {
    const Json step = cli_json(kFrontier + " --catalog '" + catalog + "' --step " + std::to_string(n) + " --format json");
    CHECK(step.at("kind") == "spotdnn.plan");
    CHECK(step.at("zone") == f.at("steps")[n - 1].at("zone"));
    CHECK(step.at("cost_usd") == f.at("steps")[n - 1].at("plan").at("cost_usd"));
  }
}

TEST_CASE("frontier and compare keep their outputs on a catalog without zone prices") {
  const Json f = cli_json(kFrontier + " --format json");
  CHECK(f.at("zone").is_null());
  CHECK_FALSE(f.contains("zones"));
  for (const Json& step : f.at("steps")) CHECK_FALSE(step.contains("zone"));
  for (const Json& sample : f.at("samples")) CHECK_FALSE(sample.contains("zone"));
  const CommandResult csv = run_cli(kFrontier + " --format csv");
  CHECK(csv.out.rfind("from_deadline_s,to_deadline_s,training_time_s,cost_usd,worker_cost_usd,ps_cost_usd,workers,cluster\n", 0) == 0);
  CHECK_FALSE(contains(run_cli(kFrontier).out, "zone"));
  const std::string compare = "compare --target-loss 0.8 --deadline 20h --serverless-profile " + serverless_profile_file();
  const CommandResult compare_csv = run_cli(compare + " --format csv");
  CHECK(compare_csv.out.rfind("side,status,plan,training_time_s,cost_usd,samples,message\n", 0) == 0);
  CHECK_FALSE(contains(run_cli(compare).out, "zone"));
  CHECK(cli_json(compare + " --format json").at("spot").at("zone").is_null());
}

TEST_CASE("compare plans the spot side in every zone and keeps the cheapest, or the zone --zone pins") {
  const std::string catalog = zoned_catalog_file();
  const std::string compare = "compare --target-loss 0.8 --deadline 2400 --serverless-profile " + serverless_profile_file() +
                              " --catalog '" + catalog + "'";
  const Json j = cli_json(compare + " --format json");
  const Json plan = cli_json(kPlan + " --catalog '" + catalog + "' --format json");
  CHECK(j.at("spot").at("zone") == plan.at("zone"));
  CHECK(j.at("spot").at("zone") == "us-east-1b");
  CHECK(j.at("spot").at("cost_usd") == plan.at("cost_usd"));
  CHECK(price_of(j.at("spot"), "p3.2xlarge") == doctest::Approx(0.918).epsilon(1e-12));
  for (const std::string zone : {"us-east-1a", "us-east-1c"}) {
    const Json pinned = cli_json(compare + " --zone " + zone + " --format json");
    CHECK(pinned.at("spot").at("zone") == zone);
    CHECK(pinned.at("spot").at("cost_usd") == cli_json(kPlan + " --catalog '" + catalog + "' --zone " + zone + " --format json").at("cost_usd"));
  }
  const CommandResult table = run_cli(compare);
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "  spot zone: us-east-1b, the cheapest of 3 zones (us-east-1a $"));
  const CommandResult csv = run_cli(compare + " --format csv");
  CHECK(csv.out.rfind("side,status,plan,training_time_s,cost_usd,samples,message,zone\n", 0) == 0);
  CHECK(contains(csv.out, ",us-east-1b\n"));
  CHECK(csv.out.substr(csv.out.size() - 2) == ",\n");  // the serverless row has no zone
  check_cli_refused(compare + " --zone nowhere", {"spotdnn compare: error", "known:"});
  check_cli_refused(compare + " --zone ''", {"spotdnn compare: error: --zone \"\""});
}

TEST_CASE("frontier and compare show the Spot Placement Scores of each plan's types in its zone") {
  const std::string catalog = scored_zoned_catalog_file();
  const CommandResult table = run_cli(kFrontier + " --catalog '" + catalog + "'");
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "placement score"));
  const CommandResult csv = run_cli(kFrontier + " --catalog '" + catalog + "' --format csv");
  CHECK(contains(csv.out.substr(0, csv.out.find('\n')), ",cluster,zone,placement_scores"));
  const Json f = cli_json(kFrontier + " --catalog '" + catalog + "' --format json");
  bool scored = false;
  for (const Json& step : f.at("steps")) {
    const Json& plan = step.at("plan");
    if (!plan.at("cluster").contains("p3.2xlarge")) continue;
    const std::string zone = step.at("zone").get<std::string>();
    CAPTURE(zone);
    const Json expected = zone == "us-east-1a" ? Json(3) : zone == "us-east-1b" ? Json(8) : Json(nullptr);
    CHECK(plan.at("placement_scores").at("p3.2xlarge") == expected);
    scored = true;
  }
  CHECK(scored);

  const std::string compare = "compare --target-loss 0.8 --deadline 2400 --serverless-profile " + serverless_profile_file() +
                              " --catalog '" + catalog + "'";
  const Json j = cli_json(compare + " --format json");
  REQUIRE(j.at("spot").at("zone") == "us-east-1b");
  REQUIRE(j.at("spot").at("cluster").contains("p3.2xlarge"));
  CHECK(j.at("spot").at("placement_scores").at("p3.2xlarge") == 8);
  const CommandResult compare_table = run_cli(compare);
  CHECK(contains(compare_table.out, "placement score"));
  CHECK(contains(compare_table.out, "p3.2xlarge 8"));
  const CommandResult compare_csv = run_cli(compare + " --format csv");
  CHECK(contains(compare_csv.out.substr(0, compare_csv.out.find('\n')), ",message,zone,placement_scores"));
  CHECK(contains(compare_csv.out, "p3.2xlarge=8"));
}
