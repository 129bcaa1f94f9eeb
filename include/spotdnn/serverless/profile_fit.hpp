#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/profile_fit.hpp Fits the FasDL function-time coefficients (docs/model.md eq. (S1)) to
/// Lambda profiling runs with Ceres: a, b, m of T_train(B, M) = a·(B + b)/(M + m) from the train times and
/// k1, k2 of T_trans(M) = k1·M^k2 from the transform times (link spotdnn::fit).
///
/// This is the one serverless header that needs Ceres: it sits beside the model it fits (function_time.hpp,
/// whose templates its residuals differentiate); the serverless planning headers stay Ceres-free.
///
/// How the global optimum is found. Both models are linear in some coefficients once the others are fixed
/// (variable projection): for a fixed m, T_train = α·B/(M + m) + β/(M + m) with α = a, β = a·b; for a fixed k2,
/// T_trans = k1·M^k2. So the least-squares cost, minimised over the linear coefficients, is a function of m
/// (of k2) alone, and the fit scans it on a grid (M_min + m log-spaced from 10⁻⁴·M_min to 10⁴·M_max; k2 from
/// −4 to 4, plus the log-log regression's k2), takes the best distinct local minima of the scan as starts,
/// and runs Levenberg–Marquardt on all the coefficients from each, keeping the lowest cost. The result says
/// when the optimum may not be global (the scan's best lies on its edge, a solve hit the iteration limit).
///
/// Identifiability (status not_identifiable, with the reason, and no estimates): train times at only one
/// memory (a and m enter as a/(M + m) only), at only one batch (a·(B + b) is one number), at fewer than 3
/// distinct (B, M) points, or times that do not fall with memory (m runs off beyond 1000 × the largest
/// memory); transform times at fewer than 2 distinct memories; no times of a kind at all; and any
/// rank-deficient Jacobian at the estimate. With exactly as many points as coefficients the estimates come
/// without error bars.

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ceres/ceres.h>
#include <Eigen/Core>

#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/fit/solver.hpp"
#include "spotdnn/serverless/function_time.hpp"
#include "spotdnn/serverless/profile.hpp"
#include "spotdnn/serverless/profile_fit_result.hpp"
#include "spotdnn/serverless/profile_trace.hpp"
#include "spotdnn/serverless/serverless_model.hpp"

namespace spotdnn::serverless {

/// Options of fit_serverless_profile.
struct ServerlessFitOptions {
  /// Fit relative residuals (f − y)/y instead of f − y (FasDL fits absolute ones): right when the noise is a
  /// fixed percentage of the time. The intervals assume the chosen residuals share one variance.
  bool relative_residuals = false;
  /// Grid points of each profile scan (over m, over k2): at least 10.
  int scan_points = 400;
  /// Local solves per part, from the best distinct local minima of its scan: at least 1.
  int starts = 3;
  /// Starts whose final cost is at most best·(1 + this) reached the best cost.
  double best_cost_tolerance = 1e-6;
  SolverSettings solver;
};

namespace detail {

/// Residuals of `count` consecutive train times: T_train(B_i, M_i) − y_i (or divided by y_i); a = x0·s0,
/// b = x1·s1, m = x2·s2. Returns false (step rejected) where M + m ≤ 0. @note docs/model.md eq. (S1).
struct TrainTimeResiduals {
  const double* batch;
  const double* memory_mb;
  const double* time_s;
  const std::size_t count;
  const bool relative;
  const std::array<double, 3> scale;

  template <typename T>
  bool operator()(const T* x, T* residuals) const {
    const T a = x[0] * T(scale[0]), b = x[1] * T(scale[1]), m = x[2] * T(scale[2]);
    for (std::size_t i = 0; i < count; ++i) {
      const T memory(memory_mb[i]);
      if (!(memory + m > T(0))) return false;
      const T f = train_time_s(T(batch[i]), memory, a, b, m);
      residuals[i] = relative ? (f - T(time_s[i])) / T(time_s[i]) : f - T(time_s[i]);
    }
    return true;
  }
};

/// Residuals of `count` consecutive transform times: T_trans(M_i) − y_i (or divided by y_i); k1 = x0·s0,
/// k2 = x1·s1. @note docs/model.md eq. (S1).
struct TransformTimeResiduals {
  const double* memory_mb;
  const double* time_s;
  const std::size_t count;
  const bool relative;
  const std::array<double, 2> scale;

