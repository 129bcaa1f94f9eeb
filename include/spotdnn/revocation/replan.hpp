#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/replan.hpp Re-planning after a revocation notice: the cheapest instances to add to
/// the survivors so that training still reaches the target loss by the deadline.
///
/// The problem. At time t (elapsed since the start) the PS model has reached loss ℓ; the survivors s stay.
/// Either nothing is added and the survivors finish alone, or a set x ≠ 0 is requested now and joins
/// after the join delay d: the survivors train alone during d (from ℓ to ℓ'), then s + x trains from ℓ'.
/// Cost from now on, per second: survivors and PS from now, additions from when they join.
///
/// The method. From loss ℓ', any cluster c needs A_c·(1/(L − a) − 1/(ℓ' − a)) more iterations (see
/// progress.hpp), which is exactly the iterations of c under the residual problem: the workload with
/// γ1 = 0 and the target L' = residual_target_loss(a, ℓ', L). So the cheapest x is the exact planner's
/// optimum (plan_exact, docs/model.md section 2) of the residual problem with minimum counts = the survivors and the
/// deadline T − t − d; its cost (c's price and the PS over c's time) differs from the true remaining cost
/// by the survivors' and the PS's cost during d, the same for every x, so the optimum is the true one.
/// The no-addition option is evaluated directly (no join delay) and the cheaper feasible option wins.
/// vCPU quota groups (docs/model.md, "vCPU quota groups"): the survivors count against their groups (as
/// the planner's minimum counts), so the additions fit what the survivors leave; the parameter server's
/// vCPUs count in its on-demand group (Catalog::parameter_server.quota_group) as they do for plan();
/// survivors that already exceed a group, the PS included, are invalid input (naming the group). An
/// infeasible answer names a group that binds.
/// When neither meets the deadline the result is infeasible and says how soon the job could finish
/// (the planner's fastest cluster, or the survivors alone).
///
/// The policy's memo (Replanner::policy). In a simulation the same survivors come back at many notices,
/// with another time and loss each. For fixed survivors s the residual problem depends on one number
/// only: with γ1 = 0 a cluster c needs j_c = A_c/δ iterations, δ = L' − a (eq. (7)), so its time is τ_c/δ
/// and its cost κ_c/δ with τ_c, κ_c fixed by c; c meets the deadline D iff τ_c <= r = D·δ, and the
/// cost order (with the planner's relative ties) is the same for every δ. So if the exact planner chose c
/// at ratio r0, c is its choice at every r in [τ_c, r0]: every cheaper cluster had τ > r0 >= r, and c is
/// still feasible. If it found none at r0, there is none at any r <= r0, and its fastest cluster stays the
/// fastest. The memo keeps, per survivor set, the clusters chosen with the largest r0 each (and the largest
/// infeasible r0 with its fastest cluster). A notice is answered from it only when r <= r0·(1 − 1e-9)
/// (far above the rounding of τ, r and δ) and c meets the deadline when evaluated exactly as the
/// planner evaluates a leaf (PerformanceModel::estimate at this L', against this D); every other notice runs
/// replan() and feeds the memo. So a memoised answer is the one replan() gives (the same additions, the
/// same costs compared against the survivors-alone option), whatever the order of the notices and the
/// threads; tests/revocation_replan_test.cpp runs both paths on the same seeds. The memo is shared by
/// the copies of one policy (thread-safe, under a mutex), bounded by ReplanOptions::policy_memo_max_bytes,
/// and used only without a budget, market overrides or a fresh start (those notices always run replan()).

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/plan/exact.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/revocation/progress.hpp"
#include "spotdnn/revocation/simulate.hpp"
#include "spotdnn/status.hpp"
#include "spotdnn/units.hpp"

