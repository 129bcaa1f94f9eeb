#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/plan_result.hpp What a planner returns: the plan with every predicted figure, or the
/// reason no plan exists together with the figure that explains it.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn {

/// Which planner produced a result.
enum class PlanAlgorithm {
  exact,           ///< branch and bound with proven bounds (plan/exact.hpp): the true optimum
  brute_force,     ///< every cluster within the quotas (plan/brute_force.hpp): the true optimum, slowly
  sliding_window,  ///< the spotDNN paper's Algorithm 1 (plan/sliding_window.hpp): a heuristic
};

constexpr std::string_view to_string(PlanAlgorithm algorithm) {
  switch (algorithm) {
    case PlanAlgorithm::exact: return "exact";
    case PlanAlgorithm::brute_force: return "brute-force";
    case PlanAlgorithm::sliding_window: return "sliding-window";
  }
  return "exact";
}

constexpr std::optional<PlanAlgorithm> plan_algorithm_from_string(std::string_view text) {
  if (text == "exact") return PlanAlgorithm::exact;
  if (text == "brute-force" || text == "brute_force") return PlanAlgorithm::brute_force;
  if (text == "sliding-window" || text == "sliding_window") return PlanAlgorithm::sliding_window;
  return std::nullopt;
}

/// What a plan minimizes.
enum class PlanObjective {
  min_cost,  ///< cheapest plan meeting the deadline (the default, docs/model.md section 2)
  min_time,  ///< fastest plan within the budget (budget mode)
};

constexpr std::string_view to_string(PlanObjective objective) {
  return objective == PlanObjective::min_cost ? "min_cost" : "min_time";
}

/// Why no plan was returned.
enum class InfeasibleReason {
  none,                  ///< a plan was found (or the status is target_met_at_start: nothing to plan)
  no_instances,          ///< empty catalog, no profiled type, or every quota (or worker cap) is zero
  below_asymptote,       ///< the target loss is at or below the loss model's asymptote: see loss_asymptote
  model_not_decreasing,  ///< no cluster within the quotas has a decreasing loss model (check γ)
  deadline_too_short,    ///< even the fastest cluster is slower than the deadline: see fastest
  over_budget,           ///< the cheapest plan meeting the deadline costs more than the budget: see cheapest
  heuristic_missed,      ///< the sliding window found no window, although a plan exists: see fastest
};

constexpr std::string_view to_string(InfeasibleReason reason) {
  switch (reason) {
    case InfeasibleReason::none: return "none";
    case InfeasibleReason::no_instances: return "no_instances";
    case InfeasibleReason::below_asymptote: return "below_asymptote";
    case InfeasibleReason::model_not_decreasing: return "model_not_decreasing";
    case InfeasibleReason::deadline_too_short: return "deadline_too_short";
    case InfeasibleReason::over_budget: return "over_budget";
    case InfeasibleReason::heuristic_missed: return "heuristic_missed";
  }
  return "none";
}

/// What one vCPU quota group (Catalog::quota_groups) holds of a cluster: Σ vcpus_k·n_k over the worker
/// types it counts in the market the plan buys them in, against its limit (docs/model.md, "vCPU quota
/// groups").
struct QuotaGroupUse {
  std::string code;  ///< AWS's QuotaCode, e.g. "L-7212CCBC"
  std::string name;  ///< AWS's QuotaName
  Market market = Market::spot;
  std::int64_t used_vcpus = 0;
  int limit_vcpus = 0;
};

/// How much work a search did (for benchmarks and curiosity; not part of the answer).
struct PlanSearchStats {
  std::size_t clusters_evaluated = 0;  ///< full model estimates of candidate clusters
  std::size_t nodes = 0;               ///< search-tree nodes (exact) or windows (sliding window)
  std::size_t worker_totals = 0;       ///< total worker counts n examined (exact)
  std::size_t total_ranges = 0;        ///< ranges of worker totals bounded by their relaxation (exact)
  std::int64_t search_steps = 0;       ///< worker types looked at by bounds (exact; PlanOptions::max_search_steps)
  /// Some search of this plan stopped at PlanOptions::max_search_steps (exact): the answer is not proven.
  bool stopped = false;
  /// When `stopped`: a proven lower bound on the objective (USD or s) of every cluster the stopped search
  /// had not yet ruled out; +inf when it had ruled out all but the best it found.
  double stopped_lower_bound = std::numeric_limits<double>::infinity();

