// SPDX-License-Identifier: MIT
// Plans across regions in the library (region_choice.hpp): choose_region plans every zone of every region
// and keeps what enumerating them all by brute force keeps, ties go by region then zone name, pins and
// their errors, and a per-region extra cost (reading the dataset from another region) changes the winner.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/planner.hpp>
#include <spotdnn/region_choice.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;
using spotdnn::test::error_of;

namespace {

/// The preset catalog renamed to `region`, with p3.2xlarge priced per zone as `zone_prices` gives.
Catalog region_catalog(const std::string& region, const std::map<std::string, double>& zone_prices) {
  Catalog c = presets::resnet110_catalog();
  c.region = region;
  for (InstanceType& t : c.instance_types) {
    if (t.name == "p3.2xlarge" && !zone_prices.empty()) {
      t.zone_prices_usd_per_hour = zone_prices;
      double lowest = zone_prices.begin()->second;
      for (const auto& entry : zone_prices) lowest = std::min(lowest, entry.second);
      t.price_usd_per_hour = lowest;
    }
  }
  return c;
}

/// A callback that reports `cost["region/zone"]` (infeasible when absent, with shortfall
/// `gap["region/zone"]`) and records what it was called for.
struct FakePlanner {
  std::map<std::string, double> cost;
  std::map<std::string, double> gap;
  std::vector<std::string>* calls = nullptr;

  ZoneCandidate<std::string> operator()(const Catalog& seen, const std::string& zone, double extra_cost_usd) const {
    const std::string key = seen.region + "/" + zone;
    if (calls != nullptr) calls->push_back(key + " +" + std::to_string(extra_cost_usd));
    ZoneCandidate<std::string> c;
    c.result = "plan in " + key;
    const auto it = cost.find(key);
    c.feasible = it != cost.end();
    if (c.feasible) c.cost_usd = it->second;
    if (const auto g = gap.find(key); g != gap.end()) c.shortfall = g->second;
    return c;
  }
};

/// Three regions, given out of name order: us-west-2 (2 zones), us-east-1 (2 zones), eu-west-1 (no zone prices).
std::vector<Catalog> three_regions() {
  return {region_catalog("us-west-2", {{"us-west-2a", 1.0}, {"us-west-2b", 0.9}}),
          region_catalog("us-east-1", {{"us-east-1a", 1.1}, {"us-east-1b", 0.95}}), region_catalog("eu-west-1", {})};
}

/// One seeded problem: 3 or 4 regions of 0 (region-wide prices only), 2 or 3 zones, 3 or 4 of the preset's
/// types with random spot prices per zone (a type may be missing from a zone), quotas 1 to 3, an extra
/// cost per region of 0 to 2 USD, and a deadline that some clusters meet and some do not.
struct RegionProblem {
  Workload workload;
  std::vector<Catalog> catalogs;
  std::map<std::string, double> extra_usd;
  Slo slo;
};

RegionProblem random_region_problem(std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](double low, double high) { return std::uniform_real_distribution<double>(low, high)(rng); };
  auto whole = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  RegionProblem p;
  p.workload = presets::resnet110_workload();
  const int regions = whole(3, 4);
  const int types = whole(3, 4);
  const std::vector<std::string> names = {"ap-south-1", "eu-west-1", "us-east-1", "us-west-2"};
  std::vector<int> order = {0, 1, 2, 3};
  std::shuffle(order.begin(), order.end(), rng);
  for (int r = 0; r < regions; ++r) {
    const std::string region = names[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])];
    Catalog c = presets::resnet110_catalog();
    c.region = region;
    c.instance_types.resize(static_cast<std::size_t>(types));
    c.parameter_server.price_usd_per_hour = uniform(0.1, 0.5);
    const int zones = whole(0, 3) == 0 ? 0 : whole(2, 3);
    for (InstanceType& t : c.instance_types) {
      t.quota = whole(1, 3);
      t.price_usd_per_hour = uniform(0.2, 3.0);
      if (zones == 0) continue;
      for (int z = 0; z < zones; ++z) {
        if (whole(0, 4) == 0) continue;  // not sold in this zone
        t.zone_prices_usd_per_hour[region + static_cast<char>('a' + z)] = uniform(0.2, 3.0);
      }
      if (t.zone_prices_usd_per_hour.empty()) t.zone_prices_usd_per_hour[region + "a"] = uniform(0.2, 3.0);
      double lowest = t.zone_prices_usd_per_hour.begin()->second;
      for (const auto& entry : t.zone_prices_usd_per_hour) lowest = std::min(lowest, entry.second);
      t.price_usd_per_hour = lowest;
    }
    p.extra_usd[region] = whole(0, 2) == 0 ? 0.0 : uniform(0.0, 2.0);
    // Some regions are priced as the first one exactly (zones renamed): ties must go to the first by name.
    if (r > 0 && whole(0, 3) == 0) {
      c = p.catalogs.front();
      for (InstanceType& t : c.instance_types) {
        std::map<std::string, double> renamed;
        for (const auto& [zone, price] : t.zone_prices_usd_per_hour) renamed[region + zone.back()] = price;
        t.zone_prices_usd_per_hour = renamed;
      }
      c.region = region;
      p.extra_usd[region] = p.extra_usd.at(p.catalogs.front().region);
    }
    p.catalogs.push_back(std::move(c));
  }
  p.slo.target_loss = 0.8;
  p.slo.deadline_s = uniform(1500, 9000);
  return p;
}

