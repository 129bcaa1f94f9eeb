#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/serverless_run_scripts.hpp The bash scripts that show and end one serverless run
/// (launcher/serverless_launch_script.hpp): `status --serverless` and `teardown --serverless`.
///
/// A serverless run is the W Lambda functions `spotdnn-RUN_ID-RANK` and the exchange bucket
/// `PREFIX-RUN_ID` (PREFIX: the configuration's serverless.bucket_prefix), each tagged
/// `spotdnn:run=RUN_ID`. Both scripts find the functions by that name (list-functions, then the name
/// checked against spotdnn-RUN_ID-RANK) and the bucket by its name, and count a resource as the run's only
/// when its `spotdnn:run` tag is exactly RUN_ID: a function or bucket of that name with another tag, or
/// none, is reported and left alone. The run id is checked by spotdnn and again by the script.
///   - status: one line per function (rank, role, name, memory, timeout, state, last modified), in rank
///     order, then the bucket (objects and bytes) and a summary line. Nothing of the run:
///     "spotdnn: no functions or bucket for run ID" on stderr, exit 3.
///   - teardown: deletes the run's functions first (so nothing new is written), then empties the bucket
///     (`aws s3 rm --recursive`) and deletes it; prints each thing it deleted and a summary. Nothing to
///     delete: says so and exits 3, so a second teardown is harmless.
/// Both exit 1 (after doing the rest) when a function or the bucket could not be read or deleted.
/// They need only the configuration's region and serverless object (AwsConfig::validate_serverless).

#include <string>
#include <string_view>

#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/script_parts.hpp"
#include "spotdnn/launcher/serverless_launch_script.hpp"
#include "spotdnn/launcher/shell.hpp"

