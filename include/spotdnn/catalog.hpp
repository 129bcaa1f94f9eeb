#pragma once
// SPDX-License-Identifier: MIT
/// @file catalog.hpp What a cloud region offers: instance types with GPUs, prices (per Availability Zone
/// when known) and quotas, AWS's vCPU quota groups, and the parameter-server instance.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  /// vCPUs of one instance; 0 = unknown (then no vCPU quota group can count the type).
  int vcpus = 0;
  /// Memory of one instance in MiB; 0 = unknown. Informative (the model does not use it).
  std::int64_t memory_mib = 0;
  /// AWS's network performance text, e.g. "Up to 10 Gigabit"; empty = unknown. Informative.
  std::string network_performance;
  /// The GPU model, e.g. "V100" (AWS's GpuInfo name); empty = unknown. Profile estimates scale by its peak.
  std::string gpu_model;
  /// Latest spot price per Availability Zone (AZ name → USD per hour); empty when only one price is known.
  /// `price_usd_per_hour` is then the lowest of them. AZ names differ between accounts.
  std::map<std::string, double> zone_prices_usd_per_hour;
  /// When `price_usd_per_hour` was observed, as ISO 8601 UTC ("2026-11-24T08:00:00Z"); empty = unknown.
  std::string price_observed_at;
  /// Code of the AWS vCPU quota group that counts this type when bought on spot (e.g. "L-7212CCBC"), and
  /// when bought on demand; empty = no group. A code absent from Catalog::quota_groups has no known limit.
  std::string spot_quota_group;
  std::string on_demand_quota_group;

  /// The quota group code that counts this type in `wanted` ("" for none).
  [[nodiscard]] const std::string& quota_group_code(Market wanted) const {
    return wanted == Market::spot ? spot_quota_group : on_demand_quota_group;
  }

  /// Hourly price in `wanted`; throws when the catalog does not know that price.
  [[nodiscard]] double price_in_usd_per_hour(Market wanted) const {
    if (wanted == market) return price_usd_per_hour;
    if (wanted == Market::on_demand && on_demand_price_usd_per_hour > 0) return on_demand_price_usd_per_hour;
    detail::fail("InstanceType::price_in_usd_per_hour", name + ".market", std::string(to_string(wanted)),
                 "the catalog gives no price for this type in that market");
  }
};

/// Largest vCPUs of one instance type, and largest vCPU quota of one group, a catalog may give.
inline constexpr int kMaxInstanceVcpus = 100000;
inline constexpr int kMaxQuotaGroupVcpus = 100000000;
/// Most Availability Zones priced for one type, and most quota groups in one catalog.
inline constexpr std::size_t kMaxZonesPerType = 100;
inline constexpr std::size_t kMaxQuotaGroups = 1000;

/// One AWS vCPU quota: the instances of every type in the group, bought in `market`, may together hold at
/// most `vcpus` vCPUs (Σ_k vcpus_k · n_k ≤ vcpus over the group's types: a linear constraint on the counts).
struct QuotaGroup {
  std::string code;   ///< AWS's QuotaCode, e.g. "L-7212CCBC"
  std::string name;   ///< AWS's QuotaName, e.g. "All P4, P3 and P2 Spot Instance Requests"
  int vcpus = 0;      ///< the applied (or default) quota value, in vCPUs
  Market market = Market::spot;
};

/// Most Spot Placement Scores one catalog may hold, and most instance types one score may name.
inline constexpr std::size_t kMaxPlacementScores = 10000;
inline constexpr std::size_t kMaxPlacementScoreTypes = 100;

/// AWS's Spot Placement Score (`aws ec2 get-spot-placement-scores`): how likely, from 1 to 10, a spot
/// request for `target_capacity` of `instance_types` is to succeed now, in one Availability Zone or in the
/// whole region (docs/market-data.md, "Spot Placement Scores"). AWS scores the request, not each type.
struct PlacementScore {
  std::string zone;                   ///< AZ name (or AZ ID when no name was known); empty = the whole region
  int score = 0;                      ///< 1 (unlikely) to 10 (very likely)
  int target_capacity = 0;            ///< the request's target capacity, in `target_capacity_unit`
  std::string target_capacity_unit = "units";  ///< "units" (instances), "vcpu" or "memory-mib"
  std::vector<std::string> instance_types;     ///< the types the request named (each type is scored by it)
  std::string observed_at;            ///< ISO 8601 UTC when it was asked; empty = unknown
};