/// The best (region, zone) by brute force over every zone of every region: cost + extra, ties by region
/// then zone name; infeasible everywhere: the smallest shortfall (fastest time minus the deadline).
struct Enumerated {
  bool feasible = false;
  std::string region;
  std::string zone;
  double total_usd = std::numeric_limits<double>::infinity();
  double shortfall = std::numeric_limits<double>::infinity();
};

Enumerated enumerate(const RegionProblem& p, const PlanOptions& options) {
  std::vector<const Catalog*> sorted;
  for (const Catalog& c : p.catalogs) sorted.push_back(&c);
  std::sort(sorted.begin(), sorted.end(), [](const Catalog* a, const Catalog* b) { return a->region < b->region; });
  Enumerated best;
  Enumerated closest;
  for (const Catalog* c : sorted) {
    std::vector<std::string> zones = catalog_zones(*c);
    if (zones.empty()) zones.push_back("");
    for (const std::string& zone : zones) {
      const PerformanceModel model(p.workload, zone.empty() ? *c : catalog_in_zone(*c, zone));
      const PlanResult r = plan_brute_force(model, p.slo, options);
      if (r.has_plan()) {
        const double total = r.prediction.cost_usd + p.extra_usd.at(c->region);
        if (!best.feasible || total < best.total_usd) best = {true, c->region, zone, total, 0};
      } else if (r.fastest) {
        const double gap = r.fastest->training_time_s - p.slo.deadline_s;
        if (closest.region.empty() || gap < closest.shortfall) closest = {false, c->region, zone, 0, gap};
      } else if (closest.region.empty()) {
        closest = {false, c->region, zone, 0, std::numeric_limits<double>::infinity()};
      }
    }
  }
  return best.feasible ? best : closest;
}

/// choose_region with plan_exact in every zone, the extra cost from the problem.
RegionChoice<PlanResult> choose_exact(const RegionProblem& p, const PlanOptions& options, std::string_view region = {},
                                      std::string_view zone = {}) {
  return choose_region(
      p.catalogs,
      [&](const Catalog& seen, const std::string&, double) {
        ZoneCandidate<PlanResult> c;
        c.result = plan_exact(PerformanceModel(p.workload, seen), p.slo, options);
        c.feasible = c.result.has_plan();
        if (c.feasible) c.cost_usd = c.result.prediction.cost_usd;
        if (!c.feasible && c.result.fastest) c.shortfall = c.result.fastest->training_time_s - p.slo.deadline_s;
        return c;
      },
      region, zone, [&](const Catalog& c) { return p.extra_usd.at(c.region); });
}

}  // namespace

