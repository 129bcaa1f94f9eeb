#pragma once
// SPDX-License-Identifier: MIT
/// @file bench/planner_problems.hpp Seeded synthetic planning problems for the planner benchmarks, the
/// sliding-window comparison and the large-quota planner tests: the ResNet-110 workload on catalogs of any
/// size, and the preset with raised quotas.

#include <cstdint>
#include <random>
#include <string>

#include <spotdnn/planner.hpp>

namespace spotdnn::bench {

/// A catalog of `types` synthetic GPU instance types, each with quota `quota`, and a workload profiling
/// all of them: GPUs in {1, 2, 4, 8}, 200–1000 samples/s per GPU, per-GPU batch 512 or 1024, a spot
/// price of $0.25–$0.60 per GPU-hour scaled by speed, on-demand at ~3.3×. The loss model and network
/// figures are the ResNet-110 preset's (docs/model.md section 3).
struct SyntheticProblem {
  Workload workload;
  Catalog catalog;
};

inline SyntheticProblem synthetic_problem(int types, int quota, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  SyntheticProblem p;
  p.workload = presets::resnet110_workload();
  p.workload.profiles.clear();
  p.catalog = presets::resnet110_catalog();
  p.catalog.instance_types.clear();
  constexpr int kGpus[] = {1, 2, 4, 8};
  for (int k = 0; k < types; ++k) {
    InstanceType type;
    type.name = "type" + std::to_string(k);
    type.gpus = kGpus[rng() % 4];
    type.quota = quota;
    const double per_gpu_samples_per_s = 200 + 800 * unit(rng);
    const int batch_per_gpu = (rng() % 2 == 0) ? 512 : 1024;
    type.price_usd_per_hour = type.gpus * (0.25 + 0.35 * unit(rng)) * (per_gpu_samples_per_s / 1000.0);
    type.on_demand_price_usd_per_hour = 3.3 * type.price_usd_per_hour;
    type.pcie_bandwidth_bytes_per_s = 10e9;
    p.catalog.instance_types.push_back(type);
    TypeProfile profile;
    profile.batch_per_gpu = batch_per_gpu;
    profile.iteration_time_s = double(type.gpus) * batch_per_gpu / (type.gpus * per_gpu_samples_per_s);
    p.workload.profiles.emplace(type.name, profile);
  }
  return p;
}

/// The ResNet-110 preset (presets.hpp) with every type's quota set to `quota`: the large-quota planning
/// problems (quotas up to limits.hpp's kMaxQuota).
inline SyntheticProblem preset_problem(int quota) {
  SyntheticProblem p;
  p.workload = presets::resnet110_workload();
  p.catalog = presets::resnet110_catalog();
  for (InstanceType& type : p.catalog.instance_types) type.quota = quota;
  return p;
}

}  // namespace spotdnn::bench
