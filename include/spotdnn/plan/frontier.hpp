#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/frontier.hpp The cost–deadline frontier: for one target loss, the Pareto set of
/// (deadline, cost) plans over a range of deadlines, each step the exact optimum for its deadlines.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "spotdnn/cluster.hpp"
#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/plan/exact.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn {

/// Options of a frontier: the deadline range and the planner options (no budget mode).
struct FrontierOptions {
  double min_deadline_s = 600;
  double max_deadline_s = 7200;
  int max_steps = 1000;  ///< stop after this many plans (the message says so)
  PlanOptions plan;
};

/// One step of the staircase: `plan` is the cheapest plan for every deadline in
/// [from_deadline_s, to_deadline_s] (its training time is from_deadline_s unless the range was clipped).
struct FrontierStep {
  std::vector<int> counts;  ///< per PerformanceModel::worker_types()
  Prediction plan;          ///< cluster and every predicted figure
  double from_deadline_s = 0;
  double to_deadline_s = 0;
};

/// The Pareto set: steps by increasing deadline, so costs fall from step to step.
struct Frontier {
  /// optimal (every step is exact), infeasible (no plan at max_deadline_s), target_met_at_start (the
  /// plan at max_deadline_s says so: some cluster meets the target at iteration 0; no steps), or, when
  /// the search for a step stopped at PlanOptions::max_search_steps, feasible (the steps before it, each
  /// exact; the message says below which time nothing is known) or undecided (no step).
  Status status = Status::invalid_input;
  std::string message;
  double target_loss = 0;
  double min_deadline_s = 0;
  double max_deadline_s = 0;
  std::vector<FrontierStep> steps;
  PlanResult at_max_deadline;  ///< the plan (or the infeasibility) at max_deadline_s

  /// The step holding the optimum at `deadline_s`, or nullptr when none is feasible there.
  [[nodiscard]] const FrontierStep* at(double deadline_s) const {
    for (const FrontierStep& s : steps) {
      if (deadline_s >= s.plan.training_time_s && deadline_s <= s.to_deadline_s) return &s;
    }
    return nullptr;
  }
};

/// The exact cost–deadline staircase for `target_loss` on [min_deadline_s, max_deadline_s]: plan at the
/// largest deadline; the next step is the optimum at the largest deadline strictly below that plan's time
/// (std::nextafter), and so on until a plan is at or below min_deadline_s or nothing is feasible. Between
/// two steps' times the earlier plan stays optimal (a deadline only removes plans), so the steps are every
/// Pareto-optimal (time, cost) point in the range. Throws spotdnn::invalid_argument for bad input.
[[nodiscard]] inline Frontier cost_deadline_frontier(const PerformanceModel& model, double target_loss,
                                                     const FrontierOptions& options = {}) {
  constexpr std::string_view fn = "cost_deadline_frontier";
  detail::require_positive(fn, "options.min_deadline_s", options.min_deadline_s);
  detail::require_positive(fn, "options.max_deadline_s", options.max_deadline_s);
  if (!(options.max_deadline_s > options.min_deadline_s)) {
    detail::fail(fn, "options.max_deadline_s", options.max_deadline_s,
                 "must be greater than options.min_deadline_s (" + detail::format_number(options.min_deadline_s) + ")");
  }
  if (options.max_steps < 1) detail::fail(fn, "options.max_steps", options.max_steps, "must be at least 1");
  if (options.plan.budget_usd) detail::fail(fn, "options.plan.budget_usd", *options.plan.budget_usd, "a frontier minimizes cost: no budget mode");

  Frontier f;
  f.target_loss = target_loss;
  f.min_deadline_s = options.min_deadline_s;
  f.max_deadline_s = options.max_deadline_s;
  double deadline = options.max_deadline_s;
  bool truncated = false;
  std::optional<PlanResult> stopped;  // a search that stopped at its step limit: the frontier ends unproven there
  while (true) {
    PlanResult r = plan_exact(model, {target_loss, deadline}, options.plan);
    if (f.steps.empty()) f.at_max_deadline = r;
    if (r.stats.stopped) {
      stopped = std::move(r);
      break;
    }
    if (r.status != Status::optimal) break;
    FrontierStep step;
    step.counts = r.counts;
    step.plan = r.prediction;
    step.to_deadline_s = deadline;
    step.from_deadline_s = std::max(r.prediction.training_time_s, options.min_deadline_s);
    f.steps.push_back(std::move(step));
    if (r.prediction.training_time_s <= options.min_deadline_s) break;
    if (static_cast<int>(f.steps.size()) >= options.max_steps) {
      truncated = true;
      break;
    }
    deadline = std::nextafter(r.prediction.training_time_s, 0.0);
  }
  std::reverse(f.steps.begin(), f.steps.end());
  const std::string range = detail::format_number(options.min_deadline_s) + "–" + detail::format_number(options.max_deadline_s) + " s";
  if (f.at_max_deadline.status == Status::target_met_at_start) {  // nothing to train at any deadline
    f.status = Status::target_met_at_start;
    f.message = f.at_max_deadline.message;
    return f;
  }
  if (stopped && f.steps.empty()) {
    f.status = Status::undecided;
    f.message = "no proven plan in the deadline range " + range + ": at " + detail::format_number(deadline) + " s, " + stopped->message;
    return f;
  }
  if (f.steps.empty()) {
    f.status = Status::infeasible;
    f.message = "no plan in the deadline range " + range + ": " + f.at_max_deadline.message;
    return f;
  }
  f.status = Status::optimal;
  f.message = std::to_string(f.steps.size()) + " Pareto-optimal plans for loss " + detail::format_number(target_loss) +
              " over deadlines " + range + ", from $" + detail::format_fixed(f.steps.front().plan.cost_usd, 2) + " at " +
              detail::format_fixed(f.steps.front().plan.training_time_s, 1) + " s to $" + detail::format_fixed(f.steps.back().plan.cost_usd, 2) +
              " at " + detail::format_fixed(f.steps.back().plan.training_time_s, 1) + " s";
  if (stopped) {  // every step is proven; below the first, the search for the next one stopped
    f.status = Status::feasible;
    f.message += "; below " + detail::format_fixed(f.steps.front().plan.training_time_s, 1) + " s not known: at a deadline of " +
                 detail::format_number(deadline) + " s, " + stopped->message;
  } else if (truncated) {  // the plans below the last step were not searched
    f.message += "; below " + detail::format_fixed(f.steps.front().plan.training_time_s, 1) + " s not searched: stopped after " +
                 std::to_string(options.max_steps) + " plans (options.max_steps)";
  } else if (f.steps.front().plan.training_time_s > options.min_deadline_s) {
    f.message += "; no plan is feasible below " + detail::format_fixed(f.steps.front().plan.training_time_s, 1) + " s";
  }
  return f;
}

}  // namespace spotdnn
