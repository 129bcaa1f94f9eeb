// SPDX-License-Identifier: MIT
// Availability Zones in the library: the zones a catalog prices, the catalog as seen from one zone, and
// planning in every zone to keep the cheapest (availability_zone.hpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <spotdnn/availability_zone.hpp>
#include <spotdnn/planner.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;
using spotdnn::test::error_of;

namespace {

/// The ResNet-110 preset with per-zone spot prices: p3.2xlarge is cheap in us-east-1b, g4dn.4xlarge is
/// sold only in us-east-1a and us-east-1c, g3.8xlarge is on-demand (zone prices do not apply).
Catalog zoned_catalog() {
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) {
    if (t.name == "p3.2xlarge") t.zone_prices_usd_per_hour = {{"us-east-1a", 1.2}, {"us-east-1b", 0.918}, {"us-east-1c", 1.5}};
    if (t.name == "g4dn.4xlarge") t.zone_prices_usd_per_hour = {{"us-east-1a", 0.3612}, {"us-east-1c", 0.5}};
    if (t.name == "g3.8xlarge") t.market = Market::on_demand, t.price_usd_per_hour = 2.28;
  }
  for (InstanceType& t : c.instance_types) {
    if (!t.zone_prices_usd_per_hour.empty()) {
      double lowest = t.zone_prices_usd_per_hour.begin()->second;
      for (const auto& entry : t.zone_prices_usd_per_hour) lowest = std::min(lowest, entry.second);
      t.price_usd_per_hour = lowest;
    }
  }
  return c;
}

/// A callback that records the zones it is called for and reports `cost[zone]` (infeasible when absent,
/// with shortfall `gap[zone]`).
struct FakePlanner {
  std::map<std::string, double> cost;
  std::map<std::string, double> gap;
  std::vector<std::string>* calls = nullptr;

  ZoneCandidate<std::string> operator()(const Catalog&, const std::string& zone) const {
    if (calls != nullptr) calls->push_back(zone);
    ZoneCandidate<std::string> c;
    c.result = "plan in " + (zone.empty() ? std::string("no zone") : zone);
    const auto it = cost.find(zone);
    c.feasible = it != cost.end();
    if (c.feasible) c.cost_usd = it->second;
    if (const auto g = gap.find(zone); g != gap.end()) c.shortfall = g->second;
    return c;
  }
};

}  // namespace

TEST_CASE("catalog_zones is the sorted union of the zones every type is priced in") {
  CHECK(catalog_zones(zoned_catalog()) == std::vector<std::string>{"us-east-1a", "us-east-1b", "us-east-1c"});
  CHECK(catalog_zones(presets::resnet110_catalog()).empty());
  CHECK(catalog_zone_names(presets::resnet110_catalog()) == "none");
}

TEST_CASE("catalog_in_zone prices each spot type at that zone's price and gives quota 0 to a type not sold there") {
  const Catalog all = zoned_catalog();
  const Catalog b = catalog_in_zone(all, "us-east-1b");
  REQUIRE(b.instance_types.size() == all.instance_types.size());
  const InstanceType& p3 = b.at("p3.2xlarge");
  CHECK(p3.price_usd_per_hour == doctest::Approx(0.918).epsilon(1e-12));
  CHECK(p3.zone_prices_usd_per_hour == std::map<std::string, double>{{"us-east-1b", 0.918}});
  CHECK(p3.quota == all.at("p3.2xlarge").quota);
  // g4dn.4xlarge has zone prices but none in us-east-1b: it cannot be bought there as spot.
  CHECK(b.at("g4dn.4xlarge").quota == 0);
  CHECK(b.at("g4dn.4xlarge").on_demand_price_usd_per_hour == all.at("g4dn.4xlarge").on_demand_price_usd_per_hour);
  // On-demand types and types without zone prices are unchanged.
  CHECK(b.at("g3.8xlarge").price_usd_per_hour == 2.28);
  CHECK(b.at("g3.8xlarge").quota == all.at("g3.8xlarge").quota);
  CHECK(b.at("p2.8xlarge").price_usd_per_hour == all.at("p2.8xlarge").price_usd_per_hour);
  const Catalog c = catalog_in_zone(all, "us-east-1c");
  CHECK(c.at("p3.2xlarge").price_usd_per_hour == 1.5);
  CHECK(c.at("g4dn.4xlarge").price_usd_per_hour == 0.5);
  CHECK(c.at("g4dn.4xlarge").quota == all.at("g4dn.4xlarge").quota);
  CHECK_NOTHROW(c.validate());
  CHECK_NOTHROW(b.validate());
}

TEST_CASE("catalog_in_zone refuses a zone the catalog does not price naming the zone and the known zones") {
  const std::string unknown = error_of([] { (void)catalog_in_zone(zoned_catalog(), "us-east-1z"); });
  CHECK(unknown.find("zone = \"us-east-1z\"") != std::string::npos);
  CHECK(unknown.find("known: us-east-1a, us-east-1b, us-east-1c") != std::string::npos);
  const std::string none = error_of([] { (void)catalog_in_zone(presets::resnet110_catalog(), "us-east-1a"); });
  CHECK(none.find("no per-zone prices") != std::string::npos);
}

TEST_CASE("choose_zone keeps the cheapest feasible zone and ties go to the first zone by name") {
  std::vector<std::string> calls;
  FakePlanner fake{{{"us-east-1a", 10}, {"us-east-1b", 7}, {"us-east-1c", 7}}, {}, &calls};
  const auto choice = choose_zone(zoned_catalog(), fake);
  CHECK(calls == std::vector<std::string>{"us-east-1a", "us-east-1b", "us-east-1c"});
  CHECK(choice.zone == "us-east-1b");
  CHECK(choice.feasible);
  CHECK_FALSE(choice.pinned);
  CHECK(choice.result == "plan in us-east-1b");
  REQUIRE(choice.zones.size() == 3);
  CHECK(choice.note == "us-east-1b, the cheapest of 3 zones (us-east-1a $10.00, us-east-1b $7.00, us-east-1c $7.00)");
}

