#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/bootstrap.hpp The EC2 user data of workers (a spot revocation watcher) and of the
/// parameter server (periodic checkpoint sync to S3), checked against the 16 KB user-data limit.
///
/// Worker user data polls IMDSv2 every `poll_interval_s` for `spot/instance-action` (the two-minute
/// interruption notice) and `events/recommendations/rebalance` (the earlier rebalance recommendation).
/// 404 means no notice; 401 means the session token expired, so it fetches a new one and retries once.
/// On the first notice it runs the revocation hook once (default: `aws s3 sync` of the checkpoint
/// directory to the S3 URI) and tags the instance `spotdnn:revoked=<notice>`; after the interruption
/// notice it stops. The parameter server syncs its checkpoints every `checkpoint_sync_interval_s` and
/// once more when it is stopped (SIGTERM at shutdown).
///
/// Both scripts honour environment overrides so they can run against local fakes: `SPOTDNN_IMDS_URL`
/// (default http://169.254.169.254), `SPOTDNN_AWS` (the aws binary), `SPOTDNN_AWS_ENDPOINT_URL`
/// (passed as --endpoint-url), `SPOTDNN_POLL_INTERVAL_S`, `SPOTDNN_SYNC_INTERVAL_S`, `SPOTDNN_LOG_DIR`.
/// `bash FILE` (what cloud-init does) starts the watcher or sync loop and the training command in the
/// background; `bash FILE watch` (worker) or `bash FILE sync` (PS) runs only the loop in the foreground.
///
/// Workers learn the PS private IPv4 address as SPOTDNN_PS_PRIVATE_IP, which exists only once the PS
/// runs. Their user data therefore comes in two parts (WorkerUserData): a fixed head, owned by spotdnn
/// and holding no configuration value, that ends inside the quotes of `SPOTDNN_PS_PRIVATE_IP='`, and a
/// body that closes them. The launch script writes head + address + body; no text is searched and
/// replaced, so no configuration value can change where the address goes.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/shell.hpp"

namespace spotdnn::launcher {

/// EC2 user data is limited to 16 KB in raw form, before base64 encoding (16384 bytes; the encoded
/// size is ceil(n/3)·4). Source: AWS EC2 User Guide, "Work with instance user data", Considerations.
inline constexpr std::size_t kUserDataLimitBytes = 16384;

/// The longest private IPv4 address ("255.255.255.255"): worker user data is checked against the limit
/// with an address of this length, so the final user data fits whatever address the PS gets.
inline constexpr std::size_t kMaxIpv4AddressLength = 15;

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

/// The part both scripts share after `set -euo pipefail` (and, for workers, the PS address): settings,
/// the aws wrapper and the checkpoint sync. `gpus` is 0 for the PS.
inline std::string bootstrap_common(const AwsConfig& config, std::string_view plan_id, std::string_view role,
                                    std::string_view type, int gpus) {
  std::string s;
  s += "export SPOTDNN_PLAN_ID=" + shell_quote(plan_id) + "\n";
  s += "export SPOTDNN_ROLE=" + shell_quote(role) + "\n";
  s += "export SPOTDNN_INSTANCE_TYPE=" + shell_quote(type) + "\n";
  s += "export SPOTDNN_GPUS=" + std::to_string(gpus) + "\n";
  s += "export SPOTDNN_CHECKPOINT_DIR=" + shell_quote(config.checkpoint_dir) + "\n";
  s += "export SPOTDNN_CHECKPOINT_S3_URI=" + shell_quote(config.checkpoint_s3_uri) + "\n";
  s += "readonly REGION=" + shell_quote(config.region) + "\n";
  s += "readonly TRAINING_COMMAND=" + shell_quote(config.training_command) + "\n";
  s += "readonly LOG_DIR=\"${SPOTDNN_LOG_DIR:-/var/log}\"\n";
  s += R"(
aws_cli() {
  local cmd=("${SPOTDNN_AWS:-aws}" --region "$REGION")
  if [[ -n "${SPOTDNN_AWS_ENDPOINT_URL:-}" ]]; then cmd+=(--endpoint-url "$SPOTDNN_AWS_ENDPOINT_URL"); fi
  "${cmd[@]}" "$@"
}

sync_checkpoints() {
  mkdir -p "$SPOTDNN_CHECKPOINT_DIR"
  aws_cli s3 sync "$SPOTDNN_CHECKPOINT_DIR" "$SPOTDNN_CHECKPOINT_S3_URI"
}

start_training() {
  if [[ -n "$TRAINING_COMMAND" ]]; then
    nohup bash -c "$TRAINING_COMMAND" >>"$LOG_DIR/spotdnn-training.log" 2>&1 &
  fi
}
)";
  return s;
}

}  // namespace detail

/// Worker user data around the PS private IPv4 address: the user data is head + address + body.
struct WorkerUserData {
  std::string head;  ///< fixed text (no configuration value) ending with `SPOTDNN_PS_PRIVATE_IP='`
  std::string body;  ///< `'`, a newline and the rest of the script

