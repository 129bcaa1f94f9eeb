#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/launch_script.hpp The bash scripts that start a run from a plan document, and that add
/// a replan document's instances to a run (a join).
///
/// **Launch** (`launch_script`): each time the script runs it makes a new run id (UTC time + 6 random
/// hex digits, run_id.hpp), optionally creates the cluster placement group (or reuses it), launches the
/// PS on-demand (`run-instances`, rank base 0), then each worker group: spot groups as one-time spot
/// instances terminated on interruption (`--instance-market-options`, or an EC2 Fleet `instant` request
/// with LaunchOptions::fleet), on-demand groups on-demand. Groups get rank bases 1, 1+n1, ...; all in
/// one subnet (the AWS configuration's subnet_ids[zone] for a plan priced in an Availability Zone, its
/// subnet_id for a plan without one: AwsConfig::subnet_for), IMDSv2 required, everything tagged (tags.hpp). It waits until every instance runs, writes
/// the cluster spec JSON (SPOTDNN_CLUSTER_SPEC, default ./spotdnn-run-RUN_ID.json) and prints
/// `spotdnn run: RUN_ID` as its last line on stdout. If a step fails it terminates what this run started.
///
/// **Join** (`join_script`): for a replan document and an existing run id. It finds the run's running
/// PS by tag (none: "no running parameter server for run ID", exit 3, nothing launched), takes rank
/// bases above every rank of the run, launches only the additions (same markets and tags), and prints
/// `spotdnn run: RUN_ID`. If a step fails it terminates only what the join started.
///
/// Every user value is validated and appears only inside single quotes; every JSON argument is an
/// nlohmann document dumped once (with the run's values as holes, bash_template.hpp); values AWS reports
/// back (instance IDs, IPs) are checked by the script before it uses them.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/bash_template.hpp"
#include "spotdnn/launcher/bootstrap.hpp"
#include "spotdnn/launcher/fleet.hpp"
#include "spotdnn/launcher/launch_plan.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/run_instances_request.hpp"
#include "spotdnn/launcher/script_parts.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// How to emit a launch or join script.
struct LaunchOptions {
  bool fleet = false;            ///< spot workers through EC2 Fleet `instant` requests instead of run-instances
  bool region_override = false;  ///< launch in the AWS configuration's region even if the plan was priced for another
};

