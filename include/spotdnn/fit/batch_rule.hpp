#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/batch_rule.hpp The spotDNN per-GPU batch rule b = 2^floor(log2(α2·mem + β2)), fitted from
/// (GPU memory, batch) samples.

#include <cmath>
#include <cstddef>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <ceres/ceres.h>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/fit/solver.hpp"

namespace spotdnn {

/// One observation: a GPU with `gpu_memory_bytes` of memory trains with `batch_per_gpu` samples per step.
struct BatchSample {
  double gpu_memory_bytes = 0;
  double batch_per_gpu = 0;  ///< a power of two ≥ 1
};

/// b = 2^floor(log2(α2·mem + β2)).
/// @note spotDNN per-GPU batch rule (IWQoS 2023, §IV).
struct BatchRule {
  double alpha2_samples_per_byte = 0;
  double beta2_samples = 0;

  /// The batch the rule gives a GPU with `gpu_memory_bytes`; 0 when α2·mem + β2 < 1.
  [[nodiscard]] double batch_per_gpu(double gpu_memory_bytes) const {
    const double v = alpha2_samples_per_byte * gpu_memory_bytes + beta2_samples;
    if (!(v >= 1)) return 0;
    return std::exp2(std::floor(std::log2(v)));
  }
};

/// fit_batch_rule's answer; parameters alpha2_samples_per_byte and beta2_samples.
struct BatchRuleFitResult : FitResult {
  BatchRule rule;
  std::size_t reproduced = 0;  ///< samples whose batch the fitted rule gives exactly
};

namespace detail {

/// log2(α2·mem + β2) against the middle of the observed batch's interval [log2 b, log2 b + 1);
/// memory in GB inside, so both parameters are O(1..1000).
struct BatchRuleResidual {
  const double memory_gb;
  const double target_log2;

  template <typename T>
  bool operator()(const T* alpha2_per_gb, const T* beta2, T* residual) const {
    using std::log;
    const T v = alpha2_per_gb[0] * T(memory_gb) + beta2[0];
    if (!(v > T(0))) return false;
    residual[0] = log(v) / T(std::log(2.0)) - T(target_log2);
    return true;
  }
};

}  // namespace detail

/// Fits α2, β2 so that log2(α2·mem + β2) sits mid-way in each sample's interval [log2 b, log2 b + 1), the
/// smooth proxy of the floor. The floor makes the rule itself piecewise constant: `reproduced` says how
/// many samples the fitted rule gives back exactly, and the message says which do not.
/// Throws spotdnn::invalid_argument for a non-positive memory or a batch that is not a power of two.
[[nodiscard]] inline BatchRuleFitResult fit_batch_rule(const std::vector<BatchSample>& samples,
                                                       const SolverSettings& settings = {}) {
  constexpr std::string_view fn = "fit_batch_rule";
  BatchRuleFitResult result;
  for (const char* name : {"alpha2_samples_per_byte", "beta2_samples"}) {
    FitParameter parameter;
    parameter.name = name;
    result.parameters.push_back(parameter);
  }
  std::set<double> memories;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string at = "samples[" + std::to_string(i) + "]";
    detail::require_positive(fn, at + ".gpu_memory_bytes", samples[i].gpu_memory_bytes);
    const double b = samples[i].batch_per_gpu;
    detail::require_positive(fn, at + ".batch_per_gpu", b);
    if (std::exp2(std::round(std::log2(b))) != b) detail::fail(fn, at + ".batch_per_gpu", b, "must be a power of two");
    memories.insert(samples[i].gpu_memory_bytes);
  }
  const std::size_t m = samples.size();
  result.observations = m;
  result.free_parameters = 2;
  if (memories.size() < 2) {
    result.status = FitStatus::not_identifiable;
    result.message = "a line through one memory size is not determined: give at least two different GPU memories";
    return result;
  }
  // Start: least squares of 1.5·b (mid-interval) on memory, positive everywhere.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& s : samples) {
    const double x = s.gpu_memory_bytes / 1e9, y = 1.5 * s.batch_per_gpu;
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double denominator = double(m) * sxx - sx * sx;
  double alpha = (double(m) * sxy - sx * sy) / denominator;
  double beta = (sy - alpha * sx) / double(m);
  bool positive = alpha > 0;
  for (const auto& s : samples) positive = positive && alpha * s.gpu_memory_bytes / 1e9 + beta > 0;
  if (!positive) alpha = sy / sx, beta = 0;

  ceres::Problem problem;
  for (const auto& s : samples) {
    using F = detail::BatchRuleResidual;
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<F, 1, 1, 1>(new F{s.gpu_memory_bytes / 1e9, std::log2(s.batch_per_gpu) + 0.5}),
                             nullptr, &alpha, &beta);
  }
  ceres::Solver::Summary summary;
  ceres::Solve(detail::ceres_options(settings), &problem, &summary);
  result.starts = 1;
  result.iterations = int(summary.iterations.size()) - 1;
  result.final_cost = summary.final_cost;
  result.status = detail::status_of(summary);
  if (result.status == FitStatus::failure) {
    result.message = "the solver failed: " + summary.message;
    return result;
  }
  const detail::UnitCovariance covariance = detail::unit_covariance(problem, {&alpha, &beta}, {"alpha2", "beta2"});
  if (!covariance.ok) {
    result.status = FitStatus::not_identifiable;
    result.message = covariance.why;
    return result;
  }
  result.rule = {alpha / 1e9, beta};
  result.parameters[0].value = alpha / 1e9;
  result.parameters[1].value = beta;
  const double variance = m > 2 ? 2.0 * summary.final_cost / double(m - 2) : std::numeric_limits<double>::quiet_NaN();
  const double t = detail::student_t_975(m - 2);
  detail::set_interval(result.parameters[0], covariance.matrix(0, 0) / 1e18, variance, t);
  detail::set_interval(result.parameters[1], covariance.matrix(1, 1), variance, t);
  std::vector<double> observed, predicted;
  std::string missed;
  for (std::size_t i = 0; i < m; ++i) {
    observed.push_back(samples[i].batch_per_gpu);
    predicted.push_back(result.rule.batch_per_gpu(samples[i].gpu_memory_bytes));
    if (predicted.back() == observed.back()) {
      ++result.reproduced;
    } else {
      missed += (missed.empty() ? "" : ", ") + std::string("samples[") + std::to_string(i) + "] gives " +
                detail::format_number(predicted.back());
    }
  }
  detail::set_goodness_of_fit(result, observed, predicted);
  result.message = "reproduces " + std::to_string(result.reproduced) + " of " + std::to_string(m) + " batches";
  if (!missed.empty()) result.message += " (" + missed + ")";
  return result;
}

}  // namespace spotdnn
