#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/serverless_frontier.hpp The exact cost–deadline staircase of serverless plans: for
/// every deadline in a range, the cheapest configuration (serverless/exact_search.hpp), under the work's
/// iteration rounding (ServerlessWork::iteration_rounding) like every planner.

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/serverless/exact_search.hpp"

namespace spotdnn::serverless {

/// One step: `plan` is the cheapest configuration for every deadline in [from_deadline_s, to_deadline_s]
/// (from_deadline_s is its training time unless the range was clipped).
struct ServerlessFrontierStep {
  ServerlessEstimate plan;
  double from_deadline_s = 0;
  double to_deadline_s = 0;
};

/// The Pareto set on a deadline range, steps by increasing deadline (costs fall from step to step).
struct ServerlessFrontier {
  double min_deadline_s = 0;
  double max_deadline_s = 0;
  std::vector<ServerlessFrontierStep> steps;
  ServerlessPlanResult at_max_deadline;  ///< the plan (or the infeasibility) at max_deadline_s
  bool truncated = false;                ///< stopped after max_steps plans

  /// The step holding the optimum at `deadline_s`, or nullptr when none is feasible there.
  [[nodiscard]] const ServerlessFrontierStep* at(double deadline_s) const {
    for (const ServerlessFrontierStep& s : steps) {
      if (deadline_s >= s.plan.training_time_s && deadline_s <= s.to_deadline_s) return &s;
    }
    return nullptr;
  }
};

/// Plans at max_deadline_s; the next step is the optimum at the largest deadline strictly below that plan's
/// time (std::nextafter), and so on until a plan is at or below min_deadline_s, nothing is feasible, or
/// max_steps plans were made. Between two steps' times the later step's plan stays optimal (a shorter
/// deadline only removes configurations), so the steps are every Pareto-optimal (time, cost) point of the
/// grid in the range. `grid.deadline_s` is ignored. Throws spotdnn::invalid_argument for bad input.
[[nodiscard]] inline ServerlessFrontier serverless_cost_deadline_frontier(const ServerlessModel& model, ServerlessPlanOptions grid,
                                                                        double min_deadline_s, double max_deadline_s,
                                                                        int max_steps = 1000) {
  constexpr std::string_view fn = "serverless_cost_deadline_frontier";
  spotdnn::detail::require_positive(fn, "min_deadline_s", min_deadline_s);
  spotdnn::detail::require_positive(fn, "max_deadline_s", max_deadline_s);
  if (!(max_deadline_s > min_deadline_s)) {
    spotdnn::detail::fail(fn, "max_deadline_s", max_deadline_s,
                          "must be greater than min_deadline_s (" + spotdnn::detail::format_number(min_deadline_s) + ")");
  }
  if (max_steps < 1) spotdnn::detail::fail(fn, "max_steps", double(max_steps), "must be at least 1");
  ServerlessFrontier f;
  f.min_deadline_s = min_deadline_s;
  f.max_deadline_s = max_deadline_s;
  double deadline_s = max_deadline_s;
  for (;;) {
    grid.deadline_s = deadline_s;
    ServerlessPlanResult r = plan_serverless_exact(model, grid);
    if (f.steps.empty()) f.at_max_deadline = r;
    if (!r.has_plan()) break;
    ServerlessFrontierStep step;
    step.plan = r.plan;
    step.from_deadline_s = std::fmax(r.plan.training_time_s, min_deadline_s);
    step.to_deadline_s = deadline_s;
    f.steps.push_back(step);
    if (r.plan.training_time_s <= min_deadline_s) break;
    if (int(f.steps.size()) >= max_steps) {
      f.truncated = true;
      break;
    }
    deadline_s = std::nextafter(r.plan.training_time_s, 0.0);
  }
  // Built from the largest deadline down; shown by increasing deadline.
  for (std::size_t i = 0, j = f.steps.size(); i + 1 < j; ++i, --j) std::swap(f.steps[i], f.steps[j - 1]);
  return f;
}

}  // namespace spotdnn::serverless
