// SPDX-License-Identifier: MIT
// How the loss fit and the trace reader scale with the trace length (issue #4 peer comparison:
// bench/compare_scipy.py runs SciPy).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

/// The trace as bench/compare_scipy.py writes it: every number with 17 significant digits (Python's
/// "{:.17g}"), the slow case for a number parser.
std::string trace_csv_17_digits(int points) {
  const spotdnn::LossTrace trace = make_trace(points);
  std::string text = "run,workers,weighted_batch,iteration,loss\n";
  char cell[64];
  for (const auto& s : trace.samples) {
    text += s.run + "," + std::to_string(int(s.workers));
    for (const double x : {s.weighted_batch, s.iteration, s.loss}) {
      std::snprintf(cell, sizeof cell, ",%.17g", x);
      text += cell;
    }
    text += "\n";
  }
  return text;
}

// digits 6: std::to_string's cells (the fast path of the number parser); 17: compare_scipy.py's.
void BM_parse_loss_table(benchmark::State& state) {
  const std::string text = state.range(1) == 17 ? trace_csv_17_digits(int(state.range(0))) : trace_csv(int(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(spotdnn::parse_loss_table(text).size());
  state.SetComplexityN(state.range(0));
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(text.size()));
}
BENCHMARK(BM_parse_loss_table)->ArgNames({"points", "digits"})->Args({100000, 6})->Args({100000, 17})->Unit(benchmark::kMillisecond);

// What `spotdnn fit loss --trace F.csv` does before fitting: open, read and parse the file into columns.
void BM_read_loss_table(benchmark::State& state) {
  const std::string path = (std::filesystem::temp_directory_path() / "spotdnn_bench_fit_trace.csv").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << trace_csv_17_digits(int(state.range(0)));
  }
  for (auto _ : state) benchmark::DoNotOptimize(spotdnn::read_loss_table(path).size());
  std::filesystem::remove(path);
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_read_loss_table)->ArgNames({"points"})->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_parse_loss_trace(benchmark::State& state) {
  const std::string text = trace_csv(int(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(spotdnn::parse_loss_trace(text).samples.size());
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_parse_loss_trace)->ArgNames({"points"})->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
