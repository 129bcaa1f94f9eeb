#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/fit_revocations.hpp Fits a RevocationModel to spot traces: per pool the hazard by age
/// (every preemption, and the triggers alone), parametric lifetime laws, the waits, the start state, the
/// clustering, gangs, and per region the correlation of its zones (docs/revocations.md).
///
/// Traces of one pool (same type and zone) are pooled into one PoolModel, in the order pools first appear.
/// Each trace is fitted on its window [from, to) = [max(0, from_s), min(span_s, to_s)) of its own clock:
/// an interval is cut there, a part cut off at the end is censored (a preemption at `to` or later is not
/// seen), and one cut at the start is observed from the age it had then (left truncation: its start is
/// known). Intervals that end at or before `from`, or start at or after `to`, are left out.
///
/// What each figure is (the estimators are in the headers named):
/// - hazard_by_age, trigger_hazard_by_age (revocation/hazard_by_age.hpp): the life-table hazard of the
///   intervals whose age is known; intervals already up at the trace's first tick (`age_known` false) are
///   left out (a note in the model's assumptions says how many). The trigger hazard counts as events only
///   the preemptions that are triggers (revocation/preemption_clustering.hpp): a follower's interval keeps
///   its exposure and ends censored.
/// - parametric (revocation/lifetime_mle.hpp): exponential and Weibull MLE on the same intervals.
/// - replacement_wait: slotted traces: from a preemption to the next interval's start in the same slot;
///   none came when the slot has no later interval in the window. Unslotted (`events`) traces: each
///   preemption is matched first-in-first-out to the next node start not yet matched in the trace.
/// - start: up_share = up slot-time / observed slot-time; the age of the instance up at every tick it is up
///   (ticks t_j = j·tick_s in the window), in whole ticks since its interval's first tick; for an interval
///   already up at the trace's start the time since the trace's start, a lower bound of its age; the wait,
///   at every tick a slot is down, until that slot's next up (none came when none does in the window).
///   Unslotted traces are given slots by the same first-in-first-out matching: a node added takes the slot
///   of the earliest preemption not yet replaced, else a slot never used (the trace's `slots` of them, the
///   most nodes up at once), so up_share = mean nodes up / slots. O(intervals · log intervals), whatever
///   the number of ticks.
/// - gang (`counts` traces, and spot groups: `events`): count_share[k] = share of ticks with exactly k slots
///   (nodes) up, k = 0..slots.
/// - spot groups (unslotted traces): the waits are the group's, as replay meets them: after a preemption
///   until the group's next node start, and from a random tick until the next node start
///   (detail::tally_group_waits).
/// - clustering, regions (revocation/preemption_clustering.hpp); a region's joint up pattern
///   (detail::joint_up_pattern).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <array>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/revocation/hazard_by_age.hpp"
#include "spotdnn/revocation/lifetime_mle.hpp"
#include "spotdnn/revocation/market_regimes.hpp"
#include "spotdnn/revocation/pool_law.hpp"
#include "spotdnn/revocation/preemption_clustering.hpp"
#include "spotdnn/revocation/revocation_model.hpp"
#include "spotdnn/revocation/trace.hpp"
#include "spotdnn/revocation/wait_distribution.hpp"

namespace spotdnn {

/// The assumption stated with every model fitted on `availability` or `counts` traces.
inline constexpr const char* kAvailabilityWindowAssumption =
    "availability windows are read as lifetimes: an instance launched in a window lives until the window ends "
    "(the Can't Be Late simulator's assumption)";
/// The assumption stated with every model fitted on `events` traces.
inline constexpr const char* kSpotGroupAssumption =
    "nodes of a spot group: a replacement is whichever node the group adds next";

/// The most age bins a fit may have (what the revocation-model document accepts).
inline constexpr std::size_t kMaxAgeBins = 1000;

/// The most ticks a trace may span, and the most slots it may have, for fit_revocations.
inline constexpr double kMaxFitTraceTicks = 1e12;
inline constexpr int kMaxFitTraceSlots = 100000;

/// How fit_revocations reads the traces.
struct RevocationFitOptions {
  /// Lower edges of the age bins of the hazards (s): 0 first, increasing; the last bin is open above.
  std::vector<double> age_bin_edges_s = {0, 600, 1800, 3600, 7200, 14400, 28800, 57600};
  /// Two preemptions this close belong to one burst (s).
  double burst_window_s = 180;
  /// Of the hazards' Garwood intervals.
  double confidence_level = 0.95;
  /// Fit only [from_s, to_s) of each trace's own clock (s): intervals are cut there and the cut parts
  /// censored (e.g. fit on the first half of a trace and replay the rest).
  std::optional<double> from_s;
  std::optional<double> to_s;
  /// Fit calm and stormy market states per region (MarketRegimes), kept where BIC prefers them.
  bool market_regimes = true;
  /// Their bins on the shared clock (s).
  double regime_bin_s = 1800;

