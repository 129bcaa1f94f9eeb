#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/exhaustive_search.hpp The cheapest serverless configuration by enumerating every
/// (W, M, K) on the grid: the reference the exact search (serverless/exact_search.hpp) must equal. Every
/// planner evaluates configurations with ServerlessModel::estimate, so all follow the work's iteration
/// rounding (ServerlessWork::iteration_rounding: up by default, FasDL's floor on request).
///
/// The question (docs/model.md section 4, "Constraints and ties"): W ∈ 1..⌊Bg/B⌋, K ∈ 1..W, M on the grid
/// of ServerlessPlanOptions; minimise the cost, eq. (S6), over the runnable configurations (A ≥ 1, I ≥ 1,
/// iteration ≤ 900 s, eqs. (S4), (S5)) whose training time T ≤ deadline (inclusive), ties by `preferred()`
/// (cost, then fewest W, least M, fewest K). A configuration whose time or cost is not a finite number
/// (a profile so extreme that the model overflows) is never a candidate.
///
/// No plan: `infeasible`, with the fastest runnable configuration (least T; ties fewest W, least M, fewest
/// K) in `fastest` and its time in the message; when nothing on the grid can run, the message says why
/// (the aggregator batch exceeds the samples to train, or every configuration that trains a full batch
/// takes longer per iteration than Lambda's 900 s invocation limit, naming the quickest such iteration).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/progress.hpp"
#include "spotdnn/serverless/serverless_model.hpp"
#include "spotdnn/serverless/serverless_plan.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn::serverless {

