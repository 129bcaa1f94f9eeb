#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/replay_policy.hpp What a replayed cluster job does when the market takes a worker:
/// nothing (none), ask for the same type again (same-type), re-plan exactly (replan), or re-plan on spot
/// and fall back to on-demand in time (guard): the policies of `spotdnn watch`, evaluated by replay().
///
/// The policies (replay.hpp's file comment, "Policies", has the whole contract):
/// - `none`: a worker whose instance ends is not replaced; the others finish the job.
/// - `same_type`: it waits for its trace slot's next interval (or its events trace's next node).
/// - `replan`: at each moment one or more instances end, the exact re-plan (replan.hpp) from the loss
///   reached and the time left chooses what to add; what it adds waits for free capacity of its type on
///   the traces (a slot no worker holds: its next interval; an events trace: its next node), a type
///   bought on demand is always there.
/// - `guard`: replan on spot, and switch to on-demand at the first moment the fastest on-demand cluster
///   could no longer finish with the margin m to spare: T_od(ℓ) ≥ (T − t) − m, with
///   T_od(ℓ) = d + K·(1/(L − a) − 1/(ℓ − a)) (d the join delay, L the target, a the loss model's
///   asymptote, ℓ the loss reached, +inf before training). From any loss ℓ every cluster c needs
///   A_c·(1/(L − a) − 1/(ℓ − a)) iterations (progress.hpp), so its time is (A_c·t_c)·(1/(L − a) − 1/(ℓ − a))
///   and the fastest cluster is the same for every ℓ: K = min_c A_c·t_c over the clusters of types priced on
///   demand, within the quotas, found once by the exact planner. Between two events ℓ follows one curve, on
///   which 1/(ℓ − a) = (j + γ1)/A grows linearly in time, so the switch moment is found exactly (no
///   polling). T_od counts neither the workers already training during d nor on-demand workers already
///   there, so it is an upper bound of the on-demand finish: the guard may switch a little early, never late.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/revocation/replan.hpp"
#include "spotdnn/revocation/simulate.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn {

/// What a replayed cluster job does when a worker's instance ends (see the file comment).
enum class ReplayPolicy {
  none,       ///< not replaced
  same_type,  ///< wait for the slot's next interval (the trace's own replacement); replay()'s default
  replan,     ///< the exact re-plan from the loss reached and the time left
  guard,      ///< replan on spot; switch to on-demand while on-demand alone can still meet the deadline
};

[[nodiscard]] inline std::string_view to_string(ReplayPolicy policy) noexcept {
  switch (policy) {
    case ReplayPolicy::none: return "none";
    case ReplayPolicy::same_type: return "same-type";
    case ReplayPolicy::replan: return "replan";
    case ReplayPolicy::guard: return "guard";
  }
  return "?";
}

/// "none", "same-type" (or "same_type"), "replan", "guard"; nullopt otherwise.
[[nodiscard]] inline std::optional<ReplayPolicy> parse_replay_policy(std::string_view text) noexcept {
  if (text == "none") return ReplayPolicy::none;
  if (text == "same-type" || text == "same_type") return ReplayPolicy::same_type;
  if (text == "replan") return ReplayPolicy::replan;
  if (text == "guard") return ReplayPolicy::guard;
  return std::nullopt;
}

namespace detail {

/// What the replay engine asks of a policy: the planners and, per worker type, where an addition comes from.
struct ReplayPolicyHooks {
  ReplayPolicy policy = ReplayPolicy::same_type;
  /// replan, and the guard before its switch: the additions at a moment instances ended.
  ReplacementPlanner spot_replan;
  /// The guard at its switch: the on-demand workers to add (survivors: the on-demand workers there).
  ReplacementPlanner on_demand_fallback;
  double fallback_seconds_per_progress = std::numeric_limits<double>::infinity();  ///< K (s per unit of 1/loss)
  double guard_margin_s = 0;
  double join_delay_s = 0;
  double target_loss = 0;
  double asymptote = 0;
  std::vector<bool> always_up;                           ///< per worker type: bought on demand (no trace needed)
  std::vector<double> on_demand_price_usd_per_hour;      ///< per worker type (0: none)
  std::unique_ptr<Replanner> replanner;                  ///< owned here (replan, guard); the planners refer to it

