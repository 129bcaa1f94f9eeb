#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/aws_config.hpp Where and how a plan is launched on AWS: network, images, S3, tags and
/// the commands the instances run.
///
/// Credentials are deliberately not part of the configuration: the emitted script uses whatever the
/// AWS CLI is configured with on the machine that runs it, and never reads or writes keys.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/shell.hpp"

namespace spotdnn::launcher {

/// The AWS side of a launch. Field names match the keys of the AWS JSON file (launcher/aws_config_json.hpp).
struct AwsConfig {
  std::string region;                              ///< e.g. "us-east-1"
  std::string subnet_id;                           ///< one subnet = one VPC and one availability zone
  std::vector<std::string> security_group_ids;     ///< sg-..., at least one
  std::string image_id;                            ///< AMI for every instance unless `image_ids` names the type
  std::map<std::string, std::string> image_ids;    ///< per instance type AMI (e.g. a GPU AMI per family)
  std::string key_name;                            ///< EC2 key pair name; empty = none
  std::string iam_instance_profile;                ///< instance profile name (S3 + ec2:CreateTags); empty = none
  std::string checkpoint_s3_uri;                   ///< "s3://bucket/prefix" the checkpoints are synced to
  std::string checkpoint_dir = "/var/lib/spotdnn/checkpoints";  ///< checkpoint directory on every instance
  std::map<std::string, std::string> tags;         ///< extra tags on every instance and spot request
  std::string placement_group;                     ///< cluster placement group name; empty = none
  bool create_placement_group = false;             ///< create `placement_group` (strategy cluster) first
  std::string parameter_server_type;               ///< on-demand PS type; empty = the plan's (the catalog's it was priced with)
  std::string training_command;                    ///< run on every instance once the cluster is known; may be empty
  std::string revocation_hook;                     ///< bash run once on a notice; empty = sync checkpoints to S3
  double poll_interval_s = 5;                      ///< how often workers poll the metadata service
  double checkpoint_sync_interval_s = 300;         ///< how often the PS syncs its checkpoints to S3
  int metadata_hop_limit = 2;                      ///< IMDSv2 PUT hop limit (2 lets containers reach IMDS)
  double discovery_timeout_s = 900;                ///< how long an instance waits at boot for the run's other instances

  /// AMI of instances of `type`.
  [[nodiscard]] const std::string& image_for(std::string_view type) const {
    auto it = image_ids.find(std::string(type));
    return it == image_ids.end() ? image_id : it->second;
  }

  /// Throws spotdnn::invalid_argument naming the first bad field ("AwsConfig::validate: subnet_id = ...").
  void validate() const {
    constexpr std::string_view fn = "AwsConfig::validate";
    require_region(fn, "region", region);
    require_subnet_id(fn, "subnet_id", subnet_id);
    if (security_group_ids.empty()) spotdnn::detail::fail(fn, "security_group_ids", "[]", "give at least one security group");
    for (std::size_t i = 0; i < security_group_ids.size(); ++i) {
      require_security_group_id(fn, "security_group_ids[" + std::to_string(i) + "]", security_group_ids[i]);
    }
    require_ami_id(fn, "image_id", image_id);
    for (const auto& [type, ami] : image_ids) {
      require_instance_type(fn, "image_ids key", type);
      require_ami_id(fn, "image_ids." + type, ami);
    }
    if (!key_name.empty()) {
      require_printable_ascii(fn, "key_name", key_name, 255);
      require_no_aws_cli_uri_prefix(fn, "key_name", key_name);
    }
    if (!iam_instance_profile.empty()) require_instance_profile_name(fn, "iam_instance_profile", iam_instance_profile);
    require_s3_uri(fn, "checkpoint_s3_uri", checkpoint_s3_uri);
    require_absolute_path(fn, "checkpoint_dir", checkpoint_dir);
    if (tags.size() > 40) {
      spotdnn::detail::fail(fn, "tags", double(tags.size()), "at most 40 user tags (EC2 allows 50 per resource; spotdnn sets 5 or 6 itself)");
    }
    for (const auto& [key, value] : tags) {
      require_tag_key(fn, "tags key", key);
      if (key.rfind("spotdnn:", 0) == 0) {
        spotdnn::detail::fail(fn, "tags key", spotdnn::detail::quoted(key), "the prefix spotdnn: is reserved for the launcher's own tags");
      }
      require_tag_value(fn, "tags." + key, value);
    }
    if (!placement_group.empty()) {
      require_printable_ascii(fn, "placement_group", placement_group, 255);
      require_no_aws_cli_uri_prefix(fn, "placement_group", placement_group);
    }
    if (create_placement_group && placement_group.empty()) {
      spotdnn::detail::fail(fn, "create_placement_group", "true", "needs a placement_group name");
    }
    if (!parameter_server_type.empty()) require_instance_type(fn, "parameter_server_type", parameter_server_type);
    require_no_nul(fn, "training_command", training_command);
    require_no_nul(fn, "revocation_hook", revocation_hook);
    spotdnn::detail::require_positive(fn, "poll_interval_s", poll_interval_s);
    spotdnn::detail::require_positive(fn, "checkpoint_sync_interval_s", checkpoint_sync_interval_s);
    spotdnn::detail::require_positive(fn, "discovery_timeout_s", discovery_timeout_s);
    if (metadata_hop_limit < 1 || metadata_hop_limit > 64) {
      spotdnn::detail::fail(fn, "metadata_hop_limit", metadata_hop_limit, "must be 1 to 64");
    }
  }
};

}  // namespace spotdnn::launcher
