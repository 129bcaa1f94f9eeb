#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/aws_cli.hpp The bash script that launches a plan with the AWS CLI: an on-demand
/// parameter server, spot workers per type, a cluster spec JSON, and a teardown by the plan's tag.
///
/// The script (`set -Eeuo pipefail`, no eval) optionally creates the cluster placement group, launches
/// the PS on-demand with `aws ec2 run-instances`, then each worker type with `run-instances --count N
/// --instance-market-options` (spot, one-time, terminate), all in one subnet, IMDSv2 required, every
/// instance and spot request tagged spotdnn:plan-id / spotdnn:role / spotdnn:instance-type plus the
/// user's tags. With LaunchOptions::fleet the workers come from EC2 Fleet `instant` requests instead
/// (see fleet.hpp). It waits until every instance runs, writes the cluster spec JSON
/// ({plan_id, region, parameter_server{instance_id,type,private_ip}, workers[{instance_id,type,gpus,
/// private_ip}]}), and if any step fails it tears down what it started. `bash SCRIPT teardown`
/// terminates every instance carrying the plan's tag.
///
/// Every user value is validated (AwsConfig::validate, LaunchPlan::validate) and appears only inside
/// single quotes (shell_quote); every JSON argument (tag specifications, instance profile, placement,
/// metadata and market options, launch template, fleet request) is an nlohmann value dumped once and
/// then quoted once. Values AWS reports back (instance IDs, IPs, types) are checked by the script before
/// it uses them. What is only known at launch time is joined by concatenation, never by replacing a
/// marker: worker user data is head + the PS address (checked to be IPv4) + body (bootstrap.hpp), and
/// the launch-template data is head + base64 of that + tail (fleet.hpp). `SPOTDNN_AWS` (the aws
/// binary) and `SPOTDNN_AWS_ENDPOINT_URL` (passed as --endpoint-url) point the script at a test endpoint.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/bootstrap.hpp"
#include "spotdnn/launcher/fleet.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// How to emit the launch script.
struct LaunchOptions {
  bool fleet = false;  ///< workers through EC2 Fleet `instant` (a launch template per type) instead of run-instances
};

