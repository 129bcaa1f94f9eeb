#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/aws_config.hpp Where and how a plan is launched on AWS: network, images, S3, tags and
/// the commands the instances run; and, for serverless plans, the Lambda image, role and exchange bucket.
///
/// Credentials are deliberately not part of the configuration: the emitted script uses whatever the
/// AWS CLI is configured with on the machine that runs it, and never reads or writes keys.
///
/// One file may serve both launchers. A spot launch (AwsConfig::validate) needs region, subnet_id or
/// subnet_ids (or both), security_group_ids, image_id and checkpoint_s3_uri; a serverless launch
/// (AwsConfig::validate_serverless) needs only region and the `serverless` object (tags optional), and
/// does not look at the spot-only fields. One file may also give several regions' settings
/// (AwsRegionConfigs): a launch takes those of the plan's region.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/availability_zone.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/shell.hpp"

namespace spotdnn::launcher {

/// Longest exchange bucket prefix: the bucket is PREFIX-RUN_ID, and S3 bucket names have at most 63
/// characters (63 - 1 - 22).
inline constexpr std::size_t kMaxBucketPrefixLength = 40;

/// Most Availability Zones `subnet_ids` may name (as many as a catalog may price per type).
inline constexpr std::size_t kMaxSubnetZones = kMaxZonesPerType;

/// Most regions the `regions` map of an AWS configuration may give settings for (AWS has about 35).
inline constexpr std::size_t kMaxConfigRegions = 64;

/// Most bytes (names plus values) the user's Lambda environment may take: Lambda allows 4 KB in all, and
/// the launcher's own SPOTDNN_* variables need at most 1 KB of it.
inline constexpr std::size_t kMaxUserEnvironmentBytes = 3072;

namespace detail {

inline bool is_ecr_repository_name(std::string_view name) {
  // Components of [a-z0-9]+ joined by one of . _ - (or "__"), separated by '/'; 2 to 256 characters.
  if (name.size() < 2 || name.size() > 256) return false;
  bool after_separator = true;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (is_lower_alnum(c)) {
      after_separator = false;
    } else if (c == '/' || c == '.' || c == '-' || c == '_') {
      if (after_separator && !(c == '_' && i > 0 && name[i - 1] == '_')) return false;
      after_separator = true;
    } else {
      return false;
    }
  }
  return !after_separator;
}

inline bool is_image_tag(std::string_view tag) {
  if (tag.empty() || tag.size() > 128 || !(is_alnum(tag.front()) || tag.front() == '_')) return false;
  for (char c : tag) {
    if (!(is_alnum(c) || c == '_' || c == '.' || c == '-')) return false;
  }
  return true;
}

/// Letters, digits and + = , . @ _ -: IAM's alphabet of role names.
inline bool is_iam_name(std::string_view name, std::size_t max_length) {
  if (name.empty() || name.size() > max_length) return false;
  for (char c : name) {
    if (!(is_alnum(c) || c == '+' || c == '=' || c == ',' || c == '.' || c == '@' || c == '_' || c == '-')) return false;
  }
  return true;
}

/// The Lambda environment variable names Lambda reserves outside the AWS_ prefix.
inline bool is_lambda_reserved_variable(std::string_view name) {
  return name == "LAMBDA_TASK_ROOT" || name == "LAMBDA_RUNTIME_DIR";
}

}  // namespace detail

