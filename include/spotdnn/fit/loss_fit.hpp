#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/loss_fit.hpp Fits the loss-model coefficients γ (seed or CC form, docs/model.md eq. (6)) to loss
/// traces of one or more runs with Ceres: bounds, robust losses, late-point weights, multi-start, and
/// honest error bars.

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

/// What a point's run contributes to its residual (one per run: a trace has few runs).
struct LossRunShape {
  double workers, weighted_batch, convergence_coefficient;
  double root_workers;  ///< √n
};

/// The fit's view of the samples, in columns (no per-point copies of the run's cluster): point i has
/// iteration[i], loss[i], weight sqrt_weight[i]² (1 when sqrt_weight is null) and run runs[run[i]].
struct LossRows {
  const double* iteration = nullptr;
  const double* loss = nullptr;
  const double* sqrt_weight = nullptr;
  const std::uint32_t* run = nullptr;
  const LossRunShape* runs = nullptr;
  std::size_t count = 0;

  [[nodiscard]] double weight_root(std::size_t i) const { return sqrt_weight == nullptr ? 1.0 : sqrt_weight[i]; }
  [[nodiscard]] const LossRunShape& shape(std::size_t i) const { return runs[run[i]]; }
  /// Points [first, first + n).
  [[nodiscard]] LossRows slice(std::size_t first, std::size_t n) const {
    return {iteration + first, loss + first, sqrt_weight == nullptr ? nullptr : sqrt_weight + first, run + first, runs, n};
  }
};

/// Residuals sqrt(w_i)·(f(j_i) − loss_i) of `count` consecutive points; γ_k = θ_k·scale_k, so that every
/// optimised θ_k is O(1). The automatic-differentiation twin of LossCostFunction (see
/// LossFitOptions::automatic_differentiation). @note docs/model.md eq. (6).
template <int K>
struct LossResiduals {
  const LossRows rows;
  const std::array<double, K> scale;

