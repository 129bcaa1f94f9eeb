#pragma once
// SPDX-License-Identifier: MIT
/// @file model/loss_model.hpp Training loss after j PS updates, and the updates needed to reach a
/// target loss (spotDNN, IWQoS 2023; docs/model.md eqs. (6)–(7)).

#include <cmath>
#include <string_view>

#include "spotdnn/workload.hpp"

namespace spotdnn {

/// Seed form: f(j) = (γ2·b_w + γ3)·√n / (j + γ1) + γ4.
/// @note spotDNN loss model, docs/model.md eq. (6) (seed form). `gamma` holds γ1..γ4 at [0..3].
/// @param iteration j, PS updates so far (dimensionless)
/// @param workers n (dimensionless)
/// @param weighted_batch b_w (samples)
template <typename T>
T loss_seed_form(const T& iteration, const T& workers, const T& weighted_batch, const T* gamma) {
  using std::sqrt;
  return (gamma[1] * weighted_batch + gamma[2]) * sqrt(workers) / (iteration + gamma[0]) + gamma[3];
}

/// Convergence-coefficient form: f(j) = (γ2·b_w + γ3)·√((R + γ4)·n) / (j + γ1) + γ5.
/// @note spotDNN loss model (camera-ready paper), docs/model.md eq. (6) (CC form). `gamma` holds γ1..γ5 at [0..4].
/// @param convergence_coefficient R (dimensionless, see ClusterRates::convergence_coefficient)
template <typename T>
T loss_cc_form(const T& iteration, const T& workers, const T& weighted_batch, const T& convergence_coefficient,
               const T* gamma) {
  using std::sqrt;
  return (gamma[1] * weighted_batch + gamma[2]) * sqrt((convergence_coefficient + gamma[3]) * workers) /
             (iteration + gamma[0]) +
         gamma[4];
}

/// Either form, chosen by `form`; R is ignored by the seed form.
template <typename T>
T loss_at_iteration(LossForm form, const T& iteration, const T& workers, const T& weighted_batch,
                    const T& convergence_coefficient, const T* gamma) {
  return form == LossForm::seed ? loss_seed_form(iteration, workers, weighted_batch, gamma)
                                : loss_cc_form(iteration, workers, weighted_batch, convergence_coefficient, gamma);
}

/// Why a target loss can or cannot be reached.
enum class TargetOutcome {
  reached,             ///< after `iterations` > 0 PS updates
  met_at_start,        ///< the model's loss at j = 0 is already at or below the target: 0 iterations
  below_asymptote,     ///< the target is at or below the asymptote γ4 (γ5): never reached
  model_not_decreasing,///< the coefficients make the loss constant, rising or undefined for this cluster
  no_workers           ///< the cluster is empty: nothing trains
};

/// The outcome in words, for messages a person reads ("the target is at or below the loss model's asymptote").
constexpr std::string_view describe(TargetOutcome outcome) {
  switch (outcome) {
    case TargetOutcome::reached: return "the target is reached";
    case TargetOutcome::met_at_start: return "the loss model meets the target before any training";
    case TargetOutcome::below_asymptote: return "the target is at or below the loss model's asymptote";
    case TargetOutcome::model_not_decreasing: return "the loss model does not decrease for this cluster";
    case TargetOutcome::no_workers: return "the cluster has no worker";
  }
  return "the loss model does not decrease for this cluster";
}

constexpr std::string_view to_string(TargetOutcome outcome) {
  switch (outcome) {
    case TargetOutcome::reached: return "reached";
    case TargetOutcome::met_at_start: return "met_at_start";
    case TargetOutcome::below_asymptote: return "below_asymptote";
    case TargetOutcome::model_not_decreasing: return "model_not_decreasing";
    case TargetOutcome::no_workers: return "no_workers";
  }
  return "model_not_decreasing";
}

struct IterationsToTarget {
  TargetOutcome outcome = TargetOutcome::reached;
  double iterations = 0;  ///< j; 0 unless `outcome` is reached
};

/// PS updates j to reach `target_loss`, inverting eq. 6:
/// seed j = (γ2·b_w + γ3)·√n/(L − γ4) − γ1; CC j = (γ2·b_w + γ3)·√((R + γ4)·n)/(L − γ5) − γ1.
/// @note docs/model.md eq. (7).
inline IterationsToTarget iterations_to_target_loss(const LossModel& model, double target_loss, double workers,
                                                    double weighted_batch, double convergence_coefficient) {
  if (!(workers > 0)) return {TargetOutcome::no_workers, 0};
  const double* g = model.gamma.data();
  const double asymptote = model.asymptote();
  if (!(target_loss > asymptote)) return {TargetOutcome::below_asymptote, 0};
  const double spread = model.form == LossForm::seed ? workers : (convergence_coefficient + g[3]) * workers;
  const double numerator = (g[1] * weighted_batch + g[2]) * std::sqrt(spread);
  if (!(numerator > 0)) return {TargetOutcome::model_not_decreasing, 0};
  const double iterations = numerator / (target_loss - asymptote) - g[0];
  if (!(iterations > 0)) return {TargetOutcome::met_at_start, 0};
  return {TargetOutcome::reached, iterations};
}

}  // namespace spotdnn
