#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/replay.hpp A training job run against real spot traces from every start tick: the
/// replayed probability of meeting the deadline, finish-time and cost percentiles.
///
/// A model predicts; a replay checks. replay() runs one job (a cluster training to a target loss, or
/// replay_work(): a fixed amount of work on one instance) against the traces themselves, once per start
/// window, and counts how often it met the deadline. The contract:
///
/// **Clock and windows.** Traces share one clock: a trace's time t is clock_offset_s + t on it. The traces
/// *involved* are those whose pool type has workers (a work job: its one trace). The common tick is the
/// largest tick_s of them; the observed period runs from the latest trace start to the earliest trace end
/// (E). A window starts at every (stride_ticks × common tick) from the latest trace start, while before E.
/// Each window is a job of its own: it starts with no instance and nothing trained.
///
/// **Workers and slots.** Worker i (i = 0..n_T − 1) of type T goes to the traces whose pool type is T,
/// round-robin in the order given: trace (i mod m), slot (i / m) of it (m traces of T). A slotted trace
/// must hold a slot for every worker it gets. On its slot a worker is *up* at the window start t0 when an
/// interval of the slot covers t0 (found up, as the trace shows), else from the start of the slot's next
/// interval; when its interval ends (a preemption, or an availability window's end) it waits for the
/// slot's next interval (the trace's replacement). On an unslotted (`events`) trace the workers it gets
/// take nodes: at t0, in worker order, each takes a node that is up and not taken (drawn at random: a
/// deterministic shuffle by a hash of t0 and the worker of the nodes up, so its age is that of a random
/// node up; the order the shuffles leave depends on the windows before, so on --stride too),
/// else (in worker order) the next node added after t0 that nobody took; after its node is removed at T a
/// worker takes the next node added at or after T that nobody took (waiting workers are served first come,
/// first served; a node up but taken by nobody is not taken later). At equal times removals come before
/// additions, so a node added at the moment another is removed can replace it.
///
/// **Training.** An instance up at u trains from u + join_delay_s (the boot and joining the PS) while it is
/// still up; a work job also loses restart_overhead_s at each start and restart (the first included), so it
/// trains from u + join_delay_s + restart_overhead_s. A cluster job trains at the rate the performance
/// model gives the workers training at each moment (PerformanceModel::estimate, docs/model.md eqs. (1)–(8)),
/// and progress carries across every change as the loss reached (revocation/progress.hpp: loss_curve(),
/// LossCurve::iterations_at() and loss_at(), the same arithmetic as simulate()'s scenarios); a preemption
/// costs time, not progress (asynchronous PS). Everything that happens at one moment changes the cluster
/// once: workers that join together start training together (from the loss at iteration 0 of the cluster
/// they form, as simulate()'s initial cluster does), not one after another. A work job progresses one
/// second of work per second of training.
///
/// **Outcome.** The job finishes when the target loss (or work_s) is reached; it meets the deadline when
/// finish − t0 ≤ deadline_s. A window is decided when its deadline t0 + deadline_s is at or before E, the
/// traces' end, whatever its job did: deciding also the windows after it whose job happened to finish
/// quickly would count the fast ones and leave out the slow ones, and lean towards success. A decided
/// window whose job has not finished by E is missed and *unfinished* (finish
/// time +inf). Any other window (the traces end before its deadline) is *undecided*: not run, left out of
/// every figure and counted.
///
/// **Interval.** Windows a stride apart overlap: two windows closer than the deadline share part of the
/// trace, and their outcomes are not independent trials. A Wilson interval over every window would claim
/// the precision of 20,000 trials from a week holding a few hundred jobs' worth of market. The interval is
/// the Wilson interval of the replayed share over the *effective* count: the disjoint windows of the
/// deadline's length the decided windows cover, floor(last decided start / deadline) + 1 (at most the
/// decided count), the count a replay of back-to-back jobs would have (the block idea of batch means:
/// G. S. Fishman, "Monte Carlo: Concepts, Algorithms, and Applications", Springer 1996, section 6.6). The point
/// estimate stays the share of all decided windows. A market's calm and stormy days correlate even disjoint
/// windows, so the interval is still a lower bound on the uncertainty of a trace this long.
///
/// **Cost.** Per second: each instance from its up time (the boot included) until it is preempted or the
/// job ends (its finish, or E for an unfinished one), at its type's catalog price (a work job: the
/// options' spot price; an on-demand worker a policy added: the type's on-demand price); the on-demand PS
/// from t0 to the job's end when PredictOptions charges it. A job left with nothing to happen (no
/// instance, no capacity coming for any worker, no guard to switch) is abandoned at that moment: unfinished,
/// billed until then rather than until E.
///
/// **Policies** (ReplayOptions::policy, replay_policy.hpp; cluster jobs). `same_type` is the behaviour
/// above: a worker whose instance ends waits for its slot's next interval or its trace's next node. The
/// others *retire* the worker (its slot becomes free capacity): `none` replaces nothing; `replan` calls
/// the exact re-plan (Replanner::policy(), replan.hpp) once at each moment one or more instances end, with
/// the survivors (every worker not retired, waiting ones included: their request is open), the loss
/// reached, the time since t0 and the deadline, excluding types without a trace (no capacity to draw) unless
/// bought on demand; each worker it adds takes the free slot of its type (any trace of the type, every slot
/// of it: with replan and guard every trace of a worker type is involved, so the observed period is theirs
/// together) whose next interval comes soonest, else queues on the type's events traces, else is not
/// placed (the traces have no capacity for it); an on-demand type is always there. `guard` is replan on spot
/// until the first moment T_od(ℓ) ≥ (T − t) − m (replay_policy.hpp: T_od = d + K·(1/(L − a) − 1/(ℓ − a)),
/// found exactly between events); then the on-demand re-plan's additions (the cheapest that meets the
/// deadline, else the fastest; survivors: the on-demand workers) are bought at once and join after the
/// delay, workers still waiting for spot are withdrawn, and no spot is asked for again. A real controller
/// (`spotdnn watch`) looks every --interval; the replay switches at the exact moment, so a controller
/// needs its margin to cover its interval and a slow launch.
///
/// **Speed.** Windows are visited in time order with a moving cursor per slot (the first interval ending
/// after t0) and a sweep of the nodes up at t0 per events trace, so a window costs O(workers + changes
/// until its job ends); the model's estimate and loss curve are cached per count of training workers per
/// type. A 45-day trace of 195 s ticks (about 20,000 windows) with a few workers replays in milliseconds
/// (bench/bench_replay.cpp). The work is bounded by kMaxReplayEvents.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/errors.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/progress.hpp"
#include "spotdnn/revocation/progress.hpp"
#include "spotdnn/revocation/replay_policy.hpp"
#include "spotdnn/revocation/simulate.hpp"
#include "spotdnn/revocation/trace.hpp"
#include "spotdnn/status.hpp"
#include "spotdnn/units.hpp"