/// An Amazon ECR image URI in `region`, with a tag or a digest:
/// ACCOUNT.dkr.ecr.REGION.amazonaws.com[.cn]/REPOSITORY:TAG or ...@sha256:64-HEX. Lambda runs images
/// only from ECR in the function's own region.
inline void require_ecr_image_uri(std::string_view function, std::string_view field, std::string_view value,
                                  std::string_view region) {
  const auto bad = [&](std::string_view why) { spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), why); };
  constexpr std::string_view shape =
      "expected an Amazon ECR image like 123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest (or @sha256:DIGEST)";
  if (value.size() > 1024) bad(shape);
  const std::size_t slash = value.find('/');
  if (slash == std::string_view::npos) bad(shape);
  const std::string_view host = value.substr(0, slash);
  bool ok = host.size() > 13 && host[12] == '.';
  for (std::size_t i = 0; ok && i < 12; ++i) ok = detail::is_digit(host[i]);
  constexpr std::string_view ecr = "dkr.ecr.";
  ok = ok && host.substr(13, ecr.size()) == ecr;
  std::string_view rest = ok ? host.substr(13 + ecr.size()) : std::string_view();
  std::string_view host_region;
  for (std::string_view suffix : {".amazonaws.com", ".amazonaws.com.cn"}) {
    if (ok && rest.size() > suffix.size() && rest.substr(rest.size() - suffix.size()) == suffix) {
      host_region = rest.substr(0, rest.size() - suffix.size());
    }
  }
  if (!ok || host_region.empty()) bad(shape);
  const std::string_view path = value.substr(slash + 1);
  const std::size_t at = path.find('@');
  std::string_view repository;
  if (at != std::string_view::npos) {
    repository = path.substr(0, at);
    const std::string_view digest = path.substr(at + 1);
    bool digest_ok = digest.size() == 7 + 64 && digest.substr(0, 7) == "sha256:";
    for (std::size_t i = 7; digest_ok && i < digest.size(); ++i) digest_ok = detail::is_lower_hex(digest[i]);
    if (!digest_ok) bad("the digest must be sha256: and 64 lower-case hex digits");
  } else {
    const std::size_t colon = path.rfind(':');
    if (colon == std::string_view::npos) bad("name the image's tag (REPOSITORY:TAG) or digest (REPOSITORY@sha256:...)");
    repository = path.substr(0, colon);
    if (!detail::is_image_tag(path.substr(colon + 1))) bad("the tag must be 1 to 128 of A-Z a-z 0-9 _ . -, not starting with . or -");
  }
  if (!detail::is_ecr_repository_name(repository)) {
    bad("the repository must be 2 to 256 of a-z 0-9 joined by . _ - or /");
  }
  if (host_region != region) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value),
                          "the image is in " + std::string(host_region) + " but functions are created in " + std::string(region) +
                              " (region): Lambda runs images from ECR in the function's own region");
  }
}

/// An IAM role ARN: arn:PARTITION:iam::ACCOUNT:role/[PATH/]NAME, PARTITION aws, aws-cn or aws-us-gov,
/// ACCOUNT 12 digits, path segments and NAME (1 to 64) of A-Z a-z 0-9 + = , . @ _ -.
inline void require_role_arn(std::string_view function, std::string_view field, std::string_view value) {
  bool ok = value.size() <= 2048;
  std::string_view rest = value;
  bool partition = false;
  for (std::string_view start : {"arn:aws:iam::", "arn:aws-cn:iam::", "arn:aws-us-gov:iam::"}) {
    if (ok && !partition && rest.substr(0, start.size()) == start) {
      rest.remove_prefix(start.size());
      partition = true;
    }
  }
  ok = ok && partition && rest.size() > 12 + 6 && rest.substr(12, 6) == ":role/";
  for (std::size_t i = 0; ok && i < 12; ++i) ok = detail::is_digit(rest[i]);
  if (ok) {
    std::string_view names = rest.substr(18);
    for (;;) {
      const std::size_t slash = names.find('/');
      const std::string_view part = names.substr(0, slash);
      ok = ok && detail::is_iam_name(part, slash == std::string_view::npos ? 64 : 512);
      if (slash == std::string_view::npos || !ok) break;
      names.remove_prefix(slash + 1);
    }
  }
  if (!ok) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value),
                          "expected an IAM role ARN like arn:aws:iam::123456789012:role/fasdl (name: 1 to 64 of A-Z a-z 0-9 + = , . @ _ -)");
  }
}

/// An exchange bucket prefix: 1 to 40 of a-z 0-9 '-', starting with a letter or digit, so that
/// PREFIX-RUN_ID is a bucket name by S3's rules (no '.', which breaks virtual-hosted HTTPS, and none of
/// S3's reserved prefixes xn--, sthree-, amzn-s3-demo-).
inline void require_bucket_prefix(std::string_view function, std::string_view field, std::string_view value) {
  bool ok = !value.empty() && value.size() <= kMaxBucketPrefixLength && detail::is_lower_alnum(value.front());
  for (char c : value) ok = ok && (detail::is_lower_alnum(c) || c == '-');
  if (!ok) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value),
                          "expected 1 to " + std::to_string(kMaxBucketPrefixLength) +
                              " of a-z, 0-9 and '-', starting with a letter or digit (the bucket is PREFIX-RUN_ID)");
  }
  for (std::string_view reserved : {"xn--", "sthree-", "amzn-s3-demo-"}) {
    if (value.substr(0, reserved.size()) == reserved) {
      spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "S3 reserves bucket names starting with " + std::string(reserved));
    }
  }
}