namespace spotdnn {

/// Where training stands when a notice arrives (the `replan --state` file).
struct ReplanRequest {
  Cluster survivors;       ///< instances that stay (may be empty)
  double elapsed_s = 0;    ///< since training started
  double deadline_s = 0;   ///< the SLO deadline, since training started
  double target_loss = 0;  ///< the SLO's target loss
  /// The loss the PS model has reached (e.g. from the training log). Give this, or the two below.
  std::optional<double> loss_reached;
  /// Samples trained so far by `trained_on`, the cluster that ran since the start (converted to the loss
  /// on its curve: j = samples / b_w).
  std::optional<double> samples_trained;
  Cluster trained_on;
};

/// Options of replan(). Plain fields, all defaulted.
struct ReplanOptions {
  /// Passed to the exact planner (PS charging, worker cap, markets). Its minimum_counts are raised to the
  /// survivors.
  PlanOptions plan;
  double join_delay_s = 120;  ///< from request to training for a new instance (s); spotDNN measured about 2 min
  /// Types not to add (e.g. the spot pool that was just revoked); their survivors still count.
  std::vector<std::string> exclude_types;
  /// policy() only: the most bytes of cluster counts its memo of residual plans may hold (see the file
  /// comment); 0: no memo, every notice runs replan(). The memo never changes an answer.
  std::size_t policy_memo_max_bytes = std::size_t(16) << 20;
};

namespace detail {

/// The residual plans a re-plan policy has found, per survivor set (see the file comment of replan.hpp):
/// for each cluster the exact planner chose, the largest ratio r0 = D·(L' − a) it was chosen at; and the
/// largest ratio at which it found no cluster, with its fastest one. Thread-safe; bounded in bytes.
class ResidualPlanMemo {
 public:
  /// A memoised answer: the residual plan's cluster (`feasible`) or, when none met the deadline, the
  /// planner's fastest cluster; counts per worker type, the survivors included.
  struct Answer {
    double ratio = 0;  ///< the largest r0 it was found at
    bool feasible = false;
    std::vector<int> counts;
  };
  /// A notice is answered only below ratio·(1 − kMargin): far above the rounding of r, δ and τ.
  static constexpr double kMargin = 1e-9;
  /// At most this many answers per survivor set (the first ones found are kept).
  static constexpr std::size_t kMaxAnswersPerSet = 32;

  explicit ResidualPlanMemo(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  /// Copies into `out` the answers of `survivors` whose ratio r0 covers r (r <= r0·(1 − kMargin)); false
  /// when there is none. (An infeasible answer and a feasible one that meets the deadline at r cannot
  /// both hold: the caller takes the first that does.)
  bool find(const std::vector<int>& survivors, double ratio, std::vector<Answer>& out) const {
    out.clear();
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = sets_.find(survivors);
    if (it == sets_.end()) return false;
    for (const Answer& a : it->second) {
      if (ratio <= a.ratio * (1 - kMargin)) out.push_back(a);
    }
    return !out.empty();
  }

  /// Records what the exact planner answered at ratio r for `survivors` (see Answer).
  void record(const std::vector<int>& survivors, double ratio, bool feasible, const std::vector<int>& counts) {
    if (!(ratio > 0) || !std::isfinite(ratio)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sets_.find(survivors);
    if (it == sets_.end()) {
      const std::size_t bytes = sizeof(int) * survivors.size() + kSetOverheadBytes;
      if (bytes_ + bytes > max_bytes_) return;
      bytes_ += bytes;
      it = sets_.emplace(survivors, std::vector<Answer>{}).first;
    }
    for (Answer& a : it->second) {
      if (a.feasible == feasible && (!feasible || a.counts == counts)) {
        a.ratio = std::max(a.ratio, ratio);
        if (!feasible) a.counts = counts;  // the fastest cluster: the same at every ratio
        return;
      }
    }
    const std::size_t bytes = sizeof(int) * counts.size() + sizeof(Answer);
    if (it->second.size() >= kMaxAnswersPerSet || bytes_ + bytes > max_bytes_) return;
    bytes_ += bytes;
    it->second.push_back({ratio, feasible, counts});
  }

  /// Bytes held (an estimate: the counts and a fixed overhead per set and per answer).
  [[nodiscard]] std::size_t bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }
  /// Notices a policy answered from the memo (counted by the policy).
  [[nodiscard]] std::int64_t answers() const { return answers_.load(); }
  void count_answer() { answers_.fetch_add(1, std::memory_order_relaxed); }

 private:
  static constexpr std::size_t kSetOverheadBytes = 96;
  struct Hash {
    std::size_t operator()(const std::vector<int>& v) const noexcept {
      std::uint64_t h = 0x9e3779b97f4a7c15ULL;
      for (int x : v) h = (h ^ std::uint64_t(std::uint32_t(x))) * 0x100000001b3ULL;
      return std::size_t(h ^ (h >> 29));
    }
  };
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::atomic<std::int64_t> answers_{0};
  mutable std::mutex mutex_;
  std::unordered_map<std::vector<int>, std::vector<Answer>, Hash> sets_;
};

}  // namespace detail

/// The answer of replan().
struct ReplanResult {
  /// optimal (the cheapest option is returned), infeasible, or target_met_at_start: the loss reached is
  /// at or below the target already, or nothing has been trained yet (loss_reached +inf) and the loss model
  /// meets the target at iteration 0 for the survivors or for a cluster the residual planner may choose
  /// (the message says which; nothing to add or train). When the exact residual search stops at its step
  /// limit (options.plan.max_search_steps): feasible (an option that meets the deadline, not proven the
  /// cheapest; the message says so) or undecided (none found, none ruled out).
  Status status = Status::invalid_input;
  std::string message;
  double loss_reached = 0;       ///< ℓ at the notice
  double remaining_time_s = 0;   ///< deadline − elapsed
  Cluster survivors;
  Cluster additions;             ///< what to request now (empty: let the survivors finish)
  std::vector<int> addition_counts;  ///< per PerformanceModel::worker_types()
  Cluster cluster;               ///< survivors + additions: the cluster that finishes the job
  double finish_time_s = std::numeric_limits<double>::infinity();      ///< from now to the target loss
  double completion_time_s = std::numeric_limits<double>::infinity();  ///< elapsed + finish_time_s
  double cost_usd = 0;           ///< from now: workers + PS
  double worker_cost_usd = 0;
  double ps_cost_usd = 0;
  /// infeasible: the soonest the job can finish (s from now) and with which additions (+inf: never).
  double fastest_finish_time_s = std::numeric_limits<double>::infinity();
  std::optional<Cluster> fastest_additions;
  PlanResult residual_plan;  ///< the exact planner's answer on the residual problem (when it was asked)

