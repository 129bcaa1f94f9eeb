#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/bootstrap.hpp The EC2 user data of the instances of a run: cluster discovery, the
/// environment of the training program, a spot revocation watcher (workers) and a periodic checkpoint
/// sync to S3 (the parameter server), checked against the 16 KB user-data limit.
///
/// **Cluster discovery.** At boot an instance reads its ID from the instance metadata service (IMDSv2)
/// and lists the instances tagged `spotdnn:run=RUN_ID` (`aws ec2 describe-instances`; the instance
/// profile needs `ec2:DescribeInstances`, and `ec2:CreateTags` for the revocation tag). It waits until
/// SPOTDNN_WORLD_SIZE of them are pending or running with a private address, or `discovery_timeout_s`
/// has passed (then it goes on with those it sees). Ranks: the PS is 0; a group of workers launched
/// together is tagged `spotdnn:rank-base=B` and its instances, sorted by instance ID, get B, B+1, ...
/// (terminated ones included, so a rank is never given twice while EC2 still lists its holder). The
/// launch script gives its groups bases 1, 1+n1, ...; a join gives its groups bases above every rank of
/// the run. The instance then exports, beside the SPOTDNN_* variables:
///   - PyTorch: MASTER_ADDR (the PS), MASTER_PORT (kMasterPort), RANK, WORLD_SIZE (instances found);
///   - TensorFlow ParameterServerStrategy: TF_CONFIG = {"cluster": {"chief": ["PS:2223"],
///     "ps": ["PS:2222"], "worker": ["W1:2222", ...]}, "task": {"type": ..., "index": ...}} with the
///     workers in rank order. The PS instance hosts both the ps task (its TF_CONFIG) and the chief
///     (coordinator): TF_CONFIG_CHIEF holds the chief's TF_CONFIG.
/// and runs `training_command` with `bash -c` (its output in LOG_DIR/spotdnn-training.log).
///
/// **Revocation watcher** (workers): polls IMDSv2 every `poll_interval_s` for `spot/instance-action`
/// (the two-minute interruption notice) and `events/recommendations/rebalance`; 404 means no notice, 401
/// an expired token (fetch a new one, retry once). On the first notice it runs the revocation hook once
/// (default: `aws s3 sync` of the checkpoint directory to the S3 URI, leaving out `.ckpt-*` files, at any
/// depth, that are still being written) and tags the instance `spotdnn:revoked=<notice>`; after the interruption
/// notice it stops. **Checkpoint sync** (PS): every `checkpoint_sync_interval_s` and once more on SIGTERM.
///
/// Modes: `bash FILE` (what cloud-init does) starts the watcher or sync loop and the training in the
/// background; `bash FILE watch` / `bash FILE sync` runs only the loop; `bash FILE env` discovers the
/// cluster and prints the exported variables. Environment overrides for running against local fakes:
/// SPOTDNN_IMDS_URL (default http://169.254.169.254), SPOTDNN_AWS (the aws binary), AWS_ENDPOINT_URL
/// (passed as --endpoint-url), SPOTDNN_POLL_INTERVAL_S, SPOTDNN_SYNC_INTERVAL_S,
/// SPOTDNN_DISCOVERY_TIMEOUT_S, SPOTDNN_LOG_DIR.
///
/// The user data is a BashTemplate: the run id, PS address, world size and rank base are holes the
/// launch or join script fills with values it has checked (bash_template.hpp).

#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/bash_template.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// EC2 user data is limited to 16 KB in raw form, before base64 encoding (16384 bytes; the encoded
/// size is ceil(n/3)·4). Source: AWS EC2 User Guide, "Work with instance user data", Considerations.
inline constexpr std::size_t kUserDataLimitBytes = 16384;

/// MASTER_PORT: the PyTorch rendezvous port on the PS.
inline constexpr int kMasterPort = 29500;
/// The TensorFlow port of the ps and worker tasks; the chief (on the PS instance) uses kTfPort + 1.
inline constexpr int kTfPort = 2222;

