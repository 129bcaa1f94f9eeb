#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/throughput_fit.hpp Fits the throughput side of the model (per-type iteration time, B_req, B_ps,
/// α1, β1; docs/model.md eqs. (1)–(4)) to the measured PS update rate of homogeneous and mixed clusters.
///
/// Robustness: P(n) is clamped to [0, 1] and B_wk(n) switches formula at B_req = B_ps/n (docs/model.md eqs. (1)–(2)),
/// so the cost is flat in α1, β1 and B_ps wherever no measured cluster is in the contended regime, and
/// has kinks at the switch points. The fit therefore (a) keeps every parameter inside a physical box
/// (times and bandwidths > 0, α1 ≥ 0, compute time T_comp,k > 0: a step that makes it ≤ 0 is rejected),
/// (b) starts Levenberg–Marquardt from a grid of (α1, β1) pairs and bandwidth factors around the given
/// values, runs every start to its own convergence (or the iteration limit, counted as such) and keeps the
/// lowest cost over all starts, (c) reports how many starts reached that cost (within
/// ThroughputFitOptions::best_cost_tolerance) and flags optimum_may_not_be_global, with the reason in the
/// message, when only one did, when every start reaching it lies on the edge of the grid (the minimum
/// may lie beyond it), or when solves hit the iteration limit, and (d) reports not_identifiable, naming them, for free parameters
/// the data does not constrain at the estimate (zero Jacobian column, e.g. α1 when every cluster has
/// P clamped) or cannot separate (rank-deficient Jacobian), with the clusters that would identify them.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ceres/ceres.h>
#include <ceres/dynamic_autodiff_cost_function.h>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/fit/solver.hpp"
#include "spotdnn/fit/traces.hpp"
#include "spotdnn/model/contention.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {

/// Options of fit_throughput.
struct ThroughputFitOptions {
  /// Names of the parameters to estimate; the rest keep the workload's and catalog's values.
  /// "alpha1", "beta1", "required_bandwidth_bytes_per_s" (B_req), "ps_bandwidth_bytes_per_s" (B_ps),
  /// "iteration_time_s[TYPE]" (T_prof of a type profiled by iteration time), "compute_time_s[TYPE]" (a type
  /// profiled by compute time), or "iteration_time_s" alone for the time of every type in the trace.
  /// S is always given.
  std::vector<std::string> free_parameters;
  /// Extra starts: this many values per axis of α1 (0.05 … 2) and β1 (when free), times this many
  /// bandwidth factors (¼ … 4 × given, when B_req or B_ps is free), on top of the given values.
  int grid_points_per_axis = 10;
  /// Starts whose final cost is at most best·(1 + this) + 1e-12·(number of samples) reached the best cost
  /// (the absolute part: a relative rate error of about 1e-6 per sample, for fits that are exact).
  double best_cost_tolerance = 1e-6;
  SolverSettings solver;
};

/// One local solve of fit_throughput's multi-start: where it started and how it ended.
struct ThroughputFitStart {
  double alpha1 = 0;            ///< α1 at the start
  double beta1 = 0;             ///< β1 at the start
  double bandwidth_factor = 1;  ///< the free bandwidths' factor on their given values at the start
  bool given = false;           ///< the given values on every axis (the first start)
  bool on_grid_edge = false;    ///< the first or last grid value on some free axis
  bool solved = false;          ///< false: the start makes the model undefined, or the solver failed
  bool hit_iteration_limit = false;  ///< the solve stopped at SolverSettings::max_iterations
  double final_cost = std::numeric_limits<double>::quiet_NaN();  ///< ½·Σ relative residual²
  int iterations = 0;
};

/// fit_throughput's answer: the report (parameters in the order alpha1, beta1, required_bandwidth_bytes_per_s,
/// ps_bandwidth_bytes_per_s, then one time per type of the trace; held ones have free = false), the workload
/// and catalog with the estimates written in (unchanged when the status is not converged/no_convergence),
/// and the fitted update rate of every sample.
struct ThroughputFitResult : FitResult {
  Workload workload;
  Catalog catalog;
  std::vector<double> predicted_iterations_per_s;
  std::vector<ThroughputFitStart> start_outcomes;  ///< every start, the given values first, then the grid
};

