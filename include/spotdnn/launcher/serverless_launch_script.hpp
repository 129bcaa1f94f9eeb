#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/serverless_launch_script.hpp The bash script that starts a serverless run (FasDL on AWS
/// Lambda) from a serverless plan document.
///
/// Each time the script runs it makes a new run id (UTC time + 6 random hex digits, run_id.hpp), then:
///   1. creates the run's exchange bucket PREFIX-RUN_ID (the configuration's bucket_prefix, default
///      "spotdnn"; one bucket per run, so teardown deletes it whole and two runs never share objects),
///      tagged like the functions;
///   2. creates W Lambda functions spotdnn-RUN_ID-RANK (RANK 0 .. W-1; 0 .. K-1 aggregate) from the
///      configured ECR image (`--package-type Image`), with the plan's memory, the timeout of
///      ServerlessLaunchPlan::function_timeout_s() (min(900, ceil(T) + 60) s), the execution role, the
///      environment below and the tags spotdnn:run=RUN_ID, spotdnn:role=aggregator|worker,
///      spotdnn:rank-base=RANK and the user's tags;
///   3. waits until every function is Active, and invokes each once, asynchronously (`--invocation-type
///      Event`, an empty event), unless SPOTDNN_INVOKE=0;
///   4. prints `spotdnn run: RUN_ID` as its last line on stdout.
/// If a step fails it deletes the functions it created and the bucket (if still empty), and exits non-zero.
///
/// The environment of every function: SPOTDNN_RUN_ID, SPOTDNN_RANK, SPOTDNN_ROLE (aggregator|worker),
/// SPOTDNN_WORKERS (W), SPOTDNN_AGGREGATORS (K), SPOTDNN_BATCH (this function's: B or A),
/// SPOTDNN_AGGREGATOR_BATCH (B), SPOTDNN_WORKER_BATCH (A), SPOTDNN_ITERATIONS (I), SPOTDNN_EPOCHS,
/// SPOTDNN_MEMORY_MB, SPOTDNN_TIMEOUT_S, SPOTDNN_BUCKET, SPOTDNN_FUNCTION_PREFIX (function RANK is
/// PREFIX + RANK), then the configuration's own variables. The image's handler trains from those: it
/// resumes from what the run's bucket holds, and before its timeout it saves its state there and invokes
/// its own function again (its role needs lambda:InvokeFunction on spotdnn-*, and s3:GetObject,
/// s3:PutObject, s3:DeleteObject and s3:ListBucket on the bucket).
///
/// Every user value is validated and appears only inside single quotes; every JSON argument is an
/// nlohmann document dumped once, with the run id and the rank as holes (bash_template.hpp).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/bash_template.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/script_parts.hpp"
#include "spotdnn/launcher/serverless_launch_plan.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// The name of a run's Lambda functions before the rank: "spotdnn-RUN_ID-".
inline constexpr std::string_view kServerlessFunctionPrefix = "spotdnn-";