namespace spotdnn {

/// Most events (an instance up, joining or preempted, a node taken, a worker placed at a window's start)
/// one replay may handle: 2·10⁸, a few seconds. A replay above it stops with spotdnn::invalid_argument
/// (use a larger stride, fewer workers or a shorter trace).
inline constexpr std::int64_t kMaxReplayEvents = 200000000;

/// Most start windows of one replay: 10⁷ (use a larger stride).
inline constexpr std::int64_t kMaxReplayWindows = 10000000;

/// Options of replay() and replay_work(). Plain fields, all defaulted but the deadline.
struct ReplayOptions {
  double deadline_s = 0;          ///< from the window's start (s); must be > 0
  double join_delay_s = 120;      ///< from an instance being up to it training: boot and join (s)
  double restart_overhead_s = 0;  ///< work jobs: lost at each start and restart, e.g. restoring a checkpoint (s)
  int stride_ticks = 1;           ///< a window every this many common ticks
  double spot_price_usd_per_hour = 0;  ///< work jobs: the instance's price; cluster jobs use the catalog's
  PredictOptions predict;              ///< cluster jobs: charge the catalog's on-demand PS or not
  double confidence_level = 0.95;      ///< of the Wilson interval around P(meet the deadline)
  /// Called with ("replay", "windows", done, total) before the first window, every 4096 windows and at
  /// the end; empty: not called.
  ProgressCallback progress;
  bool keep_windows = false;  ///< return every window's outcome (undecided ones included)
  /// Cluster jobs: what happens when a worker's instance ends (see the file comment, "Policies"); a work
  /// job takes same_type only (work_policies.hpp replays its deadline policies).
  ReplayPolicy policy = ReplayPolicy::same_type;
  double guard_margin_s = 1800;  ///< the guard's m (s)
};

/// One start window's outcome.
struct ReplayWindow {
  double start_s = 0;     ///< t0 on the traces' shared clock (s)
  bool decided = false;   ///< false: the traces end before its deadline (not run; the rest is unset)
  bool finished = false;  ///< the job finished by the traces' end
  bool met = false;       ///< finished within the deadline
  double time_s = std::numeric_limits<double>::infinity();  ///< finish − t0; +inf when not finished
  double cost_usd = 0;    ///< workers + PS until the job's end (finish, or the traces' end)
  int preemptions = 0;    ///< instances that ended (preempted) before the job ended
  double on_demand_cost_usd = 0;  ///< of cost_usd: the workers priced on demand (the PS not included)
  int replans = 0;        ///< re-plans (replan, guard)
  bool switched = false;  ///< the guard switched to on-demand ...
  double switch_s = std::numeric_limits<double>::infinity();  ///< ... this long after t0 (+inf: it did not)
};

/// The aggregate of a replay. Every figure is over the decided windows.
struct ReplayResult {
  Status status = Status::invalid_input;  ///< feasible when at least one window is decided, else infeasible
  std::string message;
  /// met / decided (successes, trials), with its Wilson interval over `effective_windows` (trials 0 when
  /// none decided); see the file comment, "Interval".
  ProbabilityEstimate meets_deadline;
  int windows = 0;                     ///< decided windows
  int effective_windows = 0;           ///< the disjoint deadline-long windows the decided ones span (≤ windows)
  int undecided_windows = 0;           ///< left out: the traces end before the window's deadline
  int unfinished_windows = 0;          ///< decided windows whose job had not finished by the traces' end
  Percentiles finish_time_s;           ///< finish − t0 (+inf for unfinished windows)
  Percentiles cost_usd;
  double mean_cost_usd = 0;
  double mean_preemptions = 0;
  ReplayPolicy policy = ReplayPolicy::same_type;  ///< the policy replayed
  double mean_on_demand_cost_usd = 0;  ///< workers priced on demand (the PS not included)
  double mean_replans = 0;
  int switched_windows = 0;            ///< the guard switched to on-demand in so many decided windows
  double deterministic_time_s = 0;  ///< without revocations and without the join delay (a work job: work_s)
  double tick_s = 0;                ///< the common tick (the largest of the traces involved)
  double start_s = 0;               ///< the observed period on the shared clock: latest trace start ...
  double end_s = 0;                 ///< ... to earliest trace end
  std::vector<ReplayWindow> outcomes;  ///< every window in time order, when keep_windows
};

namespace detail {

/// An up interval on the replay clock (the shared clock less the latest trace start).
struct ReplayInterval {
  double start_s = 0;
  double end_s = 0;
};

/// One slot a worker holds: its intervals by start, and the first one ending after the current window's start.
struct ReplaySlot {
  std::vector<ReplayInterval> up;
  std::size_t first = 0;
};

/// The nodes of one events trace, by start: the next one starting after the current window's start, and
/// those up at it (in no particular order: a window draws from them).
struct ReplayNodePool {
  std::vector<ReplayInterval> nodes;
  std::size_t next = 0;
  std::vector<std::size_t> up_now;
  std::vector<std::size_t> workers;  ///< the workers it gets, in worker order
  // Per window:
  std::size_t cursor = 0;            ///< first node not yet added (or skipped) in this window
  std::vector<std::size_t> queue;    ///< waiting workers, first come first served
  std::size_t head = 0;
};

struct ReplayWorker {
  std::size_t type = 0;      ///< index into the job's counts
  double price_usd_per_hour = 0;
  int slot = -1;             ///< index into the slots, or -1
  int pool = -1;             ///< index into the node pools, or -1
  // Per window:
  std::size_t interval = 0;  ///< the interval (slot) or node (pool) it holds or will hold next
  bool has_instance = false;
  bool training = false;
  double up_s = 0;
  double wait_since_s = 0;
  bool always_up = false;  ///< an on-demand worker a policy added: never preempted, no trace
  bool on_demand = false;  ///< priced on demand (counted in ReplayWindow::on_demand_cost_usd)
  bool retired = false;    ///< gone for good (a policy other than same-type): takes no capacity again
};

/// Where the workers of a job run, on which clock, over how many windows.
struct ReplaySetup {
  std::vector<ReplaySlot> slots;
  std::vector<ReplayNodePool> pools;
  std::vector<ReplayWorker> workers;
  /// Per worker type: the slots its traces hold (all of them with a replanning policy, else those of its
  /// workers), round-robin over its traces, and the node pools of its events traces.
  std::vector<std::vector<int>> type_slots;
  std::vector<std::vector<int>> type_pools;
  std::vector<double> type_price_usd_per_hour;
  double tick_s = 0;
  double start_s = 0;  ///< shared clock
  double end_s = 0;    ///< replay clock (E)
};

/// How messages name a trace: its source, else its pool.
inline std::string trace_label(const PoolTrace& trace) {
  return detail::quoted(trace.source.empty() ? trace.pool.name() : trace.source);
}

inline void validate_replay_options(std::string_view fn, const ReplayOptions& options) {
  require_positive(fn, "options.deadline_s", options.deadline_s);
  require_non_negative(fn, "options.join_delay_s", options.join_delay_s);
  require_non_negative(fn, "options.restart_overhead_s", options.restart_overhead_s);
  require_non_negative(fn, "options.spot_price_usd_per_hour", options.spot_price_usd_per_hour);
  require_non_negative(fn, "options.guard_margin_s", options.guard_margin_s);
  require_finite(fn, "options.guard_margin_s", options.guard_margin_s);
  if (options.stride_ticks < 1) fail(fn, "options.stride_ticks", options.stride_ticks, "must be at least 1");
  if (!(options.confidence_level > 0 && options.confidence_level < 1)) {
    fail(fn, "options.confidence_level", options.confidence_level, "must be in (0, 1)");
  }
}

inline void validate_replay_trace(std::string_view fn, const std::vector<PoolTrace>& traces, std::size_t r) {
  const PoolTrace& trace = traces[r];
  const std::string field = "traces[" + std::to_string(r) + "]";
  const std::string named = " (trace " + trace_label(trace) + ")";
  require_positive(fn, field + ".tick_s", trace.tick_s);
  require_finite(fn, field + ".span_s", trace.span_s);
  require_finite(fn, field + ".clock_offset_s", trace.clock_offset_s);
  if (!(trace.span_s >= trace.tick_s)) {
    fail(fn, field + ".span_s", trace.span_s, "shorter than one tick (" + format_number(trace.tick_s) + " s)" + named);
  }
  if (trace.slotted && trace.slots < 1) fail(fn, field + ".slots", trace.slots, "must be at least 1" + named);
  for (std::size_t i = 0; i < trace.up.size(); ++i) {
    const UpInterval& u = trace.up[i];
    const std::string at = field + ".up[" + std::to_string(i) + "]";
    require_finite(fn, at + ".start_s", u.start_s);
    require_finite(fn, at + ".end_s", u.end_s);
    if (!(u.end_s > u.start_s)) fail(fn, at + ".end_s", u.end_s, "must be after start_s " + format_number(u.start_s) + named);
    if (trace.slotted && (u.slot < 0 || u.slot >= trace.slots)) {
      fail(fn, at + ".slot", u.slot, "must be from 0 to slots - 1 = " + std::to_string(trace.slots - 1) + named);
    }
  }
}

/// Places `counts[k]` workers of type `names[k]` on `traces` (see the file comment) and finds the common
/// tick and observed period. Throws for a type without a trace, too few slots, bad traces.
inline ReplaySetup make_replay_setup(std::string_view fn, const std::vector<PoolTrace>& traces,
                                     const std::vector<std::string>& names, const std::vector<int>& counts,
                                     const std::vector<double>& prices, bool every_trace = false) {
  if (traces.empty()) fail(fn, "traces", "[]", "give at least one trace");
  ReplaySetup setup;
  // Per trace: the workers it gets (in worker order), and the first of its slots / its pool.
  std::vector<std::vector<std::size_t>> trace_workers(traces.size());
  std::vector<std::size_t> worker_type, worker_slot_in_trace, worker_trace;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] <= 0) continue;
    std::vector<std::size_t> matching;
    for (std::size_t r = 0; r < traces.size(); ++r) {
      if (traces[r].pool.type == names[k]) matching.push_back(r);
    }
    if (matching.empty()) {
      std::vector<std::string> types;  // the first 10 types of the traces, for the message
      for (std::size_t r = 0; r < traces.size() && types.size() <= 10; ++r) {
        if (std::find(types.begin(), types.end(), traces[r].pool.type) == types.end()) types.push_back(traces[r].pool.type);
      }
      std::string given;
      for (std::size_t i = 0; i < types.size(); ++i) given += (i ? ", " : "") + (i < 10 ? detail::quoted(types[i]) : "...");
      fail(fn, "traces", "no trace of " + detail::quoted(names[k]),
           "the job has " + std::to_string(counts[k]) + " worker" + (counts[k] == 1 ? "" : "s") + " of " + names[k] +
               " and no trace of that type to replay them on (the traces are of " + given + ")");
    }
    for (std::size_t r : matching) validate_replay_trace(fn, traces, r);
    const std::size_t m = matching.size();
    std::int64_t slots_total = 0;
    for (std::size_t r : matching) slots_total += traces[r].slotted ? traces[r].slots : counts[k];
    for (std::size_t i = 0; i < std::size_t(counts[k]); ++i) {
      const std::size_t r = matching[i % m];
      const std::size_t slot = i / m;
      if (traces[r].slotted && slot >= std::size_t(traces[r].slots)) {
        std::string why = "replaying " + std::to_string(counts[k]) + " workers of " + names[k] + " needs " +
                          std::to_string(counts[k]) + " slots; the traces of " + names[k] + " hold " +
                          std::to_string(slots_total);
        if (slots_total >= counts[k]) {
          why += ", but round-robin gives trace " + trace_label(traces[r]) + " more workers than its " +
                 std::to_string(traces[r].slots) + " slot" + (traces[r].slots == 1 ? "" : "s");
        }
        fail(fn, "counts[" + detail::quoted(names[k]) + "]", counts[k],
             why + ": give one trace per worker or a counts/events trace");
      }
      worker_type.push_back(k);
      worker_trace.push_back(r);
      worker_slot_in_trace.push_back(slot);
      trace_workers[r].push_back(worker_type.size() - 1);
    }
  }
  if (worker_type.empty()) fail(fn, "counts", "all 0", "give at least one worker");

  // The traces involved: those with workers; with every_trace (a policy that may add any type), every
  // trace of a worker type.
  std::vector<bool> involved(traces.size(), false);
  for (std::size_t r = 0; r < traces.size(); ++r) {
    involved[r] = !trace_workers[r].empty() ||
                  (every_trace && std::find(names.begin(), names.end(), traces[r].pool.type) != names.end());
    if (involved[r] && trace_workers[r].empty()) validate_replay_trace(fn, traces, r);
  }

  // The observed period of the traces involved.
  double latest_start = -std::numeric_limits<double>::infinity(), earliest_end = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < traces.size(); ++r) {
    if (!involved[r]) continue;
    setup.tick_s = std::max(setup.tick_s, traces[r].tick_s);
    latest_start = std::max(latest_start, traces[r].clock_offset_s);
    earliest_end = std::min(earliest_end, traces[r].clock_offset_s + traces[r].span_s);
  }
  setup.start_s = latest_start;
  setup.end_s = earliest_end - latest_start;
  if (!(setup.end_s >= setup.tick_s)) {
    fail(fn, "traces", "observed together for " + format_number(std::max(0.0, setup.end_s)) + " s",
         "the traces involved overlap on their shared clock (clock_offset_s + t) for less than one tick (" +
             format_number(setup.tick_s) + " s)");
  }

  // Slots and pools on the replay clock.
  const auto by_start = [](const ReplayInterval& a, const ReplayInterval& b) { return a.start_s < b.start_s; };
  std::vector<int> first_slot(traces.size(), -1), pool_of(traces.size(), -1);
  for (std::size_t r = 0; r < traces.size(); ++r) {
    if (!involved[r]) continue;
    const PoolTrace& trace = traces[r];
    const double shift = trace.clock_offset_s - latest_start;
    if (trace.slotted) {
      // Slots 0 .. used - 1 (round-robin fills them in order); every slot with every_trace.
      const std::size_t used = every_trace ? std::size_t(trace.slots) : trace_workers[r].size();
      first_slot[r] = int(setup.slots.size());
      setup.slots.resize(setup.slots.size() + used);
      for (const UpInterval& u : trace.up) {
        if (std::size_t(u.slot) >= used) continue;
        setup.slots[std::size_t(first_slot[r]) + std::size_t(u.slot)].up.push_back({u.start_s + shift, u.end_s + shift});
      }
      for (std::size_t s = 0; s < used; ++s) {
        std::vector<ReplayInterval>& up = setup.slots[std::size_t(first_slot[r]) + s].up;
        std::stable_sort(up.begin(), up.end(), by_start);
        for (std::size_t i = 1; i < up.size(); ++i) {
          if (up[i].start_s < up[i - 1].end_s) {
            fail(fn, "traces[" + std::to_string(r) + "].up", "slot " + std::to_string(s),
                 "two intervals of one slot overlap (at " + format_number(up[i].start_s - shift) + " s of trace " +
                     trace_label(trace) + ")");
          }
        }
      }
    } else {
      pool_of[r] = int(setup.pools.size());
      ReplayNodePool pool;
      pool.nodes.reserve(trace.up.size());
      for (const UpInterval& u : trace.up) pool.nodes.push_back({u.start_s + shift, u.end_s + shift});
      std::stable_sort(pool.nodes.begin(), pool.nodes.end(), by_start);
      pool.workers = trace_workers[r];
      setup.pools.push_back(std::move(pool));
    }
  }
  setup.workers.resize(worker_type.size());
  for (std::size_t w = 0; w < worker_type.size(); ++w) {
    ReplayWorker& worker = setup.workers[w];
    worker.type = worker_type[w];
    worker.price_usd_per_hour = prices[worker_type[w]];
    const std::size_t r = worker_trace[w];
    if (traces[r].slotted) {
      worker.slot = first_slot[r] + int(worker_slot_in_trace[w]);
    } else {
      worker.pool = pool_of[r];
    }
  }
  // Per type: its slots, round-robin over its traces (trace 0 slot 0, trace 1 slot 0, ..., trace 0 slot 1,
  // ...: the order the initial workers take them in), and its pools.
  setup.type_slots.resize(names.size());
  setup.type_pools.resize(names.size());
  setup.type_price_usd_per_hour = prices;
  for (std::size_t k = 0; k < names.size(); ++k) {
    std::vector<std::size_t> matching;
    std::size_t most = 0;
    for (std::size_t r = 0; r < traces.size(); ++r) {
      if (!involved[r] || traces[r].pool.type != names[k]) continue;
      if (!traces[r].slotted) {
        setup.type_pools[k].push_back(pool_of[r]);
        continue;
      }
      matching.push_back(r);
      most = std::max(most, every_trace ? std::size_t(traces[r].slots) : trace_workers[r].size());
    }
    for (std::size_t s = 0; s < most; ++s) {
      for (std::size_t r : matching) {
        const std::size_t used = every_trace ? std::size_t(traces[r].slots) : trace_workers[r].size();
        if (s < used) setup.type_slots[k].push_back(first_slot[r] + int(s));
      }
    }
  }
  return setup;
}

