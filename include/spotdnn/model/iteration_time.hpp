#pragma once
// SPDX-License-Identifier: MIT
/// @file model/iteration_time.hpp One worker's iteration time: compute + PS network + PCIe
/// (spotDNN, IWQoS 2023; docs/model.md eq. (3)).

namespace spotdnn {

/// Time to push gradients to and pull parameters from the PS: 2·S / B_wk.
/// @param param_bytes S (bytes)
/// @param worker_bandwidth_bytes_per_s B_wk (bytes/s)
/// @return seconds per iteration
template <typename T>
T network_time_s(const T& param_bytes, const T& worker_bandwidth_bytes_per_s) {
  return T(2) * param_bytes / worker_bandwidth_bytes_per_s;
}

/// Time to move parameters and gradients between host and the g GPUs: 2·g·S / B_pcie.
/// @param gpus g_k (dimensionless)
/// @param param_bytes S (bytes)
/// @param pcie_bandwidth_bytes_per_s B_pcie,k (bytes/s)
/// @return seconds per iteration
template <typename T>
T pcie_time_s(const T& gpus, const T& param_bytes, const T& pcie_bandwidth_bytes_per_s) {
  return T(2) * gpus * param_bytes / pcie_bandwidth_bytes_per_s;
}

/// Iteration time of a worker: T_k = T_comp,k + 2·S/B_wk(n) + 2·g_k·S/B_pcie,k.
/// @note spotDNN iteration-time model, docs/model.md eq. (3).
/// @param compute_time_s T_comp,k (s)
/// @param param_bytes S (bytes)
/// @param worker_bandwidth_bytes_per_s B_wk(n) (bytes/s)
/// @param gpus g_k (dimensionless)
/// @param pcie_bandwidth_bytes_per_s B_pcie,k (bytes/s)
/// @return seconds per iteration
template <typename T>
T iteration_time_s(const T& compute_time_s, const T& param_bytes, const T& worker_bandwidth_bytes_per_s,
                   const T& gpus, const T& pcie_bandwidth_bytes_per_s) {
  return compute_time_s + network_time_s(param_bytes, worker_bandwidth_bytes_per_s) +
         pcie_time_s(gpus, param_bytes, pcie_bandwidth_bytes_per_s);
}

/// Compute time from a profiled, uncontended iteration time (the worker had B_req):
/// T_comp,k = T_prof,k − 2·S/B_req − 2·g_k·S/B_pcie,k.
/// (The spotDNN reference Python adds the PCIe term here; that is a bug: both transfers were part of the
/// profiled time, so both are subtracted.)
/// @note spotDNN iteration-time model, docs/model.md eq. (3).
/// @return seconds per iteration; not positive when the profile is inconsistent with S and B_req
template <typename T>
T compute_time_from_profile_s(const T& profiled_iteration_time_s, const T& param_bytes,
                              const T& required_bandwidth_bytes_per_s, const T& gpus,
                              const T& pcie_bandwidth_bytes_per_s) {
  return profiled_iteration_time_s - network_time_s(param_bytes, required_bandwidth_bytes_per_s) -
         pcie_time_s(gpus, param_bytes, pcie_bandwidth_bytes_per_s);
}

}  // namespace spotdnn
