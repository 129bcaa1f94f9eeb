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
///
/// Work. The sorted list is held as runs (quota_k copies of type k), so a large quota costs no memory; the
/// bounds are found by bisection over ranges of sizes, skipping a range whose lower bound on j_lb(n)/I_max(n)
/// exceeds the deadline; within the bounds, a range of sizes is skipped when the exact planner's range bound
/// (plan/exact.hpp, header (g)) shows that no cluster of such a size meets the deadline or costs less than
/// the best window found so far (none of its windows could be chosen); the windows of one size are walked
/// run by run, offering a window that lies inside one run once; and a window is evaluated only when the
/// exact planner's relaxation of its time and cost allows it to be chosen. None of this changes the result.
///
/// vCPU quota groups (docs/model.md, "vCPU quota groups"). The instance list holds each type's count capped
/// by what its group allows alone (min(quota_k, floor(Q_g/vcpus_k)), detail::PlanProblem), and a window whose
/// instances exceed a group shared by several of its types is skipped, as a cluster outside the quotas: the
/// heuristic never returns a cluster outside the groups (it may then find no window where a mix would).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/plan/exact.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/units.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {

/// The worker-count range a sliding-window search scans (see the file comment for their derivation).
struct SlidingWindowBounds {
  int lower_workers = 0;  ///< 0 when no size can meet the deadline
  int upper_workers = -1;
};

namespace detail {

/// `count` consecutive instances of one worker type in the sorted instance list.
struct InstanceRun {
  std::size_t type;
  int count;
};

/// The instance list of the heuristic as runs, one per usable type, fastest first (catalog order breaks
/// ties): the list itself has Σ quota entries, which large quotas make too long to hold.
inline std::vector<InstanceRun> sorted_instance_runs(const PlanProblem& problem) {
  const auto& types = problem.model().worker_types();
  std::vector<InstanceRun> runs;
  for (std::size_t k = 0; k < types.size(); ++k) {
    if (problem.max_count[k] > 0) runs.push_back({k, problem.max_count[k]});
  }
  std::stable_sort(runs.begin(), runs.end(), [&](const InstanceRun& a, const InstanceRun& b) {
    return types[a.type].compute_time_s + types[a.type].pcie_time_s < types[b.type].compute_time_s + types[b.type].pcie_time_s;
  });
  return runs;
}

/// The sizes the window scans (file comment): the smallest and largest n whose lower bound on the time,
/// j_lb(n)/I_max(n), meets the deadline. Ranges of sizes are skipped whole when a lower bound on that
/// bound over the range exceeds the deadline: j_lb grows with n, and I_max(n) <= I_max at n2 with every
/// iteration time at its smallest network time on the range (exact.hpp, header (g)).
class SlidingWindowSizes {
 public:
  SlidingWindowSizes(const PlanProblem& problem, const std::vector<InstanceRun>& runs)
      : problem_(problem), runs_(runs) {
    const PerformanceModel& model = problem.model();
    const auto& types = model.worker_types();
    const LossModel& loss = model.workload().loss_model;
    const std::vector<double>& g = loss.gamma;
    gap_ = problem.target_loss - loss.asymptote();
    gamma1_ = g[0];
    double b_lo = std::numeric_limits<double>::infinity();
    double b_hi = 0;
    long long total = 0;
    for (const InstanceRun& r : runs) {
      b_lo = std::min(b_lo, types[r.type].batch);
      b_hi = std::max(b_hi, types[r.type].batch);
      total += r.count;
    }
    numerator_ = std::min(g[1] * b_lo + g[2], g[1] * b_hi + g[2]);
    if (!(numerator_ > 0)) numerator_ = 0;
    spread_ = loss.form == LossForm::cc ? std::sqrt(std::max(0.0, g[3])) : 1.0;
    most_ = static_cast<int>(std::min<long long>(total, problem.max_workers));
  }

  [[nodiscard]] SlidingWindowBounds bounds() const {
    SlidingWindowBounds b;
    if (!(gap_ > 0) || runs_.empty() || most_ < 1) return b;
    const int lower = first_meeting(1, most_);
    if (lower == 0) return b;
    b.lower_workers = lower;
    b.upper_workers = last_meeting(lower, most_);
    return b;
  }

 private:
  /// j_lb(n) of the file comment (R >= 0 for the CC form), loosened.
  [[nodiscard]] double iterations_lb(int n) const {
    return std::sqrt(double(n)) / gap_ * numerator_ * spread_ * (1 - kPlanBoundSlack) - gamma1_ -
           std::abs(gamma1_) * kPlanBoundSlack;
  }

