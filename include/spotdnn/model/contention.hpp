#pragma once
// SPDX-License-Identifier: MIT
/// @file model/contention.hpp Parameter-server bandwidth contention: the probability that workers
/// contend, and the bandwidth each worker then gets (spotDNN, IWQoS 2023; docs/model.md eqs. (1)–(2)).

#include <cmath>

namespace spotdnn {

/// Probability that the n workers contend for the PS link: P(n) = clamp(α1·√n + β1, 0, 1).
/// @note spotDNN contention model, docs/model.md eq. (1).
/// @param workers n, number of worker instances (dimensionless; a scalar so fits can differentiate)
/// @param alpha1 α1 (dimensionless)
/// @param beta1  β1 (dimensionless)
template <typename T>
T contention_probability(const T& workers, const T& alpha1, const T& beta1) {
  using std::sqrt;
  const T p = alpha1 * sqrt(workers) + beta1;
  if (p < T(0)) return T(0);
  if (p > T(1)) return T(1);
  return p;
}

/// Bandwidth one worker gets from the PS:
/// B_wk(n) = P·B_ps/n + (1−P)·B_req when B_req > B_ps/n (the PS link is oversubscribed), else B_req.
/// At B_req = B_ps/n exactly the link is not oversubscribed and the worker gets B_req.
/// @note spotDNN contention model, docs/model.md eq. (2).
/// @param workers n (dimensionless)
/// @param ps_bandwidth_bytes_per_s B_ps (bytes/s)
/// @param required_bandwidth_bytes_per_s B_req (bytes/s)
/// @param probability P(n) from contention_probability (dimensionless)
/// @return B_wk in bytes/s
template <typename T>
T worker_bandwidth_bytes_per_s(const T& workers, const T& ps_bandwidth_bytes_per_s,
                               const T& required_bandwidth_bytes_per_s, const T& probability) {
  const T fair_share_bytes_per_s = ps_bandwidth_bytes_per_s / workers;
  if (required_bandwidth_bytes_per_s > fair_share_bytes_per_s) {
    return probability * fair_share_bytes_per_s + (T(1) - probability) * required_bandwidth_bytes_per_s;
  }
  return required_bandwidth_bytes_per_s;
}

}  // namespace spotdnn