TEST_CASE("choose_zone compares by the objective when the caller gives one instead of the cost") {
  auto fastest = [](const Catalog&, const std::string& zone) {
    ZoneCandidate<std::string> c;
    c.result = zone;
    c.feasible = true;
    c.cost_usd = zone == "us-east-1a" ? 1.0 : 5.0;
    c.objective = zone == "us-east-1c" ? 100.0 : 200.0;  // training time: 1c is the fastest
    return c;
  };
  CHECK(choose_zone(zoned_catalog(), fastest).zone == "us-east-1c");
}

TEST_CASE("choose_zone infeasible in every zone keeps the zone that came closest and says so") {
  FakePlanner fake{{}, {{"us-east-1a", 300}, {"us-east-1b", 50}, {"us-east-1c", 50}}};
  const auto choice = choose_zone(zoned_catalog(), fake);
  CHECK_FALSE(choice.feasible);
  CHECK(choice.zone == "us-east-1b");
  CHECK(choice.result == "plan in us-east-1b");
  CHECK(choice.note == "infeasible in every zone (3 zones): us-east-1b came closest");
  // A feasible zone beats every infeasible one, however expensive.
  FakePlanner one{{{"us-east-1c", 1e6}}, {{"us-east-1a", 0}, {"us-east-1b", 0}}};
  CHECK(choose_zone(zoned_catalog(), one).zone == "us-east-1c");
}

TEST_CASE("choose_zone with a pinned zone plans that zone alone and an unknown zone is refused") {
  std::vector<std::string> calls;
  FakePlanner fake{{{"us-east-1a", 10}, {"us-east-1b", 7}, {"us-east-1c", 5}}, {}, &calls};
  const auto choice = choose_zone(zoned_catalog(), fake, "us-east-1a");
  CHECK(calls == std::vector<std::string>{"us-east-1a"});
  CHECK(choice.zone == "us-east-1a");
  CHECK(choice.pinned);
  CHECK(choice.result == "plan in us-east-1a");
  CHECK(choice.note == "us-east-1a (pinned)");
  const std::string error = error_of([&] { (void)choose_zone(zoned_catalog(), fake, "eu-west-1a"); });
  CHECK(error.find("eu-west-1a") != std::string::npos);
  CHECK(error.find("known: us-east-1a") != std::string::npos);
}

TEST_CASE("choose_zone on a catalog without zone prices plans the catalog as it is with an empty zone") {
  std::vector<std::string> calls;
  FakePlanner fake{{{"", 3}}, {}, &calls};
  const auto choice = choose_zone(presets::resnet110_catalog(), fake);
  CHECK(calls == std::vector<std::string>{""});
  CHECK(choice.zone.empty());
  CHECK(choice.feasible);
  CHECK(choice.zones.empty());
  CHECK(choice.result == "plan in no zone");
}

TEST_CASE("planning in every zone gives the exact plan of the cheapest zone at that zone's prices") {
  const Workload workload = presets::resnet110_workload();
  const Catalog catalog = zoned_catalog();
  Slo slo;
  slo.target_loss = 0.8;
  slo.deadline_s = 2400;
  auto plan_in = [&](const Catalog& c, const std::string&) {
    const PlanResult r = plan_exact(PerformanceModel(workload, c), slo);
    ZoneCandidate<PlanResult> z;
    z.feasible = r.has_plan();
    if (z.feasible) z.cost_usd = r.prediction.cost_usd;
    z.result = r;
    return z;
  };
  const auto choice = choose_zone(catalog, plan_in);
  REQUIRE(choice.feasible);
  double cheapest = 1e300;
  std::string cheapest_zone;
  for (const std::string& zone : catalog_zones(catalog)) {
    const PlanResult r = plan_exact(PerformanceModel(workload, catalog_in_zone(catalog, zone)), slo);
    REQUIRE(r.has_plan());
    if (r.prediction.cost_usd < cheapest) cheapest = r.prediction.cost_usd, cheapest_zone = zone;
    // A zone's plan never uses a type that zone does not sell.
    if (zone == "us-east-1b") CHECK(r.cluster.count("g4dn.4xlarge") == 0);
  }
  CHECK(choice.zone == cheapest_zone);
  CHECK(choice.result.prediction.cost_usd == doctest::Approx(cheapest).epsilon(1e-12));
  // The lowest-price catalog (zones mixed) is never dearer than the best single zone.
  CHECK(plan_exact(PerformanceModel(workload, catalog), slo).prediction.cost_usd <= cheapest + 1e-9);
}

TEST_CASE("require_zone_name accepts AWS zone names and refuses empty control-character and over-long names") {
  CHECK_NOTHROW(require_zone_name("f", "zone", "us-east-1a"));
  CHECK_NOTHROW(require_zone_name("f", "zone", "us-west-2-lax-1a"));
  CHECK(error_of([] { require_zone_name("f", "zone", ""); }).find("f: zone = \"\"") != std::string::npos);
  CHECK(error_of([] { require_zone_name("f", "zone", "us-east-1a\n"); }) != "(accepted)");
  CHECK(error_of([] { require_zone_name("f", "zone", std::string(101, 'a')); }).find("1 to 100") != std::string::npos);
  CHECK_NOTHROW(require_zone_name("f", "zone", std::string(100, 'a')));
}
