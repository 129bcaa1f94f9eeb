// SPDX-License-Identifier: MIT
// The path a new user takes without writing JSON by hand: saved AWS outputs → `catalog import` → `plan`
// (the cheapest zone, vCPU quota groups, an estimated profile) → `plan --confidence` (hazards from the
// Spot Advisor's bands) → `launch` (the chosen zone's subnet), and how the answer moves from the frozen
// preset prices to the imported ones.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"

using spotdnn::test::run_cli;
using spotdnn::test::write_temp_file;
using Json = nlohmann::json;

namespace {

const std::string kFixtures = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/aws/";
const std::string kAws = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/examples/aws.json";

/// The catalog the README's market-data example imports, written to the test directory.
std::string imported_catalog() {
  const auto r = run_cli("catalog import --region us-east-1 --spot-prices " + kFixtures + "spot-price-history.json" +
                         " --instance-types " + kFixtures + "instance-types.json --on-demand-prices " + kFixtures +
                         "pricing-products.json --quotas " + kFixtures + "service-quotas.json --default-quotas " + kFixtures +
                         "default-service-quotas.json --advisor " + kFixtures +
                         "spot-advisor-data.json --types p3.2xlarge,g4dn.xlarge --as-of 2026-11-24T10:00:00Z");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The only warnings: the rows and zones the import skipped, and g4dn.xlarge's 4-day-old price in us-east-1a.
  CHECK(r.err.find("g4dn.xlarge in us-east-1a: the latest spot price ($0.21/h, 2026-11-20T08:00:00Z) is 4.1 days old") !=
        std::string::npos);
  return write_temp_file("cli_market_path_catalog.json", r.out);
}

}  // namespace

TEST_CASE("saved AWS outputs become a catalog with zones, quota groups, bands and on-demand prices") {
  const Json catalog = Json::parse(std::ifstream(imported_catalog()));
  REQUIRE(catalog["instance_types"].size() == 2);
  const Json& g4dn = catalog["instance_types"][0];
  CHECK(g4dn["name"] == "g4dn.xlarge");
  CHECK(g4dn["gpu_model"] == "T4");
  CHECK(g4dn["vcpus"] == 4);
  CHECK(g4dn["interruption_band"] == "<5%");
  CHECK(g4dn["quota_groups"]["spot"] == "L-3819A6DF");
  const Json& p3 = catalog["instance_types"][1];
  CHECK(p3["name"] == "p3.2xlarge");
  CHECK(p3["price_usd_per_hour"] == 0.918);  // the lowest of its zones (us-east-1b)
  CHECK(p3["on_demand_price_usd_per_hour"] == 3.06);
  CHECK(p3["interruption_band"] == "10-15%");
  CHECK(catalog["quota_groups"]["L-7212CCBC"]["vcpus"] == 64);
  // The per-type box is what the larger group allows (128 on-demand vCPUs / 8); the spot group's 64 vCPUs
  // limit spot p3.2xlarge to 8 in the planner.
  CHECK(p3["quota"] == 16);
  CHECK(p3["quota_groups"]["on-demand"] == "L-417A185B");
}