namespace detail {

/// What the function of a rank is: "aggregator" (ranks below K) or "worker".
inline std::string_view serverless_role(bool aggregator) { return aggregator ? "aggregator" : "worker"; }

/// The run's exchange bucket for run id `run_id`: PREFIX-RUN_ID.
inline std::string exchange_bucket(const ServerlessConfig& serverless, std::string_view run_id) {
  return serverless.bucket_prefix + "-" + std::string(run_id);
}

/// The tags of the run's resources with `values` as run id and rank: run, role, rank base, the user's.
inline std::vector<std::pair<std::string, std::string>> serverless_tags(const AwsConfig& config, std::string_view role,
                                                                        const SlotValues& values) {
  std::vector<std::pair<std::string, std::string>> tags;
  tags.emplace_back(kRunTag, values[static_cast<std::size_t>(Slot::run_id)]);
  tags.emplace_back(kRoleTag, std::string(role));
  if (role != "bucket") tags.emplace_back(kRankBaseTag, values[static_cast<std::size_t>(Slot::rank_base)]);
  for (const auto& entry : config.tags) tags.emplace_back(entry.first, entry.second);
  return tags;
}

/// Lambda's `--tags` JSON ({"KEY": "VALUE", ...}) of the functions of `role`, with run id and rank as holes.
inline BashTemplate function_tags_template(const AwsConfig& config, std::string_view role) {
  return make_template([&](const SlotValues& values) {
    nlohmann::ordered_json tags = nlohmann::ordered_json::object();
    for (const auto& [key, value] : serverless_tags(config, role, values)) tags[key] = value;
    return json_text(tags);
  });
}

/// S3's `--tagging` JSON ({"TagSet": [...]}) of the exchange bucket, with the run id as a hole.
inline BashTemplate bucket_tagging_template(const AwsConfig& config) {
  return make_template([&](const SlotValues& values) {
    nlohmann::ordered_json tagging;
    tagging["TagSet"] = tags_json(serverless_tags(config, "bucket", values));
    return json_text(tagging);
  });
}

/// Lambda's `--environment` JSON ({"Variables": {...}}) of the functions of `role`, with the run id and
/// the rank as holes.
inline BashTemplate function_environment_template(const ServerlessLaunchPlan& plan, const AwsConfig& config, bool aggregator) {
  return make_template([&](const SlotValues& values) {
    const std::string& run_id = values[static_cast<std::size_t>(Slot::run_id)];
    nlohmann::ordered_json variables = nlohmann::ordered_json::object();
    variables["SPOTDNN_RUN_ID"] = run_id;
    variables["SPOTDNN_RANK"] = values[static_cast<std::size_t>(Slot::rank_base)];
    variables["SPOTDNN_ROLE"] = std::string(serverless_role(aggregator));
    variables["SPOTDNN_WORKERS"] = std::to_string(plan.workers);
    variables["SPOTDNN_AGGREGATORS"] = std::to_string(plan.aggregators);
    variables["SPOTDNN_BATCH"] = std::to_string(aggregator ? plan.batch : plan.non_aggregator_batch);
    variables["SPOTDNN_AGGREGATOR_BATCH"] = std::to_string(plan.batch);
    variables["SPOTDNN_WORKER_BATCH"] = std::to_string(plan.non_aggregator_batch);
    variables["SPOTDNN_ITERATIONS"] = std::to_string(plan.iterations);
    variables["SPOTDNN_EPOCHS"] = spotdnn::detail::format_number(plan.epochs);
    variables["SPOTDNN_MEMORY_MB"] = std::to_string(plan.memory_mb);
    variables["SPOTDNN_TIMEOUT_S"] = std::to_string(plan.function_timeout_s());
    variables["SPOTDNN_BUCKET"] = exchange_bucket(*config.serverless, run_id);
    variables["SPOTDNN_FUNCTION_PREFIX"] = std::string(kServerlessFunctionPrefix) + run_id + "-";
    for (const auto& [name, value] : config.serverless->environment) variables[name] = value;
    nlohmann::ordered_json environment;
    environment["Variables"] = std::move(variables);
    return json_text(environment);
  });
}

/// The loop creating the functions of ranks `from` .. `to` - 1 (all aggregators or all workers).
inline std::string create_functions(const ServerlessLaunchPlan& plan, const AwsConfig& config, bool aggregator, int from, int to) {
  const std::string c = " \\\n      ";
  std::string s = "  for ((rank_base = " + std::to_string(from) + "; rank_base < " + std::to_string(to) + "; rank_base++)); do\n";
  s += "    name=\"$FUNCTION_PREFIX$rank_base\"\n";
  s += "    created_functions+=(\"$name\")\n";
  s += "    aws_do lambda create-function --function-name \"$name\"";
  s += c + "--package-type Image --code \"$CODE\" --role \"$ROLE_ARN\" --architectures \"$ARCHITECTURE\"";
  s += c + "--memory-size " + std::to_string(plan.memory_mb) + " --timeout " + std::to_string(plan.function_timeout_s());
  s += c + "--description \"spotdnn run $RUN_ID: rank $rank_base of " + std::to_string(plan.workers) + " (" +
       std::string(serverless_role(aggregator)) + ")\"";
  s += c + "--environment " + function_environment_template(plan, config, aggregator).bash_word();
  s += c + "--tags " + function_tags_template(config, serverless_role(aggregator)).bash_word();
  s += " >/dev/null\n";
  s += "  done\n";
  return s;
}

/// The bucket, function and clean-up helpers of the script.
inline constexpr std::string_view kServerlessFunctions = R"sh(
aws_do() {
  local cmd=("${SPOTDNN_AWS:-aws}" --region "$REGION" --output text)
  if [[ -n "${AWS_ENDPOINT_URL:-}" ]]; then cmd+=(--endpoint-url "$AWS_ENDPOINT_URL"); fi
  "${cmd[@]}" "$@"
}

created_functions=()
bucket_created=0

clean_up() {
  local name status=0
  for name in "${created_functions[@]}"; do
    if aws_do lambda get-function --function-name "$name" >/dev/null 2>&1; then
      aws_do lambda delete-function --function-name "$name" >/dev/null || status=1
    fi
  done
  if ((bucket_created)); then
    aws_do s3api delete-bucket --bucket "$BUCKET" >/dev/null ||
      { echo "spotdnn: the bucket $BUCKET is left (not empty?)" >&2; status=1; }
  fi
  return "$status"
}

on_failure() {
  local status=$?
  # A failure inside $(...) also trips this trap in that subshell: leave the clean-up to the main shell.
  if ((BASH_SUBSHELL > 0)); then exit "$status"; fi
  trap - ERR
  echo "spotdnn: run $RUN_ID: $ACTION failed (exit $status); deleting the ${#created_functions[@]} functions and the bucket it created" >&2
  clean_up || echo "spotdnn: the clean-up failed too: check the functions and buckets tagged spotdnn:run=$RUN_ID" >&2
  exit "$status"
}
)sh";

}  // namespace detail

