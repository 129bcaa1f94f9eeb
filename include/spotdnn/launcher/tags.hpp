#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/tags.hpp The tags every launched resource carries, as EC2 TagSpecifications JSON.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/shell.hpp"

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
[[nodiscard]] inline std::string tags_json(const std::vector<std::pair<std::string, std::string>>& tags) {
  std::string out = "[";
  for (const auto& [key, value] : tags) {
    if (out.size() > 1) out += ',';
    out += "{\"Key\":" + json_quote(key) + ",\"Value\":" + json_quote(value) + "}";
  }
  return out + "]";
}

/// `[{"ResourceType":"r1","Tags":[...]},...]`: the same tags on each resource type.
[[nodiscard]] inline std::string tag_specifications_json(const std::vector<std::string_view>& resource_types,
                                                         const std::vector<std::pair<std::string, std::string>>& tags) {
  std::string out = "[";
  const std::string tag_array = tags_json(tags);
  for (std::string_view resource : resource_types) {
    if (out.size() > 1) out += ',';
    out += "{\"ResourceType\":" + json_quote(resource) + ",\"Tags\":" + tag_array + "}";
  }
  return out + "]";
}

}  // namespace spotdnn::launcher