  /// Σ over the first n instances of 1/(c_k + network_s).
  [[nodiscard]] double fastest_rate(int n, double network_s) const {
    const auto& types = problem_.model().worker_types();
    double rate = 0;
    int left = n;
    for (const InstanceRun& r : runs_) {
      if (left == 0) break;
      const int take = std::min(left, r.count);
      rate += take / (types[r.type].compute_time_s + network_s + types[r.type].pcie_time_s);
      left -= take;
    }
    return rate;
  }

  /// The time bound of size n meets the deadline.
  [[nodiscard]] bool meets(int n) const {
    const PerformanceModel& model = problem_.model();
    const double network_s = network_time_s(model.workload().param_bytes, model.worker_bandwidth_bytes_per_s(n));
    const double time_lb = std::max(0.0, iterations_lb(n)) / (fastest_rate(n, network_s) * (1 + kPlanBoundSlack));
    return time_lb <= problem_.deadline_s;
  }

  /// No size in [n1, n2] meets the deadline (a bound at most every size's time bound, loosened once more).
  [[nodiscard]] bool none_meets(int n1, int n2) const {
    const double net_lo = network_time_range_s(problem_.model(), n1, n2).first;
    const double time_lb = std::max(0.0, iterations_lb(n1)) / (fastest_rate(n2, net_lo) * (1 + kPlanBoundSlack));
    return time_lb * (1 - kPlanBoundSlack) > problem_.deadline_s;
  }

  /// The smallest size in [n1, n2] that meets the deadline, or 0.
  [[nodiscard]] int first_meeting(int n1, int n2) const {
    if (n1 == n2) return meets(n1) ? n1 : 0;
    if (none_meets(n1, n2)) return 0;
    const int mid = n1 + (n2 - n1) / 2;
    const int left = first_meeting(n1, mid);
    return left != 0 ? left : first_meeting(mid + 1, n2);
  }

  /// The largest size in [n1, n2] that meets the deadline, or 0.
  [[nodiscard]] int last_meeting(int n1, int n2) const {
    if (n1 == n2) return meets(n1) ? n1 : 0;
    if (none_meets(n1, n2)) return 0;
    const int mid = n1 + (n2 - n1) / 2;
    const int right = last_meeting(mid + 1, n2);
    return right != 0 ? right : last_meeting(n1, mid);
  }

