// SPDX-License-Identifier: MIT
// fit_throughput: recovery of the contention and bandwidth parameters from the preset's own output (issue #4).
#include <cmath>
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

TEST_CASE("contention parameters are not identifiable from clusters that never contend") {
  const std::vector<Cluster> small = {{{"p3.2xlarge", 1}}, {{"p3.2xlarge", 2}}, {{"g4dn.4xlarge", 4}}, {{"g3.8xlarge", 5}}};
  ThroughputFitOptions options;
  options.free_parameters = {"alpha1", "beta1"};
  const ThroughputFitResult fit =
      fit_throughput(preset_trace(small), presets::resnet110_workload(), presets::resnet110_catalog(), options);
  CHECK(fit.status == FitStatus::not_identifiable);
  CHECK(fit.message.find("alpha1") != std::string::npos);
  CHECK(std::isnan(fit.find("alpha1")->value));
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