/// A cluster job: the performance model's rate for the workers training, progress carried as the loss
/// reached (revocation/progress.hpp), estimates cached per count vector.
class ReplayModelJob {
 public:
  static constexpr bool kPolicies = true;  ///< replacement policies apply (ReplayPolicy)

  ReplayModelJob(const PerformanceModel& model, double target_loss, const PredictOptions& predict)
      : model_(model),
        target_loss_(target_loss),
        predict_(predict),
        inverse_gap_at_target_(1.0 / (target_loss - model.workload().loss_model.asymptote())) {}

  void reset() {
    current_ = nullptr;
    j_ = 0;
    loss_ = std::numeric_limits<double>::infinity();
  }
  [[nodiscard]] bool training() const { return current_ != nullptr && current_->training; }

  /// When the target is reached if nothing changes from t (+inf when not training).
  /// @note docs/model.md eqs. (7)–(8) from the loss reached
  [[nodiscard]] double finish_time_s(double t) const {
    if (!training()) return std::numeric_limits<double>::infinity();
    const double j_target = current_->j_target;
    return j_target > j_ ? t + (j_target - j_) * current_->e.iteration_time_s : t;
  }

  void advance(double dt) {
    if (!training()) return;
    j_ += dt * current_->e.iterations_per_s;
    loss_ = current_->curve.loss_at(j_);
  }