  /// head + `ps_private_ip` + body; throws unless `ps_private_ip` is an IPv4 address.
  [[nodiscard]] std::string with_ps_address(std::string_view ps_private_ip) const {
    require_ipv4_address("WorkerUserData::with_ps_address", "ps_private_ip", ps_private_ip);
    return head + std::string(ps_private_ip) + body;
  }
};

/// User data of a worker of `type` with `gpus` GPUs in plan `plan_id` (the revocation watcher), in two
/// parts around the PS address. Throws when the configuration is invalid or the script, with the
/// longest IPv4 address, exceeds the 16 KB user-data limit.
[[nodiscard]] inline WorkerUserData worker_user_data_parts(const AwsConfig& config, std::string_view plan_id,
                                                           std::string_view type, int gpus) {
  constexpr std::string_view fn = "worker_user_data";
  config.validate();
  require_simple_name(fn, "plan_id", plan_id);
  require_instance_type(fn, "type", type);
  if (gpus < 1) spotdnn::detail::fail(fn, "gpus", gpus, "must be at least 1");
  WorkerUserData parts;
  parts.head = "#!/bin/bash\n";
  parts.head += "# shellcheck disable=SC2016,SC1003  # single quotes are deliberate: user values must never expand\n";
  parts.head += "# spotdnn worker bootstrap (EC2 user data): spot revocation watcher and training start.\n";
  parts.head += "# bash FILE = start in the background (cloud-init); bash FILE watch = watcher in the foreground.\n";
  parts.head += "set -euo pipefail\n";
  parts.head += "SPOTDNN_PS_PRIVATE_IP='";  // the launch script writes the checked address here
  std::string s = "'\nexport SPOTDNN_PS_PRIVATE_IP\n";
  s += detail::bootstrap_common(config, plan_id, "worker", type, gpus);
  s += "readonly REVOCATION_HOOK=" + shell_quote(config.revocation_hook) + "\n";
  s += "readonly IMDS_URL=\"${SPOTDNN_IMDS_URL:-http://169.254.169.254}\"\n";
  s += "readonly POLL_INTERVAL_S=\"${SPOTDNN_POLL_INTERVAL_S:-" + detail::seconds_text(config.poll_interval_s) + "}\"\n";
  s += R"(
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
  boot)
    mkdir -p "$SPOTDNN_CHECKPOINT_DIR"
    nohup bash "$0" watch >>"$LOG_DIR/spotdnn-watch.log" 2>&1 &
    start_training
    ;;
  *) echo "usage: $0 [boot|watch]" >&2; exit 2 ;;
esac
)";
  parts.body = std::move(s);
  require_user_data_size(fn, "user data of " + std::string(type) + " (with the longest PS address)",
                         parts.head + std::string(kMaxIpv4AddressLength, '0') + parts.body);
  return parts;
}

/// User data of a worker of `type` with `gpus` GPUs in plan `plan_id`, with the PS at `ps_private_ip`
/// (an IPv4 address). Throws as worker_user_data_parts() does, or when the address is not IPv4.
[[nodiscard]] inline std::string worker_user_data(const AwsConfig& config, std::string_view plan_id, std::string_view type,
                                                  int gpus, std::string_view ps_private_ip) {
  return worker_user_data_parts(config, plan_id, type, gpus).with_ps_address(ps_private_ip);
}

/// User data of the parameter server: checkpoint sync every `checkpoint_sync_interval_s` and on SIGTERM.
/// Throws when the configuration is invalid or the script exceeds the 16 KB user-data limit.
[[nodiscard]] inline std::string parameter_server_user_data(const AwsConfig& config, std::string_view plan_id,
                                                            std::string_view type) {
  constexpr std::string_view fn = "parameter_server_user_data";
  config.validate();
  require_simple_name(fn, "plan_id", plan_id);
  require_instance_type(fn, "type", type);
  std::string s = "#!/bin/bash\n";
  s += "# shellcheck disable=SC2016,SC1003  # single quotes are deliberate: user values must never expand\n";
  s += "# spotdnn parameter-server bootstrap (EC2 user data): checkpoint sync to S3 and training start.\n";
  s += "# bash FILE = start in the background (cloud-init); bash FILE sync = sync loop in the foreground.\n";
  s += "set -euo pipefail\n";
  s += detail::bootstrap_common(config, plan_id, "ps", type, 0);
  s += "readonly SYNC_INTERVAL_S=\"${SPOTDNN_SYNC_INTERVAL_S:-" +
       detail::seconds_text(config.checkpoint_sync_interval_s) + "}\"\n";
  s += R"(
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
  boot)
    mkdir -p "$SPOTDNN_CHECKPOINT_DIR"
    nohup bash "$0" sync >>"$LOG_DIR/spotdnn-sync.log" 2>&1 &
    start_training
    ;;
  *) echo "usage: $0 [boot|sync]" >&2; exit 2 ;;
esac
)";
  require_user_data_size(fn, "user data of the parameter server", s);
  return s;
}

}  // namespace spotdnn::launcher
