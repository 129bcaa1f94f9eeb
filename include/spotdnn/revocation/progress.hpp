#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/progress.hpp Training progress that survives a change of cluster: the loss the
/// parameter server's model has reached, and the iterations each cluster still needs from it.
///
/// Every cluster has its own loss curve f_c(j) = A_c/(j + γ1) + a (docs/model.md eq. (6), both forms), with
/// the numerator A_c = (γ2·b_w + γ3)·√n (seed) or (γ2·b_w + γ3)·√((R + γ4)·n) (CC) and the asymptote a.
/// When workers leave or join, the PS keeps its model, so the *loss* is continuous: spotdnn carries the
/// loss ℓ reached so far across the change and continues on the new cluster's curve from the iteration
/// j' with f_new(j') = ℓ, i.e. (j' + γ1)/A_new = (j + γ1)/A_old = 1/(ℓ − a).
///
/// Why not keep the samples trained (j·b_w) instead: the fitted curves of different clusters start at
/// different losses (f_c(0) = A_c/γ1 + a grows with √n), so the same sample count maps to different losses
/// on different clusters, and a revocation would make the loss jump — down when a worker leaves (smaller
/// √n), which no real training does. The loss is what the PS's parameters determine, so it is the quantity
/// that must not jump. The samples trained are still counted and reported.
///
/// From loss ℓ, a cluster needs A_c·(1/(L − a) − 1/(ℓ − a)) more iterations to reach L. This is exactly
/// the j of the same cluster under a *residual* loss model with γ1 = 0 and the target
/// L' = a + 1/(1/(L − a) − 1/(ℓ − a)); so re-planning from a partly trained model is an ordinary plan of the
/// residual problem (see replan.hpp).

#include <cmath>
#include <limits>
#include <string>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {

/// One cluster's loss curve f(j) = numerator/(j + offset) + asymptote.
struct LossCurve {
  double numerator = 0;   ///< A_c; not > 0 when the model does not decrease for this cluster
  double offset = 0;      ///< γ1
  double asymptote = 0;   ///< γ4 (seed) or γ5 (CC)

  [[nodiscard]] bool decreasing() const { return numerator > 0; }

  /// f(j).
  /// @note docs/model.md eq. (6)
  [[nodiscard]] double loss_at(double iterations) const { return numerator / (iterations + offset) + asymptote; }

  /// The j with f(j) = loss (may be negative: the loss is above this curve's start); +inf at or below the
  /// asymptote. Same arithmetic as iterations_to_target_loss.
  /// @note docs/model.md eq. (7)
  [[nodiscard]] double iterations_at(double loss) const {
    if (!(loss > asymptote)) return std::numeric_limits<double>::infinity();
    return numerator / (loss - asymptote) - offset;
  }
};

/// The loss curve of the cluster `e` describes (`e` from PerformanceModel::estimate with any target).
[[nodiscard]] inline LossCurve loss_curve(const LossModel& loss_model, const Estimate& e) noexcept {
  const double* g = loss_model.gamma.data();
  LossCurve curve;
  curve.offset = g[0];
  curve.asymptote = loss_model.asymptote();
  if (e.workers <= 0) return curve;
  const double workers = e.workers;
  const double spread = loss_model.form == LossForm::seed ? workers : (e.convergence_coefficient + g[3]) * workers;
  curve.numerator = (g[1] * e.weighted_batch + g[2]) * std::sqrt(spread);
  return curve;
}

/// The target loss L' of the residual problem (γ1 = 0) whose j equals the iterations still needed from
/// `loss_reached` to `target_loss`: L' = a + 1/(1/(L − a) − 1/(ℓ − a)). Requires a < L < ℓ (ℓ may be +inf:
/// nothing trained yet, then L' = L); throws otherwise.
[[nodiscard]] inline double residual_target_loss(double asymptote, double loss_reached, double target_loss) {
  constexpr std::string_view fn = "residual_target_loss";
  detail::require_finite(fn, "target_loss", target_loss);
  if (!(target_loss > asymptote)) {
    detail::fail(fn, "target_loss", target_loss, "must be above the loss model's asymptote " + detail::format_number(asymptote));
  }
  if (std::isnan(loss_reached) || !(loss_reached > target_loss)) {
    detail::fail(fn, "loss_reached", loss_reached, "must be above the target loss " + detail::format_number(target_loss));
  }
  const double remaining = 1.0 / (target_loss - asymptote) - 1.0 / (loss_reached - asymptote);
  return asymptote + 1.0 / remaining;
}

/// The workload with γ1 = 0: with residual_target_loss() its j is the remaining iterations of any cluster.
[[nodiscard]] inline Workload residual_workload(Workload workload) {
  if (!workload.loss_model.gamma.empty()) workload.loss_model.gamma[0] = 0.0;
  return workload;
}

}  // namespace spotdnn
