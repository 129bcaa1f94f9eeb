// SPDX-License-Identifier: MIT
// How the loss fit scales with the trace length (issue #4 peer comparison: bench/compare_scipy.py runs SciPy).
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <spotdnn/fit.hpp>
#include <spotdnn/io/csv.hpp>

namespace {

spotdnn::LossTrace make_trace(int points) {
  const double gamma[] = {876.5, -0.2, 2507.6, 0.5};
  const struct { const char* name; double workers, batch; } runs[] = {{"n1", 1, 512}, {"n2", 2, 1024}, {"n4", 4, 1536}, {"n8", 8, 2048}};
  std::mt19937_64 rng(2023);
  std::normal_distribution<double> noise(0.0, 0.01);
  spotdnn::LossTrace trace;
  const int per_run = points / 4;
  for (const auto& run : runs) {
    for (int i = 0; i < per_run; ++i) {
      spotdnn::LossSample s;
      s.run = run.name;
      s.workers = run.workers;
      s.weighted_batch = run.batch;
      s.iteration = 20000.0 * i / (per_run - 1);
      s.loss = spotdnn::loss_seed_form<double>(s.iteration, s.workers, s.weighted_batch, gamma) * (1 + noise(rng));
      trace.samples.push_back(s);
    }
  }
  return trace;
}

void BM_fit_loss_model(benchmark::State& state) {
  const spotdnn::LossTrace trace = make_trace(int(state.range(0)));
  spotdnn::LossFitOptions options;
  options.starts = int(state.range(1));
  for (auto _ : state) {
    const spotdnn::LossFitResult fit = spotdnn::fit_loss_model(trace, options);
    if (fit.status != spotdnn::FitStatus::converged) state.SkipWithError("fit did not converge");
    benchmark::DoNotOptimize(fit.model.gamma.data());
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_fit_loss_model)
    ->ArgNames({"points", "starts"})
    ->ArgsProduct({{1000, 10000, 100000}, {1, 3}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

// The columnar path `spotdnn fit loss` takes: the same fit on a LossTable (no conversion from samples).
void BM_fit_loss_table(benchmark::State& state) {
  const spotdnn::LossTable table = spotdnn::to_loss_table(make_trace(int(state.range(0))));
  spotdnn::LossFitOptions options;
  options.starts = int(state.range(1));
  for (auto _ : state) {
    const spotdnn::LossFitResult fit = spotdnn::fit_loss_model(table, options);
    if (fit.status != spotdnn::FitStatus::converged) state.SkipWithError("fit did not converge");
    benchmark::DoNotOptimize(fit.model.gamma.data());
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_fit_loss_table)
    ->ArgNames({"points", "starts"})
    ->ArgsProduct({{1000, 10000, 100000}, {1, 3}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

std::string trace_csv(int points) {
  const spotdnn::LossTrace trace = make_trace(points);
  std::string text = "run,workers,weighted_batch,iteration,loss\n";
  for (const auto& s : trace.samples) {
    text += s.run + "," + std::to_string(int(s.workers)) + "," + std::to_string(s.weighted_batch) + "," +
            std::to_string(s.iteration) + "," + std::to_string(s.loss) + "\n";
  }
  return text;
}

void BM_parse_loss_table(benchmark::State& state) {
  const std::string text = trace_csv(int(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(spotdnn::parse_loss_table(text).size());
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_parse_loss_table)->ArgNames({"points"})->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_parse_loss_trace(benchmark::State& state) {
  const std::string text = trace_csv(int(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(spotdnn::parse_loss_trace(text).samples.size());
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_parse_loss_trace)->ArgNames({"points"})->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
