#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/exact.hpp The exact planner: the cheapest cluster meeting the SLO (or the fastest within a
/// budget), proven optimal by branch and bound over worker totals and instance types.
///
/// The method (design §6). For a fixed total n of workers, the contention P(n), the worker bandwidth
/// B_wk(n) and every type's iteration time T_k(n) are fixed (design §4 eqs. 1–3), so a cluster is
/// summarized by sums: I = Σ n_k/T_k (iterations/s), V = Σ n_k·b_k/T_k (samples/s) and the hourly price
/// P = P_ps + Σ n_k·p_k; its time is T = j/I with j from eq. 7 (which depends on b_w = V/I, on n, and on R
/// for the CC form) and its cost is P·T/3600 (eq. 9). The search
///  1. bounds every n from below, orders the totals by that bound and stops when the bound exceeds the
///     best plan found (ties within detail::kPlanTieRelative are still explored);
///  2. for each n, assigns counts type by type (depth-first, most cost-efficient type first, larger
///     counts first) and prunes a partial assignment when a lower bound on the time of every completion
///     exceeds the deadline, or a lower bound on the cost exceeds the budget or the incumbent.
/// The bounds, for completions of a partial assignment with m workers left for the remaining types:
///  - I <= I_ub: the partial I plus the m largest 1/T_k among the remaining instances (quota-capped);
///  - j >= j_lb: eq. 7 is linear in b_w, and b_w (an average of the b_k involved) lies between the
///    smallest and largest b_k of the chosen and remaining types; for the CC form
///    R >= (1 − w1)·sqrt(n/(n−1)) (Cauchy–Schwarz on the other shares) with
///    w1 <= s_max/(s_max + (n−1)·s_min), s_k = b_k/T_k;
///  - P/I >= λ*: the exact minimum of (P_partial + Σp)/(I_partial + Σ 1/T) over the m remaining workers
///    (a fractional program with a cardinality constraint, solved by Dinkelbach's method, each step a
///    greedy fill of the m smallest p_k − λ/T_k), or the cheaper mediant bound
///    P_ps/I_ub + min(W_partial/I_partial, min p_k·T_k) when it already prunes;
///  - hence T >= j_lb/I_ub and cost >= j_lb·λ*/3600.
/// Every bound is loosened by a relative 1e-9 (kPlanBoundSlack) so rounding can never prune the optimum.
/// Leaves are evaluated with PerformanceModel::estimate, the same function the brute-force planner uses,
/// and offered to the same tie-breaking (detail::PlanIncumbents), so both return the same plan.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "spotdnn/detail/plan_problem.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/units.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn {
namespace detail {

/// Relative loosening of every bound of the exact search, far above the rounding of the few operations
/// that compute them, so no bound can exceed the value PerformanceModel::estimate computes.
inline constexpr double kPlanBoundSlack = 1e-9;

/// One branch-and-bound search of a PlanProblem for one objective, deadline and budget.
class ExactPlanSearch {
 public:
  ExactPlanSearch(const PlanProblem& problem, PlanObjective objective, double deadline_s, double budget_usd,
                  PlanSearchStats& stats)
      : problem_(problem),
        objective_(objective),
        deadline_s_(deadline_s),
        budget_usd_(budget_usd),
        stats_(stats),
        incumbents_(objective) {
    const auto& types = problem.model().worker_types();
    const std::size_t count = types.size();
    counts_.assign(count, 0);
    r_.assign(count, 0);
    pos_.assign(count, -1);
    for (std::size_t k = 0; k < count; ++k) {
      if (problem.max_count[k] > 0) usable_.push_back(k);
    }
    const LossModel& loss = problem.model().workload().loss_model;
    gamma_ = loss.gamma;
    cc_ = loss.form == LossForm::cc;
    loss_gap_ = problem.target_loss - loss.asymptote();
  }

