#pragma once
// SPDX-License-Identifier: MIT
/// @file model/profile_estimate.hpp Instance types the workload has no profile for, and an explicit,
/// marked estimate of their profiles scaled from a profiled type by published GPU peak throughput
/// (docs/model.md eq. (10)).
///
/// With the same per-GPU batch, every GPU of the estimated type t is taken to compute its share faster
/// than a GPU of the source type f in proportion to their peaks, and an instance's GPUs work in
/// parallel, so the instance's compute time per iteration scales by the ratio of the peaks:
///
///     T_comp,t = T_comp,f · peak_f / peak_t,    batch_per_gpu_t = batch_per_gpu_f        (eq. 10)
///
/// T_comp,f is the source profile's compute time, or, when it gives the profiled iteration time,
/// T_comp,f = T_prof,f − 2·S/B_req − 2·g_f·S/B_pcie,f (eq. 3). The estimate keeps the source's form: a
/// compute time, or the iteration time T_prof,t = T_comp,t + 2·S/B_req + 2·g_t·S/B_pcie,t. Only compute
/// time scales: the PS and PCIe transfers do not depend on the GPU. The estimate says estimated_from = f,
/// and every output that uses it says "estimated"; `spotdnn fit throughput` replaces it by a measurement.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/gpu_peak_throughput.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {

/// The catalog's types (in catalog order) the workload has no profile for: a planner cannot use them.
[[nodiscard]] inline std::vector<std::string> types_without_profile(const Workload& workload, const Catalog& catalog) {
  std::vector<std::string> names;
  for (const InstanceType& type : catalog.instance_types) {
    if (workload.profiles.find(type.name) == workload.profiles.end()) names.push_back(type.name);
  }
  return names;
}

/// {TYPE: FROM} for every profile of `workload` that is estimated (estimated_from not empty).
[[nodiscard]] inline std::map<std::string, std::string> estimated_profiles(const Workload& workload) {
  std::map<std::string, std::string> estimated;
  for (const auto& [type, profile] : workload.profiles) {
    if (!profile.estimated_from.empty()) estimated.emplace(type, profile.estimated_from);
  }
  return estimated;
}

/// {TYPE: FROM} for the types of `cluster` whose profile is estimated: what a plan or prediction of that
/// cluster rests on.
[[nodiscard]] inline std::map<std::string, std::string> estimated_profiles(const Workload& workload, const Cluster& cluster) {
  std::map<std::string, std::string> estimated;
  for (const auto& [type, count] : cluster.counts()) {
    const auto found = workload.profiles.find(type);
    if (count > 0 && found != workload.profiles.end() && !found->second.estimated_from.empty()) {
      estimated.emplace(type, found->second.estimated_from);
    }
  }
  return estimated;
}

namespace detail {

/// Peak FP32 TFLOPS of the GPUs of catalog type `type`; throws naming the type and its GPU model.
[[nodiscard]] inline double peak_tflops_of(std::string_view fn, const InstanceType& type) {
  const std::string field = "catalog type " + spotdnn::detail::quoted(type.name) + ".gpu_model";
  if (type.gpu_model.empty()) {
    fail(fn, field, "\"\"",
         "unknown: an estimate by GPU peak throughput needs the catalog's gpu_model (AWS's GpuInfo name; known: " +
             known_gpu_models() + ")");
  }
  const GpuPeakThroughput* entry = find_gpu_peak_throughput(type.gpu_model);
  if (entry == nullptr) {
    fail(fn, field, spotdnn::detail::quoted(type.gpu_model), "no published peak throughput known for this GPU (known: " + known_gpu_models() + ")");
  }
  return entry->fp32_tflops;
}

}  // namespace detail