namespace detail {

struct ThroughputTerm {
  int parameter;  ///< index of the type's time among the parameters
  double count, gpus, pcie_bandwidth_bytes_per_s;
  bool profiled;  ///< the parameter is T_prof (compute time derived, docs/model.md eq. (3)), else T_comp
};

/// Relative residual (Σ_i 1/T_i − measured)/measured of one cluster; parameter k is x[k][0]·scale[k].
/// Returns false (step rejected) when a compute time would not be positive.
/// @note docs/model.md eqs. (1)–(4).
struct ThroughputResidual {
  const double param_bytes;
  const double workers;
  const double measured_iterations_per_s;
  const std::vector<ThroughputTerm> terms;
  const std::vector<double> scale;

  template <typename T>
  bool operator()(T const* const* x, T* residual) const {
    const T alpha1 = x[0][0] * scale[0];
    const T beta1 = x[1][0] * scale[1];
    const T required = x[2][0] * scale[2];
    const T ps = x[3][0] * scale[3];
    const T n(workers);
    const T s(param_bytes);
    const T probability = contention_probability(n, alpha1, beta1);
    const T bandwidth = worker_bandwidth_bytes_per_s(n, ps, required, probability);
    T rate(0);
    for (const ThroughputTerm& term : terms) {
      const std::size_t k = std::size_t(term.parameter);
      const T time = x[k][0] * scale[k];
      const T g(term.gpus), pcie(term.pcie_bandwidth_bytes_per_s);
      const T compute = term.profiled ? compute_time_from_profile_s(time, s, required, g, pcie) : time;
      if (!(compute > T(0))) return false;
      rate += T(term.count) / iteration_time_s(compute, s, bandwidth, g, pcie);
    }
    residual[0] = (rate - T(measured_iterations_per_s)) / T(measured_iterations_per_s);
    return true;
  }
};

}  // namespace detail