  /// optimal, or feasible: the additions come from an exact search that stopped at its step limit
  /// (PlanOptions::max_search_steps; residual_plan says how far from the optimum they may be).
  [[nodiscard]] bool has_plan() const { return status == Status::optimal || status == Status::feasible; }
};

/// Re-plans against one model; holds the residual model so that repeated calls (the simulation's
/// replan policy) do not rebuild it. Const member functions are safe to call concurrently.
class Replanner {
 public:
  explicit Replanner(const PerformanceModel& model)
      : model_(model), residual_(residual_workload(model.workload()), model.catalog()) {}

  [[nodiscard]] const PerformanceModel& model() const { return model_; }

  /// The cheapest way to finish (see the file comment). Throws spotdnn::invalid_argument for bad input
  /// (unknown types, a non-finite time, no progress given, survivors above their quota, ...).
  [[nodiscard]] ReplanResult replan(const ReplanRequest& request, const ReplanOptions& options = {}) const {
    constexpr std::string_view fn = "replan";
    detail::require_non_negative(fn, "elapsed_s", request.elapsed_s);
    detail::require_positive(fn, "deadline_s", request.deadline_s);
    detail::require_finite(fn, "target_loss", request.target_loss);
    detail::require_non_negative(fn, "join_delay_s", options.join_delay_s);
    const LossModel& loss_model = model_.workload().loss_model;
    const double asymptote = loss_model.asymptote();
    const double target = request.target_loss;

    ReplanResult r;
    r.survivors = request.survivors;
    r.remaining_time_s = request.deadline_s - request.elapsed_s;
    r.loss_reached = loss_reached(request);
    const std::vector<int> survivors = model_.counts_of(request.survivors);
    r.addition_counts.assign(survivors.size(), 0);
    r.cluster = request.survivors;
    const std::string loss_text = detail::format_number(target);

    if (!(target > asymptote)) {
      r.status = Status::infeasible;
      r.message = "target loss " + loss_text + " is at or below the loss model's asymptote " + detail::format_number(asymptote);
      return r;
    }
    if (r.loss_reached <= target) {  // met already: the status plan() gives a target met before training
      r.status = Status::target_met_at_start;
      r.finish_time_s = 0;
      r.completion_time_s = request.elapsed_s;
      r.fastest_finish_time_s = 0;
      r.message = "the target loss " + loss_text + " is already reached: nothing to add";
      return r;
    }
    const double ps_price = options.plan.charge_parameter_server ? model_.catalog().parameter_server.price_usd_per_hour : 0.0;

    // Option A: the survivors finish alone.
    const Estimate s = model_.estimate(survivors.data(), target, {options.plan.charge_parameter_server});
    const LossCurve s_curve = loss_curve(loss_model, s);
    const bool survivors_train = s.workers > 0 && s_curve.decreasing();
    double a_time = std::numeric_limits<double>::infinity();
    if (survivors_train) {
      const double from = std::isinf(r.loss_reached) ? 0.0 : s_curve.iterations_at(r.loss_reached);
      a_time = std::max(0.0, s_curve.iterations_at(target) - from) * s.iteration_time_s;
    }
    if (std::isinf(r.loss_reached) && s.outcome == TargetOutcome::met_at_start) {
      r.status = Status::target_met_at_start;
      r.message = "the target loss " + loss_text + " is met before training starts: the loss model gives " +
                  detail::format_readable(loss_at_start(loss_model, s)) + " at iteration 0 for the survivors (" +
                  request.survivors.to_string() + "); nothing to train";
      return r;
    }
    // The survivors must fit their vCPU quota groups (chosen markets), beside the parameter server's vCPUs
    // in its on-demand group: the planner's own check of its minimum counts (detail::PlanProblem reserves
    // the PS's vCPUs, so the rule lives in one place).
    if (!model_.catalog().quota_groups.empty()) {
      PlanOptions check = options.plan;
      check.budget_usd.reset();
      check.max_workers.reset();
      check.minimum_counts.clear();
      for (std::size_t k = 0; k < survivors.size(); ++k) {
        if (survivors[k] > 0) check.minimum_counts[model_.worker_types()[k].name] = survivors[k];
      }
      const detail::PlanProblem survivors_fit(model_, Slo{target, 1.0}, check, fn, "survivors");
    }
    const bool a_feasible = a_time <= r.remaining_time_s;
    const double a_cost = units::cost_usd(s.worker_price_usd_per_hour + ps_price, a_time);

    // Option B: request additions now; they train after the join delay.
    const double d = options.join_delay_s;
    double b_time = std::numeric_limits<double>::infinity(), b_cost = std::numeric_limits<double>::infinity();
    std::vector<int> b_counts;
    bool b_feasible = false;
    bool b_unknown = false;  // the residual search stopped before it found additions
    double fastest_b = std::numeric_limits<double>::infinity();
    std::optional<Cluster> fastest_b_additions;
    bool fastest_unproven = false;  // the search for the fastest additions stopped at its step limit
    double during_delay_usd = 0;    // the survivors' cost while additions join
    if (!(survivors_train && a_time <= d)) {  // if the survivors finish within d, no addition can help
      double loss_after_delay = r.loss_reached;
      if (survivors_train && !std::isinf(r.loss_reached)) {
        loss_after_delay = s_curve.loss_at(s_curve.iterations_at(r.loss_reached) + d * s.iterations_per_s);
      }
      const bool fresh = std::isinf(loss_after_delay);
      std::optional<PerformanceModel> restricted;  // the model with excluded types capped at their survivors
      if (!options.exclude_types.empty()) {
        Catalog catalog = model_.catalog();
        for (const std::string& name : options.exclude_types) {
          const auto k = catalog.index_of(name);
          if (!k) {
            detail::fail(fn, "exclude_types", detail::quoted(name), "unknown instance type (the catalog has: " + catalog.type_names() + ")");
          }
          catalog.instance_types[*k].quota = request.survivors.count(name);
        }
        restricted.emplace(fresh ? model_.workload() : residual_.workload(), std::move(catalog));
      }
      const PerformanceModel& plan_model = restricted ? *restricted : fresh ? model_ : residual_;
      Slo slo;
      slo.target_loss = fresh ? target : residual_target_loss(asymptote, loss_after_delay, target);
      PlanOptions plan_options = options.plan;
      for (std::size_t k = 0; k < survivors.size(); ++k) {
        if (survivors[k] == 0) continue;
        int& minimum = plan_options.minimum_counts[model_.worker_types()[k].name];
        minimum = std::max(minimum, survivors[k]);
      }
      const double budget_s = r.remaining_time_s - d;
      during_delay_usd = units::cost_usd(s.worker_price_usd_per_hour + ps_price, d);
      if (budget_s > 0) {
        slo.deadline_s = budget_s;
        r.residual_plan = plan_exact(plan_model, slo, plan_options);
        if (r.residual_plan.status == Status::target_met_at_start) {
          r.status = r.residual_plan.status;
          r.message = r.residual_plan.message;
          return r;
        }
        if (r.residual_plan.status == Status::undecided) {  // no additions found before the step limit
          if (!a_feasible) {
            r.status = Status::undecided;
            r.message = "whether any set of additions meets the deadline is not known: " + r.residual_plan.message;
            return r;
          }
          b_unknown = true;  // the survivors alone meet it: that answer stands, unproven cheapest
        }
        if (r.residual_plan.has_plan()) {
          b_feasible = true;
          b_counts = r.residual_plan.counts;
          b_time = d + r.residual_plan.prediction.training_time_s;
          b_cost = during_delay_usd + r.residual_plan.prediction.cost_usd;
          fastest_b = b_time;
        } else if (r.residual_plan.fastest) {
          fastest_b = d + r.residual_plan.fastest->training_time_s;
          fastest_b_additions = difference(r.residual_plan.fastest->cluster, request.survivors);
        }
      }
      if (!b_feasible && !fastest_b_additions && !b_unknown) {
        // The deadline leaves no time after the join delay: ask for the fastest cluster without a deadline.
        PlanOptions fastest_options = plan_options;
        fastest_options.budget_usd = std::numeric_limits<double>::max();
        Slo open_slo = slo;
        open_slo.deadline_s = std::numeric_limits<double>::infinity();
        const PlanResult fastest = plan_exact(plan_model, open_slo, fastest_options);
        if (fastest.status == Status::target_met_at_start) {
          r.status = fastest.status;
          r.message = fastest.message;
          return r;
        }
        if (fastest.has_plan()) {
          fastest_b = d + fastest.prediction.training_time_s;
          fastest_b_additions = difference(fastest.cluster, request.survivors);
        }
        fastest_unproven = fastest.stats.stopped;
      }
    }

    const bool b_adds = b_feasible && b_counts != survivors;
    const bool choose_a = a_feasible && (!b_adds || a_cost <= b_cost);
    if (choose_a || b_adds) {
      r.status = Status::optimal;
      if (choose_a) {
        r.finish_time_s = a_time;
        r.worker_cost_usd = units::cost_usd(s.worker_price_usd_per_hour, a_time);
        r.ps_cost_usd = units::cost_usd(ps_price, a_time);
      } else {
        for (std::size_t k = 0; k < survivors.size(); ++k) r.addition_counts[k] = b_counts[k] - survivors[k];
        r.additions = to_cluster(r.addition_counts);
        r.cluster = to_cluster(b_counts);
        r.finish_time_s = b_time;
        r.ps_cost_usd = units::cost_usd(ps_price, b_time);
        r.worker_cost_usd = b_cost - r.ps_cost_usd;
      }
      r.cost_usd = r.worker_cost_usd + r.ps_cost_usd;
      r.completion_time_s = request.elapsed_s + r.finish_time_s;
      r.fastest_finish_time_s = std::min(a_time, fastest_b);
      r.message = choose_a ? "the survivors finish alone in " + detail::format_fixed(a_time, 1) + " s, within the " +
                                 detail::format_fixed(r.remaining_time_s, 1) + " s left: add nothing"
                           : "add " + r.additions.to_string() + ": " + r.cluster.to_string() + " finishes in " +
                                 detail::format_fixed(b_time, 1) + " s (with a " + detail::format_fixed(d, 0) + " s join delay), within the " +
                                 detail::format_fixed(r.remaining_time_s, 1) + " s left";
      // A residual search that stopped proves no additions cheapest: B is the best found, and A beats
      // every set of additions only when its cost is at most B's lower bound (delay included).
      const PlanResult& residual = r.residual_plan;
      const bool a_proven = choose_a && residual.objective_lower_bound &&
                            a_cost <= during_delay_usd + *residual.objective_lower_bound;
      if (b_unknown || (residual.stats.stopped && !a_proven)) {
        r.status = Status::feasible;
        r.message += choose_a ? "; cheaper additions are not ruled out: the exact planner stopped at its step limit ("
                              : "; not proven the cheapest additions: the exact planner stopped at its step limit (";
        r.message += std::to_string(options.plan.max_search_steps) + " steps)";
      }
      return r;
    }
    r.status = Status::infeasible;
    r.fastest_finish_time_s = std::min(a_time, fastest_b);
    if (a_time <= fastest_b && survivors_train) {
      r.fastest_additions = Cluster{};
    } else {
      r.fastest_additions = fastest_b_additions;
    }
    if (r.remaining_time_s <= 0) {
      r.message = "the deadline has passed (" + detail::format_fixed(-r.remaining_time_s, 1) + " s ago)";
    } else {
      r.message = "no set of additions meets the deadline: " + detail::format_fixed(r.remaining_time_s, 1) + " s are left";
    }
    if (!r.residual_plan.binding_quota_group.empty()) {
      for (const QuotaGroupUse& group : r.residual_plan.quota_groups) {
        if (group.code != r.residual_plan.binding_quota_group) continue;
        r.message += "; quota group " + group.code + (group.name.empty() ? "" : " (" + group.name + ")") + " binds: the fastest cluster uses " +
                     std::to_string(group.used_vcpus) + " of its " + std::to_string(group.limit_vcpus) + " vCPUs, survivors included";
      }
    }
    if (std::isfinite(r.fastest_finish_time_s)) {
      r.message += ", and the soonest the job can finish is in " + detail::format_fixed(r.fastest_finish_time_s, 1) + " s (" +
                   (r.fastest_additions && !r.fastest_additions->empty() ? "adding " + r.fastest_additions->to_string()
                                                                          : std::string("survivors alone")) +
                   ")";
    } else if (!fastest_unproven) {
      r.message += ", and no cluster within the quotas can finish";
    }
    if (fastest_unproven) {  // the deadline is proven out of reach; the soonest finish is only the best found
      r.message += " (the soonest finish is the best found: the exact planner stopped at its step limit)";
    }
    return r;
  }