  /// The loss reached ℓ (+inf before training starts).
  [[nodiscard]] double loss_reached() const { return loss_; }
  [[nodiscard]] bool target_reached() const { return loss_ <= target_loss_; }

  /// 1/(L − a) − 1/(ℓ − a): any cluster c needs A_c times this many iterations more (progress.hpp).
  [[nodiscard]] double progress_left() const {
    if (std::isinf(loss_)) return inverse_gap_at_target_;
    return std::max(0.0, inverse_gap_at_target_ - 1.0 / (loss_ - current_->curve.asymptote));
  }
  /// How fast progress_left() falls while nothing changes: 1/(ℓ − a) = (j + γ1)/A_c grows by
  /// iterations_per_s / A_c per second.
  [[nodiscard]] double progress_left_per_s() const {
    return training() ? current_->e.iterations_per_s / current_->curve.numerator : 0.0;
  }

  /// The workers training changed to `active`: continue from the loss reached on the new curve.
  void change(const std::vector<int>& active) {
    auto found = cache_.find(active);
    if (found == cache_.end()) {
      Entry entry;
      entry.e = model_.estimate(active.data(), target_loss_, predict_);
      entry.curve = loss_curve(model_.workload().loss_model, entry.e);
      entry.training = entry.e.workers > 0 && entry.curve.decreasing();
      entry.j_target = entry.curve.iterations_at(target_loss_);
      found = cache_.emplace(active, entry).first;
    }
    current_ = &found->second;
    if (current_->training) {
      j_ = std::isinf(loss_) ? 0.0 : current_->curve.iterations_at(loss_);
      if (std::isinf(loss_)) loss_ = current_->curve.loss_at(0.0);
    }
  }

 private:
  struct Entry {
    Estimate e;
    LossCurve curve;
    double j_target = 0;
    bool training = false;
  };
  const PerformanceModel& model_;
  double target_loss_;
  PredictOptions predict_;
  double inverse_gap_at_target_;  ///< 1/(L − a)
  std::map<std::vector<int>, Entry> cache_;
  const Entry* current_ = nullptr;
  double j_ = 0;
  double loss_ = std::numeric_limits<double>::infinity();
};

/// A work job: one second of work per second of training.
class ReplayWorkJob {
 public:
  static constexpr bool kPolicies = false;  ///< one instance, same-type only (work_policies.hpp has the others)

  explicit ReplayWorkJob(double work_s) : work_s_(work_s) {}
  void reset() {
    done_s_ = 0;
    training_ = false;
  }
  [[nodiscard]] double finish_time_s(double t) const {
    return training_ ? t + std::max(0.0, work_s_ - done_s_) : std::numeric_limits<double>::infinity();
  }
  void advance(double dt) {
    if (training_) done_s_ += dt;
  }
  void change(const std::vector<int>& active) { training_ = active[0] > 0; }

 private:
  double work_s_;
  double done_s_ = 0;
  bool training_ = false;
};

/// Runs windows of one setup (see the file comment); keeps scratch buffers across windows. `hooks` null:
/// same-type (a work job); else the cluster policy it gives.
template <typename Job>
class ReplayEngine {
 public:
  ReplayEngine(ReplaySetup& setup, Job& job, std::size_t types, double boot_s, double ps_price_usd_per_hour,
               const ReplayPolicyHooks* hooks = nullptr, double deadline_s = 0)
      : setup_(setup),
        job_(job),
        active_(types, 0),
        boot_s_(boot_s),
        ps_price_usd_per_hour_(ps_price_usd_per_hour),
        hooks_(hooks),
        deadline_s_(deadline_s),
        initial_workers_(setup.workers.size()),
        pool_turn_(types, 0),
        survivors_(types, 0) {
    heap_.reserve(3 * setup_.workers.size() + setup_.pools.size() + 8);
  }