  /// Throws spotdnn::invalid_argument naming the first bad field.
  void validate(std::string_view function = "fit_revocations") const {
    if (age_bin_edges_s.empty()) detail::fail(function, "options.age_bin_edges_s", "[]", "needs at least one edge, 0");
    if (age_bin_edges_s.size() > kMaxAgeBins) {
      detail::fail(function, "options.age_bin_edges_s", std::to_string(age_bin_edges_s.size()) + " edges",
                   "at most " + std::to_string(kMaxAgeBins) + " age bins");
    }
    for (std::size_t b = 0; b < age_bin_edges_s.size(); ++b) {
      const std::string field = "options.age_bin_edges_s[" + std::to_string(b) + "]";
      detail::require_finite(function, field, age_bin_edges_s[b]);
      if (b == 0 && age_bin_edges_s[b] != 0) detail::fail(function, field, age_bin_edges_s[b], "the first age bin must start at 0");
      if (b > 0 && !(age_bin_edges_s[b] > age_bin_edges_s[b - 1])) {
        detail::fail(function, field, age_bin_edges_s[b], "age bin edges must increase");
      }
    }
    detail::require_positive(function, "options.burst_window_s", burst_window_s);
    detail::require_positive(function, "options.regime_bin_s", regime_bin_s);
    if (!(confidence_level > 0 && confidence_level < 1)) {
      detail::fail(function, "options.confidence_level", confidence_level, "must lie strictly between 0 and 1");
    }
    if (from_s) detail::require_finite(function, "options.from_s", *from_s);
    if (to_s) detail::require_finite(function, "options.to_s", *to_s);
    if (from_s && to_s && !(*from_s < *to_s)) {
      detail::fail(function, "options.from_s", *from_s, "must come before options.to_s = " + detail::format_number(*to_s));
    }
  }
};

namespace detail {

/// An up interval cut to a trace's fit window, on the trace's clock.
struct FitInterval {
  double start_s = 0;
  double end_s = 0;
  double born_s = 0;  ///< the interval's own start (before any cut)
  bool preempted = false;
  bool age_known = true;
  int slot = 0;
  bool trigger = true;  ///< for a preemption: not a follower
};

/// One trace as the fit reads it.
struct FitTrace {
  const PoolTrace* trace = nullptr;
  std::size_t pool = 0;
  double from_s = 0, to_s = 0;  ///< the window on its clock
  int slots = 1;                ///< (virtual slots for unslotted traces)
  std::vector<FitInterval> up;
};

/// The number of ticks j·tick_s (j >= 0) before `t`, with times within 1e-9 of a tick read as on it.
inline std::int64_t ticks_before(double t, double tick_s) {
  const double k = t / tick_s;
  if (!(k > 0)) return 0;
  const double nearest = std::round(k);
  return std::int64_t(std::abs(k - nearest) <= 1e-9 * std::max(1.0, nearest) ? nearest : std::ceil(k));
}

inline void validate_fit_trace(const PoolTrace& t, std::size_t index) {
  constexpr std::string_view kFunction = "fit_revocations";
  const std::string at = "traces[" + std::to_string(index) + "]";
  require_non_empty(kFunction, at + ".pool.type", t.pool.type);
  require_non_empty(kFunction, at + ".pool.zone", t.pool.zone);
  require_printable_name(kFunction, at + ".pool.type", t.pool.type);
  require_printable_name(kFunction, at + ".pool.zone", t.pool.zone);
  require_positive(kFunction, at + ".tick_s", t.tick_s);
  require_positive(kFunction, at + ".span_s", t.span_s);
  require_finite(kFunction, at + ".clock_offset_s", t.clock_offset_s);
  if (!(t.span_s / t.tick_s <= kMaxFitTraceTicks)) {
    fail(kFunction, at + ".span_s", t.span_s, "spans more than 1e12 ticks of " + format_number(t.tick_s) + " s");
  }
  if (t.slots < 1 || t.slots > kMaxFitTraceSlots) {
    fail(kFunction, at + ".slots", double(t.slots), "must be a whole number from 1 to " + std::to_string(kMaxFitTraceSlots));
  }
  std::vector<double> slot_end(t.slotted ? std::size_t(t.slots) : 0, 0.0);
  for (std::size_t i = 0; i < t.up.size(); ++i) {
    const UpInterval& u = t.up[i];
    const std::string field = at + ".up[" + std::to_string(i) + "]";
    require_finite(kFunction, field + ".start_s", u.start_s);
    require_finite(kFunction, field + ".end_s", u.end_s);
    if (u.start_s < 0) fail(kFunction, field + ".start_s", u.start_s, "must not be negative");
    if (!(u.end_s > u.start_s)) fail(kFunction, field + ".end_s", u.end_s, "must come after start_s = " + format_number(u.start_s));
    if (u.end_s > t.span_s) fail(kFunction, field + ".end_s", u.end_s, "must not come after span_s = " + format_number(t.span_s));
    if (i > 0 && u.start_s < t.up[i - 1].start_s) fail(kFunction, field + ".start_s", u.start_s, "intervals must be ordered by start_s");
    if (t.slotted) {
      if (u.slot < 0 || u.slot >= t.slots) {
        fail(kFunction, field + ".slot", double(u.slot), "must be from 0 to slots - 1 = " + std::to_string(t.slots - 1));
      }
      if (u.start_s < slot_end[std::size_t(u.slot)]) {
        fail(kFunction, field + ".start_s", u.start_s, "overlaps the previous interval of slot " + std::to_string(u.slot));
      }
      slot_end[std::size_t(u.slot)] = u.end_s;
    }
  }
}

/// Gives the intervals of an unslotted trace slots: a start takes the slot of the earliest preemption not
/// yet replaced, else the lowest slot never used, else a new one. Returns the slot count.
inline int assign_fifo_slots(std::vector<FitInterval>& up, int slots) {
  struct Step {
    double time_s;
    int kind;  // 0 = end (first at one moment), 1 = start
    std::size_t index;
  };
  std::vector<Step> steps;
  steps.reserve(2 * up.size());
  for (std::size_t i = 0; i < up.size(); ++i) {
    steps.push_back({up[i].start_s, 1, i});
    steps.push_back({up[i].end_s, 0, i});
  }
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    return a.time_s != b.time_s ? a.time_s < b.time_s : a.kind != b.kind ? a.kind < b.kind : a.index < b.index;
  });
  std::deque<int> replaced_first;  // slots freed by preemptions, oldest first
  std::set<int> never_used;        // slots never used (or freed by a censored end)
  for (int s = 0; s < slots; ++s) never_used.insert(s);
  int count = slots;
  for (const Step& step : steps) {
    FitInterval& i = up[step.index];
    if (step.kind == 0) {
      if (i.preempted) {
        replaced_first.push_back(i.slot);
      } else {
        never_used.insert(i.slot);
      }
    } else if (!replaced_first.empty()) {
      i.slot = replaced_first.front();
      replaced_first.pop_front();
    } else if (!never_used.empty()) {
      i.slot = *never_used.begin();
      never_used.erase(never_used.begin());
    } else {
      i.slot = count++;
    }
  }
  return count;
}

/// Is moment `t_s` (on the trace's clock) in the ticks counted, [count_first_tick, count_end_tick)? A moment
/// belongs to the tick at or after it (ticks_before); a bound below 0 is open.
inline bool counted_moment(double t_s, const FitTrace& t, std::int64_t count_first_tick, std::int64_t count_end_tick) {
  const std::int64_t tick = ticks_before(t_s, t.trace->tick_s);
  return (count_first_tick < 0 || tick >= count_first_tick) && (count_end_tick < 0 || tick < count_end_tick);
}

/// What the start state, the waits and gangs of one pool gather over its traces.
struct StartTally {
  double up_slot_s = 0, observed_slot_s = 0;
  TickRangeMultiset ages_ticks, waits_ticks;
  std::int64_t waits_none_came = 0;
  std::vector<double> replacement_waits_s;
  std::int64_t replacements_none_came = 0;
  std::vector<std::int64_t> gang_ticks;  ///< ticks with k slots up
  bool gang = false;
};