/// The profile of catalog type `to_type` estimated from `from_type`'s by docs/model.md eq. (10), with
/// estimated_from = from_type. Throws spotdnn::invalid_argument (naming the type and field) when either type
/// is not in the catalog, from_type has no profile or an estimated one, the catalog gives no known GPU model
/// for either, or the source profile's compute time is not positive.
/// @note docs/model.md eqs. (3) and (10).
[[nodiscard]] inline TypeProfile estimate_profile(const Workload& workload, const Catalog& catalog, std::string_view from_type,
                                                  std::string_view to_type) {
  constexpr std::string_view fn = "estimate_profile";
  const auto from_index = catalog.index_of(from_type);
  if (!from_index) {
    detail::fail(fn, "from_type", detail::quoted(from_type), "not in the catalog (known: " + catalog.type_names() + ")");
  }
  const auto to_index = catalog.index_of(to_type);
  if (!to_index) detail::fail(fn, "to_type", detail::quoted(to_type), "not in the catalog (known: " + catalog.type_names() + ")");
  const auto source = workload.profiles.find(from_type);
  if (source == workload.profiles.end()) {
    std::string profiled;
    for (const auto& entry : workload.profiles) profiled.append(profiled.empty() ? "" : ", ").append(entry.first);
    detail::fail(fn, "from_type", detail::quoted(from_type),
                 "workload " + detail::quoted(workload.name) + " has no profile for it (profiled: " +
                     (profiled.empty() ? std::string("none") : profiled) + ")");
  }
  const TypeProfile& from_profile = source->second;
  if (!from_profile.estimated_from.empty()) {
    detail::fail(fn, "from_type", detail::quoted(from_type),
                 "its profile is itself estimated (from " + from_profile.estimated_from + "): estimate from a measured profile");
  }
  const InstanceType& from = catalog.instance_types[*from_index];
  const InstanceType& to = catalog.instance_types[*to_index];
  const double from_peak_tflops = detail::peak_tflops_of(fn, from);
  const double to_peak_tflops = detail::peak_tflops_of(fn, to);

  const double s = workload.param_bytes;
  const double b_req = workload.required_bandwidth_bytes_per_s;
  const double from_compute_s =
      from_profile.compute_time_s
          ? *from_profile.compute_time_s
          : compute_time_from_profile_s<double>(*from_profile.iteration_time_s, s, b_req, from.gpus, from.pcie_bandwidth_bytes_per_s);
  if (!(from_compute_s > 0)) {
    detail::fail(fn, "workload.profiles[\"" + from.name + "\"].iteration_time_s", from_profile.iteration_time_s.value_or(0.0),
                 "not longer than its own network + PCIe time, so it gives no compute time to scale");
  }
  const double to_compute_s = from_compute_s * from_peak_tflops / to_peak_tflops;  // eq. (10)

  TypeProfile estimate;
  estimate.batch_per_gpu = from_profile.batch_per_gpu;
  estimate.estimated_from = std::string(from_type);
  if (from_profile.compute_time_s) {
    estimate.compute_time_s = to_compute_s;
  } else {
    estimate.iteration_time_s = to_compute_s + network_time_s<double>(s, b_req) +
                                pcie_time_s<double>(to.gpus, s, to.pcie_bandwidth_bytes_per_s);
  }
  return estimate;
}

/// Why catalog type `type` cannot be estimated by GPU peak ("" when it can): its GPU model is not given, or
/// spotdnn knows no published peak for it (e.g. "Gaudi HL-205", "Radeon Pro V520").
[[nodiscard]] inline std::string why_not_estimable(const InstanceType& type) {
  if (type.gpu_model.empty()) return type.name + ": the catalog gives no gpu_model";
  if (find_gpu_peak_throughput(type.gpu_model) == nullptr) {
    return type.name + ": no published peak throughput known for its GPU " + detail::quoted(type.gpu_model);
  }
  return {};
}

/// `workload` with a profile estimated from `from_type` (docs/model.md eq. (10)) for every catalog type it
/// has no profile for and whose GPU's peak is known (the others stay without a profile: see
/// why_not_estimable). Existing profiles, measured or estimated, are never replaced. Validates both and
/// checks `from_type` (its profile and its GPU model) even when no type lacks a profile; throws
/// spotdnn::invalid_argument as estimate_profile.
/// @note docs/model.md eq. (10).
[[nodiscard]] inline Workload estimate_profiles(Workload workload, const Catalog& catalog, std::string_view from_type) {
  constexpr std::string_view fn = "estimate_profiles";
  workload.validate();
  catalog.validate();
  if (!catalog.index_of(from_type)) {
    detail::fail(fn, "from_type", detail::quoted(from_type), "not in the catalog (known: " + catalog.type_names() + ")");
  }
  // Checks from_type's profile and GPU model even when nothing is missing: a wrong source is a mistake.
  (void)estimate_profile(workload, catalog, from_type, from_type);
  for (const std::string& missing : types_without_profile(workload, catalog)) {
    if (!why_not_estimable(catalog.at(missing)).empty()) continue;
    workload.profiles.emplace(missing, estimate_profile(workload, catalog, from_type, missing));
  }
  return workload;
}

}  // namespace spotdnn
