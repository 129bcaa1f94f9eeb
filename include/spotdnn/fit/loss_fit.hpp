#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/loss_fit.hpp Fits the loss-model coefficients γ (seed or CC form, design §4 eq. 6) to loss
/// traces of one or more runs with Ceres: bounds, robust losses, late-point weights, multi-start, and
/// honest error bars.

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
#include <unordered_map>
#include <utility>
#include <vector>

#include <ceres/ceres.h>
#include <Eigen/Core>
#include <Eigen/Cholesky>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/fit/solver.hpp"
#include "spotdnn/fit/traces.hpp"
#include "spotdnn/model/loss_model.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {

/// Robust loss ρ applied to each squared residual.
enum class RobustLoss {
  none,    ///< plain least squares
  huber,   ///< ceres::HuberLoss(scale): quadratic inside `scale`, linear outside
  cauchy,  ///< ceres::CauchyLoss(scale): log(1 + (r/scale)²), outliers barely count
};

constexpr std::string_view to_string(RobustLoss loss) {
  switch (loss) {
    case RobustLoss::none: return "none";
    case RobustLoss::huber: return "huber";
    case RobustLoss::cauchy: return "cauchy";
  }
  return "none";
}

constexpr std::optional<RobustLoss> robust_loss_from_string(std::string_view text) {
  for (RobustLoss l : {RobustLoss::none, RobustLoss::huber, RobustLoss::cauchy}) {
    if (to_string(l) == text) return l;
  }
  return std::nullopt;
}

/// Options of fit_loss_model.
struct LossFitOptions {
  LossForm form = LossForm::seed;          ///< 4 coefficients (seed) or 5 (cc)
  RobustLoss robust_loss = RobustLoss::none;
  double robust_scale = 0.1;               ///< loss units: residuals well beyond this are down-weighted
  /// Favour late points (Optimus-style): sample i of run r gets weight 1 + late_weight·j_i / max_j(r).
  double late_weight = 0;
  /// Fit relative residuals (f − y)/y instead of f − y: right when the noise grows with the loss (a fixed
  /// percentage), which is typical of mini-batch loss curves. The intervals assume the residuals chosen
  /// here have one common variance.
  bool relative_residuals = false;
  /// Keep the model physical: j + γ1 > 0 for every sample, asymptote γ4 (γ5) ≥ 0, and in the CC form
  /// R + γ4 > 0 for every run. γ2 and γ3 are free (γ2 < 0 is common: larger batches, fewer updates).
  bool physical_bounds = true;
  /// Local solves started from the best distinct points of a variable-projection grid over γ1 (and γ4 of
  /// the CC form), where the remaining coefficients enter linearly and are solved exactly.
  int starts = 3;
  std::vector<double> initial_gamma;       ///< an extra start, when given (gamma_count(form) values)
  SolverSettings solver;
};

/// fit_loss_model's answer: the fit report and the fitted loss model (γ NaN unless the status is
/// converged or no_convergence). Parameters are named gamma1..gamma4 (gamma5), in order.
struct LossFitResult : FitResult {
  LossModel model;
};

namespace detail {

struct LossPoint {
  double iteration, workers, weighted_batch, convergence_coefficient, loss, sqrt_weight;
};

/// Residuals sqrt(w_i)·(f(j_i) − loss_i) of `count` consecutive points; γ_k = θ_k·scale_k, so that every
/// optimised θ_k is O(1). @note design §4 eq. 6.
template <int K>
struct LossResiduals {
  const LossPoint* const points;
  const int count;
  const std::array<double, K> scale;

