// SPDX-License-Identifier: MIT
// Trace replay: a job run from every start tick of a 45-day trace of 195 s ticks (19,938 windows, the
// length of the longest real availability series) must take at most 1 s; it takes milliseconds. The replan and
// guard policies call the exact re-plan at every loss of capacity: about 6 us each (BM_ReplayPolicy: 156,000
// re-plans in 1 s on a flappy pair of traces).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <vector>

#include <spotdnn/presets.hpp>
#include <spotdnn/revocation/replay.hpp>

namespace {

using namespace spotdnn;

const PerformanceModel& preset_model() {
  static const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  return model;
}

constexpr double kTickS = 195;
constexpr std::size_t kTicks = 45 * 86400 / 195;  // 19,938

/// A synthetic one-slot lifetimes trace of p3.2xlarge: up runs of mean `up_ticks`, waits of mean
/// `down_ticks` (geometric, from a fixed 64-bit LCG seeded with `seed`).
PoolTrace synthetic_trace(std::uint64_t seed, double up_ticks, double down_ticks) {
  PoolTrace trace;
  trace.pool = {"p3.2xlarge", "us-east-1a"};
  trace.source = "synthetic";
  trace.tick_s = kTickS;
  trace.span_s = double(kTicks) * kTickS;
  std::uint64_t state = seed;
  auto uniform = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(state >> 11) * 0x1.0p-53;
  };
  bool up = true;
  std::size_t run_start = 0;
  for (std::size_t i = 0; i < kTicks; ++i) {
    const bool switch_now = uniform() < 1.0 / (up ? up_ticks : down_ticks);
    if (!switch_now) continue;
    if (up && i > run_start) trace.up.push_back({double(run_start) * kTickS, double(i) * kTickS, true, run_start > 0, 0});
    up = !up;
    run_start = i;
  }
  if (up) trace.up.push_back({double(run_start) * kTickS, trace.span_s, false, run_start > 0, 0});
  return trace;
}

/// Arg 0: workers of p3.2xlarge, one trace each; arg 1: mean up run in ticks (74 ≈ 4 h; 3 ≈ 10 min, a
/// flappy availability trace). Deadline 2 h, target loss 0.8 (3,694 s on one worker without revocations).
void BM_ReplayPresetCluster(benchmark::State& state) {
  const PerformanceModel& model = preset_model();
  const int workers = int(state.range(0));
  std::vector<PoolTrace> traces;
  for (int w = 0; w < workers; ++w) traces.push_back(synthetic_trace(std::uint64_t(17 + w), double(state.range(1)), 6));
  const std::vector<int> counts = model.counts_of(Cluster{{"p3.2xlarge", workers}});
  ReplayOptions options;
  options.deadline_s = 7200;
  int windows = 0;
  for (auto _ : state) {
    const ReplayResult r = replay(model, counts, 0.8, traces, options);
    windows = r.windows + r.undecided_windows;
    benchmark::DoNotOptimize(r.meets_deadline.estimate);
  }
  state.counters["windows"] = windows;
  state.SetItemsProcessed(state.iterations() * windows);
}
BENCHMARK(BM_ReplayPresetCluster)->ArgNames({"workers", "up_ticks"})->ArgsProduct({{1, 3}, {74, 3}})->Unit(benchmark::kMillisecond);

/// Arg 0: the policy (0 none, 1 same-type, 2 replan, 3 guard with a 30-minute margin); two p3.2xlarge
/// (the preset's quota), one flappy trace each (mean up run 3 ticks), deadline 2 h. Replan and guard call
/// the exact re-plan at every loss of capacity.
void BM_ReplayPolicy(benchmark::State& state) {
  const PerformanceModel& model = preset_model();
  const std::vector<PoolTrace> traces{synthetic_trace(17, 3, 6), synthetic_trace(18, 3, 6)};
  const std::vector<int> counts = model.counts_of(Cluster{{"p3.2xlarge", 2}});
  ReplayOptions options;
  options.deadline_s = 7200;
  options.policy = std::array<ReplayPolicy, 4>{ReplayPolicy::none, ReplayPolicy::same_type, ReplayPolicy::replan,
                                               ReplayPolicy::guard}[std::size_t(state.range(0))];
  double replans = 0;
  for (auto _ : state) {
    const ReplayResult r = replay(model, counts, 0.8, traces, options);
    replans = r.mean_replans * r.windows;
    benchmark::DoNotOptimize(r.meets_deadline.estimate);
  }
  state.counters["replans"] = replans;
}
BENCHMARK(BM_ReplayPolicy)->ArgName("policy")->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

/// A one-hour work job with a 2-minute boot and a 1-minute restart overhead on the same trace.
void BM_ReplayWork(benchmark::State& state) {
  const std::vector<PoolTrace> traces{synthetic_trace(17, double(state.range(0)), 6)};
  ReplayOptions options;
  options.deadline_s = 7200;
  options.restart_overhead_s = 60;
  options.spot_price_usd_per_hour = 0.918;
  for (auto _ : state) {
    const ReplayResult r = replay_work(3600, traces, options);
    benchmark::DoNotOptimize(r.meets_deadline.estimate);
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(kTicks));
}
BENCHMARK(BM_ReplayWork)->ArgNames({"up_ticks"})->Arg(74)->Arg(3)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
