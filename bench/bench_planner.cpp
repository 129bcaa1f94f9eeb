// SPDX-License-Identifier: MIT
// Exact planner vs brute force vs the paper's sliding window, at the paper's largest setting
// (7 types × quota 10 = 70 instances) and on growing synthetic catalogs.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

#include <spotdnn/planner.hpp>

#include "planner_problems.hpp"

using namespace spotdnn;

namespace {

constexpr double kTargetLoss = 0.8;
constexpr double kDeadlineOverFastest = 1.5;  // the SLO: 1.5× the fastest achievable time

/// A model and its SLO (deadline = 1.5 × the fastest time under the quotas), built once per size.
struct Case {
  PerformanceModel model;
  Slo slo;
};

const Case& case_for(int types, int quota, std::uint32_t seed = 1) {
  static std::map<std::tuple<int, int, std::uint32_t>, Case> cache;
  const auto key = std::make_tuple(types, quota, seed);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const bench::SyntheticProblem p = bench::synthetic_problem(types, quota, seed);
    PerformanceModel model(p.workload, p.catalog);
    PlanOptions fastest;
    fastest.budget_usd = 1e12;
    const PlanResult f = plan_exact(model, {kTargetLoss}, fastest);
    Slo slo{kTargetLoss, f.prediction.training_time_s * kDeadlineOverFastest};
    it = cache.emplace(key, Case{std::move(model), slo}).first;
  }
  return it->second;
}

void BM_Exact_Paper7x10(benchmark::State& state) {
  const Case& c = case_for(7, 10);
  for (auto _ : state) benchmark::DoNotOptimize(plan_exact(c.model, c.slo));
}
BENCHMARK(BM_Exact_Paper7x10)->Unit(benchmark::kMillisecond);

void BM_BruteForce_Paper7x10(benchmark::State& state) {
  const Case& c = case_for(7, 10);
  for (auto _ : state) benchmark::DoNotOptimize(plan_brute_force(c.model, c.slo));
}
BENCHMARK(BM_BruteForce_Paper7x10)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_SlidingWindow_Paper7x10(benchmark::State& state) {
  const Case& c = case_for(7, 10);
  for (auto _ : state) benchmark::DoNotOptimize(plan_sliding_window(c.model, c.slo));
}
BENCHMARK(BM_SlidingWindow_Paper7x10)->Unit(benchmark::kMillisecond);

void BM_Exact_Preset(benchmark::State& state) {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  for (auto _ : state) benchmark::DoNotOptimize(plan_exact(model, {0.8, 2400}));
}
BENCHMARK(BM_Exact_Preset)->Unit(benchmark::kMillisecond);

void BM_Exact_Growing(benchmark::State& state) {
  const Case& c = case_for(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) benchmark::DoNotOptimize(plan_exact(c.model, c.slo));
  state.SetComplexityN(state.range(0) * state.range(1));
}
BENCHMARK(BM_Exact_Growing)
    ->ArgNames({"types", "quota"})
    ->ArgsProduct({{5, 10, 20, 30, 100}, {8, 16, 32, 64}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

/// The scale targets, on several seeded catalogs each: 30 types × quota 32 (<= 50 ms) and
/// 100 types × quota 64 (<= 1 s), the cheapest plan for the 1.5×-fastest deadline (seed loss form).
void BM_Exact_Target(benchmark::State& state) {
  const Case& c = case_for(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                           static_cast<std::uint32_t>(state.range(2)));
  PlanSearchStats stats;
  for (auto _ : state) {
    const PlanResult r = plan_exact(c.model, c.slo);
    stats = r.stats;
    benchmark::DoNotOptimize(r);
  }
  state.counters["nodes"] = double(stats.nodes);
  state.counters["totals"] = double(stats.worker_totals);
  state.SetComplexityN(state.range(0) * state.range(1));
}
BENCHMARK(BM_Exact_Target)
    ->ArgNames({"types", "quota", "seed"})
    ->ArgsProduct({{30}, {32}, {1, 2, 3, 4, 5}})
    ->ArgsProduct({{100}, {64}, {1, 2, 3, 4, 5}})
    ->Unit(benchmark::kMillisecond);

void BM_SlidingWindow_Growing(benchmark::State& state) {
  const Case& c = case_for(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) benchmark::DoNotOptimize(plan_sliding_window(c.model, c.slo));
  state.SetComplexityN(state.range(0) * state.range(1));
}
BENCHMARK(BM_SlidingWindow_Growing)
    ->ArgNames({"types", "quota"})
    ->ArgsProduct({{5, 10, 20, 30}, {8, 16, 32}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace

BENCHMARK_MAIN();