/// Throws when `user_data` exceeds kUserDataLimitBytes, naming `what` and both sizes.
inline void require_user_data_size(std::string_view function, std::string_view what, std::string_view user_data) {
  if (user_data.size() > kUserDataLimitBytes) {
    spotdnn::detail::fail(function, what, std::to_string(user_data.size()) + " bytes",
                          "EC2 user data is limited to " + std::to_string(kUserDataLimitBytes) +
                              " bytes before base64 encoding; shorten training_command or revocation_hook");
  }
}

namespace detail {

/// Seconds as bash's `sleep` reads them ("5", "0.25").
inline std::string seconds_text(double seconds) { return spotdnn::detail::format_number(seconds); }

/// The run's values, checked by the script that fills them in, then the settings of the instance.
inline std::string bootstrap_values(const AwsConfig& config, const InstanceRole& who, int gpus, const SlotValues& values) {
  const auto value = [&](Slot slot) { return values[static_cast<std::size_t>(slot)]; };
  std::string s;
  s += "SPOTDNN_RUN_ID='" + value(Slot::run_id) + "'\n";
  s += "SPOTDNN_PS_PRIVATE_IP='" + (who.role == "ps" ? std::string() : value(Slot::ps_address)) + "'\n";
  s += "SPOTDNN_WORLD_SIZE='" + value(Slot::world_size) + "'\n";
  s += "SPOTDNN_RANK_BASE='" + value(Slot::rank_base) + "'\n";
  s += "export SPOTDNN_RUN_ID SPOTDNN_PS_PRIVATE_IP SPOTDNN_WORLD_SIZE SPOTDNN_RANK_BASE\n";
  s += "export SPOTDNN_ROLE=" + shell_quote(who.role) + "\n";
  s += "export SPOTDNN_INSTANCE_TYPE=" + shell_quote(who.type) + "\n";
  s += "export SPOTDNN_MARKET=" + shell_quote(to_string(who.market)) + "\n";
  s += "export SPOTDNN_GPUS=" + std::to_string(gpus) + "\n";
  s += "export SPOTDNN_CHECKPOINT_DIR=" + shell_quote(config.checkpoint_dir) + "\n";
  s += "export SPOTDNN_CHECKPOINT_S3_URI=" + shell_quote(config.checkpoint_s3_uri) + "\n";
  s += "readonly REGION=" + shell_quote(config.region) + "\n";
  s += "readonly TRAINING_COMMAND=" + shell_quote(config.training_command) + "\n";
  s += "readonly LOG_DIR=\"${SPOTDNN_LOG_DIR:-/var/log}\"\n";
  s += "readonly IMDS_URL=\"${SPOTDNN_IMDS_URL:-http://169.254.169.254}\"\n";
  s += "readonly DISCOVERY_TIMEOUT_S=\"${SPOTDNN_DISCOVERY_TIMEOUT_S:-" +
       std::to_string(static_cast<long>(std::ceil(config.discovery_timeout_s))) + "}\"\n";
  s += "readonly MASTER_PORT_DEFAULT=" + std::to_string(kMasterPort) + "\n";
  s += "readonly TF_PORT=" + std::to_string(kTfPort) + "\n";
  return s;
}

/// What every instance runs: the aws wrapper, checkpoint sync, IMDSv2, discovery and the training start.
inline std::string bootstrap_common() {
  return R"sh(
aws_cli() {
  local cmd=("${SPOTDNN_AWS:-aws}" --region "$REGION")
  if [[ -n "${AWS_ENDPOINT_URL:-}" ]]; then cmd+=(--endpoint-url "$AWS_ENDPOINT_URL"); fi
  "${cmd[@]}" "$@"
}

sync_checkpoints() {
  mkdir -p "$SPOTDNN_CHECKPOINT_DIR"
  aws_cli s3 sync "$SPOTDNN_CHECKPOINT_DIR" "$SPOTDNN_CHECKPOINT_S3_URI" --exclude '.ckpt-*' --exclude '*/.ckpt-*'
}

imds_token=''
imds_body=''

# IMDSv2 session token (PUT with a TTL header); empty when the metadata service does not answer.
imds_refresh_token() {
  imds_token=$(curl -sS --max-time 5 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 21600' \
    "$IMDS_URL/latest/api/token") || imds_token=''
}

# imds_get PATH: 0 = found (body in imds_body), 1 = 404 (nothing there), 2 = any other failure.
# A 401 means the token expired or was refused: refresh it and try once more.
imds_get() {
  local reply code
  for _ in 1 2; do
    if [[ -z "$imds_token" ]]; then imds_refresh_token; fi
    reply=$(curl -s --max-time 5 -w '\n%{http_code}' -H "X-aws-ec2-metadata-token: $imds_token" \
      "$IMDS_URL/latest/meta-data/$1") || return 2
    code=${reply##*$'\n'}
    imds_body=${reply%$'\n'*}
    case "$code" in
      200) return 0 ;;
      404) return 1 ;;
      401) imds_token='' ;;
      *) return 2 ;;
    esac
  done
  return 2
}