/// The parameter server: one on-demand instance that holds the model (docs/model.md section 1).
struct ParameterServer {
  ParameterServer() = default;
  /// `{type, price, bandwidth}` as catalogs before vCPUs and quota groups wrote it (the constructor keeps
  /// that brace form free of missing-initializer warnings).
  ParameterServer(std::string type_name, double price, double bandwidth, int vcpu_count = 0, std::string group_code = {})
      : type(std::move(type_name)),
        price_usd_per_hour(price),
        bandwidth_bytes_per_s(bandwidth),
        vcpus(vcpu_count),
        quota_group(std::move(group_code)) {}

  std::string type = "m5.xlarge";
  double price_usd_per_hour = 0.192;
  double bandwidth_bytes_per_s = 1.2e9;  ///< B_ps
  /// vCPUs of the PS instance; 0 = unknown (then no quota group counts it).
  int vcpus = 0;
  /// Code of the on-demand vCPU quota group that counts the PS (e.g. "L-1216C47A", Running On-Demand
  /// Standard instances); empty = none. It must name a group of Catalog::quota_groups (an on-demand one):
  /// the planner takes `vcpus` off that group's limit before it sizes the workers.
  std::string quota_group;
};

/// The instance types of one region, in a fixed order (the order breaks ties between plans).
struct Catalog {
  std::string region;
  ParameterServer parameter_server;
  std::vector<InstanceType> instance_types;
  /// vCPU quota groups by code (empty: only the per-type `quota`s limit a cluster).
  std::vector<QuotaGroup> quota_groups;
  /// Sources a fetched or imported catalog lacks, and why (e.g. "quotas: AccessDenied"); empty otherwise.
  std::vector<std::string> missing_sources;
  /// Spot Placement Scores of this region (per zone or for the region); empty when none was imported.
  std::vector<PlacementScore> placement_scores;

