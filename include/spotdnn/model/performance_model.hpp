#pragma once
// SPDX-License-Identifier: MIT
/// @file model/performance_model.hpp A workload bound to a catalog: per-type constants resolved once,
/// then an allocation-free estimate of any cluster (docs/model.md, all equations).

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/cluster_rates.hpp"
#include "spotdnn/model/contention.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/model/loss_model.hpp"
#include "spotdnn/units.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {

/// Options every prediction takes.
struct PredictOptions {
  /// Add the on-demand parameter server's price to the cost. The spotDNN paper leaves it out.
  bool charge_parameter_server = true;
};

/// A catalog instance type resolved against the workload's profile for it.
struct WorkerType {
  std::string name;
  int gpus = 1;                   ///< g_k
  double batch = 0;               ///< b_k = g_k · per-GPU batch (samples per iteration)
  double compute_time_s = 0;      ///< T_comp,k
  double pcie_time_s = 0;         ///< 2·g_k·S/B_pcie,k
  double price_usd_per_hour = 0;  ///< in `market`
  Market market = Market::spot;
  int quota = 0;
};

/// Everything the model says about one cluster, without names: the planner's hot path.
struct Estimate {
  TargetOutcome outcome = TargetOutcome::no_workers;
  int workers = 0;                            ///< n
  double contention_probability = 0;          ///< P(n), eq. 1
  double worker_bandwidth_bytes_per_s = 0;    ///< B_wk(n), eq. 2
  double iteration_time_s = 0;                ///< T_norm, eq. 4
  double iterations_per_s = 0;                ///< 1/T_norm
  double samples_per_s = 0;                   ///< v, eq. 4
  double weighted_batch = 0;                  ///< b_w, eq. 4
  double convergence_coefficient = 0;         ///< R, eq. 5
  double iterations = 0;                      ///< j, eq. 7
  double training_time_s = 0;                 ///< j·T_norm, eq. 8
  double samples_to_train = 0;                ///< j·b_w, eq. 8
  double worker_price_usd_per_hour = 0;       ///< Σ_i price_i
  double worker_cost_usd = 0;                 ///< eq. 9, workers only
  double ps_cost_usd = 0;                     ///< eq. 9, PS (0 when not charged)
  double cost_usd = 0;                        ///< eq. 9

  /// The target is reached (possibly at j = 0). A cluster that meets the target at start (outcome
  /// met_at_start: 0 iterations, time and cost 0) counts, so every planner's search ranks it first (time
  /// and cost 0 beat every other cluster); the planners then report Status::target_met_at_start instead of
  /// offering it as a plan (plan/detail/plan_problem.hpp, assemble_plan).
  [[nodiscard]] bool reaches_target() const {
    return outcome == TargetOutcome::reached || outcome == TargetOutcome::met_at_start;
  }
};

/// The loss model's loss at iteration j = 0 for the cluster `e` estimates (docs/model.md eq. (6) at j = 0):
/// (γ2·b_w + γ3)·√n/γ1 + γ4 for the seed form. The cluster meets a target at start when this is at or
/// below it. +inf (or NaN) when γ1 <= 0, where eq. (6) has no finite value at j = 0.
[[nodiscard]] inline double loss_at_start(const LossModel& model, const Estimate& e) {
  return loss_at_iteration(model.form, 0.0, double(e.workers), e.weighted_batch, e.convergence_coefficient,
                           model.gamma.data());
}

/// A validated workload and catalog, with every per-type constant computed once.
class PerformanceModel {
 public:
  /// Validates both (throws spotdnn::invalid_argument naming the field) and resolves every catalog type
  /// the workload has a profile for. Catalog types without a profile cannot be used; profiles of types
  /// the catalog lacks are ignored.
  PerformanceModel(Workload workload, Catalog catalog) : workload_(std::move(workload)), catalog_(std::move(catalog)) {
    constexpr std::string_view fn = "PerformanceModel";
    workload_.validate();
    catalog_.validate();
    const double s = workload_.param_bytes;
    const double b_req = workload_.required_bandwidth_bytes_per_s;
    for (const InstanceType& type : catalog_.instance_types) {
      auto found = workload_.profiles.find(type.name);
      if (found == workload_.profiles.end()) {
        unprofiled_types_.push_back(type.name);
        continue;
      }
      const TypeProfile& profile = found->second;
      WorkerType worker;
      worker.name = type.name;
      worker.gpus = type.gpus;
      worker.batch = double(type.gpus) * double(profile.batch_per_gpu);
      worker.pcie_time_s = pcie_time_s<double>(type.gpus, s, type.pcie_bandwidth_bytes_per_s);
      if (profile.compute_time_s) {
        worker.compute_time_s = *profile.compute_time_s;
      } else {
        worker.compute_time_s =
            compute_time_from_profile_s<double>(*profile.iteration_time_s, s, b_req, type.gpus, type.pcie_bandwidth_bytes_per_s);
        if (!(worker.compute_time_s > 0)) {
          detail::fail(fn, "workload.profiles[\"" + type.name + "\"].iteration_time_s", *profile.iteration_time_s,
                       "not longer than its own network + PCIe time (" +
                           detail::format_number(*profile.iteration_time_s - worker.compute_time_s) +
                           " s at the required bandwidth), so the compute time would not be positive");
        }
      }
      worker.market = type.market;
      worker.price_usd_per_hour = type.price_usd_per_hour;
      worker.quota = type.quota;
      worker_types_.push_back(std::move(worker));
    }
  }

  [[nodiscard]] const Workload& workload() const { return workload_; }
  [[nodiscard]] const Catalog& catalog() const { return catalog_; }

  /// Catalog types the workload profiles, in catalog order. Counts passed to estimate() follow this order.
  [[nodiscard]] const std::vector<WorkerType>& worker_types() const { return worker_types_; }

