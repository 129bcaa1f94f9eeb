#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/run_instances_request.hpp The `aws ec2 run-instances` request of a group of instances:
/// its JSON option values, shared by the launch and join scripts (launch_script.hpp), and the argument
/// vector with which the controller (`spotdnn watch`) joins workers to a run without a shell.
///
/// A join by the controller is the join script's launch of one group with its values known: the run's
/// parameter server address, the world size after the join and the group's rank base (the next rank
/// above every rank EC2 still lists for the run, next_rank_base()), filled into the same user data and
/// tags (bootstrap.hpp, tags.hpp). It adds two things the script does not: `--client-token`, so that EC2
/// starts the instances once however often the request is sent (EC2 API Reference, "Ensuring
/// idempotency": a repeated RunInstances with the same client token returns the first call's
/// instances), and the tag spotdnn:action = that token, by which a restarted controller finds what it
/// launched (moto, for one, keeps the token but does not deduplicate).

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/bash_template.hpp"
#include "spotdnn/launcher/bootstrap.hpp"
#include "spotdnn/launcher/launch_plan.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/run_instance.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// EC2's limit on a client token: 64 ASCII characters (EC2 API Reference, RunInstances, ClientToken).
inline constexpr std::size_t kMaxClientTokenChars = 64;

namespace detail {

/// `--metadata-options`: IMDSv2 required, the configured hop limit.
[[nodiscard]] inline nlohmann::ordered_json metadata_options_json(const AwsConfig& config) {
  nlohmann::ordered_json metadata;
  metadata["HttpTokens"] = "required";
  metadata["HttpEndpoint"] = "enabled";
  metadata["HttpPutResponseHopLimit"] = config.metadata_hop_limit;
  return metadata;
}

/// `--instance-market-options` of a spot instance: one-time, terminated on interruption.
[[nodiscard]] inline nlohmann::ordered_json spot_market_options_json() {
  nlohmann::ordered_json market;
  market["MarketType"] = "spot";
  market["SpotOptions"]["SpotInstanceType"] = "one-time";
  market["SpotOptions"]["InstanceInterruptionBehavior"] = "terminate";
  return market;
}

/// `--iam-instance-profile` {"Name": ...}.
[[nodiscard]] inline nlohmann::ordered_json iam_instance_profile_json(const AwsConfig& config) {
  nlohmann::ordered_json profile;
  profile["Name"] = config.iam_instance_profile;
  return profile;
}

/// `--placement` {"GroupName": ...}.
[[nodiscard]] inline nlohmann::ordered_json placement_json(const AwsConfig& config) {
  nlohmann::ordered_json placement;
  placement["GroupName"] = config.placement_group;
  return placement;
}

/// The resource types a launch of `market` tags: the instance, and a spot instance's request.
[[nodiscard]] inline std::vector<std::string_view> tagged_resources(Market market) {
  std::vector<std::string_view> tagged = {"instance"};
  if (market == Market::spot) tagged.push_back("spot-instances-request");
  return tagged;
}

}  // namespace detail

/// One group of workers the controller joins to a running run.
struct JoinRequest {
  std::string run_id;
  WorkerGroup group;          ///< type, count, GPUs per instance, market
  std::string ps_private_ip;  ///< the run's parameter server (dotted IPv4)
  long world_size = 0;        ///< live instances after the join (PS included)
  long rank_base = 0;         ///< the group's first rank (next_rank_base())
  std::string zone;           ///< the plan's Availability Zone ("" when priced regionally): picks the subnet
  std::string client_token;   ///< idempotency token, at most 64 printable ASCII characters
};

/// The first rank of a group joined now: above base + (instances of that base) − 1 for every rank base
/// among `instances` (all states: a rank is never given twice while EC2 lists its holder), and at least 1
/// (the PS is rank 0). The same rule as the join script's.
[[nodiscard]] inline long next_rank_base(const std::vector<RunInstance>& instances) {
  std::map<long, long> per_base;
  for (const RunInstance& i : instances) {
    if (i.rank_base) ++per_base[*i.rank_base];
  }
  long next = 1;
  for (const auto& [base, count] : per_base) next = std::max(next, base + count);
  return next;
}