is_ipv4() { [[ $1 =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; }

# The run's instances as lines "rank instance-id state private-ip role", ranks from the rank-base tags.
# Rows that are not as spotdnn tags them are skipped with a warning.
run_members() {
  local out id state ip role base
  out=$(aws_cli --output text ec2 describe-instances --filters "Name=tag:spotdnn:run,Values=$SPOTDNN_RUN_ID" \
    --query 'Reservations[].Instances[].[InstanceId,State.Name,PrivateIpAddress,Tags[?Key==`spotdnn:role`]|[0].Value,Tags[?Key==`spotdnn:rank-base`]|[0].Value]') || return 1
  while read -r id state ip role base; do
    [[ -n "$id" ]] || continue
    if [[ $id =~ ^i-[0-9a-f]+$ && $state =~ ^[a-z-]+$ && $role =~ ^(ps|worker)$ && $base =~ ^[0-9]{1,7}$ ]]; then
      printf '%s %s %s %s %s\n' "$base" "$id" "$state" "$ip" "$role"
    else
      echo "spotdnn: skipping an instance of run $SPOTDNN_RUN_ID not tagged as spotdnn tags: $id" >&2
    fi
  done <<<"$out" | )sh" + std::string(kRanksFromBases) + R"sh(
}

# Finds this instance, the PS and the workers of the run; exports the PyTorch and TensorFlow variables.
discover_cluster() {
  local self members rank id state ip role live ps_ip='' deadline=$((SECONDS + DISCOVERY_TIMEOUT_S))
  imds_get instance-id || { echo "spotdnn: cannot read this instance's ID from the metadata service" >&2; return 1; }
  self=$imds_body
  [[ $self =~ ^i-[0-9a-f]+$ ]] || { echo "spotdnn: unexpected instance ID from the metadata service: $self" >&2; return 1; }
  while true; do
    members=$(run_members) || members=''
    live=0
    ps_ip=''
    while read -r rank id state ip role; do
      if [[ $state =~ ^(pending|running)$ ]] && is_ipv4 "$ip"; then
        live=$((live + 1))
        if [[ $role == ps ]]; then ps_ip=$ip; fi
      fi
    done <<<"$members"
    if ((live >= SPOTDNN_WORLD_SIZE)) && [[ -n "$ps_ip" ]] && grep -q " $self " <<<"$members"; then break; fi
    if ((SECONDS >= deadline)); then
      if [[ -n "$ps_ip" ]] && grep -q " $self " <<<"$members"; then
        echo "spotdnn: found $live of $SPOTDNN_WORLD_SIZE instances of run $SPOTDNN_RUN_ID after ${DISCOVERY_TIMEOUT_S}s; going on with them" >&2
        break
      fi
      echo "spotdnn: run $SPOTDNN_RUN_ID: no parameter server or no entry for $self after ${DISCOVERY_TIMEOUT_S}s" >&2
      return 1
    fi
    sleep 5
  done
  local workers='' index=0 task_index=0 rank_of_self=''
  while read -r rank id state ip role; do
    if ! [[ $state =~ ^(pending|running)$ ]] || ! is_ipv4 "$ip"; then continue; fi
    if [[ $id == "$self" ]]; then rank_of_self=$rank; fi
    if [[ $role == worker ]]; then
      workers+="${workers:+,}\"$ip:$TF_PORT\""
      if [[ $id == "$self" ]]; then task_index=$index; fi
      index=$((index + 1))
    fi
  done <<<"$members"
  [[ -n "$rank_of_self" ]] || { echo "spotdnn: this instance ($self) is not running in run $SPOTDNN_RUN_ID" >&2; return 1; }
  local cluster="{\"chief\":[\"$ps_ip:$((TF_PORT + 1))\"],\"ps\":[\"$ps_ip:$TF_PORT\"],\"worker\":[$workers]}"
  export SPOTDNN_PS_PRIVATE_IP=$ps_ip MASTER_ADDR=$ps_ip MASTER_PORT=${MASTER_PORT:-$MASTER_PORT_DEFAULT}
  export RANK=$rank_of_self WORLD_SIZE=$live
  if [[ $SPOTDNN_ROLE == ps ]]; then
    export TF_CONFIG="{\"cluster\":$cluster,\"task\":{\"type\":\"ps\",\"index\":0}}"
    export TF_CONFIG_CHIEF="{\"cluster\":$cluster,\"task\":{\"type\":\"chief\",\"index\":0}}"
  else
    export TF_CONFIG="{\"cluster\":$cluster,\"task\":{\"type\":\"worker\",\"index\":$task_index}}"
  fi
}

print_environment() {
  local name
  for name in SPOTDNN_RUN_ID SPOTDNN_ROLE SPOTDNN_INSTANCE_TYPE SPOTDNN_MARKET SPOTDNN_GPUS SPOTDNN_PS_PRIVATE_IP \
    SPOTDNN_CHECKPOINT_DIR SPOTDNN_CHECKPOINT_S3_URI MASTER_ADDR MASTER_PORT RANK WORLD_SIZE TF_CONFIG TF_CONFIG_CHIEF; do
    if [[ -v $name ]]; then printf '%s=%s\n' "$name" "${!name}"; fi
  done
}

train() {
  discover_cluster
  print_environment >&2
  if [[ -n "$TRAINING_COMMAND" ]]; then exec bash -c "$TRAINING_COMMAND"; fi
}

start_training() {
  nohup bash "$0" train >>"$LOG_DIR/spotdnn-training.log" 2>&1 &
}
)sh";
}

