#pragma once
// SPDX-License-Identifier: MIT
/// @file presets.hpp Embedded defaults: the spotDNN ResNet-110 / CIFAR-100 profile and its 5-type
/// us-east-1 catalog (docs/model.md section 3), the default of every `spotdnn` command.

#include <cstdint>

#include "spotdnn/catalog.hpp"
#include "spotdnn/units.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn::presets {

/// One row of docs/model.md section 3's table.
struct Resnet110TypeRow {
  const char* name;
  int gpus;
  double spot_price_usd_per_hour;
  int quota;
  int batch_per_gpu;
  double profiled_samples_per_s;        ///< uncontended throughput measured by the spotDNN prototype
  double on_demand_price_usd_per_hour;  ///< AWS us-east-1 on-demand list price (Linux)
  const char* gpu_model;                ///< AWS's GpuInfo name of the type's GPUs
  int vcpus;                            ///< vCPUs of one instance (AWS)
  std::int64_t memory_mib;              ///< memory of one instance in MiB (AWS)
};

inline constexpr Resnet110TypeRow kResnet110Types[] = {
    {"p3.2xlarge", 1, 0.918, 2, 1024, 1885, 3.06, "V100", 8, 62464},
    {"g4dn.4xlarge", 1, 0.3612, 5, 1024, 750, 1.204, "T4", 16, 65536},
    {"g3.8xlarge", 2, 0.684, 5, 512, 1018, 2.28, "M60", 32, 249856},
    {"g3.16xlarge", 4, 1.5676, 8, 512, 1995, 4.56, "M60", 64, 499712},
    {"p2.8xlarge", 8, 2.16, 5, 1024, 2115, 7.20, "K80", 32, 499712},
};

/// The ResNet-110 / CIFAR-100 workload as published with the spotDNN prototype: S = 11.5 MB,
/// B_req = 142 MB/s, α1 = 0.8, β1 = −1.92, γ (seed form) = (876.5, −0.2, 2507.6, 0.5), and per type the
/// profiled iteration time T_prof,k = g_k·(per-GPU batch)/(samples/s).
inline Workload resnet110_workload() {
  Workload w;
  w.name = "resnet110-cifar100";
  w.param_bytes = units::megabytes_to_bytes(11.5);
  w.required_bandwidth_bytes_per_s = units::megabytes_to_bytes(142);
  w.contention = {0.8, -1.92};
  w.loss_model = {LossForm::seed, {876.5, -0.2, 2507.6, 0.5}};
  for (const auto& row : kResnet110Types) {
    TypeProfile profile;
    profile.batch_per_gpu = row.batch_per_gpu;
    profile.iteration_time_s = double(row.gpus) * row.batch_per_gpu / row.profiled_samples_per_s;
    w.profiles.emplace(row.name, profile);
  }
  return w;
}

/// The 5-type us-east-1 spot catalog of the spotDNN paper with an on-demand m5.xlarge parameter server
/// ($0.192/h, B_ps = 1200 MB/s) and B_pcie = 10 GB/s for every type; each type's GPU model, vCPUs and
/// memory as AWS describes them (so profiles can be estimated from the preset's, docs/model.md eq. (10)).
inline Catalog resnet110_catalog() {
  Catalog c;
  c.region = "us-east-1";
  c.parameter_server = {"m5.xlarge", 0.192, units::megabytes_to_bytes(1200)};
  for (const auto& row : kResnet110Types) {
    InstanceType type;
    type.name = row.name;
    type.gpus = row.gpus;
    type.price_usd_per_hour = row.spot_price_usd_per_hour;
    type.quota = row.quota;
    type.pcie_bandwidth_bytes_per_s = units::megabytes_to_bytes(10000);
    type.market = Market::spot;
    type.on_demand_price_usd_per_hour = row.on_demand_price_usd_per_hour;
    type.gpu_model = row.gpu_model;
    type.vcpus = row.vcpus;
    type.memory_mib = row.memory_mib;
    c.instance_types.push_back(type);
  }
  return c;
}

}  // namespace spotdnn::presets