  /// A ReplacementPlanner for simulate(): at each notice, re-plan the cheapest additions for the survivors
  /// (this replanner's replan()); when none meets the deadline, add the fastest set instead (best effort);
  /// once the deadline has passed, replace the leaving instance with one of its type. Notices that repeat
  /// a survivor set are answered from a memo of residual plans when that gives replan()'s answer exactly
  /// (see the file comment; options.policy_memo_max_bytes, 0 turns it off). A re-plan adds no search work
  /// to RevocationNotice::planner_work (the simulation counts each re-plan by its survivors), so the
  /// memo changes neither an answer nor what a simulation's work limit sees.
  /// The returned function refers to this Replanner, which must outlive it; its copies share one memo.
  [[nodiscard]] ReplacementPlanner policy(ReplanOptions options = {}) const {
    std::shared_ptr<detail::ResidualPlanMemo> memo;
    if (options.policy_memo_max_bytes > 0) memo = std::make_shared<detail::ResidualPlanMemo>(options.policy_memo_max_bytes);
    return policy(std::move(options), std::move(memo));
  }

  /// The same policy with a memo the caller holds (null: none), e.g. to see how many notices it answered.
  /// The memo must serve one Replanner and one set of options (it is not used with a budget or market
  /// overrides: those notices always run replan()).
  [[nodiscard]] ReplacementPlanner policy(ReplanOptions options, std::shared_ptr<detail::ResidualPlanMemo> memo) const {
    if (options.plan.budget_usd || !options.plan.markets.empty()) memo.reset();
    return [this, options = std::move(options), memo = std::move(memo)](const RevocationNotice& notice) {
      return policy_additions(notice, options, memo.get());
    };
  }