  /// Catalog types the workload has no profile for (they cannot be part of a cluster).
  [[nodiscard]] const std::vector<std::string>& unprofiled_types() const { return unprofiled_types_; }

  [[nodiscard]] std::optional<std::size_t> worker_type_index(std::string_view name) const {
    for (std::size_t k = 0; k < worker_types_.size(); ++k) {
      if (worker_types_[k].name == name) return k;
    }
    return std::nullopt;
  }

  /// P(n), docs/model.md eq. (1).
  [[nodiscard]] double contention_probability(int workers) const {
    return spotdnn::contention_probability<double>(workers, workload_.contention.alpha1, workload_.contention.beta1);
  }

  /// B_wk(n) (bytes/s), docs/model.md eq. (2).
  [[nodiscard]] double worker_bandwidth_bytes_per_s(int workers) const {
    return spotdnn::worker_bandwidth_bytes_per_s<double>(workers, catalog_.parameter_server.bandwidth_bytes_per_s,
                                                        workload_.required_bandwidth_bytes_per_s,
                                                        contention_probability(workers));
  }

  /// T_k(n) (s) of one worker of type `type` in a cluster of n workers, docs/model.md eq. (3).
  [[nodiscard]] double worker_iteration_time_s(std::size_t type, int workers) const {
    const WorkerType& w = worker_types_.at(type);
    return w.compute_time_s + network_time_s(workload_.param_bytes, worker_bandwidth_bytes_per_s(workers)) +
           w.pcie_time_s;
  }

  /// Estimates the cluster with counts[k] workers of worker_types()[k] (k < worker_types().size()).
  /// Never throws or allocates; an empty cluster gives outcome no_workers. docs/model.md eqs. (1)–(9).
  [[nodiscard]] Estimate estimate(const int* counts, double target_loss, const PredictOptions& options = {}) const noexcept {
    Estimate e;
    int workers = 0;
    for (std::size_t k = 0; k < worker_types_.size(); ++k) workers += counts[k];
    e.workers = workers;
    if (workers <= 0) return e;
    e.contention_probability = contention_probability(workers);
    e.worker_bandwidth_bytes_per_s = spotdnn::worker_bandwidth_bytes_per_s<double>(
        workers, catalog_.parameter_server.bandwidth_bytes_per_s, workload_.required_bandwidth_bytes_per_s,
        e.contention_probability);
    const double network_s = network_time_s(workload_.param_bytes, e.worker_bandwidth_bytes_per_s);
    ClusterRates<double> rates;
    for (std::size_t k = 0; k < worker_types_.size(); ++k) {
      if (counts[k] == 0) continue;
      const WorkerType& w = worker_types_[k];
      rates.add(counts[k], w.batch, w.compute_time_s + network_s + w.pcie_time_s);
      e.worker_price_usd_per_hour += counts[k] * w.price_usd_per_hour;
    }
    e.iterations_per_s = rates.iterations_per_s();
    e.iteration_time_s = rates.iteration_time_s();
    e.samples_per_s = rates.samples_per_s();
    e.weighted_batch = rates.weighted_batch();
    e.convergence_coefficient = rates.convergence_coefficient();
    const IterationsToTarget j =
        iterations_to_target_loss(workload_.loss_model, target_loss, workers, e.weighted_batch, e.convergence_coefficient);
    e.outcome = j.outcome;
    if (!e.reaches_target()) {
      constexpr double kNever = std::numeric_limits<double>::infinity();
      e.iterations = e.training_time_s = e.samples_to_train = e.worker_cost_usd = e.cost_usd = kNever;
      e.ps_cost_usd = options.charge_parameter_server ? kNever : 0.0;
      return e;
    }
    e.iterations = j.iterations;
    e.training_time_s = j.iterations * e.iteration_time_s;
    e.samples_to_train = j.iterations * e.weighted_batch;
    e.worker_cost_usd = units::cost_usd(e.worker_price_usd_per_hour, e.training_time_s);
    e.ps_cost_usd = options.charge_parameter_server
                        ? units::cost_usd(catalog_.parameter_server.price_usd_per_hour, e.training_time_s)
                        : 0.0;
    e.cost_usd = e.worker_cost_usd + e.ps_cost_usd;
    return e;
  }

  /// Same, with the counts in a vector that must have one entry per worker type.
  [[nodiscard]] Estimate estimate(const std::vector<int>& counts, double target_loss,
                                  const PredictOptions& options = {}) const {
    if (counts.size() != worker_types_.size()) {
      detail::fail("PerformanceModel::estimate", "counts.size()", double(counts.size()),
                   "must equal the number of worker types (" + std::to_string(worker_types_.size()) + ")");
    }
    return estimate(counts.data(), target_loss, options);
  }

  /// Counts in worker_types() order. Throws naming a type the catalog lacks or the workload does not profile.
  [[nodiscard]] std::vector<int> counts_of(const Cluster& cluster) const {
    std::vector<int> counts(worker_types_.size(), 0);
    for (const auto& [name, count] : cluster.counts()) {
      if (auto k = worker_type_index(name)) {
        counts[*k] = count;
      } else if (catalog_.index_of(name)) {
        detail::fail("PerformanceModel::counts_of", "cluster", detail::quoted(name),
                     "the workload has no profile for this instance type");
      } else {
        detail::fail("PerformanceModel::counts_of", "cluster", detail::quoted(name),
                     "unknown instance type (the catalog has: " + catalog_.type_names() + ")");
      }
    }
    return counts;
  }

 private:
  Workload workload_;
  Catalog catalog_;
  std::vector<WorkerType> worker_types_;
  std::vector<std::string> unprofiled_types_;
};

}  // namespace spotdnn