TEST_CASE("choose_region keeps what brute force over every region and zone keeps, on 40 seeded problems") {
  PlanOptions options;
  int feasible = 0;
  int infeasible = 0;
  int regions_without_zones = 0;
  int won_by_extra = 0;
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    const RegionProblem p = random_region_problem(seed);
    for (const Catalog& c : p.catalogs) regions_without_zones += catalog_zones(c).empty() ? 1 : 0;
    const Enumerated expected = enumerate(p, options);
    const RegionChoice<PlanResult> got = choose_exact(p, options);
    REQUIRE(got.feasible == expected.feasible);
    CHECK(got.region == expected.region);
    CHECK(got.zone == expected.zone);
    CHECK(got.catalog_index < p.catalogs.size());
    CHECK(p.catalogs[got.catalog_index].region == got.region);
    // Every zone of every region was planned, in region then zone order.
    std::size_t zones = 0;
    for (const Catalog& c : p.catalogs) zones += std::max<std::size_t>(1, catalog_zones(c).size());
    CHECK(got.tried.size() == zones);
    for (std::size_t i = 1; i < got.tried.size(); ++i) {
      CHECK(std::make_pair(got.tried[i - 1].region, got.tried[i - 1].zone) < std::make_pair(got.tried[i].region, got.tried[i].zone));
    }
    if (expected.feasible) {
      ++feasible;
      // Same cost to 1e-9 USD (absolute; costs are a few USD).
      CHECK(std::abs(got.result.prediction.cost_usd + got.extra_cost_usd - expected.total_usd) <= 1e-9);
      CHECK(got.extra_cost_usd == p.extra_usd.at(got.region));
      // Would the cheapest plan without the extra cost be somewhere else?
      RegionProblem free = p;
      for (auto& entry : free.extra_usd) entry.second = 0;
      const Enumerated plain = enumerate(free, options);
      won_by_extra += (plain.region != expected.region || plain.zone != expected.zone) ? 1 : 0;
    } else {
      ++infeasible;
      CHECK(got.note.find("came closest") != std::string::npos);
    }
  }
  // The generator covers both outcomes, regions without zone prices, and extra costs that move the winner.
  CHECK(feasible >= 10);
  CHECK(infeasible >= 2);
  CHECK(regions_without_zones >= 5);
  CHECK(won_by_extra >= 2);
}

TEST_CASE("choose_region breaks equal costs by region name, then zone name, whatever the catalogs' order") {
  FakePlanner planner;
  planner.cost = {{"us-west-2/us-west-2a", 3}, {"us-west-2/us-west-2b", 2}, {"us-east-1/us-east-1b", 2},
                  {"us-east-1/us-east-1a", 2}, {"eu-west-1/", 2.5}};
  const RegionChoice<std::string> choice = choose_region(three_regions(), planner);
  CHECK(choice.feasible);
  CHECK(choice.region == "us-east-1");
  CHECK(choice.zone == "us-east-1a");
  CHECK(choice.catalog_index == 1);
  CHECK(choice.result == "plan in us-east-1/us-east-1a");
  CHECK(choice.tried.size() == 5);
  CHECK(choice.tried.front().label() == "eu-west-1");
  CHECK(choice.note ==
        "us-east-1/us-east-1a, the cheapest of 5 zones in 3 regions (us-east-1/us-east-1a $2.00, us-east-1/us-east-1b $2.00, "
        "us-west-2/us-west-2b $2.00, eu-west-1 $2.50, us-west-2/us-west-2a $3.00)");
  CHECK(choice.zone_note.find("us-east-1a, the cheapest of 2 zones") == 0);
  // A region without zone prices can win; its zone is empty.
  planner.cost["eu-west-1/"] = 1.5;
  const RegionChoice<std::string> eu = choose_region(three_regions(), planner);
  CHECK(eu.region == "eu-west-1");
  CHECK(eu.zone.empty());
  CHECK(eu.zone_note == "the catalog has no per-zone prices");
}