 private:
  /// What policy() adds at `notice` (see policy()).
  [[nodiscard]] std::vector<int> policy_additions(const RevocationNotice& notice, const ReplanOptions& options,
                                                  detail::ResidualPlanMemo* memo) const {
    std::vector<int> additions(model_.worker_types().size(), 0);
    if (notice.time_s >= notice.deadline_s) {
      additions[notice.leaving_type] = 1;
      return additions;
    }
    std::optional<double> ratio;  // the notice's r = D·(L' − a), when the memo may answer or learn from it
    if (memo != nullptr && memoised_additions(notice, options, *memo, additions, ratio)) return additions;
    ReplanRequest request;
    request.survivors = to_cluster(notice.survivors);
    request.elapsed_s = notice.time_s;
    request.deadline_s = notice.deadline_s;
    request.target_loss = notice.target_loss;
    request.loss_reached = notice.loss_reached;
    const ReplanResult result = replan(request, options);
    if (ratio) {
      const PlanResult& plan = result.residual_plan;
      if (plan.status == Status::optimal && plan.counts.size() == additions.size()) {
        memo->record(notice.survivors, *ratio, true, plan.counts);
      } else if (plan.status == Status::infeasible && plan.reason == InfeasibleReason::deadline_too_short && plan.fastest) {
        memo->record(notice.survivors, *ratio, false, model_.counts_of(plan.fastest->cluster));
      }
    }
    const Cluster* add = result.has_plan() ? &result.additions : (result.fastest_additions ? &*result.fastest_additions : nullptr);
    if (add != nullptr) {
      for (const auto& [type, count] : add->counts()) additions[*model_.worker_type_index(type)] = count;
    }
    return additions;
  }