  [[nodiscard]] std::optional<PlanCandidate> run() {
    if (usable_.empty() || !(loss_gap_ > 0)) return std::nullopt;
    std::vector<std::pair<double, int>> totals;
    for (int n = problem_.min_workers; n <= problem_.max_workers; ++n) {
      prepare(n);
      const Bound b = bound(0, n, 0.0, 0.0, 0.0, kInf, -kInf, true);
      if (b.time_lb > deadline_s_ || b.cost_lb > budget_usd_) continue;
      totals.emplace_back(objective_ == PlanObjective::min_cost ? b.cost_lb : b.time_lb, n);
    }
    std::sort(totals.begin(), totals.end());
    for (const auto& [key, n] : totals) {
      if (key > incumbents_.objective_threshold()) break;
      if (const auto w = incumbents_.unbeatable_above_workers(); w && n > *w) continue;
      ++stats_.worker_totals;
      prepare(n);
      dfs(0, n, 0.0, 0.0, 0.0, kInf, -kInf);
    }
    return incumbents_.best();
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr std::size_t kMaxBetas = 6;

  /// Dinkelbach's cost bound (a sort per step) is computed below the root only when this many workers or
  /// fewer are left to place; the cheaper bounds decide elsewhere.
  static constexpr int kDinkelbachMaxExtra = 1 << 30;

  struct Bound {
    double time_lb = 0;
    double cost_lb = 0;
  };

  /// Per-n constants: iteration rates, the branching order and its suffix sums.
  void prepare(int n) {
    const PerformanceModel& model = problem_.model();
    const auto& types = model.worker_types();
    const double network_s = network_time_s(model.workload().param_bytes, model.worker_bandwidth_bytes_per_s(n));
    for (std::size_t k : usable_) r_[k] = 1.0 / (types[k].compute_time_s + network_s + types[k].pcie_time_s);

    order_ = usable_;
    auto cost_key = [&](std::size_t k) { return types[k].price_usd_per_hour / r_[k]; };
    if (objective_ == PlanObjective::min_cost) {
      std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return cost_key(a) < cost_key(b); });
    } else {
      std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return r_[a] > r_[b]; });
    }
    by_rate_ = usable_;
    std::stable_sort(by_rate_.begin(), by_rate_.end(), [&](std::size_t a, std::size_t b) { return r_[a] > r_[b]; });
    for (std::size_t i = 0; i < order_.size(); ++i) pos_[order_[i]] = static_cast<int>(i);

    const std::size_t u = order_.size();
    suf_min_.assign(u + 1, 0);
    suf_max_.assign(u + 1, 0);
    suf_min_rate_.assign(u + 1, 0.0);
    suf_min_price_.assign(u + 1, 0.0);
    suf_min_samples_.assign(u + 1, 0.0);
    suf_b_lo_.assign(u + 1, kInf);
    suf_b_hi_.assign(u + 1, -kInf);
    suf_price_per_rate_.assign(u + 1, kInf);
    for (std::size_t i = u; i-- > 0;) {
      const std::size_t k = order_[i];
      const WorkerType& w = types[k];
      suf_min_[i] = suf_min_[i + 1] + problem_.min_count[k];
      suf_max_[i] = suf_max_[i + 1] + problem_.max_count[k];
      suf_min_rate_[i] = suf_min_rate_[i + 1] + problem_.min_count[k] * r_[k];
      suf_min_price_[i] = suf_min_price_[i + 1] + problem_.min_count[k] * w.price_usd_per_hour;
      suf_min_samples_[i] = suf_min_samples_[i + 1] + problem_.min_count[k] * w.batch * r_[k];
      suf_b_lo_[i] = std::min(suf_b_lo_[i + 1], w.batch);
      suf_b_hi_[i] = std::max(suf_b_hi_[i + 1], w.batch);
      suf_price_per_rate_[i] = std::min(suf_price_per_rate_[i + 1], cost_key(k));
    }

    // Slopes of the line bounds: the distinct worker batches (at most kMaxBetas of them, spread evenly).
    std::vector<double> batches;
    for (std::size_t k : usable_) batches.push_back(types[k].batch);
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    betas_.clear();
    const std::size_t pick = std::min(batches.size(), kMaxBetas);
    for (std::size_t q = 0; q < pick; ++q) betas_.push_back(batches[pick == 1 ? batches.size() - 1 : q * (batches.size() - 1) / (pick - 1)]);
    beta_orders_.resize(betas_.size());
    for (std::size_t q = 0; q < betas_.size(); ++q) {
      const double beta = betas_[q];
      beta_orders_[q] = usable_;
      std::stable_sort(beta_orders_[q].begin(), beta_orders_[q].end(), [&](std::size_t a, std::size_t b) {
        return (types[a].batch - beta) * r_[a] > (types[b].batch - beta) * r_[b];
      });
    }

    // j-bound constants: eq. 7 is j = sqrt(n)/(L − asymptote) · (γ2·b_w + γ3) · [sqrt(R + γ4)] − γ1.
    j_scale_ = std::sqrt(double(n)) / loss_gap_;
    j_spread_ = 1.0;
    if (cc_) {
      double r_lb = 0;
      if (n >= 2) {
        double s_lo = kInf;
        double s_hi = 0;
        for (std::size_t k : usable_) {
          s_lo = std::min(s_lo, types[k].batch * r_[k]);
          s_hi = std::max(s_hi, types[k].batch * r_[k]);
        }
        const double w1_ub = s_hi / (s_hi + (n - 1) * s_lo);
        r_lb = (1.0 - w1_ub) * std::sqrt(double(n) / double(n - 1));
        r_lb = std::max(0.0, r_lb * (1.0 - kPlanBoundSlack) - kPlanBoundSlack);
      }
      j_spread_ = std::sqrt(std::max(0.0, r_lb + gamma_[3]));
    }
  }

  /// Lower bound on j over b_w in [b_lo, b_hi].
  [[nodiscard]] double j_lower(double b_lo, double b_hi) const {
    double numerator = std::min(gamma_[1] * b_lo + gamma_[2], gamma_[1] * b_hi + gamma_[2]);
    if (!(numerator > 0)) numerator = 0;
    const double positive = j_scale_ * numerator * j_spread_;
    return positive * (1.0 - kPlanBoundSlack) - gamma_[0] - std::abs(gamma_[0]) * kPlanBoundSlack;
  }

  /// Fills `extra` workers into the remaining types (positions >= i), capacities max − min, in the order
  /// `ranked`; returns (Σ price, Σ rate) of the workers added.
  [[nodiscard]] std::pair<double, double> fill(const std::vector<std::size_t>& ranked, std::size_t i, int extra) const {
    const auto& types = problem_.model().worker_types();
    double price = 0;
    double rate = 0;
    for (std::size_t k : ranked) {
      if (extra == 0) break;
      if (pos_[k] < static_cast<int>(i)) continue;
      const int take = std::min(extra, problem_.max_count[k] - problem_.min_count[k]);
      price += take * types[k].price_usd_per_hour;
      rate += take * r_[k];
      extra -= take;
    }
    return {price, rate};
  }

  /// Time bound from a line over the (I, V) set of the completions (γ2 < 0: j falls as b_w grows).
  /// c = max over completions of V − β·I (greedy: the `extra` largest b_k/T_k − β/T_k, order precomputed per
  /// β) gives V <= β·I + c, so j >= α + B·c/I with B = scale·γ2 < 0, α = A + B·β, and
  /// T = j/I >= α·u + B·c·u² with u = 1/I in [1/I_ub, 1/I_lb]; that quadratic is minimized in closed form.
  [[nodiscard]] double line_time_lower(std::size_t q, std::size_t i, int extra, double rate_fixed, double samples_fixed,
                                       double rate_lo, double rate_ub) const {
    const auto& types = problem_.model().worker_types();
    const double beta = betas_[q];
    double c = samples_fixed - beta * rate_fixed;
    int left = extra;
    for (std::size_t k : beta_orders_[q]) {
      if (left == 0) break;
      if (pos_[k] < static_cast<int>(i)) continue;
      const int take = std::min(left, problem_.max_count[k] - problem_.min_count[k]);
      c += take * (types[k].batch - beta) * r_[k];
      left -= take;
    }
    const double scale = j_scale_ * j_spread_;
    const double slope = scale * gamma_[1];  // B < 0
    const double alpha = scale * gamma_[2] - gamma_[0] + slope * beta;
    const double quad = slope * c;
    const double u_lo = 1.0 / rate_ub;
    const double u_hi = 1.0 / (rate_lo * (1.0 - kPlanBoundSlack));
    auto q_of = [&](double u) { return alpha * u + quad * u * u; };
    double lowest = std::min(q_of(u_lo), q_of(u_hi));
    if (quad > 0) {
      const double u_star = -alpha / (2 * quad);
      if (u_star > u_lo && u_star < u_hi) lowest = std::min(lowest, q_of(u_star));
    }
    const double magnitude = (std::abs(alpha) + std::abs(quad) * u_hi + std::abs(gamma_[0]) + std::abs(scale * gamma_[2])) * u_hi;
    return std::max(0.0, lowest - magnitude * kPlanBoundSlack);
  }

  /// min over completions of (price_fixed + Σp)/(rate_fixed + Σ 1/T) with exactly `extra` more workers in
  /// the remaining types (Dinkelbach's method: each step takes the `extra` smallest p − λ/T).
  [[nodiscard]] double min_price_per_rate(std::size_t i, int extra, double price_fixed, double rate_fixed) {
    const auto& types = problem_.model().worker_types();
    auto [p0, r0] = fill(by_rate_, i, extra);
    double lambda = (price_fixed + p0) / (rate_fixed + r0);
    if (extra == 0) return lambda;
    scratch_.assign(order_.begin() + static_cast<std::ptrdiff_t>(i), order_.end());
    for (int step = 0; step < 100; ++step) {
      std::sort(scratch_.begin(), scratch_.end(), [&](std::size_t a, std::size_t b) {
        const double va = types[a].price_usd_per_hour - lambda * r_[a];
        const double vb = types[b].price_usd_per_hour - lambda * r_[b];
        return va < vb || (va == vb && a < b);
      });
      const auto [p, r] = fill(scratch_, i, extra);
      const double next = (price_fixed + p) / (rate_fixed + r);
      if (!(next < lambda)) break;
      lambda = next;
    }
    return lambda;
  }

  /// Lower bounds on time and cost of every completion of a partial assignment of the types at positions
  /// < i (rate, worker price, samples/s and batch range of the chosen ones), with m workers left. Cheap
  /// bounds first; the computation stops as soon as the node is known to be prunable (`pruned` set).
  [[nodiscard]] Bound bound(std::size_t i, int m, double rate, double worker_price, double samples, double b_lo,
                            double b_hi, bool root) {
    Bound b;
    if (m < suf_min_[i] || m > suf_max_[i]) {
      b.time_lb = b.cost_lb = kInf;
      return b;
    }
    const int extra = m - suf_min_[i];
    const double rate_fixed = rate + suf_min_rate_[i];
    const double rate_ub = (rate_fixed + fill(by_rate_, i, extra).second) * (1.0 + kPlanBoundSlack);
    const double j_lb = std::max(0.0, j_lower(std::min(b_lo, suf_b_lo_[i]), std::max(b_hi, suf_b_hi_[i])));
    b.time_lb = j_lb / rate_ub;
    if (j_lb == 0) return b;
    if (!root && prune(b)) return b;
    const bool costed = objective_ == PlanObjective::min_cost || std::isfinite(budget_usd_);
    const double ps_per_rate = problem_.ps_price_usd_per_hour / rate_ub;
    if (costed) {
      const double ratio = ps_per_rate + std::min(rate > 0 ? worker_price / rate : kInf, suf_price_per_rate_[i]);
      b.cost_lb = j_lb * ratio * (1.0 - kPlanBoundSlack) / units::kSecondsPerHour;
      b.cost_lb = std::max(b.cost_lb, vertex_cost_lower(i, rate, worker_price, samples, ps_per_rate));
      if (!root && prune(b)) return b;
    }
    if (gamma_[1] < 0 && !betas_.empty()) {
      double rate_lo = rate_fixed;  // the `extra` slowest remaining workers
      int left = extra;
      for (auto it = by_rate_.rbegin(); it != by_rate_.rend() && left > 0; ++it) {
        if (pos_[*it] < static_cast<int>(i)) continue;
        const int take = std::min(left, problem_.max_count[*it] - problem_.min_count[*it]);
        rate_lo += take * r_[*it];
        left -= take;
      }
      if (rate_lo > 0) {
        for (std::size_t q = 0; q < betas_.size(); ++q) {
          b.time_lb = std::max(b.time_lb, line_time_lower(q, i, extra, rate_fixed, samples + suf_min_samples_[i], rate_lo, rate_ub));
          if (!root && prune(b)) return b;
        }
      }
    }
    if (costed && (root || extra <= kDinkelbachMaxExtra)) {
      const double price_fixed = problem_.ps_price_usd_per_hour + worker_price + suf_min_price_[i];
      const double ratio = min_price_per_rate(i, extra, price_fixed, rate_fixed);
      b.cost_lb = std::max(b.cost_lb, j_lb * ratio * (1.0 - kPlanBoundSlack) / units::kSecondsPerHour);
    }
    return b;
  }

  /// j as an affine function of b_w with R at its lower bound, loosened by the slack: j >= j_affine(b_w)
  /// wherever the loss model decreases (eq. 7 is affine in b_w for the seed form).
  [[nodiscard]] double j_affine(double batch) const {
    return j_scale_ * j_spread_ * (gamma_[1] * batch + gamma_[2]) * (1.0 - kPlanBoundSlack) - gamma_[0] -
           std::abs(gamma_[0]) * kPlanBoundSlack;
  }

  /// cost·3600 = (P_ps/I + Σ w_k c_k)·j(Σ w_k b_k) with w_k = n_k/(T_k·I) on the simplex, c_k = p_k·T_k.
  /// Both factors are affine in w and positive, so their product is quasi-concave and its minimum over the
  /// simplex spanned by the chosen part (one vertex: its own c and b_w) and the remaining types is at a vertex.
  [[nodiscard]] double vertex_cost_lower(std::size_t i, double rate, double worker_price, double samples,
                                         double ps_per_rate) const {
    const auto& types = problem_.model().worker_types();
    double lowest = kInf;
    auto vertex = [&](double price_per_rate, double batch) {
      const double j = j_affine(batch);
      if (!(j > 0)) return false;
      lowest = std::min(lowest, (ps_per_rate + price_per_rate) * j);
      return true;
    };
    if (rate > 0 && !vertex(worker_price / rate, samples / rate)) return 0;
    for (std::size_t t = i; t < order_.size(); ++t) {
      const std::size_t k = order_[t];
      if (!vertex(types[k].price_usd_per_hour / r_[k], types[k].batch)) return 0;
    }
    if (!std::isfinite(lowest)) return 0;
    return lowest * (1.0 - kPlanBoundSlack) / units::kSecondsPerHour;
  }

  [[nodiscard]] bool prune(const Bound& b) const {
    const double threshold = incumbents_.objective_threshold();
    if (b.time_lb > deadline_s_ || b.cost_lb > budget_usd_) return true;
    return (objective_ == PlanObjective::min_cost ? b.cost_lb : b.time_lb) > threshold;
  }

  void dfs(std::size_t i, int m, double rate, double worker_price, double samples, double b_lo, double b_hi) {
    ++stats_.nodes;
    if (m == suf_min_[i]) {  // every remaining type at its minimum: one cluster
      for (std::size_t t = i; t < order_.size(); ++t) counts_[order_[t]] = problem_.min_count[order_[t]];
      offer_if_feasible(problem_, counts_.data(), deadline_s_, budget_usd_, incumbents_, stats_);
      for (std::size_t t = i; t < order_.size(); ++t) counts_[order_[t]] = 0;
      return;
    }
    const std::size_t k = order_[i];
    const WorkerType& w = problem_.model().worker_types()[k];
    const int lo = std::max(problem_.min_count[k], m - suf_max_[i + 1]);
    const int hi = std::min(problem_.max_count[k], m - suf_min_[i + 1]);
    for (int c = hi; c >= lo; --c) {
      counts_[k] = c;
      const double rate_c = rate + c * r_[k];
      const double price_c = worker_price + c * w.price_usd_per_hour;
      const double samples_c = samples + c * w.batch * r_[k];
      const double b_lo_c = c > 0 ? std::min(b_lo, w.batch) : b_lo;
      const double b_hi_c = c > 0 ? std::max(b_hi, w.batch) : b_hi;
      if (prune(bound(i + 1, m - c, rate_c, price_c, samples_c, b_lo_c, b_hi_c, false))) continue;
      dfs(i + 1, m - c, rate_c, price_c, samples_c, b_lo_c, b_hi_c);
    }
    counts_[k] = 0;
  }

  const PlanProblem& problem_;
  PlanObjective objective_;
  double deadline_s_;
  double budget_usd_;
  PlanSearchStats& stats_;
  PlanIncumbents incumbents_;

  std::vector<std::size_t> usable_;  ///< worker types with a positive count limit, catalog order
  std::vector<int> counts_;          ///< the assignment being built, per worker type
  std::vector<double> r_;            ///< 1/T_k(n)
  std::vector<int> pos_;             ///< position of each type in order_ (for the current n)
  std::vector<std::size_t> order_, by_rate_, scratch_;
  std::vector<double> betas_;
  std::vector<std::vector<std::size_t>> beta_orders_;
  std::vector<int> suf_min_, suf_max_;
  std::vector<double> suf_min_rate_, suf_min_price_, suf_min_samples_, suf_b_lo_, suf_b_hi_, suf_price_per_rate_;
  std::vector<double> gamma_;
  bool cc_ = false;
  double loss_gap_ = 0;
  double j_scale_ = 0;
  double j_spread_ = 1;
};