/// The worker's revocation watcher and modes.
inline constexpr std::string_view kWorkerBody = R"sh(
run_hook() {
  if [[ -n "$REVOCATION_HOOK" ]]; then
    bash -c "$REVOCATION_HOOK"
  else
    sync_checkpoints
  fi
}

tag_self() {
  local instance_id
  if imds_get instance-id; then
    instance_id=$imds_body
    aws_cli ec2 create-tags --resources "$instance_id" --tags "Key=spotdnn:revoked,Value=$1" >/dev/null
  else
    echo "spotdnn: cannot read the instance ID to tag it revoked" >&2
  fi
}

hook_done=0
on_notice() {
  echo "spotdnn: $1 notice: $imds_body" >&2
  if [[ $hook_done == 0 ]]; then
    hook_done=1
    run_hook || echo "spotdnn: the revocation hook failed" >&2
  fi
  tag_self "$1" || echo "spotdnn: tagging the instance failed" >&2
}

watch_revocation() {
  local rebalance_seen=0 found
  while true; do
    found=0
    imds_get spot/instance-action || found=$?
    if [[ $found == 0 ]]; then
      on_notice instance-action
      return 0
    fi
    found=0
    imds_get events/recommendations/rebalance || found=$?
    if [[ $found == 0 && $rebalance_seen == 0 ]]; then
      rebalance_seen=1
      on_notice rebalance
    fi
    sleep "$POLL_INTERVAL_S"
  done
}

case "${1:-boot}" in
  watch) watch_revocation ;;
  train) train ;;
  env)
    discover_cluster
    print_environment
    ;;
  boot)
    mkdir -p "$SPOTDNN_CHECKPOINT_DIR"
    nohup bash "$0" watch >>"$LOG_DIR/spotdnn-watch.log" 2>&1 &
    start_training
    ;;
  *) echo "usage: $0 [boot|watch|train|env]" >&2; exit 2 ;;
