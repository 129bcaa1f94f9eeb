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
#include <Eigen/Eigenvalues>

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
  /// Local (Levenberg–Marquardt) solves. The first starts from the variable-projection optimum along γ1
  /// (a grid over γ1, and γ4 of the CC form, where the remaining coefficients enter linearly and are
  /// solved exactly, refined by a golden-section search), which usually is in the basin of the global
  /// optimum; further starts come from the next best distinct grid points and keep the lowest cost.
  int starts = 1;
  std::vector<double> initial_gamma;       ///< an extra start, when given (gamma_count(form) values)
  /// Differentiate with ceres::Jet (AutoDiffCostFunction over chunks of 256 points) instead of the
  /// closed-form Jacobian; same optimum, several times slower. For cross-checks and benchmarks.
  bool automatic_differentiation = false;
  /// Normal-equation Cholesky by default: with p ≤ 5 parameters scaled to O(1) and 10⁵ residuals, forming
  /// JᵀJ costs a fraction of a QR of J and reaches the same optimum.
  SolverSettings solver{500, DenseLinearSolver::normal_cholesky};
};

/// fit_loss_model's answer: the fit report and the fitted loss model (γ NaN unless the status is
/// converged or no_convergence). Parameters are named gamma1..gamma4 (gamma5), in order.
struct LossFitResult : FitResult {
  LossModel model;
};

namespace detail {

struct LossPoint {
  double iteration, workers, weighted_batch, convergence_coefficient, loss, sqrt_weight;
  double root_workers;  ///< √n
};

/// Residuals sqrt(w_i)·(f(j_i) − loss_i) of `count` consecutive points; γ_k = θ_k·scale_k, so that every
/// optimised θ_k is O(1). The automatic-differentiation twin of LossCostFunction (see
/// LossFitOptions::automatic_differentiation). @note design §4 eq. 6.
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

/// The residuals of LossResiduals with their Jacobian in closed form, for `count` consecutive points
/// (one Ceres residual block for a whole trace: no per-point block overhead, no dual numbers).
/// Seed form f = A·√n·h + γ4 with A = γ2·b_w + γ3, h = 1/(j + γ1):
///   ∂f/∂γ1 = −A·√n·h², ∂f/∂γ2 = b_w·√n·h, ∂f/∂γ3 = √n·h, ∂f/∂γ4 = 1.
/// CC form f = A·√((R + γ4)·n)·h + γ5: the same with √n → √((R + γ4)·n), plus
///   ∂f/∂γ4 = A·√((R + γ4)·n)·h / (2·(R + γ4)), ∂f/∂γ5 = 1.
/// @note design §4 eq. 6; checked against LossResiduals (ceres::Jet) in tests/fit_loss_test.cpp.
template <int K>
class LossCostFunction final : public ceres::CostFunction {
 public:
  static_assert(K == 4 || K == 5, "the seed form has 4 coefficients, the CC form 5");

  LossCostFunction(const LossPoint* points, int count, const std::array<double, K>& scale)
      : points_(points), count_(count), scale_(scale) {
    set_num_residuals(count);
    mutable_parameter_block_sizes()->push_back(K);
  }

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    double gamma[K];
    for (int k = 0; k < K; ++k) gamma[k] = parameters[0][k] * scale_[std::size_t(k)];
    double* jacobian = jacobians != nullptr ? jacobians[0] : nullptr;
    for (int i = 0; i < count_; ++i) {
      if (!row(points_[i], gamma, residuals + i, jacobian == nullptr ? nullptr : jacobian + std::size_t(i) * K)) return false;
    }
    return true;
  }

  /// The least-squares sums of the rows at θ: JᵀJ (K × K), Jᵀr and rᵀr, in one pass and without storing
  /// J. With `with_jacobian` false only rᵀr is formed. False when the model is not finite at θ.
  bool normal_equations(const double* theta, bool with_jacobian, Eigen::Matrix<double, K, K>& jtj,
                        Eigen::Matrix<double, K, 1>& jtr, double& rtr) const {
    double gamma[K];
    for (int k = 0; k < K; ++k) gamma[k] = theta[k] * scale_[std::size_t(k)];
    // Plain arrays and the lower triangle only: Eigen's rankUpdate is not inlined for a K × K block.
    double lower[K][K] = {}, gradient[K] = {}, jacobian_row[K] = {};
    double sum = 0, residual = 0;
    for (int i = 0; i < count_; ++i) {
      if (!row(points_[i], gamma, &residual, with_jacobian ? jacobian_row : nullptr)) return false;
      sum += residual * residual;
      if (with_jacobian) {
        for (int a = 0; a < K; ++a) {
          gradient[a] += residual * jacobian_row[a];
          for (int b = 0; b <= a; ++b) lower[a][b] += jacobian_row[a] * jacobian_row[b];
        }
      }
    }
    rtr = sum;
    for (int a = 0; a < K; ++a) {
      jtr(a) = gradient[a];
      for (int b = 0; b <= a; ++b) jtj(a, b) = jtj(b, a) = lower[a][b];
    }
    return std::isfinite(rtr) && (!with_jacobian || (jtj.allFinite() && jtr.allFinite()));
  }

