#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/aws_config_json.hpp Strict JSON reader for the launcher's AWS configuration file (plan
/// documents are read by launcher/launch_plan_json.hpp).
///
/// AWS file keys: region, subnet_id, subnet_ids{AZ: subnet}, security_group_ids[], image_id,
/// image_ids{TYPE: ami}, key_name, iam_instance_profile, checkpoint_s3_uri, checkpoint_dir, tags{KEY: VALUE},
/// placement_group, create_placement_group, parameter_server_type, training_command, revocation_hook,
/// poll_interval_s, checkpoint_sync_interval_s, discovery_timeout_s, metadata_hop_limit, and
/// serverless{image_uri, role_arn, bucket_prefix, architecture, environment{NAME: VALUE}}. Read for a spot
/// launch (AwsConfigUse::spot), region, subnet_id or subnet_ids (or both), security_group_ids, image_id and
/// checkpoint_s3_uri are required; read for a serverless launch (AwsConfigUse::serverless), only region and
/// serverless (with image_uri and role_arn) are, and the spot keys, when present, are only type-checked.
/// A file may instead give several regions: `regions` {REGION: settings}, with the keys every region shares
/// at its top level (aws_region_configs_from_json says which); `launch` picks the plan's region's entry.
/// Unknown keys are refused with their key path; keys that look like credentials, and string values that
/// do (an AWS access key ID, AKIA or ASIA and 16 more characters, or a credential variable's name such as
/// AWS_SECRET_ACCESS_KEY, anywhere in a training command, a tag or an environment value), are refused with
/// a message saying credentials are never accepted (the value is not echoed).

#include <map>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/launcher/aws_config.hpp"

