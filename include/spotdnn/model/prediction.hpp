#pragma once
// SPDX-License-Identifier: MIT
/// @file model/prediction.hpp predict(): the full, named answer for one cluster and a target loss.

#include <string>
#include <vector>

#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn {

/// One instance type's part of a prediction.
struct WorkerTypeBreakdown {
  std::string type;
  int count = 0;
  int gpus = 1;
  double batch = 0;                ///< b_k (samples per iteration)
  double iteration_time_s = 0;     ///< T_k(n)
  double samples_per_s = 0;        ///< count · b_k / T_k
  double price_usd_per_hour = 0;   ///< per instance
  Market market = Market::spot;
};

/// What the model predicts for one cluster: every field of the docs/formats.md prediction output.
struct Prediction {
  /// feasible; infeasible when the target cannot be reached; target_met_at_start when the loss model's loss
  /// at iteration 0 is already at or below the target (0 iterations, time and cost 0: nothing to train).
  Status status = Status::invalid_input;
  std::string message;                    ///< one sentence a person can read
  TargetOutcome outcome = TargetOutcome::no_workers;
  Cluster cluster;
  double target_loss = 0;
  bool parameter_server_charged = true;
  int workers = 0;
  double training_time_s = 0;
  double cost_usd = 0;
  double worker_cost_usd = 0;
  double ps_cost_usd = 0;
  double iterations = 0;
  double weighted_batch = 0;
  double samples_per_s = 0;
  double iterations_per_s = 0;
  double samples_to_train = 0;
  double convergence_coefficient = 0;
  double worker_bandwidth_bytes_per_s = 0;
  double contention_probability = 0;
  std::vector<WorkerTypeBreakdown> per_type;  ///< in catalog order
};

/// Predicts training of `cluster` to `target_loss`.
/// Throws spotdnn::invalid_argument for an empty cluster, an unknown or unprofiled type, or a non-finite
/// target. An unreachable target is not an error: it comes back as status infeasible with the reason; a
/// target the model meets at iteration 0 comes back as status target_met_at_start (figures 0, honestly).
/// Counts above a type's quota are predicted (quotas bind plans, not what-if questions) and noted in the message.
[[nodiscard]] inline Prediction predict(const PerformanceModel& model, const Cluster& cluster, double target_loss,
                                        const PredictOptions& options = {}) {
  constexpr std::string_view fn = "predict";
  detail::require_finite(fn, "target_loss", target_loss);
  if (cluster.empty()) detail::fail(fn, "cluster", "{}", "give at least one worker (TYPE=N with N >= 1)");
  const std::vector<int> counts = model.counts_of(cluster);
  const Estimate e = model.estimate(counts, target_loss, options);

  Prediction p;
  p.outcome = e.outcome;
  p.cluster = cluster;
  p.target_loss = target_loss;
  p.parameter_server_charged = options.charge_parameter_server;
  p.workers = e.workers;
  p.training_time_s = e.training_time_s;
  p.cost_usd = e.cost_usd;
  p.worker_cost_usd = e.worker_cost_usd;
  p.ps_cost_usd = e.ps_cost_usd;
  p.iterations = e.iterations;
  p.weighted_batch = e.weighted_batch;
  p.samples_per_s = e.samples_per_s;
  p.iterations_per_s = e.iterations_per_s;
  p.samples_to_train = e.samples_to_train;
  p.convergence_coefficient = e.convergence_coefficient;
  p.worker_bandwidth_bytes_per_s = e.worker_bandwidth_bytes_per_s;
  p.contention_probability = e.contention_probability;

  std::string quota_note;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] == 0) continue;
    const WorkerType& w = model.worker_types()[k];
    const double t = model.worker_iteration_time_s(k, e.workers);
    p.per_type.push_back({w.name, counts[k], w.gpus, w.batch, t, counts[k] * w.batch / t, w.price_usd_per_hour, w.market});
    if (counts[k] > w.quota) {
      quota_note += "; note: " + w.name + "=" + std::to_string(counts[k]) + " exceeds its quota of " + std::to_string(w.quota);
    }
  }

  const std::string loss = detail::format_readable(target_loss);
  switch (e.outcome) {
    case TargetOutcome::reached:
      p.status = Status::feasible;
      p.message = "reaches loss " + loss + " after " + detail::format_readable(e.iterations) + " iterations in " +
                  detail::format_readable(e.training_time_s) + " s";
      break;
    case TargetOutcome::met_at_start:
      p.status = Status::target_met_at_start;
      p.message = "the target loss " + loss + " is met before training starts: the loss model gives " +
                  detail::format_readable(loss_at_start(model.workload().loss_model, e)) +
                  " at iteration 0 for this cluster; nothing to train";
      break;
    case TargetOutcome::below_asymptote:
      p.status = Status::infeasible;
      p.message = "target loss " + loss + " is at or below the loss model's asymptote " +
                  detail::format_readable(model.workload().loss_model.asymptote()) + ": no cluster reaches it";
      break;
    case TargetOutcome::model_not_decreasing:
      p.status = Status::infeasible;
      p.message = "the loss model does not decrease for this cluster (weighted batch " +
                  detail::format_readable(e.weighted_batch) + "): check the gamma coefficients";
      break;
    case TargetOutcome::no_workers:
      p.status = Status::invalid_input;
      p.message = "the cluster has no workers";
      break;
  }
  p.message += quota_note;
  return p;
}

}  // namespace spotdnn