 private:
  bool row(const LossPoint& p, const double* gamma, double* residual, double* jacobian_row) const {
    const double shifted = p.iteration + gamma[0];
    double spread_root = p.root_workers, r_shift = 0;
    if constexpr (K == 5) {
      r_shift = p.convergence_coefficient + gamma[3];
      if (!(r_shift > 0)) return false;
      spread_root *= std::sqrt(r_shift);
    }
    if (!(shifted > 0)) return false;
    const double h = 1.0 / shifted;
    const double q = spread_root * h;             // √n·h (seed) or √((R + γ4)·n)·h (CC)
    const double u = (gamma[1] * p.weighted_batch + gamma[2]) * q;
    *residual = p.sqrt_weight * (u + gamma[K - 1] - p.loss);
    if (jacobian_row != nullptr) {
      const double w = p.sqrt_weight;
      jacobian_row[0] = -w * u * h * scale_[0];
      jacobian_row[1] = w * p.weighted_batch * q * scale_[1];
      jacobian_row[2] = w * q * scale_[2];
      if constexpr (K == 5) jacobian_row[3] = w * u / (2.0 * r_shift) * scale_[3];
      jacobian_row[K - 1] = w * scale_[std::size_t(K - 1)];
    }
    return std::isfinite(*residual);
  }

  const LossPoint* points_;
  int count_;
  std::array<double, K> scale_;
};

/// The plain least-squares problem of LossCostFunction compressed to K + 1 residuals, so that Ceres' cost
/// of a Levenberg–Marquardt step no longer grows with the trace (no m × K Jacobian to store, copy, scale
/// and validate). With JᵀJ = V·Λ·Vᵀ (eigen-decomposition), the residuals r' = (Λ^(-1/2)·Vᵀ·Jᵀr, ρ) with
/// ρ² = rᵀr − |Λ^(-1/2)·Vᵀ·Jᵀr|² and the Jacobian J' = (Λ^(1/2)·Vᵀ; 0) satisfy r'ᵀr' = rᵀr, J'ᵀJ' = JᵀJ and
/// J'ᵀr' = Jᵀr: the cost, the gradient and the Gauss–Newton model, hence every Levenberg–Marquardt step and
/// convergence test, are those of the full problem (the square-root-information form of its normal
/// equations). Directions with λ ≤ 1e-14·λ_max carry no information and get zero residual and Jacobian.
/// Only for plain least squares: a robust ρ must see each residual.
template <int K>
class LossNormalEquationsCost final : public ceres::CostFunction {
 public:
  explicit LossNormalEquationsCost(const LossCostFunction<K>& rows) : rows_(rows) {
    set_num_residuals(K + 1);
    mutable_parameter_block_sizes()->push_back(K);
  }

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const bool with_jacobian = jacobians != nullptr && jacobians[0] != nullptr;
    Eigen::Matrix<double, K, K> jtj;
    Eigen::Matrix<double, K, 1> jtr;
    double rtr = 0;
    if (!rows_.normal_equations(parameters[0], with_jacobian, jtj, jtr, rtr)) return false;
    if (!with_jacobian) {
      residuals[0] = std::sqrt(rtr);
      for (int k = 1; k <= K; ++k) residuals[k] = 0;
      return true;
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, K, K>> eigen(jtj);
    if (eigen.info() != Eigen::Success) return false;
    const Eigen::Matrix<double, K, 1>& lambda = eigen.eigenvalues();  // ascending
    const double floor = 1e-14 * std::max(lambda(K - 1), 0.0);
    const Eigen::Matrix<double, K, 1> projected = eigen.eigenvectors().transpose() * jtr;
    Eigen::Map<Eigen::Matrix<double, K + 1, K, Eigen::RowMajor>> jacobian(jacobians[0]);
    double explained = 0;
    for (int k = 0; k < K; ++k) {
      const bool informative = lambda(k) > floor;
      const double root = informative ? std::sqrt(lambda(k)) : 0.0;
      residuals[k] = informative ? projected(k) / root : 0.0;
      explained += residuals[k] * residuals[k];
      jacobian.row(k) = root * eigen.eigenvectors().col(k).transpose();
    }
    residuals[K] = std::sqrt(std::max(0.0, rtr - explained));
    jacobian.row(K).setZero();
    return true;
  }

 private:
  const LossCostFunction<K>& rows_;
};

struct LossStart {
  double ssr;
  std::vector<double> gamma;
};