/// What the serverless planners share: input checks, the orders they rank configurations by, and the
/// sentences of their messages. Not API.
namespace search_detail {

/// Checks the options and the prices (each finite and not negative: the exact search's bounds add
/// non-negative cost terms). Throws spotdnn::invalid_argument naming the field.
inline void validate(std::string_view fn, const ServerlessModel& model, const ServerlessPlanOptions& options) {
  options.validate();
  const ServerlessPricing& p = model.work().pricing;
  spotdnn::detail::require_non_negative(fn, "pricing.lambda_usd_per_mb_s", p.lambda_usd_per_mb_s);
  spotdnn::detail::require_non_negative(fn, "pricing.lambda_usd_per_request", p.lambda_usd_per_request);
  spotdnn::detail::require_non_negative(fn, "pricing.s3_usd_per_put", p.s3_usd_per_put);
  spotdnn::detail::require_non_negative(fn, "pricing.s3_usd_per_get", p.s3_usd_per_get);
}

/// The memory sizes actually on the grid: the last one is min + k·step ≤ max.
inline int last_memory_mb(const ServerlessPlanOptions& options) { return options.memory_mb(options.memory_sizes() - 1); }

/// A runnable configuration with a finite time and cost: what the planners may answer.
inline bool candidate(const ServerlessEstimate& e) {
  return e.runnable() && std::isfinite(e.training_time_s) && std::isfinite(e.cost_usd());
}

/// Ties of equal keys: fewest workers, then least memory, then fewest aggregators.
inline bool smaller_configuration(const ServerlessConfiguration& x, const ServerlessConfiguration& y) {
  if (x.workers != y.workers) return x.workers < y.workers;
  if (x.memory_mb != y.memory_mb) return x.memory_mb < y.memory_mb;
  return x.aggregators < y.aggregators;
}

/// The fastest order: least training time T, then smaller_configuration.
inline bool faster(const ServerlessEstimate& x, const ServerlessEstimate& y) {
  if (x.training_time_s != y.training_time_s) return x.training_time_s < y.training_time_s;
  return smaller_configuration(x.configuration, y.configuration);
}

/// The quickest-iteration order: least iteration time t, then smaller_configuration.
inline bool quicker_iteration(const ServerlessEstimate& x, const ServerlessEstimate& y) {
  if (x.iteration_time_s != y.iteration_time_s) return x.iteration_time_s < y.iteration_time_s;
  return smaller_configuration(x.configuration, y.configuration);
}

/// A configuration that trains at least one full batch (A ≥ 1, I ≥ 1) but whose iteration exceeds 900 s:
/// what explains a grid on which nothing can run.
inline bool over_invocation_limit(const ServerlessEstimate& e) {
  return e.problem == ConfigurationProblem::iteration_over_invocation_limit && std::isfinite(e.iteration_time_s);
}

/// "W 9 × 1536 MB with 2 aggregators".
inline std::string configuration_text(const ServerlessConfiguration& c) {
  return "W " + std::to_string(c.workers) + " × " + std::to_string(c.memory_mb) + " MB with " + std::to_string(c.aggregators) +
         (c.aggregators == 1 ? " aggregator" : " aggregators");
}

inline std::string seconds_text(double seconds) { return spotdnn::detail::format_fixed(seconds, 2) + " s"; }
inline std::string deadline_text(double seconds) { return spotdnn::detail::format_readable(seconds) + " s"; }
inline std::string usd_text(double usd) { return "$" + spotdnn::detail::format_fixed(usd, 6); }

inline std::string extrapolated_note(const ServerlessEstimate& e) {
  return e.extrapolated ? " (its S3 transfer times are extrapolated beyond the measured table)" : "";
}

/// "the fastest, W 6 × 10240 MB with 3 aggregators, takes 1389.08 s (its S3 transfer times ...)".
inline std::string fastest_text(const ServerlessEstimate& fastest) {
  return "the fastest, " + configuration_text(fastest.configuration) + ", takes " + seconds_text(fastest.training_time_s) +
         extrapolated_note(fastest);
}

/// Why nothing on the grid can run. `quickest` is the quickest iteration among the configurations that
/// train a full batch (over_invocation_limit), when there is one.
inline std::string nothing_runnable_text(const ServerlessModel& model, const std::optional<ServerlessEstimate>& quickest) {
  const double samples = model.samples_to_train();
  if (samples < double(model.batch())) {
    return "no configuration can run: one aggregator's batch of " + std::to_string(model.batch()) + " samples is more than the " +
           spotdnn::detail::format_readable(samples) + " samples to train (samples_per_epoch × epochs)";
  }
  if (quickest) {
    return "no configuration can run: every configuration on the grid that trains a full batch takes longer per iteration than "
           "Lambda's 900 s invocation limit; the quickest iteration, " +
           configuration_text(quickest->configuration) + ", takes " + seconds_text(quickest->iteration_time_s);
  }
  return "no configuration on the grid can run: the model gives no finite time for any of them (check the profile)";
}

/// The message and status of an answer, from what a complete search found.
inline void conclude(ServerlessPlanResult& r, const ServerlessModel& model, const std::optional<ServerlessEstimate>& best,
                     const std::optional<ServerlessEstimate>& fastest, const std::optional<ServerlessEstimate>& quickest) {
  if (best) {
    r.status = Status::optimal;
    r.plan = *best;
    r.message = "the cheapest configuration finishing by the deadline of " + deadline_text(r.deadline_s) + " is " +
                configuration_text(best->configuration) + ": " + seconds_text(best->training_time_s) + " for " +
                usd_text(best->cost_usd()) + extrapolated_note(*best);
    return;
  }
  r.status = Status::infeasible;
  r.fastest = fastest;
  if (fastest) {
    r.message = "no configuration finishes by the deadline of " + deadline_text(r.deadline_s) + ": " + fastest_text(*fastest);
  } else {
    r.message = nothing_runnable_text(model, quickest);
  }
}

}  // namespace search_detail

