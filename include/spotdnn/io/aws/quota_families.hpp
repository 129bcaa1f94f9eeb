#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/quota_families.hpp Which EC2 vCPU quota group counts an instance type, by family.
///
/// EC2 limits running On-Demand instances and Spot requests in vCPUs per group of instance families
/// (Amazon EC2 User Guide, "Amazon EC2 service quotas" / "On-Demand Instance quotas" and "Spot Instance
/// quotas"; the codes are those of the Service Quotas console and `aws service-quotas list-service-quotas
/// --service-code ec2`). The family is the letters before the generation digit of the type name:
/// p3.2xlarge → "p" (generation 3), g4dn.xlarge → "g", vt1.3xlarge → "vt", p5.48xlarge → "p" (generation 5).
///
/// | family | spot group | on-demand group |
/// |---|---|---|
/// | p, generations 2 to 4 | L-7212CCBC All P4, P3 and P2 Spot Instance Requests | L-417A185B Running On-Demand P instances |
/// | p, generation 5 | L-C4BD4855 All P5 Spot Instance Requests | L-417A185B Running On-Demand P instances |
/// | p, other generations | none | L-417A185B Running On-Demand P instances |
/// | g, gr, vt | L-3819A6DF All G and VT Spot Instance Requests | L-DB2E81BA Running On-Demand G and VT instances |
/// | a, c, d, h, i, im, is, m, r, t, z | L-34B43A08 All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests | L-1216C47A Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances |
/// | others (inf, trn, dl, f, x, u, mac, hpc, …) | none | none |

#include <optional>
#include <string>
#include <string_view>

#include "spotdnn/catalog.hpp"

namespace spotdnn::io::aws {

/// One EC2 vCPU quota group spotdnn knows.
struct KnownQuotaGroup {
  std::string_view code;
  std::string_view name;
  Market market;
};

inline constexpr KnownQuotaGroup kEc2VcpuQuotaGroups[] = {
    {"L-7212CCBC", "All P4, P3 and P2 Spot Instance Requests", Market::spot},
    {"L-C4BD4855", "All P5 Spot Instance Requests", Market::spot},
    {"L-3819A6DF", "All G and VT Spot Instance Requests", Market::spot},
    {"L-34B43A08", "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests", Market::spot},
    {"L-417A185B", "Running On-Demand P instances", Market::on_demand},
    {"L-DB2E81BA", "Running On-Demand G and VT instances", Market::on_demand},
    {"L-1216C47A", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", Market::on_demand},
};

/// The known group with `code`, or nullptr.
[[nodiscard]] constexpr const KnownQuotaGroup* known_quota_group(std::string_view code) {
  for (const KnownQuotaGroup& group : kEc2VcpuQuotaGroups) {
    if (group.code == code) return &group;
  }
  return nullptr;
}

/// The family and generation of an instance type name: "p3.2xlarge" → {"p", 3}, "g4dn.xlarge" → {"g", 4}.
struct InstanceFamily {
  std::string letters;   ///< lower-case letters before the generation digit; empty when the name has none
  int generation = -1;   ///< the digits after them (at most 4); -1 when there are none
};

[[nodiscard]] inline InstanceFamily instance_family(std::string_view type_name) {
  InstanceFamily family;
  std::size_t at = 0;
  while (at < type_name.size() && type_name[at] >= 'a' && type_name[at] <= 'z') ++at;
  family.letters = std::string(type_name.substr(0, at));
  const std::size_t first = at;
  while (at < type_name.size() && at - first < 4 && type_name[at] >= '0' && type_name[at] <= '9') ++at;
  if (at > first) family.generation = std::stoi(std::string(type_name.substr(first, at - first)));
  return family;
}

/// The spot and on-demand quota group codes of a type; an empty code means no known group.
struct QuotaGroupCodes {
  std::string_view spot;
  std::string_view on_demand;
};

/// The groups counting `type_name` per the table above (both empty for other families).
[[nodiscard]] inline QuotaGroupCodes quota_groups_for_type(std::string_view type_name) {
  const InstanceFamily family = instance_family(type_name);
  if (family.generation < 0) return {};
  const std::string& f = family.letters;
  if (f == "p") {
    if (family.generation >= 2 && family.generation <= 4) return {"L-7212CCBC", "L-417A185B"};
    if (family.generation == 5) return {"L-C4BD4855", "L-417A185B"};
    return {"", "L-417A185B"};
  }
  if (f == "g" || f == "gr" || f == "vt") return {"L-3819A6DF", "L-DB2E81BA"};
  for (std::string_view standard : {"a", "c", "d", "h", "i", "im", "is", "m", "r", "t", "z"}) {
    if (f == standard) return {"L-34B43A08", "L-1216C47A"};
  }
  return {};
}

}  // namespace spotdnn::io::aws
