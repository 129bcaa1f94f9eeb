// SPDX-License-Identifier: MIT
// Fit the loss-model coefficients γ (seed form, docs/model.md eq. (6)) to a noisy loss trace of four profiling runs
// and print the estimates with 95% intervals. The trace is generated here from the ResNet-110 preset's γ with
// 1% relative Gaussian noise (seed 42); the example fails (exit 1) unless every γ_k is within 10% of the
// truth and within 3 of its own standard errors. (γ2 is the least determined coefficient: at 1% noise its
// standard error is about 2.5% of its value, so 10% is about 4 standard errors; at 3% noise it would not be
// a fair tolerance.)
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <spotdnn/fit.hpp>

int main() {
  using namespace spotdnn;
  const std::vector<double> truth = {876.5, -0.2, 2507.6, 0.5};  // docs/model.md section 3
  constexpr double kNoise = 0.01;
  constexpr double kTolerance = 0.10;  // relative, every γ_k

  struct Run {
    const char* name;
    double workers, weighted_batch;
  };
  const Run runs[] = {{"n1", 1, 512}, {"n2", 2, 1024}, {"n4", 4, 1536}, {"n8", 8, 2048}};
  std::mt19937_64 rng(42);
  std::normal_distribution<double> gauss(0.0, 1.0);
  LossTrace trace;
  for (const Run& run : runs) {
    for (int i = 0; i <= 100; ++i) {
      LossSample s;
      s.run = run.name;
      s.workers = run.workers;
      s.weighted_batch = run.weighted_batch;
      s.iteration = 200.0 * i;
      s.loss = loss_seed_form<double>(s.iteration, s.workers, s.weighted_batch, truth.data()) * (1 + kNoise * gauss(rng));
      trace.samples.push_back(s);
    }
  }

  LossFitOptions options;
  options.relative_residuals = true;  // the noise is a percentage of the loss
  const LossFitResult fit = fit_loss_model(trace, options);
  std::printf("%zu samples, status %s: %s\n", fit.observations, std::string(to_string(fit.status)).c_str(),
              fit.message.c_str());
  if (!fit.ok()) return 1;
  std::printf("%-8s %12s %12s %12s %12s %12s\n", "", "truth", "estimate", "std. error", "95% low", "95% high");
  bool ok = true;
  for (std::size_t k = 0; k < truth.size(); ++k) {
    const FitParameter& g = fit.parameters[k];
    std::printf("%-8s %12.6g %12.6g %12.4g %12.6g %12.6g\n", g.name.c_str(), truth[k], g.value, g.standard_error,
                g.ci95_low, g.ci95_high);
    const bool close = std::abs(g.value - truth[k]) <= kTolerance * std::abs(truth[k]);
    const bool covered = std::abs(g.value - truth[k]) <= 3 * g.standard_error;
    if (!close || !covered) {
      std::printf("  %s: not recovered (tolerance %.0f%%, 3 standard errors)\n", g.name.c_str(), 100 * kTolerance);
      ok = false;
    }
  }
  std::printf("RMSE %.4g, R^2 %.6f, %d iterations, %.2f ms\n", fit.rmse, fit.r_squared, fit.iterations,
              1e3 * fit.solve_time_s);
  return ok ? 0 : 1;
}