  template <typename T>
  bool operator()(const T* theta, T* residuals) const {
    T gamma[K];
    for (int k = 0; k < K; ++k) gamma[k] = theta[k] * scale[std::size_t(k)];
    for (int i = 0; i < count; ++i) {
      const LossPoint& p = points[i];
      T f;
      if constexpr (K == 4) {
        f = loss_seed_form(T(p.iteration), T(p.workers), T(p.weighted_batch), gamma);
      } else {
        f = loss_cc_form(T(p.iteration), T(p.workers), T(p.weighted_batch), T(p.convergence_coefficient), gamma);
      }
      residuals[i] = T(p.sqrt_weight) * (f - T(p.loss));
    }
    return true;
  }
};

struct LossStart {
  double ssr;
  std::vector<double> gamma;
};

/// Variable projection on a grid: for fixed γ1 (and γ4 in the CC form) the loss is linear in
/// (γ2, γ3, asymptote); solve those by weighted least squares and rank the grid by residual.
inline std::vector<LossStart> loss_grid_starts(const std::vector<LossPoint>& points, LossForm form,
                                               const std::vector<double>& lower, bool bounded) {
  double j_min = std::numeric_limits<double>::infinity(), j_max = 0, r_min = std::numeric_limits<double>::infinity();
  for (const auto& p : points) {
    j_min = std::min(j_min, p.iteration);
    j_max = std::max(j_max, p.iteration);
    r_min = std::min(r_min, p.convergence_coefficient);
  }
  const double span = std::max(j_max - j_min, 1.0);
  const double gamma1_floor = -j_min + 1e-6 * span;
  const std::vector<double> shifts = form == LossForm::seed
                                        ? std::vector<double>{0.0}
                                        : std::vector<double>{1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0};
  const std::size_t stride = std::max<std::size_t>(1, points.size() / 4000);
  std::vector<LossStart> grid;
  for (double shift : shifts) {
    const double gamma4 = -r_min + shift;  // CC only
    for (int u = 0; u <= 50; ++u) {
      const double gamma1 = gamma1_floor + span * std::pow(10.0, -4.0 + 5.0 * u / 50.0);
      Eigen::Matrix3d a = Eigen::Matrix3d::Zero();
      Eigen::Vector3d b = Eigen::Vector3d::Zero();
      double yy = 0;
      for (std::size_t i = 0; i < points.size(); i += stride) {
        const LossPoint& p = points[i];
        const double spread = form == LossForm::seed ? p.workers : (p.convergence_coefficient + gamma4) * p.workers;
        const double h = std::sqrt(spread) / (p.iteration + gamma1);
        const Eigen::Vector3d x(p.weighted_batch * h, h, 1.0);
        const double w = p.sqrt_weight * p.sqrt_weight;
        a.noalias() += w * x * x.transpose();
        b += w * p.loss * x;
        yy += w * p.loss * p.loss;
      }
      // A tiny ridge keeps the 3×3 solve defined when the batches coincide (caught earlier as not identifiable).
      const Eigen::Vector3d beta = (a + 1e-12 * a.trace() * Eigen::Matrix3d::Identity()).ldlt().solve(b);
      const double ssr = yy - beta.dot(b);
      if (!std::isfinite(ssr)) continue;
      std::vector<double> gamma{gamma1, beta[0], beta[1], beta[2]};
      if (form == LossForm::cc) gamma.insert(gamma.begin() + 3, gamma4);
      if (bounded) {
        for (std::size_t k = 0; k < gamma.size(); ++k) gamma[k] = std::max(gamma[k], lower[k]);
      }
      grid.push_back({ssr, std::move(gamma)});
    }
  }
  std::sort(grid.begin(), grid.end(), [](const LossStart& x, const LossStart& y) { return x.ssr < y.ssr; });
  return grid;
}

}  // namespace detail