  /// replan()'s additions at `notice` computed from the memo (true), following replan() step by step for
  /// a notice with a finite loss above the target and time left after the join delay. False: the memo has
  /// no answer that holds (then `ratio` is set when replan()'s residual plan may be recorded) or the
  /// notice is of another kind.
  [[nodiscard]] bool memoised_additions(const RevocationNotice& notice, const ReplanOptions& options, detail::ResidualPlanMemo& memo,
                                        std::vector<int>& additions, std::optional<double>& ratio) const {
    const LossModel& loss_model = model_.workload().loss_model;
    const double asymptote = loss_model.asymptote();
    const double target = notice.target_loss;
    const double loss = notice.loss_reached;
    const std::vector<int>& survivors = notice.survivors;
    if (!(notice.time_s >= 0) || !(notice.deadline_s > 0) || !std::isfinite(target) || !(target > asymptote) ||
        !std::isfinite(loss) || !(loss > target) || survivors.size() != additions.size()) {
      return false;
    }
    const bool charge = options.plan.charge_parameter_server;
    const double ps_price = charge ? model_.catalog().parameter_server.price_usd_per_hour : 0.0;
    // Option A, as replan() computes it.
    const Estimate s = model_.estimate(survivors.data(), target, {charge});
    const LossCurve s_curve = loss_curve(loss_model, s);
    const bool survivors_train = s.workers > 0 && s_curve.decreasing();
    double a_time = std::numeric_limits<double>::infinity();
    if (survivors_train) a_time = std::max(0.0, s_curve.iterations_at(target) - s_curve.iterations_at(loss)) * s.iteration_time_s;
    const double remaining_s = notice.deadline_s - notice.time_s;
    const double d = options.join_delay_s;
    if (survivors_train && a_time <= d) return false;  // replan() plans nothing: rare, not memoised
    const double loss_after_delay =
        survivors_train ? s_curve.loss_at(s_curve.iterations_at(loss) + d * s.iterations_per_s) : loss;
    const double budget_s = remaining_s - d;
    if (!std::isfinite(loss_after_delay) || !(loss_after_delay > target) || !(budget_s > 0)) return false;
    const double residual_target = residual_target_loss(asymptote, loss_after_delay, target);
    ratio = budget_s * (residual_target - asymptote);
    thread_local std::vector<detail::ResidualPlanMemo::Answer> answers;
    if (!memo.find(survivors, *ratio, answers)) return false;

    // Option B from the memo: the residual plan (or, when none meets the deadline, its fastest cluster).
    bool b_feasible = false;
    const std::vector<int>* b_counts = nullptr;
    double b_cost = std::numeric_limits<double>::infinity();
    double fastest_b = std::numeric_limits<double>::infinity();
    const std::vector<int>* fastest_counts = nullptr;
    for (const detail::ResidualPlanMemo::Answer& answer : answers) {
      const Estimate e = residual_.estimate(answer.counts.data(), residual_target, {charge});
      if (!answer.feasible) {
        fastest_b = d + e.training_time_s;
        fastest_counts = &answer.counts;
        break;
      }
      if (e.reaches_target() && e.training_time_s <= budget_s) {  // the planner's own test of a leaf
        b_feasible = true;
        b_counts = &answer.counts;
        b_cost = units::cost_usd(s.worker_price_usd_per_hour + ps_price, d) + e.cost_usd;
        fastest_b = d + e.training_time_s;
        break;
      }
    }
    if (!b_feasible && fastest_counts == nullptr) return false;
    const bool a_feasible = a_time <= remaining_s;
    const double a_cost = units::cost_usd(s.worker_price_usd_per_hour + ps_price, a_time);
    const bool b_adds = b_feasible && *b_counts != survivors;
    const bool choose_a = a_feasible && (!b_adds || a_cost <= b_cost);
    memo.count_answer();
    if (choose_a) return true;  // add nothing
    const std::vector<int>* to = b_adds ? b_counts : fastest_counts;
    if (!b_adds && (a_time <= fastest_b && survivors_train)) to = nullptr;  // infeasible: the survivors alone are soonest
    for (std::size_t k = 0; to != nullptr && k < additions.size(); ++k) additions[k] = std::max(0, (*to)[k] - survivors[k]);
    return true;
  }