namespace detail {

inline std::string plural(int count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

/// The options of `run-instances` every instance shares (image, type, count, network, IMDSv2, tags).
inline std::string run_instances_common(const AwsConfig& config, std::string_view plan_id, std::string_view role,
                                        std::string_view type, int count, const std::vector<std::string_view>& tagged) {
  const std::string c = " \\\n    ";
  std::string s = "aws_ec2 run-instances";
  s += c + "--image-id " + shell_quote(config.image_for(type));
  s += c + "--instance-type " + shell_quote(type);
  s += c + "--count " + std::to_string(count);
  s += c + "--subnet-id \"$SUBNET_ID\"";
  s += c + "--security-group-ids \"${SECURITY_GROUP_IDS[@]}\"";
  if (!config.key_name.empty()) s += c + "--key-name " + shell_quote(config.key_name);
  if (!config.iam_instance_profile.empty()) {
    nlohmann::ordered_json profile;
    profile["Name"] = config.iam_instance_profile;
    s += c + "--iam-instance-profile " + shell_quote(json_text(profile));
  }
  if (!config.placement_group.empty()) {
    nlohmann::ordered_json placement;
    placement["GroupName"] = config.placement_group;
    s += c + "--placement " + shell_quote(json_text(placement));
  }
  nlohmann::ordered_json metadata;
  metadata["HttpTokens"] = "required";
  metadata["HttpEndpoint"] = "enabled";
  metadata["HttpPutResponseHopLimit"] = config.metadata_hop_limit;
  s += c + "--metadata-options " + shell_quote(json_text(metadata));
  s += c + "--tag-specifications " + shell_quote(json_text(tag_specifications_json(tagged, resource_tags(config, plan_id, role, type))));
  return s;
}

}  // namespace detail

/// The bash launch script for `plan` (GPUs per type from `catalog`) on `config`. Throws
/// spotdnn::invalid_argument naming the field when the plan or configuration is invalid, a type is not
/// in the catalog, or a user-data script exceeds 16 KB.
[[nodiscard]] inline std::string launch_script(const LaunchPlan& plan, const Catalog& catalog, const AwsConfig& config,
                                               const LaunchOptions& options = {}) {
  constexpr std::string_view fn = "launch_script";
  plan.validate();
  config.validate();
  const std::string ps_type = config.parameter_server_type.empty() ? catalog.parameter_server.type : config.parameter_server_type;
  require_instance_type(fn, "parameter server type", ps_type);
  struct Group {
    std::string type;
    int count;
    int gpus;
  };
  std::vector<Group> groups;
  int total = 0;
  for (const auto& [type, count] : plan.cluster.counts()) {
    const auto k = catalog.index_of(type);
    if (!k) spotdnn::detail::fail(fn, "cluster type", spotdnn::detail::quoted(type), "not in the catalog (known: " + catalog.type_names() + ")");
    groups.push_back({type, count, catalog.instance_types[*k].gpus});
    total += count;
  }
  const std::string c = " \\\n    ";

  std::string s = "#!/usr/bin/env bash\n";
  s += "# shellcheck disable=SC2016,SC1003  # single quotes are deliberate: user values must never expand\n";
  s += "# spotdnn launch script for plan " + plan.plan_id + " (generated by spotdnn; review before running).\n";
  s += "# Workers (spot, one-time, terminated on interruption):";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    s += (i ? ", " : " ") + std::to_string(groups[i].count) + " x " + groups[i].type + " (" +
         detail::plural(groups[i].gpus, "GPU", "GPUs") + ")";
  }
  s += options.fleet ? " via EC2 Fleet (instant).\n" : ".\n";
  s += "# Parameter server (on-demand): 1 x " + ps_type + ".\n";
  s += "# Usage: bash SCRIPT [launch|teardown]\n";
  s += "#   launch    start everything, wait until it runs, write the cluster spec JSON (the default)\n";
  s += "#   teardown  terminate every instance tagged spotdnn:plan-id=" + plan.plan_id + "\n";
  s += "# Environment: SPOTDNN_AWS (aws CLI to run, default aws), SPOTDNN_AWS_ENDPOINT_URL (--endpoint-url),\n";
  s += "#   SPOTDNN_CLUSTER_SPEC (where to write the cluster spec, default ./spotdnn-cluster-" + plan.plan_id + ".json).\n";
  s += "# Credentials: whatever the AWS CLI is configured with; this script never reads or writes them.\n";
  s += "set -Eeuo pipefail\n\n";

  s += "readonly PLAN_ID=" + shell_quote(plan.plan_id) + "\n";
  s += "readonly REGION=" + shell_quote(config.region) + "\n";
  s += "readonly SUBNET_ID=" + shell_quote(config.subnet_id) + "\n";
  s += "readonly SECURITY_GROUP_IDS=(";
  for (std::size_t i = 0; i < config.security_group_ids.size(); ++i) s += (i ? " " : "") + shell_quote(config.security_group_ids[i]);
  s += ")\n";
  if (config.create_placement_group) s += "readonly PLACEMENT_GROUP=" + shell_quote(config.placement_group) + "\n";
  s += "CLUSTER_SPEC=${SPOTDNN_CLUSTER_SPEC:-" + shell_quote("./spotdnn-cluster-" + plan.plan_id + ".json") + "}\n";
  s += "readonly CLUSTER_SPEC\n\n";

  s += "# User data of the parameter server (" + ps_type + ").\n";
  s += "readonly PS_USER_DATA=" + shell_quote(parameter_server_user_data(config, plan.plan_id, ps_type)) + "\n";
  s += "# User data of workers: WORKER_USER_DATA_HEAD, the PS private IPv4 address, the body of the type.\n";
  std::vector<WorkerUserData> worker_parts;
  for (const Group& g : groups) worker_parts.push_back(worker_user_data_parts(config, plan.plan_id, g.type, g.gpus));
  s += "readonly WORKER_USER_DATA_HEAD=" + shell_quote(worker_parts.front().head) + "\n";
  if (options.fleet) {
    s += "# Launch-template data: LAUNCH_TEMPLATE_DATA_HEAD, the base64 worker user data, the tail of the type.\n";
    const std::string head = launch_template_data_parts(config, plan.plan_id, groups.front().type).head;
    s += "readonly LAUNCH_TEMPLATE_DATA_HEAD=" + shell_quote(head) + "\n";
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    s += "# User data body of the " + groups[i].type + " workers.\n";
    s += "readonly WORKER_USER_DATA_BODY_" + n + "=" + shell_quote(worker_parts[i].body) + "\n";
    if (options.fleet) {
      s += "# Launch-template data tail and EC2 Fleet request of the " + groups[i].type + " workers.\n";
      s += "readonly LAUNCH_TEMPLATE_DATA_TAIL_" + n + "=" +
           shell_quote(launch_template_data_parts(config, plan.plan_id, groups[i].type).tail) + "\n";
      s += "readonly FLEET_REQUEST_" + n + "=" +
           shell_quote(fleet_request_json(config, plan.plan_id, groups[i].type, groups[i].count)) + "\n";
    }
  }

