#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/serverless_launch_plan.hpp What a serverless launch creates: the content of a
/// serverless plan document (`kind: "spotdnn.serverless_plan"`, FasDL's W Lambda functions of M MB, K of
/// them aggregating), read by launcher/serverless_plan_json.hpp, and the Lambda timeout derived from it.
///
/// Ranks 0 .. K-1 are the aggregators (batch B each), ranks K .. W-1 the other workers (batch A each).
/// Every function gets the same memory and timeout. Lambda ends an invocation after at most 900 s, so a
/// function's timeout is min(900, ceil(T) + 60) s for a plan of T s of training: a run that fits one
/// invocation gets its training time plus 60 s for the image's cold start and the first exchange; a
/// longer one gets Lambda's maximum and is re-invoked (the plan priced ceil(T / 900) invocations per
/// function). A plan whose single iteration takes longer than 900 s cannot run on Lambda and is refused.

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/document_kind.hpp"

namespace spotdnn::launcher {

using io::kServerlessPlanDocumentKind;

/// Longest a Lambda invocation may run (s): the largest `--timeout` Lambda accepts.
inline constexpr int kLambdaMaxTimeoutS = 900;
/// Added to a short plan's training time for the function timeout (s): the cold start of a container
/// image and the first S3 exchange.
inline constexpr int kLambdaTimeoutMarginS = 60;
/// Lambda's memory range (MB, in steps of 1 MB).
inline constexpr int kLambdaMinMemorySizeMb = 128;
inline constexpr int kLambdaMaxMemorySizeMb = 10240;
/// Most functions one serverless run creates (FasDL's global batch of 1024 with a batch of 1).
inline constexpr int kMaxServerlessFunctions = 1024;

/// What to launch, as a serverless plan document says it.
struct ServerlessLaunchPlan {
  std::string profile_name;          ///< the serverless profile the plan was made with (shown, tagged nowhere)
  double epochs = 0;                 ///< epochs the plan trains (may be fractional)
  double deadline_s = 0;             ///< the plan's deadline (s)
  int workers = 0;                   ///< W: Lambda functions, 1 to kMaxServerlessFunctions
  int memory_mb = 0;                 ///< M: memory of every function (MB), 128 to 10240
  int aggregators = 0;               ///< K: functions that aggregate a model chunk each, 1 to W
  int batch = 0;                     ///< B: batch of an aggregator, at least 1
  int non_aggregator_batch = 0;      ///< A: batch of a function that does not aggregate, at least 1
  int iterations = 0;                ///< I: iterations of the whole run, at least 1
  double iteration_time_s = 0;       ///< t: one iteration (s), at most 900
  double training_time_s = 0;        ///< T = I t (s)
  double cost_usd = 0;               ///< what the plan expects the run to cost (shown in the script)

  /// Throws spotdnn::invalid_argument naming the first bad field.
  void validate() const {
    constexpr std::string_view fn = "ServerlessLaunchPlan::validate";
    spotdnn::detail::require_printable_name(fn, "profile_name", profile_name);
    spotdnn::detail::require_positive(fn, "epochs", epochs);
    spotdnn::detail::require_positive(fn, "deadline_s", deadline_s);
    if (workers < 1 || workers > kMaxServerlessFunctions) {
      spotdnn::detail::fail(fn, "workers", workers, "must be 1 to " + std::to_string(kMaxServerlessFunctions));
    }
    if (memory_mb < kLambdaMinMemorySizeMb || memory_mb > kLambdaMaxMemorySizeMb) {
      spotdnn::detail::fail(fn, "memory_mb", memory_mb,
                            "Lambda functions have " + std::to_string(kLambdaMinMemorySizeMb) + " to " +
                                std::to_string(kLambdaMaxMemorySizeMb) + " MB");
    }
    if (aggregators < 1 || aggregators > workers) spotdnn::detail::fail(fn, "aggregators", aggregators, "must be 1 to workers");
    if (batch < 1) spotdnn::detail::fail(fn, "batch", batch, "must be at least 1");
    if (non_aggregator_batch < 1) spotdnn::detail::fail(fn, "non_aggregator_batch", non_aggregator_batch, "must be at least 1");
    if (iterations < 1) spotdnn::detail::fail(fn, "iterations", iterations, "must be at least 1");
    spotdnn::detail::require_positive(fn, "iteration_time_s", iteration_time_s);
    if (iteration_time_s > kLambdaMaxTimeoutS) {
      spotdnn::detail::fail(fn, "iteration_time_s", iteration_time_s,
                            "one iteration takes longer than a Lambda invocation may run (900 s): this plan cannot run on Lambda");
    }
    spotdnn::detail::require_positive(fn, "training_time_s", training_time_s);
    spotdnn::detail::require_non_negative(fn, "cost_usd", cost_usd);
  }

  /// The `--timeout` of every function (s): min(900, ceil(training_time_s) + 60).
  [[nodiscard]] int function_timeout_s() const {
    const double wanted = std::ceil(training_time_s) + kLambdaTimeoutMarginS;
    return wanted >= kLambdaMaxTimeoutS ? kLambdaMaxTimeoutS : int(wanted);
  }

  /// Invocations each function needs for the whole training at Lambda's 900 s limit: ceil(T / 900).
  [[nodiscard]] double invocations_per_function() const { return std::ceil(training_time_s / kLambdaMaxTimeoutS); }

  /// The batch of the function of `rank`: B for an aggregator (rank < K), A otherwise.
  [[nodiscard]] int batch_of(int rank) const { return rank < aggregators ? batch : non_aggregator_batch; }
};

}  // namespace spotdnn::launcher
