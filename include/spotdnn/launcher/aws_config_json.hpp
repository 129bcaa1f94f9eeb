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

}  // namespace detail

/// Reads the AWS configuration object for `use` and validates it (AwsConfig::validate for a spot launch,
/// AwsConfig::validate_serverless for a serverless one); every error names the key path under `path`.
[[nodiscard]] inline AwsConfig aws_config_from_json(const io::Json& json, const std::string& path = "aws",
                                                              const std::string& function = "aws_config_from_json",
                                                              AwsConfigUse use = AwsConfigUse::spot) {
  io::JsonObjectReader r(json, path, function);
  if (json.is_object()) {
    for (auto it = json.begin(); it != json.end(); ++it) {
      if (detail::looks_like_credentials(it.key())) {
        spotdnn::detail::fail(function, r.key_path(it.key()), "(not shown)",
                              "credentials are never accepted: configure the AWS CLI (profile, SSO or instance role) instead");
      }
      // Values too: a training command, a tag or a function's environment must not carry them either.
      detail::refuse_credentials(it.value(), r.key_path(it.key()), function,
                                 it.key() == "serverless" ? "give the functions an execution role (role_arn) instead"
                                                          : "configure the AWS CLI (profile, SSO or instance role) instead",
                                 it.key() == "serverless");
    }
  }
  r.expect_keys({"region", "subnet_id", "subnet_ids", "security_group_ids", "image_id", "image_ids", "key_name",
                 "iam_instance_profile", "checkpoint_s3_uri", "checkpoint_dir", "tags", "placement_group", "create_placement_group",
                 "parameter_server_type", "training_command", "revocation_hook", "poll_interval_s",
                 "checkpoint_sync_interval_s", "discovery_timeout_s", "metadata_hop_limit", "serverless"});
  const bool spot = use == AwsConfigUse::spot;
  if (spot && json.is_object() && json.contains("serverless")) {
    for (const std::string_view key : {"subnet_id", "security_group_ids", "image_id", "checkpoint_s3_uri"}) {
      if (!r.has(key) && !(key == "subnet_id" && r.has("subnet_ids"))) {
        spotdnn::detail::fail(function, r.key_path(key), "missing",
                              "spot instances need this key (a configuration for serverless runs only is used with "
                              "--serverless: spotdnn launch|status|teardown --serverless)");
      }
    }
  }
  AwsConfig c;
  c.region = r.string("region");
  if (r.has("subnet_id")) c.subnet_id = r.string("subnet_id");  // neither subnet key: validate() says to give one
  if (r.has("subnet_ids")) {
    const io::Json& subnets = r.required("subnet_ids");
    if (subnets.is_object() && subnets.size() > kMaxSubnetZones) {
      spotdnn::detail::fail(function, r.key_path("subnet_ids"), std::to_string(subnets.size()) + " zones",
                            "at most " + std::to_string(kMaxSubnetZones) + " Availability Zones");
    }
    c.subnet_ids = detail::string_map(r, "subnet_ids");
  }
  if (spot || r.has("security_group_ids")) {
    const io::Json& groups = r.required("security_group_ids");
    if (!groups.is_array()) {
      spotdnn::detail::fail(function, r.key_path("security_group_ids"), io::JsonObjectReader::excerpt(groups), "expected an array of strings");
    }
    for (std::size_t i = 0; i < groups.size(); ++i) {
      c.security_group_ids.push_back(r.as_string(groups[i], r.key_path("security_group_ids") + "[" + std::to_string(i) + "]"));
    }
  }
  if (spot || r.has("image_id")) c.image_id = r.string("image_id");
  c.image_ids = detail::string_map(r, "image_ids");
  if (r.has("key_name")) c.key_name = r.string("key_name");
  if (r.has("iam_instance_profile")) c.iam_instance_profile = r.string("iam_instance_profile");
  if (spot || r.has("checkpoint_s3_uri")) c.checkpoint_s3_uri = r.string("checkpoint_s3_uri");
  if (r.has("checkpoint_dir")) c.checkpoint_dir = r.string("checkpoint_dir");
  c.tags = detail::string_map(r, "tags");
  if (r.has("placement_group")) c.placement_group = r.string("placement_group");
  if (r.has("create_placement_group")) c.create_placement_group = r.boolean("create_placement_group");
  if (r.has("parameter_server_type")) c.parameter_server_type = r.string("parameter_server_type");
  if (r.has("training_command")) c.training_command = r.string("training_command");
  if (r.has("revocation_hook")) c.revocation_hook = r.string("revocation_hook");
  if (r.has("poll_interval_s")) c.poll_interval_s = r.positive_number("poll_interval_s");
  if (r.has("checkpoint_sync_interval_s")) c.checkpoint_sync_interval_s = r.positive_number("checkpoint_sync_interval_s");
  if (r.has("discovery_timeout_s")) c.discovery_timeout_s = r.positive_number("discovery_timeout_s");
  if (r.has("metadata_hop_limit")) c.metadata_hop_limit = r.integer("metadata_hop_limit", 1);
  if (!spot || r.has("serverless")) {
    if (!r.has("serverless")) {
      spotdnn::detail::fail(function, r.key_path("serverless"), "missing",
                            "a serverless launch needs the serverless object: {\"image_uri\": ECR image, \"role_arn\": "
                            "execution role ARN} (see examples/aws-serverless.json)");
    }
    c.serverless = detail::serverless_config_from_json(r);
  }
  r.finish();
  if (spot) {
    io::validate_at_path(function, path, "AwsConfig::validate", [&] { c.validate(); });
  } else {
    io::validate_at_path(function, path, "AwsConfig::validate_serverless", [&] { c.validate_serverless(); });
  }
  return c;
}

/// Reads an AWS configuration file for `use`; every error names the file and the key path.
[[nodiscard]] inline AwsConfig read_aws_config_file(const std::string& file, AwsConfigUse use = AwsConfigUse::spot) {
  return aws_config_from_json(io::read_json_file(file), "aws", "read_aws_config_file(" + file + ")", use);
}

}  // namespace spotdnn::launcher