esac
)sh";

/// The PS's checkpoint sync loop and modes.
inline constexpr std::string_view kParameterServerBody = R"sh(
final_sync() {
  trap - TERM INT
  sync_checkpoints || echo "spotdnn: the final checkpoint sync failed" >&2
  exit 0
}

sync_loop() {
  trap final_sync TERM INT
  while true; do
    sleep "$SYNC_INTERVAL_S" &
    wait $! || true
    sync_checkpoints || echo "spotdnn: checkpoint sync failed" >&2
  done
}

case "${1:-boot}" in
  sync) sync_loop ;;
  train) train ;;
  env)
    discover_cluster
    print_environment
    ;;
  boot)
    mkdir -p "$SPOTDNN_CHECKPOINT_DIR"
    nohup bash "$0" sync >>"$LOG_DIR/spotdnn-sync.log" 2>&1 &
    start_training
    ;;
  *) echo "usage: $0 [boot|sync|train|env]" >&2; exit 2 ;;
esac
)sh";

}  // namespace detail

/// The user data of instances of `who` (role "ps" or "worker") with `gpus` GPUs per instance (0 for the
/// PS), as a template with the run's values as holes. Throws spotdnn::invalid_argument when the
/// configuration is invalid or the script, with the longest values, exceeds the 16 KB user-data limit.
[[nodiscard]] inline BashTemplate user_data_template(const AwsConfig& config, const InstanceRole& who, int gpus) {
  constexpr std::string_view fn = "user_data_template";
  config.validate();
  require_instance_type(fn, "type", who.type);
  const bool ps = who.role == "ps";
  if (!ps && who.role != "worker") spotdnn::detail::fail(fn, "role", spotdnn::detail::quoted(who.role), "expected ps or worker");
  if (!ps && gpus < 1) spotdnn::detail::fail(fn, "gpus", gpus, "a worker needs at least 1 GPU");
  BashTemplate t = make_template([&](const SlotValues& values) {
    std::string s = "#!/bin/bash\n";
    s += "# shellcheck disable=SC2016,SC1003  # single quotes are deliberate: user values must never expand\n";
    s += ps ? "# spotdnn parameter-server bootstrap (EC2 user data): cluster discovery, checkpoint sync, training.\n"
            : "# spotdnn worker bootstrap (EC2 user data): cluster discovery, spot revocation watcher, training.\n";
    s += ps ? "# bash FILE = start (cloud-init); bash FILE sync|train|env = one part in the foreground.\n"
            : "# bash FILE = start (cloud-init); bash FILE watch|train|env = one part in the foreground.\n";
    s += "set -euo pipefail\n";
    s += detail::bootstrap_values(config, who, gpus, values);
    if (ps) {
      s += "readonly SYNC_INTERVAL_S=\"${SPOTDNN_SYNC_INTERVAL_S:-" + detail::seconds_text(config.checkpoint_sync_interval_s) + "}\"\n";
    } else {
      s += "readonly REVOCATION_HOOK=" + shell_quote(config.revocation_hook) + "\n";
      s += "readonly POLL_INTERVAL_S=\"${SPOTDNN_POLL_INTERVAL_S:-" + detail::seconds_text(config.poll_interval_s) + "}\"\n";
    }
    s += detail::bootstrap_common();
    s += ps ? detail::kParameterServerBody : detail::kWorkerBody;
    return s;
  });
  require_user_data_size(fn, "user data of " + who.role + " " + who.type + " (with the longest run values)",
                         t.filled(longest_slot_values()));
  return t;
}

/// The user data of one instance with the run's `values` filled in (what the scripts send to EC2).
/// Throws as user_data_template() does, or when a value is not of its kind (run id, IPv4 address for a
/// worker, decimal numbers).
[[nodiscard]] inline std::string user_data(const AwsConfig& config, const InstanceRole& who, int gpus, const SlotValues& values) {
  require_slot_values("user_data", values, who.role != "ps");
  return user_data_template(config, who, gpus).filled(values);
}

}  // namespace spotdnn::launcher