/// The waits of a spot group (an unslotted trace), as replay meets them: a node is taken wherever the
/// group adds one, so the wait after a preemption at T is until the group's next node start at or after T
/// (none came: no start before the window ends), and the wait from a random tick j is until the next start
/// at or after j (every tick of the window counts, up or not). These replace the first-in-first-out slots'
/// waits, which would make a job wait behind replacements owed to other nodes of the group.
/// Only the ticks [count_first_tick, count_end_tick) are counted, and the preemptions at moments in
/// [moment_first_tick, moment_end_tick) (counted_moment).
inline void tally_group_waits(const FitTrace& t, StartTally& tally, std::int64_t first_tick, std::int64_t end_tick,
                              std::int64_t count_first_tick, std::int64_t count_end_tick, std::int64_t moment_first_tick,
                              std::int64_t moment_end_tick) {
  const double tick = t.trace->tick_s;
  std::vector<double> starts;
  starts.reserve(t.up.size());
  for (const FitInterval& i : t.up) {
    if (i.age_known && i.born_s >= t.from_s) starts.push_back(i.born_s);  // nodes added inside the window
  }
  std::sort(starts.begin(), starts.end());
  for (const FitInterval& i : t.up) {
    if (!i.preempted || !counted_moment(i.end_s, t, moment_first_tick, moment_end_tick)) continue;
    const auto next = std::lower_bound(starts.begin(), starts.end(), i.end_s);
    if (next == starts.end()) {
      ++tally.replacements_none_came;
    } else {
      tally.replacement_waits_s.push_back(*next - i.end_s);
    }
  }
  std::int64_t previous = first_tick - 1;  // the last tick already given its wait
  for (double start_s : starts) {
    // The last tick at or before the start: ticks previous+1 .. at wait at - j ticks (whole ticks); those
    // counted are in [count_first_tick, count_end_tick).
    const std::int64_t at = std::min(std::int64_t(std::floor(start_s / tick + 1e-9)), end_tick - 1);
    const std::int64_t lo = std::max(previous + 1, count_first_tick), hi = std::min(at, count_end_tick - 1);
    if (hi >= lo) tally.waits_ticks.add(at - hi, at - lo);
    previous = std::max(previous, at);
  }
  const std::int64_t lo = std::max(previous + 1, count_first_tick), hi = std::min(end_tick - 1, count_end_tick - 1);
  if (hi >= lo) tally.waits_none_came += hi - lo + 1;
}

/// The region's joint up pattern (RegionCorrelation::joint_up_share): over the period every pool of the
/// region with exactly one single-slot trace was observed together (on the shared clock), the share of the
/// time each pattern of them was up, from the intervals' change points (exact in continuous time).
/// Nothing when fewer than two such pools overlap, or more than kMaxJointPools. With `count_windows` (on the
/// shared clock, sorted and disjoint), only the time in them counts (a market state's: MarketRegimes), and
/// `out.joint_up_share` stays empty when none of it is.
inline void joint_up_pattern(const RevocationModel& model, const std::vector<FitTrace>& fits,
                             const std::vector<std::string>& pool_regions, const std::string& region, RegionCorrelation& out,
                             const std::vector<std::pair<double, double>>* count_windows = nullptr) {
  std::vector<int> traces_of(model.pools.size(), 0);
  for (const FitTrace& f : fits) ++traces_of[f.pool];
  std::vector<const FitTrace*> joint;
  for (const FitTrace& f : fits) {
    if (pool_regions[f.pool] != region || traces_of[f.pool] != 1 || !f.trace->slotted || f.slots != 1 || !(f.to_s > f.from_s)) continue;
    joint.push_back(&f);
  }
  if (joint.size() < 2 || joint.size() > std::size_t(kMaxJointPools)) return;
  double from = -std::numeric_limits<double>::infinity(), to = std::numeric_limits<double>::infinity();
  for (const FitTrace* f : joint) {
    from = std::max(from, f->from_s + f->trace->clock_offset_s);
    to = std::min(to, f->to_s + f->trace->clock_offset_s);
  }
  if (!(to > from)) return;
  struct Change {
    double time_s;
    std::size_t bit;
    int up;  // +1 up, -1 down
  };
  std::vector<Change> changes;
  for (std::size_t b = 0; b < joint.size(); ++b) {
    const double offset = joint[b]->trace->clock_offset_s;
    for (const FitInterval& u : joint[b]->up) {
      const double start = std::max(u.start_s + offset, from), end = std::min(u.end_s + offset, to);
      if (!(end > start)) continue;
      changes.push_back({start, b, +1});
      changes.push_back({end, b, -1});
    }
  }
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.time_s != b.time_s ? a.time_s < b.time_s : a.up < b.up;
  });
  std::vector<double> share(std::size_t(1) << joint.size(), 0.0);
  // The counted time in [a, b): all of it, or its overlap with count_windows (visited in time order).
  std::size_t window = 0;
  const auto counted_s = [&](double a, double b) {
    if (!count_windows) return b - a;
    while (window < count_windows->size() && (*count_windows)[window].second <= a) ++window;
    double sum = 0;
    for (std::size_t w = window; w < count_windows->size() && (*count_windows)[w].first < b; ++w) {
      sum += std::max(0.0, std::min(b, (*count_windows)[w].second) - std::max(a, (*count_windows)[w].first));
    }
    return sum;
  };
  std::size_t pattern = 0;
  double at = from;
  for (const Change& c : changes) {
    if (c.time_s > at) {
      share[pattern] += counted_s(at, c.time_s);
      at = c.time_s;
    }
    pattern = c.up > 0 ? (pattern | (std::size_t(1) << c.bit)) : (pattern & ~(std::size_t(1) << c.bit));
  }
  if (to > at) share[pattern] += counted_s(at, to);
  double total = to - from;
  if (count_windows) {
    total = 0;
    for (double x : share) total += x;
  }
  if (!(total > 0)) return;
  for (double& x : share) x /= total;
  for (const FitTrace* f : joint) out.joint_pools.push_back(model.pools[f->pool].pool.name());
  out.joint_up_share = std::move(share);
}