namespace detail {

inline std::string plural(long count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

/// The region check: the configuration's region must be the plan's unless overridden.
inline void require_region_match(std::string_view function, const LaunchPlan& plan, const AwsConfig& config,
                                 const LaunchOptions& options) {
  if (plan.region != config.region && !options.region_override) {
    spotdnn::detail::fail(function, "region", spotdnn::detail::quoted(config.region),
                          "the AWS configuration's region differs from the plan's (" + plan.region +
                              "), whose prices and quotas are that region's: plan for " + config.region +
                              ", or pass --region-override to launch there anyway");
  }
}

/// `aws_ec2 run-instances` of `count` instances of `who`: image, type, network, IMDSv2, tags, market,
/// user data "$user_data"; the output is the text of `query`. The JSON option values are the controller's
/// (run_instances_request.hpp).
inline std::string run_instances(const AwsConfig& config, const InstanceRole& who, std::string_view count_word,
                                 std::string_view query) {
  const std::string c = " \\\n    ";
  std::string s = "aws_ec2 run-instances";
  s += c + "--image-id " + shell_quote(config.image_for(who.type));
  s += c + "--instance-type " + shell_quote(who.type);
  s += c + "--count " + std::string(count_word);
  s += c + "--subnet-id \"$SUBNET_ID\"";
  s += c + "--security-group-ids \"${SECURITY_GROUP_IDS[@]}\"";
  if (!config.key_name.empty()) s += c + "--key-name " + shell_quote(config.key_name);
  if (!config.iam_instance_profile.empty()) s += c + "--iam-instance-profile " + shell_quote(json_text(iam_instance_profile_json(config)));
  if (!config.placement_group.empty()) s += c + "--placement " + shell_quote(json_text(placement_json(config)));
  s += c + "--metadata-options " + shell_quote(json_text(metadata_options_json(config)));
  s += c + "--tag-specifications " + tag_specifications_template(config, who, tagged_resources(who.market)).bash_word();
  if (who.market == Market::spot) s += c + "--instance-market-options " + shell_quote(json_text(spot_market_options_json()));
  s += c + "--user-data \"$user_data\"";
  s += c + "--query " + std::string(query);
  return s;
}

/// The functions launch and join scripts share: ID bookkeeping, clean-up on failure, the check of an
/// aws text output of instance IDs.
inline constexpr std::string_view kLaunchFunctions = R"sh(
launched_ids=()
launch_templates=()

# add_ids TEXT: appends the instance IDs in an aws text output to launched_ids; checks every one.
add_ids() {
  local words=() id
  read -r -a words <<<"${1//$'\n'/ }"
  for id in "${words[@]}"; do
    [[ $id =~ ^i-[0-9a-f]+$ ]] || fail "unexpected instance ID from EC2: $id"
    launched_ids+=("$id")
  done
}

clean_up() {
  local name
  for name in "${launch_templates[@]}"; do
    aws_ec2 delete-launch-template --launch-template-name "$name" >/dev/null 2>&1 || true
  done
  if ((${#launched_ids[@]} > 0)); then
    echo "spotdnn: terminating the ${#launched_ids[@]} instances started: ${launched_ids[*]}" >&2
    aws_ec2 terminate-instances --instance-ids "${launched_ids[@]}" >/dev/null
  fi
}

on_failure() {
  local status=$?
  # A failure inside $(...) also trips this trap in that subshell: leave the clean-up to the main shell.
  if ((BASH_SUBSHELL > 0)); then exit "$status"; fi
  trap - ERR
  echo "spotdnn: run $RUN_ID: $ACTION failed (exit $status); terminating what it started" >&2
  clean_up || echo "spotdnn: the clean-up failed too: check the instances tagged spotdnn:run=$RUN_ID" >&2
  exit "$status"
}
)sh";

/// The lines that launch one group of workers with rank base "$rank_base" (set by the caller).
inline std::string launch_group(const AwsConfig& config, const WorkerGroup& group, const LaunchOptions& options,
                                std::string_view zone) {
  const InstanceRole who{"worker", group.type, group.market};
  const bool fleet = options.fleet && group.market == Market::spot;
  std::string s = "\n  echo \"spotdnn: launching " + std::to_string(group.count) + " x " + group.type + " (" +
                  std::string(to_string(group.market)) + (fleet ? ", EC2 Fleet" : "") + ", ranks $rank_base..$((rank_base + " +
                  std::to_string(group.count - 1) + ")))\" >&2\n";
  s += "  user_data=" + user_data_template(config, who, group.gpus).bash_word() + "\n";
  if (fleet) {
    const std::string c = " \\\n    ";
    s += "  user_data_base64=$(printf '%s' \"$user_data\" | base64 -w0)\n";
    s += "  [[ $user_data_base64 =~ ^[A-Za-z0-9+/=]+$ ]] || fail \"base64 gave unexpected output\"\n";
    s += "  template_name=\"spotdnn-$RUN_ID-r$rank_base-\"" + shell_quote(group.type) + "\n";
    s += "  launch_templates+=(\"$template_name\")\n";
    s += "  aws_ec2 create-launch-template --launch-template-name \"$template_name\"";
    s += c + "--tag-specifications " + launch_template_tags(config, group.type).bash_word();
    s += c + "--launch-template-data " + shell_quote(kLaunchTemplateDataHead) + "\"$user_data_base64\"" +
         launch_template_data_tail(config, group.type).bash_word() + " >/dev/null\n";
    s += "  out=$(aws_ec2 create-fleet --cli-input-json " + fleet_request_template(config, group.type, group.count, zone).bash_word() +
         " --query 'Instances[].InstanceIds[]')\n";
    s += "  read -r -a fleet_ids <<<\"${out//$'\\n'/ }\"\n";
    s += "  add_ids \"$out\"\n";
    s += "  aws_ec2 delete-launch-template --launch-template-name \"$template_name\" >/dev/null\n";
    s += "  unset 'launch_templates[-1]'\n";
    s += "  ((${#fleet_ids[@]} == " + std::to_string(group.count) + ")) || fail \"EC2 Fleet launched ${#fleet_ids[@]} of " +
         std::to_string(group.count) + " " + group.type + "\"\n";
  } else {
    s += "  out=$(" + run_instances(config, who, std::to_string(group.count), "'Instances[].InstanceId'") + ")\n";
    s += "  add_ids \"$out\"\n";
  }
  return s;
}

/// The local variables of EC2 Fleet launches, when a group uses it (" user_data_base64 ...").
inline std::string fleet_locals(const LaunchPlan& plan, const LaunchOptions& options) {
  if (!options.fleet) return "";
  for (const WorkerGroup& g : plan.workers) {
    if (g.market == Market::spot) return " user_data_base64 template_name fleet_ids=()";
  }
  return "";
}

/// `readonly SUBNET_ID` (the subnet of the plan's zone) and `SECURITY_GROUP_IDS`.
inline std::string network_settings(const AwsConfig& config, const LaunchPlan& plan) {
  std::string s = "readonly SUBNET_ID=" + shell_quote(config.subnet_for(plan.zone)) + "\n";
  s += "readonly SECURITY_GROUP_IDS=(";
  for (std::size_t i = 0; i < config.security_group_ids.size(); ++i) s += (i ? " " : "") + shell_quote(config.security_group_ids[i]);
  s += ")\n";
  return s;
}

/// The comment lines listing the groups to launch.
inline std::string groups_comment(const LaunchPlan& plan, const LaunchOptions& options) {
  std::string s;
  for (const WorkerGroup& g : plan.workers) {
    s += "#   " + std::to_string(g.count) + " x " + g.type + " (" + plural(g.gpus, "GPU", "GPUs") + "), " +
         (g.market == Market::spot ? std::string("spot, one-time, terminated on interruption") : std::string("on-demand")) +
         (options.fleet && g.market == Market::spot ? ", via EC2 Fleet (instant)" : "") + "\n";
  }
  return s;
}

/// Validates what both scripts need (the plan's zone must have a subnet) and returns the region note
/// (and the zone's, for a plan priced in one) for the header.
inline std::string check_launch(std::string_view function, const LaunchPlan& plan, const AwsConfig& config,
                                const LaunchOptions& options) {
  plan.validate();
  config.validate();
  require_region_match(function, plan, config, options);
  const std::string& subnet = config.subnet_for(plan.zone);
  const std::string zone_note =
      plan.zone.empty() ? std::string() : "# Availability Zone: " + plan.zone + " (priced there), subnet " + subnet + ".\n";
  if (plan.region == config.region) return "# Region: " + config.region + ", as planned.\n" + zone_note;
  return "# Region: " + config.region + " (--region-override: the plan was priced for " + plan.region + ").\n" + zone_note;
}

/// Waiting for the instances and the `spotdnn run:` line.
inline constexpr std::string_view kWaitRunning = R"sh(  aws_ec2 wait instance-running --instance-ids "${launched_ids[@]}"
)sh";

}  // namespace detail

/// The bash script that starts a new run of `plan` (a spotdnn.plan document) on `config`. Throws
/// spotdnn::invalid_argument naming the field when the plan or configuration is invalid, the plan is a
/// replan document, the regions differ without LaunchOptions::region_override, or a user-data script
/// exceeds 16 KB.
[[nodiscard]] inline std::string launch_script(const LaunchPlan& plan, const AwsConfig& config, const LaunchOptions& options = {}) {
  constexpr std::string_view fn = "launch_script";
  const std::string region_note = detail::check_launch(fn, plan, config, options);
  if (plan.is_join()) {
    spotdnn::detail::fail(fn, "kind", spotdnn::detail::quoted(plan.kind),
                          "a replan document adds instances to a run that is going: use --join RUN_ID");
  }
  const std::string& ps_type = config.parameter_server_type.empty() ? plan.parameter_server_type : config.parameter_server_type;
  const long world_size = plan.worker_count() + 1;

  std::string s = detail::script_header("spotdnn launch script: " + plan.workload_name + " to loss " +
                                        spotdnn::detail::format_number(plan.target_loss) + " within " +
                                        spotdnn::detail::format_readable(plan.deadline_s) + " s");
  s += "# Each run of this script starts a new run with its own id, printed last as \"spotdnn run: ID\".\n";
  s += "# Parameter server (on-demand, rank 0): 1 x " + ps_type +
       (ps_type == plan.parameter_server_type ? std::string() : " (parameter_server_type of the AWS configuration; the plan has " +
                                                                   plan.parameter_server_type + ")") +
       ". Workers:\n";
  s += detail::groups_comment(plan, options);
  s += region_note;
  s += "# Usage: bash SCRIPT. Then: spotdnn status|teardown --run ID --aws AWS.json.\n";
  s += "# SPOTDNN_CLUSTER_SPEC: where to write the cluster spec (default ./spotdnn-run-ID.json).\n";
  s += detail::kEnvironmentComment;
  s += "set -Eeuo pipefail\n";
  s += "if (($# > 0)); then echo \"usage: $0 (no arguments; status and teardown are spotdnn commands)\" >&2; exit 2; fi\n\n";
  s += detail::aws_functions(config);
  s += detail::network_settings(config, plan);
  if (config.create_placement_group) s += "readonly PLACEMENT_GROUP=" + shell_quote(config.placement_group) + "\n";
  s += "readonly ACTION=launch\n";
  s += "RUN_ID=\"$(date -u +%Y%m%d-%H%M%S)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \\n')\"\n";
  s += "[[ $RUN_ID =~ " + std::string(kRunIdRegex) + " ]] || { echo \"spotdnn: could not make a run id: $RUN_ID\" >&2; exit 1; }\n";
  s += "readonly RUN_ID\n";
  s += "CLUSTER_SPEC=${SPOTDNN_CLUSTER_SPEC:-./spotdnn-run-$RUN_ID.json}\n";
  s += "readonly CLUSTER_SPEC\n";
  s += "readonly world_size=" + std::to_string(world_size) + "\n";
  s += detail::kLaunchFunctions;
  s += R"sh(
write_cluster_spec() {
  local out id type ip role market base separator='' tmp="$CLUSTER_SPEC.tmp"
  out=$(aws_ec2 describe-instances --instance-ids "${launched_ids[@]}" --query )sh" +
       std::string(detail::kRunInstancesQuery) + R"sh()
  {
    printf '{\n  "run_id": "%s",\n  "region": "%s",\n  "instances": [' "$RUN_ID" "$REGION"
    while read -r base id _ type ip role market _; do
      [[ $id =~ ^i-[0-9a-f]+$ ]] || fail "unexpected instance ID from describe-instances: $id"
      [[ $ip =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || fail "instance $id has no private IPv4 address: $ip"
      [[ $type =~ ^[a-z0-9.-]+$ && $role =~ ^(ps|worker)$ && $market =~ ^(spot|on-demand)$ && $base =~ ^[0-9]+$ ]] ||
        fail "instance $id is not tagged as this script tagged it"
      printf '%s\n    {"rank": %s, "role": "%s", "instance_id": "%s", "type": "%s", "market": "%s", "private_ip": "%s"}' \
        "$separator" "$base" "$role" "$id" "$type" "$market" "$ip"
      separator=','
    done < <(printf '%s\n' "$out" | awk '{ print $7, $1, $2, $3, $4, $5, $6, $8 }' | )sh" +
       std::string(kRanksFromBases) + R"sh()
    printf '\n  ]\n}\n'
  } >"$tmp"
  mv "$tmp" "$CLUSTER_SPEC"
}

launch() {
  trap on_failure ERR
  local out user_data rank_base=0 ps_id='' ps_ip='')sh" + detail::fleet_locals(plan, options) + R"sh(
)sh";
  if (config.create_placement_group) {
    s += "  echo \"spotdnn: creating the cluster placement group (or using the one there is)\" >&2\n";
    s += "  aws_ec2 create-placement-group --group-name \"$PLACEMENT_GROUP\" --strategy cluster >/dev/null 2>&1 ||\n";
    s += "    aws_ec2 describe-placement-groups --group-names \"$PLACEMENT_GROUP\" >/dev/null\n";
  }
  s += "  echo \"spotdnn: run $RUN_ID in $REGION: launching the parameter server (1 x " + ps_type + ", on-demand, rank 0)\" >&2\n";
  s += "  user_data=" + user_data_template(config, {"ps", ps_type, Market::on_demand}, 0).bash_word() + "\n";
  s += "  out=$(" + detail::run_instances(config, {"ps", ps_type, Market::on_demand}, "1", "'Instances[0].[InstanceId,PrivateIpAddress]'") + ")\n";
  s += R"sh(  read -r ps_id ps_ip <<<"$out"
  add_ids "$ps_id"
  [[ $ps_ip =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || fail "the parameter server has no private IPv4 address: $ps_ip"
)sh";
  long rank_base = 1;
  for (std::size_t i = 0; i < plan.workers.size(); ++i) {
    s += "  rank_base=" + std::to_string(rank_base) + "\n";
    s += detail::launch_group(config, plan.workers[i], options, plan.zone);
    rank_base += plan.workers[i].count;
  }
  s += "\n  echo \"spotdnn: waiting until all " + std::to_string(world_size) + " instances run\" >&2\n";
  s += detail::kWaitRunning;
  s += R"sh(  write_cluster_spec
  trap - ERR
  echo "spotdnn: run $RUN_ID runs; cluster spec written to $CLUSTER_SPEC" >&2
  echo "spotdnn run: $RUN_ID"
}

launch
)sh";
  return s;
}

/// The bash script that adds the additions of `replan` (a spotdnn.replan document) to run `run_id` on
/// `config`. Throws as launch_script() does, when the document is a plan rather than a replan, or
/// when `run_id` is not a run id.
[[nodiscard]] inline std::string join_script(const LaunchPlan& replan, std::string_view run_id, const AwsConfig& config,
                                             const LaunchOptions& options = {}) {
  constexpr std::string_view fn = "join_script";
  require_run_id(fn, "--join", run_id);
  const std::string region_note = detail::check_launch(fn, replan, config, options);
  if (!replan.is_join()) {
    spotdnn::detail::fail(fn, "kind", spotdnn::detail::quoted(replan.kind),
                          "--join adds the additions of a replan document (spotdnn replan --format json) to a run; "
                          "a plan document starts a new run without --join");
  }
  std::string s = detail::script_header("spotdnn join script: add instances to run " + std::string(run_id) + " (" +
                                        replan.workload_name + ")");
  s += "# Survivors as the replan saw them: " + (replan.survivors.empty() ? std::string("none") : replan.survivors.to_string()) + ".\n";
  s += "# Additions, pointed at the run's parameter server (found by the run tag):\n";
  s += detail::groups_comment(replan, options);
  s += region_note;
  s += "# Usage: bash SCRIPT. Exit 3 (nothing launched) when the run has no running parameter server.\n";
  s += detail::kEnvironmentComment;
  s += "set -Eeuo pipefail\n";
  s += "if (($# > 0)); then echo \"usage: $0 (no arguments)\" >&2; exit 2; fi\n\n";
  s += detail::aws_functions(config);
  s += detail::network_settings(config, replan);
  s += "readonly ACTION=join\n";
  s += detail::fixed_run_id(fn, run_id);
  s += detail::kLaunchFunctions;
  s += R"sh(
join() {
  local out id state ip role rank_base=0 live=0 ps_ip='' ps_count=0 world_size user_data)sh" +
       detail::fleet_locals(replan, options) + R"sh(
  out=$()sh" + std::string(detail::kDescribeRun) +
       R"sh( --query 'Reservations[].Instances[].[InstanceId,State.Name,PrivateIpAddress,Tags[?Key==`spotdnn:role`]|[0].Value,Tags[?Key==`spotdnn:rank-base`]|[0].Value]')
  # The next free rank: above base + (instances of that base) - 1 for every group EC2 still lists.
  rank_base=$(printf '%s\n' "$out" | awk '$5 ~ /^[0-9]+$/ { n[$5]++ } END { next_rank = 1; for (b in n) if (b + n[b] > next_rank) next_rank = b + n[b]; print next_rank }')
  while read -r id state ip role _; do
    [[ $id =~ ^i-[0-9a-f]+$ && $state =~ ^(pending|running)$ ]] || continue
    live=$((live + 1))
    if [[ $role == ps && $state == running && $ip =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
      ps_ip=$ip
      ps_count=$((ps_count + 1))
    fi
  done <<<"$out"
  if ((ps_count == 0)); then
    echo "spotdnn: no running parameter server for run $RUN_ID: nothing launched" >&2
    exit 3
  fi
  ((ps_count == 1)) || fail "run $RUN_ID has $ps_count running parameter servers; expected one"
  [[ $rank_base =~ ^[0-9]{1,7}$ ]] || fail "could not work out the next rank: $rank_base"
  world_size=$((live + )sh" +
       std::to_string(replan.worker_count()) + R"sh())
  echo "spotdnn: run $RUN_ID: parameter server at $ps_ip, $live instances running; adding )sh" +
       std::to_string(replan.worker_count()) + R"sh( from rank $rank_base" >&2
  trap on_failure ERR
)sh";
  for (std::size_t i = 0; i < replan.workers.size(); ++i) {
    if (i > 0) s += "  rank_base=$((rank_base + " + std::to_string(replan.workers[i - 1].count) + "))\n";
    s += detail::launch_group(config, replan.workers[i], options, replan.zone);
  }
  s += "\n  echo \"spotdnn: waiting until the " + std::to_string(replan.worker_count()) + " new instances run\" >&2\n";
  s += detail::kWaitRunning;
  s += R"sh(  trap - ERR
  echo "spotdnn: run $RUN_ID: joined ${launched_ids[*]}" >&2
  echo "spotdnn run: $RUN_ID"
}

join
)sh";
  return s;
}

}  // namespace spotdnn::launcher