namespace search_detail {

/// What an enumeration of the grid finds.
struct Enumeration {
  std::optional<ServerlessEstimate> best;      ///< the cheapest candidate meeting the deadline (preferred())
  std::optional<ServerlessEstimate> fastest;   ///< the fastest candidate (faster())
  std::optional<ServerlessEstimate> quickest;  ///< the quickest over_invocation_limit configuration (quicker_iteration())
  ServerlessSearchStats stats;
};

/// Every (W, M, K) of the grid, evaluated; progress under the name `task` (unit "worker counts").
inline Enumeration enumerate_all(const ServerlessModel& model, const ServerlessPlanOptions& options,
                                 const spotdnn::ProgressCallback& progress, std::string_view task) {
  Enumeration out;
  const int max_w = model.max_workers();
  const int sizes = options.memory_sizes();
  spotdnn::detail::report(progress, task, "worker counts", 0, max_w);
  std::vector<ObjectSizeTransfer> chunks;  // the transfer of each chunk S/K, K = 1..max_w, made once
  chunks.reserve(std::size_t(max_w));
  for (int k = 1; k <= max_w; ++k) chunks.push_back(model.transfer().for_object_size(model.chunk_mb(k)));
  for (int w = 1; w <= max_w; ++w) {
    for (int k = 1; k <= w; ++k) {
      ++out.stats.worker_aggregator_pairs;
      for (int i = 0; i < sizes; ++i) {
        const ServerlessEstimate e = model.estimate({w, options.memory_mb(i), k}, chunks[std::size_t(k - 1)]);
        ++out.stats.configurations_evaluated;
        if (candidate(e)) {
          if (!out.fastest || faster(e, *out.fastest)) out.fastest = e;
          if (e.training_time_s <= options.deadline_s && (!out.best || preferred(e, *out.best))) out.best = e;
        } else if (over_invocation_limit(e) && (!out.quickest || quicker_iteration(e, *out.quickest))) {
          out.quickest = e;
        }
      }
    }
    spotdnn::detail::report(progress, task, "worker counts", w, max_w);
  }
  return out;
}

/// The enumeration behind plan_serverless_exhaustive, answered under `algorithm` (the exact search falls
/// back to it for a profile its bounds do not cover).
inline ServerlessPlanResult enumerate(const ServerlessModel& model, const ServerlessPlanOptions& options,
                                      const spotdnn::ProgressCallback& progress, std::string_view task,
                                      ServerlessAlgorithm algorithm) {
  const double workers = model.max_workers();
  const double configurations = workers * (workers + 1) / 2 * options.memory_sizes();
  if (configurations > kMaxServerlessConfigurations) {
    spotdnn::detail::fail(task, "configurations", configurations,
                          "an enumeration of more than 10⁹ (workers, memory, aggregators) is refused: narrow the memory grid "
                          "(--memory-step-mb, --min-memory-mb, --max-memory-mb) or the workers (--max-global-batch, --batch)" +
                              std::string(algorithm == ServerlessAlgorithm::exhaustive ? ", or use the exact search" : ""));
  }
  const Enumeration found = enumerate_all(model, options, progress, task);
  ServerlessPlanResult r;
  r.algorithm = algorithm;
  r.deadline_s = options.deadline_s;
  r.stats = found.stats;
  conclude(r, model, found.best, found.fastest, found.fastest ? std::nullopt : found.quickest);
  return r;
}

}  // namespace search_detail

/// Every (W, M, K) of the grid, evaluated: the optimum (status `optimal`) or `infeasible` with the fastest
/// configuration (see the file comment). ⌊Bg/B⌋·(⌊Bg/B⌋ + 1)/2 × memory_sizes() estimates: about 84,000
/// on the default grid with W ≤ 32, 3.3·10⁸ on the 1 MB lattice with W ≤ 256 (use the exact search).
/// Progress: task "serverless exhaustive search", unit "worker counts". Throws spotdnn::invalid_argument
/// for bad options or negative prices.
/// @note docs/model.md eqs. (S1)–(S6) through ServerlessModel::estimate.
[[nodiscard]] inline ServerlessPlanResult plan_serverless_exhaustive(const ServerlessModel& model, const ServerlessPlanOptions& options,
                                                                     const spotdnn::ProgressCallback& progress = {}) {
  search_detail::validate("plan_serverless_exhaustive", model, options);
  return search_detail::enumerate(model, options, progress, "serverless exhaustive search", ServerlessAlgorithm::exhaustive);
}

}  // namespace spotdnn::serverless