/// Adds one fit trace to `tally` (see the file comment for what is measured), counting only the ticks
/// [count_first_tick, count_end_tick) of its window (the whole window when not given): the up and observed
/// time, ages, waits and gang counts at those ticks and the replacement waits of preemptions at them, while
/// a wait may end after them (market states: fit_revocations counts each state's moments apart). A bound
/// below 0 is open (a preemption after the last tick of the window is then counted).
inline void tally_start_state(const FitTrace& t, StartTally& tally, std::int64_t count_first_tick = -1,
                              std::int64_t count_end_tick = -1) {
  const double tick = t.trace->tick_s;
  const std::int64_t first_tick = ticks_before(t.from_s, tick), end_tick = ticks_before(t.to_s, tick);
  const std::int64_t cf = count_first_tick < 0 ? first_tick : std::max(count_first_tick, first_tick);
  const std::int64_t ct = count_end_tick < 0 ? end_tick : std::min(count_end_tick, end_tick);
  if ((count_first_tick >= 0 || count_end_tick >= 0) && ct <= cf) return;  // a part of the window without a tick
  // The counted span in time, from tick to tick; the window's own ends where it reaches them (a window need
  // not begin or end on a tick).
  const double count_from_s = cf == first_tick ? t.from_s : double(cf) * tick;
  const double count_to_s = ct == end_tick ? t.to_s : double(ct) * tick;
  tally.observed_slot_s += double(t.slots) * std::max(0.0, count_to_s - count_from_s);
  std::vector<std::vector<std::size_t>> by_slot(std::size_t(t.slots));
  for (std::size_t i = 0; i < t.up.size(); ++i) by_slot[std::size_t(t.up[i].slot)].push_back(i);
  std::vector<std::pair<std::int64_t, std::int64_t>> count_steps;
  const bool slotted = t.trace->slotted;  // a spot group's waits are the group's (tally_group_waits)
  for (const std::vector<std::size_t>& slot : by_slot) {
    std::int64_t cursor = first_tick;
    for (std::size_t k = 0; k < slot.size(); ++k) {
      const FitInterval& i = t.up[slot[k]];
      tally.up_slot_s += std::max(0.0, std::min(i.end_s, count_to_s) - std::max(i.start_s, count_from_s));
      const std::int64_t from = std::max(ticks_before(i.start_s, tick), first_tick);
      const std::int64_t to = std::min(ticks_before(i.end_s, tick), end_tick);
      if (from > cursor && slotted) {  // at tick j the wait is from − j ticks
        const std::int64_t lo = std::max(cursor, cf), hi = std::min(from, ct);
        if (hi > lo) tally.waits_ticks.add(from - (hi - 1), from - lo);
      }
      const std::int64_t up_from = std::max(from, cf), up_to = std::min(to, ct);
      if (up_to > up_from) {
        // Age in whole ticks since the interval's first tick; already up at the trace's start: since then
        // (a lower bound of its age).
        const std::int64_t born = i.age_known ? ticks_before(i.born_s, tick) : 0;
        tally.ages_ticks.add(up_from - born, up_to - 1 - born);
        count_steps.emplace_back(up_from, +1);
        count_steps.emplace_back(up_to, -1);
      }
      cursor = std::max(cursor, to);
      if (i.preempted && slotted && counted_moment(i.end_s, t, count_first_tick, count_end_tick)) {
        if (k + 1 < slot.size()) {
          tally.replacement_waits_s.push_back(std::max(0.0, t.up[slot[k + 1]].start_s - i.end_s));
        } else {
          ++tally.replacements_none_came;
        }
      }
    }
    const std::int64_t lo = std::max(cursor, cf);
    if (ct > lo && slotted) tally.waits_none_came += ct - lo;
  }
  if (!slotted) tally_group_waits(t, tally, first_tick, end_tick, cf, ct, count_first_tick, count_end_tick);
  if ((t.trace->kind != TraceKind::counts && t.trace->slotted) || end_tick <= first_tick) return;
  tally.gang = true;
  if (tally.gang_ticks.size() < std::size_t(t.slots) + 1) tally.gang_ticks.resize(std::size_t(t.slots) + 1, 0);
  std::sort(count_steps.begin(), count_steps.end());
  std::int64_t up = 0, at = cf;
  for (const auto& [tick_index, change] : count_steps) {
    if (tick_index > at) {
      tally.gang_ticks[std::size_t(std::min<std::int64_t>(up, t.slots))] += tick_index - at;
      at = tick_index;
    }
    up += change;
  }
  if (ct > at) tally.gang_ticks[std::size_t(std::min<std::int64_t>(up, t.slots))] += ct - at;
}

/// The start state, replacement wait and gang a tally gathered (its replacement waits are moved out).
inline void tally_figures(StartTally& tally, double tick_s, StartState& start, WaitDistribution& replacement_wait,
                          std::optional<GangObtainability>& gang) {
  start.up_share = tally.observed_slot_s > 0 ? std::min(1.0, tally.up_slot_s / tally.observed_slot_s) : 0.0;
  start.age_quantiles_s = tally.ages_ticks.quantiles_101(tick_s);
  start.wait = make_wait_distribution(tally.waits_ticks, tally.waits_none_came, tick_s);
  replacement_wait = make_wait_distribution(std::move(tally.replacement_waits_s), tally.replacements_none_came);
  gang.reset();
  if (tally.gang) {
    std::int64_t total = 0;
    for (std::int64_t ticks : tally.gang_ticks) total += ticks;
    if (total <= 0) return;
    GangObtainability g;
    g.requested = int(tally.gang_ticks.size()) - 1;
    for (std::int64_t ticks : tally.gang_ticks) g.count_share.push_back(double(ticks) / double(total));
    gang = std::move(g);
  }
}

/// The most bins of a region's market-state fit (417 days at the default 30 minutes): a longer span gets
/// wider bins, which bounds the fit's time (about 0.6 s at the most on the us-east-1 traces).
inline constexpr std::size_t kMaxRegimeBins = 20000;
/// The most rounds of fit_market_states's alternation between the states and the baseline hazard.
inline constexpr int kMaxHazardRounds = 50;
/// The fewest observed bins each market state must be given: a state seen for less (2 h at the default
/// bin) is a single episode, such as a spot group filling at its trace's start, and figures per state
/// (up shares, waits) would rest on a handful of ticks.
inline constexpr int kMinMarketStateBins = 4;