  /// The quota group with `code`, if the catalog gives its value.
  [[nodiscard]] const QuotaGroup* quota_group(std::string_view code) const {
    for (const QuotaGroup& group : quota_groups) {
      if (group.code == code) return &group;
    }
    return nullptr;
  }

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
    if (parameter_server.vcpus < 0 || parameter_server.vcpus > kMaxInstanceVcpus) {
      detail::fail(fn, "parameter_server.vcpus", parameter_server.vcpus, "must be between 0 and " + std::to_string(kMaxInstanceVcpus));
    }
    if (!parameter_server.quota_group.empty()) {
      const std::string& code = parameter_server.quota_group;
      detail::require_printable_name(fn, "parameter_server.quota_group", code);
      const QuotaGroup* group = quota_group(code);
      if (group == nullptr) {
        detail::fail(fn, "parameter_server.quota_group", detail::quoted(code),
                     "names no group of quota_groups (give its value there, or leave quota_group out)");
      }
      if (group->market != Market::on_demand) {
        detail::fail(fn, "parameter_server.quota_group", detail::quoted(code),
                     "that quota group counts spot instances; the parameter server runs on demand");
      }
      if (parameter_server.vcpus == 0) {
        detail::fail(fn, "parameter_server.vcpus", 0, "is needed: the parameter server is counted by vCPU quota group " + code);
      }
    }
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
      if (type.vcpus < 0 || type.vcpus > kMaxInstanceVcpus) {
        detail::fail(fn, field + ".vcpus", type.vcpus, "must be between 0 and " + std::to_string(kMaxInstanceVcpus));
      }
      if (type.memory_mib < 0) detail::fail(fn, field + ".memory_mib", double(type.memory_mib), "must not be negative");
      if (!type.network_performance.empty()) {
        detail::require_printable_name(fn, field + ".network_performance", type.network_performance);
      }
      if (!type.gpu_model.empty()) detail::require_printable_name(fn, field + ".gpu_model", type.gpu_model);
      if (type.zone_prices_usd_per_hour.size() > kMaxZonesPerType) {
        detail::fail(fn, field + ".zone_prices_usd_per_hour", std::to_string(type.zone_prices_usd_per_hour.size()) + " zones",
                     "at most " + std::to_string(kMaxZonesPerType) + " Availability Zones per type");
      }
      for (const auto& [zone, price] : type.zone_prices_usd_per_hour) {
        detail::require_non_empty(fn, field + ".zone_prices_usd_per_hour", zone);
        detail::require_printable_name(fn, field + ".zone_prices_usd_per_hour", zone);
        detail::require_positive(fn, field + ".zone_prices_usd_per_hour." + zone, price);
      }
      if (!type.price_observed_at.empty()) detail::require_printable_name(fn, field + ".price_observed_at", type.price_observed_at);
      for (Market m : {Market::spot, Market::on_demand}) {
        const std::string& code = type.quota_group_code(m);
        if (code.empty()) continue;
        const std::string key = field + ".quota_groups." + std::string(to_string(m));
        detail::require_printable_name(fn, key, code);
        if (const QuotaGroup* group = quota_group(code); group != nullptr && group->market != m) {
          detail::fail(fn, key, detail::quoted(code), "that quota group counts " + std::string(to_string(group->market)) +
                                                          " instances, not " + std::string(to_string(m)) + " ones");
        }
        if (type.vcpus == 0 && quota_group(code) != nullptr) {
          detail::fail(fn, field + ".vcpus", 0, "is needed: the type is counted by vCPU quota group " + code);
        }
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
    if (quota_groups.size() > kMaxQuotaGroups) {
      detail::fail(fn, "quota_groups", std::to_string(quota_groups.size()) + " groups",
                   "a catalog may give at most " + std::to_string(kMaxQuotaGroups) + " quota groups");
    }
    for (std::size_t g = 0; g < quota_groups.size(); ++g) {
      const QuotaGroup& group = quota_groups[g];
      const std::string field = "quota_groups." + group.code;
      detail::require_non_empty(fn, "quota_groups", group.code);
      detail::require_printable_name(fn, "quota_groups", group.code);
      if (quota_group(group.code) != &group) detail::fail(fn, field, detail::quoted(group.code), "listed twice");
      detail::require_printable_name(fn, field + ".name", group.name);
      if (group.vcpus < 0 || group.vcpus > kMaxQuotaGroupVcpus) {
        detail::fail(fn, field + ".vcpus", group.vcpus, "must be between 0 and " + std::to_string(kMaxQuotaGroupVcpus));
      }
    }
    for (std::size_t i = 0; i < missing_sources.size(); ++i) {
      detail::require_printable_name(fn, "missing_sources[" + std::to_string(i) + "]", missing_sources[i]);
    }
    if (placement_scores.size() > kMaxPlacementScores) {
      detail::fail(fn, "placement_scores", std::to_string(placement_scores.size()) + " scores",
                   "a catalog may hold at most " + std::to_string(kMaxPlacementScores) + " placement scores");
    }
    for (std::size_t i = 0; i < placement_scores.size(); ++i) {
      const PlacementScore& p = placement_scores[i];
      const std::string field = "placement_scores[" + std::to_string(i) + "]";
      if (!p.zone.empty()) detail::require_printable_name(fn, field + ".zone", p.zone);
      if (p.score < 1 || p.score > 10) detail::fail(fn, field + ".score", p.score, "must be from 1 to 10");
      if (p.target_capacity < 1 || p.target_capacity > kMaxQuotaGroupVcpus) {
        detail::fail(fn, field + ".target_capacity", p.target_capacity, "must be from 1 to " + std::to_string(kMaxQuotaGroupVcpus));
      }
      if (p.target_capacity_unit != "units" && p.target_capacity_unit != "vcpu" && p.target_capacity_unit != "memory-mib") {
        detail::fail(fn, field + ".target_capacity_unit", detail::quoted(p.target_capacity_unit), "expected units, vcpu or memory-mib");
      }
      if (p.instance_types.empty() || p.instance_types.size() > kMaxPlacementScoreTypes) {
        detail::fail(fn, field + ".instance_types", std::to_string(p.instance_types.size()) + " types",
                     "name the 1 to " + std::to_string(kMaxPlacementScoreTypes) + " instance types the score was asked for");
      }
      for (const std::string& type : p.instance_types) {
        detail::require_non_empty(fn, field + ".instance_types", type);
        detail::require_printable_name(fn, field + ".instance_types", type);
      }
      if (!p.observed_at.empty()) detail::require_printable_name(fn, field + ".observed_at", p.observed_at);
    }
  }
};

}  // namespace spotdnn
