#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/sliding_window.hpp The spotDNN paper's provisioning heuristic (Algorithm 1, "bounds
/// calculation and sliding window"), kept as a baseline for the exact planner.
///
/// What the heuristic does (spotDNN, IWQoS 2023, Algorithm 1, and the authors' provisioner.py):
///  1. expand the catalog into single instances, quota_k copies of each type, and sort them by
///     iteration time, fastest first (ties: catalog order). Every type's T_k(n) shares the same network
///     term, so this order is the same for every cluster size n;
///  2. compute a lower and an upper bound on the number of workers;
///  3. for every window size n between the bounds and every start position, take the n contiguous
///     instances of the sorted list (no wrap-around), predict time and cost, and keep the cheapest window
///     meeting the deadline. Only contiguous runs of the sorted list are ever considered: that is what
///     makes it a heuristic (the optimum may mix fast and slow types while skipping the middle ones).
/// The bounds. The paper's text was not available to us, and the authors' code scans every size from 1
/// to N−1 (and wraps windows around the end). We derive the bounds from the model so that no size that
/// could meet the deadline is skipped: for n workers, T >= j_lb(n)/I_max(n), where I_max(n) is the sum of
/// 1/T_k(n) over the n fastest instances (the first n of the sorted list) and j_lb(n) the smallest j of
/// eq. 7 over the batches present (R >= 0 for the CC form). The lower bound is the smallest n with
/// j_lb(n)/I_max(n) <= deadline (fewer, even of the fastest instances, cannot finish in time); the upper
/// bound the largest such n (beyond it contention and the √n growth of j make every window too slow).
/// Ties between windows break like the exact planner's (detail::PlanIncumbents), so results compare.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "spotdnn/detail/plan_problem.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/plan/exact.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {

/// The worker-count range a sliding-window search scans (see the file comment for their derivation).
struct SlidingWindowBounds {
  int lower_workers = 0;  ///< 0 when no size can meet the deadline
  int upper_workers = -1;
};

namespace detail {

/// Instances of the usable types, one entry per instance, fastest first (catalog order breaks ties).
inline std::vector<std::size_t> sorted_instances(const PlanProblem& problem) {
  const auto& types = problem.model().worker_types();
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < types.size(); ++k) {
    if (problem.max_count[k] > 0) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return types[a].compute_time_s + types[a].pcie_time_s < types[b].compute_time_s + types[b].pcie_time_s;
  });
  std::vector<std::size_t> instances;
  for (std::size_t k : order) instances.insert(instances.end(), static_cast<std::size_t>(problem.max_count[k]), k);
  return instances;
}

inline SlidingWindowBounds sliding_window_bounds(const PlanProblem& problem, const std::vector<std::size_t>& instances) {
  const PerformanceModel& model = problem.model();
  const auto& types = model.worker_types();
  const LossModel& loss = model.workload().loss_model;
  const std::vector<double>& g = loss.gamma;
  const double gap = problem.target_loss - loss.asymptote();
  SlidingWindowBounds bounds;
  if (!(gap > 0) || instances.empty()) return bounds;
  double b_lo = std::numeric_limits<double>::infinity();
  double b_hi = 0;
  for (std::size_t k : instances) {
    b_lo = std::min(b_lo, types[k].batch);
    b_hi = std::max(b_hi, types[k].batch);
  }
  double numerator = std::min(g[1] * b_lo + g[2], g[1] * b_hi + g[2]);
  if (!(numerator > 0)) numerator = 0;
  const double spread = loss.form == LossForm::cc ? std::sqrt(std::max(0.0, g[3])) : 1.0;
  const int most = std::min(static_cast<int>(instances.size()), problem.max_workers);
  for (int n = 1; n <= most; ++n) {
    const double network_s = network_time_s(model.workload().param_bytes, model.worker_bandwidth_bytes_per_s(n));
    double rate = 0;
    for (int i = 0; i < n; ++i) {
      const WorkerType& w = types[instances[static_cast<std::size_t>(i)]];
      rate += 1.0 / (w.compute_time_s + network_s + w.pcie_time_s);
    }
    const double j_lb = std::sqrt(double(n)) / gap * numerator * spread * (1 - kPlanBoundSlack) - g[0] -
                        std::abs(g[0]) * kPlanBoundSlack;
    const double time_lb = std::max(0.0, j_lb) / (rate * (1 + kPlanBoundSlack));
    if (time_lb <= problem.deadline_s) {
      if (bounds.lower_workers == 0) bounds.lower_workers = n;
      bounds.upper_workers = n;
    }
  }
  return bounds;
}

