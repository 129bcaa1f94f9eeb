// SPDX-License-Identifier: MIT
// Predictions per second: the allocation-free estimate() (the planner's hot path) and the named predict(),
// on the 5-type preset cluster and on synthetic catalogs of 1..100 instance types.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <spotdnn/planner.hpp>

namespace {

using namespace spotdnn;

PerformanceModel synthetic_model(int types) {
  Workload w = presets::resnet110_workload();
  w.profiles.clear();
  Catalog c = presets::resnet110_catalog();
  c.instance_types.clear();
  for (int k = 0; k < types; ++k) {
    const auto& row = presets::kResnet110Types[k % 5];
    InstanceType t;
    t.name = std::string(row.name) + "-" + std::to_string(k);
    t.gpus = row.gpus;
    t.price_usd_per_hour = row.spot_price_usd_per_hour * (1.0 + 0.01 * k);
    t.quota = 4;
    c.instance_types.push_back(t);
    TypeProfile p;
    p.batch_per_gpu = row.batch_per_gpu;
    p.iteration_time_s = row.gpus * row.batch_per_gpu / row.profiled_samples_per_s * (1.0 + 0.005 * k);
    w.profiles.emplace(t.name, p);
  }
  return PerformanceModel(w, c);
}

void BM_EstimatePresetCluster(benchmark::State& state) {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const std::vector<int> counts = {2, 0, 4, 0, 0};  // {p3.2xlarge: 2, g3.8xlarge: 4}
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.estimate(counts.data(), 0.8));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimatePresetCluster);

void BM_PredictPresetCluster(benchmark::State& state) {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};
  for (auto _ : state) {
    benchmark::DoNotOptimize(predict(model, cluster, 0.8));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PredictPresetCluster);

void BM_EstimateTypes(benchmark::State& state) {
  const int types = static_cast<int>(state.range(0));
  const PerformanceModel model = synthetic_model(types);
  const std::vector<int> counts(types, 1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.estimate(counts.data(), 0.8));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetComplexityN(types);
}
BENCHMARK(BM_EstimateTypes)->ArgNames({"types"})->RangeMultiplier(2)->Range(1, 128)->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
