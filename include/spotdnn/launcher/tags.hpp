#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/tags.hpp The tags every launched resource carries, as EC2 TagSpecifications JSON.
///
/// Every instance, spot request, launch template and fleet a run creates is tagged
///   spotdnn:run=RUN_ID          (what status, teardown and join select by: the exact value)
///   spotdnn:rank-base=N         (the first rank of its group: 0 for the PS, 1.. for workers)
///   spotdnn:role=ps|worker
///   spotdnn:instance-type=TYPE
///   spotdnn:market=spot|on-demand
/// followed by the user's tags from the AWS configuration (which may not use the prefix spotdnn:).
/// The run id and the rank base are known only to the running script, so the tag specifications are
/// a BashTemplate with those two holes.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/catalog.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/bash_template.hpp"
#include "spotdnn/launcher/shell.hpp"

namespace spotdnn::launcher {

/// Tag keys the launcher sets itself; user tags may not use the "spotdnn:" prefix.
inline constexpr std::string_view kRunTag = "spotdnn:run";
inline constexpr std::string_view kRankBaseTag = "spotdnn:rank-base";
inline constexpr std::string_view kRoleTag = "spotdnn:role";
inline constexpr std::string_view kInstanceTypeTag = "spotdnn:instance-type";
inline constexpr std::string_view kMarketTag = "spotdnn:market";
inline constexpr std::string_view kRevokedTag = "spotdnn:revoked";

/// The rank rule, as a bash pipeline every script shares: it reads lines "RANK_BASE INSTANCE_ID ..."
/// and prints them as "RANK INSTANCE_ID ...", sorted by rank: the instances of one rank base, in
/// instance-ID order, take BASE, BASE+1, ... (terminated ones included, so a rank is never given twice
/// while EC2 lists its holder). A base that is not a number of at most 7 digits gives rank "?", last.
inline constexpr std::string_view kRanksFromBases =
    "awk '{ if ($1 !~ /^[0-9]+$/ || length($1) > 7) $1 = 10000000; print }' | sort -k1,1n -k2,2 |\n"
    "    awk '{ if ($1 == 10000000) { $1 = \"?\" } else { if ($1 != base) { base = $1; n = 0 } $1 = base + n; n++ } print }'";

/// What a group of instances is: its role, type and market.
struct InstanceRole {
  std::string role;  ///< "ps" or "worker"
  std::string type;  ///< EC2 instance type
  Market market = Market::spot;
};

/// The tags of instances of `who` in a run, with `values` as run id and rank base, then the user's.
[[nodiscard]] inline std::vector<std::pair<std::string, std::string>> resource_tags(const AwsConfig& config,
                                                                                   const InstanceRole& who,
                                                                                   const SlotValues& values) {
  std::vector<std::pair<std::string, std::string>> tags;
  tags.emplace_back(kRunTag, values[static_cast<std::size_t>(Slot::run_id)]);
  tags.emplace_back(kRankBaseTag, values[static_cast<std::size_t>(Slot::rank_base)]);
  tags.emplace_back(kRoleTag, who.role);
  tags.emplace_back(kInstanceTypeTag, who.type);
  tags.emplace_back(kMarketTag, std::string(to_string(who.market)));
  for (const auto& entry : config.tags) tags.emplace_back(entry.first, entry.second);
  return tags;
}

/// `[{"Key":"k","Value":"v"},...]`.
[[nodiscard]] inline nlohmann::ordered_json tags_json(const std::vector<std::pair<std::string, std::string>>& tags) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [key, value] : tags) {
    nlohmann::ordered_json tag;
    tag["Key"] = key;
    tag["Value"] = value;
    out.push_back(std::move(tag));
  }
  return out;
}

/// `[{"ResourceType":"r1","Tags":[...]},...]`: the same tags on each resource type.
[[nodiscard]] inline nlohmann::ordered_json tag_specifications_json(const std::vector<std::string_view>& resource_types,
                                                                    const std::vector<std::pair<std::string, std::string>>& tags) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const nlohmann::ordered_json tag_array = tags_json(tags);
  for (std::string_view resource : resource_types) {
    nlohmann::ordered_json specification;
    specification["ResourceType"] = std::string(resource);
    specification["Tags"] = tag_array;
    out.push_back(std::move(specification));
  }
  return out;
}

/// The `--tag-specifications` JSON of `who` on `resource_types`, with the run id and rank base as holes.
[[nodiscard]] inline BashTemplate tag_specifications_template(const AwsConfig& config, const InstanceRole& who,
                                                              const std::vector<std::string_view>& resource_types) {
  return make_template([&](const SlotValues& values) {
    return json_text(tag_specifications_json(resource_types, resource_tags(config, who, values)));
  });
}

}  // namespace spotdnn::launcher