  [[nodiscard]] double loss_reached(const ReplanRequest& request) const {
    constexpr std::string_view fn = "replan";
    if (request.loss_reached && request.samples_trained) {
      detail::fail(fn, "loss_reached", *request.loss_reached, "give either loss_reached or samples_trained, not both");
    }
    if (request.loss_reached) {
      if (std::isnan(*request.loss_reached) || *request.loss_reached < 0) {
        detail::fail(fn, "loss_reached", *request.loss_reached, "must be a loss (>= 0, or +inf for nothing trained)");
      }
      return *request.loss_reached;
    }
    if (!request.samples_trained) {
      detail::fail(fn, "progress", "none", "give loss_reached, or samples_trained with trained_on");
    }
    detail::require_non_negative(fn, "samples_trained", *request.samples_trained);
    if (request.trained_on.empty()) detail::fail(fn, "trained_on", "{}", "give the cluster that trained the samples");
    const Estimate e = model_.estimate(model_.counts_of(request.trained_on), request.target_loss);
    const LossCurve curve = loss_curve(model_.workload().loss_model, e);
    if (!curve.decreasing()) {
      detail::fail(fn, "trained_on", detail::quoted(request.trained_on.to_string()), "its loss model does not decrease");
    }
    return curve.loss_at(*request.samples_trained / e.weighted_batch);
  }

  [[nodiscard]] Cluster to_cluster(const std::vector<int>& counts) const {
    Cluster c;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (counts[k] > 0) c.set(model_.worker_types()[k].name, counts[k]);
    }
    return c;
  }

  static Cluster difference(const Cluster& whole, const Cluster& part) {
    Cluster c;
    for (const auto& [type, count] : whole.counts()) {
      if (count > part.count(type)) c.set(type, count - part.count(type));
    }
    return c;
  }

  const PerformanceModel& model_;
  PerformanceModel residual_;
};

/// Re-plans once: Replanner(model).replan(request, options).
[[nodiscard]] inline ReplanResult replan(const PerformanceModel& model, const ReplanRequest& request,
                                         const ReplanOptions& options = {}) {
  return Replanner(model).replan(request, options);
}

}  // namespace spotdnn
