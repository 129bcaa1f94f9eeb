// SPDX-License-Identifier: MIT
// Plans across regions (region_choice.hpp): 20 regions × 4 Availability Zones × 5 types, 400 pools, the
// exact planner in every zone (each zone's catalog and model built as `spotdnn plan` builds them), with and
// without a data-transfer cost per region. The issue asks for under 50 ms.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/planner.hpp>
#include <spotdnn/region_choice.hpp>

#include "planner_problems.hpp"

using namespace spotdnn;

namespace {

constexpr double kTargetLoss = 0.8;

/// `regions` regions of the same 5 synthetic types (quota 10), each with `zones` zones whose spot prices
/// are the type's price × 0.7–1.3 (seeded), and a parameter server at $0.15–$0.25/h.
struct RegionsCase {
  Workload workload;
  std::vector<Catalog> catalogs;
  Slo slo;
};

RegionsCase regions_case(int regions, int zones, int types, std::uint32_t seed) {
  const bench::SyntheticProblem p = bench::synthetic_problem(types, 10, seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> factor(0.7, 1.3);
  RegionsCase c;
  c.workload = p.workload;
  for (int r = 0; r < regions; ++r) {
    Catalog catalog = p.catalog;
    catalog.region = "region-" + std::to_string(10 + r);
    catalog.parameter_server.price_usd_per_hour = 0.15 + 0.1 * factor(rng) - 0.07;
    for (InstanceType& type : catalog.instance_types) {
      double lowest = 1e300;
      for (int z = 0; z < zones; ++z) {
        const double price = type.price_usd_per_hour * factor(rng);
        type.zone_prices_usd_per_hour[catalog.region + static_cast<char>('a' + z)] = price;
        lowest = std::min(lowest, price);
      }
      type.price_usd_per_hour = lowest;
    }
    c.catalogs.push_back(std::move(catalog));
  }
  PlanOptions fastest;
  fastest.budget_usd = 1e12;
  const PlanResult f = plan_exact(PerformanceModel(p.workload, p.catalog), {kTargetLoss}, fastest);
  c.slo = {kTargetLoss, f.prediction.training_time_s * 1.5};
  return c;
}

RegionChoice<PlanResult> plan_across(const RegionsCase& c, bool transfer) {
  return choose_region(
      c.catalogs,
      [&](const Catalog& seen, const std::string&, double) {
        ZoneCandidate<PlanResult> z;
        z.result = plan_exact(PerformanceModel(c.workload, seen), c.slo, PlanOptions{});
        z.feasible = z.result.has_plan();
        if (z.feasible) z.cost_usd = z.result.prediction.cost_usd;
        return z;
      },
      {}, {}, transfer ? std::function<double(const Catalog&)>([](const Catalog& k) { return k.region == "region-10" ? 0.0 : 2.0; })
                       : std::function<double(const Catalog&)>());
}

void BM_PlanAcrossRegions(benchmark::State& state) {
  const RegionsCase c = regions_case(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 5, 1);
  for (auto _ : state) benchmark::DoNotOptimize(plan_across(c, false));
  state.counters["pools"] = static_cast<double>(state.range(0) * state.range(1) * 5);
}
BENCHMARK(BM_PlanAcrossRegions)->Args({20, 4})->Args({3, 4})->Unit(benchmark::kMillisecond);

void BM_PlanAcrossRegions_Transfer(benchmark::State& state) {
  const RegionsCase c = regions_case(20, 4, 5, 1);
  for (auto _ : state) benchmark::DoNotOptimize(plan_across(c, true));
}
BENCHMARK(BM_PlanAcrossRegions_Transfer)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
