#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/fasdl_search.hpp FasDL's greedy configuration search, run on spotdnn's model: the
/// baseline the exact search (serverless/exact_search.hpp) is measured against.
///
/// The rules follow `Heuristic()` in FasDL's Optimizer/optimizer.py (github.com/cxlchris/FasDL; the
/// search of FasDL, IEEE TC 2025), written afresh:
///   1. For W = 1, 2, ..., ⌊Bg/B⌋ in turn, with K = W: skip W when its time at the largest memory of the
///      grid misses the deadline (T > deadline; FasDL assumes more memory is always faster). Otherwise
///      scan M upwards from the smallest memory and take the *first* M whose cost is below the cheapest
///      taken so far and whose time is strictly below the deadline (T < deadline, FasDL's comparison),
///      then go on to the next W. The cheapest so far carries over from one W to the next.
///   2. With the (W, M) last taken, lower K from W one at a time while the time strictly drops; stop at
///      the first K − 1 that is not faster (or at K = 1).
///   3. That configuration, its A recomputed for its K as everywhere else (docs/model.md eq. (S5)), is the
///      answer with its own figures: status `feasible` when T ≤ deadline (optimality not claimed).
/// Where this differs from FasDL's script:
///   - the transfer times are spotdnn's bilinear table (docs/model.md eq. (S3)); FasDL takes the nearest
///     cell in unscaled (M, x) space. The memory grid and pricing are the options' and the model's (FasDL
///     fixes 64 MB steps, an upper memory of 3008 MB and its own per-MB-second price).
///   - the iteration count is the model's, I = ⌈D·E/P⌉ by default, so that a plan trains the epochs asked;
///     FasDL's script rounds it down (ServerlessWork::iteration_rounding = IterationRounding::fasdl_floor
///     reproduces that, for this search and every other).
///   - a configuration that cannot run (A < 1, I = 0, an iteration over Lambda's 900 s, or a time or cost
///     that is not finite) counts as never meeting the deadline and as not faster when lowering K; FasDL
///     has no such checks (its A ≤ 0 would even divide by zero).
///   - when step 1 takes no (W, M) at all, the answer is `infeasible` ("FasDL's search found no plan");
///     FasDL's script would go on with W = ⌊Bg/B⌋, M = its upper memory and lower K, and could call that
///     a success.
/// The search is greedy: the first affordable M of each W, never the cheapest, and K chosen for speed,
/// not cost. It is not monotone in the deadline and is often much dearer than the optimum (the README's
/// gap table; tests/serverless_search_test.cpp). An infeasible answer names the true fastest
/// configuration (by the exact search) in `fastest` and in its message.

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "spotdnn/progress.hpp"
#include "spotdnn/serverless/exact_search.hpp"
#include "spotdnn/serverless/exhaustive_search.hpp"
#include "spotdnn/serverless/serverless_model.hpp"
#include "spotdnn/serverless/serverless_plan.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn::serverless {

/// FasDL's greedy search (see the file comment): status `feasible` with the configuration it picks, or
/// `infeasible` when it picks none. Progress: task "serverless FasDL search", unit "worker counts".
/// Throws spotdnn::invalid_argument for bad options or negative prices.
/// @note docs/model.md eqs. (S1)–(S6) through ServerlessModel::estimate; search rules of FasDL's optimizer.
[[nodiscard]] inline ServerlessPlanResult plan_serverless_fasdl(const ServerlessModel& model, const ServerlessPlanOptions& options,
                                                                const spotdnn::ProgressCallback& progress = {}) {
  constexpr std::string_view task = "serverless FasDL search";
  search_detail::validate("plan_serverless_fasdl", model, options);
  ServerlessPlanResult r;
  r.algorithm = ServerlessAlgorithm::fasdl;
  r.deadline_s = options.deadline_s;
  const int max_w = model.max_workers();
  const int sizes = options.memory_sizes();
  const int top_mb = search_detail::last_memory_mb(options);
  const auto time_of = [&](const ServerlessEstimate& e) {
    return search_detail::candidate(e) ? e.training_time_s : std::numeric_limits<double>::infinity();
  };
  const auto estimate = [&](int w, int memory_mb, int k, const ObjectSizeTransfer& chunk) {
    ++r.stats.configurations_evaluated;
    return model.estimate({w, memory_mb, k}, chunk);
  };
  spotdnn::detail::report(progress, task, "worker counts", 0, max_w);
  // 1. W with K = W: the first M of each W cheaper than the cheapest so far and faster than the deadline.
  std::optional<ServerlessEstimate> taken;
  double cheapest_usd = std::numeric_limits<double>::infinity();
  for (int w = 1; w <= max_w; ++w) {
    const ObjectSizeTransfer chunk = model.transfer().for_object_size(model.chunk_mb(w));  // K = W
    if (time_of(estimate(w, top_mb, w, chunk)) > options.deadline_s) continue;
    ++r.stats.worker_aggregator_pairs;
    for (int i = 0; i < sizes; ++i) {
      const ServerlessEstimate e = estimate(w, options.memory_mb(i), w, chunk);
      if (search_detail::candidate(e) && e.cost_usd() < cheapest_usd && e.training_time_s < options.deadline_s) {
        taken = e;
        cheapest_usd = e.cost_usd();
        break;
      }
    }
    if (w % 64 == 0) spotdnn::detail::report(progress, task, "worker counts", w, max_w);
  }
  spotdnn::detail::report(progress, task, "worker counts", max_w, max_w);
  if (!taken) {
    r.status = Status::infeasible;
    r.fastest = fastest_serverless_configuration(model, options);
    r.message = "FasDL's search found no plan for the deadline of " + search_detail::deadline_text(options.deadline_s) +
                " (no worker count with K = W meets it at any memory of the grid)";
    if (!r.fastest) {
      r.message += "; " + plan_serverless_exact(model, options).message;
    } else if (r.fastest->training_time_s > options.deadline_s) {
      r.message += ": " + search_detail::fastest_text(*r.fastest);
    } else {
      const ServerlessPlanResult exact = plan_serverless_exact(model, options);
      r.message += ", though " + search_detail::configuration_text(exact.plan.configuration) + " meets it for " +
                   search_detail::usd_text(exact.plan.cost_usd()) + " (the exact search); " + search_detail::fastest_text(*r.fastest);
    }
    return r;
  }
  // 2. Lower K while the time strictly drops.
  ServerlessEstimate current = *taken;
  const int w = current.configuration.workers, memory_mb = current.configuration.memory_mb;
  for (int k = w - 1; k >= 1; --k) {
    const ServerlessEstimate next = estimate(w, memory_mb, k, model.transfer().for_object_size(model.chunk_mb(k)));
    if (!(time_of(next) < time_of(current))) break;
    current = next;
  }
  // 3. The configuration's own figures.
  r.plan = current;
  if (search_detail::candidate(current) && current.training_time_s <= options.deadline_s) {
    r.status = Status::feasible;
    r.message = "FasDL's greedy search picks " + search_detail::configuration_text(current.configuration) + ": " +
                search_detail::seconds_text(current.training_time_s) + " for " + search_detail::usd_text(current.cost_usd()) +
                ", within the deadline of " + search_detail::deadline_text(options.deadline_s) + " (optimality not claimed)" +
                search_detail::extrapolated_note(current);
  } else {
    r.status = Status::infeasible;  // not reached: lowering K only shortens the time taken in step 1
    r.message = "FasDL's search found no plan for the deadline of " + search_detail::deadline_text(options.deadline_s);
  }
  return r;
}

}  // namespace spotdnn::serverless