  /// Moves every slot's cursor and every pool's sweep to the window starting at t0 (non-decreasing).
  void sweep_to(double t0) {
    for (ReplaySlot& slot : setup_.slots) {
      while (slot.first < slot.up.size() && slot.up[slot.first].end_s <= t0) ++slot.first;
    }
    for (ReplayNodePool& pool : setup_.pools) {
      while (pool.next < pool.nodes.size() && pool.nodes[pool.next].start_s <= t0) pool.up_now.push_back(pool.next++);
      pool.up_now.erase(std::remove_if(pool.up_now.begin(), pool.up_now.end(),
                                       [&](std::size_t i) { return pool.nodes[i].end_s <= t0; }),
                        pool.up_now.end());
    }
  }

  /// The job of the window starting at t0 (after sweep_to(t0)), until it finishes or the traces end.
  /// `events` counts the work done (a re-plan's search included).
  [[nodiscard]] ReplayWindow run(double t0, std::int64_t& events) {
    const double end_s = setup_.end_s;
    heap_.clear();
    job_.reset();
    std::fill(active_.begin(), active_.end(), 0);
    std::fill(pool_turn_.begin(), pool_turn_.end(), 0);
    setup_.workers.resize(initial_workers_);
    slot_holder_.assign(setup_.slots.size(), -1);
    t0_ = t0;
    switched_ = false;
    ReplayWindow out;
    double worker_cost = 0;
    events += std::int64_t(setup_.workers.size());

    for (std::size_t w = 0; w < setup_.workers.size(); ++w) {
      ReplayWorker& worker = setup_.workers[w];
      worker.has_instance = worker.training = worker.retired = false;
      if (worker.slot < 0) continue;
      slot_holder_[std::size_t(worker.slot)] = int(w);
      const ReplaySlot& slot = setup_.slots[std::size_t(worker.slot)];
      worker.interval = slot.first;
      if (worker.interval < slot.up.size()) push(std::max(t0, slot.up[worker.interval].start_s), kUp, w);
    }
    for (std::size_t p = 0; p < setup_.pools.size(); ++p) {
      ReplayNodePool& pool = setup_.pools[p];
      pool.cursor = pool.next;
      pool.queue.clear();
      pool.head = 0;
      // The nodes up at t0 that the workers take are drawn at random (a partial Fisher–Yates shuffle by a
      // SplitMix64 hash of the window's start and the worker), so that a worker meets a node of a random
      // age, as a fitted model's start state draws one; taking the oldest would favour long-lived nodes.
      std::uint64_t t0_bits = 0;
      static_assert(sizeof(t0_bits) == sizeof(t0), "double is 64 bits");
      std::memcpy(&t0_bits, &t0, sizeof(t0));
      for (std::size_t i = 0; i < pool.workers.size() && i < pool.up_now.size(); ++i) {
        const std::uint64_t draw = detail::splitmix64(t0_bits ^ detail::splitmix64(i + 1));
        std::swap(pool.up_now[i], pool.up_now[i + std::size_t(draw % std::uint64_t(pool.up_now.size() - i))]);
      }
      for (std::size_t i = 0; i < pool.workers.size(); ++i) {
        ReplayWorker& worker = setup_.workers[pool.workers[i]];
        if (i < pool.up_now.size()) {
          worker.interval = pool.up_now[i];
          push(t0, kUp, pool.workers[i]);
        } else {
          worker.wait_since_s = t0;
          pool.queue.push_back(pool.workers[i]);
        }
      }
      schedule_add(p);
    }

    double t = t0;
    double job_end = end_s;
    for (;;) {
      const double next = heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.front().time_s;
      const double finish = job_.finish_time_s(t);
      const double guard_at = guard_switch_time_s(t);
      if (guard_at <= next && guard_at < finish && guard_at < end_s) {  // the guard's switch comes first
        job_.advance(guard_at - t);
        t = guard_at;
        switch_to_on_demand(t, events, out);
        continue;
      }
      if (finish <= next && finish <= end_s) {
        job_.advance(finish - t);
        out.finished = true;
        job_end = finish;
        break;
      }
      if (next >= end_s) {  // the traces end first: unfinished (at E) ...
        // ... or, with nothing left to happen (no worker, no capacity coming, no switch), abandoned now.
        if (std::isinf(next) && std::isinf(finish) && std::isinf(guard_at)) job_end = t;
        break;
      }
      job_.advance(next - t);
      t = next;
      // Every event at this moment, then one change of the training cluster: workers that join together
      // start together (as simulate()'s initial cluster does), not one after another.
      bool changed = false;
      lost_type_ = -1;
      while (!heap_.empty() && heap_.front().time_s == t) {
        ++events;
        std::pop_heap(heap_.begin(), heap_.end(), Event::later);
        const Event event = heap_.back();
        heap_.pop_back();
        changed = handle(event, t, worker_cost, out) || changed;
      }
      if (changed) job_.change(active_);
      if (lost_type_ >= 0) replan(t, events, out);
    }
    for (const ReplayWorker& worker : setup_.workers) {
      if (!worker.has_instance) continue;
      const double usd = units::cost_usd(worker.price_usd_per_hour, job_end - worker.up_s);
      worker_cost += usd;
      if (worker.on_demand) out.on_demand_cost_usd += usd;
    }
    out.cost_usd = worker_cost + units::cost_usd(ps_price_usd_per_hour_, job_end - t0);
    if (out.finished) out.time_s = job_end - t0;
    return out;
  }

 private:
  // At equal times: removals, then additions, then instances up, then joins; then by worker (or pool).
  static constexpr int kLeave = 0, kAdd = 1, kUp = 2, kJoin = 3;
  struct Event {
    double time_s;
    int kind;
    std::size_t who;  ///< worker, or pool for kAdd
    static bool later(const Event& a, const Event& b) {
      if (a.time_s != b.time_s) return a.time_s > b.time_s;
      if (a.kind != b.kind) return a.kind > b.kind;
      return a.who > b.who;
    }
  };

  [[nodiscard]] ReplayPolicy policy() const { return hooks_ ? hooks_->policy : ReplayPolicy::same_type; }