  const PlanProblem& problem_;
  const std::vector<InstanceRun>& runs_;
  double gap_ = 0;
  double gamma1_ = 0;
  double numerator_ = 0;
  double spread_ = 1;
  int most_ = 0;
};

inline SlidingWindowBounds sliding_window_bounds(const PlanProblem& problem, const std::vector<InstanceRun>& runs) {
  return SlidingWindowSizes(problem, runs).bounds();
}

/// Offers every distinct window of n contiguous instances (no wrap-around), in order of its start. A window
/// inside one run is the same multiset for every start in that run, so it is offered once. A window is
/// evaluated only when the exact planner's leaf relaxation (plan/exact.hpp, Reformulation: time >= J/I²,
/// 3600·cost >= (P_ps + P)·J/I², with `rate` and `jhat` of total n per run) allows it to meet the deadline
/// and to cost no more than the best window so far; the sums are taken over the window's runs, and J and I
/// are widened by 1e-12 of their absolute sums, far above the rounding of at most kMaxInstanceTypes terms.
inline void offer_windows(const PlanProblem& problem, const std::vector<InstanceRun>& runs, int n,
                          const std::vector<double>& rate, const std::vector<double>& jhat, std::vector<int>& counts,
                          PlanIncumbents& incumbents, PlanSearchStats& stats) {
  long long total = 0;
  for (const InstanceRun& r : runs) total += r.count;
  if (n > total) return;
  const auto& types = problem.model().worker_types();
  std::fill(counts.begin(), counts.end(), 0);
  // The window [s, s + n): its first instance is in run `head` (offset head_at), its last in run `tail`.
  std::size_t head = 0;
  int head_at = 0;
  std::size_t tail = 0;
  int tail_at = 0;  // the offset of the window's last instance in its run
  for (int left = n;;) {
    const int take = std::min(left, runs[tail].count);
    counts[runs[tail].type] += take;
    left -= take;
    if (left == 0) {
      tail_at = take - 1;
      break;
    }
    ++tail;
  }
  auto offer = [&] {
    ++stats.nodes;
    double i_sum = 0;
    double j_sum = 0;
    double j_abs = 0;
    double price = 0;
    for (std::size_t r = head; r <= tail; ++r) {
      const double c = counts[runs[r].type];
      i_sum += c * rate[r];
      j_sum += c * rate[r] * jhat[r];
      j_abs += std::abs(c * rate[r] * jhat[r]);
      price += c * types[runs[r].type].price_usd_per_hour;
    }
    const double j_lo = j_sum - 1e-12 * j_abs;
    if (j_lo > 0) {
      const double i_hi = i_sum * (1 + 1e-12);
      const double time_lb = j_lo / (i_hi * i_hi);
      if (time_lb > problem.deadline_s) return;
      const double cost_lb = (problem.ps_price_usd_per_hour + price * (1 - 1e-12)) * time_lb / units::kSecondsPerHour;
      if (cost_lb > incumbents.objective_threshold()) return;
    }
    offer_if_feasible(problem, counts.data(), problem.deadline_s, std::numeric_limits<double>::infinity(), incumbents, stats);
  };
  while (true) {
    if (head == tail) {
      // Inside one run: the same multiset until the window's last instance leaves the run.
      offer();
      const int skip = runs[tail].count - 1 - tail_at;
      head_at += skip;
      tail_at += skip;
    } else {
      offer();
    }
    // Slide by one: drop the first instance, take the one after the last.
    if (tail_at + 1 == runs[tail].count) {
      if (tail + 1 == runs.size()) return;
      ++tail;
      tail_at = 0;
    } else {
      ++tail_at;
    }
    ++counts[runs[tail].type];
    --counts[runs[head].type];
    if (++head_at == runs[head].count) {
      ++head;
      head_at = 0;
    }
  }
}

inline std::optional<PlanCandidate> sliding_window_solve(const PlanProblem& problem, PlanSearchStats& stats) {
  const std::vector<InstanceRun> runs = sorted_instance_runs(problem);
  const SlidingWindowBounds bounds = sliding_window_bounds(problem, runs);
  PlanIncumbents incumbents(PlanObjective::min_cost);
  std::vector<int> counts(problem.types(), 0);
  if (bounds.upper_workers < 1) return std::nullopt;
  // The sizes in increasing order; a range of sizes is skipped when no cluster of such a size can meet the
  // deadline or cost less than the best window so far (exact.hpp, header (g)): none of its windows could win.
  const TotalsBounds totals(problem);
  std::vector<std::size_t> run_types;
  for (const InstanceRun& r : runs) run_types.push_back(r.type);
  std::vector<double> rate;
  std::vector<double> jhat;
  struct Sizes {
    int n1, n2;
  };
  std::vector<Sizes> stack{{std::max(1, bounds.lower_workers), bounds.upper_workers}};
  while (!stack.empty()) {
    const Sizes r = stack.back();
    stack.pop_back();
    const PlanBound b = totals(r.n1, r.n2);
    if (b.time_lb > problem.deadline_s || b.cost_lb > incumbents.objective_threshold()) continue;
    if (r.n1 == r.n2) {
      total_constants(problem, run_types, r.n1, rate, jhat);
      offer_windows(problem, runs, r.n1, rate, jhat, counts, incumbents, stats);
      continue;
    }
    const int mid = r.n1 + (r.n2 - r.n1) / 2;
    stack.push_back({mid + 1, r.n2});
    stack.push_back({r.n1, mid});
  }
  return incumbents.best();
}

}  // namespace detail

/// The worker-count bounds the sliding window scans for this problem.
[[nodiscard]] inline SlidingWindowBounds sliding_window_bounds(const PerformanceModel& model, const Slo& slo,
                                                               const PlanOptions& options = {}) {
  const detail::PlanProblem problem(model, slo, options, "sliding_window_bounds");
  return detail::sliding_window_bounds(problem, detail::sorted_instance_runs(problem));
}

/// The spotDNN paper's heuristic: the cheapest window of contiguous instances (sorted by iteration time)
/// meeting the SLO. Status feasible (never claimed optimal); when no window meets the SLO the exact
/// planner diagnoses why (reason heuristic_missed if a non-window cluster would have). When any cluster
/// within the quotas meets the target at start, status target_met_at_start, like the exact planner (an
/// exact check, detail::met_at_start_cluster, runs before the windows). Supports
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
  auto diagnose = [&](const detail::PlanProblem& p, PlanObjective objective, double deadline_s, double budget_usd,
                      PlanSearchStats& stats) { return detail::exact_solve(p, objective, deadline_s, budget_usd, stats); };
  // A window might skip a cluster that meets the target at start; the exact check does not.
  auto met_at_start = [&](PlanSearchStats& stats) { return detail::met_at_start_cluster(problem, stats); };
  return detail::assemble_plan(problem, PlanAlgorithm::sliding_window, solve, diagnose, met_at_start);
}

}  // namespace spotdnn