inline std::optional<PlanCandidate> exact_solve(const PlanProblem& problem, PlanObjective objective, double deadline_s,
                                                double budget_usd, PlanSearchStats& stats) {
  return ExactPlanSearch(problem, objective, deadline_s, budget_usd, stats).run();
}

}  // namespace detail

/// The cheapest cluster (counts 0 <= n_k <= quota_k, n >= 1) whose predicted training reaches
/// `slo.target_loss` within `slo.deadline_s` (design §6); in budget mode (options.budget_usd) the fastest
/// cluster costing at most the budget. Status optimal with the plan and every predicted figure, or
/// infeasible with the reason and its figure (asymptote, fastest achievable time and plan, cheapest
/// cost). Ties break as documented on detail::PlanIncumbents: cheaper, then faster, then fewer workers,
/// then type order. Throws spotdnn::invalid_argument for bad input (naming the field).
[[nodiscard]] inline PlanResult plan_exact(const PerformanceModel& model, const Slo& slo, const PlanOptions& options = {}) {
  const detail::PlanProblem problem(model, slo, options, "plan_exact");
  auto solve = [&](PlanObjective objective, double deadline_s, double budget_usd, PlanSearchStats& stats) {
    return detail::exact_solve(problem, objective, deadline_s, budget_usd, stats);
  };
  return detail::assemble_plan(problem, PlanAlgorithm::exact, solve, solve);
}

}  // namespace spotdnn