  /// Handles one event at t; true when the workers training changed.
  bool handle(const Event& event, double t, double& worker_cost, ReplayWindow& out) {
    if (event.kind == kAdd) {
      ReplayNodePool& pool = setup_.pools[event.who];
      while (pool.head < pool.queue.size() && setup_.workers[pool.queue[pool.head]].retired) ++pool.head;
      if (pool.head >= pool.queue.size()) return false;  // withdrawn since (the guard's switch)
      const std::size_t w = pool.queue[pool.head++];
      setup_.workers[w].interval = pool.cursor++;
      start_instance(w, t);
      schedule_add(event.who);
      return false;
    }
    if (event.kind == kUp) {
      if (!setup_.workers[event.who].retired) start_instance(event.who, t);
      return false;
    }
    ReplayWorker& worker = setup_.workers[event.who];
    if (event.kind == kJoin) {
      worker.training = true;
      ++active_[worker.type];
      return true;
    }
    // kLeave: the instance is preempted.
    const double usd = units::cost_usd(worker.price_usd_per_hour, t - worker.up_s);
    worker_cost += usd;
    if (worker.on_demand) out.on_demand_cost_usd += usd;
    ++out.preemptions;
    worker.has_instance = false;
    const bool was_training = worker.training;
    if (was_training) {
      worker.training = false;
      --active_[worker.type];
    }
    if (policy() != ReplayPolicy::same_type) {  // not replaced by the trace: the policy decides
      retire(event.who);
      lost_type_ = int(worker.type);
      return was_training;
    }
    // same-type: the worker waits for its slot's next interval or the pool's next node.
    if (worker.slot >= 0) {
      const ReplaySlot& slot = setup_.slots[std::size_t(worker.slot)];
      if (++worker.interval < slot.up.size()) push(std::max(t, slot.up[worker.interval].start_s), kUp, event.who);
    } else {
      ReplayNodePool& pool = setup_.pools[std::size_t(worker.pool)];
      worker.wait_since_s = t;
      pool.queue.push_back(event.who);
      if (pool.queue.size() - pool.head == 1) schedule_add(std::size_t(worker.pool));
    }
    return was_training;
  }

  /// Worker w is gone for good: its slot is free for an addition (a queued worker stays queued but takes
  /// nothing: retired workers are skipped).
  void retire(std::size_t w) {
    ReplayWorker& worker = setup_.workers[w];
    worker.retired = true;
    if (worker.slot >= 0 && slot_holder_[std::size_t(worker.slot)] == int(w)) slot_holder_[std::size_t(worker.slot)] = -1;
  }

  /// The re-plan after instances ended at t (replan, and the guard before its switch; none: nothing).
  void replan(double t, std::int64_t& events, ReplayWindow& out) {
    if constexpr (Job::kPolicies) {
      const ReplayPolicy p = policy();
      if (!(p == ReplayPolicy::replan || (p == ReplayPolicy::guard && !switched_))) return;
      if (job_.target_reached()) return;
      const std::vector<int> additions = ask(hooks_->spot_replan, t, events, false);
      ++out.replans;
      for (std::size_t k = 0; k < additions.size(); ++k) {
        for (int i = 0; i < additions[k]; ++i) add_worker(k, t, hooks_->always_up[k]);
      }
    } else {
      (void)t;
      (void)events;
      (void)out;
    }
  }

  /// Calls a planner with the job's state at t; survivors: the workers not retired (on-demand ones only).
  std::vector<int> ask(const ReplacementPlanner& planner, double t, std::int64_t& events, bool on_demand_only) {
    std::fill(survivors_.begin(), survivors_.end(), 0);
    for (const ReplayWorker& worker : setup_.workers) {
      if (worker.retired || (on_demand_only && !(worker.on_demand || hooks_->always_up[worker.type]))) continue;
      ++survivors_[worker.type];
    }
    RevocationNotice notice;
    notice.time_s = t - t0_;
    notice.deadline_s = deadline_s_;
    notice.target_loss = hooks_->target_loss;
    notice.loss_reached = job_.loss_reached();
    notice.survivors = survivors_;
    notice.leaving_type = lost_type_ >= 0 ? std::size_t(lost_type_) : 0;
    std::int64_t work = 0;
    notice.planner_work = &work;
    std::vector<int> additions = planner(notice);
    events += 1 + work;
    if (additions.size() != active_.size()) additions.resize(active_.size(), 0);
    return additions;
  }

  /// A new worker of type k requested at t: bought on demand (always there, at the on-demand price), else
  /// on the slot of its type that no worker holds and whose next interval comes soonest, else its type's
  /// events traces (their next node, round-robin over the type's traces). Without capacity left on the
  /// traces it is not placed: the market has none.
  void add_worker(std::size_t k, double t, bool on_demand) {
    ReplayWorker worker;
    worker.type = k;
    worker.price_usd_per_hour = on_demand ? hooks_->on_demand_price_usd_per_hour[k] : setup_.type_price_usd_per_hour[k];
    worker.on_demand = on_demand;
    const std::size_t w = setup_.workers.size();
    if (on_demand) {
      worker.always_up = true;
      setup_.workers.push_back(worker);
      push(t, kUp, w);
      return;
    }
    // The free slot whose capacity comes soonest (ties: the first in round-robin order).
    int best = -1;
    std::size_t best_interval = 0;
    double best_up_s = std::numeric_limits<double>::infinity();
    for (int s : setup_.type_slots[k]) {
      if (slot_holder_[std::size_t(s)] >= 0) continue;
      const ReplaySlot& slot = setup_.slots[std::size_t(s)];
      std::size_t i = slot.first;
      while (i < slot.up.size() && slot.up[i].end_s <= t) ++i;
      if (i < slot.up.size() && std::max(t, slot.up[i].start_s) < best_up_s) {
        best = s;
        best_interval = i;
        best_up_s = std::max(t, slot.up[i].start_s);
      }
    }
    if (best >= 0) {
      worker.slot = best;
      worker.interval = best_interval;
      slot_holder_[std::size_t(best)] = int(w);
      setup_.workers.push_back(worker);
      push(best_up_s, kUp, w);
      return;
    }
    const std::vector<int>& pools = setup_.type_pools[k];
    if (pools.empty()) return;
    const std::size_t p = std::size_t(pools[pool_turn_[k]++ % pools.size()]);
    worker.pool = int(p);
    worker.wait_since_s = t;
    setup_.workers.push_back(worker);
    ReplayNodePool& pool = setup_.pools[p];
    pool.queue.push_back(w);
    if (pool.queue.size() - pool.head == 1) schedule_add(p);
  }

  /// The guard: when, from t, T_od(ℓ) ≥ (T − t) − m first holds if nothing else changes (+inf: never, or
  /// not the guard); see replay_policy.hpp.
  [[nodiscard]] double guard_switch_time_s(double t) const {
    if constexpr (Job::kPolicies) {
      if (policy() != ReplayPolicy::guard || switched_ || job_.target_reached()) return std::numeric_limits<double>::infinity();
      const double slack_s = (t0_ + deadline_s_ - t) - hooks_->guard_margin_s - hooks_->on_demand_time_s(job_.progress_left());
      if (!(slack_s > 0)) return t;
      const double shrink_per_s = 1.0 - hooks_->fallback_seconds_per_progress * job_.progress_left_per_s();
      if (!(shrink_per_s > 0)) return std::numeric_limits<double>::infinity();
      return std::max(t, t + slack_s / shrink_per_s);
    } else {
      (void)t;
      return std::numeric_limits<double>::infinity();
    }
  }

  /// The guard's switch at t: the on-demand re-plan's additions (cheapest that meets the deadline, else
  /// the fastest) join after the delay; spot workers still waiting for capacity are withdrawn; no spot is
  /// asked for again (those up train on until the market takes them).
  void switch_to_on_demand(double t, std::int64_t& events, ReplayWindow& out) {
    if constexpr (Job::kPolicies) {
      switched_ = true;
      out.switched = true;
      out.switch_s = t - t0_;
      for (std::size_t w = 0; w < setup_.workers.size(); ++w) {
        if (!setup_.workers[w].has_instance && !setup_.workers[w].always_up && !hooks_->always_up[setup_.workers[w].type]) retire(w);
      }
      const std::vector<int> additions = ask(hooks_->on_demand_fallback, t, events, true);
      for (std::size_t k = 0; k < additions.size(); ++k) {
        for (int i = 0; i < additions[k]; ++i) add_worker(k, t, true);
      }
    } else {
      (void)t;
      (void)events;
      (void)out;
    }
  }