/// Calm and stormy market states per region (MarketRegimes; the estimator and its equations in
/// revocation/market_regimes.hpp): the region's bins of width options.regime_bin_s over the span its
/// traces cover on the shared clock; per bin the preemptions that came alone, their expected number under
/// each pool's trigger hazard by age (an interval up at the trace's start aged from then), the instances
/// that came after a wait (started inside the window) and their expected number at each pool's mean return
/// rate over its down slot-time in the bin. Where two states win by BIC, each bin is given its more
/// probable state, and each pool's figures per state (PoolInMarketState) are tallied over the ticks of its
/// bins (tally_start_state; a wait may end in a bin of the other state), its shocks per state are the bursts
/// of two or more that began in it over the time observed in it, and the region's joint up pattern is
/// taken per state over the same time. A region where one state wins, where a state is given fewer than
/// kMinMarketStateBins observed bins, or without a preemption or an arrival, keeps one state (no
/// MarketRegimes).
inline void fit_market_states(RevocationModel& model, const std::vector<FitTrace>& fits, const std::vector<Preemption>& preemptions,
                              const std::vector<std::string>& pool_regions, const RevocationFitOptions& options) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  std::map<std::string, std::vector<std::size_t>> region_pools;
  for (std::size_t pool = 0; pool < model.pools.size(); ++pool) region_pools[pool_regions[pool]].push_back(pool);
  for (const auto& [region, pools] : region_pools) {
    double from = std::numeric_limits<double>::infinity(), to = -from;
    for (const FitTrace& f : fits) {
      if (pool_regions[f.pool] != region || !(f.to_s > f.from_s)) continue;
      from = std::min(from, f.from_s + f.trace->clock_offset_s);
      to = std::max(to, f.to_s + f.trace->clock_offset_s);
    }
    if (!(to > from)) continue;
    const double width = std::max(options.regime_bin_s, (to - from) / double(kMaxRegimeBins));
    const std::size_t bins = std::max<std::size_t>(1, std::size_t(std::ceil((to - from) / width)));
    const auto bin_of = [&](double t) {
      return std::min(bins - 1, std::size_t(std::max(0.0, std::floor((t - from) / width))));
    };
    // The bin of a moment that ends a span (a preemption ends an up time, an arrival a down time): the one
    // holding the span's last instant, so that an event on a bin's edge falls where its exposure is.
    const auto bin_ending_at = [&](double t) {
      return std::min(bins - 1, std::size_t(std::max(0.0, std::ceil((t - from) / width) - 1)));
    };
    // Per pool: instance-time per (time bin, age bin), the preemptions that came alone per (time bin, age
    // bin), arrivals and down slot-time per time bin.
    const std::vector<double>& edges = model.age_bin_edges_s;
    const std::size_t ages = edges.size();
    const auto age_bin_of = [&](double age_s) {
      return std::size_t(std::upper_bound(edges.begin(), edges.end(), age_s) - edges.begin()) - 1;
    };
    struct PoolBins {
      std::vector<double> exposure_s, preemptions;  // [time bin · ages + age bin]
      std::vector<double> down_s, arrivals;         // per time bin
    };
    std::vector<PoolBins> of_pool(pools.size());
    for (std::size_t j = 0; j < pools.size(); ++j) {
      PoolBins& pb = of_pool[j];
      pb.exposure_s.assign(bins * ages, 0.0);
      pb.preemptions.assign(bins * ages, 0.0);
      pb.down_s.assign(bins, 0.0);
      pb.arrivals.assign(bins, 0.0);
      for (const FitTrace& f : fits) {
        if (f.pool != pools[j] || !(f.to_s > f.from_s)) continue;
        const double offset = f.trace->clock_offset_s;
        // Slot-time observed, less slot-time up: down.
        const auto add_span = [&](double a, double b, double weight) {
          for (std::size_t k = bin_of(a); k < bins && a < b; ++k) {
            const double edge = std::min(b, from + double(k + 1) * width);
            pb.down_s[k] += weight * (edge - a);
            a = edge;
          }
        };
        add_span(f.from_s + offset, f.to_s + offset, double(f.slots));
        for (const FitInterval& u : f.up) {
          const double start = u.start_s + offset, end = u.end_s + offset;
          add_span(start, end, -1.0);
          const double age_at_start = u.start_s - (u.age_known ? u.born_s : f.from_s);
          // Cut at time-bin and age-bin edges.
          double a = start;
          while (a < end) {
            const std::size_t k = bin_of(a), g = age_bin_of(age_at_start + (a - start));
            double b = std::min(end, from + double(k + 1) * width);
            if (g + 1 < ages) b = std::min(b, start + (edges[g + 1] - age_at_start));
            if (!(b > a)) b = std::nextafter(a, kInfinity);  // an edge within rounding: step past it
            pb.exposure_s[k * ages + g] += b - a;
            a = b;
          }
          if (u.preempted && u.trigger) {
            pb.preemptions[bin_ending_at(end) * ages + event_age_bin(edges, age_at_start + (end - start))] += 1;
          }
          if (u.age_known && u.born_s > f.from_s) pb.arrivals[bin_ending_at(u.born_s + offset)] += 1;
        }
      }
    }
    // The baseline hazard per pool and age bin (per s), first the one-state one.
    std::vector<std::vector<double>> baseline(pools.size(), std::vector<double>(ages, 0.0));
    for (std::size_t j = 0; j < pools.size(); ++j) {
      for (std::size_t g = 0; g < ages; ++g) {
        double events = 0, exposure = 0;
        for (std::size_t k = 0; k < bins; ++k) events += of_pool[j].preemptions[k * ages + g], exposure += of_pool[j].exposure_s[k * ages + g];
        baseline[j][g] = exposure > 0 ? events / exposure : 0.0;
      }
    }
    // Arrivals at each pool's mean return rate over its down slot-time.
    std::vector<RegimeBin> counts(bins);
    for (const PoolBins& pb : of_pool) {
      double total_down_s = 0, total_arrivals = 0;
      for (std::size_t k = 0; k < bins; ++k) total_down_s += std::max(0.0, pb.down_s[k]), total_arrivals += pb.arrivals[k];
      const double return_rate_per_s = total_down_s > 0 ? total_arrivals / total_down_s : 0.0;
      // An event where nothing was exposed to it (a node added with no slot down, as a spot group's
      // first-in-first-out slots can show; a preemption at an age whose hazard is 0) says nothing of a
      // rate: left out, as a Poisson law of mean 0 cannot give it.
      for (std::size_t k = 0; k < bins; ++k) {
        const double expected_arrivals = return_rate_per_s * std::max(0.0, pb.down_s[k]);
        if (expected_arrivals > 0) counts[k].arrivals += pb.arrivals[k], counts[k].expected_arrivals += expected_arrivals;
      }
    }
    // Proportional hazards, m_s · h(age): EM for the states given h, then h given the states' posteriors,
    // h_g = Σ events at ages g / Σ_b (γ_b(0) m_0 + γ_b(1) m_1) · exposure at ages g in bin b, until the
    // log-likelihood settles (at most kMaxHazardRounds rounds).
    RegimeFit fit;
    double previous_log_likelihood = -kInfinity;
    for (int round = 0; round < kMaxHazardRounds; ++round) {
      for (RegimeBin& b : counts) b.preemptions = b.expected_preemptions = 0;
      for (std::size_t j = 0; j < pools.size(); ++j) {
        for (std::size_t k = 0; k < bins; ++k) {
          for (std::size_t g = 0; g < ages; ++g) {
            const double expected = baseline[j][g] * of_pool[j].exposure_s[k * ages + g];
            if (!(expected > 0)) continue;  // an event here cannot be given by a rate of 0: left out (above)
            counts[k].expected_preemptions += expected;
            counts[k].preemptions += of_pool[j].preemptions[k * ages + g];
          }
        }
      }
      fit = fit_market_regimes(counts, width);
      if (!fit.two_states_better) break;
      if (std::abs(fit.log_likelihood - previous_log_likelihood) <= 1e-9 * std::max(1.0, std::abs(fit.log_likelihood))) break;
      previous_log_likelihood = fit.log_likelihood;
      for (std::size_t j = 0; j < pools.size(); ++j) {
        for (std::size_t g = 0; g < ages; ++g) {
          double events = 0, weighted = 0;
          for (std::size_t k = 0; k < bins; ++k) {
            const double m = fit.posterior[k][0] * fit.hazard_multiplier[0] + fit.posterior[k][1] * fit.hazard_multiplier[1];
            events += of_pool[j].preemptions[k * ages + g];
            weighted += m * of_pool[j].exposure_s[k * ages + g];
          }
          if (weighted > 0) baseline[j][g] = events / weighted;
        }
      }
    }
    if (!fit.two_states_better) continue;

    // Each bin's more probable state, as windows on the shared clock (the first and last open).
    std::array<std::vector<std::pair<double, double>>, 2> windows;
    std::array<int, 2> decoded{0, 0};
    for (std::size_t k = 0; k < bins; ++k) {
      const int state = fit.state_of(k);
      if (counts[k].observed()) ++decoded[std::size_t(state)];
      const double a = k == 0 ? -std::numeric_limits<double>::infinity() : from + double(k) * width;
      const double b = k + 1 == bins ? std::numeric_limits<double>::infinity() : from + double(k + 1) * width;
      std::vector<std::pair<double, double>>& w = windows[std::size_t(state)];
      if (!w.empty() && w.back().second == a) {
        w.back().second = b;
      } else {
        w.emplace_back(a, b);
      }
    }
    if (decoded[0] < kMinMarketStateBins || decoded[1] < kMinMarketStateBins) continue;

    MarketRegimes regimes;
    regimes.region = region;
    regimes.bin_s = width;
    regimes.bins = fit.observed_bins;
    regimes.log_likelihood = fit.log_likelihood;
    regimes.one_state_log_likelihood = fit.one_state_log_likelihood;
    for (std::size_t s = 0; s < 2; ++s) {
      MarketState state;
      state.time_share = double(decoded[s]) / double(decoded[0] + decoded[1]);
      state.hazard_multiplier = fit.hazard_multiplier[s];
      state.arrival_multiplier = fit.arrival_multiplier[s];
      state.leave_rate_per_hour = fit.leave_rate_per_s[s] * units::kSecondsPerHour;
      regimes.states.push_back(state);
    }
    for (std::size_t j = 0; j < pools.size(); ++j) {
      const std::size_t pool = pools[j];
      PoolModel& p = model.pools[pool];
      regimes.pools.push_back(p.pool.name());
      // The pool's bursts of two or more (chains within the window), by the time they began.
      std::vector<double> shock_times_s;
      if (p.clustering.shocks > 0) {
        std::vector<double> times;
        for (const Preemption& q : preemptions) {
          if (q.pool == pool) times.push_back(q.time_s);
        }
        std::sort(times.begin(), times.end());
        for (std::size_t first = 0; first < times.size();) {
          std::size_t last = first;
          while (last + 1 < times.size() && times[last + 1] - times[last] <= model.burst_window_s) ++last;
          if (last > first) shock_times_s.push_back(times[first]);
          first = last + 1;
        }
      }
      p.in_state.clear();
      for (std::size_t s = 0; s < 2; ++s) {
        StartTally tally;
        PoolInMarketState in;
        for (const FitTrace& f : fits) {
          if (f.pool != pool || !(f.to_s > f.from_s)) continue;
          const double offset = f.trace->clock_offset_s;
          for (const auto& [a, b] : windows[s]) {
            const double a_own = a - offset, b_own = b - offset;  // on the trace's clock
            if (!(b_own > f.from_s) || !(a_own < f.to_s)) continue;
            in.observed_s += std::min(b_own, f.to_s) - std::max(a_own, f.from_s);
            const std::int64_t first_tick = std::isfinite(a_own) && a_own > 0 ? ticks_before(a_own, f.trace->tick_s) : -1;
            const std::int64_t end_tick = std::isfinite(b_own) ? ticks_before(b_own, f.trace->tick_s) : -1;
            if (end_tick == 0) continue;
            tally_start_state(f, tally, first_tick, end_tick);
          }
        }
        // The hazard by age in the state: m_s · h(age) (proportional hazards), beside the events and
        // exposure its bins held.
        for (std::size_t g = 0; g < ages; ++g) {
          HazardBin h;
          h.from_age_s = edges[g];
          h.to_age_s = g + 1 < ages ? edges[g + 1] : kInfinity;
          double events = 0;
          for (std::size_t k = 0; k < bins; ++k) {
            if (fit.state_of(k) != int(s)) continue;
            events += of_pool[j].preemptions[k * ages + g];
            h.exposure_s += of_pool[j].exposure_s[k * ages + g];
          }
          h.events = saturated_int(std::int64_t(events));
          h.hazard_per_hour = fit.hazard_multiplier[s] * baseline[j][g] * units::kSecondsPerHour;
          const PoissonRateInterval interval = garwood_interval(h.events, h.exposure_s, model.confidence_level);
          h.lower_per_hour = interval.lower_per_s * units::kSecondsPerHour;
          h.upper_per_hour = interval.upper_per_s * units::kSecondsPerHour;
          in.trigger_hazard_by_age.push_back(h);
        }
        if (in.observed_s > 0) {
          tally_figures(tally, p.tick_s, in.start, in.replacement_wait, in.gang);
          if (in.start.age_quantiles_s.empty()) in.start.age_quantiles_s = p.start.age_quantiles_s;
          if (in.replacement_wait.observed == 0) in.replacement_wait = p.replacement_wait;
          std::size_t shocks = 0;
          for (double t : shock_times_s) {
            for (const auto& [a, b] : windows[s]) shocks += a <= t && t < b ? 1 : 0;
          }
          in.shock_rate_per_hour = double(shocks) / (in.observed_s / units::kSecondsPerHour);
        } else {  // never observed in the state: its figures over all
          in.start = p.start;
          in.replacement_wait = p.replacement_wait;
          in.gang = p.gang;
          in.shock_rate_per_hour = p.clustering.shock_rate_per_hour;
        }
        p.in_state.push_back(std::move(in));
      }
    }
    for (const RegionCorrelation& r : model.regions) {
      if (r.region != region || r.joint_pools.empty()) continue;
      for (std::size_t s = 0; s < 2; ++s) {
        RegionCorrelation in_state;
        joint_up_pattern(model, fits, pool_regions, region, in_state, &windows[s]);
        regimes.joint_up_share_by_state.push_back(in_state.joint_up_share.empty() ? r.joint_up_share : in_state.joint_up_share);
      }
    }
    model.regimes.push_back(std::move(regimes));
  }
}

}  // namespace detail

