// SPDX-License-Identifier: MIT
// fit_throughput: recovery of the contention and bandwidth parameters from the preset's own output (issue #4).
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/fit.hpp>
#include <spotdnn/io/csv.hpp>

#include <doctest/doctest.h>

// glog (pulled in by Ceres) defines CHECK as an abort-on-failure assertion; use doctest's.
#undef CHECK
#define CHECK DOCTEST_CHECK

using namespace spotdnn;

namespace {

// Clusters of the preset catalog spanning the uncontended (n ≤ 8) and the contended (n ≥ 9) regimes.
const std::vector<Cluster> kClusters = {
    {{"p3.2xlarge", 2}},
    {{"g4dn.4xlarge", 4}},
    {{"g3.8xlarge", 2}, {"p3.2xlarge", 2}},
    {{"g3.16xlarge", 9}},
    {{"g4dn.4xlarge", 5}, {"g3.8xlarge", 5}},
    {{"p3.2xlarge", 2}, {"g3.16xlarge", 9}},
    {{"g4dn.4xlarge", 12}},
    {{"p3.2xlarge", 3}, {"g4dn.4xlarge", 5}, {"g3.8xlarge", 5}},
    {{"g3.16xlarge", 14}},
    {{"p2.8xlarge", 16}},
};

ThroughputTrace preset_trace(const std::vector<Cluster>& clusters = kClusters) {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  ThroughputTrace trace;
  for (const Cluster& c : clusters) {
    ThroughputSample s;
    s.cluster = c;
    s.iterations_per_s = model.estimate(model.counts_of(c), 0.8).iterations_per_s;
    trace.samples.push_back(s);
  }
  return trace;
}

double relative_error(double estimate, double truth) { return std::abs(estimate - truth) / std::abs(truth); }

}  // namespace

TEST_CASE("the throughput fit recovers alpha1, beta1 and B_req of the preset from its own output") {
  Workload start = presets::resnet110_workload();
  start.contention = {0.3, -0.5};
  start.required_bandwidth_bytes_per_s = 90e6;
  ThroughputFitOptions options;
  options.free_parameters = {"alpha1", "beta1", "required_bandwidth_bytes_per_s"};
  const ThroughputFitResult fit = fit_throughput(preset_trace(), start, presets::resnet110_catalog(), options);
  INFO(fit.message);
  REQUIRE(fit.status == FitStatus::converged);
  CHECK(relative_error(fit.workload.contention.alpha1, 0.8) <= 1e-6);
  CHECK(relative_error(fit.workload.contention.beta1, -1.92) <= 1e-6);
  CHECK(relative_error(fit.workload.required_bandwidth_bytes_per_s, 142e6) <= 1e-6);
  CHECK(fit.r_squared == doctest::Approx(1.0).epsilon(1e-12));
  const FitParameter* alpha = fit.find("alpha1");
  REQUIRE(alpha != nullptr);
  CHECK(alpha->free);
  CHECK(!fit.find("ps_bandwidth_bytes_per_s")->free);
}

TEST_CASE("the throughput fit recovers a type's profiled iteration time and B_ps together with alpha1") {
  Workload start = presets::resnet110_workload();
  const double truth = *start.profiles.at("g4dn.4xlarge").iteration_time_s;
  start.profiles.at("g4dn.4xlarge").iteration_time_s = truth * 1.3;
  start.contention.alpha1 = 0.5;
  Catalog catalog = presets::resnet110_catalog();
  catalog.parameter_server.bandwidth_bytes_per_s = 2e9;
  ThroughputFitOptions options;
  options.free_parameters = {"alpha1", "ps_bandwidth_bytes_per_s", "iteration_time_s[g4dn.4xlarge]"};
  const ThroughputFitResult fit = fit_throughput(preset_trace(), start, catalog, options);
  INFO(fit.message);
  REQUIRE(fit.status == FitStatus::converged);
  CHECK(relative_error(*fit.workload.profiles.at("g4dn.4xlarge").iteration_time_s, truth) <= 1e-6);
  CHECK(relative_error(fit.catalog.parameter_server.bandwidth_bytes_per_s, 1.2e9) <= 1e-6);
  CHECK(relative_error(fit.workload.contention.alpha1, 0.8) <= 1e-6);
}