namespace spotdnn::launcher {

namespace detail {

/// The helpers both serverless run scripts share: aws_do, the list of the run's functions in rank order
/// (`list_run_functions` fills `names`), the tags and settings of one function (`function_row`), and the
/// `spotdnn:run` tag of the bucket (`bucket_run`: "absent" when there is no such bucket, "untagged").
inline constexpr std::string_view kServerlessRunFunctions = R"sh(
aws_do() {
  local cmd=("${SPOTDNN_AWS:-aws}" --region "$REGION" --output text)
  if [[ -n "${AWS_ENDPOINT_URL:-}" ]]; then cmd+=(--endpoint-url "$AWS_ENDPOINT_URL"); fi
  "${cmd[@]}" "$@"
}

status=0

# Fills names with the functions spotdnn-RUN_ID-RANK that Lambda lists in REGION, in rank order.
list_run_functions() {
  local out word rank
  local -a words ranked=()
  out=$(aws_do lambda list-functions --query "Functions[?starts_with(FunctionName, '$FUNCTION_PREFIX')].FunctionName")
  read -r -a words <<<"${out//$'\n'/ }"
  for word in "${words[@]}"; do
    rank=${word#"$FUNCTION_PREFIX"}
    [[ $word == "$FUNCTION_PREFIX"* && $rank =~ ^(0|[1-9][0-9]{0,3})$ ]] || continue
    ranked+=("$rank $word")
  done
  names=()
  if ((${#ranked[@]} > 0)); then
    while read -r rank word; do names+=("$word"); done < <(printf '%s\n' "${ranked[@]}" | sort -k1,1n)
  fi
}

# The spotdnn:run tag, memory, timeout, state, last modified and spotdnn:role of function $1 (one text row).
function_row() {
  aws_do lambda get-function --function-name "$1" \
    --query '[Tags."spotdnn:run",Configuration.MemorySize,Configuration.Timeout,Configuration.State,Configuration.LastModified,Tags."spotdnn:role"]'
}

# $1 on one line, without leading blanks (the aws CLI starts its error messages with an empty line).
one_line() {
  local text=${1//$'\n'/ }
  echo "${text#"${text%%[! ]*}"}"
}

# The spotdnn:run tag of BUCKET: "absent" when S3 has no such bucket, "untagged" when it has no tags.
bucket_run() {
  local out
  if ! out=$(aws_do s3api head-bucket --bucket "$BUCKET" 2>&1 >/dev/null); then
    if [[ $out == *"(404)"* || $out == *NoSuchBucket* ]]; then echo absent; return 0; fi
    echo "spotdnn: cannot read the bucket $BUCKET: $(one_line "$out")" >&2
    return 1
  fi
  if ! out=$(aws_do s3api get-bucket-tagging --bucket "$BUCKET" --query 'TagSet[?Key==`spotdnn:run`].Value|[0]' 2>&1); then
    if [[ $out == *NoSuchTagSet* ]]; then echo untagged; return 0; fi
    echo "spotdnn: cannot read the tags of the bucket $BUCKET: $(one_line "$out")" >&2
    return 1
  fi
  echo "$out"
}

# "OBJECTS BYTES" of BUCKET.
bucket_usage() {
  local out
  out=$(aws_do s3api list-objects-v2 --bucket "$BUCKET" --query '[length(Contents || `[]`), sum(Contents[].Size || `[]`)]') || return 1
  printf '%s\n' "$out" | awk '{ n += $1; b += $2 } END { printf "%.0f %.0f\n", n, b }'
}

# Whether the tag value $1 is this run's; otherwise says why resource $2 is left alone.
is_this_run() {
  [[ $1 == "$RUN_ID" ]] && return 0
  local tag=$1
  [[ $tag =~ ^[A-Za-z0-9._:-]{1,64}$ ]] || tag='?'
  echo "spotdnn: $2 is not tagged spotdnn:run=$RUN_ID (spotdnn:run: $tag): not this run's, left alone" >&2
  return 1
}

)sh";

/// What the serverless `script` ("status" or "teardown") of run `run_id` starts with: the header, the
/// usage line, the environment comment, strict mode, REGION, RUN_ID (checked; errors name
/// serverless_SCRIPT_script), BUCKET, FUNCTION_PREFIX and the helpers above.
inline std::string serverless_run_script_prologue(std::string_view script, std::string_view title, std::string_view run_id,
                                                  const AwsConfig& config) {
  const std::string fn = "serverless_" + std::string(script) + "_script";
  config.validate_serverless();
  const std::string id(run_id);
  std::string s = script_header("spotdnn serverless " + std::string(script) + " script: " + std::string(title) + " " + id);
  s += "# The run: the Lambda functions spotdnn-" + id + "-RANK and the bucket " + config.serverless->bucket_prefix + "-" + id +
       " in " + config.region + ",\n#   each counted only when tagged spotdnn:run=" + id + ".\n";
  s += "# Usage: bash SCRIPT. Exit 3 when the run has no function and no bucket; exit 1 when one could not be " +
       std::string(script == "status" ? "read" : "read or deleted") + ".\n";
  s += kEnvironmentComment;
  s += "set -Eeuo pipefail\n";
  s += "if (($# > 0)); then echo \"usage: $0 (no arguments)\" >&2; exit 2; fi\n\n";
  s += "readonly REGION=" + shell_quote(config.region) + "\n";
  s += fixed_run_id(fn, run_id);
  s += "readonly BUCKET=" + shell_quote(config.serverless->bucket_prefix + "-") + "\"$RUN_ID\"\n";
  s += "readonly FUNCTION_PREFIX=" + shell_quote(kServerlessFunctionPrefix) + "\"$RUN_ID-\"\n";
  s += kServerlessRunFunctions;
  return s;
}

}  // namespace detail

/// The bash script listing the Lambda functions and the exchange bucket of serverless run `run_id` on
/// `config`'s region (see the file comment). Throws spotdnn::invalid_argument when the configuration's
/// region or serverless object is invalid or `run_id` is not a run id.
[[nodiscard]] inline std::string serverless_status_script(std::string_view run_id, const AwsConfig& config) {
  std::string s = detail::serverless_run_script_prologue("status", "the functions and bucket of run", run_id, config);
  s += R"sh(list_run_functions
total=0
declare -A states=()
for name in "${names[@]}"; do
  row=$(function_row "$name") || { echo "spotdnn: cannot read the function $name" >&2; status=1; continue; }
  IFS=$'\t' read -r run memory timeout state modified role <<<"$row"
  is_this_run "$run" "the function $name" || continue
  [[ $memory =~ ^[0-9]{1,6}$ ]] || memory='?'
  [[ $timeout =~ ^[0-9]{1,4}$ ]] || timeout='?'
  [[ $state =~ ^(Pending|Active|Inactive|Failed)$ ]] || state='?'
  [[ $modified =~ ^[0-9][0-9A-Za-z:.+-]{0,40}$ ]] || modified='-'
  [[ $role =~ ^(aggregator|worker)$ ]] || role='?'
  if ((total == 0)); then
    printf '%-5s %-10s %-38s %-9s %-9s %-8s %s\n' RANK ROLE FUNCTION MEMORY_MB TIMEOUT_S STATE LAST_MODIFIED
  fi
  printf '%-5s %-10s %-38s %-9s %-9s %-8s %s\n' "${name#"$FUNCTION_PREFIX"}" "$role" "$name" "$memory" "$timeout" "$state" "$modified"
  total=$((total + 1))
  states[$state]=$((${states[$state]:-0} + 1))
done

bucket_found=0
bucket_summary="no bucket $BUCKET"
if owner=$(bucket_run); then
  if [[ $owner != absent ]] && is_this_run "$owner" "the bucket $BUCKET"; then
    bucket_found=1
    if usage=$(bucket_usage); then
      read -r objects bytes <<<"$usage"
      contents="$objects objects, $bytes bytes"
    else
      echo "spotdnn: cannot list the objects of the bucket $BUCKET" >&2
      status=1
      contents='objects unknown'
    fi
    echo "BUCKET $BUCKET: $contents"
    bucket_summary="bucket $BUCKET ($contents)"
  fi
else
  status=1
  bucket_summary="bucket $BUCKET unreadable"
fi

if ((total == 0 && bucket_found == 0)); then
  echo "spotdnn: no functions or bucket for run $RUN_ID" >&2
  exit $((status ? 1 : 3))
fi
summary=''
for state in Pending Active Inactive Failed '?'; do
  if [[ -n "${states[$state]:-}" ]]; then summary+="${summary:+, }${states[$state]} $state"; fi
done
echo "spotdnn run $RUN_ID: $total functions${summary:+ ($summary)}, $bucket_summary"
exit "$status"
)sh";
  return s;
}

/// The bash script deleting the Lambda functions and the exchange bucket of serverless run `run_id` on
/// `config`'s region (see the file comment). Throws as serverless_status_script() does.
[[nodiscard]] inline std::string serverless_teardown_script(std::string_view run_id, const AwsConfig& config) {
  std::string s = detail::serverless_run_script_prologue("teardown", "delete the functions and bucket of run", run_id, config);
  s += R"sh(list_run_functions
deleted=0
for name in "${names[@]}"; do
  row=$(function_row "$name") || { echo "spotdnn: cannot read the function $name: not deleted" >&2; status=1; continue; }
  IFS=$'\t' read -r run _ <<<"$row"
  is_this_run "$run" "the function $name" || continue
  if aws_do lambda delete-function --function-name "$name" >/dev/null; then
    echo "deleted function $name"
    deleted=$((deleted + 1))
  else
    echo "spotdnn: could not delete the function $name" >&2
    status=1
  fi
done

bucket_deleted=0
if owner=$(bucket_run); then
  if [[ $owner != absent ]] && is_this_run "$owner" "the bucket $BUCKET"; then
    usage=$(bucket_usage) || usage='? ?'
    read -r objects bytes <<<"$usage"
    echo "spotdnn: emptying the bucket $BUCKET ($objects objects, $bytes bytes)" >&2
    if aws_do s3 rm "s3://$BUCKET" --recursive --only-show-errors >/dev/null &&
      aws_do s3api delete-bucket --bucket "$BUCKET" >/dev/null; then
      echo "deleted bucket $BUCKET ($objects objects, $bytes bytes)"
      bucket_deleted=1
    else
      echo "spotdnn: could not empty and delete the bucket $BUCKET (versioned, or written to meanwhile?)" >&2
      status=1
    fi
  fi
else
  status=1
fi

if ((deleted == 0 && bucket_deleted == 0)); then
  echo "spotdnn: no functions or bucket of run $RUN_ID to delete; nothing deleted" >&2
  exit $((status ? 1 : 3))
fi
echo "spotdnn run $RUN_ID: deleted $deleted functions and $bucket_deleted bucket"
exit "$status"
)sh";
  return s;
}

}  // namespace spotdnn::launcher