  template <typename T>
  bool operator()(const T* theta, T* residuals) const {
    T gamma[K];
    for (int k = 0; k < K; ++k) gamma[k] = theta[k] * scale[std::size_t(k)];
    for (std::size_t i = 0; i < rows.count; ++i) {
      const LossRunShape& p = rows.shape(i);
      T f;
      if constexpr (K == 4) {
        f = loss_seed_form(T(rows.iteration[i]), T(p.workers), T(p.weighted_batch), gamma);
      } else {
        f = loss_cc_form(T(rows.iteration[i]), T(p.workers), T(p.weighted_batch), T(p.convergence_coefficient), gamma);
      }
      residuals[i] = T(rows.weight_root(i)) * (f - T(rows.loss[i]));
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
/// @note docs/model.md eq. (6); checked against LossResiduals (ceres::Jet) in tests/fit_loss_test.cpp.
template <int K>
class LossCostFunction final : public ceres::CostFunction {
 public:
  static_assert(K == 4 || K == 5, "the seed form has 4 coefficients, the CC form 5");

  LossCostFunction(const LossRows& rows, const std::array<double, K>& scale) : rows_(rows), scale_(scale) {
    set_num_residuals(int(rows.count));
    mutable_parameter_block_sizes()->push_back(K);
  }

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    double gamma[K];
    for (int k = 0; k < K; ++k) gamma[k] = parameters[0][k] * scale_[std::size_t(k)];
    double* jacobian = jacobians != nullptr ? jacobians[0] : nullptr;
    for (std::size_t i = 0; i < rows_.count; ++i) {
      if (!row(i, gamma, residuals + i, jacobian == nullptr ? nullptr : jacobian + i * K)) return false;
    }
    return true;
  }

  [[nodiscard]] const LossRows& rows() const { return rows_; }
  [[nodiscard]] const std::array<double, K>& scale() const { return scale_; }

  /// The least-squares sums of the rows at θ: JᵀJ (K × K), Jᵀr and rᵀr, in one pass and without storing
  /// J. With `with_jacobian` false only rᵀr is formed. False when the model is not finite at θ.
  bool normal_equations(const double* theta, bool with_jacobian, Eigen::Matrix<double, K, K>& jtj,
                        Eigen::Matrix<double, K, 1>& jtr, double& rtr) const {
    if (rows_.sqrt_weight == nullptr) {
      return with_jacobian ? sums<false, true>(theta, jtj, jtr, rtr) : sums<false, false>(theta, jtj, jtr, rtr);
    }
    return with_jacobian ? sums<true, true>(theta, jtj, jtr, rtr) : sums<true, false>(theta, jtj, jtr, rtr);
  }

 private:
  /// normal_equations for unit (Weighted false: the factors 1 are left out, which changes no bit) or
  /// stored weights, with or without the Jacobian.
  template <bool Weighted, bool WithJacobian>
  bool sums(const double* theta, Eigen::Matrix<double, K, K>& jtj, Eigen::Matrix<double, K, 1>& jtr, double& rtr) const {
    constexpr bool with_jacobian = WithJacobian;
    double gamma[K];
    for (int k = 0; k < K; ++k) gamma[k] = theta[k] * scale_[std::size_t(k)];
    // Plain arrays and the lower triangle only: Eigen's rankUpdate is not inlined for a K × K block.
    double lower[K][K] = {}, gradient[K] = {}, jacobian_row[K] = {};
    double sum = 0, residual = 0;
    for (std::size_t i = 0; i < rows_.count; ++i) {
      if (!row<Weighted>(i, gamma, &residual, with_jacobian ? jacobian_row : nullptr)) return false;
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

  template <bool Weighted = true>
  bool row(std::size_t i, const double* gamma, double* residual, double* jacobian_row) const {
    const LossRunShape& p = rows_.shape(i);
    const double shifted = rows_.iteration[i] + gamma[0];
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
    if constexpr (Weighted) {
      const double w = rows_.weight_root(i);
      *residual = w * (u + gamma[K - 1] - rows_.loss[i]);
      if (jacobian_row != nullptr) {
        jacobian_row[0] = -w * u * h * scale_[0];
        jacobian_row[1] = w * p.weighted_batch * q * scale_[1];
        jacobian_row[2] = w * q * scale_[2];
        if constexpr (K == 5) jacobian_row[3] = w * u / (2.0 * r_shift) * scale_[3];
        jacobian_row[K - 1] = w * scale_[std::size_t(K - 1)];
      }
    } else {  // w = 1 exactly: the same numbers without the multiplications
      *residual = u + gamma[K - 1] - rows_.loss[i];
      if (jacobian_row != nullptr) {
        jacobian_row[0] = -u * h * scale_[0];
        jacobian_row[1] = p.weighted_batch * q * scale_[1];
        jacobian_row[2] = q * scale_[2];
        if constexpr (K == 5) jacobian_row[3] = u / (2.0 * r_shift) * scale_[3];
        jacobian_row[K - 1] = scale_[std::size_t(K - 1)];
      }
    }
    return std::isfinite(*residual);
  }

  LossRows rows_;
  std::array<double, K> scale_;
};

/// A stretch of consecutive points of one run (traces list a run's points together), with its smallest
/// iteration: within it every factor but h = 1/(j + γ1) is constant.
struct LossSegment {
  std::size_t first, count;
  std::uint32_t run;
  double min_iteration;
};

/// The runs' stretches of `rows`, in order.
inline std::vector<LossSegment> loss_segments(const LossRows& rows) {
  std::vector<LossSegment> out;
  for (std::size_t i = 0; i < rows.count;) {
    const std::uint32_t run = rows.run[i];
    double low = rows.iteration[i];
    std::size_t k = i;
    for (; k < rows.count && rows.run[k] == run; ++k) low = std::min(low, rows.iteration[k]);
    out.push_back({i, k - i, run, low});
    i = k;
  }
  return out;
}

#if defined(__GNUC__) || defined(__clang__)
/// Two doubles side by side (one SSE2 register on x86-64): lane k of every operation is the IEEE operation of
/// the scalar code on lane k, so the loops below give the bits of their scalar twins, twice as fast.
typedef double LossLanePair __attribute__((vector_size(16)));

inline LossLanePair load_lane_pair(const double* p) {
  LossLanePair v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
#endif

/// The moments of one stretch at γ1 for the residuals r̃ = a·h + c − y (h = 1/(j + γ1)), each term weighted
/// by w² (1 when unweighted): m[0..4] = Σw²·h^p, m[5..7] = Σw²·r̃·h^p (p = 0..2), m[8] = Σw²·r̃². Two
/// interleaved lanes of accumulators (even and odd points) keep the divisions and sums independent, with no
/// branch in the loop; unweighted, m[0] is the count. (The lanes and the order of every sum fix the bits of
/// the result, and through them the path of Levenberg–Marquardt: changing them moves the fitted γ within the
/// solver's tolerance, ~1e-11 relative on bench/compare_scipy.py's trace.)
template <bool Weighted>
void loss_segment_moments(const LossRows& rows, const LossSegment& segment, double gamma1, double a, double c,
                          double (&m)[9]) {
  const double* j = rows.iteration + segment.first;
  const double* y = rows.loss + segment.first;
  const double* w = Weighted ? rows.sqrt_weight + segment.first : nullptr;
  const std::size_t n = segment.count;
  double acc[9][2] = {};
  // Point i's terms into lane `lane` (the scalar definition; the pair loop computes the same per lane).
  const auto add = [&](std::size_t i, int lane) {
    const double h = 1.0 / (j[i] + gamma1);
    const double h2 = h * h;
    const double r = a * h + c - y[i];
    if constexpr (Weighted) {
      const double ww = w[i] * w[i];
      const double wh = ww * h, wh2 = ww * h2, wr = ww * r;
      acc[0][lane] += ww;
      acc[1][lane] += wh;
      acc[2][lane] += wh2;
      acc[3][lane] += wh2 * h;
      acc[4][lane] += wh2 * h2;
      acc[5][lane] += wr;
      acc[6][lane] += wr * h;
      acc[7][lane] += wr * h2;
      acc[8][lane] += wr * r;
    } else {
      acc[1][lane] += h;
      acc[2][lane] += h2;
      acc[3][lane] += h2 * h;
      acc[4][lane] += h2 * h2;
      acc[5][lane] += r;
      acc[6][lane] += r * h;
      acc[7][lane] += r * h2;
      acc[8][lane] += r * r;
    }
  };
  std::size_t i = 0;
#if defined(__GNUC__) || defined(__clang__)
  {
    const LossLanePair shift = {gamma1, gamma1}, slope = {a, a}, offset = {c, c}, one = {1.0, 1.0};
    LossLanePair sum[9] = {};
    for (; i + 2 <= n; i += 2) {
      const LossLanePair h = one / (load_lane_pair(j + i) + shift);
      const LossLanePair h2 = h * h;
      const LossLanePair r = slope * h + offset - load_lane_pair(y + i);
      if constexpr (Weighted) {
        const LossLanePair root = load_lane_pair(w + i);
        const LossLanePair ww = root * root;
        const LossLanePair wh = ww * h, wh2 = ww * h2, wr = ww * r;
        sum[0] += ww;
        sum[1] += wh;
        sum[2] += wh2;
        sum[3] += wh2 * h;
        sum[4] += wh2 * h2;
        sum[5] += wr;
        sum[6] += wr * h;
        sum[7] += wr * h2;
        sum[8] += wr * r;
      } else {
        sum[1] += h;
        sum[2] += h2;
        sum[3] += h2 * h;
        sum[4] += h2 * h2;
        sum[5] += r;
        sum[6] += r * h;
        sum[7] += r * h2;
        sum[8] += r * r;
      }
    }
    for (int k = 0; k < 9; ++k) {
      acc[k][0] = sum[k][0];
      acc[k][1] = sum[k][1];
    }
  }
#else
  for (; i + 2 <= n; i += 2) {
    add(i, 0);
    add(i + 1, 1);
  }
#endif
  if (i < n) add(i, 0);
  m[0] = double(n);  // unweighted; the weighted sum below
  for (int k = Weighted ? 0 : 1; k < 9; ++k) m[k] = acc[k][0] + acc[k][1];
}

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
  explicit LossNormalEquationsCost(const LossCostFunction<K>& rows) : rows_(rows), segments_(loss_segments(rows.rows())) {
    set_num_residuals(K + 1);
    mutable_parameter_block_sizes()->push_back(K);
    // Per-run moments pay off when the stretches are long; a trace whose runs interleave row by row takes
    // the row-by-row sums.
    if (segments_.size() > rows.rows().count / 8 + 1) segments_.clear();
  }

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const bool with_jacobian = jacobians != nullptr && jacobians[0] != nullptr;
    double rtr = 0;
    if (!sums_at(parameters[0], with_jacobian, rtr)) return false;
    const Eigen::Matrix<double, K, K>& jtj = jtj_;
    const Eigen::Matrix<double, K, 1>& jtr = jtr_;
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

  /// JᵀJ, Jᵀr and rᵀr at θ (the last evaluation's when θ is the same point, else one more pass).
  bool normal_equations(const double* theta, Eigen::Matrix<double, K, K>& jtj, Eigen::Matrix<double, K, 1>& jtr,
                        double& rtr) const {
    if (!sums_at(theta, true, rtr)) return false;
    jtj = jtj_;
    jtr = jtr_;
    return true;
  }

 private:
  /// The sums at θ, remembered for the next call: Levenberg–Marquardt asks for the cost of a candidate
  /// step and then, once accepted, for the Jacobian at the same point, so each pass forms all of JᵀJ, Jᵀr
  /// and rᵀr (the same arithmetic, hence the same numbers) and the second request costs no pass over the
  /// data. rᵀr alone when the Jacobian is not finite but the cost is. Not thread-safe (Ceres runs one thread).
  bool sums_at(const double* theta, bool with_jacobian, double& rtr) const {
    const bool same = std::equal(theta, theta + K, theta_.begin());
    if (!(same && (state_ == State::full || (state_ == State::cost_only && !with_jacobian)))) {
      std::copy(theta, theta + K, theta_.begin());
      state_ = State::none;
      if (segments_.empty() ? rows_.normal_equations(theta, true, jtj_, jtr_, rtr_) : moment_sums(theta)) {
        state_ = State::full;
      } else if (!with_jacobian && rows_.normal_equations(theta, false, jtj_, jtr_, rtr_)) {
        state_ = State::cost_only;
      }
    }
    rtr = rtr_;
    return state_ == State::full || (state_ == State::cost_only && !with_jacobian);
  }

  /// JᵀJ, Jᵀr and rᵀr into jtj_, jtr_, rtr_ from the moments of each run's stretches. Within a stretch the
  /// Jacobian columns are k·h² (γ1), k·h (γ2, γ3 and the CC form's γ4) and k (the asymptote), with constant
  /// k (LossCostFunction's closed form), so JᵀJ needs Σw²h^p for p = 0..4 and Jᵀr needs Σw²r̃h^p for p = 0..2:
  /// the same sums as the row-by-row pass, gathered with one division and nine additions a point. False when
  /// the model is not finite at θ.
  bool moment_sums(const double* theta) const {
    const LossRows& rows = rows_.rows();
    const std::array<double, K>& scale = rows_.scale();
    double gamma[K];
    for (int k = 0; k < K; ++k) gamma[k] = theta[k] * scale[std::size_t(k)];
    constexpr int kPower[5] = {2, 1, 1, K == 5 ? 1 : 0, 0};  // of h in each column
    double lower[K][K] = {}, gradient[K] = {}, sum = 0;
    for (const LossSegment& segment : segments_) {
      const LossRunShape& p = rows.runs[segment.run];
      if (!(segment.min_iteration + gamma[0] > 0)) return false;
      double spread_root = p.root_workers, r_shift = 0;
      if constexpr (K == 5) {
        r_shift = p.convergence_coefficient + gamma[3];
        if (!(r_shift > 0)) return false;
        spread_root *= std::sqrt(r_shift);
      }
      const double a = (gamma[1] * p.weighted_batch + gamma[2]) * spread_root;  // u = a·h
      double m[9];
      if (rows.sqrt_weight == nullptr) {
        loss_segment_moments<false>(rows, segment, gamma[0], a, gamma[K - 1], m);
      } else {
        loss_segment_moments<true>(rows, segment, gamma[0], a, gamma[K - 1], m);
      }
      double coefficient[K];
      coefficient[0] = -a * scale[0];
      coefficient[1] = p.weighted_batch * spread_root * scale[1];
      coefficient[2] = spread_root * scale[2];
      if constexpr (K == 5) coefficient[3] = a / (2.0 * r_shift) * scale[3];
      coefficient[K - 1] = scale[std::size_t(K - 1)];
      for (int x = 0; x < K; ++x) {
        gradient[x] += coefficient[x] * m[5 + kPower[x]];
        for (int z = 0; z <= x; ++z) lower[x][z] += coefficient[x] * coefficient[z] * m[kPower[x] + kPower[z]];
      }
      sum += m[8];
    }
    rtr_ = sum;
    for (int x = 0; x < K; ++x) {
      jtr_(x) = gradient[x];
      for (int z = 0; z <= x; ++z) jtj_(x, z) = jtj_(z, x) = lower[x][z];
    }
    return std::isfinite(rtr_) && jtj_.allFinite() && jtr_.allFinite();
  }

  enum class State { none, cost_only, full };
  const LossCostFunction<K>& rows_;
  std::vector<LossSegment> segments_;  ///< empty: sum row by row
  mutable State state_ = State::none;
  mutable std::array<double, K> theta_{};
  mutable Eigen::Matrix<double, K, K> jtj_;
  mutable Eigen::Matrix<double, K, 1> jtr_;
  mutable double rtr_ = 0;
};

struct LossStart {
  double ssr;
  std::vector<double> gamma;
};

/// Every `stride`-th point, so that the start search costs O(4000) whatever the trace length.
inline std::size_t loss_grid_stride(std::size_t points) { return std::max<std::size_t>(1, points / 4000); }

/// The start search's subsample: every `stride`-th point of the trace, gathered once so that the ~100
/// projections of the search stream through small contiguous columns, in stretches of consecutive points of
/// one run (whose cluster is constant along it). The sums Σw, Σw·y and Σw·y² do not depend on γ: they are
/// formed here once.
struct LossSubsample {
  struct Stretch {
    std::size_t first, count;
    double workers, weighted_batch, convergence_coefficient, root_workers;
  };
  std::vector<double> iteration, loss, weight;  ///< weight empty when every weight is 1
  std::vector<Stretch> stretches;
  double weight_sum = 0, weighted_loss_sum = 0, weighted_square_sum = 0;
};

/// Every `stride`-th point of `points`, for loss_projection.
inline LossSubsample loss_subsample(const LossRows& points, std::size_t stride) {
  LossSubsample out;
  const std::size_t n = (points.count + stride - 1) / stride;
  out.iteration.reserve(n);
  out.loss.reserve(n);
  if (points.sqrt_weight != nullptr) out.weight.reserve(n);
  for (std::size_t i = 0, k = 0; i < points.count; i += stride, ++k) {
    const double y = points.loss[i];
    const double root = points.weight_root(i);
    const double w = root * root;
    out.iteration.push_back(points.iteration[i]);
    out.loss.push_back(y);
    if (points.sqrt_weight != nullptr) out.weight.push_back(w);
    out.weight_sum += w;
    out.weighted_loss_sum += w * y;
    out.weighted_square_sum += w * y * y;
    if (out.stretches.empty() || points.run[i] != points.run[i - stride]) {
      const LossRunShape& p = points.shape(i);
      out.stretches.push_back({k, 0, p.workers, p.weighted_batch, p.convergence_coefficient, p.root_workers});
    }
    ++out.stretches.back().count;
  }
  return out;
}

/// H1 = Σw·h, H2 = Σw·h² and Y1 = Σw·y·h over points [first, first + count) of `subsample`, h = 1/(j + γ1)
/// (w = 1 unless Weighted). Four interleaved lanes (point i in lane i mod 4, summed (0 + 1) + (2 + 3)), so
/// that the divisions and sums run side by side.
template <bool Weighted>
void loss_projection_sums(const LossSubsample& subsample, std::size_t first, std::size_t count, double gamma1,
                          double (&sums)[3]) {
  const double* const j = subsample.iteration.data() + first;
  const double* const y = subsample.loss.data() + first;
  const double* const w = Weighted ? subsample.weight.data() + first : nullptr;
  double acc[3][4] = {};
  const auto add = [&](std::size_t i, int lane) {
    const double h = 1.0 / (j[i] + gamma1);
    double wh = h;
    if constexpr (Weighted) wh = w[i] * h;
    acc[0][lane] += wh;
    acc[1][lane] += wh * h;
    acc[2][lane] += wh * y[i];
  };
  std::size_t i = 0;
#if defined(__GNUC__) || defined(__clang__)
  {
    const LossLanePair shift = {gamma1, gamma1}, one = {1.0, 1.0};
    LossLanePair low[3] = {}, high[3] = {};  // lanes 0, 1 and lanes 2, 3
    const auto pair = [&](std::size_t at, LossLanePair (&sum)[3]) {
      const LossLanePair h = one / (load_lane_pair(j + at) + shift);
      LossLanePair wh = h;
      if constexpr (Weighted) wh = load_lane_pair(w + at) * h;
      sum[0] += wh;
      sum[1] += wh * h;
      sum[2] += wh * load_lane_pair(y + at);
    };
    for (; i + 4 <= count; i += 4) {
      pair(i, low);
      pair(i + 2, high);
    }
    for (int k = 0; k < 3; ++k) {
      acc[k][0] = low[k][0];
      acc[k][1] = low[k][1];
      acc[k][2] = high[k][0];
      acc[k][3] = high[k][1];
    }
  }
#else
  for (; i + 4 <= count; i += 4) {
    for (int lane = 0; lane < 4; ++lane) add(i + std::size_t(lane), lane);
  }
#endif
  for (int lane = 0; i < count; ++i, ++lane) add(i, lane);
  for (int k = 0; k < 3; ++k) sums[k] = (acc[k][0] + acc[k][1]) + (acc[k][2] + acc[k][3]);
}

/// Variable projection at fixed γ1 (and γ4 of the CC form): the loss is then linear in (γ2, γ3, asymptote);
/// solves those by weighted least squares over the subsample. Returns false when not finite.
/// With x = (b_w·f·h, f·h, 1), f = √n (seed) or √((R + γ4)·n) (CC) constant along a run's stretch, the
/// normal equations need per stretch only H1, H2 and Y1 (loss_projection_sums): Σw·x·xᵀ and Σw·y·x are
/// those sums times products of f and b_w, and Σw, Σw·y, Σw·y² are the subsample's own.
inline bool loss_projection(const LossSubsample& subsample, LossForm form, double gamma1, double gamma4, LossStart& out) {
  double a00 = 0, a10 = 0, a11 = 0, a20 = 0, a21 = 0, b0 = 0, b1 = 0;
  for (const LossSubsample::Stretch& stretch : subsample.stretches) {
    double sums[3];
    if (subsample.weight.empty()) {
      loss_projection_sums<false>(subsample, stretch.first, stretch.count, gamma1, sums);
    } else {
      loss_projection_sums<true>(subsample, stretch.first, stretch.count, gamma1, sums);
    }
    // √n is stored for the seed form (the same number std::sqrt(n) gives here).
    const double f = form == LossForm::seed ? stretch.root_workers
                                            : std::sqrt((stretch.convergence_coefficient + gamma4) * stretch.workers);
    const double b = stretch.weighted_batch;
    const double f2h2 = f * f * sums[1], fh1 = f * sums[0], fy1 = f * sums[2];
    a00 += b * b * f2h2;
    a10 += b * f2h2;
    a11 += f2h2;
    a20 += b * fh1;
    a21 += fh1;
    b0 += b * fy1;
    b1 += fy1;
  }
  const double a22 = subsample.weight_sum, b2 = subsample.weighted_loss_sum, yy = subsample.weighted_square_sum;
  Eigen::Matrix3d a;
  a << a00, a10, a20, a10, a11, a21, a20, a21, a22;
  const Eigen::Vector3d b(b0, b1, b2);
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
/// `j_min`, `j_max`: the extreme iterations; `r_min` the smallest R of the points' runs.
inline std::vector<LossStart> loss_grid_starts(const LossRows& points, LossForm form, const std::vector<double>& lower,
                                               bool bounded, double j_min, double j_max, double r_min) {
  const double span = std::max(j_max - j_min, 1.0);
  const double gamma1_floor = -j_min + 1e-6 * span;
  const std::vector<double> shifts = form == LossForm::seed
                                        ? std::vector<double>{0.0}
                                        : std::vector<double>{1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0};
  const LossSubsample subsample = loss_subsample(points, loss_grid_stride(points.count));
  constexpr int kGrid = 50;
  auto gamma1_at = [&](double u) { return gamma1_floor + span * std::pow(10.0, -4.0 + 5.0 * u / kGrid); };
  std::vector<LossStart> grid;
  double best_ssr = std::numeric_limits<double>::infinity(), best_gamma4 = 0;
  int best_u = -1;
  for (double shift : shifts) {
    const double gamma4 = -r_min + shift;  // CC only
    for (int u = 0; u <= kGrid; ++u) {
      LossStart candidate;
      if (!loss_projection(subsample, form, gamma1_at(u), gamma4, candidate)) continue;
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
      return loss_projection(subsample, form, gamma1_at(u), best_gamma4, s) ? s.ssr
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
    if (loss_projection(subsample, form, gamma1_at(0.5 * (lo + hi)), best_gamma4, refined) &&
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

/// Fits γ of `options.form` to every sample of `table`, pooled over its runs (docs/model.md eq. (6)); the
/// columnar twin of fit_loss_model(const LossTrace&), which it serves (same optimum, same report).
///
/// Throws spotdnn::invalid_argument for a bad table (see validate_loss_table) or bad options. Returns
/// status not_identifiable, with NaN coefficients and a message naming the coefficients and the data that
/// would identify them, when the trace cannot determine γ. Decided from the data before solving: all runs
/// share one weighted batch (γ2 and γ3 then enter only as γ2·b_w + γ3); the CC form without a
/// convergence_coefficient column, or with one whose values are all that of a homogeneous cluster,
/// √(1 − 1/n) (R then carries nothing beyond n, which √n and γ2·b_w + γ3 already model, and γ4 could only
/// reshape that, with error bars many times its value), or with a single value (γ4 then only rescales
/// γ2, γ3); no more samples than coefficients. After solving: a rank-deficient Jacobian at the estimate
/// (detail::unit_covariance_from_normal names the coefficients it cannot separate). A converged fit can
/// still leave a coefficient poorly determined: FitParameter::uncertain() flags a standard error larger
/// than the estimate's magnitude. Standard errors use the Ceres covariance scaled by 2·cost/(m − p);
/// 95% intervals use Student's t with m − p degrees of freedom. Memory: beyond the table, one double per
/// sample only with late-point weights or relative residuals; every pass over the data streams.
[[nodiscard]] inline LossFitResult fit_loss_model(const LossTable& table, const LossFitOptions& options = {}) {
  constexpr std::string_view fn = "fit_loss_model";
  const auto started = std::chrono::steady_clock::now();
  detail::validate_loss_table_shape(table);  // the samples are checked in the first pass below
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
  const std::size_t m = table.size();
  result.observations = m;
  result.free_parameters = p;

  // Per run: its cluster, last iteration and sample count; the extremes of j and R; what the trace can
  // identify (runs with samples only).
  const std::size_t run_count = table.runs.size();
  std::vector<detail::LossRunShape> shapes(run_count);
  std::vector<double> run_last_iteration(run_count, 0.0);
  std::vector<std::size_t> run_samples(run_count, 0);
  double j_min = std::numeric_limits<double>::infinity(), j_max = 0;
  double loss_sum = 0;  // Σ loss in sample order, for R² below
  for (std::size_t i = 0; i < m;) {
    if (!detail::loss_table_row_ok(table, i)) validate_loss_table(table);  // throws naming the sample
    // A stretch of one run in registers (not a load and store of its entries per sample).
    const std::uint32_t r = table.run[i];
    double last = run_last_iteration[r], low = j_min, high = j_max;
    std::size_t k = i;
    for (; k < m && table.run[k] == r; ++k) {
      if (!detail::loss_table_row_ok(table, k)) validate_loss_table(table);
      const double j = table.iteration[k];
      last = std::max(last, j);
      low = std::min(low, j);
      high = std::max(high, j);
      loss_sum += table.loss[k];
    }
    run_last_iteration[r] = last;
    run_samples[r] += k - i;
    j_min = low;
    j_max = high;
    i = k;
  }
  std::set<double> batches, coefficients;
  double r_min = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < run_count; ++k) {
    const LossRun& run = table.runs[k];
    const double r = run.convergence_coefficient ? *run.convergence_coefficient
                                                 : homogeneous_convergence_coefficient(run.workers);
    shapes[k] = {run.workers, run.weighted_batch, r, std::sqrt(run.workers)};
    if (run_samples[k] == 0) continue;
    batches.insert(run.weighted_batch);
    coefficients.insert(r);
    r_min = std::min(r_min, r);
  }
  // Weights: none stored unless some differ from 1.
  std::vector<double> sqrt_weights;
  if (options.late_weight != 0 || options.relative_residuals) {
    sqrt_weights.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
      const double last = run_last_iteration[table.run[i]], loss = table.loss[i];
      double weight = 1.0 + (last > 0 ? options.late_weight * table.iteration[i] / last : 0.0);
      if (options.relative_residuals) {
        if (!(loss > 0)) {
          detail::fail(fn, detail::trace_location(table.source, table.line_of(i), i) + ": loss", loss,
                       "relative residuals need a positive loss");
        }
        weight /= loss * loss;
      }
      sqrt_weights[i] = std::sqrt(weight);
    }
  }
  const detail::LossRows points{table.iteration.data(), table.loss.data(),
                                sqrt_weights.empty() ? nullptr : sqrt_weights.data(), table.run.data(), shapes.data(), m};
  // What the trace cannot identify, decided from the data alone (which columns and how many distinct
  // values), before any solve: every reason, each naming its coefficients and the data that would fix it.
  std::vector<std::string> unidentified;
  if (batches.size() < 2) {
    unidentified.push_back("gamma2 and gamma3 need runs at two or more weighted batches: every run has weighted batch " +
                           detail::format_number(*batches.begin()) +
                           ", so they enter only as gamma2*b_w + gamma3 and cannot be separated");
  }
  if (form == LossForm::cc) {
    bool measured = false, heterogeneous = false;
    for (std::size_t k = 0; k < run_count; ++k) {
      const LossRun& run = table.runs[k];
      if (run_samples[k] == 0 || !run.convergence_coefficient) continue;
      measured = true;
      const double homogeneous = homogeneous_convergence_coefficient(run.workers);
      // 1e-5: R written with 6 significant digits still counts as the homogeneous value.
      if (std::abs(*run.convergence_coefficient - homogeneous) > 1e-5 * std::max(1.0, homogeneous)) heterogeneous = true;
    }
    if (!measured) {
      unidentified.push_back(
          "gamma4 needs a convergence_coefficient column (cc form): without it every run's R is that of a homogeneous "
          "cluster of its worker count, sqrt(1 - 1/n), so gamma4 could only reshape the dependence on n that the "
          "factor sqrt(n) and gamma2*b_w + gamma3 already carry; give each run's measured R (heterogeneous clusters, "
          "at least two different values) or use the seed form");
    } else if (coefficients.size() < 2) {
      unidentified.push_back("gamma4 needs runs with two or more different convergence_coefficient values (cc form): every run has R = " +
                             detail::format_number(*coefficients.begin()) +
                             ", so gamma4 only rescales gamma2 and gamma3; profile clusters with different R or use the seed form");
    } else if (!heterogeneous) {
      unidentified.push_back(
          "gamma4 needs a run on a heterogeneous cluster (cc form): every run's convergence_coefficient is sqrt(1 - 1/n) "
          "of its worker count, that of a homogeneous cluster, so R carries nothing beyond n and gamma4 could only "
          "reshape the dependence on n that sqrt(n) and gamma2*b_w + gamma3 already carry; add runs on mixed clusters "
          "or use the seed form");
    }
  }
  if (m <= p) {
    unidentified.push_back(std::to_string(p) + " coefficients need more than " + std::to_string(p) + " samples (the trace has " +
                           std::to_string(m) + ")");
  }
  if (!unidentified.empty()) {
    result.status = FitStatus::not_identifiable;
    for (const auto& why : unidentified) result.message += (result.message.empty() ? "" : "; ") + why;
    return result;
  }

  // Bounds (docs/model.md eq. (6) must stay finite and decreasing towards a non-negative asymptote).
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
  const std::vector<detail::LossStart> grid =
      detail::loss_grid_starts(points, form, lower, options.physical_bounds, j_min, j_max, r_min);
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
  const detail::LossCostFunction<4> seed_rows(points, seed_scale);
  const detail::LossCostFunction<5> cc_rows(points, cc_scale);
  detail::LossNormalEquationsCost<4>* seed_sums = nullptr;  // owned by `problem`
  detail::LossNormalEquationsCost<5>* cc_sums = nullptr;
  if (compressed) {
    if (form == LossForm::seed) {
      seed_sums = new detail::LossNormalEquationsCost<4>(seed_rows);
      problem.AddResidualBlock(seed_sums, nullptr, theta.data());
    } else {
      cc_sums = new detail::LossNormalEquationsCost<5>(cc_rows);
      problem.AddResidualBlock(cc_sums, nullptr, theta.data());
    }
  }
  const std::size_t chunk = options.robust_loss == RobustLoss::none ? 256 : 1;
  for (std::size_t first = 0; !compressed && first < m; first += chunk) {
    const std::size_t count = std::min(chunk, m - first);
    const detail::LossRows block = points.slice(first, count);
    ceres::LossFunction* rho = nullptr;
    if (options.robust_loss == RobustLoss::huber) rho = new ceres::HuberLoss(options.robust_scale);
    if (options.robust_loss == RobustLoss::cauchy) rho = new ceres::CauchyLoss(options.robust_scale);
    ceres::CostFunction* cost = nullptr;
    if (options.automatic_differentiation) {
      if (form == LossForm::seed) {
        using F = detail::LossResiduals<4>;
        cost = new ceres::AutoDiffCostFunction<F, ceres::DYNAMIC, 4>(new F{block, seed_scale}, int(count));
      } else {
        using F = detail::LossResiduals<5>;
        cost = new ceres::AutoDiffCostFunction<F, ceres::DYNAMIC, 5>(new F{block, cc_scale}, int(count));
      }
    } else if (form == LossForm::seed) {
      cost = new detail::LossCostFunction<4>(block, seed_scale);
    } else {
      cost = new detail::LossCostFunction<5>(block, cc_scale);
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
    // JᵀJ straight from the closed-form rows (what Problem::Evaluate would give, without a 10⁵ × p CRS copy);
    // usually the sums of the solver's last accepted step, so no further pass.
    Eigen::MatrixXd normal;
    bool finite = false;
    double rtr = 0;
    if (form == LossForm::seed) {
      Eigen::Matrix<double, 4, 4> jtj;
      Eigen::Matrix<double, 4, 1> jtr;
      finite = seed_sums->normal_equations(theta.data(), jtj, jtr, rtr);
      normal = jtj;
    } else {
      Eigen::Matrix<double, 5, 5> jtj;
      Eigen::Matrix<double, 5, 1> jtr;
      finite = cc_sums->normal_equations(theta.data(), jtj, jtr, rtr);
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

  // RMSE and R² in two streaming passes (the arithmetic of set_goodness_of_fit, without its arrays).
  const double mean = loss_sum / double(m);
  // Each run's numerator (γ2·b_w + γ3)·√n (CC: ·√((R + γ4)·n)) once: the same operations, in the same order,
  // as loss_at_iteration, without a square root a point.
  std::vector<double> numerator(run_count);
  for (std::size_t k = 0; k < run_count; ++k) {
    const detail::LossRunShape& q = shapes[k];
    numerator[k] = form == LossForm::seed
                       ? (gamma[1] * q.weighted_batch + gamma[2]) * std::sqrt(q.workers)
                       : (gamma[1] * q.weighted_batch + gamma[2]) * std::sqrt((q.convergence_coefficient + gamma[3]) * q.workers);
  }
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const double y = table.loss[i];
    const double predicted = numerator[table.run[i]] / (table.iteration[i] + gamma[0]) + gamma[p - 1];
    ss_res += (y - predicted) * (y - predicted);
    ss_tot += (y - mean) * (y - mean);
  }
  result.rmse = std::sqrt(ss_res / double(m));
  result.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : std::numeric_limits<double>::quiet_NaN();

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

/// Fits γ of `options.form` to every sample of `trace`, pooled over its runs (docs/model.md eq. (6)): moves the
/// trace into columns (to_loss_table, which applies validate_loss_trace's checks and messages sample by
/// sample) and runs fit_loss_model on them. Throws spotdnn::invalid_argument for a bad trace or bad
/// options; see fit_loss_model(const LossTable&).
[[nodiscard]] inline LossFitResult fit_loss_model(const LossTrace& trace, const LossFitOptions& options = {}) {
  const auto started = std::chrono::steady_clock::now();
  LossFitResult result = fit_loss_model(to_loss_table(trace), options);
  result.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace spotdnn