/// Every `stride`-th point, so that the start search costs O(4000) whatever the trace length.
inline std::size_t loss_grid_stride(std::size_t points) { return std::max<std::size_t>(1, points / 4000); }

/// Variable projection at fixed γ1 (and γ4 of the CC form): the loss is then linear in (γ2, γ3, asymptote);
/// solves those by weighted least squares over every `stride`-th point. Returns false when not finite.
inline bool loss_projection(const std::vector<LossPoint>& points, LossForm form, double gamma1, double gamma4,
                            std::size_t stride, LossStart& out) {
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
  out.ssr = yy - beta.dot(b);
  if (!std::isfinite(out.ssr) || !beta.allFinite()) return false;
  out.gamma = {gamma1, beta[0], beta[1], beta[2]};
  if (form == LossForm::cc) out.gamma.insert(out.gamma.begin() + 3, gamma4);
  return true;
}

/// Variable projection on a grid: γ1 log-spaced above its floor (and γ4 of the CC form over shifts above
/// −min R), the remaining coefficients solved exactly; the best grid point is then refined in γ1 by a
/// golden-section search between its neighbours, so that the first start is (on the subsample) the
/// least-squares optimum along γ1 and one Levenberg–Marquardt solve usually suffices. Sorted by residual,
/// the refined point first; `gamma1` is the grid coordinate (candidates closer than a factor 1.5 in
/// γ1 − floor are not distinct starts).
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
  const std::size_t stride = loss_grid_stride(points.size());
  constexpr int kGrid = 50;
  auto gamma1_at = [&](double u) { return gamma1_floor + span * std::pow(10.0, -4.0 + 5.0 * u / kGrid); };
  std::vector<LossStart> grid;
  double best_ssr = std::numeric_limits<double>::infinity(), best_gamma4 = 0;
  int best_u = -1;
  for (double shift : shifts) {
    const double gamma4 = -r_min + shift;  // CC only
    for (int u = 0; u <= kGrid; ++u) {
      LossStart candidate;
      if (!loss_projection(points, form, gamma1_at(u), gamma4, stride, candidate)) continue;
      if (candidate.ssr < best_ssr) {
        best_ssr = candidate.ssr;
        best_u = u;
        best_gamma4 = gamma4;
      }
      grid.push_back(std::move(candidate));
    }
  }
  std::sort(grid.begin(), grid.end(), [](const LossStart& x, const LossStart& y) { return x.ssr < y.ssr; });
  if (best_u >= 0) {
    // Golden-section search of the projected residual over the grid coordinate u in [u* − 1, u* + 1].
    const double golden = (std::sqrt(5.0) - 1.0) / 2.0;
    double lo = std::max(0.0, best_u - 1.0), hi = std::min(double(kGrid), best_u + 1.0);
    auto ssr_at = [&](double u) {
      LossStart s;
      return loss_projection(points, form, gamma1_at(u), best_gamma4, stride, s) ? s.ssr
                                                                                 : std::numeric_limits<double>::infinity();
    };
    double x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo);
    double f1 = ssr_at(x1), f2 = ssr_at(x2);
    for (int step = 0; step < 60 && hi - lo > 1e-9; ++step) {
      if (f1 <= f2) {
        hi = x2, x2 = x1, f2 = f1;
        x1 = hi - golden * (hi - lo), f1 = ssr_at(x1);
      } else {
        lo = x1, x1 = x2, f1 = f2;
        x2 = lo + golden * (hi - lo), f2 = ssr_at(x2);
      }
    }
    LossStart refined;
    if (loss_projection(points, form, gamma1_at(0.5 * (lo + hi)), best_gamma4, stride, refined) &&
        refined.ssr <= grid.front().ssr) {
      grid.insert(grid.begin(), std::move(refined));
    }
  }
  if (bounded) {
    for (auto& candidate : grid) {
      for (std::size_t k = 0; k < candidate.gamma.size(); ++k) candidate.gamma[k] = std::max(candidate.gamma[k], lower[k]);
    }
  }
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
  const auto started = std::chrono::steady_clock::now();
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

  // Points, weights, and what the trace can identify. Samples of a run are usually contiguous: look the
  // run up only when it changes.
  std::unordered_map<std::string, double> run_last_iteration;
  {
    const std::string* current = nullptr;
    double* last = nullptr;
    for (const auto& s : trace.samples) {
      if (current == nullptr || s.run != *current) {
        current = &s.run;
        last = &run_last_iteration[s.run];
      }
      *last = std::max(*last, s.iteration);
    }
  }
  std::vector<detail::LossPoint> points;
  points.reserve(m);
  std::set<double> batches, coefficients;
  double j_min = std::numeric_limits<double>::infinity(), j_max = 0, r_min = std::numeric_limits<double>::infinity();
  const std::string* current_run = nullptr;
  double last = 0;
  for (const auto& s : trace.samples) {
    const double r = s.convergence_coefficient ? *s.convergence_coefficient : homogeneous_convergence_coefficient(s.workers);
    if (current_run == nullptr || s.run != *current_run) {
      current_run = &s.run;
      last = run_last_iteration[s.run];
      batches.insert(s.weighted_batch);  // a run keeps its batch and R (validate_loss_trace)
      coefficients.insert(r);
    }
    double weight = 1.0 + (last > 0 ? options.late_weight * s.iteration / last : 0.0);
    if (options.relative_residuals) {
      if (!(s.loss > 0)) {
        detail::fail(fn, detail::trace_location(trace.source, s.line, points.size()) + ": loss", s.loss,
                     "relative residuals need a positive loss");
      }
      weight /= s.loss * s.loss;
    }
    points.push_back({s.iteration, s.workers, s.weighted_batch, r, s.loss, std::sqrt(weight), std::sqrt(s.workers)});
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
  // Plain least squares: every point in one closed-form block, compressed to its normal equations
  // (LossNormalEquationsCost). A robust loss ρ applies per residual block, so robust fits use one block
  // per point; automatic differentiation uses blocks of 256 points.
  const bool compressed = options.robust_loss == RobustLoss::none && !options.automatic_differentiation;
  const std::array<double, 4> seed_scale{scale[0], scale[1], scale[2], scale[3]};
  const std::array<double, 5> cc_scale{scale[0], scale[1], scale[2], scale[3], scale[4]};
  const detail::LossCostFunction<4> seed_rows(points.data(), int(m), seed_scale);
  const detail::LossCostFunction<5> cc_rows(points.data(), int(m), cc_scale);
  if (compressed) {
    if (form == LossForm::seed) {
      problem.AddResidualBlock(new detail::LossNormalEquationsCost<4>(seed_rows), nullptr, theta.data());
    } else {
      problem.AddResidualBlock(new detail::LossNormalEquationsCost<5>(cc_rows), nullptr, theta.data());
    }
  }
  const std::size_t chunk = options.robust_loss == RobustLoss::none ? 256 : 1;
  for (std::size_t first = 0; !compressed && first < m; first += chunk) {
    const int count = int(std::min(chunk, m - first));
    ceres::LossFunction* rho = nullptr;
    if (options.robust_loss == RobustLoss::huber) rho = new ceres::HuberLoss(options.robust_scale);
    if (options.robust_loss == RobustLoss::cauchy) rho = new ceres::CauchyLoss(options.robust_scale);
    ceres::CostFunction* cost = nullptr;
    if (options.automatic_differentiation) {
      if (form == LossForm::seed) {
        using F = detail::LossResiduals<4>;
        cost = new ceres::AutoDiffCostFunction<F, ceres::DYNAMIC, 4>(new F{points.data() + first, count, seed_scale}, count);
      } else {
        using F = detail::LossResiduals<5>;
        cost = new ceres::AutoDiffCostFunction<F, ceres::DYNAMIC, 5>(new F{points.data() + first, count, cc_scale}, count);
      }
    } else if (form == LossForm::seed) {
      cost = new detail::LossCostFunction<4>(points.data() + first, count, seed_scale);
    } else {
      cost = new detail::LossCostFunction<5>(points.data() + first, count, cc_scale);
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
  detail::UnitCovariance covariance;
  if (compressed) {
    // JᵀJ straight from the closed-form rows (what Problem::Evaluate would give, without a 10⁵ × p CRS copy).
    Eigen::MatrixXd normal;
    bool finite = false;
    double rtr = 0;
    if (form == LossForm::seed) {
      Eigen::Matrix<double, 4, 4> jtj;
      Eigen::Matrix<double, 4, 1> jtr;
      finite = seed_rows.normal_equations(theta.data(), true, jtj, jtr, rtr);
      normal = jtj;
    } else {
      Eigen::Matrix<double, 5, 5> jtj;
      Eigen::Matrix<double, 5, 1> jtr;
      finite = cc_rows.normal_equations(theta.data(), true, jtj, jtr, rtr);
      normal = jtj;
    }
    if (finite) {
      result.final_cost = 0.5 * rtr;  // ½·Σ r² at the estimate, summed directly
      covariance = detail::unit_covariance_from_normal(normal, names);
    } else {
      covariance.why = "the model cannot be evaluated at the estimate";
    }
  } else {
    covariance = detail::unit_covariance(problem, {theta.data()}, names);
  }
  if (!covariance.ok) {
    result.status = FitStatus::not_identifiable;
    result.message = covariance.why;
    result.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  }

  const double dof = double(m - p);
  const double residual_variance = 2.0 * result.final_cost / dof;
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
  result.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace spotdnn