/// Fits a revocation model to `traces` (see the file comment and docs/revocations.md). Throws
/// spotdnn::invalid_argument for bad options (edges not increasing from 0, a window <= 0, a level outside
/// (0, 1), from_s >= to_s), no traces, a malformed trace (intervals out of order, overlapping in a slot,
/// outside [0, span_s]), traces of one pool with different kinds or ticks, and a window that leaves a pool
/// nothing observed.
[[nodiscard]] inline RevocationModel fit_revocations(const std::vector<PoolTrace>& traces,
                                                     const RevocationFitOptions& options = {}) {
  constexpr std::string_view kFunction = "fit_revocations";
  options.validate(kFunction);
  if (traces.empty()) detail::fail(kFunction, "traces", "[]", "give at least one trace");
  const double window_s = options.burst_window_s;

  RevocationModel model;
  model.burst_window_s = window_s;
  model.confidence_level = options.confidence_level;
  model.age_bin_edges_s = options.age_bin_edges_s;

  // Pools in order of first appearance; each trace cut to its window.
  std::vector<detail::FitTrace> fits;
  std::map<PoolId, std::size_t> pool_index;
  for (std::size_t k = 0; k < traces.size(); ++k) {
    const PoolTrace& t = traces[k];
    detail::validate_fit_trace(t, k);
    auto [found, added] = pool_index.emplace(t.pool, model.pools.size());
    if (added) {
      PoolModel p;
      p.pool = t.pool;
      p.kind = t.kind;
      p.tick_s = t.tick_s;
      p.from_s = std::numeric_limits<double>::infinity();
      p.to_s = -std::numeric_limits<double>::infinity();
      p.clustering.window_s = window_s;
      model.pools.push_back(std::move(p));
    }
    PoolModel& p = model.pools[found->second];
    const std::string at = "traces[" + std::to_string(k) + "]";
    if (t.kind != p.kind) {
      detail::fail(kFunction, at + ".kind", std::string(to_string(t.kind)),
                   "traces of pool " + p.pool.name() + " must have one kind (an earlier one is " + std::string(to_string(p.kind)) + ")");
    }
    if (std::abs(t.tick_s - p.tick_s) > 1e-9 * p.tick_s) {
      detail::fail(kFunction, at + ".tick_s", t.tick_s,
                   "traces of pool " + p.pool.name() + " must have one tick (an earlier one has " + detail::format_number(p.tick_s) + " s)");
    }
    p.sources.push_back(t.source);
    if (!t.observed_from.empty() && (p.observed_from.empty() || t.observed_from < p.observed_from)) p.observed_from = t.observed_from;

    detail::FitTrace f;
    f.trace = &t;
    f.pool = found->second;
    f.from_s = std::max(0.0, options.from_s.value_or(0.0));
    f.to_s = std::min(t.span_s, options.to_s.value_or(t.span_s));
    f.slots = t.slots;
    if (f.to_s > f.from_s) {
      p.from_s = std::min(p.from_s, f.from_s);
      p.to_s = std::max(p.to_s, f.to_s);
      for (const UpInterval& u : t.up) {
        if (u.end_s <= f.from_s || u.start_s >= f.to_s) continue;
        detail::FitInterval i;
        i.start_s = std::max(u.start_s, f.from_s);
        i.end_s = std::min(u.end_s, f.to_s);
        i.born_s = u.start_s;
        i.preempted = u.preempted && u.end_s < f.to_s;
        i.age_known = u.age_known;
        i.slot = t.slotted ? u.slot : 0;
        f.up.push_back(i);
      }
      if (!t.slotted) f.slots = detail::assign_fifo_slots(f.up, t.slots);
    }
    fits.push_back(std::move(f));
  }
  for (PoolModel& p : model.pools) {
    if (!(p.to_s > p.from_s)) {
      detail::fail(kFunction, "options.to_s", options.to_s ? detail::format_number(*options.to_s) : std::string("none"),
                   "leaves pool " + p.pool.name() + " nothing observed (from_s = " +
                       detail::format_number(options.from_s.value_or(0.0)) + ")");
    }
  }

  // Every preemption on the shared clock; followers marked.
  std::vector<std::string> pool_names, pool_zones, pool_regions;
  for (const PoolModel& p : model.pools) {
    pool_names.push_back(p.pool.name());
    pool_zones.push_back(p.pool.zone);
    pool_regions.push_back(region_of_zone(p.pool.zone));
  }
  std::vector<Preemption> preemptions;
  std::vector<std::pair<std::size_t, std::size_t>> preempted_interval;  // by sequence: (fit, interval)
  for (std::size_t f = 0; f < fits.size(); ++f) {
    const double offset = fits[f].trace->clock_offset_s;
    for (std::size_t i = 0; i < fits[f].up.size(); ++i) {
      const detail::FitInterval& u = fits[f].up[i];
      if (!u.preempted) continue;
      Preemption p;
      p.time_s = u.end_s + offset;
      p.started_s = u.born_s + offset;
      p.pool = fits[f].pool;
      p.slot = u.slot;
      p.sequence = preemptions.size();
      preemptions.push_back(p);
      preempted_interval.emplace_back(f, i);
    }
  }
  mark_followers(preemptions, pool_names, pool_zones, pool_regions, window_s);
  // Members of a pool's bursts of two or more (in pools that held two instances at once) are the shocks'.
  {
    std::vector<std::vector<SharedClockInterval>> pool_intervals(model.pools.size());
    for (const detail::FitTrace& f : fits) {
      for (const detail::FitInterval& u : f.up) {
        pool_intervals[f.pool].push_back({u.start_s + f.trace->clock_offset_s, u.end_s + f.trace->clock_offset_s, u.preempted});
      }
    }
    std::vector<std::vector<std::size_t>> of_pool(model.pools.size());
    for (std::size_t q = 0; q < preemptions.size(); ++q) of_pool[preemptions[q].pool].push_back(q);
    for (std::size_t pool = 0; pool < model.pools.size(); ++pool) {
      if (most_up_at_once(pool_intervals[pool]) < 2) continue;
      std::vector<std::size_t>& own = of_pool[pool];  // already in time order (mark_followers sorted them)
      for (std::size_t first = 0; first < own.size();) {
        std::size_t last = first;
        while (last + 1 < own.size() && preemptions[own[last + 1]].time_s - preemptions[own[last]].time_s <= window_s) ++last;
        if (last > first) {
          for (std::size_t k = first; k <= last; ++k) preemptions[own[k]].in_pool_burst = true;
        }
        first = last + 1;
      }
    }
  }
  for (const Preemption& p : preemptions) {
    const auto [f, i] = preempted_interval[p.sequence];
    fits[f].up[i].trigger = p.alone();
  }

  // Per pool.
  std::vector<std::int64_t> unknown_ages(model.pools.size(), 0);
  for (std::size_t pool = 0; pool < model.pools.size(); ++pool) {
    PoolModel& p = model.pools[pool];
    std::vector<AgeSpan> spans, trigger_spans;
    std::vector<SharedClockInterval> shared;
    std::vector<std::pair<double, double>> windows;
    detail::StartTally tally;
    std::int64_t instances = 0, preempted = 0;
    for (const detail::FitTrace& f : fits) {
      if (f.pool != pool || !(f.to_s > f.from_s)) continue;
      const double offset = f.trace->clock_offset_s;
      windows.emplace_back(f.from_s + offset, f.to_s + offset);
      for (const detail::FitInterval& u : f.up) {
        ++instances;
        if (u.preempted) ++preempted;
        p.exposure_s += u.end_s - u.start_s;
        shared.push_back({u.start_s + offset, u.end_s + offset, u.preempted});
        if (!u.age_known) {
          ++unknown_ages[pool];
          continue;
        }
        spans.push_back({u.start_s - u.born_s, u.end_s - u.born_s, u.preempted});
        trigger_spans.push_back({u.start_s - u.born_s, u.end_s - u.born_s, u.preempted && u.trigger});
      }
      detail::tally_start_state(f, tally);
    }
    p.instances = detail::saturated_int(instances);
    p.preemptions = detail::saturated_int(preempted);
    p.hazard_by_age = hazard_by_age(spans, options.age_bin_edges_s, options.confidence_level);
    p.trigger_hazard_by_age = hazard_by_age(trigger_spans, options.age_bin_edges_s, options.confidence_level);
    p.parametric = fit_parametric_lifetimes(spans, p.hazard_by_age);

    detail::tally_figures(tally, p.tick_s, p.start, p.replacement_wait, p.gang);

    std::vector<Preemption> own;
    for (const Preemption& q : preemptions) {
      if (q.pool == pool) own.push_back(q);
    }
    p.clustering = pool_clustering(own, shared, union_length_s(windows), window_s);
  }

  // Per region with two zones or more.
  std::map<std::string, std::set<std::string>> region_zones;
  for (std::size_t pool = 0; pool < model.pools.size(); ++pool) region_zones[pool_regions[pool]].insert(pool_zones[pool]);
  for (const auto& [region, zone_set] : region_zones) {
    if (zone_set.size() < 2) continue;
    const std::vector<std::string> zone_list(zone_set.begin(), zone_set.end());
    std::vector<ZoneObservation> zones(zone_list.size());
    const auto zone_index = [&](const std::string& zone) {
      return std::size_t(std::lower_bound(zone_list.begin(), zone_list.end(), zone) - zone_list.begin());
    };
    for (std::size_t z = 0; z < zone_list.size(); ++z) zones[z].zone = zone_list[z];
    for (const detail::FitTrace& f : fits) {
      if (pool_regions[f.pool] != region || !(f.to_s > f.from_s)) continue;
      ZoneObservation& z = zones[zone_index(pool_zones[f.pool])];
      const double offset = f.trace->clock_offset_s;
      z.windows_s.emplace_back(f.from_s + offset, f.to_s + offset);
      for (const detail::FitInterval& u : f.up) {
        z.intervals.push_back({u.start_s + offset, u.end_s + offset, u.preempted});
        if (u.preempted) z.preemption_times_s.push_back(u.end_s + offset);
      }
    }
    std::vector<Preemption> in_region;
    std::vector<std::size_t> zone_of;
    for (const Preemption& q : preemptions) {
      if (pool_regions[q.pool] != region) continue;
      in_region.push_back(q);
      zone_of.push_back(zone_index(pool_zones[q.pool]));
    }
    model.regions.push_back(region_correlation(region, std::move(zones), in_region, zone_of, window_s));
    detail::joint_up_pattern(model, fits, pool_regions, region, model.regions.back());
  }

  if (options.market_regimes) detail::fit_market_states(model, fits, preemptions, pool_regions, options);

  // What the model assumes.
  bool windows_as_lifetimes = false, spot_group = false;
  for (const PoolModel& p : model.pools) {
    windows_as_lifetimes = windows_as_lifetimes || p.kind == TraceKind::availability || p.kind == TraceKind::counts;
    spot_group = spot_group || p.kind == TraceKind::events;
  }
  if (windows_as_lifetimes) model.assumptions.emplace_back(kAvailabilityWindowAssumption);
  if (spot_group) model.assumptions.emplace_back(kSpotGroupAssumption);
  for (std::size_t pool = 0; pool < model.pools.size(); ++pool) {
    if (unknown_ages[pool] == 0) continue;
    model.assumptions.push_back(
        model.pools[pool].pool.name() + ": " + std::to_string(unknown_ages[pool]) +
        (unknown_ages[pool] == 1 ? " instance" : " instances") +
        " already up at the trace's start (age unknown) left out of the hazards and parametric fits; counted in "
        "the clustering, waits and start state (aged from the trace's start, a lower bound)");
  }
  return model;
}

}  // namespace spotdnn
