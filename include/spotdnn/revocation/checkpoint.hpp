#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/checkpoint.hpp How often to checkpoint the parameter server's model: Young's and
/// Daly's optimal intervals from the checkpoint write time and the mean time to interruption.

#include <cmath>
#include <limits>
#include <string>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn {

/// Young's first-order optimum: τ = √(2·δ·M) (compute time between checkpoints).
/// @note J. W. Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9), 1974.
/// @param write_time_s δ, time to write one checkpoint (s)
/// @param mean_time_to_interruption_s M, mean time between interruptions of the job (s)
/// @return the interval τ (s)
[[nodiscard]] inline double young_checkpoint_interval_s(double write_time_s, double mean_time_to_interruption_s) {
  detail::require_positive("young_checkpoint_interval_s", "write_time_s", write_time_s);
  detail::require_positive("young_checkpoint_interval_s", "mean_time_to_interruption_s", mean_time_to_interruption_s);
  return std::sqrt(2.0 * write_time_s * mean_time_to_interruption_s);
}

/// Daly's higher-order optimum: τ = √(2δM)·[1 + ⅓·√(δ/(2M)) + (1/9)·(δ/(2M))] − δ for δ < 2M, else τ = M.
/// With M = 24 h and δ = 5 min it gives 116.7 min (Young: 120.0 min).
/// @note J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
///       Future Generation Computer Systems 22(3), 2006.
/// @param write_time_s δ, time to write one checkpoint (s)
/// @param mean_time_to_interruption_s M, mean time between interruptions of the job (s)
/// @return the interval τ (s)
[[nodiscard]] inline double daly_checkpoint_interval_s(double write_time_s, double mean_time_to_interruption_s) {
  detail::require_positive("daly_checkpoint_interval_s", "write_time_s", write_time_s);
  detail::require_positive("daly_checkpoint_interval_s", "mean_time_to_interruption_s", mean_time_to_interruption_s);
  const double delta = write_time_s;
  const double m = mean_time_to_interruption_s;
  if (delta >= 2.0 * m) return m;
  const double ratio = delta / (2.0 * m);
  return std::sqrt(2.0 * delta * m) * (1.0 + std::sqrt(ratio) / 3.0 + ratio / 9.0) - delta;
}

/// Both intervals for one job, and the expected share of time lost to checkpoints and rework under Young's
/// first-order model (δ/τ + τ/(2M)).
struct CheckpointPlan {
  double write_time_s = 0;
  double mean_time_to_interruption_s = 0;
  double young_interval_s = 0;
  double daly_interval_s = 0;
  double overhead_fraction_at_daly = 0;  ///< δ/τ + (τ + δ)/(2M) at τ = Daly's interval (first-order estimate)
};

/// Young's and Daly's intervals; an infinite MTTI (nothing is ever revoked) gives infinite intervals:
/// never checkpoint.
[[nodiscard]] inline CheckpointPlan checkpoint_plan(double write_time_s, double mean_time_to_interruption_s) {
  CheckpointPlan plan;
  plan.write_time_s = write_time_s;
  plan.mean_time_to_interruption_s = mean_time_to_interruption_s;
  detail::require_positive("checkpoint_plan", "write_time_s", write_time_s);
  if (std::isinf(mean_time_to_interruption_s) && mean_time_to_interruption_s > 0) {
    plan.young_interval_s = plan.daly_interval_s = std::numeric_limits<double>::infinity();
    return plan;
  }
  plan.young_interval_s = young_checkpoint_interval_s(write_time_s, mean_time_to_interruption_s);
  plan.daly_interval_s = daly_checkpoint_interval_s(write_time_s, mean_time_to_interruption_s);
  const double tau = plan.daly_interval_s;
  plan.overhead_fraction_at_daly = write_time_s / tau + (tau + write_time_s) / (2.0 * mean_time_to_interruption_s);
  return plan;
}

}  // namespace spotdnn