  s += R"(
aws_ec2() {
  local cmd=("${SPOTDNN_AWS:-aws}" --region "$REGION" --output text)
  if [[ -n "${SPOTDNN_AWS_ENDPOINT_URL:-}" ]]; then cmd+=(--endpoint-url "$SPOTDNN_AWS_ENDPOINT_URL"); fi
  "${cmd[@]}" ec2 "$@"
}

fail() {
  echo "spotdnn: $*" >&2
  return 1
}

# GPUs per instance of each worker type of the plan.
gpus_of() {
  case "$1" in
)";
  for (const Group& g : groups) s += "    " + shell_quote(g.type) + ") echo " + std::to_string(g.gpus) + " ;;\n";
  s += R"(    *) return 1 ;;
  esac
}

# Appends the IDs in an aws text output to worker_ids.
worker_ids=()
add_worker_ids() {
  local words=()
  read -r -a words <<<"${1//$'\n'/ }"
  worker_ids+=("${words[@]}")
}

teardown() {
  local out ids=()
  out=$(aws_ec2 describe-instances \
    --filters "Name=tag:spotdnn:plan-id,Values=$PLAN_ID" 'Name=instance-state-name,Values=pending,running,stopping,stopped' \
    --query 'Reservations[].Instances[].InstanceId')
  read -r -a ids <<<"${out//$'\n'/ }"
  if ((${#ids[@]} == 0)); then
    echo "spotdnn: no instances of plan $PLAN_ID to terminate" >&2
  else
    echo "spotdnn: terminating ${#ids[@]} instances of plan $PLAN_ID" >&2
    aws_ec2 terminate-instances --instance-ids "${ids[@]}" >/dev/null
  fi
)";
  if (options.fleet) {
    for (const Group& g : groups) {
      s += "  aws_ec2 delete-launch-template --launch-template-name " +
           shell_quote(launch_template_name(plan.plan_id, g.type)) + " >/dev/null 2>&1 || true\n";
    }
  }
  s += R"(}

on_failure() {
  local status=$?
  # A failure inside $(...) also trips this trap in that subshell: leave the teardown to the main shell.
  if ((BASH_SUBSHELL > 0)); then exit "$status"; fi
  trap - ERR
  echo "spotdnn: launching plan $PLAN_ID failed (exit $status); terminating what was started" >&2
  teardown || echo "spotdnn: teardown failed too: check the instances tagged spotdnn:plan-id=$PLAN_ID" >&2
  exit "$status"
}

write_cluster_spec() {
  local out id type ip gpus separator='' tmp="$CLUSTER_SPEC.tmp"
  out=$(aws_ec2 describe-instances --instance-ids "${worker_ids[@]}" \
    --query 'Reservations[].Instances[].[InstanceId,InstanceType,PrivateIpAddress]')
  {
    printf '{\n  "plan_id": "%s",\n  "region": "%s",\n' "$PLAN_ID" "$REGION"
    printf '  "parameter_server": {"instance_id": "%s", "type": "%s", "private_ip": "%s"},\n' "$ps_id" )" +
       shell_quote(ps_type) + R"( "$ps_ip"
    printf '  "workers": ['
    while read -r id type ip; do
      [[ $id =~ ^i-[0-9a-f]+$ ]] || fail "unexpected instance ID from describe-instances: $id"
      [[ $ip =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || fail "instance $id has no private IPv4 address: $ip"
      gpus=$(gpus_of "$type") || fail "instance $id has a type the plan does not have: $type"
      printf '%s\n    {"instance_id": "%s", "type": "%s", "gpus": %s, "private_ip": "%s"}' \
        "$separator" "$id" "$type" "$gpus" "$ip"
      separator=','
    done < <(printf '%s\n' "$out" | sort -k2,2 -k1,1)
    printf '\n  ]\n}\n'
  } >"$tmp"
  mv "$tmp" "$CLUSTER_SPEC"
}

launch() {
  trap on_failure ERR
  local out user_data
)";
  if (options.fleet) s += "  local user_data_base64 launched=()\n";
  if (config.create_placement_group) {
    s += "  echo \"spotdnn: creating the cluster placement group\" >&2\n";
    s += "  aws_ec2 create-placement-group --group-name \"$PLACEMENT_GROUP\" --strategy cluster >/dev/null\n";
  }
  s += "  echo \"spotdnn: launching the parameter server (1 x " + ps_type + ", on-demand)\" >&2\n";
  s += "  out=$(" + detail::run_instances_common(config, plan.plan_id, "ps", ps_type, 1, {"instance"});
  s += c + "--user-data \"$PS_USER_DATA\"";
  s += c + "--query 'Instances[0].[InstanceId,PrivateIpAddress]')\n";
  s += R"(  read -r ps_id ps_ip <<<"$out"
  [[ $ps_id =~ ^i-[0-9a-f]+$ ]] || fail "unexpected instance ID from run-instances: $ps_id"
  [[ $ps_ip =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || fail "the parameter server has no private IPv4 address: $ps_ip"
)";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    const std::string n = std::to_string(i + 1);
    s += "\n  echo \"spotdnn: launching " + std::to_string(g.count) + " x " + g.type + " (spot" +
         (options.fleet ? ", EC2 Fleet" : "") + ")\" >&2\n";
    s += "  user_data=\"${WORKER_USER_DATA_HEAD}${ps_ip}${WORKER_USER_DATA_BODY_" + n + "}\"\n";
    if (options.fleet) {
      s += "  user_data_base64=$(printf '%s' \"$user_data\" | base64 -w0)\n";
      s += "  [[ $user_data_base64 =~ ^[A-Za-z0-9+/=]+$ ]] || fail \"base64 gave unexpected output\"\n";
      s += "  aws_ec2 create-launch-template --launch-template-name " + shell_quote(launch_template_name(plan.plan_id, g.type));
      s += c + "--launch-template-data \"${LAUNCH_TEMPLATE_DATA_HEAD}${user_data_base64}${LAUNCH_TEMPLATE_DATA_TAIL_" + n +
           "}\" >/dev/null\n";
      s += "  out=$(aws_ec2 create-fleet --cli-input-json \"$FLEET_REQUEST_" + n + "\" --query 'Instances[].InstanceIds[]')\n";
      s += "  read -r -a launched <<<\"${out//$'\\n'/ }\"\n";
      s += "  ((${#launched[@]} == " + std::to_string(g.count) + ")) || fail \"EC2 Fleet launched ${#launched[@]} of " +
           std::to_string(g.count) + " " + g.type + "\"\n";
      s += "  add_worker_ids \"$out\"\n";
    } else {
      s += "  out=$(" + detail::run_instances_common(config, plan.plan_id, "worker", g.type, g.count,
                                                     {"instance", "spot-instances-request"});
      nlohmann::ordered_json market;
      market["MarketType"] = "spot";
      market["SpotOptions"]["SpotInstanceType"] = "one-time";
      market["SpotOptions"]["InstanceInterruptionBehavior"] = "terminate";
      s += c + "--instance-market-options " + shell_quote(json_text(market));
      s += c + "--user-data \"$user_data\"";
      s += c + "--query 'Instances[].InstanceId')\n";
      s += "  add_worker_ids \"$out\"\n";
    }
  }
  s += "\n  echo \"spotdnn: waiting until all " + std::to_string(total + 1) + " instances run\" >&2\n";
  s += R"(  aws_ec2 wait instance-running --instance-ids "$ps_id" "${worker_ids[@]}"
  write_cluster_spec
  trap - ERR
  echo "spotdnn: plan $PLAN_ID runs; cluster spec written to $CLUSTER_SPEC" >&2
}

ps_id=''
ps_ip=''
case "${1:-launch}" in
  launch) launch ;;
  teardown) teardown ;;
  *)
    echo "usage: $0 [launch|teardown]" >&2
    exit 2
    ;;
esac
)";
  return s;
}

}  // namespace spotdnn::launcher