  template <typename T>
  bool operator()(const T* x, T* residuals) const {
    const T k1 = x[0] * T(scale[0]), k2 = x[1] * T(scale[1]);
    for (std::size_t i = 0; i < count; ++i) {
      const T f = transform_time_s(T(memory_mb[i]), k1, k2);
      residuals[i] = relative ? (f - T(time_s[i])) / T(time_s[i]) : f - T(time_s[i]);
    }
    return true;
  }
};

/// Rows per residual block: blocks of many rows keep Ceres' per-block overhead small on long traces.
inline constexpr std::size_t kServerlessRowsPerBlock = 256;

/// One local solve's outcome.
struct PartStart {
  bool solved = false;
  bool hit_iteration_limit = false;
  double final_cost = std::numeric_limits<double>::quiet_NaN();
};

/// A part's fit (train or transform) from its starts: the FitResult with estimates and intervals (the
/// message is left to the caller unless the status is failure or not_identifiable) and the estimates.
template <int P>
struct PartSolve {
  FitResult fit;
  std::array<double, P> value{};
  bool has_estimate = false;  ///< the status is converged or no_convergence
};

/// Solves a part from every start (physical values) with the rows in blocks made by
/// `make_cost(first, count, scale)`; keeps the lowest cost, counts the starts reaching it, computes the
/// unit-variance covariance (identifiability) and the intervals.
template <int P, typename MakeCost>
PartSolve<P> solve_part(const std::array<std::string, P>& names, const std::vector<std::array<double, P>>& starts,
                        const std::array<double, P>& lower, const std::array<double, P>& scale, std::size_t rows,
                        const ServerlessFitOptions& options, MakeCost&& make_cost) {
  PartSolve<P> out;
  FitResult& fit = out.fit;
  for (int k = 0; k < P; ++k) {
    FitParameter parameter;
    parameter.name = names[std::size_t(k)];
    fit.parameters.push_back(parameter);
  }
  fit.observations = rows;
  fit.free_parameters = std::size_t(P);
  std::array<double, P> x{};
  ceres::Problem problem;
  for (std::size_t first = 0; first < rows; first += kServerlessRowsPerBlock) {
    problem.AddResidualBlock(make_cost(first, std::min(kServerlessRowsPerBlock, rows - first), scale), nullptr, x.data());
  }
  constexpr double kFree = std::numeric_limits<double>::lowest();
  for (int k = 0; k < P; ++k) {
    if (lower[std::size_t(k)] != kFree) problem.SetParameterLowerBound(x.data(), k, lower[std::size_t(k)] / scale[std::size_t(k)]);
  }
  const ceres::Solver::Options solver_options = spotdnn::detail::ceres_options(options.solver);
  std::optional<ceres::Solver::Summary> best;
  std::array<double, P> best_x{};
  std::vector<PartStart> outcomes;
  for (const auto& start : starts) {
    for (int k = 0; k < P; ++k) {
      const std::size_t kk = std::size_t(k);
      x[kk] = (lower[kk] != kFree ? std::max(start[kk], lower[kk]) : start[kk]) / scale[kk];
    }
    double initial = 0;
    if (!problem.Evaluate(ceres::Problem::EvaluateOptions(), &initial, nullptr, nullptr, nullptr) || !std::isfinite(initial)) continue;
    ceres::Solver::Summary summary;
    ceres::Solve(solver_options, &problem, &summary);
    ++fit.starts;
    PartStart outcome;
    outcome.solved = summary.termination_type == ceres::CONVERGENCE || summary.termination_type == ceres::NO_CONVERGENCE;
    outcome.hit_iteration_limit = summary.termination_type == ceres::NO_CONVERGENCE;
    outcome.final_cost = summary.final_cost;
    if (!outcome.solved) continue;
    outcomes.push_back(outcome);
    fit.starts_at_iteration_limit += outcome.hit_iteration_limit;
    if (!best || summary.final_cost < best->final_cost) {
      best = summary;
      best_x = x;
    }
  }
  if (!best) {
    fit.status = FitStatus::failure;
    fit.message = "the solver failed from every start (the model cannot be evaluated there)";
    return out;
  }
  x = best_x;
  fit.status = spotdnn::detail::status_of(*best);
  fit.final_cost = best->final_cost;
  fit.iterations = int(best->iterations.size()) - 1;
  const double reach = best->final_cost * (1.0 + options.best_cost_tolerance) + 1e-300;
  for (const PartStart& outcome : outcomes) fit.starts_at_best += outcome.final_cost <= reach ? 1 : 0;

  std::vector<std::string> name_list(names.begin(), names.end());
  const spotdnn::detail::UnitCovariance covariance = spotdnn::detail::unit_covariance(problem, {x.data()}, name_list);
  for (int k = 0; k < P; ++k) out.value[std::size_t(k)] = x[std::size_t(k)] * scale[std::size_t(k)];
  if (!covariance.ok) {
    fit.status = FitStatus::not_identifiable;
    fit.message = covariance.why;
    return out;
  }
  const std::size_t p = std::size_t(P);
  const double residual_variance = rows > p ? 2.0 * best->final_cost / double(rows - p) : std::numeric_limits<double>::quiet_NaN();
  const double t = spotdnn::detail::student_t_975(rows > p ? rows - p : 0);
  for (int k = 0; k < P; ++k) {
    const std::size_t kk = std::size_t(k);
    FitParameter& parameter = fit.parameters[kk];
    parameter.value = out.value[kk];
    parameter.at_bound = lower[kk] != kFree && x[kk] <= lower[kk] / scale[kk] + 1e-9 * std::max(1.0, std::abs(lower[kk] / scale[kk]));
    spotdnn::detail::set_interval(parameter, covariance.matrix(k, k) * scale[kk] * scale[kk], residual_variance, t);
  }
  out.has_estimate = true;
  return out;
}

/// Indices of the best distinct local minima of a scanned cost (at most `count`, lowest first); finite costs only.
inline std::vector<std::size_t> scan_minima(const std::vector<double>& cost, int count) {
  std::vector<std::size_t> minima;
  const std::size_t n = cost.size();
  for (std::size_t j = 0; j < n; ++j) {
    if (!std::isfinite(cost[j])) continue;
    const bool left = j == 0 || !std::isfinite(cost[j - 1]) || cost[j] <= cost[j - 1];
    const bool right = j + 1 == n || !std::isfinite(cost[j + 1]) || cost[j] < cost[j + 1];
    if (left && right) minima.push_back(j);
  }
  std::stable_sort(minima.begin(), minima.end(), [&](std::size_t a, std::size_t b) { return cost[a] < cost[b]; });
  if (minima.size() > std::size_t(count)) minima.resize(std::size_t(count));
  return minima;
}

/// "pooled" status of two parts: converged only when both are.
inline FitStatus pooled_status(FitStatus train, FitStatus transform) {
  return train != FitStatus::converged ? train : transform;
}

/// "converged after 12 iterations (best of 3 starts, 2 reaching the best cost)" and the notes of a part.
inline std::string part_message(const FitResult& fit, const std::vector<std::string>& doubts) {
  std::string message = std::string(fit.status == FitStatus::converged ? "converged" : "stopped at the iteration limit") +
                        " after " + std::to_string(fit.iterations) + " iterations (best of " + std::to_string(fit.starts) +
                        " starts, " + std::to_string(fit.starts_at_best) + " reaching the best cost)";
  std::string doubt;
  for (const std::string& d : doubts) doubt += (doubt.empty() ? "" : "; ") + d;
  if (!doubt.empty()) message += "; the global optimum may not have been found: " + doubt;
  if (fit.observations == fit.free_parameters) message += "; as many points as coefficients: no error bars";
  std::string bound;
  for (const FitParameter& p : fit.parameters) {
    if (p.at_bound) bound += (bound.empty() ? "" : ", ") + p.name;
  }
  if (!bound.empty()) message += "; at a physical bound: " + bound + " (intervals are optimistic)";
  return message;
}

}  // namespace detail

/// Fits a, b, m and k1, k2 (docs/model.md eq. (S1)) to `trace`; see the file comment for the method and for
/// what makes a part not identifiable. `base` gives the profile's name, model_size_mb and samples_per_epoch
/// (its coefficients are ignored). Residuals are absolute (seconds) unless options.relative_residuals.
/// Bounds keep the model physical: a > 0, B + b ≥ 0 at the smallest batch measured, and M + m > 0 down to
/// the smaller of the smallest memory measured and Lambda's 128 MB (so the planner can use the profile at
/// every memory); k1 ≥ 0. Throws spotdnn::invalid_argument for an invalid trace (naming FILE:LINE), an
/// invalid name, size or samples per epoch, or bad options.
[[nodiscard]] inline ServerlessFitResult fit_serverless_profile(const ServerlessTrace& trace, const ServerlessProfile& base,
                                                                const ServerlessFitOptions& options = {}) {
  constexpr std::string_view fn = "fit_serverless_profile";
  const auto started = std::chrono::steady_clock::now();
  using spotdnn::detail::fail;
  using spotdnn::detail::format_number;
  spotdnn::detail::require_printable_name(fn, "base.name", base.name);
  spotdnn::detail::require_positive(fn, "base.model_size_mb", base.model_size_mb);
  spotdnn::detail::require_positive(fn, "base.samples_per_epoch", base.samples_per_epoch);
  if (options.scan_points < 10 || options.scan_points > 1000000) fail(fn, "options.scan_points", options.scan_points, "must be from 10 to 1000000");
  if (options.starts < 1 || options.starts > 1000) fail(fn, "options.starts", options.starts, "must be from 1 to 1000");
  if (!(options.best_cost_tolerance >= 0) || !std::isfinite(options.best_cost_tolerance)) {
    fail(fn, "options.best_cost_tolerance", options.best_cost_tolerance, "must be a finite number >= 0");
  }
  validate_serverless_trace(trace);

  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  ServerlessFitResult result;
  result.profile = base;
  result.profile.a = result.profile.b = result.profile.m = result.profile.k1 = result.profile.k2 = kNaN;
  result.relative_residuals = options.relative_residuals;
  const std::size_t n = trace.samples.size();
  result.predicted_train_time_s.assign(n, kNaN);
  result.predicted_transform_time_s.assign(n, kNaN);

  // Columns of each part, with the sample each row came from.
  std::vector<double> batch, train_memory, train_time, transform_memory, transform_time;
  std::vector<std::size_t> train_sample, transform_sample;
  for (std::size_t i = 0; i < n; ++i) {
    const ServerlessSample& s = trace.samples[i];
    if (s.train_time_s) {
      batch.push_back(*s.batch);
      train_memory.push_back(s.memory_mb);
      train_time.push_back(*s.train_time_s);
      train_sample.push_back(i);
    }
    if (s.transform_time_s) {
      transform_memory.push_back(s.memory_mb);
      transform_time.push_back(*s.transform_time_s);
      transform_sample.push_back(i);
    }
  }
  const bool relative = options.relative_residuals;
  const auto weight = [relative](double y) { return relative ? 1.0 / (y * y) : 1.0; };
  const auto not_identifiable = [](FitResult& fit, std::string why) {
    fit.status = FitStatus::not_identifiable;
    fit.message = std::move(why);
  };

  // ---- T_train(B, M) = a·(B + b)/(M + m) ----------------------------------------------------------------
  FitResult& train = result.train;
  std::array<double, 3> train_value{kNaN, kNaN, kNaN};
  bool train_estimated = false;
  {
    for (const char* name : {"a", "b", "m"}) {
      FitParameter parameter;
      parameter.name = name;
      train.parameters.push_back(parameter);
    }
    const std::size_t rows = train_time.size();
    train.observations = rows;
    train.free_parameters = 3;
    const std::set<double> memories(train_memory.begin(), train_memory.end()), batches(batch.begin(), batch.end());
    std::set<std::pair<double, double>> points;
    for (std::size_t r = 0; r < rows; ++r) points.emplace(batch[r], train_memory[r]);
    if (rows == 0) {
      not_identifiable(train, "the trace has no train_time_s: a, b and m need train times at two or more batches and memories");
    } else if (memories.size() < 2) {
      not_identifiable(train, "every train time was measured at " + format_number(*memories.begin()) +
                                  " MB: a and m enter only as a/(M + m) and cannot be separated; profile at least two memories");
    } else if (batches.size() < 2) {
      not_identifiable(train, "every train time has batch " + format_number(*batches.begin()) +
                                  ": b and a enter only as a·(B + b) and cannot be separated; profile at least two batches");
    } else if (points.size() < 3) {
      not_identifiable(train, "a, b and m need train times at 3 or more distinct (batch, memory) points (the trace has " +
                                  std::to_string(points.size()) + ")");
    } else {
      const double memory_min = *memories.begin(), memory_max = *memories.rbegin();
      const double batch_min = *batches.begin(), batch_max = *batches.rbegin();
      // Profile scan over u = M_min + m (log-spaced): for each m, α = a and β = a·b by weighted linear least squares.
      const int g = options.scan_points;
      const double u_low = 1e-4 * memory_min, u_high = 1e4 * memory_max;
      std::vector<double> m_grid(static_cast<std::size_t>(g)), cost(static_cast<std::size_t>(g), std::numeric_limits<double>::infinity());
      std::vector<std::array<double, 2>> linear(static_cast<std::size_t>(g));
      for (int j = 0; j < g; ++j) {
        const double u = u_low * std::pow(u_high / u_low, double(j) / double(g - 1));
        const double m = u - memory_min;
        m_grid[std::size_t(j)] = m;
        double spp = 0, spq = 0, sqq = 0, spy = 0, sqy = 0;
        for (std::size_t r = 0; r < rows; ++r) {
          const double w = weight(train_time[r]), d = train_memory[r] + m;
          const double p = batch[r] / d, q = 1.0 / d, y = train_time[r];
          spp += w * p * p, spq += w * p * q, sqq += w * q * q, spy += w * p * y, sqy += w * q * y;
        }
        const double det = spp * sqq - spq * spq;
        if (!(det > 1e-12 * spp * sqq)) continue;
        const double alpha = (spy * sqq - sqy * spq) / det, beta = (sqy * spp - spy * spq) / det;
        double c = 0;
        for (std::size_t r = 0; r < rows; ++r) {
          const double d = train_memory[r] + m, e = alpha * batch[r] / d + beta / d - train_time[r];
          c += weight(train_time[r]) * e * e;
        }
        cost[std::size_t(j)] = c;
        linear[std::size_t(j)] = {alpha, beta};
      }
      const std::vector<std::size_t> minima = detail::scan_minima(cost, options.starts);
      std::vector<std::array<double, 3>> starts;
      for (std::size_t j : minima) {
        const double a = std::max(linear[j][0], 1e-12);
        starts.push_back({a, linear[j][1] / a, m_grid[j]});
      }
      if (starts.empty()) {  // every scan point singular: start from a rough guess
        double mean = 0;
        for (double y : train_time) mean += y;
        mean /= double(rows);
        starts.push_back({mean * memory_max / batch_max, 0.0, 0.0});
      }
      const double lowest_memory = std::min(memory_min, double(kLambdaMinMemoryMb));
      const std::array<double, 3> lower{0.0, -batch_min, -lowest_memory * (1.0 - 1e-6)};
      const std::array<double, 3> scale{std::max(std::abs(starts.front()[0]), 1e-300),
                                        std::max({std::abs(starts.front()[1]), 0.01 * batch_max, 1e-6}),
                                        std::max(std::abs(starts.front()[2]), 0.1 * memory_max)};
      const double* b_data = batch.data();
      const double* m_data = train_memory.data();
      const double* y_data = train_time.data();
      detail::PartSolve<3> solve = detail::solve_part<3>(
          {"a", "b", "m"}, starts, lower, scale, rows, options,
          [&](std::size_t first, std::size_t count, const std::array<double, 3>& s) -> ceres::CostFunction* {
            using F = detail::TrainTimeResiduals;
            return new ceres::AutoDiffCostFunction<F, ceres::DYNAMIC, 3>(
                new F{b_data + first, m_data + first, y_data + first, count, relative, s}, int(count));
          });
      std::vector<std::string> doubts;
      const bool scan_edge = !minima.empty() && minima.front() + 1 == static_cast<std::size_t>(g);
      if (scan_edge) doubts.push_back("the scan over m found its lowest cost at its upper edge");
      if (solve.fit.starts_at_iteration_limit > 0) {
        doubts.push_back(std::to_string(solve.fit.starts_at_iteration_limit) + " solves stopped at the iteration limit of " +
                         std::to_string(options.solver.max_iterations) + " (raise solver.max_iterations)");
      }
      train = solve.fit;
      if (solve.has_estimate && solve.value[2] > 1e3 * memory_max) {
        train.parameters = solve.fit.parameters;
        for (FitParameter& p : train.parameters) p.value = p.standard_error = p.ci95_low = p.ci95_high = kNaN;
        not_identifiable(train, "the train times hardly fall with memory over " + format_number(memory_min) + ".." +
                                    format_number(memory_max) + " MB (the fit drives m to " + format_number(solve.value[2]) +
                                    " MB, beyond 1000 × the largest memory): a and m cannot be separated; profile memories "
                                    "further apart, or check that the times fall as memory grows");
      } else if (solve.has_estimate) {
        train_value = solve.value;
        train_estimated = true;
        train.optimum_may_not_be_global = !doubts.empty();
        train.message = detail::part_message(train, doubts);
      } else {
        for (FitParameter& p : train.parameters) p.value = p.standard_error = p.ci95_low = p.ci95_high = kNaN;
      }
    }
  }

  // ---- T_trans(M) = k1·M^k2 -------------------------------------------------------------------------------
  FitResult& transform = result.transform;
  std::array<double, 2> transform_value{kNaN, kNaN};
  bool transform_estimated = false;
  {
    for (const char* name : {"k1", "k2"}) {
      FitParameter parameter;
      parameter.name = name;
      transform.parameters.push_back(parameter);
    }
    const std::size_t rows = transform_time.size();
    transform.observations = rows;
    transform.free_parameters = 2;
    const std::set<double> memories(transform_memory.begin(), transform_memory.end());
    if (rows == 0) {
      not_identifiable(transform, "the trace has no transform_time_s: k1 and k2 need transform times at two or more memories");
    } else if (memories.size() < 2) {
      not_identifiable(transform, "every transform time was measured at " + format_number(*memories.begin()) +
                                      " MB: k1 and k2 cannot be separated; profile at least two memories");
    } else {
      // Scan over k2 with k1 solved linearly, on memories relative to their geometric mean (no overflow).
      double log_mean = 0;
      for (double memory : transform_memory) log_mean += std::log(memory);
      log_mean /= double(rows);
      const double reference = std::exp(log_mean);
      // The log-log regression's slope and intercept: an extra candidate.
      double sxx = 0, sxy = 0, y_mean = 0;
      for (std::size_t r = 0; r < rows; ++r) y_mean += std::log(transform_time[r]);
      y_mean /= double(rows);
      for (std::size_t r = 0; r < rows; ++r) {
        const double lx = std::log(transform_memory[r]) - log_mean;
        sxx += lx * lx;
        sxy += lx * (std::log(transform_time[r]) - y_mean);
      }
      const double loglog_k2 = sxy / sxx;
      const int g = options.scan_points;
      std::vector<double> k2_grid(static_cast<std::size_t>(g) + 1), cost(static_cast<std::size_t>(g) + 1, std::numeric_limits<double>::infinity()),
          k1_of(static_cast<std::size_t>(g) + 1);
      for (int j = 0; j <= g; ++j) k2_grid[std::size_t(j)] = j < g ? -4.0 + 8.0 * double(j) / double(g - 1) : loglog_k2;
      std::vector<std::size_t> order(k2_grid.size());
      for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return k2_grid[a] < k2_grid[b]; });
      std::vector<double> sorted_cost(order.size());
      for (std::size_t o = 0; o < order.size(); ++o) {
        const std::size_t j = order[o];
        const double k2 = k2_grid[j];
        double sxx_w = 0, sxy_w = 0;
        for (std::size_t r = 0; r < rows; ++r) {
          const double w = weight(transform_time[r]), x = std::pow(transform_memory[r] / reference, k2);
          sxx_w += w * x * x, sxy_w += w * x * transform_time[r];
        }
        const double c = sxx_w > 0 && std::isfinite(sxx_w) ? std::max(0.0, sxy_w / sxx_w) : kNaN;
        double total = 0;
        for (std::size_t r = 0; r < rows; ++r) {
          const double e = c * std::pow(transform_memory[r] / reference, k2) - transform_time[r];
          total += weight(transform_time[r]) * e * e;
        }
        k1_of[j] = c * std::pow(reference, -k2);
        sorted_cost[o] = std::isfinite(total) && std::isfinite(k1_of[j]) ? total : std::numeric_limits<double>::infinity();
      }
      const std::vector<std::size_t> minima = detail::scan_minima(sorted_cost, options.starts);
      std::vector<std::array<double, 2>> starts;
      for (std::size_t o : minima) starts.push_back({k1_of[order[o]], k2_grid[order[o]]});
      if (starts.empty()) starts.push_back({std::exp(y_mean - loglog_k2 * log_mean), loglog_k2});
      const std::array<double, 2> lower{0.0, std::numeric_limits<double>::lowest()};
      const std::array<double, 2> scale{std::max(std::abs(starts.front()[0]), 1e-300), std::max(std::abs(starts.front()[1]), 0.1)};
      const double* m_data = transform_memory.data();
      const double* y_data = transform_time.data();
      detail::PartSolve<2> solve = detail::solve_part<2>(
          {"k1", "k2"}, starts, lower, scale, rows, options,
          [&](std::size_t first, std::size_t count, const std::array<double, 2>& s) -> ceres::CostFunction* {
            using F = detail::TransformTimeResiduals;
            return new ceres::AutoDiffCostFunction<F, ceres::DYNAMIC, 2>(new F{m_data + first, y_data + first, count, relative, s},
                                                                         int(count));
          });
      std::vector<std::string> doubts;
      const std::size_t best_scan = minima.empty() ? 0 : order[minima.front()];
      if (!minima.empty() && (best_scan == 0 || best_scan + 1 == static_cast<std::size_t>(g))) {
        doubts.push_back("the scan over k2 (-4..4) found its lowest cost at its edge");
      }
      if (solve.fit.starts_at_iteration_limit > 0) {
        doubts.push_back(std::to_string(solve.fit.starts_at_iteration_limit) + " solves stopped at the iteration limit of " +
                         std::to_string(options.solver.max_iterations) + " (raise solver.max_iterations)");
      }
      transform = solve.fit;
      if (solve.has_estimate) {
        transform_value = solve.value;
        transform_estimated = true;
        transform.optimum_may_not_be_global = !doubts.empty();
        transform.message = detail::part_message(transform, doubts);
      } else {
        for (FitParameter& p : transform.parameters) p.value = p.standard_error = p.ci95_low = p.ci95_high = kNaN;
      }
    }
  }

  // ---- Predictions, goodness of fit, the pooled report ------------------------------------------------------
  if (train_estimated) {
    std::vector<double> predicted(train_time.size());
    for (std::size_t r = 0; r < train_time.size(); ++r) {
      predicted[r] = train_time_s<double>(batch[r], train_memory[r], train_value[0], train_value[1], train_value[2]);
      result.predicted_train_time_s[train_sample[r]] = predicted[r];
    }
    spotdnn::detail::set_goodness_of_fit(train, train_time, predicted);
    result.profile.a = train_value[0];
    result.profile.b = train_value[1];
    result.profile.m = train_value[2];
  }
  if (transform_estimated) {
    std::vector<double> predicted(transform_time.size());
    for (std::size_t r = 0; r < transform_time.size(); ++r) {
      predicted[r] = transform_time_s<double>(transform_memory[r], transform_value[0], transform_value[1]);
      result.predicted_transform_time_s[transform_sample[r]] = predicted[r];
    }
    spotdnn::detail::set_goodness_of_fit(transform, transform_time, predicted);
    result.profile.k1 = transform_value[0];
    result.profile.k2 = transform_value[1];
  }
  result.status = detail::pooled_status(train.status, transform.status);
  result.message = "train time: " + train.message + "; transform time: " + transform.message;
  for (const FitResult* part : {&train, &transform}) {
    for (const FitParameter& p : part->parameters) result.parameters.push_back(p);
    result.observations += part->observations;
    result.iterations += part->iterations;
    result.starts += part->starts;
    result.starts_at_best += part->starts_at_best;
    result.starts_at_iteration_limit += part->starts_at_iteration_limit;
    result.optimum_may_not_be_global = result.optimum_may_not_be_global || part->optimum_may_not_be_global;
  }
  result.free_parameters = 5;
  result.final_cost = train.final_cost + transform.final_cost;
  result.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  train.solve_time_s = transform.solve_time_s = result.solve_time_s;
  return result;
}

}  // namespace spotdnn::serverless
