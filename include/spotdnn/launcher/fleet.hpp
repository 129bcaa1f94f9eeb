#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/fleet.hpp EC2 Fleet `instant` requests for a plan's workers: the alternative to
/// `run-instances` that AWS recommends over the legacy spot APIs (never request-spot-instances).
///
/// EC2 Fleet launches from a launch template, so each worker type gets one template (AMI, security
/// groups, key, instance profile, IMDSv2-required metadata options, tags, user data) and one fleet of
/// type `instant` with a single override (that type, the plan's subnet) whose target capacity and
/// SpotOptions.MinTargetCapacity both equal the type's count: all-or-nothing, exactly the planned
/// counts. (One fleet mixing all types would let EC2 choose the mix, which the planner already chose.)
/// MinTargetCapacity needs SingleInstanceType or SingleAvailabilityZone; both are set.

#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// Where the launch script puts the base64 user data inside the launch-template JSON (the PS address
/// it contains is only known at launch time).
inline constexpr std::string_view kUserDataBase64Marker = "__SPOTDNN_USER_DATA_BASE64__";

/// Launch-template name of the workers of `type` in plan `plan_id`: "spotdnn-PLAN-TYPE".
[[nodiscard]] inline std::string launch_template_name(std::string_view plan_id, std::string_view type) {
  return "spotdnn-" + std::string(plan_id) + "-" + std::string(type);
}

/// `create-launch-template --launch-template-data` JSON for workers of `type`. `user_data_base64` is
/// the base64 user data, or kUserDataBase64Marker for the launch script to fill in.
[[nodiscard]] inline std::string launch_template_data_json(const AwsConfig& config, std::string_view plan_id,
                                                           std::string_view type, std::string_view user_data_base64) {
  constexpr std::string_view fn = "launch_template_data_json";
  config.validate();
  require_simple_name(fn, "plan_id", plan_id);
  require_instance_type(fn, "type", type);
  std::string j = "{\"ImageId\":" + json_quote(config.image_for(type));
  j += ",\"SecurityGroupIds\":[";
  for (std::size_t i = 0; i < config.security_group_ids.size(); ++i) {
    j += (i ? "," : "") + json_quote(config.security_group_ids[i]);
  }
  j += "]";
  if (!config.key_name.empty()) j += ",\"KeyName\":" + json_quote(config.key_name);
  if (!config.iam_instance_profile.empty()) j += ",\"IamInstanceProfile\":{\"Name\":" + json_quote(config.iam_instance_profile) + "}";
  if (!config.placement_group.empty()) j += ",\"Placement\":{\"GroupName\":" + json_quote(config.placement_group) + "}";
  j += ",\"MetadataOptions\":{\"HttpTokens\":\"required\",\"HttpEndpoint\":\"enabled\",\"HttpPutResponseHopLimit\":" +
       std::to_string(config.metadata_hop_limit) + "}";
  j += ",\"TagSpecifications\":" +
       tag_specifications_json({"instance", "volume", "spot-instances-request"}, resource_tags(config, plan_id, "worker", type));
  j += ",\"UserData\":" + json_quote(user_data_base64) + "}";
  return j;
}

/// `create-fleet --cli-input-json` JSON: an instant fleet of `count` spot instances of `type` from the
/// template launch_template_name(plan_id, type), in the configured subnet, MinTargetCapacity = count.
[[nodiscard]] inline std::string fleet_request_json(const AwsConfig& config, std::string_view plan_id,
                                                    std::string_view type, int count) {
  constexpr std::string_view fn = "fleet_request_json";
  config.validate();
  require_simple_name(fn, "plan_id", plan_id);
  require_instance_type(fn, "type", type);
  if (count < 1) spotdnn::detail::fail(fn, "count", count, "must be at least 1");
  const std::string n = std::to_string(count);
  std::string j = "{\"Type\":\"instant\"";
  j += ",\"LaunchTemplateConfigs\":[{\"LaunchTemplateSpecification\":{\"LaunchTemplateName\":" +
       json_quote(launch_template_name(plan_id, type)) + ",\"Version\":\"$Latest\"}";
  j += ",\"Overrides\":[{\"InstanceType\":" + json_quote(type) + ",\"SubnetId\":" + json_quote(config.subnet_id) + "}]}]";
  j += ",\"TargetCapacitySpecification\":{\"TotalTargetCapacity\":" + n + ",\"SpotTargetCapacity\":" + n +
       ",\"OnDemandTargetCapacity\":0,\"DefaultTargetCapacityType\":\"spot\"}";
  j += ",\"SpotOptions\":{\"AllocationStrategy\":\"capacity-optimized\",\"InstanceInterruptionBehavior\":\"terminate\""
       ",\"SingleInstanceType\":true,\"SingleAvailabilityZone\":true,\"MinTargetCapacity\":" + n + "}";
  j += ",\"TagSpecifications\":" + tag_specifications_json({"fleet"}, resource_tags(config, plan_id, "worker", type));
  j += "}";
  return j;
}

}  // namespace spotdnn::launcher
