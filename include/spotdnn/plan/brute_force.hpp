#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/brute_force.hpp The reference planner: evaluates every cluster within the quotas (and the vCPU quota groups).

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"

namespace spotdnn {

/// Limits of the exhaustive planner.
struct BruteForceOptions {
  /// Refuse problems with more candidate clusters than this (Π_k (quota_k − minimum_k + 1)).
  double max_clusters = 5e7;
};

namespace detail {

/// Number of count vectors within [min_count, max_count] per type (as a double: it can be huge).
inline double brute_force_size(const PlanProblem& problem) {
  double size = 1;
  for (std::size_t k = 0; k < problem.types(); ++k) size *= double(problem.max_count[k] - problem.min_count[k] + 1);
  return size;
}

/// Every count vector (odometer over the types, catalog order), offered through the shared tie-breaking;
/// offer_if_feasible drops those outside the vCPU quota groups.
inline std::optional<PlanCandidate> brute_force_solve(const PlanProblem& problem, PlanObjective objective,
                                                      double deadline_s, double budget_usd, PlanSearchStats& stats) {
  PlanIncumbents incumbents(objective);
  const std::size_t types = problem.types();
  if (types == 0) return std::nullopt;
  std::vector<int> counts(problem.min_count);
  int workers = 0;
  for (int c : counts) workers += c;
  while (true) {
    ++stats.nodes;
    if (workers >= problem.min_workers && workers <= problem.max_workers) {
      offer_if_feasible(problem, counts.data(), deadline_s, budget_usd, incumbents, stats);
    }
    std::size_t k = 0;
    for (; k < types; ++k) {
      if (counts[k] < problem.max_count[k]) {
        ++counts[k];
        ++workers;
        break;
      }
      workers -= counts[k] - problem.min_count[k];
      counts[k] = problem.min_count[k];
    }
    if (k == types) break;
  }
  return incumbents.best();
}

}  // namespace detail

/// The cheapest cluster meeting `slo` (the fastest within the budget, in budget mode), found by
/// evaluating every cluster within the quotas: the reference the exact planner is tested against.
/// Ties break as documented on detail::PlanIncumbents. Throws spotdnn::invalid_argument for bad input
/// and for problems larger than `limits.max_clusters` (use plan_exact for those).
[[nodiscard]] inline PlanResult plan_brute_force(const PerformanceModel& model, const Slo& slo,
                                                 const PlanOptions& options = {}, const BruteForceOptions& limits = {}) {
  constexpr std::string_view fn = "plan_brute_force";
  const detail::PlanProblem problem(model, slo, options, fn);
  const double size = detail::brute_force_size(problem);
  if (size > limits.max_clusters) {
    detail::fail(fn, "problem size", size,
                 "more clusters than the brute-force limit of " + detail::format_number(limits.max_clusters) +
                     " (product over types of quota - minimum + 1); use plan_exact");
  }
  auto solve = [&](PlanObjective objective, double deadline_s, double budget_usd, PlanSearchStats& stats) {
    return detail::brute_force_solve(problem, objective, deadline_s, budget_usd, stats);
  };
  // The quota-group diagnosis also searches the problem without a group, whose box may be larger: a box
  // above the limit gets no answer (then that group is not named as binding).
  auto diagnose = [&](const detail::PlanProblem& p, PlanObjective objective, double deadline_s, double budget_usd,
                      PlanSearchStats& stats) -> std::optional<detail::PlanCandidate> {
    if (detail::brute_force_size(p) > limits.max_clusters) return std::nullopt;
    return detail::brute_force_solve(p, objective, deadline_s, budget_usd, stats);
  };
  return detail::assemble_plan(problem, PlanAlgorithm::brute_force, solve, diagnose);
}

}  // namespace spotdnn
