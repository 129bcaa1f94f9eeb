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
///
/// Both documents are nlohmann values dumped once. The launch script only learns the worker user data
/// (it holds the PS address) at launch time, so the template data comes in two parts: a fixed head
/// `{"UserData":"` and a tail `",` + the other members; head + base64 + tail is the document. Base64 is
/// [A-Za-z0-9+/=] only, which JSON takes as is, and the place it goes is fixed by concatenation, not
/// found by searching text that configuration values could also contain.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// Launch-template name of the workers of `type` in plan `plan_id`: "spotdnn-PLAN-TYPE".
[[nodiscard]] inline std::string launch_template_name(std::string_view plan_id, std::string_view type) {
  return "spotdnn-" + std::string(plan_id) + "-" + std::string(type);
}

/// The launch-template data of workers of `type`, without UserData: AMI, security groups, key, instance
/// profile, placement group, IMDSv2-required metadata options and the tags of instances, volumes and
/// spot requests.
[[nodiscard]] inline nlohmann::ordered_json launch_template_data(const AwsConfig& config, std::string_view plan_id,
                                                                 std::string_view type) {
  constexpr std::string_view fn = "launch_template_data";
  config.validate();
  require_simple_name(fn, "plan_id", plan_id);
  require_instance_type(fn, "type", type);
  nlohmann::ordered_json data;
  data["ImageId"] = config.image_for(type);
  data["SecurityGroupIds"] = config.security_group_ids;
  if (!config.key_name.empty()) data["KeyName"] = config.key_name;
  if (!config.iam_instance_profile.empty()) data["IamInstanceProfile"]["Name"] = config.iam_instance_profile;
  if (!config.placement_group.empty()) data["Placement"]["GroupName"] = config.placement_group;
  data["MetadataOptions"]["HttpTokens"] = "required";
  data["MetadataOptions"]["HttpEndpoint"] = "enabled";
  data["MetadataOptions"]["HttpPutResponseHopLimit"] = config.metadata_hop_limit;
  data["TagSpecifications"] =
      tag_specifications_json({"instance", "volume", "spot-instances-request"}, resource_tags(config, plan_id, "worker", type));
  return data;
}

/// `create-launch-template --launch-template-data` JSON around the base64 user data: head + base64 + tail.
struct LaunchTemplateDataParts {
  std::string head;  ///< always `{"UserData":"`
  std::string tail;  ///< `",` and the other members of launch_template_data(), then `}`
};

/// The launch-template data JSON of workers of `type`, split where the base64 user data goes.
[[nodiscard]] inline LaunchTemplateDataParts launch_template_data_parts(const AwsConfig& config, std::string_view plan_id,
                                                                        std::string_view type) {
  const std::string rest = json_text(launch_template_data(config, plan_id, type));  // "{...}", never empty
  return {"{\"UserData\":\"", "\"," + rest.substr(1)};
}

/// The whole `--launch-template-data` JSON with `user_data_base64` (which must be base64) as UserData.
[[nodiscard]] inline std::string launch_template_data_json(const AwsConfig& config, std::string_view plan_id,
                                                           std::string_view type, std::string_view user_data_base64) {
  if (!is_base64(user_data_base64)) {
    spotdnn::detail::fail("launch_template_data_json", "user_data_base64", spotdnn::detail::quoted(user_data_base64.substr(0, 64)),
                          "must be standard base64 (A-Z a-z 0-9 + / and '=' padding)");
  }
  const LaunchTemplateDataParts parts = launch_template_data_parts(config, plan_id, type);
  return parts.head + std::string(user_data_base64) + parts.tail;
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
  nlohmann::ordered_json single_override;
  single_override["InstanceType"] = std::string(type);
  single_override["SubnetId"] = config.subnet_id;
  nlohmann::ordered_json template_config;
  template_config["LaunchTemplateSpecification"]["LaunchTemplateName"] = launch_template_name(plan_id, type);
  template_config["LaunchTemplateSpecification"]["Version"] = "$Latest";
  template_config["Overrides"] = nlohmann::ordered_json::array({single_override});
  nlohmann::ordered_json request;
  request["Type"] = "instant";
  request["LaunchTemplateConfigs"] = nlohmann::ordered_json::array({template_config});
  request["TargetCapacitySpecification"]["TotalTargetCapacity"] = count;
  request["TargetCapacitySpecification"]["SpotTargetCapacity"] = count;
  request["TargetCapacitySpecification"]["OnDemandTargetCapacity"] = 0;
  request["TargetCapacitySpecification"]["DefaultTargetCapacityType"] = "spot";
  request["SpotOptions"]["AllocationStrategy"] = "capacity-optimized";
  request["SpotOptions"]["InstanceInterruptionBehavior"] = "terminate";
  request["SpotOptions"]["SingleInstanceType"] = true;
  request["SpotOptions"]["SingleAvailabilityZone"] = true;
  request["SpotOptions"]["MinTargetCapacity"] = count;
  request["TagSpecifications"] = tag_specifications_json({"fleet"}, resource_tags(config, plan_id, "worker", type));
  return json_text(request);
}

}  // namespace spotdnn::launcher