  /// T_od(ℓ) − d = K·(1/(L − a) − 1/(ℓ − a)), for the progress left `h` = 1/(L − a) − 1/(ℓ − a).
  [[nodiscard]] double on_demand_time_s(double progress_left) const { return join_delay_s + fallback_seconds_per_progress * progress_left; }
};

/// The hooks of `policy` for `model` and the job's `counts` (see the file comment). `traced[k]`: worker type
/// k has a trace (spot capacity the replay can draw). Throws, before any window runs, what a re-plan would
/// throw for the starting cluster (above a quota or a vCPU quota group), and for the guard when no type is
/// priced on demand or no cluster of them can train.
[[nodiscard]] inline ReplayPolicyHooks make_replay_policy_hooks(std::string_view fn, const PerformanceModel& model, ReplayPolicy policy,
                                                                const std::vector<int>& counts, double target_loss, double join_delay_s,
                                                                double guard_margin_s, double deadline_s, bool charge_parameter_server,
                                                                const std::vector<bool>& traced) {
  ReplayPolicyHooks hooks;
  hooks.policy = policy;
  hooks.guard_margin_s = guard_margin_s;
  hooks.join_delay_s = join_delay_s;
  hooks.target_loss = target_loss;
  hooks.asymptote = model.workload().loss_model.asymptote();
  const std::vector<WorkerType>& types = model.worker_types();
  hooks.always_up.assign(types.size(), false);
  hooks.on_demand_price_usd_per_hour.assign(types.size(), 0.0);
  std::vector<std::string> untraced, no_on_demand;
  ReplanOptions on_demand;
  on_demand.join_delay_s = join_delay_s;
  on_demand.plan.charge_parameter_server = charge_parameter_server;
  for (std::size_t k = 0; k < types.size(); ++k) {
    const InstanceType& type = model.catalog().at(types[k].name);
    hooks.always_up[k] = types[k].market == Market::on_demand;
    hooks.on_demand_price_usd_per_hour[k] = types[k].market == Market::on_demand ? types[k].price_usd_per_hour : type.on_demand_price_usd_per_hour;
    if (!traced[k] && !hooks.always_up[k]) untraced.push_back(types[k].name);
    if (hooks.on_demand_price_usd_per_hour[k] > 0) {
      on_demand.plan.markets[types[k].name] = Market::on_demand;
    } else {
      no_on_demand.push_back(types[k].name);
    }
  }
  if (policy != ReplayPolicy::replan && policy != ReplayPolicy::guard) return hooks;

  hooks.replanner = std::make_unique<Replanner>(model);
  const Replanner& replanner = *hooks.replanner;
  ReplanOptions spot;
  spot.join_delay_s = join_delay_s;
  spot.plan.charge_parameter_server = charge_parameter_server;
  spot.exclude_types = untraced;  // no capacity to draw: never added (their survivors still count)
  hooks.spot_replan = replanner.policy(spot);
  {  // The starting cluster as the re-plan's survivors: a cluster above its quotas fails here, not mid-replay.
    ReplanRequest start;
    for (std::size_t k = 0; k < types.size() && k < counts.size(); ++k) {
      if (counts[k] > 0) start.survivors.set(types[k].name, counts[k]);
    }
    start.deadline_s = deadline_s;
    start.target_loss = target_loss;
    start.loss_reached = std::numeric_limits<double>::infinity();
    (void)replanner.replan(start, spot);
  }
  if (policy != ReplayPolicy::guard) return hooks;

  if (on_demand.plan.markets.empty()) {
    fail(fn, "policy", "guard", "the catalog prices no worker type on demand, so the guard has no fallback");
  }
  on_demand.exclude_types = no_on_demand;
  hooks.on_demand_fallback = replanner.policy(on_demand);
  // K: the fastest on-demand cluster from a loss ℓ0 with 1/(L − a) − 1/(ℓ0 − a) = 1/(2(L − a)), with a
  // deadline that leaves no time after the join delay (the re-plan then reports its fastest cluster).
  const double a = hooks.asymptote;
  if (!(target_loss > a)) fail(fn, "target_loss", target_loss, "must be above the loss model's asymptote " + format_number(a));
  ReplanRequest probe;
  probe.elapsed_s = 0;
  probe.deadline_s = join_delay_s > 0 ? join_delay_s : 1e-9;
  probe.target_loss = target_loss;
  probe.loss_reached = a + 2 * (target_loss - a);
  const ReplanResult fastest = replanner.replan(probe, on_demand);
  if (!std::isfinite(fastest.fastest_finish_time_s)) {
    fail(fn, "policy", "guard", "no cluster of the types priced on demand can reach the target loss (" + fastest.message + ")");
  }
  hooks.fallback_seconds_per_progress = std::max(0.0, fastest.fastest_finish_time_s - join_delay_s) * 2 * (target_loss - a);
  return hooks;
}

}  // namespace detail
}  // namespace spotdnn
