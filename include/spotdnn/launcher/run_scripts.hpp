#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/run_scripts.hpp The bash scripts that show and end one run: `status` and `teardown`.
///
/// Both select instances by the exact tag `spotdnn:run=RUN_ID` and nothing else (never by plan content,
/// so two runs of one plan never touch each other). The run id is checked against its regex by spotdnn
/// and again by the script, because EC2 filter values treat `*` and `?` as wildcards.
///   - status: one line per instance the run tag selects (terminated ones too, while EC2 lists them):
///     rank, role, instance ID, type, market, state, private IP, revocation notice; then a summary
///     line. No instance: "spotdnn: no instances for run ID" on stderr, exit 3.
///   - teardown: terminates the run's pending, running, stopping and stopped instances (one-time spot
///     requests close with their instances) and prints what it terminated. Nothing to terminate: says so
///     and exits 3.

#include <string>
#include <string_view>

#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/script_parts.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

namespace detail {

/// What the `script` ("status" or "teardown") of run `run_id` starts with: the header ("spotdnn SCRIPT
/// script: TITLE ID"), the usage line (exit 3 when no `instances` carries the run tag), the environment
/// comment, strict mode, the aws helper functions and the run id, checked (errors name SCRIPT_script).
inline std::string run_script_prologue(std::string_view script, std::string_view title, std::string_view instances,
                                       std::string_view run_id, const AwsConfig& config) {
  const std::string fn = std::string(script) + "_script";
  config.validate();
  std::string s = script_header("spotdnn " + std::string(script) + " script: " + std::string(title) + " " + std::string(run_id));
  s += "# Usage: bash SCRIPT. Exit 3 when no " + std::string(instances) + " carries the tag spotdnn:run=" +
       std::string(run_id) + ".\n";
  s += kEnvironmentComment;
  s += "set -Eeuo pipefail\n\n";
  s += aws_functions(config);
  s += fixed_run_id(fn, run_id);
  return s;
}

}  // namespace detail

/// The bash script listing the instances of run `run_id` on `config`'s region. Throws
/// spotdnn::invalid_argument when the configuration is invalid or `run_id` is not a run id.
[[nodiscard]] inline std::string status_script(std::string_view run_id, const AwsConfig& config) {
  std::string s = detail::run_script_prologue("status", "the instances of run", "instance", run_id, config);
  s += "\nout=$(" + std::string(detail::kDescribeRun) + " --query " + std::string(detail::kRunInstancesQuery) + ")\n";
  s += R"sh(if [[ -z "${out//[[:space:]]/}" ]]; then
  echo "spotdnn: no instances for run $RUN_ID" >&2
  exit 3
fi
printf '%-5s %-6s %-20s %-14s %-9s %-13s %-15s %s\n' RANK ROLE INSTANCE_ID TYPE MARKET STATE PRIVATE_IP REVOKED
total=0
declare -A states=()
while read -r rank id state type ip role market revoked; do
  [[ $id =~ ^i-[0-9a-f]+$ && $state =~ ^[a-z-]+$ ]] || { echo "spotdnn: skipping an unexpected row: $id" >&2; continue; }
  [[ $ip =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || ip='-'
  [[ $type =~ ^[a-z0-9.-]+$ ]] || type='?'
  [[ $role =~ ^(ps|worker)$ ]] || role='?'
  [[ $market =~ ^(spot|on-demand)$ ]] || market='?'
  [[ $revoked =~ ^(instance-action|rebalance)$ ]] || revoked='-'
  printf '%-5s %-6s %-20s %-14s %-9s %-13s %-15s %s\n' "$rank" "$role" "$id" "$type" "$market" "$state" "$ip" "$revoked"
  total=$((total + 1))
  states[$state]=$((${states[$state]:-0} + 1))
done < <(printf '%s\n' "$out" | awk '{ print $7, $1, $2, $3, $4, $5, $6, $8 }' | )sh" + std::string(kRanksFromBases) + R"sh()
summary=''
for state in pending running stopping stopped shutting-down terminated; do
  if [[ -n "${states[$state]:-}" ]]; then summary+="${summary:+, }${states[$state]} $state"; fi
done
echo "spotdnn run $RUN_ID: $total instances ($summary)"
)sh";
  return s;
}

/// The bash script terminating the instances of run `run_id` on `config`'s region. Throws as
/// status_script() does.
[[nodiscard]] inline std::string teardown_script(std::string_view run_id, const AwsConfig& config) {
  std::string s = detail::run_script_prologue("teardown", "terminate the instances of run", "live instance", run_id, config);
  s += "\nout=$(" + std::string(detail::kDescribeRun) +
       " 'Name=instance-state-name,Values=pending,running,stopping,stopped' \\\n"
       "  --query 'Reservations[].Instances[].InstanceId')\n";
  s += R"sh(ids=()
read -r -a words <<<"${out//$'\n'/ }"
for id in "${words[@]}"; do
  [[ $id =~ ^i-[0-9a-f]+$ ]] || fail "unexpected instance ID from describe-instances: $id"
  ids+=("$id")
done
if ((${#ids[@]} == 0)); then
  echo "spotdnn: no instances of run $RUN_ID to terminate; nothing terminated" >&2
  exit 3
fi
echo "spotdnn: terminating ${#ids[@]} instances of run $RUN_ID: ${ids[*]}" >&2
aws_ec2 terminate-instances --instance-ids "${ids[@]}" >/dev/null
echo "spotdnn run $RUN_ID: terminated ${#ids[@]} instances"
)sh";
  return s;
}

}  // namespace spotdnn::launcher