/// Fits the chosen parameters to `trace` (docs/model.md eqs. (1)–(4); see the file comment for how the clamps are
/// handled). Throws spotdnn::invalid_argument for an invalid workload or catalog, an unknown free-parameter
/// name, or a sample whose cluster uses an instance type the catalog lacks or the workload does not profile
/// (named with FILE:LINE).
[[nodiscard]] inline ThroughputFitResult fit_throughput(const ThroughputTrace& trace, const Workload& workload,
                                                        const Catalog& catalog, const ThroughputFitOptions& options) {
  constexpr std::string_view fn = "fit_throughput";
  validate_throughput_trace(trace);
  workload.validate();
  catalog.validate();
  if (options.grid_points_per_axis < 1) {
    detail::fail(fn, "options.grid_points_per_axis", options.grid_points_per_axis, "must be at least 1");
  }
  if (!(options.best_cost_tolerance >= 0) || !std::isfinite(options.best_cost_tolerance)) {
    detail::fail(fn, "options.best_cost_tolerance", options.best_cost_tolerance, "must be a finite number >= 0");
  }

  // Parameters: 4 shared, then the time of every type the trace uses (first-use order).
  std::vector<std::string> names = {"alpha1", "beta1", "required_bandwidth_bytes_per_s", "ps_bandwidth_bytes_per_s"};
  std::vector<double> value = {workload.contention.alpha1, workload.contention.beta1,
                               workload.required_bandwidth_bytes_per_s, catalog.parameter_server.bandwidth_bytes_per_s};
  std::vector<std::string> type_of_parameter(4);
  std::vector<bool> profiled_parameter(4, false);
  std::vector<std::vector<detail::ThroughputTerm>> terms(trace.samples.size());
  std::vector<double> workers(trace.samples.size(), 0);
  for (std::size_t i = 0; i < trace.samples.size(); ++i) {
    const ThroughputSample& sample = trace.samples[i];
    const std::string at = detail::trace_location(trace.source, sample.line, i);
    for (const auto& [type, count] : sample.cluster.counts()) {
      const auto k = catalog.index_of(type);
      if (!k) {
        detail::fail(fn, at + ": cluster", detail::quoted(type), "unknown instance type (the catalog has: " + catalog.type_names() + ")");
      }
      const auto profile = workload.profiles.find(type);
      if (profile == workload.profiles.end()) {
        detail::fail(fn, at + ": cluster", detail::quoted(type), "the workload has no profile for this instance type");
      }
      const bool profiled = profile->second.iteration_time_s.has_value();
      const std::string name = std::string(profiled ? "iteration_time_s[" : "compute_time_s[") + type + "]";
      auto found = std::find(names.begin(), names.end(), name);
      if (found == names.end()) {
        names.push_back(name);
        value.push_back(profiled ? *profile->second.iteration_time_s : *profile->second.compute_time_s);
        type_of_parameter.push_back(type);
        profiled_parameter.push_back(profiled);
        found = names.end() - 1;
      }
      const InstanceType& instance = catalog.instance_types[*k];
      terms[i].push_back({int(found - names.begin()), double(count), double(instance.gpus),
                          instance.pcie_bandwidth_bytes_per_s, profiled});
      workers[i] += count;
    }
  }
  const std::size_t n_parameters = names.size();
  std::vector<bool> free(n_parameters, false);
  for (const std::string& wanted : options.free_parameters) {
    if (wanted == "iteration_time_s") {
      for (std::size_t k = 4; k < n_parameters; ++k) free[k] = true;
      continue;
    }
    const auto found = std::find(names.begin(), names.end(), wanted);
    if (found == names.end()) {
      std::string known = "alpha1, beta1, required_bandwidth_bytes_per_s, ps_bandwidth_bytes_per_s, iteration_time_s";
      for (std::size_t k = 4; k < n_parameters; ++k) known += ", " + names[k];
      detail::fail(fn, "options.free_parameters", detail::quoted(wanted), "unknown parameter (known for this trace: " + known + ")");
    }
    free[std::size_t(found - names.begin())] = true;
  }

  ThroughputFitResult result;
  result.workload = workload;
  result.catalog = catalog;
  const std::size_t m = trace.samples.size();
  std::size_t p = 0;
  for (std::size_t k = 0; k < n_parameters; ++k) {
    FitParameter parameter;
    parameter.name = names[k];
    parameter.value = value[k];
    parameter.free = free[k];
    if (free[k]) {
      ++p;
      parameter.value = std::numeric_limits<double>::quiet_NaN();
    }
    result.parameters.push_back(parameter);
  }
  result.observations = m;
  result.free_parameters = p;
  if (p == 0) detail::fail(fn, "options.free_parameters", "[]", "name at least one parameter to fit");
  auto unidentifiable = [&](std::string why) {
    result.status = FitStatus::not_identifiable;
    result.message = std::move(why);
    return result;
  };
  if (m < p) {
    return unidentifiable(std::to_string(p) + " free parameters need at least as many measured clusters (the trace has " +
                          std::to_string(m) + ")");
  }

  // Scaled parameters x_k = value_k / scale_k, one block each; physical lower bounds.
  std::vector<double> scale(n_parameters, 1.0);
  for (std::size_t k = 0; k < n_parameters; ++k) scale[k] = std::abs(value[k]) > 0 ? std::abs(value[k]) : 1.0;
  std::vector<double> x(n_parameters);
  for (std::size_t k = 0; k < n_parameters; ++k) x[k] = value[k] / scale[k];
  ceres::Problem problem;
  for (std::size_t i = 0; i < m; ++i) {
    using F = detail::ThroughputResidual;
    auto* cost = new ceres::DynamicAutoDiffCostFunction<F, 8>(
        new F{workload.param_bytes, workers[i], trace.samples[i].iterations_per_s, terms[i], scale});
    std::vector<double*> blocks;
    for (std::size_t k = 0; k < n_parameters; ++k) {
      cost->AddParameterBlock(1);
      blocks.push_back(&x[k]);
    }
    cost->SetNumResiduals(1);
    problem.AddResidualBlock(cost, nullptr, blocks);
  }
  std::vector<double> lower(n_parameters, std::numeric_limits<double>::lowest());
  lower[0] = 0.0;  // α1 ≥ 0: contention does not fall as workers are added
  for (std::size_t k = 2; k < n_parameters; ++k) lower[k] = 1e-9 * scale[k];
  for (std::size_t k = 0; k < n_parameters; ++k) {
    if (!free[k]) {
      problem.SetParameterBlockConstant(&x[k]);
    } else if (lower[k] != std::numeric_limits<double>::lowest()) {
      problem.SetParameterLowerBound(&x[k], 0, lower[k] / scale[k]);
    }
  }

  // Starts: the given values, then a grid over (α1, β1) and bandwidth factors. Index 0 of each axis is the
  // given value; 1 and g are the grid's edges.
  std::vector<std::vector<double>> starts{value};
  std::vector<ThroughputFitStart> outcomes(1);
  outcomes[0].alpha1 = value[0];
  outcomes[0].beta1 = value[1];
  outcomes[0].given = true;
  std::vector<double> alphas{value[0]}, betas{value[1]}, factors{1.0};
  const int g = options.grid_points_per_axis;
  double n_min = std::numeric_limits<double>::infinity(), n_max = 0;
  for (double n : workers) n_min = std::min(n_min, n), n_max = std::max(n_max, n);
  if (free[0]) {
    for (int a = 0; a < g; ++a) alphas.push_back(0.05 * std::pow(40.0, g > 1 ? double(a) / (g - 1) : 0.0));  // 0.05 … 2
  }
  if (free[1]) {
    // β1 so that P(n) = α1·√n + β1 crosses 0..1 somewhere in the measured worker range.
    for (int b = 0; b < g; ++b) betas.push_back(-2.0 * std::sqrt(n_max) + (2.0 * std::sqrt(n_max) + 1.0) * (g > 1 ? double(b) / (g - 1) : 0.5));
  }
  if (free[2] || free[3]) {
    for (int f = 0; f < g; ++f) factors.push_back(std::pow(4.0, g > 1 ? 2.0 * f / (g - 1) - 1.0 : 0.0));  // ¼ … 4
  }
  auto edge = [g](std::size_t index) { return index == 1 || index == std::size_t(g); };
  for (std::size_t ia = 0; ia < alphas.size(); ++ia) {
    for (std::size_t ib = 0; ib < betas.size(); ++ib) {
      for (std::size_t jf = 0; jf < factors.size(); ++jf) {
        std::vector<double> start = value;
        start[0] = std::max(alphas[ia], 0.0);
        start[1] = betas[ib];
        if (free[2]) start[2] *= factors[jf];
        if (free[3]) start[3] *= factors[jf];
        starts.push_back(std::move(start));
        ThroughputFitStart outcome;
        outcome.alpha1 = std::max(alphas[ia], 0.0);
        outcome.beta1 = betas[ib];
        outcome.bandwidth_factor = factors[jf];
        outcome.given = ia == 0 && ib == 0 && jf == 0;
        outcome.on_grid_edge = edge(ia) || edge(ib) || edge(jf);
        outcomes.push_back(outcome);
      }
    }
  }

  const auto started = std::chrono::steady_clock::now();
  const ceres::Solver::Options solver_options = detail::ceres_options(options.solver);
  std::optional<ceres::Solver::Summary> best;
  std::vector<double> best_x;
  // Every start runs to its own convergence (or the iteration limit); the lowest cost over all of them wins.
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::vector<double>& start = starts[i];
    for (std::size_t k = 0; k < n_parameters; ++k) x[k] = (free[k] ? std::max(start[k], lower[k]) : value[k]) / scale[k];
    double initial_cost = 0;
    if (!problem.Evaluate(ceres::Problem::EvaluateOptions(), &initial_cost, nullptr, nullptr, nullptr)) continue;
    ceres::Solver::Summary summary;
    ceres::Solve(solver_options, &problem, &summary);
    ++result.starts;
    const bool usable = summary.termination_type == ceres::CONVERGENCE || summary.termination_type == ceres::NO_CONVERGENCE;
    if (!usable) continue;
    ThroughputFitStart& outcome = outcomes[i];
    outcome.solved = true;
    outcome.hit_iteration_limit = summary.termination_type == ceres::NO_CONVERGENCE;
    outcome.final_cost = summary.final_cost;
    outcome.iterations = int(summary.iterations.size()) - 1;
    result.starts_at_iteration_limit += outcome.hit_iteration_limit;
    if (!best || summary.final_cost < best->final_cost) {
      best = summary;
      best_x = x;
    }
  }
  result.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.start_outcomes = outcomes;
  if (!best) {
    result.status = FitStatus::failure;
    result.message = "the solver failed from every start (the given values make a compute time non-positive?)";
    return result;
  }
  x = best_x;
  result.iterations = int(best->iterations.size()) - 1;
  result.final_cost = best->final_cost;
  result.status = detail::status_of(*best);

  // How sure the best cost is the lowest the grid's basins reach.
  const double reach = best->final_cost * (1.0 + options.best_cost_tolerance) + 1e-12 * double(m);
  bool interior_at_best = false;
  for (const ThroughputFitStart& outcome : outcomes) {
    if (!outcome.solved || !(outcome.final_cost <= reach)) continue;
    ++result.starts_at_best;
    interior_at_best = interior_at_best || !outcome.on_grid_edge;
  }
  std::string doubt;
  auto add_doubt = [&doubt](const std::string& why) { doubt += (doubt.empty() ? "" : "; ") + why; };
  if (result.starts_at_best == 1 && result.starts > 1) {
    add_doubt("only 1 of " + std::to_string(result.starts) + " starts reached the best cost");
  }
  if (!interior_at_best) {
    add_doubt("every start reaching the best cost lies on the edge of the start grid (the minimum may lie beyond it: "
              "widen or refine the grid)");
  }
  if (result.starts_at_iteration_limit > 0) {
    add_doubt(std::to_string(result.starts_at_iteration_limit) + " of " + std::to_string(result.starts) +
              " solves stopped at the iteration limit of " + std::to_string(options.solver.max_iterations) +
              " (raise solver.max_iterations)");
  }
  result.optimum_may_not_be_global = !doubt.empty();

  std::vector<double*> free_blocks;
  std::vector<std::string> free_names;
  for (std::size_t k = 0; k < n_parameters; ++k) {
    if (free[k]) free_blocks.push_back(&x[k]), free_names.push_back(names[k]);
  }
  const detail::UnitCovariance covariance = detail::unit_covariance(problem, free_blocks, free_names);
  if (!covariance.ok) {
    // What data would identify the parameters the covariance check names.
    const auto named = [&](std::string_view part) { return covariance.why.find(part) != std::string::npos; };
    std::string hint;
    const auto add = [&](const std::string& text) { hint += (hint.empty() ? "; they need " : ", and ") + text; };
    if (named("alpha1") || named("beta1")) {
      add("clusters that contend for the parameter server (contention probability P(n) between 0 and 1, "
          "docs/model.md eq. (1)) at two or more sizes");
    }
    if (named("required_bandwidth_bytes_per_s") || named("ps_bandwidth_bytes_per_s")) {
      add("clusters on both sides of the switch B_req = B_ps/n (docs/model.md eq. (2))");
    }
    if (named("iteration_time_s[") || named("compute_time_s[")) {
      add("clusters with each named type in different mixes or sizes (or leave the time out of free_parameters)");
    }
    return unidentifiable(covariance.why + hint);
  }

  const double residual_variance = m > p ? 2.0 * best->final_cost / double(m - p) : std::numeric_limits<double>::quiet_NaN();
  const double t = detail::student_t_975(m - p);
  Eigen::Index c = 0;
  for (std::size_t k = 0; k < n_parameters; ++k) {
    FitParameter& parameter = result.parameters[k];
    parameter.value = x[k] * scale[k];
    if (!free[k]) continue;
    parameter.at_bound = x[k] * scale[k] <= lower[k] * (1 + 1e-9) + 1e-12;
    detail::set_interval(parameter, covariance.matrix(c, c) * scale[k] * scale[k], residual_variance, t);
    ++c;
  }

  // Write the estimates back.
  result.workload.contention.alpha1 = result.parameters[0].value;
  result.workload.contention.beta1 = result.parameters[1].value;
  result.workload.required_bandwidth_bytes_per_s = result.parameters[2].value;
  result.catalog.parameter_server.bandwidth_bytes_per_s = result.parameters[3].value;
  for (std::size_t k = 4; k < n_parameters; ++k) {
    TypeProfile& profile = result.workload.profiles.at(type_of_parameter[k]);
    (profiled_parameter[k] ? profile.iteration_time_s : profile.compute_time_s) = result.parameters[k].value;
    profile.estimated_from.clear();  // fitted to measurements: no longer an estimate
  }

  std::vector<double> observed(m);
  result.predicted_iterations_per_s.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    observed[i] = trace.samples[i].iterations_per_s;
    std::vector<const double*> pointers(n_parameters);
    for (std::size_t k = 0; k < n_parameters; ++k) pointers[k] = &x[k];
    double r = 0;
    const detail::ThroughputResidual f{workload.param_bytes, workers[i], observed[i], terms[i], scale};
    f(pointers.data(), &r);
    result.predicted_iterations_per_s[i] = observed[i] * (1.0 + r);
  }
  detail::set_goodness_of_fit(result, observed, result.predicted_iterations_per_s);

  std::string bound_note;
  for (const auto& parameter : result.parameters) {
    if (parameter.free && parameter.at_bound) bound_note += (bound_note.empty() ? "" : ", ") + parameter.name;
  }
  result.message = std::string(result.status == FitStatus::converged ? "converged" : "stopped at the iteration limit") +
                   " after " + std::to_string(result.iterations) + " iterations (best of " + std::to_string(result.starts) +
                   " starts, " + std::to_string(result.starts_at_best) +
                   " of them reaching the best cost); residuals are relative to the measured rate";
  if (result.optimum_may_not_be_global) result.message += "; the global optimum may not have been found: " + doubt;
  if (m == p) result.message += "; as many clusters as free parameters: no error bars";
  if (!bound_note.empty()) result.message += "; at a physical bound: " + bound_note;
  return result;
}

}  // namespace spotdnn