/// Fits γ of `options.form` to every sample of `trace`, pooled over its runs (design §4 eq. 6).
///
/// Throws spotdnn::invalid_argument for a bad trace (see validate_loss_trace) or bad options. Returns
/// status not_identifiable, with NaN coefficients, when the trace cannot determine γ: all runs share one
/// weighted batch (γ2 and γ3 then enter only as γ2·b_w + γ3), the CC form with a single convergence
/// coefficient (γ4 then only rescales γ2, γ3), no more samples than coefficients, or a rank-deficient
/// Jacobian at the estimate. Standard errors use the Ceres covariance scaled by 2·cost/(m − p);
/// 95% intervals use Student's t with m − p degrees of freedom.
[[nodiscard]] inline LossFitResult fit_loss_model(const LossTrace& trace, const LossFitOptions& options = {}) {
  constexpr std::string_view fn = "fit_loss_model";
  validate_loss_trace(trace);
  if (options.robust_loss != RobustLoss::none) detail::require_positive(fn, "options.robust_scale", options.robust_scale);
  detail::require_non_negative(fn, "options.late_weight", options.late_weight);
  if (options.starts < 1) detail::fail(fn, "options.starts", options.starts, "must be at least 1");
  const LossForm form = options.form;
  const std::size_t p = gamma_count(form);
  if (!options.initial_gamma.empty() && options.initial_gamma.size() != p) {
    detail::fail(fn, "options.initial_gamma", "[" + std::to_string(options.initial_gamma.size()) + " values]",
                 "the " + std::string(to_string(form)) + " form needs " + std::to_string(p));
  }

  LossFitResult result;
  result.model.form = form;
  result.model.gamma.assign(p, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t k = 0; k < p; ++k) {
    FitParameter parameter;
    parameter.name = "gamma" + std::to_string(k + 1);
    result.parameters.push_back(parameter);
  }
  const std::size_t m = trace.samples.size();
  result.observations = m;
  result.free_parameters = p;

  // Points, weights, and what the trace can identify.
  std::unordered_map<std::string, double> run_last_iteration;
  for (const auto& s : trace.samples) {
    double& last = run_last_iteration[s.run];
    last = std::max(last, s.iteration);
  }
  std::vector<detail::LossPoint> points;
  points.reserve(m);
  std::set<double> batches, coefficients;
  double j_min = std::numeric_limits<double>::infinity(), j_max = 0, r_min = std::numeric_limits<double>::infinity();
  for (const auto& s : trace.samples) {
    const double r = s.convergence_coefficient ? *s.convergence_coefficient : homogeneous_convergence_coefficient(s.workers);
    const double last = run_last_iteration[s.run];
    double weight = 1.0 + (last > 0 ? options.late_weight * s.iteration / last : 0.0);
    if (options.relative_residuals) {
      if (!(s.loss > 0)) {
        detail::fail(fn, detail::trace_location(trace.source, s.line, points.size()) + ": loss", s.loss,
                     "relative residuals need a positive loss");
      }
      weight /= s.loss * s.loss;
    }
    points.push_back({s.iteration, s.workers, s.weighted_batch, r, s.loss, std::sqrt(weight)});
    batches.insert(s.weighted_batch);
    coefficients.insert(r);
    j_min = std::min(j_min, s.iteration);
    j_max = std::max(j_max, s.iteration);
    r_min = std::min(r_min, r);
  }
  if (batches.size() < 2) {
    result.status = FitStatus::not_identifiable;
    result.message = "every run has weighted batch " + detail::format_number(*batches.begin()) +
                     ": gamma2 and gamma3 enter only as gamma2*b_w + gamma3 and cannot be separated; profile "
                     "clusters with at least two different weighted batches";
    return result;
  }
  if (form == LossForm::cc && coefficients.size() < 2) {
    result.status = FitStatus::not_identifiable;
    result.message = "every run has convergence coefficient " + detail::format_number(*coefficients.begin()) +
                     ": the CC form's gamma4 then only rescales gamma2 and gamma3; profile clusters with "
                     "different R (e.g. different worker counts) or use the seed form";
    return result;
  }
  if (m <= p) {
    result.status = FitStatus::not_identifiable;
    result.message = std::to_string(p) + " coefficients need more than " + std::to_string(p) + " samples (the trace has " +
                     std::to_string(m) + ")";
    return result;
  }

  // Bounds (design §4 eq. 6 must stay finite and decreasing towards a non-negative asymptote).
  const double span = std::max(j_max - j_min, 1.0);
  constexpr double kFree = std::numeric_limits<double>::lowest();
  std::vector<double> lower(p, kFree);
  if (options.physical_bounds) {
    lower[0] = -j_min + 1e-6 * span;
    lower[p - 1] = 0.0;
    if (form == LossForm::cc) lower[3] = -r_min + 1e-9;
  }

  const auto started = std::chrono::steady_clock::now();
  std::vector<std::vector<double>> starts;
  if (!options.initial_gamma.empty()) {
    std::vector<double> given = options.initial_gamma;
    for (std::size_t k = 0; k < p; ++k) given[k] = std::max(given[k], lower[k]);
    starts.push_back(std::move(given));
  }
  const std::vector<detail::LossStart> grid = detail::loss_grid_starts(points, form, lower, options.physical_bounds);
  for (const auto& candidate : grid) {
    if (int(starts.size()) >= options.starts + (options.initial_gamma.empty() ? 0 : 1)) break;
    bool distinct = true;
    for (const auto& s : starts) {
      const double a = s[0] - lower[0] + 1e-12 * span, b = candidate.gamma[0] - lower[0] + 1e-12 * span;
      if (std::abs(std::log(a / b)) < std::log(1.5)) distinct = false;
    }
    if (distinct) starts.push_back(candidate.gamma);
  }
  if (starts.empty()) {
    result.status = FitStatus::failure;
    result.message = "no finite starting point: the model cannot be evaluated on this trace";
    return result;
  }

  // One problem, solved from every start; parameters scaled by the magnitude of the first start.
  std::array<double, 5> scale{1, 1, 1, 1, 1};
  for (std::size_t k = 0; k < p; ++k) scale[k] = std::abs(starts.front()[k]) > 1e-300 ? std::abs(starts.front()[k]) : 1.0;
  std::array<double, 5> theta{};
  ceres::Problem::Options problem_options;
  ceres::Problem problem(problem_options);
  const int chunk = options.robust_loss == RobustLoss::none ? 256 : 1;  // ρ applies per residual block
  for (std::size_t first = 0; first < m; first += std::size_t(chunk)) {
    const int count = int(std::min<std::size_t>(std::size_t(chunk), m - first));
    ceres::LossFunction* rho = nullptr;
    if (options.robust_loss == RobustLoss::huber) rho = new ceres::HuberLoss(options.robust_scale);
    if (options.robust_loss == RobustLoss::cauchy) rho = new ceres::CauchyLoss(options.robust_scale);
    ceres::CostFunction* cost = nullptr;
    if (form == LossForm::seed) {
      using F = detail::LossResiduals<4>;
      cost = new ceres::AutoDiffCostFunction<F, ceres::DYNAMIC, 4>(
          new F{points.data() + first, count, {scale[0], scale[1], scale[2], scale[3]}}, count);
    } else {
      using F = detail::LossResiduals<5>;
      cost = new ceres::AutoDiffCostFunction<F, ceres::DYNAMIC, 5>(
          new F{points.data() + first, count, {scale[0], scale[1], scale[2], scale[3], scale[4]}}, count);
    }
    problem.AddResidualBlock(cost, rho, theta.data());
  }
  for (std::size_t k = 0; k < p; ++k) {
    if (lower[k] != kFree) problem.SetParameterLowerBound(theta.data(), int(k), lower[k] / scale[k]);
  }

  const ceres::Solver::Options solver_options = detail::ceres_options(options.solver);
  std::optional<ceres::Solver::Summary> best;
  std::array<double, 5> best_theta{};
  for (const auto& start : starts) {
    for (std::size_t k = 0; k < p; ++k) theta[k] = start[k] / scale[k];
    ceres::Solver::Summary summary;
    ceres::Solve(solver_options, &problem, &summary);
    ++result.starts;
    const bool usable = summary.termination_type == ceres::CONVERGENCE || summary.termination_type == ceres::NO_CONVERGENCE;
    const bool better = !best || (usable && (detail::status_of(*best) == FitStatus::failure || summary.final_cost < best->final_cost));
    if (better) {
      best = summary;
      best_theta = theta;
    }
  }
  theta = best_theta;
  result.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.iterations = int(best->iterations.size()) - 1;
  result.final_cost = best->final_cost;
  result.status = detail::status_of(*best);
  if (result.status == FitStatus::failure) {
    result.message = "the solver failed from every start: " + best->message;
    return result;
  }

  std::vector<double> gamma(p);
  for (std::size_t k = 0; k < p; ++k) gamma[k] = theta[k] * scale[k];
  std::vector<std::string> names;
  for (const auto& parameter : result.parameters) names.push_back(parameter.name);
  const detail::UnitCovariance covariance = detail::unit_covariance(problem, {theta.data()}, names);
  if (!covariance.ok) {
    result.status = FitStatus::not_identifiable;
    result.message = covariance.why;
    return result;
  }

  const double dof = double(m - p);
  const double residual_variance = 2.0 * best->final_cost / dof;
  const double t = detail::student_t_975(m - p);
  for (std::size_t k = 0; k < p; ++k) {
    FitParameter& parameter = result.parameters[k];
    parameter.value = gamma[k];
    parameter.at_bound = lower[k] != kFree && gamma[k] <= lower[k] + 1e-9 * std::max(1.0, std::abs(lower[k]));
    detail::set_interval(parameter, covariance.matrix(Eigen::Index(k), Eigen::Index(k)) * scale[k] * scale[k],
                         residual_variance, t);
  }
  result.model.gamma = gamma;

  std::vector<double> observed(m), predicted(m);
  for (std::size_t i = 0; i < m; ++i) {
    const detail::LossPoint& q = points[i];
    observed[i] = q.loss;
    predicted[i] = loss_at_iteration<double>(form, q.iteration, q.workers, q.weighted_batch, q.convergence_coefficient,
                                             gamma.data());
  }
  detail::set_goodness_of_fit(result, observed, predicted);

  std::string bound_note;
  for (const auto& parameter : result.parameters) {
    if (parameter.at_bound) bound_note += (bound_note.empty() ? "" : ", ") + parameter.name;
  }
  result.message = std::string(result.status == FitStatus::converged ? "converged" : "stopped at the iteration limit") +
                   " after " + std::to_string(result.iterations) + " iterations (best of " +
                   std::to_string(result.starts) + " starts): " + best->message;
  if (!bound_note.empty()) result.message += "; at a physical bound: " + bound_note + " (intervals are optimistic)";
  return result;
}

}  // namespace spotdnn