/// The serverless side of a launch: what every Lambda function of a run runs, as whom, and where the
/// functions exchange model chunks. Keys of the `serverless` object of the AWS JSON file.
struct ServerlessConfig {
  std::string image_uri;                       ///< ECR image of the training function, in the configuration's region
  std::string role_arn;                        ///< execution role (S3 on the exchange bucket, lambda:InvokeFunction, logs)
  std::string bucket_prefix = "spotdnn";       ///< the run's exchange bucket is PREFIX-RUN_ID (make it yours: S3 names are global)
  std::string architecture = "x86_64";         ///< the image's architecture: x86_64 or arm64
  std::map<std::string, std::string> environment;  ///< extra environment of every function (not SPOTDNN_*, not AWS_*)

  /// Throws spotdnn::invalid_argument naming the first bad field as `function`: serverless.FIELD = ...
  void validate(std::string_view function, std::string_view region) const {
    require_ecr_image_uri(function, "serverless.image_uri", image_uri, region);
    require_role_arn(function, "serverless.role_arn", role_arn);
    require_bucket_prefix(function, "serverless.bucket_prefix", bucket_prefix);
    if (architecture != "x86_64" && architecture != "arm64") {
      spotdnn::detail::fail(function, "serverless.architecture", spotdnn::detail::quoted(architecture), "expected x86_64 or arm64");
    }
    std::size_t bytes = 0;
    for (const auto& [name, value] : environment) {
      const std::string at = "serverless.environment key";
      bool ok = !name.empty() && name.size() <= 128 && ((name.front() >= 'A' && name.front() <= 'Z') || (name.front() >= 'a' && name.front() <= 'z'));
      for (char c : name) ok = ok && (detail::is_alnum(c) || c == '_');
      if (!ok) spotdnn::detail::fail(function, at, spotdnn::detail::quoted(name), "expected 1 to 128 of A-Z a-z 0-9 _, starting with a letter");
      if (name.rfind("SPOTDNN_", 0) == 0) {
        spotdnn::detail::fail(function, at, spotdnn::detail::quoted(name), "the prefix SPOTDNN_ is reserved for the launcher's own variables");
      }
      if (name.rfind("AWS_", 0) == 0 || detail::is_lambda_reserved_variable(name)) {
        spotdnn::detail::fail(function, at, spotdnn::detail::quoted(name), "Lambda reserves this name (and every AWS_ name)");
      }
      require_no_nul(function, "serverless.environment." + name, value);
      if (!spotdnn::detail::is_valid_utf8(value)) {
        spotdnn::detail::fail(function, "serverless.environment." + name, spotdnn::detail::quoted(value), "must be valid UTF-8");
      }
      bytes += name.size() + value.size();
    }
    if (bytes > kMaxUserEnvironmentBytes) {
      spotdnn::detail::fail(function, "serverless.environment", double(bytes),
                            "names and values take more than " + std::to_string(kMaxUserEnvironmentBytes) +
                                " bytes (Lambda allows 4 KB per function, and spotdnn's own variables need 1 KB)");
    }
  }
};

/// The AWS side of a launch. Field names match the keys of the AWS JSON file (launcher/aws_config_json.hpp).
struct AwsConfig {
  std::string region;                              ///< e.g. "us-east-1"
  std::string subnet_id;                           ///< one subnet = one VPC and one availability zone; for plans without a zone
  /// The subnet of each Availability Zone a plan may be priced in (AZ name -> subnet ID): a plan with a
  /// `zone` launches in subnet_ids[zone]. AZ names differ between accounts: use the account's own.
  std::map<std::string, std::string> subnet_ids;
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
  std::optional<ServerlessConfig> serverless;      ///< Lambda image, role and exchange bucket; needed only by serverless launches

  /// AMI of instances of `type`.
  [[nodiscard]] const std::string& image_for(std::string_view type) const {
    auto it = image_ids.find(std::string(type));
    return it == image_ids.end() ? image_id : it->second;
  }

  /// The subnet a plan priced in Availability Zone `zone` launches in: subnet_ids[zone], or subnet_id for
  /// a plan without a zone (`zone` empty). Throws spotdnn::invalid_argument naming the zone and the key to
  /// add when the configuration gives no such subnet (a lone subnet_id is not used for a zoned plan: it
  /// cannot be checked to be in that zone).
  [[nodiscard]] const std::string& subnet_for(std::string_view zone) const {
    constexpr std::string_view fn = "AwsConfig::subnet_for";
    if (zone.empty()) {
      if (subnet_id.empty()) {
        std::string zones;
        for (const auto& entry : subnet_ids) zones.append(zones.empty() ? "" : ", ").append(entry.first);
        spotdnn::detail::fail(fn, "subnet_id", "missing",
                              "the plan names no Availability Zone (its catalog had no per-zone prices), so it launches in "
                              "subnet_id; the configuration gives subnets only for zones (" + zones +
                                  "): add subnet_id, or plan with a catalog that prices those zones");
      }
      return subnet_id;
    }
    const auto it = subnet_ids.find(std::string(zone));
    if (it == subnet_ids.end()) {
      spotdnn::detail::fail(fn, "subnet_ids", spotdnn::detail::quoted(zone) + " missing",
                            "the plan was priced in Availability Zone " + std::string(zone) + ": add \"subnet_ids\": {\"" +
                                std::string(zone) + "\": \"subnet-...\"} with a subnet of that zone to the AWS configuration" +
                                (subnet_id.empty() ? std::string() : " (subnet_id cannot be checked to be in that zone)"));
    }
    return it->second;
  }

