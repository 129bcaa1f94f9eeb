#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/work_policies.hpp Policies for a deadline, replayed on a real trace: a job of W seconds
/// of work on one instance, due D seconds after it starts, run on spot capacity where the trace has it and
/// on on-demand capacity where a policy chooses, from every start tick of the trace; with the cheapest
/// schedule in hindsight (the omniscient optimum) as the lower bound and on-demand alone as the upper one.
/// The setting of "Can't Be Late: Optimizing Spot Instance Savings under Deadlines" (Z. Wu et al., NSDI
/// 2024), whose policies are these: greedy is their greedy baseline, guard the same with a safety margin.
///
/// **Time and the trace.** Time runs in ticks of the trace's tick τ. Spot capacity is there in tick j
/// when an interval of the trace covers [jτ, (j+1)τ) (an availability trace's window: an instance launched
/// in it lives until the window ends, the Can't Be Late simulator's assumption; a lifetimes trace's up
/// time). A window starts at every `stride_ticks` tick j0 with (j0 + ⌈D/τ⌉)τ within the trace (a decided
/// window); the job then has ticks j0 .. j0 + ⌈D/τ⌉ − 1 and must finish by j0τ + D.
///
/// **Running.** In each tick the job runs on spot (only where the tick has spot capacity), on on-demand,
/// or not at all. A *segment* is a run of ticks on one kind of capacity (a spot segment ends when the
/// capacity does); every segment begins with the start overhead o (the boot, the join and restoring the
/// checkpoint: --join-delay plus --restart-overhead) during which it makes no progress, then progresses one
/// second of work per second. Progress is kept across segments (checkpoints). A segment that has run ℓ
/// ticks gains min(τ, max(0, (ℓ+1)τ − o) − max(0, ℓτ − o)) in its next tick. The job finishes inside a
/// tick when the work is done: δ = max(0, o − ℓτ) + (W − progress) into it. Billing is per second of
/// segment time (the overhead included): spot at spot_price, on-demand at on_demand_price. A job not
/// done by its deadline is stopped there: missed, billed until the deadline.
///
/// **Policies.**
/// - `on_demand`: one on-demand segment from the start: finishes at o + W, costs (o + W)·on_demand_price.
/// - `spot`: spot in every tick that has it, never on-demand (same-type replacement: ask again and wait).
/// - `guard` with margin m: as spot, but before each tick it checks that after the tick (run on spot if
///   the tick has it, else idle) an on-demand segment could still finish by the deadline with m to spare:
///   (j0τ + D) − (t + τ) − m ≥ o + (W − progress after the tick); if not, it switches to on-demand for the
///   rest of the job. On-demand is assumed always there, so with m ≥ 0 the guard never misses a window in
///   which on-demand alone, started at once, would not (o + W ≤ D): that is its promise.
/// - `greedy`: the guard with margin 0 (Can't Be Late's greedy policy: spot while there is slack, then
///   on-demand to the end).
/// - `omniscient`: the cheapest schedule knowing the whole trace, exactly, among schedules that decide per
///   tick (as every policy here): dynamic programming over the ticks with state (idle ticks so far i,
///   segments so far s, what ran in the last tick and for how many ticks of its segment ℓ ≤ ⌈o/τ⌉),
///   value the least cost. Progress is a function of the state: (k − i)τ − s·o, less what of the current
///   segment's overhead is not yet past (a segment shorter than o counts as negative progress, which never
///   helps a cheapest schedule: it costs and gains nothing). States are kept only while i·τ + s·o leaves
///   the work time to finish (i ≤ (D − W)/τ, s ≤ (D − W)/o + 1). O(windows × ⌈D/τ⌉ × (D − W)²/(τ·o) ×
///   ⌈o/τ⌉).
///
/// **Aggregates.** Per policy over the decided windows: P(meet the deadline) with the Wilson interval over
/// the disjoint deadline-long windows (as replay(): `effective_windows`), the mean cost, cost and finish-time
/// percentiles (nearest rank; a missed window's finish is +inf), the mean hours on spot and on on-demand.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/progress.hpp"
#include "spotdnn/revocation/simulate.hpp"
#include "spotdnn/revocation/trace.hpp"