/// The bash script that starts a new serverless run of `plan` on `config` (see the file comment).
/// Throws spotdnn::invalid_argument naming the field when the plan or the configuration is invalid
/// (AwsConfig::validate_serverless: region, the serverless object and tags; the spot fields are not used).
[[nodiscard]] inline std::string serverless_launch_script(const ServerlessLaunchPlan& plan, const AwsConfig& config) {
  plan.validate();
  config.validate_serverless();
  const ServerlessConfig& serverless = *config.serverless;
  const int timeout_s = plan.function_timeout_s();
  const std::string w = std::to_string(plan.workers);
  const std::string k = std::to_string(plan.aggregators);

  std::string s = detail::script_header("spotdnn serverless launch script: " + plan.profile_name + ", " +
                                        spotdnn::detail::format_number(plan.epochs) + " epochs within " +
                                        spotdnn::detail::format_number(plan.deadline_s) + " s on AWS Lambda");
  s += "# Each run of this script starts a new run with its own id, printed last as \"spotdnn run: ID\".\n";
  s += "# Plan: " + w + " functions of " + std::to_string(plan.memory_mb) + " MB; ranks 0.." + std::to_string(plan.aggregators - 1) +
       " aggregate (batch " + std::to_string(plan.batch) + ")" +
       (plan.aggregators < plan.workers ? ", ranks " + k + ".." + std::to_string(plan.workers - 1) + " do not (batch " +
                                              std::to_string(plan.non_aggregator_batch) + ")"
                                        : std::string()) +
       ";\n#   " + std::to_string(plan.iterations) + " iterations of " + spotdnn::detail::format_number(plan.iteration_time_s) +
       " s = " + spotdnn::detail::format_number(plan.training_time_s) + " s of training, expected cost $" +
       spotdnn::detail::format_number(plan.cost_usd) + ".\n";
  s += "# Timeout " + std::to_string(timeout_s) + " s = min(900, ceil(training time) + " + std::to_string(kLambdaTimeoutMarginS) +
       " s for the cold start). Lambda stops an invocation\n"
       "#   after 900 s, so a longer run is re-invoked (" + spotdnn::detail::format_number(plan.invocations_per_function()) +
       " invocations per function, as priced): the image's\n"
       "#   handler saves its state to the bucket before its timeout and invokes its own function again.\n";
  s += "# Functions spotdnn-RUN_ID-RANK from the image " + serverless.image_uri + " (" + serverless.architecture + ");\n";
  s += "#   exchange bucket " + serverless.bucket_prefix + "-RUN_ID, created here; everything tagged spotdnn:run=RUN_ID.\n";
  s += "# Region: " + config.region + ".\n";
  s += "# Usage: bash SCRIPT. SPOTDNN_INVOKE=0: create the bucket and the functions, invoke none.\n";
  s += detail::kEnvironmentComment;
  s += "set -Eeuo pipefail\n";
  s += "if (($# > 0)); then echo \"usage: $0 (no arguments)\" >&2; exit 2; fi\n\n";
  s += "readonly REGION=" + shell_quote(config.region) + "\n";
  nlohmann::ordered_json code;
  code["ImageUri"] = serverless.image_uri;
  s += "readonly CODE=" + shell_quote(json_text(code)) + "\n";
  s += "readonly ROLE_ARN=" + shell_quote(serverless.role_arn) + "\n";
  s += "readonly ARCHITECTURE=" + shell_quote(serverless.architecture) + "\n";
  s += "readonly ACTION=launch\n";
  s += "RUN_ID=\"$(date -u +%Y%m%d-%H%M%S)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \\n')\"\n";
  s += "[[ $RUN_ID =~ " + std::string(kRunIdRegex) + " ]] || { echo \"spotdnn: could not make a run id: $RUN_ID\" >&2; exit 1; }\n";
  s += "readonly RUN_ID\n";
  s += "readonly BUCKET=" + shell_quote(serverless.bucket_prefix + "-") + "\"$RUN_ID\"\n";
  s += "readonly FUNCTION_PREFIX=" + shell_quote(kServerlessFunctionPrefix) + "\"$RUN_ID-\"\n";
  s += detail::kServerlessFunctions;
  s += "\nlaunch() {\n";
  s += "  trap on_failure ERR\n";
  s += "  local name rank_base\n";
  s += "  echo \"spotdnn: run $RUN_ID in $REGION: creating the exchange bucket $BUCKET\" >&2\n";
  if (config.region == "us-east-1") {
    s += "  aws_do s3api create-bucket --bucket \"$BUCKET\" >/dev/null\n";
  } else {
    nlohmann::ordered_json location;
    location["LocationConstraint"] = config.region;
    s += "  aws_do s3api create-bucket --bucket \"$BUCKET\" --create-bucket-configuration " + shell_quote(json_text(location)) +
         " >/dev/null\n";
  }
  s += "  bucket_created=1\n";
  s += "  aws_do s3api put-bucket-tagging --bucket \"$BUCKET\" --tagging " + detail::bucket_tagging_template(config).bash_word() + "\n";
  s += "  echo \"spotdnn: creating " + w + " functions of " + std::to_string(plan.memory_mb) + " MB (" + k +
       " aggregating), timeout " + std::to_string(timeout_s) + " s\" >&2\n";
  s += detail::create_functions(plan, config, true, 0, plan.aggregators);
  if (plan.aggregators < plan.workers) s += detail::create_functions(plan, config, false, plan.aggregators, plan.workers);
  s += R"sh(  echo "spotdnn: waiting until the functions are active" >&2
  for name in "${created_functions[@]}"; do
    aws_do lambda wait function-active-v2 --function-name "$name"
  done
  if [[ ${SPOTDNN_INVOKE:-1} == 0 ]]; then
    echo "spotdnn: SPOTDNN_INVOKE=0: nothing invoked; invoke each function once (--invocation-type Event) to start" >&2
  else
    echo "spotdnn: invoking the functions" >&2
    for name in "${created_functions[@]}"; do
      aws_do lambda invoke --function-name "$name" --invocation-type Event /dev/null >/dev/null
    done
  fi
  trap - ERR
  echo "spotdnn: run $RUN_ID: )sh" + w + R"sh( functions, exchange bucket $BUCKET" >&2
  echo "spotdnn run: $RUN_ID"
}

launch
)sh";
  return s;
}

}  // namespace spotdnn::launcher
