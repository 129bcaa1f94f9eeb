#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/tags.hpp The tags every launched resource carries, as EC2 TagSpecifications JSON values.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/launcher/aws_config.hpp"

namespace spotdnn::launcher {

/// The launcher's own tags (plan ID, role, instance type) followed by the user's `config.tags`.
[[nodiscard]] inline std::vector<std::pair<std::string, std::string>> resource_tags(const AwsConfig& config,
                                                                                   std::string_view plan_id,
                                                                                   std::string_view role,
                                                                                   std::string_view type) {
  std::vector<std::pair<std::string, std::string>> tags;
  tags.emplace_back(kPlanIdTag, plan_id);
  tags.emplace_back(kRoleTag, role);
  tags.emplace_back(kInstanceTypeTag, type);
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

}  // namespace spotdnn::launcher
