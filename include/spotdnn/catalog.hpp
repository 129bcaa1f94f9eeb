#pragma once
// SPDX-License-Identifier: MIT
/// @file catalog.hpp What a cloud region offers: instance types with GPUs, prices and quotas, and the
/// parameter-server instance.

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/limits.hpp"

namespace spotdnn {

/// PCIe bandwidth assumed when a catalog does not give one: 10 GB/s (docs/model.md).
inline constexpr double kDefaultPcieBandwidthBytesPerS = 10e9;

/// The purchase option of an instance type.
enum class Market { spot, on_demand };

constexpr std::string_view to_string(Market market) {
  return market == Market::spot ? "spot" : "on-demand";
}

constexpr std::optional<Market> market_from_string(std::string_view text) {
  if (text == "spot") return Market::spot;
  if (text == "on-demand" || text == "on_demand") return Market::on_demand;
  return std::nullopt;
}

/// The AWS Spot Advisor's bands of "frequency of interruption" (share of instances interrupted per month).
inline constexpr std::string_view kInterruptionBands[] = {"<5%", "5-10%", "10-15%", "15-20%", ">20%"};

/// One rentable worker type: every worker of the cluster is one such instance.
struct InstanceType {
  std::string name;                ///< cloud name, e.g. "p3.2xlarge"
  int gpus = 1;                    ///< GPUs per instance (g_k)
  double price_usd_per_hour = 0;   ///< price in `market`
  int quota = 0;                   ///< at most this many instances may be rented
  double pcie_bandwidth_bytes_per_s = kDefaultPcieBandwidthBytesPerS;  ///< B_pcie,k
  Market market = Market::spot;    ///< the market `price_usd_per_hour` is quoted in
  /// On-demand price, when `market` is spot and the planner may switch the type to on-demand; 0 = unknown.
  double on_demand_price_usd_per_hour = 0;
  /// Spot revocations per hour of one instance, when known (see revocation/interruption.hpp).
  std::optional<double> revocation_hazard_per_hour;
  /// AWS Spot Advisor interruption band, when known: one of kInterruptionBands.
  std::optional<std::string> interruption_band;

  /// Hourly price in `wanted`; throws when the catalog does not know that price.
  [[nodiscard]] double price_in_usd_per_hour(Market wanted) const {
    if (wanted == market) return price_usd_per_hour;
    if (wanted == Market::on_demand && on_demand_price_usd_per_hour > 0) return on_demand_price_usd_per_hour;
    detail::fail("InstanceType::price_in_usd_per_hour", name + ".market", std::string(to_string(wanted)),
                 "the catalog gives no price for this type in that market");
  }
};

/// The parameter server: one on-demand instance that holds the model (docs/model.md section 1).
struct ParameterServer {
  std::string type = "m5.xlarge";
  double price_usd_per_hour = 0.192;
  double bandwidth_bytes_per_s = 1.2e9;  ///< B_ps
};

/// The instance types of one region, in a fixed order (the order breaks ties between plans).
struct Catalog {
  std::string region;
  ParameterServer parameter_server;
  std::vector<InstanceType> instance_types;

  /// Position of the type called `name`, if the catalog has it.
  [[nodiscard]] std::optional<std::size_t> index_of(std::string_view name) const {
    for (std::size_t k = 0; k < instance_types.size(); ++k) {
      if (instance_types[k].name == name) return k;
    }
    return std::nullopt;
  }

  /// The type called `name`; throws naming the known types when there is none.
  [[nodiscard]] const InstanceType& at(std::string_view name) const {
    if (auto k = index_of(name)) return instance_types[*k];
    detail::fail("Catalog::at", "instance type", detail::quoted(name), "not in the catalog (known: " + type_names() + ")");
  }

  /// "a, b, c": the type names, for messages.
  [[nodiscard]] std::string type_names() const {
    std::string names;
    for (const auto& type : instance_types) names.append(names.empty() ? "" : ", ").append(type.name);
    return names.empty() ? "none" : names;
  }

  /// Throws spotdnn::invalid_argument naming the first bad field.
  void validate() const {
    constexpr std::string_view fn = "Catalog::validate";
    detail::require_printable_name(fn, "region", region);
    detail::require_printable_name(fn, "parameter_server.type", parameter_server.type);
    detail::require_positive(fn, "parameter_server.price_usd_per_hour", parameter_server.price_usd_per_hour);
    detail::require_positive(fn, "parameter_server.bandwidth_bytes_per_s", parameter_server.bandwidth_bytes_per_s);
    if (instance_types.size() > std::size_t(kMaxInstanceTypes)) {
      detail::fail(fn, "instance_types", std::to_string(instance_types.size()) + " types",
                   "a catalog may list at most " + std::to_string(kMaxInstanceTypes) + " instance types");
    }
    for (std::size_t k = 0; k < instance_types.size(); ++k) {
      const InstanceType& type = instance_types[k];
      const std::string field = "instance_types[" + std::to_string(k) + "]";
      detail::require_non_empty(fn, field + ".name", type.name);
      detail::require_printable_name(fn, field + ".name", type.name);
      if (index_of(type.name) != k) detail::fail(fn, field + ".name", detail::quoted(type.name), "listed twice");
      if (type.gpus < 1) detail::fail(fn, field + ".gpus", type.gpus, "must be at least 1");
      if (type.quota < 0) detail::fail(fn, field + ".quota", type.quota, "must not be negative");
      if (type.quota > kMaxQuota) {
        detail::fail(fn, field + ".quota", type.quota, "must be at most " + std::to_string(kMaxQuota));
      }
      detail::require_positive(fn, field + ".price_usd_per_hour", type.price_usd_per_hour);
      detail::require_positive(fn, field + ".pcie_bandwidth_bytes_per_s", type.pcie_bandwidth_bytes_per_s);
      detail::require_non_negative(fn, field + ".on_demand_price_usd_per_hour", type.on_demand_price_usd_per_hour);
      if (type.revocation_hazard_per_hour) {
        detail::require_non_negative(fn, field + ".revocation_hazard_per_hour", *type.revocation_hazard_per_hour);
      }
      if (type.interruption_band) {
        bool known = false;
        for (std::string_view band : kInterruptionBands) known = known || band == *type.interruption_band;
        if (!known) {
          detail::fail(fn, field + ".interruption_band", detail::quoted(*type.interruption_band),
                       "expected one of <5%, 5-10%, 10-15%, 15-20%, >20%");
        }
      }
    }
  }
};

}  // namespace spotdnn
