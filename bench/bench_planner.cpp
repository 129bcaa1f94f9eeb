// SPDX-License-Identifier: MIT
// Exact planner vs brute force vs the paper's sliding window, at the paper's largest setting
// (7 types × quota 10 = 70 instances) and on growing synthetic catalogs.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
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
  static std::map<std::pair<int, int>, Case> cache;
  const auto key = std::make_pair(types, quota);
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
    ->ArgsProduct({{5, 10, 20}, {8, 16, 32}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

void BM_SlidingWindow_Growing(benchmark::State& state) {
  const Case& c = case_for(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) benchmark::DoNotOptimize(plan_sliding_window(c.model, c.slo));
  state.SetComplexityN(state.range(0) * state.range(1));
}
BENCHMARK(BM_SlidingWindow_Growing)
    ->ArgNames({"types", "quota"})
    ->ArgsProduct({{5, 10, 20}, {8, 16, 32}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace

BENCHMARK_MAIN();