  void push(double time_s, int kind, std::size_t who) {
    heap_.push_back({time_s, kind, who});
    std::push_heap(heap_.begin(), heap_.end(), Event::later);
  }

  /// Worker w's instance (its `interval`) is up from t: it trains after the boot if still up then.
  void start_instance(std::size_t w, double t) {
    ReplayWorker& worker = setup_.workers[w];
    worker.has_instance = true;
    worker.up_s = t;
    if (worker.always_up) {
      push(t + boot_s_, kJoin, w);
      return;
    }
    const ReplayInterval& up = worker.slot >= 0 ? setup_.slots[std::size_t(worker.slot)].up[worker.interval]
                                                : setup_.pools[std::size_t(worker.pool)].nodes[worker.interval];
    push(up.end_s, kLeave, w);
    if (t + boot_s_ < up.end_s) push(t + boot_s_, kJoin, w);
  }

  /// When pool p has a waiting worker: its next addition that the first waiting worker may take (added at
  /// or after it began waiting). Retired workers leave the queue here.
  void schedule_add(std::size_t p) {
    ReplayNodePool& pool = setup_.pools[p];
    while (pool.head < pool.queue.size() && setup_.workers[pool.queue[pool.head]].retired) ++pool.head;
    if (pool.head >= pool.queue.size()) return;
    const double since = setup_.workers[pool.queue[pool.head]].wait_since_s;
    while (pool.cursor < pool.nodes.size() && pool.nodes[pool.cursor].start_s < since) ++pool.cursor;
    if (pool.cursor < pool.nodes.size()) push(pool.nodes[pool.cursor].start_s, kAdd, p);
  }

  ReplaySetup& setup_;
  Job& job_;
  std::vector<int> active_;
  double boot_s_;
  double ps_price_usd_per_hour_;
  const ReplayPolicyHooks* hooks_;
  double deadline_s_;
  std::size_t initial_workers_;
  std::vector<std::size_t> pool_turn_;  ///< per type: the next of its pools an addition goes to
  std::vector<int> survivors_;          ///< scratch of ask()
  std::vector<int> slot_holder_;        ///< per slot: the worker holding it, or -1 (free for an addition)
  std::vector<Event> heap_;
  double t0_ = 0;
  bool switched_ = false;
  int lost_type_ = -1;  ///< a type that lost an instance at the current moment (policies other than same-type)
};

/// Runs every window of `setup` with `job` and fills `r` (see the file comment).
template <typename Job>
void run_replay(std::string_view fn, ReplaySetup& setup, Job& job, std::size_t types, double boot_s,
                double ps_price_usd_per_hour, const ReplayOptions& options, ReplayResult& r,
                const ReplayPolicyHooks* hooks = nullptr) {
  const double step_s = double(options.stride_ticks) * setup.tick_s;
  const double window_count = std::ceil(setup.end_s / step_s);
  if (!(window_count <= double(kMaxReplayWindows))) {
    fail(fn, "options.stride_ticks", options.stride_ticks,
         "gives " + format_number(window_count) + " windows, more than the maximum of " + std::to_string(kMaxReplayWindows) +
             "; use a larger stride");
  }
  const std::int64_t windows = std::max<std::int64_t>(1, std::int64_t(window_count));
  if (double(windows) * double(setup.workers.size()) > double(kMaxReplayEvents)) {
    fail(fn, "options.stride_ticks", options.stride_ticks,
         std::to_string(windows) + " windows x " + std::to_string(setup.workers.size()) + " workers exceeds the maximum of " +
             std::to_string(kMaxReplayEvents) + " replay events; use a larger stride or fewer workers");
  }
  r.tick_s = setup.tick_s;
  r.start_s = setup.start_s;
  r.end_s = setup.start_s + setup.end_s;

  ReplayEngine<Job> engine(setup, job, types, boot_s, ps_price_usd_per_hour, hooks, options.deadline_s);
  std::vector<double> times, costs;
  int met = 0;
  double cost_sum = 0, preemptions = 0, on_demand_sum = 0, replans = 0;
  r.policy = hooks ? hooks->policy : ReplayPolicy::same_type;
  std::int64_t events = 0;
  if (options.keep_windows) r.outcomes.reserve(std::size_t(windows));
  report(options.progress, "replay", "windows", 0, double(windows));
  for (std::int64_t k = 0; k < windows; ++k) {
    const double t0 = double(k) * step_s;
    if (t0 + options.deadline_s > setup.end_s) {  // the traces end before its deadline: undecided, not run
      ++r.undecided_windows;
      if (options.keep_windows) {
        ReplayWindow w;
        w.start_s = setup.start_s + t0;
        r.outcomes.push_back(w);
      }
      continue;
    }
    engine.sweep_to(t0);
    ReplayWindow w = engine.run(t0, events);
    if (events > kMaxReplayEvents) {
      fail(fn, "work", std::to_string(events) + " events",
           "a replay may handle at most " + std::to_string(kMaxReplayEvents) +
               " events (instances up, joining and preempted, and re-plans' search); use a larger stride, fewer workers or a shorter trace");
    }
    w.start_s = setup.start_s + t0;
    w.decided = true;
    w.met = w.finished && w.time_s <= options.deadline_s;
    met += w.met ? 1 : 0;
    r.unfinished_windows += w.finished ? 0 : 1;
    times.push_back(w.time_s);
    costs.push_back(w.cost_usd);
    cost_sum += w.cost_usd;
    preemptions += w.preemptions;
    on_demand_sum += w.on_demand_cost_usd;
    replans += w.replans;
    r.switched_windows += w.switched ? 1 : 0;
    if (options.keep_windows) r.outcomes.push_back(w);
    if ((k + 1) % 4096 == 0 && k + 1 < windows) report(options.progress, "replay", "windows", double(k + 1), double(windows));
  }
  report(options.progress, "replay", "windows", double(windows), double(windows));

  r.windows = int(times.size());
  r.meets_deadline.confidence_level = options.confidence_level;
  if (r.windows == 0) {
    r.status = Status::infeasible;
    r.message = "no window is decided: each of the " + std::to_string(r.undecided_windows) +
                " windows has its deadline (" +
                format_number(options.deadline_s) + " s after its start) after the traces' end; they are observed together for " +
                format_number(setup.end_s) + " s";
    return;
  }
  // Decided windows are the first r.windows (a later start ends later), so the last starts at (windows − 1)·step.
  const double last_decided_t0_s = double(r.windows - 1) * step_s;
  r.effective_windows = int(std::min<double>(r.windows, std::floor(last_decided_t0_s / options.deadline_s) + 1));
  r.meets_deadline = wilson_interval(met, r.windows, options.confidence_level);
  const ProbabilityEstimate effective =
      detail::wilson_bounds(r.meets_deadline.estimate, double(r.effective_windows), options.confidence_level);
  r.meets_deadline.lower = effective.lower;
  r.meets_deadline.upper = effective.upper;
  r.mean_cost_usd = cost_sum / r.windows;
  r.mean_preemptions = preemptions / r.windows;
  r.mean_on_demand_cost_usd = on_demand_sum / r.windows;
  r.mean_replans = replans / r.windows;
  r.finish_time_s = nearest_rank_percentiles(std::move(times));
  r.cost_usd = nearest_rank_percentiles(std::move(costs));
  r.status = Status::feasible;
  r.message = "meets the deadline in " + std::to_string(met) + " of " + std::to_string(r.windows) + " decided windows (P = " +
              format_number(r.meets_deadline.estimate) + "); " + std::to_string(r.undecided_windows) + " undecided, " +
              std::to_string(r.unfinished_windows) + " unfinished by the traces' end";
}

}  // namespace detail