  /// Throws spotdnn::invalid_argument naming the first bad field ("AwsConfig::validate: subnet_id = ...").
  /// What a spot launch, status and teardown need; the `serverless` object is checked too when present.
  void validate() const {
    constexpr std::string_view fn = "AwsConfig::validate";
    require_region(fn, "region", region);
    if (serverless) serverless->validate(fn, region);
    if (subnet_id.empty() && subnet_ids.empty()) {
      spotdnn::detail::fail(fn, "subnet_id", "missing",
                            "give subnet_id (the subnet of plans without a zone) or subnet_ids {AZ: subnet} (or both)");
    }
    if (!subnet_id.empty()) require_subnet_id(fn, "subnet_id", subnet_id);
    if (subnet_ids.size() > kMaxSubnetZones) {
      spotdnn::detail::fail(fn, "subnet_ids", std::to_string(subnet_ids.size()) + " zones",
                            "at most " + std::to_string(kMaxSubnetZones) + " Availability Zones");
    }
    for (const auto& [zone, subnet] : subnet_ids) {
      require_zone_name(fn, "subnet_ids key", zone);
      require_subnet_id(fn, "subnet_ids." + zone, subnet);
    }
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
    validate_tags(fn);
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

  /// Throws spotdnn::invalid_argument naming the first bad field ("AwsConfig::validate_serverless:
  /// serverless.role_arn = ..."): what a serverless launch needs, the region, the `serverless` object
  /// and the tags. The spot-only fields are not looked at.
  void validate_serverless() const {
    constexpr std::string_view fn = "AwsConfig::validate_serverless";
    require_region(fn, "region", region);
    if (!serverless) {
      spotdnn::detail::fail(fn, "serverless", "missing",
                            "a serverless launch needs the serverless object: image_uri, role_arn (and optionally bucket_prefix, "
                            "architecture, environment)");
    }
    serverless->validate(fn, region);
    validate_tags(fn);
  }

 private:
  void validate_tags(std::string_view fn) const {
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
  }
};

/// Every region an AWS configuration file gives launch settings for: one region (the flat form, whose
/// top level holds the region and its settings) or several (the form with a `regions` map, REGION ->
/// settings; see launcher/aws_config_json.hpp). Each configuration's `region` is its key.
struct AwsRegionConfigs {
  std::map<std::string, AwsConfig> regions;  ///< region -> its settings (each validated on reading)
  bool region_map = false;                   ///< written with the `regions` map (false: the flat one-region form)

  /// The regions, comma-separated in name order ("us-east-1, us-west-2").
  [[nodiscard]] std::string region_names() const {
    std::string names;
    for (const auto& entry : regions) names.append(names.empty() ? "" : ", ").append(entry.first);
    return names;
  }

  /// The settings of `region`. Throws spotdnn::invalid_argument naming the region and the regions the
  /// configuration has when it has none for `region`.
  [[nodiscard]] const AwsConfig& for_region(std::string_view region) const {
    const auto it = regions.find(std::string(region));
    if (it == regions.end()) {
      spotdnn::detail::fail("AwsRegionConfigs::for_region", "regions", spotdnn::detail::quoted(region) + " missing",
                            "the AWS configuration gives settings for " + (regions.empty() ? std::string("no region") : region_names()) +
                                " only: add " + spotdnn::detail::quoted(region) + ": {\"subnet_ids\": ..., \"security_group_ids\": ..., "
                                "\"image_id\": ...} to its regions map, or plan for one of those regions");
    }
    return it->second;
  }

  /// The settings a plan priced in `plan_region` launches with. A configuration of one region (either
  /// form) gives that region's settings whatever `plan_region` is: the launch script compares the two and
  /// refuses a difference unless LaunchOptions::region_override. A configuration of several regions
  /// gives for_region(plan_region), and throws like it when the plan's region has no entry.
  [[nodiscard]] const AwsConfig& for_launch(std::string_view plan_region) const {
    if (regions.size() == 1) return regions.begin()->second;
    return for_region(plan_region);
  }
};

}  // namespace spotdnn::launcher