TEST_CASE("the imported catalog plans in its cheapest zone with an estimated T4 profile, where the preset paid for a V100") {
  const std::string catalog = imported_catalog();
  // The frozen preset: one p3.2xlarge at $0.918/h.
  const Json preset = Json::parse(run_cli("plan --target-loss 0.8 --deadline 2h --format json").out);
  CHECK(preset["cluster"] == Json{{"p3.2xlarge", 1}});
  CHECK(preset["cost_usd"].get<double>() == doctest::Approx(1.1389).epsilon(1e-4));
  CHECK(preset["zone"].is_null());
  // Without a profile for g4dn.xlarge, only the p3.2xlarge can be planned, and a warning says so.
  const auto unprofiled = run_cli("plan --catalog " + catalog + " --target-loss 0.8 --deadline 2h --format json");
  CHECK(unprofiled.exit_code == 0);
  CHECK(unprofiled.err.find("no profile for g4dn.xlarge") != std::string::npos);
  CHECK(Json::parse(unprofiled.out)["cluster"] == Json{{"p3.2xlarge", 1}});
  // With the T4 estimated from the V100 by GPU peak: one g4dn.xlarge in us-east-1a, about 40% cheaper.
  const auto estimated = run_cli("plan --catalog " + catalog +
                                 " --target-loss 0.8 --deadline 2h --estimate-profiles-from p3.2xlarge --format json");
  INFO(estimated.err);
  REQUIRE(estimated.exit_code == 0);
  const Json plan = Json::parse(estimated.out);
  CHECK(plan["cluster"] == Json{{"g4dn.xlarge", 1}});
  CHECK(plan["zone"] == "us-east-1a");
  CHECK(plan["estimated_profiles"] == Json{{"g4dn.xlarge", "p3.2xlarge"}});
  CHECK(plan["cost_usd"].get<double>() == doctest::Approx(0.6824).epsilon(1e-4));
  CHECK(plan["cost_usd"].get<double>() < preset["cost_usd"].get<double>());
  bool g_group_reported = false;
  for (const Json& g : plan["quota_groups"]) {
    if (g["code"] == "L-3819A6DF") {
      g_group_reported = true;
      CHECK(g["used_vcpus"] == 4);
      CHECK(g["limit_vcpus"] == 64);
    }
  }
  CHECK(g_group_reported);
  // Pinned to us-east-1b, the zone where the p3.2xlarge is cheapest.
  const Json pinned = Json::parse(run_cli("plan --catalog " + catalog +
                                          " --target-loss 0.8 --deadline 2h --estimate-profiles-from p3.2xlarge --zone us-east-1b --format json")
                                      .out);
  CHECK(pinned["zone"] == "us-east-1b");
  CHECK(pinned["cost_usd"].get<double>() > plan["cost_usd"].get<double>());
}

TEST_CASE("a confidence plan needs no hazard flags on an imported catalog: the advisor's bands give them") {
  const std::string catalog = imported_catalog();
  const auto r = run_cli("plan --catalog " + catalog +
                         " --target-loss 0.8 --deadline 2h --estimate-profiles-from p3.2xlarge --confidence 0.9 --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Json plan = Json::parse(r.out);
  CHECK(plan["status"] == "feasible");  // shown to meet the level, with the search's stated error rate
  CHECK(plan["cluster"] == Json{{"g4dn.xlarge", 1}});
  CHECK(plan["zone"] == "us-east-1a");
  CHECK(plan["probability_meets_deadline"]["lower"].get<double>() > 0.895);
  // The preset carries no bands: the same question needs a hazard there.
  const auto preset = run_cli("plan --target-loss 0.8 --deadline 2h --confidence 0.9");
  CHECK(preset.exit_code == 2);
  CHECK(preset.err.find("interruption_band") != std::string::npos);
}

TEST_CASE("the imported plan launches in its zone's subnet from the AWS configuration") {
  const std::string catalog = imported_catalog();
  const auto planned = run_cli("plan --catalog " + catalog +
                               " --target-loss 0.8 --deadline 2h --estimate-profiles-from p3.2xlarge --format json");
  REQUIRE(planned.exit_code == 0);
  const std::string plan = write_temp_file("cli_market_path_plan.json", planned.out);
  const auto launched = run_cli("launch --plan " + plan + " --aws " + kAws);
  INFO(launched.err);
  REQUIRE(launched.exit_code == 0);
  CHECK(launched.out.find("# Availability Zone: us-east-1a") != std::string::npos);
  CHECK(launched.out.find("readonly SUBNET_ID='subnet-0aaaaaaaaaaaaaaa1'") != std::string::npos);
  CHECK(launched.out.find("g4dn.xlarge") != std::string::npos);
}
