// SPDX-License-Identifier: MIT
// The serverless planners on the reference profile (docs/model.md, "Serverless reference figures"): the
// exact branch and bound on Lambda's 1 MB lattice (10,113 sizes) with W up to 256 (--batch 4), against
// exhaustive enumeration on the same lattice and on the default 64 MB grid (W ≤ 32), FasDL's greedy search,
// and how the exact search scales with the number of workers. Counters: estimates evaluated, (W, K) pairs
// scanned and pruned. The iteration count is rounded up (the default), as `spotdnn serverless plan` does.
#include <benchmark/benchmark.h>

#include <optional>

#include <spotdnn/serverless/exact_search.hpp>
#include <spotdnn/serverless/exhaustive_search.hpp>
#include <spotdnn/serverless/fasdl_search.hpp>

using namespace spotdnn::serverless;

namespace {

ServerlessModel reference_model(std::optional<int> batch = std::nullopt, int max_global_batch = 1024) {
  ServerlessProfile p;
  p.name = "reference";
  p.model_size_mb = 44.7;
  p.samples_per_epoch = 50000;
  p.a = 60;
  p.b = 8;
  p.m = 200;
  p.k1 = 20;
  p.k2 = -0.8;
  ServerlessWork work;
  work.epochs = 10;
  work.batch = batch;
  work.max_global_batch = max_global_batch;
  return ServerlessModel(p, work);
}

ServerlessPlanOptions grid(double deadline_s, int step_mb) {
  ServerlessPlanOptions o;
  o.deadline_s = deadline_s;
  o.memory_step_mb = step_mb;
  return o;
}

void count(benchmark::State& state, const ServerlessPlanResult& r) {
  state.counters["evaluated"] = double(r.stats.configurations_evaluated);
  state.counters["pairs_scanned"] = double(r.stats.worker_aggregator_pairs);
  state.counters["pairs_pruned"] = double(r.stats.pairs_pruned);
  state.counters["optimal"] = r.status == spotdnn::Status::optimal ? 1 : 0;
}

/// The target: the 1 MB lattice, W ≤ 256. 1000 s is infeasible (the fastest takes 1434 s; 1431 s with
/// FasDL's rounding down of the iteration count).
void BM_Exact_Lattice1MB_W256(benchmark::State& state) {
  const ServerlessModel model = reference_model(4);
  const ServerlessPlanOptions o = grid(double(state.range(0)), 1);
  ServerlessPlanResult r;
  for (auto _ : state) benchmark::DoNotOptimize(r = plan_serverless_exact(model, o));
  count(state, r);
}
BENCHMARK(BM_Exact_Lattice1MB_W256)->ArgNames({"deadline_s"})->Arg(1000)->Arg(1500)->Arg(3000)->Arg(6000)->Arg(12000)
    ->Unit(benchmark::kMillisecond);

/// The same question by enumeration: 332,677,248 estimates.
void BM_Exhaustive_Lattice1MB_W256(benchmark::State& state) {
  const ServerlessModel model = reference_model(4);
  const ServerlessPlanOptions o = grid(double(state.range(0)), 1);
  ServerlessPlanResult r;
  for (auto _ : state) benchmark::DoNotOptimize(r = plan_serverless_exhaustive(model, o));
  count(state, r);
}
BENCHMARK(BM_Exhaustive_Lattice1MB_W256)->ArgNames({"deadline_s"})->Arg(3000)->Unit(benchmark::kMillisecond)->Iterations(1);

/// The default 64 MB grid, W ≤ 32 (B = 32 from the profile).
void BM_Exact_Grid64MB(benchmark::State& state) {
  const ServerlessModel model = reference_model();
  const ServerlessPlanOptions o = grid(double(state.range(0)), 64);
  ServerlessPlanResult r;
  for (auto _ : state) benchmark::DoNotOptimize(r = plan_serverless_exact(model, o));
  count(state, r);
}
BENCHMARK(BM_Exact_Grid64MB)->ArgNames({"deadline_s"})->Arg(1000)->Arg(3000)->Arg(12000)->Unit(benchmark::kMillisecond);

void BM_Exhaustive_Grid64MB(benchmark::State& state) {
  const ServerlessModel model = reference_model();
  const ServerlessPlanOptions o = grid(double(state.range(0)), 64);
  ServerlessPlanResult r;
  for (auto _ : state) benchmark::DoNotOptimize(r = plan_serverless_exhaustive(model, o));
  count(state, r);
}
BENCHMARK(BM_Exhaustive_Grid64MB)->ArgNames({"deadline_s"})->Arg(1000)->Arg(3000)->Arg(12000)->Unit(benchmark::kMillisecond);

void BM_FasDL_Grid64MB(benchmark::State& state) {
  const ServerlessModel model = reference_model();
  const ServerlessPlanOptions o = grid(double(state.range(0)), 64);
  ServerlessPlanResult r;
  for (auto _ : state) benchmark::DoNotOptimize(r = plan_serverless_fasdl(model, o));
  state.counters["evaluated"] = double(r.stats.configurations_evaluated);
  state.counters["feasible"] = r.has_plan() ? 1 : 0;
}
BENCHMARK(BM_FasDL_Grid64MB)->ArgNames({"deadline_s"})->Arg(3000)->Arg(6000)->Unit(benchmark::kMillisecond);

/// FasDL's greedy search on the 1 MB lattice with W ≤ 256 (it scans memory upwards for every W).
void BM_FasDL_Lattice1MB_W256(benchmark::State& state) {
  const ServerlessModel model = reference_model(4);
  const ServerlessPlanOptions o = grid(double(state.range(0)), 1);
  ServerlessPlanResult r;
  for (auto _ : state) benchmark::DoNotOptimize(r = plan_serverless_fasdl(model, o));
  state.counters["evaluated"] = double(r.stats.configurations_evaluated);
  state.counters["feasible"] = r.has_plan() ? 1 : 0;
}
BENCHMARK(BM_FasDL_Lattice1MB_W256)->ArgNames({"deadline_s"})->Arg(3000)->Arg(6000)->Unit(benchmark::kMillisecond);

/// The exact search on the 1 MB lattice as ⌊Bg/B⌋ grows (B = 1, Bg = W), deadline 3000 s: the tail bound
/// per worker count keeps it from listing W²/2 pairs.
void BM_Exact_Lattice1MB_Workers(benchmark::State& state) {
  const int workers = int(state.range(0));
  const ServerlessModel model = reference_model(1, workers);
  const ServerlessPlanOptions o = grid(3000, 1);
  ServerlessPlanResult r;
  for (auto _ : state) benchmark::DoNotOptimize(r = plan_serverless_exact(model, o));
  count(state, r);
  state.SetComplexityN(workers);
}
BENCHMARK(BM_Exact_Lattice1MB_Workers)->ArgNames({"max_workers"})->RangeMultiplier(4)->Range(64, 65536)->Complexity()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