/// Replays the cluster `counts` (per PerformanceModel::worker_types(), e.g. from counts_of()) training to
/// `target_loss` on `traces`, from every start window (see the file comment for the contract).
/// Throws spotdnn::invalid_argument for bad options (deadline not > 0, a negative delay or price, a stride
/// below 1), no traces, a trace of the job's types with a span shorter than one tick or bad intervals, a
/// type with workers and no trace of it (a type bought on demand needs none: it is never preempted), a slotted trace with fewer slots than the workers it gets, an
/// empty cluster, and a target the cluster cannot reach even without revocations.
[[nodiscard]] inline ReplayResult replay(const PerformanceModel& model, const std::vector<int>& counts, double target_loss,
                                         const std::vector<PoolTrace>& traces, const ReplayOptions& options) {
  constexpr std::string_view fn = "replay";
  detail::validate_replay_options(fn, options);
  detail::require_finite(fn, "target_loss", target_loss);
  const std::vector<WorkerType>& types = model.worker_types();
  if (counts.size() != types.size()) {
    detail::fail(fn, "counts.size()", double(counts.size()),
                 "must equal the number of worker types (" + std::to_string(types.size()) + ")");
  }
  std::int64_t workers = 0;
  std::vector<std::string> names;
  std::vector<double> prices;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] < 0) detail::fail(fn, "counts[" + std::to_string(k) + "]", counts[k], "must not be negative");
    workers += counts[k];
    names.push_back(types[k].name);
    prices.push_back(types[k].price_usd_per_hour);
  }
  if (workers < 1) detail::fail(fn, "counts", "all 0", "give at least one worker");
  if (workers > kMaxClusterWorkers) {
    detail::fail(fn, "counts", double(workers), "more workers than the maximum of " + std::to_string(kMaxClusterWorkers));
  }
  if (traces.empty()) detail::fail(fn, "traces", "[]", "give at least one trace");
  const Estimate e = model.estimate(counts, target_loss, options.predict);
  if (!e.reaches_target()) {
    detail::fail(fn, "target_loss", target_loss,
                 "the cluster cannot reach it even without revocations (" + std::string(describe(e.outcome)) + ")");
  }
  // Workers bought on demand are never preempted: each such type without a trace of its own gets an
  // always-up trace with a slot per worker over the whole clock the given traces cover.
  std::vector<PoolTrace> with_on_demand = traces;
  double clock_from_s = std::numeric_limits<double>::infinity(), clock_to_s = -std::numeric_limits<double>::infinity();
  double finest_tick_s = std::numeric_limits<double>::infinity();
  for (const PoolTrace& t : traces) {
    clock_from_s = std::min(clock_from_s, t.clock_offset_s);
    clock_to_s = std::max(clock_to_s, t.clock_offset_s + t.span_s);
    finest_tick_s = std::min(finest_tick_s, t.tick_s);
  }
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] == 0 || types[k].market != Market::on_demand) continue;
    bool traced = false;
    for (const PoolTrace& t : traces) traced = traced || t.pool.type == names[k];
    if (traced || !(clock_to_s > clock_from_s) || !(finest_tick_s > 0)) continue;
    PoolTrace always;
    always.pool = {names[k], "on-demand"};
    always.kind = TraceKind::lifetimes;
    always.source = "on-demand (never preempted)";
    always.tick_s = finest_tick_s;
    always.span_s = clock_to_s - clock_from_s;
    always.clock_offset_s = clock_from_s;
    always.slots = counts[k];
    for (int slot = 0; slot < counts[k]; ++slot) always.up.push_back({0.0, always.span_s, false, true, slot});
    with_on_demand.push_back(std::move(always));
  }
  const bool replanning = options.policy == ReplayPolicy::replan || options.policy == ReplayPolicy::guard;
  detail::ReplaySetup setup = detail::make_replay_setup(fn, with_on_demand, names, counts, prices, replanning);
  for (detail::ReplayWorker& worker : setup.workers) worker.on_demand = types[worker.type].market == Market::on_demand;
  std::vector<bool> traced(types.size(), false);
  for (std::size_t k = 0; k < types.size(); ++k) traced[k] = !setup.type_slots[k].empty() || !setup.type_pools[k].empty();
  std::optional<detail::ReplayPolicyHooks> hooks;
  if (options.policy != ReplayPolicy::same_type) {
    hooks.emplace(detail::make_replay_policy_hooks(fn, model, options.policy, counts, target_loss, options.join_delay_s,
                                                   options.guard_margin_s, options.deadline_s, options.predict.charge_parameter_server,
                                                   traced));
  }
  ReplayResult r;
  r.deterministic_time_s = e.training_time_s;
  detail::ReplayModelJob job(model, target_loss, options.predict);
  const double ps_price =
      options.predict.charge_parameter_server ? model.catalog().parameter_server.price_usd_per_hour : 0.0;
  detail::run_replay(fn, setup, job, counts.size(), options.join_delay_s, ps_price, options, r, hooks ? &*hooks : nullptr);
  return r;
}

/// Replays a job of `work_s` seconds of work on one instance (a `--work` job) on its one trace (slot 0, or
/// the events trace's nodes), from every start window, at options.spot_price_usd_per_hour; the instance
/// trains from join_delay_s + restart_overhead_s after each (re)start. Throws like replay(), and when
/// `traces` does not hold exactly one trace (replay each separately).
[[nodiscard]] inline ReplayResult replay_work(double work_s, const std::vector<PoolTrace>& traces, const ReplayOptions& options) {
  constexpr std::string_view fn = "replay_work";
  detail::validate_replay_options(fn, options);
  detail::require_positive(fn, "work_s", work_s);
  if (traces.empty()) detail::fail(fn, "traces", "[]", "give one trace");
  if (traces.size() != 1) {
    detail::fail(fn, "traces.size()", double(traces.size()),
                 "a work job runs one instance on one trace; replay each trace separately");
  }
  if (options.policy != ReplayPolicy::same_type) {
    detail::fail(fn, "options.policy", detail::quoted(to_string(options.policy)),
                 "a work job is replayed same-type; replay_work_policies() (work_policies.hpp) compares its deadline policies");
  }
  detail::ReplaySetup setup =
      detail::make_replay_setup(fn, traces, {traces[0].pool.type}, {1}, {options.spot_price_usd_per_hour});
  ReplayResult r;
  r.deterministic_time_s = work_s;
  detail::ReplayWorkJob job(work_s);
  detail::run_replay(fn, setup, job, 1, options.join_delay_s + options.restart_overhead_s, 0.0, options, r);
  return r;
}

}  // namespace spotdnn