  /// Adds the work counts of `other` (a search whose answer was used apart), not its `stopped`.
  void add_work(const PlanSearchStats& other) {
    clusters_evaluated += other.clusters_evaluated;
    nodes += other.nodes;
    worker_totals += other.worker_totals;
    total_ranges += other.total_ranges;
    search_steps += other.search_steps;
  }
};

/// The answer of a planner.
struct PlanResult {
  /// optimal (exact, brute force), feasible (sliding window: meets the SLO, optimality not claimed),
  /// infeasible (see reason and the explaining figures), or target_met_at_start: some cluster within the
  /// quotas and options meets the target loss at iteration 0 by the loss model, so there is no training
  /// to plan (the message names the cluster and the model's loss at iteration 0; no plan is returned).
  Status status = Status::invalid_input;
  std::string message;  ///< one sentence a person can read
  InfeasibleReason reason = InfeasibleReason::none;
  PlanAlgorithm algorithm = PlanAlgorithm::exact;
  PlanObjective objective = PlanObjective::min_cost;

  double target_loss = 0;
  double deadline_s = std::numeric_limits<double>::infinity();  ///< +inf when none was given (budget mode)
  std::optional<double> budget_usd;                             ///< set in budget mode
  bool parameter_server_charged = true;

  Cluster cluster;          ///< the plan (empty when infeasible)
  std::vector<int> counts;  ///< the plan per PerformanceModel::worker_types() (catalog order)
  /// Every docs/formats.md figure of the plan (training time, cost split, iterations, ...); meaningful when
  /// has_plan(). Its own status/message describe the prediction, not the search.
  Prediction prediction;
  /// deadline_s − training time (s): how far under the deadline the plan finishes (+inf without deadline).
  double deadline_slack_s = std::numeric_limits<double>::quiet_NaN();

  /// below_asymptote: the asymptote γ4 (γ5) the target must exceed. NaN otherwise.
  double loss_asymptote = std::numeric_limits<double>::quiet_NaN();
  /// deadline_too_short / heuristic_missed: the fastest cluster within the quotas and options, with its time.
  /// target_met_at_start: the cluster the message names (it takes 0 s; its own status says why).
  std::optional<Prediction> fastest;
  /// over_budget: the cheapest cluster meeting the deadline, with its cost.
  std::optional<Prediction> cheapest;

  /// The vCPU quota groups that limit the problem (those with a known value counting a worker type in the
  /// market it is planned in; empty without any), each with what the reported cluster uses: the plan when
  /// has_plan(); else `cheapest` (over_budget), else `fastest` (deadline_too_short, heuristic_missed,
  /// target_met_at_start); used_vcpus 0 when no cluster is reported.
  std::vector<QuotaGroupUse> quota_groups;
  /// infeasible (deadline_too_short, over_budget or no_instances): the code of the quota group that binds,
  /// empty when none does. A group binds when the problem without its constraint has a plan (or a
  /// cluster, for no_instances), or, failing a single such group, when the problem without any group has
  /// a plan and the reported cluster fills this group (not one more instance of its types fits). The
  /// message then names the group, its name and the vCPUs the reported cluster uses of it.
  std::string binding_quota_group;

  /// Status feasible from the exact planner: its search stopped at PlanOptions::max_search_steps, and this
  /// is a proven lower bound on the optimum's objective (USD for min_cost, s for min_time); the plan is
  /// the best it found. Unset for a proven optimum and for the other planners.
  std::optional<double> objective_lower_bound;

  PlanSearchStats stats;

  [[nodiscard]] bool has_plan() const { return status == Status::optimal || status == Status::feasible; }
};

}  // namespace spotdnn