inline std::optional<PlanCandidate> sliding_window_solve(const PlanProblem& problem, PlanSearchStats& stats) {
  const std::vector<std::size_t> instances = sorted_instances(problem);
  const SlidingWindowBounds bounds = sliding_window_bounds(problem, instances);
  PlanIncumbents incumbents(PlanObjective::min_cost);
  const std::size_t total = instances.size();
  std::vector<int> counts(problem.types(), 0);
  std::vector<int> previous;
  for (int n = std::max(1, bounds.lower_workers); n <= bounds.upper_workers; ++n) {
    const auto size = static_cast<std::size_t>(n);
    std::fill(counts.begin(), counts.end(), 0);
    for (std::size_t i = 0; i < size; ++i) ++counts[instances[i]];
    previous.clear();
    for (std::size_t start = 0; start + size <= total; ++start) {
      if (start > 0) {
        --counts[instances[start - 1]];
        ++counts[instances[start + size - 1]];
      }
      if (counts == previous) continue;  // the same multiset of instances as the window before
      previous = counts;
      ++stats.nodes;
      offer_if_feasible(problem, counts.data(), problem.deadline_s, std::numeric_limits<double>::infinity(), incumbents,
                        stats);
    }
  }
  return incumbents.best();
}

}  // namespace detail

/// The worker-count bounds the sliding window scans for this problem.
[[nodiscard]] inline SlidingWindowBounds sliding_window_bounds(const PerformanceModel& model, const Slo& slo,
                                                               const PlanOptions& options = {}) {
  const detail::PlanProblem problem(model, slo, options, "sliding_window_bounds");
  return detail::sliding_window_bounds(problem, detail::sorted_instances(problem));
}

/// The spotDNN paper's heuristic: the cheapest window of contiguous instances (sorted by iteration time)
/// meeting the SLO. Status feasible (never claimed optimal); when no window meets the SLO the exact
/// planner diagnoses why (reason heuristic_missed if a non-window cluster would have). Supports
/// charge_parameter_server, max_workers and markets; the paper has no existing instances and no budget
/// mode, so those options throw spotdnn::invalid_argument.
[[nodiscard]] inline PlanResult plan_sliding_window(const PerformanceModel& model, const Slo& slo,
                                                    const PlanOptions& options = {}) {
  constexpr std::string_view fn = "plan_sliding_window";
  for (const auto& [name, count] : options.minimum_counts) {
    if (count > 0) {
      detail::fail(fn, "options.minimum_counts[\"" + name + "\"]", count,
                   "the paper's heuristic cannot keep existing instances; use plan_exact");
    }
  }
  if (options.budget_usd) detail::fail(fn, "options.budget_usd", *options.budget_usd, "the paper's heuristic has no budget mode; use plan_exact");
  const detail::PlanProblem problem(model, slo, options, fn);
  auto solve = [&](PlanObjective, double, double, PlanSearchStats& stats) { return detail::sliding_window_solve(problem, stats); };
  auto diagnose = [&](PlanObjective objective, double deadline_s, double budget_usd, PlanSearchStats& stats) {
    return detail::exact_solve(problem, objective, deadline_s, budget_usd, stats);
  };
  return detail::assemble_plan(problem, PlanAlgorithm::sliding_window, solve, diagnose);
}

}  // namespace spotdnn