TEST_CASE("contention parameters are not identifiable from clusters that never contend, and the message says what would identify them") {
  const std::vector<Cluster> small = {{{"p3.2xlarge", 1}}, {{"p3.2xlarge", 2}}, {{"g4dn.4xlarge", 4}}, {{"g3.8xlarge", 5}}};
  ThroughputFitOptions options;
  options.free_parameters = {"alpha1", "beta1"};
  const ThroughputFitResult fit =
      fit_throughput(preset_trace(small), presets::resnet110_workload(), presets::resnet110_catalog(), options);
  CHECK(fit.status == FitStatus::not_identifiable);
  CHECK(fit.message.find("alpha1") != std::string::npos);
  // ... and says which measurements would identify them.
  CHECK(fit.message.find("; they need clusters that contend for the parameter server") != std::string::npos);
  CHECK(std::isnan(fit.find("alpha1")->value));
  CHECK(fit.uncertain_parameters().empty());  // no estimates, no flags
}

TEST_CASE("a throughput sample with an unknown instance type is rejected with its file and line") {
  const ThroughputTrace trace = parse_throughput_trace("cluster,iterations_per_s\np3.2xlarge=2,3.5\nx1.large=2,1\n", "t.csv");
  ThroughputFitOptions options;
  options.free_parameters = {"alpha1"};
  CHECK_THROWS_WITH_AS(static_cast<void>(fit_throughput(trace, presets::resnet110_workload(), presets::resnet110_catalog(), options)),
                       doctest::Contains("t.csv:3: cluster = \"x1.large\": unknown instance type"), spotdnn::invalid_argument);
}

TEST_CASE("an unknown free-parameter name is rejected naming the known ones") {
  ThroughputFitOptions options;
  options.free_parameters = {"gamma1"};
  CHECK_THROWS_WITH_AS(static_cast<void>(fit_throughput(preset_trace(), presets::resnet110_workload(), presets::resnet110_catalog(), options)),
                       doctest::Contains("options.free_parameters = \"gamma1\": unknown parameter"), spotdnn::invalid_argument);
}

namespace {

/// ½·Σ ((rate − measured)/measured)², the fit's cost, from the model itself at (α1, β1).
double throughput_cost(const ThroughputTrace& trace, Workload workload, double alpha1, double beta1) {
  workload.contention = {alpha1, beta1};
  const PerformanceModel model(std::move(workload), presets::resnet110_catalog());
  double cost = 0;
  for (const ThroughputSample& s : trace.samples) {
    const double r = (model.estimate(model.counts_of(s.cluster), 0.8).iterations_per_s - s.iterations_per_s) / s.iterations_per_s;
    cost += 0.5 * r * r;
  }
  return cost;
}

/// The preset's rates with seeded multiplicative noise of about 2%, so the optimum has a positive cost.
ThroughputTrace noisy_preset_trace() {
  ThroughputTrace trace = preset_trace();
  std::mt19937 rng(20240611);
  std::normal_distribution<double> noise(0.0, 0.02);
  for (ThroughputSample& s : trace.samples) s.iterations_per_s *= std::exp(noise(rng));
  return trace;
}

}  // namespace