/// The arguments of `aws ec2 run-instances` for `request` on `config` (after "ec2"): image, type, count,
/// subnet, security groups, key, profile, placement, IMDSv2, tags (the run's, then spotdnn:action =
/// the client token), market, the filled user data, the client token, and the query of the new IDs.
/// Throws spotdnn::invalid_argument naming the field for a bad run id, address, count, rank, token or
/// configuration.
[[nodiscard]] inline std::vector<std::string> run_instances_arguments(const AwsConfig& config, const JoinRequest& request) {
  constexpr std::string_view fn = "run_instances_arguments";
  config.validate();
  require_run_id(fn, "run_id", request.run_id);
  require_instance_type(fn, "type", request.group.type);
  if (request.group.count < 1 || request.group.count > kMaxClusterWorkers) {
    spotdnn::detail::fail(fn, "count", request.group.count, "expected 1 to " + std::to_string(kMaxClusterWorkers));
  }
  if (request.rank_base < 1) spotdnn::detail::fail(fn, "rank_base", request.rank_base, "worker ranks start at 1 (the PS is 0)");
  if (request.world_size < request.group.count + 1) {
    spotdnn::detail::fail(fn, "world_size", request.world_size, "fewer than the PS and the group joined");
  }
  const std::string& token = request.client_token;
  const bool token_ok = !token.empty() && token.size() <= kMaxClientTokenChars &&
                        std::all_of(token.begin(), token.end(), [](char c) { return c > ' ' && c < 127; });
  if (!token_ok) spotdnn::detail::fail(fn, "client_token", spotdnn::detail::quoted(token), "expected 1 to 64 printable ASCII characters");

  const InstanceRole who{"worker", request.group.type, request.group.market};
  SlotValues values;
  values[static_cast<std::size_t>(Slot::run_id)] = request.run_id;
  values[static_cast<std::size_t>(Slot::ps_address)] = request.ps_private_ip;
  values[static_cast<std::size_t>(Slot::world_size)] = std::to_string(request.world_size);
  values[static_cast<std::size_t>(Slot::rank_base)] = std::to_string(request.rank_base);
  const std::string user_data_text = user_data(config, who, request.group.gpus, values);  // checks the values
  std::vector<std::pair<std::string, std::string>> tags = resource_tags(config, who, values);
  tags.emplace_back(kActionTag, token);

  std::vector<std::string> a = {"run-instances",
                                "--image-id", config.image_for(who.type),
                                "--instance-type", who.type,
                                "--count", std::to_string(request.group.count),
                                "--subnet-id", config.subnet_for(request.zone),
                                "--security-group-ids"};
  a.insert(a.end(), config.security_group_ids.begin(), config.security_group_ids.end());
  if (!config.key_name.empty()) a.insert(a.end(), {"--key-name", config.key_name});
  if (!config.iam_instance_profile.empty()) a.insert(a.end(), {"--iam-instance-profile", json_text(detail::iam_instance_profile_json(config))});
  if (!config.placement_group.empty()) a.insert(a.end(), {"--placement", json_text(detail::placement_json(config))});
  a.insert(a.end(), {"--metadata-options", json_text(detail::metadata_options_json(config))});
  a.insert(a.end(), {"--tag-specifications", json_text(tag_specifications_json(detail::tagged_resources(who.market), tags))});
  if (who.market == Market::spot) a.insert(a.end(), {"--instance-market-options", json_text(detail::spot_market_options_json())});
  a.insert(a.end(), {"--user-data", user_data_text, "--client-token", token, "--query", "Instances[].InstanceId"});
  return a;
}

}  // namespace spotdnn::launcher