TEST_CASE("an extra cost per region is added before comparing, and passed to the planner") {
  FakePlanner planner;
  std::vector<std::string> calls;
  planner.calls = &calls;
  planner.cost = {{"us-west-2/us-west-2a", 3}, {"us-west-2/us-west-2b", 2}, {"us-east-1/us-east-1a", 2.4},
                  {"us-east-1/us-east-1b", 2.6}, {"eu-west-1/", 2.5}};
  CHECK(choose_region(three_regions(), planner).region == "us-west-2");
  // The dataset lives in us-east-1: reading it elsewhere costs 0.5 USD.
  const auto transfer = [](const Catalog& c) { return c.region == "us-east-1" ? 0.0 : 0.5; };
  calls.clear();
  const RegionChoice<std::string> choice = choose_region(three_regions(), planner, {}, {}, transfer);
  CHECK(choice.region == "us-east-1");
  CHECK(choice.zone == "us-east-1a");
  CHECK(choice.extra_cost_usd == 0);
  CHECK(std::find(calls.begin(), calls.end(), "us-west-2/us-west-2b +0.500000") != calls.end());
  CHECK(std::find(calls.begin(), calls.end(), "us-east-1/us-east-1a +0.000000") != calls.end());
  for (const RegionZoneTried& t : choice.tried) CHECK(t.objective == doctest::Approx(t.cost_usd + t.extra_cost_usd).epsilon(1e-15));
  CHECK(choice.note.find("us-west-2/us-west-2b $2.00 + $0.50") != std::string::npos);
  // An extra cost that is not a finite cost >= 0 is refused, naming the region.
  const std::string bad = error_of([&] { (void)choose_region(three_regions(), planner, {}, {}, [](const Catalog&) { return -1.0; }); });
  CHECK(bad.find("extra_cost_usd(eu-west-1)") != std::string::npos);
}

TEST_CASE("a caller's own objective (a budget plan's training time) is compared instead of the cost") {
  const auto planner = [](const Catalog& seen, const std::string& zone, double extra) {
    ZoneCandidate<std::string> c;
    c.result = seen.region + "/" + zone;
    c.feasible = true;
    c.cost_usd = 1;
    c.objective = seen.region == "us-west-2" ? 100.0 + extra : 200.0;  // the training time, s
    return c;
  };
  const RegionChoice<std::string> choice = choose_region(three_regions(), planner);
  CHECK(choice.region == "us-west-2");
  CHECK(choice.zone == "us-west-2a");
}

TEST_CASE("infeasible in every region keeps the one that came closest") {
  FakePlanner planner;
  planner.gap = {{"us-west-2/us-west-2a", 50}, {"us-west-2/us-west-2b", 20}, {"us-east-1/us-east-1a", 20}, {"eu-west-1/", 30}};
  const RegionChoice<std::string> choice = choose_region(three_regions(), planner);
  CHECK_FALSE(choice.feasible);
  CHECK(choice.region == "us-east-1");
  CHECK(choice.zone == "us-east-1a");
  CHECK(choice.note == "infeasible in every zone (5 zones in 3 regions): us-east-1/us-east-1a came closest");
}