TEST_CASE("the start grid finds the optimum that a start from the given values stops above, as a dense search confirms") {
  // Given α1 = 0, β1 = -5: P(n) is clamped to 0 for every measured cluster, so the cost is flat in α1 and
  // β1 there and Levenberg–Marquardt stops where it starts.
  const ThroughputTrace trace = noisy_preset_trace();
  Workload start = presets::resnet110_workload();
  start.contention = {0.0, -5.0};
  ThroughputFitOptions options;
  options.free_parameters = {"alpha1", "beta1"};
  const ThroughputFitResult fit = fit_throughput(trace, start, presets::resnet110_catalog(), options);
  INFO(fit.message);
  REQUIRE(fit.status == FitStatus::converged);
  REQUIRE(!fit.start_outcomes.empty());
  const ThroughputFitStart& given = fit.start_outcomes.front();
  CHECK(given.given);
  REQUIRE(given.solved);
  // Dense brute force over α1 in [0, 3] and β1 in [-10, 2] (steps 0.01 and 0.02).
  double dense_min = std::numeric_limits<double>::infinity();
  double dense_alpha = 0, dense_beta = 0;
  for (int a = 0; a <= 300; ++a) {
    for (int b = 0; b <= 600; ++b) {
      const double alpha = 0.01 * a, beta = -10.0 + 0.02 * b;
      const double cost = throughput_cost(trace, start, alpha, beta);
      if (cost < dense_min) dense_min = cost, dense_alpha = alpha, dense_beta = beta;
    }
  }
  CAPTURE(dense_min);
  CAPTURE(dense_alpha);
  CAPTURE(dense_beta);
  CHECK(dense_min > 0);
  // The start from the given values stops far above the optimum ...
  CHECK(given.final_cost > 5 * dense_min);
  CHECK(given.final_cost - fit.final_cost > 0.01);
  CHECK(throughput_cost(trace, start, 0.0, -5.0) == doctest::Approx(given.final_cost).epsilon(1e-9));
  // ... the grid's best is at least as low as every point of the dense search, and the fit's cost is its own.
  CHECK(fit.final_cost <= dense_min);
  CHECK(throughput_cost(trace, start, fit.workload.contention.alpha1, fit.workload.contention.beta1) ==
        doctest::Approx(fit.final_cost).epsilon(1e-9));
  CHECK(std::abs(fit.workload.contention.alpha1 - dense_alpha) <= 0.05);
  CHECK(std::abs(fit.workload.contention.beta1 - dense_beta) <= 0.2);
  // Many starts reach that cost from inside the grid: no doubt is reported.
  int at_best = 0;
  for (const ThroughputFitStart& s : fit.start_outcomes) {
    at_best += s.solved && s.final_cost <= fit.final_cost * (1 + options.best_cost_tolerance) + 1e-12 * double(trace.samples.size());
  }
  CHECK(fit.starts_at_best == at_best);
  CHECK(fit.starts_at_best > 1);
  CHECK(fit.starts_at_iteration_limit == 0);
  CHECK_FALSE(fit.optimum_may_not_be_global);
  CHECK(fit.message.find("may not have been found") == std::string::npos);
  CHECK(fit.start_outcomes.size() == std::size_t(fit.starts));
}

TEST_CASE("solves stopped by the iteration limit and a best cost reached by one start are reported as maybe not global") {
  const ThroughputTrace trace = noisy_preset_trace();
  Workload start = presets::resnet110_workload();
  start.contention = {0.0, -5.0};
  ThroughputFitOptions options;
  options.free_parameters = {"alpha1", "beta1"};
  options.solver.max_iterations = 1;
  const ThroughputFitResult capped = fit_throughput(trace, start, presets::resnet110_catalog(), options);
  INFO(capped.message);
  CHECK(capped.starts_at_iteration_limit > 0);
  CHECK(capped.optimum_may_not_be_global);
  CHECK(capped.message.find("the global optimum may not have been found") != std::string::npos);
  CHECK(capped.message.find("stopped at the iteration limit of 1 (raise solver.max_iterations)") != std::string::npos);

  // Two grid points per axis: every grid start lies on an edge, and the one interior start (the given
  // values, where the cost is flat) stops above the optimum.
  ThroughputFitOptions coarse;
  coarse.free_parameters = {"alpha1", "beta1"};
  coarse.grid_points_per_axis = 2;
  const ThroughputFitResult few = fit_throughput(trace, start, presets::resnet110_catalog(), coarse);
  INFO(few.message);
  REQUIRE(few.status == FitStatus::converged);
  CHECK(few.starts_at_iteration_limit == 0);
  CHECK(few.optimum_may_not_be_global);
  CHECK(few.message.find("the global optimum may not have been found: ") != std::string::npos);
  CHECK(few.message.find("every start reaching the best cost lies on the edge of the start grid") != std::string::npos);
  for (const ThroughputFitStart& s : few.start_outcomes) {
    if (s.solved && s.final_cost <= few.final_cost * (1 + coarse.best_cost_tolerance)) CHECK(s.on_grid_edge);
  }
}
