#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/plan_options.hpp The planner's options: PS charging, existing instances, a worker cap,
/// budget mode and per-type markets.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "spotdnn/catalog.hpp"
#include "spotdnn/limits.hpp"

namespace spotdnn {

/// Options every planner takes (exact, brute force, sliding window). Plain fields, all defaulted:
/// `PlanOptions opts; opts.charge_parameter_server = false;`.
struct PlanOptions {
  /// Add the on-demand parameter server's price to the cost (docs/model.md eq. (9)). The spotDNN paper leaves it out.
  bool charge_parameter_server = true;
  /// Existing instances that must stay (re-planning): at least this many workers of each named type.
  /// Each count must be between 0 and the type's quota.
  std::map<std::string, int, std::less<>> minimum_counts;
  /// At most this many workers in total, when set (>= 1).
  std::optional<int> max_workers;
  /// Budget mode, when set: minimize the training time subject to cost <= budget_usd (and to the
  /// deadline, when the SLO gives a finite one). Without it the planner minimizes cost under the deadline.
  std::optional<double> budget_usd;
  /// Per-type market override: a type listed here is priced in that market (spot: the catalog's spot
  /// price; on-demand: InstanceType::on_demand_price_usd_per_hour, which must be known). Unlisted types
  /// keep their catalog market.
  std::map<std::string, Market, std::less<>> markets;
  /// The exact planner's work limit, in search steps (one worker type looked at by one bound; limits.hpp,
  /// kDefaultPlanSearchSteps): 1 to kMaxPlanSearchSteps. A search that reaches it stops and returns the
  /// best plan found with PlanResult::objective_lower_bound (status feasible), or status undecided.
  std::int64_t max_search_steps = kDefaultPlanSearchSteps;
};

}  // namespace spotdnn