TEST_CASE("pinning a region plans there alone, and pinning a zone plans it in the region that prices it") {
  FakePlanner planner;
  std::vector<std::string> calls;
  planner.calls = &calls;
  planner.cost = {{"us-west-2/us-west-2a", 3}, {"us-west-2/us-west-2b", 2}, {"us-east-1/us-east-1a", 1},
                  {"us-east-1/us-east-1b", 1}, {"eu-west-1/", 0.5}};
  const RegionChoice<std::string> west = choose_region(three_regions(), planner, "us-west-2");
  CHECK(west.pinned_region);
  CHECK(west.region == "us-west-2");
  CHECK(west.zone == "us-west-2b");
  CHECK(calls.size() == 2);
  CHECK(west.note == "us-west-2/us-west-2b, pinned region, the cheapest of 2 zones in 1 region (us-west-2/us-west-2b $2.00, "
                     "us-west-2/us-west-2a $3.00)");
  calls.clear();
  const RegionChoice<std::string> zone = choose_region(three_regions(), planner, {}, "us-west-2a");
  CHECK(zone.pinned_zone);
  CHECK(zone.region == "us-west-2");
  CHECK(zone.zone == "us-west-2a");
  CHECK(calls == std::vector<std::string>{"us-west-2/us-west-2a +0.000000"});
  CHECK(zone.note == "us-west-2/us-west-2a (pinned zone)");
  const RegionChoice<std::string> eu = choose_region(three_regions(), planner, "eu-west-1");
  CHECK(eu.region == "eu-west-1");
  CHECK(eu.note == "eu-west-1 (pinned region)");
  const RegionChoice<std::string> both = choose_region(three_regions(), planner, "us-east-1", "us-east-1b");
  CHECK(both.zone == "us-east-1b");
}

TEST_CASE("choose_region refuses duplicate regions, unknown pins and no catalog, naming what is known") {
  FakePlanner planner;
  std::vector<Catalog> twice = three_regions();
  twice.push_back(region_catalog("us-east-1", {}));
  const std::string duplicate = error_of([&] { (void)choose_region(twice, planner); });
  CHECK(duplicate.find("\"us-east-1\"") != std::string::npos);
  CHECK(duplicate.find("one catalog per region") != std::string::npos);
  const std::string region = error_of([&] { (void)choose_region(three_regions(), planner, "ap-south-1"); });
  CHECK(region.find("\"ap-south-1\"") != std::string::npos);
  CHECK(region.find("known: eu-west-1, us-east-1, us-west-2") != std::string::npos);
  const std::string zone = error_of([&] { (void)choose_region(three_regions(), planner, {}, "us-east-1c"); });
  CHECK(zone.find("\"us-east-1c\"") != std::string::npos);
  CHECK(zone.find("eu-west-1: none; us-east-1: us-east-1a, us-east-1b; us-west-2: us-west-2a, us-west-2b") != std::string::npos);
  // A zone of another region than the one pinned.
  const std::string elsewhere = error_of([&] { (void)choose_region(three_regions(), planner, "us-east-1", "us-west-2a"); });
  CHECK(elsewhere.find("us-east-1: us-east-1a, us-east-1b") != std::string::npos);
  CHECK(elsewhere.find("us-west-2:") == std::string::npos);
  const std::string none = error_of([&] { (void)choose_region(std::vector<Catalog>{}, planner); });
  CHECK(none.find("catalogs") != std::string::npos);
}

TEST_CASE("the note of 80 zones lists the 5 cheapest and counts the rest") {
  std::vector<Catalog> catalogs;
  FakePlanner planner;
  for (int r = 0; r < 20; ++r) {
    const std::string region = "r" + std::to_string(100 + r);
    std::map<std::string, double> zones;
    for (int z = 0; z < 4; ++z) {
      const std::string name = region + static_cast<char>('a' + z);
      zones[name] = 1;
      if ((r + z) % 7 != 0) planner.cost[region + "/" + name] = 10 + r + 0.25 * z;
    }
    catalogs.push_back(region_catalog(region, zones));
  }
  const RegionChoice<std::string> choice = choose_region(catalogs, planner);
  CHECK(choice.region == "r100");
  CHECK(choice.zone == "r100b");
  CHECK(choice.tried.size() == 80);
  const std::size_t infeasible = 80 - planner.cost.size();
  CHECK(choice.note == "r100/r100b, the cheapest of 80 zones in 20 regions (r100/r100b $10.25, r100/r100c $10.50, r100/r100d "
                       "$10.75, r101/r101a $11.00, r101/r101b $11.25; 75 more (" + std::to_string(infeasible) + " infeasible))");
}
