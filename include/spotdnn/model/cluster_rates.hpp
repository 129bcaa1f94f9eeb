#pragma once
// SPDX-License-Identifier: MIT
/// @file model/cluster_rates.hpp Cluster-wide rates of asynchronous training: normalized iteration
/// time, throughput, weighted-average batch and the convergence coefficient (docs/model.md eqs. (4)–(5)).

#include <cmath>

namespace spotdnn {

/// Accumulates the workers of a cluster, group by group (a group is `count` identical workers), in one
/// pass and without allocating, then answers the cluster-wide rates. Order of groups does not matter.
template <typename T>
class ClusterRates {
 public:
  /// Adds `count` workers, each running `batch` samples per iteration in `iteration_time_s` seconds.
  void add(double count, const T& batch, const T& iteration_time_s) {
    if (!(count > 0)) return;
    const T worker_samples_per_s = batch / iteration_time_s;
    iterations_per_s_ += T(count) / iteration_time_s;
    samples_per_s_ += T(count) * worker_samples_per_s;
    sum_squared_worker_samples_per_s_ += T(count) * worker_samples_per_s * worker_samples_per_s;
    if (!has_workers_ || worker_samples_per_s > largest_worker_samples_per_s_) {
      largest_worker_samples_per_s_ = worker_samples_per_s;
    }
    has_workers_ = true;
  }

  /// Σ_i 1/T_i: PS updates per second.
  /// @note docs/model.md eq. (4)
  [[nodiscard]] T iterations_per_s() const { return iterations_per_s_; }

  /// T_norm = 1/Σ_i 1/T_i (s): the time between two PS updates.
  /// @note docs/model.md eq. (4)
  [[nodiscard]] T iteration_time_s() const { return T(1) / iterations_per_s_; }

  /// v = Σ_i b_i/T_i (samples/s).
  /// @note docs/model.md eq. (4)
  [[nodiscard]] T samples_per_s() const { return samples_per_s_; }

  /// b_w = v·T_norm (samples per PS update): the weighted-average batch.
  /// @note docs/model.md eq. (4)
  [[nodiscard]] T weighted_batch() const { return samples_per_s_ / iterations_per_s_; }

  /// R = sqrt((w_1 − 1)² + Σ_{i≥2} w_i²) with w_i = (b_i/T_i)/v sorted descending, so w_1 is the
  /// largest share. Homogeneous n workers give sqrt(1 − 1/n); one worker gives 0.
  /// Computed as sqrt((w_1 − 1)² + Σ_i w_i² − w_1²), which needs no sorting.
  /// @note spotDNN convergence coefficient (camera-ready paper), docs/model.md eq. (5).
  [[nodiscard]] T convergence_coefficient() const {
    using std::sqrt;
    if (!has_workers_) return T(0);
    const T w1 = largest_worker_samples_per_s_ / samples_per_s_;
    const T sum_w_squared = sum_squared_worker_samples_per_s_ / (samples_per_s_ * samples_per_s_);
    T r_squared = (w1 - T(1)) * (w1 - T(1)) + sum_w_squared - w1 * w1;
    if (!(r_squared > T(0))) return T(0);  // one worker: exactly 0, up to rounding
    return sqrt(r_squared);
  }

  [[nodiscard]] bool empty() const { return !has_workers_; }

 private:
  T iterations_per_s_ = T(0);
  T samples_per_s_ = T(0);
  T sum_squared_worker_samples_per_s_ = T(0);
  T largest_worker_samples_per_s_ = T(0);
  bool has_workers_ = false;
};

}  // namespace spotdnn