namespace spotdnn::launcher {

/// Which launcher reads the AWS configuration, and so which keys it requires.
enum class AwsConfigUse {
  spot,        ///< launch, status and teardown of EC2 runs: the network, AMI and checkpoint keys are required
  serverless,  ///< launch --serverless: region and the serverless object are required
};

namespace detail {

/// True for key names that carry AWS credentials in some tool or another.
inline bool looks_like_credentials(std::string key) {
  for (char& c : key) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : (c == '-' ? '_' : c);
  for (std::string_view bad : {"access_key", "secret", "session_token", "credential", "password"}) {
    if (key.find(bad) != std::string::npos) return true;
  }
  return false;
}

/// True for a string value that carries AWS credentials: an access key ID (20 characters: AKIA, ASIA, ...
/// then 16 of A-Z and 0-9, standing alone) anywhere in it, or the name of a credential
/// variable or setting (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, in any case), as in a
/// training_command "AWS_SECRET_ACCESS_KEY=... python t.py".
inline bool value_looks_like_credentials(std::string_view value) {
  std::string lower(value);
  for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  for (std::string_view name : {"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "aws_security_token"}) {
    if (lower.find(name) != std::string::npos) return true;
  }
  const auto key_id_char = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  for (std::size_t i = 0; i + 20 <= value.size(); ++i) {
    const std::string_view prefix = value.substr(i, 4);
    if (prefix != "AKIA" && prefix != "ASIA") continue;
    if (i > 0 && (key_id_char(value[i - 1]) || (value[i - 1] >= 'a' && value[i - 1] <= 'z') || (value[i - 1] >= '0' && value[i - 1] <= '9'))) continue;
    std::size_t n = 4;
    while (i + n < value.size() && key_id_char(value[i + n])) ++n;
    if (n == 20) return true;
  }
  return false;
}

/// Refuses (spotdnn::invalid_argument naming the key path, the value not shown) any string under `json` whose
/// key name or value looks like credentials; `path` names `json`, a record of named keys (`fields`: its
/// keys are written .key) or a map (["key"]).
inline void refuse_credentials(const io::Json& json, const std::string& path, const std::string& function, std::string_view advice,
                               bool fields = false) {
  if (json.is_string()) {
    if (value_looks_like_credentials(json.get_ref<const std::string&>())) {
      spotdnn::detail::fail(function, path, "(not shown)",
                            std::string("this value looks like AWS credentials (an access key ID or a credential variable); "
                                        "credentials are never accepted: ") + std::string(advice));
    }
  } else if (json.is_object()) {
    for (auto it = json.begin(); it != json.end(); ++it) {
      const std::string at = fields ? path + "." + it.key() : path + "[" + spotdnn::detail::quoted(it.key()) + "]";
      if (looks_like_credentials(it.key())) {
        spotdnn::detail::fail(function, at, "(not shown)", std::string("credentials are never accepted: ") + std::string(advice));
      }
      refuse_credentials(it.value(), at, function, advice);
    }
  } else if (json.is_array()) {
    for (std::size_t i = 0; i < json.size(); ++i) refuse_credentials(json[i], path + "[" + std::to_string(i) + "]", function, advice);
  }
}

inline std::map<std::string, std::string> string_map(io::JsonObjectReader& parent, std::string_view key) {
  std::map<std::string, std::string> out;
  const io::Json* value = parent.optional(key);
  if (!value) return out;
  const std::string path = parent.key_path(key);
  io::JsonObjectReader r(*value, path, parent.function());
  for (auto it = value->begin(); it != value->end(); ++it) {
    out.emplace(it.key(), r.as_string(it.value(), path + "[" + spotdnn::detail::quoted(it.key()) + "]"));
  }
  return out;
}

/// Reads the `serverless` object of an AWS configuration (without validating it).
inline ServerlessConfig serverless_config_from_json(io::JsonObjectReader& parent) {
  io::JsonObjectReader r(parent.required("serverless"), parent.key_path("serverless"), parent.function());
  r.expect_keys({"image_uri", "role_arn", "bucket_prefix", "architecture", "environment"});
  ServerlessConfig c;
  c.image_uri = r.string("image_uri");
  c.role_arn = r.string("role_arn");
  if (r.has("bucket_prefix")) c.bucket_prefix = r.string("bucket_prefix");
  if (r.has("architecture")) c.architecture = r.string("architecture");
  c.environment = string_map(r, "environment");  // credentials in it: refused by aws_config_from_json's scan
  r.finish();
  return c;
}

/// Refuses credentials in a configuration object: a key that names them, or a value that carries them,
/// anywhere under it (errors name the key path under `path`, never the value). `top`: the file's top level,
/// whose `regions` entries are configuration objects too.
inline void refuse_config_credentials(const io::Json& json, const std::string& path, const std::string& function, bool top) {
  if (!json.is_object()) return;
  for (auto it = json.begin(); it != json.end(); ++it) {
    const std::string at = path + "." + it.key();
    if (looks_like_credentials(it.key())) {
      spotdnn::detail::fail(function, at, "(not shown)",
                            "credentials are never accepted: configure the AWS CLI (profile, SSO or instance role) instead");
    }
    if (top && it.key() == "regions" && it.value().is_object()) {
      for (auto entry = it.value().begin(); entry != it.value().end(); ++entry) {
        const std::string entry_path = at + "[" + spotdnn::detail::quoted(entry.key()) + "]";
        if (looks_like_credentials(entry.key())) {
          spotdnn::detail::fail(function, entry_path, "(not shown)",
                                "credentials are never accepted: configure the AWS CLI (profile, SSO or instance role) instead");
        }
        if (entry.value().is_object()) {
          refuse_config_credentials(entry.value(), entry_path, function, false);
        } else {
          refuse_credentials(entry.value(), entry_path, function, "configure the AWS CLI (profile, SSO or instance role) instead");
        }
      }
      continue;
    }
    // Values too: a training command, a tag or a function's environment must not carry them either.
    refuse_credentials(it.value(), at, function,
                       it.key() == "serverless" ? "give the functions an execution role (role_arn) instead"
                                                : "configure the AWS CLI (profile, SSO or instance role) instead",
                       it.key() == "serverless");
  }
}

/// Keys that name one region's resources (subnets, security groups, AMIs, placement groups and ECR images
/// exist in one region only): in the `regions` form they are given in each region's entry, never shared.
inline bool is_regional_key(std::string_view key) {
  for (std::string_view k : {"subnet_id", "subnet_ids", "security_group_ids", "image_id", "image_ids", "placement_group",
                             "create_placement_group", "serverless"}) {
    if (key == k) return true;
  }
  return false;
}

/// Reads every settings key present in `r` into `c` (type-checked, not validated), leaving the other
/// fields of `c` as they are (a region's entry over the shared keys). With `require_spot_keys`,
/// security_group_ids, image_id and checkpoint_s3_uri must be present. `region` is not read here.
inline void read_aws_settings(io::JsonObjectReader& r, AwsConfig& c, bool require_spot_keys) {
  const std::string& function = r.function();
  if (r.has("subnet_id")) c.subnet_id = r.string("subnet_id");  // neither subnet key: validate() says to give one
  if (r.has("subnet_ids")) {
    const io::Json& subnets = r.required("subnet_ids");
    if (subnets.is_object() && subnets.size() > kMaxSubnetZones) {
      spotdnn::detail::fail(function, r.key_path("subnet_ids"), std::to_string(subnets.size()) + " zones",
                            "at most " + std::to_string(kMaxSubnetZones) + " Availability Zones");
    }
    c.subnet_ids = string_map(r, "subnet_ids");
  }
  if (require_spot_keys || r.has("security_group_ids")) {
    const io::Json& groups = r.required("security_group_ids");
    if (!groups.is_array()) {
      spotdnn::detail::fail(function, r.key_path("security_group_ids"), io::JsonObjectReader::excerpt(groups), "expected an array of strings");
    }
    c.security_group_ids.clear();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      c.security_group_ids.push_back(r.as_string(groups[i], r.key_path("security_group_ids") + "[" + std::to_string(i) + "]"));
    }
  }
  if (require_spot_keys || r.has("image_id")) c.image_id = r.string("image_id");
  if (r.has("image_ids")) c.image_ids = string_map(r, "image_ids");
  if (r.has("key_name")) c.key_name = r.string("key_name");
  if (r.has("iam_instance_profile")) c.iam_instance_profile = r.string("iam_instance_profile");
  if (require_spot_keys || r.has("checkpoint_s3_uri")) c.checkpoint_s3_uri = r.string("checkpoint_s3_uri");
  if (r.has("checkpoint_dir")) c.checkpoint_dir = r.string("checkpoint_dir");
  if (r.has("tags")) c.tags = string_map(r, "tags");
  if (r.has("placement_group")) c.placement_group = r.string("placement_group");
  if (r.has("create_placement_group")) c.create_placement_group = r.boolean("create_placement_group");
  if (r.has("parameter_server_type")) c.parameter_server_type = r.string("parameter_server_type");
  if (r.has("training_command")) c.training_command = r.string("training_command");
  if (r.has("revocation_hook")) c.revocation_hook = r.string("revocation_hook");
  if (r.has("poll_interval_s")) c.poll_interval_s = r.positive_number("poll_interval_s");
  if (r.has("checkpoint_sync_interval_s")) c.checkpoint_sync_interval_s = r.positive_number("checkpoint_sync_interval_s");
  if (r.has("discovery_timeout_s")) c.discovery_timeout_s = r.positive_number("discovery_timeout_s");
  if (r.has("metadata_hop_limit")) c.metadata_hop_limit = r.integer("metadata_hop_limit", 1);
  if (r.has("serverless")) c.serverless = serverless_config_from_json(r);
}

/// The refusal of a spot launch's key missing from a configuration that has a serverless object.
[[noreturn]] inline void fail_missing_spot_key(const std::string& function, const std::string& key_path) {
  spotdnn::detail::fail(function, key_path, "missing",
                        "spot instances need this key (a configuration for serverless runs only is used with "
                        "--serverless: spotdnn launch|status|teardown --serverless)");
}

/// The refusal of a missing serverless object.
[[noreturn]] inline void fail_missing_serverless(const std::string& function, const std::string& key_path) {
  spotdnn::detail::fail(function, key_path, "missing",
                        "a serverless launch needs the serverless object: {\"image_uri\": ECR image, \"role_arn\": "
                        "execution role ARN} (see examples/aws-serverless.json)");
}

/// Validates `c` for `use`, errors under `path`.
inline void validate_aws_config(const AwsConfig& c, const std::string& path, const std::string& function, AwsConfigUse use) {
  if (use == AwsConfigUse::spot) {
    io::validate_at_path(function, path, "AwsConfig::validate", [&] { c.validate(); });
  } else {
    io::validate_at_path(function, path, "AwsConfig::validate_serverless", [&] { c.validate_serverless(); });
  }
}

/// Reads the flat form: one region's settings at the top level.
inline AwsConfig flat_aws_config_from_json(const io::Json& json, const std::string& path, const std::string& function, AwsConfigUse use) {
  io::JsonObjectReader r(json, path, function);
  refuse_config_credentials(json, path, function, true);
  r.expect_keys({"region", "subnet_id", "subnet_ids", "security_group_ids", "image_id", "image_ids", "key_name",
                 "iam_instance_profile", "checkpoint_s3_uri", "checkpoint_dir", "tags", "placement_group", "create_placement_group",
                 "parameter_server_type", "training_command", "revocation_hook", "poll_interval_s",
                 "checkpoint_sync_interval_s", "discovery_timeout_s", "metadata_hop_limit", "serverless"});
  const bool spot = use == AwsConfigUse::spot;
  if (spot && json.contains("serverless")) {
    for (const std::string_view key : {"subnet_id", "security_group_ids", "image_id", "checkpoint_s3_uri"}) {
      if (!r.has(key) && !(key == "subnet_id" && r.has("subnet_ids"))) fail_missing_spot_key(function, r.key_path(key));
    }
  }
  AwsConfig c;
  c.region = r.string("region");
  read_aws_settings(r, c, spot);
  if (!spot && !c.serverless) fail_missing_serverless(function, r.key_path("serverless"));
  r.finish();
  validate_aws_config(c, path, function, use);
  return c;
}

/// Reads one entry of the `regions` map over the `shared` top-level keys.
inline AwsConfig region_entry_from_json(const io::Json& json, const std::string& region, const AwsConfig& shared, const io::Json& top,
                                        const std::string& top_path, const std::string& path, const std::string& function,
                                        AwsConfigUse use) {
  io::JsonObjectReader r(json, path, function);
  r.expect_keys({"subnet_id", "subnet_ids", "security_group_ids", "image_id", "image_ids", "key_name", "iam_instance_profile",
                 "checkpoint_s3_uri", "checkpoint_dir", "tags", "placement_group", "create_placement_group", "parameter_server_type",
                 "training_command", "revocation_hook", "poll_interval_s", "checkpoint_sync_interval_s", "discovery_timeout_s",
                 "metadata_hop_limit", "serverless"});
  if (r.has("region")) {
    spotdnn::detail::fail(function, r.key_path("region"), io::JsonObjectReader::excerpt(json.at("region")),
                          "the entry's key names its region (" + region + "): leave region out of the entry");
  }
  const bool spot = use == AwsConfigUse::spot;
  if (spot) {
    // The region's own keys must be in its entry; checkpoint_s3_uri may be shared.
    for (const std::string_view key : {"subnet_id", "security_group_ids", "image_id", "checkpoint_s3_uri"}) {
      const bool given = r.has(key) || (key == "subnet_id" && r.has("subnet_ids")) || (key == "checkpoint_s3_uri" && top.contains(key));
      if (given) continue;
      if (r.has("serverless")) fail_missing_spot_key(function, r.key_path(key));
      if (key == "subnet_id") continue;  // validate() says to give subnet_id or subnet_ids
      spotdnn::detail::fail(function, r.key_path(key), "missing",
                            key == "checkpoint_s3_uri" ? "this key is required: give it in every region's entry or once at the top level"
                                                       : "this key is required in every region's entry (EC2 IDs are regional)");
    }
  }
  AwsConfig c = shared;
  c.region = region;
  read_aws_settings(r, c, false);
  if (!spot && !c.serverless) fail_missing_serverless(function, r.key_path("serverless"));
  r.finish();
  try {
    if (spot) {
      c.validate();
    } else {
      c.validate_serverless();
    }
  } catch (const spotdnn::invalid_argument& e) {
    // A bad shared key that this entry does not replace is named where it is written, at the top level.
    const std::string key = e.field().substr(0, e.field().find_first_of(".[ "));
    const bool shared_key = !key.empty() && !json.contains(key) && top.contains(key);
    validate_aws_config(c, shared_key ? top_path : path, function, use);
  }
  return c;
}

}  // namespace detail

/// Reads an AWS configuration object for `use` in either form, and validates every region's settings
/// (AwsConfig::validate for a spot launch, AwsConfig::validate_serverless for a serverless one); every
/// error names the key path under `path`.
///
/// The flat form gives one region: `region` and its settings at the top level. The map form gives
/// several: `regions` {REGION: settings}, each entry holding any key of the flat form but `region` (the
/// entry's key names it). Its top level may hold, besides `regions`, the keys that make sense in every
/// region (key_name, iam_instance_profile, checkpoint_s3_uri, checkpoint_dir, tags, parameter_server_type,
/// training_command, revocation_hook, poll_interval_s, checkpoint_sync_interval_s, discovery_timeout_s,
/// metadata_hop_limit): each region takes them unless its entry gives the key, which then replaces the
/// shared value whole (tags are not merged). Keys that name one region's resources (subnet_id, subnet_ids,
/// security_group_ids, image_id, image_ids, placement_group, create_placement_group, serverless) are
/// refused at the top level of the map form, and `region` beside `regions` is refused naming both. The map
/// holds 1 to kMaxConfigRegions regions, each named as AWS spells regions.
[[nodiscard]] inline AwsRegionConfigs aws_region_configs_from_json(const io::Json& json, const std::string& path = "aws",
                                                                   const std::string& function = "aws_config_from_json",
                                                                   AwsConfigUse use = AwsConfigUse::spot) {
  AwsRegionConfigs out;
  if (!json.is_object() || !json.contains("regions")) {
    AwsConfig c = detail::flat_aws_config_from_json(json, path, function, use);
    std::string region = c.region;
    out.regions.emplace(std::move(region), std::move(c));
    return out;
  }
  out.region_map = true;
  io::JsonObjectReader r(json, path, function);
  detail::refuse_config_credentials(json, path, function, true);
  if (r.has("region")) {
    spotdnn::detail::fail(function, r.key_path("region"), io::JsonObjectReader::excerpt(json.at("region")),
                          "give either region with its settings at the top level (one region) or regions {REGION: settings} "
                          "(one or more), not both: this file has region and regions");
  }
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (detail::is_regional_key(it.key())) {
      spotdnn::detail::fail(function, r.key_path(it.key()), io::JsonObjectReader::excerpt(it.value()),
                            "names resources of one region (subnets, security groups, AMIs, placement groups and ECR images "
                            "are regional): with regions, give it in each region's entry, not at the top level");
    }
  }
  r.expect_keys({"regions", "key_name", "iam_instance_profile", "checkpoint_s3_uri", "checkpoint_dir", "tags",
                 "parameter_server_type", "training_command", "revocation_hook", "poll_interval_s", "checkpoint_sync_interval_s",
                 "discovery_timeout_s", "metadata_hop_limit"});
  AwsConfig shared;
  detail::read_aws_settings(r, shared, false);
  const io::Json& regions = r.required("regions");
  const std::string regions_path = r.key_path("regions");
  const io::JsonObjectReader map(regions, regions_path, function);  // an object, or refused
  if (regions.empty()) {
    spotdnn::detail::fail(function, regions_path, "{}",
                          "give the settings of at least one region: {\"us-east-1\": {\"subnet_ids\": ..., \"security_group_ids\": ..., "
                          "\"image_id\": ...}}");
  }
  if (regions.size() > kMaxConfigRegions) {
    spotdnn::detail::fail(function, regions_path, std::to_string(regions.size()) + " regions",
                          "at most " + std::to_string(kMaxConfigRegions) + " regions");
  }
  r.finish();
  for (auto it = regions.begin(); it != regions.end(); ++it) {
    const std::string at = regions_path + "[" + spotdnn::detail::quoted(it.key()) + "]";
    require_region(function, regions_path + " key", it.key());
    out.regions.emplace(it.key(), detail::region_entry_from_json(it.value(), it.key(), shared, json, path, at, function, use));
  }
  return out;
}

