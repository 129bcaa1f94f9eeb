#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/fleet.hpp EC2 Fleet `instant` requests for a plan's workers: the alternative to
/// `run-instances` that AWS recommends over the legacy spot APIs (never request-spot-instances).
///
/// EC2 Fleet launches from a launch template, so each worker type gets one template (AMI, security
/// groups, key, instance profile, IMDSv2-required metadata options, tags, user data) and one fleet of
/// type `instant` with a single override (that type, the plan's subnet: subnet_ids[zone] for a plan
/// priced in an Availability Zone, else subnet_id; the subnet fixes the zone, so no AvailabilityZone is
/// given) whose target capacity and
/// SpotOptions.MinTargetCapacity both equal the type's count: all-or-nothing, exactly the planned
/// counts. (One fleet mixing all types would let EC2 choose the mix, which the planner already chose.)
/// MinTargetCapacity needs SingleInstanceType or SingleAvailabilityZone; both are set.
///
/// Both documents are nlohmann values dumped once, as BashTemplates whose holes are the run id and the
/// rank base (tags, template name). The worker user data (it holds the PS address) is known only at
/// launch time, so the template data is a fixed head `{"UserData":"`, the base64 user data, and a tail
/// `",` + the other members. Base64 is [A-Za-z0-9+/=] only, which JSON takes as is, and the place it
/// goes is fixed by concatenation, not found by searching text that configuration values could contain.
/// Only spot groups use EC2 Fleet; on-demand groups always launch with run-instances.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/bash_template.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// Launch-template name of the group of `type` workers with rank base `rank_base` in run `run_id`:
/// "spotdnn-RUN-rBASE-TYPE" (unique per group, so joins to one run never collide).
[[nodiscard]] inline std::string launch_template_name(std::string_view run_id, std::string_view rank_base, std::string_view type) {
  return "spotdnn-" + std::string(run_id) + "-r" + std::string(rank_base) + "-" + std::string(type);
}

/// The launch-template data of spot workers of `type`, without UserData: AMI, security groups, key,
/// instance profile, placement group, IMDSv2-required metadata options and the tags of instances,
/// volumes and spot requests, with `values` as run id and rank base.
[[nodiscard]] inline nlohmann::ordered_json launch_template_data(const AwsConfig& config, std::string_view type,
                                                                 const SlotValues& values) {
  constexpr std::string_view fn = "launch_template_data";
  config.validate();
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
  data["TagSpecifications"] = tag_specifications_json({"instance", "volume", "spot-instances-request"},
                                                      resource_tags(config, {"worker", std::string(type), Market::spot}, values));
  return data;
}

/// The head of the `--launch-template-data` JSON: the base64 user data follows it.
inline constexpr std::string_view kLaunchTemplateDataHead = "{\"UserData\":\"";

/// The tail of the `--launch-template-data` JSON after the base64 user data: `",` and the other
/// members of launch_template_data(), then `}`; the run id and rank base are holes.
[[nodiscard]] inline BashTemplate launch_template_data_tail(const AwsConfig& config, std::string_view type) {
  return make_template([&](const SlotValues& values) {
    const std::string rest = json_text(launch_template_data(config, type, values));  // "{...}", never empty
    return "\"," + rest.substr(1);
  });
}

/// The whole `--launch-template-data` JSON with `user_data_base64` (which must be base64) as UserData.
[[nodiscard]] inline std::string launch_template_data_json(const AwsConfig& config, std::string_view type,
                                                           std::string_view user_data_base64, const SlotValues& values) {
  if (!is_base64(user_data_base64)) {
    spotdnn::detail::fail("launch_template_data_json", "user_data_base64", spotdnn::detail::quoted(user_data_base64.substr(0, 64)),
                          "must be standard base64 (A-Z a-z 0-9 + / and '=' padding)");
  }
  return std::string(kLaunchTemplateDataHead) + std::string(user_data_base64) + launch_template_data_tail(config, type).filled(values);
}

/// The `create-launch-template --tag-specifications` of the template itself.
[[nodiscard]] inline BashTemplate launch_template_tags(const AwsConfig& config, std::string_view type) {
  return tag_specifications_template(config, {"worker", std::string(type), Market::spot}, {"launch-template"});
}

/// `create-fleet --cli-input-json` JSON: an instant fleet of `count` spot instances of `type` from the
/// template launch_template_name(run, rank base, type), in the subnet of Availability Zone `zone`
/// (AwsConfig::subnet_for: subnet_ids[zone], or subnet_id when `zone` is empty), MinTargetCapacity = count;
/// the run id and rank base are holes.
[[nodiscard]] inline BashTemplate fleet_request_template(const AwsConfig& config, std::string_view type, int count,
                                                         std::string_view zone = {}) {
  constexpr std::string_view fn = "fleet_request_template";
  config.validate();
  require_instance_type(fn, "type", type);
  if (count < 1) spotdnn::detail::fail(fn, "count", count, "must be at least 1");
  const std::string subnet = config.subnet_for(zone);
  return make_template([&](const SlotValues& values) {
    nlohmann::ordered_json single_override;
    single_override["InstanceType"] = std::string(type);
    single_override["SubnetId"] = subnet;
    nlohmann::ordered_json template_config;
    template_config["LaunchTemplateSpecification"]["LaunchTemplateName"] =
        launch_template_name(values[static_cast<std::size_t>(Slot::run_id)], values[static_cast<std::size_t>(Slot::rank_base)], type);
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
    request["TagSpecifications"] =
        tag_specifications_json({"fleet"}, resource_tags(config, {"worker", std::string(type), Market::spot}, values));
    return json_text(request);
  });
}

}  // namespace spotdnn::launcher