namespace spotdnn {

/// A policy of work_policies.hpp's file comment.
enum class WorkPolicy { on_demand, spot, greedy, guard, omniscient };

[[nodiscard]] inline std::string_view to_string(WorkPolicy p) {
  switch (p) {
    case WorkPolicy::on_demand: return "on-demand";
    case WorkPolicy::spot: return "spot";
    case WorkPolicy::greedy: return "greedy";
    case WorkPolicy::guard: return "guard";
    case WorkPolicy::omniscient: return "omniscient";
  }
  return "?";
}

/// The most ticks a window of replay_work_policies may span (a 52-hour deadline at 1-minute ticks is 3,120).
inline constexpr std::int64_t kMaxWorkPolicyTicks = 100000;
/// The most omniscient DP cells (windows × ticks × states) one call may visit: beyond, it refuses and says
/// to use a larger stride.
inline constexpr double kMaxOmniscientCells = 5e9;

/// What replay_work_policies replays.
struct WorkPolicyOptions {
  double work_s = 0;               ///< W: seconds of work on one instance
  double deadline_s = 0;           ///< D: from the window's start
  double start_overhead_s = 0;     ///< o: lost at the start of every segment (boot, join, restore)
  double guard_margin_s = 1800;    ///< m of the guard policy
  double spot_price_usd_per_hour = 0;
  double on_demand_price_usd_per_hour = 0;
  int stride_ticks = 1;            ///< a window every this many ticks
  double confidence_level = 0.95;
  std::vector<WorkPolicy> policies = {WorkPolicy::on_demand, WorkPolicy::spot, WorkPolicy::greedy, WorkPolicy::guard,
                                      WorkPolicy::omniscient};
  /// Called with ("replay", "windows", done, total) over every policy's windows (total: windows × policies)
  /// before the first, every 256 and at the end; empty: not called.
  ProgressCallback progress;
};

/// One window under one policy.
struct WorkPolicyOutcome {
  bool met = false;
  double finish_s = std::numeric_limits<double>::infinity();  ///< from the window's start; +inf: not done by the deadline
  double cost_usd = 0;
  double spot_s = 0;       ///< segment time on spot
  double on_demand_s = 0;  ///< segment time on on-demand
};

/// One policy over every decided window.
struct WorkPolicyResult {
  WorkPolicy policy = WorkPolicy::on_demand;
  ProbabilityEstimate meets_deadline;
  int windows = 0;
  int effective_windows = 0;
  double mean_cost_usd = 0;
  Percentiles cost_usd;
  Percentiles finish_time_s;
  double mean_spot_hours = 0;
  double mean_on_demand_hours = 0;
  /// Omniscient only: windows where no schedule finishes by the deadline (then not met, cost 0).
  int infeasible_windows = 0;
};

/// Every policy's result, in the options' order, and the windows.
struct WorkPolicyReplay {
  std::vector<WorkPolicyResult> policies;
  int windows = 0;            ///< decided windows
  int undecided_windows = 0;  ///< start ticks whose deadline runs past the trace
  double tick_s = 0;
};

namespace detail {

/// Per tick of `trace`: spot capacity for the whole tick.
[[nodiscard]] inline std::vector<char> spot_by_tick(const PoolTrace& trace, std::int64_t ticks) {
  std::vector<char> spot(std::size_t(ticks), 0);
  const double tick = trace.tick_s;
  for (const UpInterval& u : trace.up) {
    const auto first = std::int64_t(std::ceil(u.start_s / tick - 1e-9));
    const auto end = std::int64_t(std::floor(u.end_s / tick + 1e-9));
    for (std::int64_t j = std::max<std::int64_t>(0, first); j < std::min(end, ticks); ++j) spot[std::size_t(j)] = 1;
  }
  return spot;
}

/// The progress a segment that has run `ran_s` gains over the next `dt_s` (file comment).
[[nodiscard]] inline double segment_gain_s(double ran_s, double dt_s, double overhead_s) {
  return std::max(0.0, ran_s + dt_s - overhead_s) - std::max(0.0, ran_s - overhead_s);
}

/// One window under on_demand, spot, greedy or guard (file comment). `spot` holds the window's ticks.
[[nodiscard]] inline WorkPolicyOutcome run_work_policy(WorkPolicy policy, const char* spot, std::int64_t ticks, double tick_s,
                                                       const WorkPolicyOptions& o) {
  WorkPolicyOutcome out;
  const double W = o.work_s, D = o.deadline_s, overhead = o.start_overhead_s;
  const double margin = policy == WorkPolicy::guard ? o.guard_margin_s : 0.0;
  enum Mode { idle, on_spot, on_demand } mode = policy == WorkPolicy::on_demand ? on_demand : idle;
  double progress = 0, ran_s = 0;  // ran_s: time of the current segment so far
  bool switched = policy == WorkPolicy::on_demand;
  for (std::int64_t k = 0; k < ticks; ++k) {
    const double t = double(k) * tick_s;
    if (t >= D) break;
    Mode next = mode;
    if (!switched) {
      next = spot[k] ? on_spot : idle;
      if (policy == WorkPolicy::greedy || policy == WorkPolicy::guard) {
        const double gain = next == on_spot ? segment_gain_s(mode == on_spot ? ran_s : 0.0, tick_s, overhead) : 0.0;
        if (D - (t + tick_s) - margin < overhead + (W - progress - gain)) {
          next = on_demand;
          switched = true;
        }
      }
    }
    if (next != mode) ran_s = 0;  // a new segment (or idle)
    mode = next;
    if (mode == idle) continue;
    const double price = mode == on_spot ? o.spot_price_usd_per_hour : o.on_demand_price_usd_per_hour;
    const double gain = segment_gain_s(ran_s, tick_s, overhead);
    const double dt = progress + gain >= W ? std::max(0.0, overhead - ran_s) + (W - progress) : tick_s;
    const double billed = std::min(dt, D - t);  // stopped at the deadline
    out.cost_usd += billed * price / 3600;
    (mode == on_spot ? out.spot_s : out.on_demand_s) += billed;
    if (progress + gain >= W && t + dt <= D) {
      out.met = true;
      out.finish_s = t + dt;
      return out;
    }
    progress += gain;
    ran_s += tick_s;
    // A spot segment ends with its capacity: the next tick without it starts idle.
    if (mode == on_spot && (k + 1 >= ticks || !spot[k + 1])) {
      mode = idle;
      ran_s = 0;
    }
  }
  return out;
}

/// The omniscient optimum of one window (file comment); nullopt-like: met false when none finishes.
[[nodiscard]] inline WorkPolicyOutcome omniscient_work_schedule(const char* spot, std::int64_t ticks, double tick_s,
                                                                const WorkPolicyOptions& o) {
  WorkPolicyOutcome best;
  const double W = o.work_s, D = o.deadline_s, overhead = o.start_overhead_s;
  const double slack = D - W;
  if (slack < overhead) return best;  // not even on-demand from the start
  const int max_idle = int(std::floor(slack / tick_s + 1e-9));
  // s ≤ max_segments; without an overhead segments cost nothing and are not counted (s stays 0).
  const int max_segments = overhead > 0 ? int(std::floor(slack / overhead + 1e-9)) : 0;
  const int L = overhead > 0 ? std::max(1, int(std::ceil(overhead / tick_s - 1e-9))) : 1;
  // States: 0 idle, 1..L spot with ℓ = 1..L ticks run, L+1..2L on-demand.
  const int states = 1 + 2 * L;
  const auto index = [&](int i, int s, int st) { return (std::size_t(i) * std::size_t(max_segments + 1) + std::size_t(s)) * std::size_t(states) + std::size_t(st); };
  const std::size_t cells = std::size_t(max_idle + 1) * std::size_t(max_segments + 1) * std::size_t(states);
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> cost(cells, kNone), next(cells, kNone), spot_time(cells, 0), next_spot(cells, 0);
  cost[index(0, 0, 0)] = 0;
  double best_cost = kNone;
  const double price[2] = {o.spot_price_usd_per_hour / 3600, o.on_demand_price_usd_per_hour / 3600};
  for (std::int64_t k = 0; k < ticks; ++k) {
    const double t = double(k) * tick_s;
    if (t >= D) break;
    std::fill(next.begin(), next.end(), kNone);
    const int idle_limit = int(std::min<std::int64_t>(k, max_idle));
    const int segment_limit = int(std::min<std::int64_t>(k, max_segments));  // one segment at most per tick run
    for (int i = 0; i <= idle_limit; ++i) {
      for (int s = 0; s <= segment_limit; ++s) {
        // Idle ticks and the overheads of the segments before the current one all come out of the slack.
        if (double(i) * tick_s + double(std::max(0, s - 1)) * overhead > slack + 1e-9) break;
        for (int st = 0; st < states; ++st) {
          const double c = cost[index(i, s, st)];
          if (!(c < best_cost)) continue;
          const double spot_s = spot_time[index(i, s, st)];
          const int kind = st == 0 ? -1 : st <= L ? 0 : 1;  // what ran in the last tick
          const int ran_ticks = st == 0 ? 0 : (st - 1) % L + 1;
          // Progress: run ticks less the overhead of every segment, the current one's only as far as past.
          const double ran_s = double(ran_ticks) * tick_s;
          const double progress = double(k - i) * tick_s - (kind < 0 ? double(s) * overhead
                                                                      : double(s - 1) * overhead + std::min(overhead, ran_s));
          // Cannot finish by the deadline even running on from now (continuing its segment): dropped.
          if (t + (W - progress) + (kind < 0 ? overhead : std::max(0.0, overhead - ran_s)) > D + 1e-9) continue;
          const auto relax = [&](int ni, int ns, int nst, double added, double added_spot) {
            if (ni > max_idle || ns > max_segments) return;
            const std::size_t at = index(ni, ns, nst);
            if (c + added < next[at]) {
              next[at] = c + added;
              next_spot[at] = spot_s + added_spot;
            }
          };
          // Idle this tick.
          relax(i + 1, s, 0, 0, 0);
          // Run on `run` (0 spot, 1 on-demand) this tick, continuing the segment or starting one.
          for (int run = 0; run < 2; ++run) {
            if (run == 0 && !spot[k]) continue;
            const bool cont = kind == run;
            const double seg_ran = cont ? ran_s : 0.0;
            const int ns = cont || !(overhead > 0) ? s : s + 1;
            const double base = cont ? progress : double(k - i) * tick_s - double(s) * overhead;  // a new segment adds none yet
            const double gain = segment_gain_s(seg_ran, tick_s, overhead);
            if (ns <= max_segments && base + gain >= W - 1e-9) {
              const double dt = std::max(0.0, overhead - seg_ran) + std::max(0.0, W - base);
              if (t + dt <= D + 1e-9 && c + dt * price[run] < best_cost) {
                best_cost = c + dt * price[run];
                best.met = true;
                best.finish_s = t + dt;
                best.cost_usd = best_cost;
                // The ticks run so far were on spot (spot_s) or on demand: the rest of (k − i)τ.
                best.spot_s = spot_s + (run == 0 ? dt : 0.0);
                best.on_demand_s = double(k - i) * tick_s - spot_s + (run == 1 ? dt : 0.0);
              }
              continue;
            }
            const int nl = std::min(L, (cont ? ran_ticks : 0) + 1);
            relax(i, ns, run == 0 ? nl : L + nl, tick_s * price[run], run == 0 ? tick_s : 0.0);
          }
        }
      }
    }
    std::swap(cost, next);
    std::swap(spot_time, next_spot);
  }
  return best;
}

}  // namespace detail

/// Replays the policies of `options` on `trace` (work_policies.hpp's file comment). Throws
/// spotdnn::invalid_argument for work or deadline not above 0, an overhead, margin or price below 0 or not
/// finite, a stride below 1, a trace without a tick, a window of more than kMaxWorkPolicyTicks ticks, and an
/// omniscient replay beyond kMaxOmniscientCells (with the stride that would do).
[[nodiscard]] inline WorkPolicyReplay replay_work_policies(const PoolTrace& trace, const WorkPolicyOptions& options) {
  constexpr std::string_view fn = "replay_work_policies";
  detail::require_positive(fn, "options.work_s", options.work_s);
  detail::require_positive(fn, "options.deadline_s", options.deadline_s);
  detail::require_non_negative(fn, "options.start_overhead_s", options.start_overhead_s);
  detail::require_non_negative(fn, "options.guard_margin_s", options.guard_margin_s);
  detail::require_non_negative(fn, "options.spot_price_usd_per_hour", options.spot_price_usd_per_hour);
  detail::require_non_negative(fn, "options.on_demand_price_usd_per_hour", options.on_demand_price_usd_per_hour);
  if (options.stride_ticks < 1) detail::fail(fn, "options.stride_ticks", options.stride_ticks, "must be at least 1");
  if (!(options.confidence_level > 0 && options.confidence_level < 1)) {
    detail::fail(fn, "options.confidence_level", options.confidence_level, "must be in (0, 1)");
  }
  if (options.policies.empty()) detail::fail(fn, "options.policies", "[]", "give at least one policy");
  if (!(trace.tick_s > 0) || !std::isfinite(trace.tick_s)) detail::fail(fn, "trace.tick_s", trace.tick_s, "must be a finite number above 0");
  const double tick = trace.tick_s;
  const double window_ticks_real = std::ceil(options.deadline_s / tick - 1e-9);
  if (window_ticks_real > double(kMaxWorkPolicyTicks)) {
    detail::fail(fn, "options.deadline_s", options.deadline_s,
                 "spans more than " + std::to_string(kMaxWorkPolicyTicks) + " ticks of " + detail::format_number(tick) + " s");
  }
  const auto window_ticks = std::int64_t(window_ticks_real);
  const auto trace_ticks = std::int64_t(std::floor(trace.span_s / tick + 1e-9));
  WorkPolicyReplay out;
  out.tick_s = tick;
  const std::vector<char> spot = detail::spot_by_tick(trace, trace_ticks);
  std::vector<std::int64_t> starts;
  for (std::int64_t j = 0; j < trace_ticks; j += options.stride_ticks) {
    if (j + window_ticks <= trace_ticks) {
      starts.push_back(j);
    } else {
      ++out.undecided_windows;
    }
  }
  out.windows = int(starts.size());
  const bool omniscient = std::find(options.policies.begin(), options.policies.end(), WorkPolicy::omniscient) != options.policies.end();
  if (omniscient) {
    const double slack = std::max(0.0, options.deadline_s - options.work_s), o = options.start_overhead_s;
    const double cells = double(starts.size()) * double(window_ticks) * (std::floor(slack / tick) + 1) *
                         (o > 0 ? std::floor(slack / o) + 1 : 1.0) * (1 + 2 * std::max(1.0, std::ceil(o / tick)));
    if (cells > kMaxOmniscientCells) {
      detail::fail(fn, "options.stride_ticks", options.stride_ticks,
                   "the omniscient optimum would visit " + detail::format_number(cells) + " states (at most " +
                       detail::format_number(kMaxOmniscientCells) + "); give a stride of at least " +
                       std::to_string(int(std::ceil(double(options.stride_ticks) * cells / kMaxOmniscientCells))));
    }
  }
  const double last_start_s = starts.empty() ? 0.0 : double(starts.back()) * tick;
  const int effective = starts.empty() ? 0 : int(std::min<double>(double(starts.size()), std::floor(last_start_s / options.deadline_s) + 1));
  const double total_work = double(starts.size()) * double(options.policies.size());
  double done = 0;
  detail::report(options.progress, "replay", "windows", 0, total_work);
  for (WorkPolicy policy : options.policies) {
    WorkPolicyResult r;
    r.policy = policy;
    r.windows = out.windows;
    r.effective_windows = effective;
    std::vector<double> costs, finishes;
    int met = 0;
    double spot_s = 0, on_demand_s = 0, cost_sum = 0;
    for (std::int64_t j0 : starts) {
      const WorkPolicyOutcome w = policy == WorkPolicy::omniscient
                                      ? detail::omniscient_work_schedule(spot.data() + j0, window_ticks, tick, options)
                                      : detail::run_work_policy(policy, spot.data() + j0, window_ticks, tick, options);
      if (policy == WorkPolicy::omniscient && !w.met) ++r.infeasible_windows;
      met += w.met ? 1 : 0;
      costs.push_back(w.cost_usd);
      finishes.push_back(w.finish_s);
      cost_sum += w.cost_usd;
      spot_s += w.spot_s;
      on_demand_s += w.on_demand_s;
      if (++done, std::fmod(done, 256) == 0) detail::report(options.progress, "replay", "windows", done, total_work);
    }
    r.meets_deadline = wilson_interval(met, std::max(1, out.windows), options.confidence_level);
    if (out.windows == 0) r.meets_deadline = ProbabilityEstimate{};
    if (effective > 0) {
      const ProbabilityEstimate e = detail::wilson_bounds(r.meets_deadline.estimate, double(effective), options.confidence_level);
      r.meets_deadline.lower = e.lower;
      r.meets_deadline.upper = e.upper;
    }
    if (out.windows > 0) {
      r.mean_cost_usd = cost_sum / out.windows;
      r.mean_spot_hours = spot_s / 3600 / out.windows;
      r.mean_on_demand_hours = on_demand_s / 3600 / out.windows;
    }
    r.cost_usd = detail::nearest_rank_percentiles(costs);
    r.finish_time_s = detail::nearest_rank_percentiles(finishes);
    out.policies.push_back(r);
  }
  detail::report(options.progress, "replay", "windows", total_work, total_work);
  return out;
}

}  // namespace spotdnn