/// Reads the AWS configuration object of one region for `use` (aws_region_configs_from_json) and returns
/// its settings: the flat form's, or the map form's only entry. A map of several regions is refused,
/// naming them: a caller that knows its region picks it with aws_region_configs_from_json(...).for_region.
[[nodiscard]] inline AwsConfig aws_config_from_json(const io::Json& json, const std::string& path = "aws",
                                                    const std::string& function = "aws_config_from_json",
                                                    AwsConfigUse use = AwsConfigUse::spot) {
  AwsRegionConfigs configs = aws_region_configs_from_json(json, path, function, use);
  if (configs.regions.size() != 1) {
    spotdnn::detail::fail(function, path + ".regions", std::to_string(configs.regions.size()) + " regions (" + configs.region_names() + ")",
                          use == AwsConfigUse::serverless
                              ? "a serverless plan has no region, so the AWS configuration must give one: keep one region in "
                                "regions, or write that region's settings in the flat form (region at the top level)"
                              : "this reads the settings of one region: keep one region in regions, or write that region's settings "
                                "in the flat form (region at the top level)");
  }
  return std::move(configs.regions.begin()->second);
}

/// Reads an AWS configuration file of one region for `use` (aws_config_from_json); every error names the
/// file and the key path.
[[nodiscard]] inline AwsConfig read_aws_config_file(const std::string& file, AwsConfigUse use = AwsConfigUse::spot) {
  return aws_config_from_json(io::read_json_file(file), "aws", "read_aws_config_file(" + file + ")", use);
}

/// Reads an AWS configuration file of one or more regions for `use` (aws_region_configs_from_json); every
/// error names the file and the key path.
[[nodiscard]] inline AwsRegionConfigs read_aws_region_configs_file(const std::string& file, AwsConfigUse use = AwsConfigUse::spot) {
  return aws_region_configs_from_json(io::read_json_file(file), "aws", "read_aws_config_file(" + file + ")", use);
}

}  // namespace spotdnn::launcher
