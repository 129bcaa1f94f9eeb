#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/simulate.hpp Monte Carlo of asynchronous PS training under spot revocations: the
/// probability of meeting the deadline, time and cost percentiles, revocations per run.
///
/// One scenario: every worker of the cluster draws a lifetime from the InterruptionModel (or from its pool
/// of a fitted revocation model: see "Fitted revocation models" below). Between two
/// events (a worker leaves, a replacement joins) the cluster is fixed and trains at the rate the
/// performance model gives it (contention, iteration times, throughput, weighted batch and loss curve all
/// recomputed with PerformanceModel::estimate for the current counts, docs/model.md eqs. (1)–(8)). Progress carries
/// across a change as the loss reached (see progress.hpp for why not the samples). The scenario ends when
/// the target loss is reached, when no worker is left and none is coming, or at the horizon
/// (`horizon_factor` × deadline).
///
/// Billing is per second, per instance, from the moment it trains (a replacement from when it joins; the
/// join delay is mostly launch and boot) until it finishes or is revoked (with a fitted model, from when it
/// is up: below); the on-demand PS is billed from the start until the end of the scenario when charged.
///
/// Replacement policies: none (survivors finish the job), same_type (each revoked worker is replaced by one
/// of its type, requested at the revocation notice and joining `join_delay_s` later), replan (at the notice
/// a ReplacementPlanner, e.g. replan.hpp's replanning_policy(), chooses the instances to add; they join
/// `join_delay_s` later). AWS gives the notice 2 minutes before the revocation (`notice_s`).
///
/// Determinism: scenario i draws from its own random stream (detail::ScenarioRng, SplitMix64) seeded by a
/// SplitMix64 hash of (seed, i), and outcomes are aggregated in scenario order, so a result depends on the
/// seed and the inputs only — not on `threads`, and not on how the scenarios are split into chunks (for
/// progress reports) or batches (the confidence search runs scenarios [a, b) of the same seed as it needs
/// them). Lifetimes are drawn by inversion from the raw 64-bit output (no std:: distribution), so they are
/// the same with every standard library.
///
/// Hazards: only the types the simulation may run need one (InterruptionModel::require_hazard): the
/// cluster's types; with `replan`, also every type with a quota above 0 (the planner may add any of them).
/// Types that draw from a fitted revocation model (below) need none.
///
/// Fitted revocation models (SimulateOptions::revocations, revocation_model.hpp; the draws in
/// pool_law.hpp). With a model, the instances of a worker type with pools (`type_pools[k]` not empty) draw
/// from their pool instead of the InterruptionModel: worker i of the type goes to pool
/// type_pools[k][i mod size] (and, with replan, each instance the planner adds continues the count). Then:
/// - start: per pool, when it has a `gang` and at most gang.requested instances go to it, k is drawn from
///   gang.count_share and its first min(n, k) instances are found up; otherwise each is found up with
///   probability start.up_share independently. One found up is up at time 0 at an age drawn from
///   start.age_quantiles_s; another comes up after a wait drawn from start.wait (never, with its
///   none_share), at age 0;
/// - every instance trains join_delay_s after it is up (the initial ones too), if it is still up then;
/// - lifetime: the residual from its age under trigger_hazard_by_age (PoolLaw::residual_lifetime_s); the
///   notice comes notice_s before it leaves, not before it is up;
/// - zones together: where a region's joint_up_share covers two or more pools in use, the first instance of
///   each is found up or waiting as one pattern drawn from it (instead of each by its up_share);
/// - shocks: a pool with clustering.shock_rate_per_hour > 0 gets shocks as a Poisson process while it has an
///   instance that has not left; at a shock every instance of the pool that is up and has had no notice is
///   hit with probability clustering.shock_hit_probability: its notice is then and it leaves notice_s later;
/// - clusters: when an instance leaves by its own draw (a trigger), every other instance of its pool that is
///   up and has had no notice leaves at the same moment with probability clustering.co_preemption_probability
///   (only in a pool without shocks, whose bursts are the shocks'), and every such instance of another zone
///   of its region (region_of_zone) with the probability of the region's RegionCorrelation (0 when the
///   model has none). Followers and shock victims start no clusters. When notices are
///   scheduled (a replacement policy), the followers are drawn at the trigger's notice among the instances up
///   then, and get their notice with it (each calls the policy as any notice does); without, at the
///   revocation;
/// - same_type: the replacement is requested when the instance leaves (a trace measures the wait from the
///   preemption, not from the notice), comes up after a wait from the pool's replacement_wait (or never), at
///   age 0, in the same pool; replan: the planner is called at the notice as without a model, and each
///   instance it adds of a type with pools comes up after a wait from its pool's replacement_wait counted
///   from the notice, at age 0;
/// - billing: each instance from when it is up (booting included) until it leaves or the scenario ends;
/// - events at one moment: the estimate is recomputed once after the last change at that moment, and
///   instances that join at time 0 make the starting cluster (training starts at the beginning of its curve).
/// Types without pools keep the constant-rate law within the same scenario (lifetime from the
/// InterruptionModel from the request, training at once at the start or join_delay_s after a notice,
/// billed while training). A model with no pool for any type simulates exactly as no model.
///
/// Market states (RevocationModel::regimes): the pools in use of a region with MarketRegimes share its
/// state, calm or stormy, drawn at the start from the states' time_share and switching after exponential
/// stays at the state's leave_rate_per_hour. While in a state, the pools' instances are met (start, gang,
/// joint pattern) and replaced by the state's figures (PoolModel::in_state), their shocks come at its
/// shock rate, and they live by its trigger_hazard_by_age: at each switch, every instance of the region
/// that has not had its notice draws its residual lifetime again from its age then (or, not yet up, from
/// its age when it comes) under the new state's hazard (exact for a hazard that changes at the switch
/// moments: the Exp(1) draw of the inversion is memoryless). While none of the region's pools has an
/// instance that has not left, its switches are not simulated; when one comes again the state is drawn from
/// the chain's law over the time passed, P(same state after τ) = π_s + (1 − π_s) e^{−(q_0 + q_1) τ} with
/// π_s = q_{1−s} / (q_0 + q_1).
///
/// Draw order of a scenario: per region with market states and a pool in use (in the model's `regimes`
/// order), its state; per type in worker_types() order, for a type without pools one lifetime per instance; for a
/// type with pools one gang count per gang pool (in type_pools order), then per instance its start and its
/// lifetime; per region with market states, its first switch time; later draws in event order. An instance that never comes stays counted among the survivors a
/// replan policy is told of (its request is open).
///
/// Progress: with SimulateOptions::progress set, the scenarios run in chunks (each on `threads` threads)
/// and the callback gets ("simulate", "scenarios", done, total) on the calling thread before the first
/// chunk, after each chunk and at the end. Without it they run in one piece. The results are the same.

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <boost/math/distributions/normal.hpp>

#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/errors.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/progress.hpp"
#include "spotdnn/revocation/interruption.hpp"
#include "spotdnn/revocation/pool_law.hpp"
#include "spotdnn/revocation/progress.hpp"
#include "spotdnn/revocation/revocation_model.hpp"
#include "spotdnn/revocation/trace.hpp"
#include "spotdnn/status.hpp"
#include "spotdnn/units.hpp"

namespace spotdnn {

/// What happens after a revocation notice.
enum class Replacement {
  none,       ///< nothing: the survivors finish the job
  same_type,  ///< one instance of the revoked type is requested at the notice
  replan,     ///< SimulateOptions::replacement_planner decides what to add
};

constexpr std::string_view to_string(Replacement replacement) {
  switch (replacement) {
    case Replacement::none: return "none";
    case Replacement::same_type: return "same-type";
    case Replacement::replan: return "replan";
  }
  return "none";
}

constexpr std::optional<Replacement> replacement_from_string(std::string_view text) {
  if (text == "none") return Replacement::none;
  if (text == "same-type" || text == "same_type") return Replacement::same_type;
  if (text == "replan") return Replacement::replan;
  return std::nullopt;
}

/// What a replacement planner is told at a revocation notice.
struct RevocationNotice {
  double time_s = 0;        ///< now, seconds since training started
  double deadline_s = 0;    ///< the deadline, seconds since training started
  double target_loss = 0;
  double loss_reached = 0;  ///< the PS model's loss now (+inf when the curve is not defined yet)
  /// Instances that stay, per PerformanceModel::worker_types(): running or joining, not noticed.
  std::vector<int> survivors;
  std::size_t leaving_type = 0;  ///< worker-type index of the instance that got the notice
  /// Where the planner adds the work it did (search nodes and clusters evaluated); the simulation counts it
  /// against its limit of kMaxSimulatedEvents. May be null.
  std::int64_t* planner_work = nullptr;
};

/// Decides, at a notice, how many instances of each worker type to add (one entry per worker type).
/// Called from the simulation's threads: it must be safe to call concurrently.
using ReplacementPlanner = std::function<std::vector<int>(const RevocationNotice&)>;

/// A fitted revocation model for simulate() (see the file comment): which pools each worker type's
/// instances are spread over.
struct FittedRevocations {
  /// Null: every type uses the InterruptionModel's constant rate (type_pools must then be empty).
  std::shared_ptr<const RevocationModel> model;
  /// Per worker type (PerformanceModel::worker_types() order): the indices into model->pools of the pools its
  /// instances are spread over round-robin (worker i of the type goes to type_pools[k][i % size]), each a
  /// pool of that type, no index twice; empty: the type has no fitted pool and uses the InterruptionModel's
  /// constant rate (uncalibrated). With a model, one entry per worker type.
  std::vector<std::vector<int>> type_pools;
};

/// Options of simulate(). Plain fields, all defaulted.
struct SimulateOptions {
  int scenarios = 10000;   ///< K, Monte Carlo scenarios
  std::uint64_t seed = 1;  ///< the run's seed; scenario i uses a hash of (seed, i)
  PredictOptions predict;  ///< charge the PS or not
  Replacement replacement = Replacement::none;
  ReplacementPlanner replacement_planner;  ///< required for Replacement::replan
  double notice_s = 120;      ///< revocation notice before the instance leaves (s); AWS gives 2 minutes
  double join_delay_s = 120;  ///< from request to training for a new instance (s); spotDNN measured about 2 min
  double horizon_factor = 10;  ///< a scenario still running at horizon_factor × deadline is abandoned
  int threads = 1;             ///< worker threads; 0 = std::thread::hardware_concurrency()
  bool keep_outcomes = false;  ///< return every scenario's outcome (for histograms)
  double confidence_level = 0.95;  ///< of the interval around the probability of meeting the deadline
  /// Called with ("simulate", "scenarios", done, total) on the calling thread between chunks of scenarios
  /// (see the file comment); empty: not called, and the scenarios run in one piece.
  ProgressCallback progress;
  /// A fitted revocation model for some or all types (see the file comment); default: none.
  FittedRevocations revocations;
};

/// One scenario's outcome.
struct ScenarioOutcome {
  bool finished = false;      ///< the target loss was reached (before the horizon)
  bool met_deadline = false;  ///< finished at or before the deadline
  double time_s = std::numeric_limits<double>::infinity();  ///< when the target was reached; +inf if never
  double cost_usd = 0;         ///< workers + PS, per-second billing
  double worker_cost_usd = 0;
  double ps_cost_usd = 0;
  int revocations = 0;         ///< instances revoked before the scenario ended
  int replacements = 0;        ///< instances added after notices
  double samples_trained = 0;  ///< samples processed by all workers
  double final_loss = 0;       ///< the loss reached at the end (the target when finished)
};

/// A probability estimated from Monte Carlo trials, with its Wilson score interval.
struct ProbabilityEstimate {
  double estimate = 0;  ///< successes / trials
  double lower = 0;     ///< Wilson score interval at `confidence_level`
  double upper = 0;
  int successes = 0;
  int trials = 0;
  double confidence_level = 0.95;
};

namespace detail {
/// The Wilson score interval around a share `p` of `trials` (any real count > 0: an effective sample size
/// too) at `confidence_level`, two-sided; `estimate` = p, `successes` and `trials` left 0.
[[nodiscard]] inline ProbabilityEstimate wilson_bounds(double p, double trials, double confidence_level) {
  const double z = boost::math::quantile(boost::math::normal_distribution<double>(), 0.5 + confidence_level / 2);
  const double n = trials;
  const double z2 = z * z;
  const double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  ProbabilityEstimate e;
  e.estimate = p;
  e.lower = p <= 0 ? 0.0 : std::max(0.0, centre - half);  // exact at the ends (rounding aside)
  e.upper = p >= 1 ? 1.0 : std::min(1.0, centre + half);
  e.confidence_level = confidence_level;
  return e;
}
}  // namespace detail

/// The Wilson score interval of `successes` out of `trials` at `confidence_level` (two-sided).
/// @note E. B. Wilson, "Probable inference, the law of succession, and statistical inference", JASA 1927.
[[nodiscard]] inline ProbabilityEstimate wilson_interval(int successes, int trials, double confidence_level = 0.95) {
  constexpr std::string_view fn = "wilson_interval";
  if (trials < 1) detail::fail(fn, "trials", trials, "must be at least 1");
  if (successes < 0 || successes > trials) detail::fail(fn, "successes", successes, "must be in [0, trials]");
  if (!(confidence_level > 0 && confidence_level < 1)) {
    detail::fail(fn, "confidence_level", confidence_level, "must be in (0, 1)");
  }
  ProbabilityEstimate e = detail::wilson_bounds(double(successes) / trials, trials, confidence_level);
  e.successes = successes;
  e.trials = trials;
  e.confidence_level = confidence_level;
  return e;
}

/// Nearest-rank percentiles of a sample (+inf for scenarios that never finish).
struct Percentiles {
  double p10 = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};

/// The aggregate of simulate().
struct SimulationResult {
  Status status = Status::invalid_input;  ///< feasible when simulated; infeasible when the target is unreachable
  std::string message;
  Cluster cluster;
  double target_loss = 0;
  double deadline_s = 0;
  int scenarios = 0;
  std::uint64_t seed = 0;
  Replacement replacement = Replacement::none;
  bool parameter_server_charged = true;

  /// The revocation-free prediction of the cluster (what the deterministic planner promises).
  double deterministic_time_s = 0;
  double deterministic_cost_usd = 0;
  bool deterministic_meets_deadline = false;

  ProbabilityEstimate meets_deadline;  ///< P(finish ≤ deadline), with its interval
  double finished_share = 0;           ///< share of scenarios that reached the target before the horizon
  double mean_time_s = 0;              ///< over the scenarios that finished (+inf when none did)
  double mean_cost_usd = 0;            ///< over all scenarios (abandoned ones: what was paid)
  double mean_revocations = 0;
  double mean_replacements = 0;
  Percentiles time_s;                  ///< over all scenarios (+inf for those that never finished)
  Percentiles cost_usd;
  std::vector<ScenarioOutcome> outcomes;  ///< in scenario order, when keep_outcomes
};

namespace detail {

/// One instance in a scenario.
struct SimInstance {
  std::size_t type = 0;
  double join_s = 0;    ///< starts training (and billing)
  double notice_s = 0;  ///< gets the revocation notice
  double leave_s = 0;   ///< is revoked
  bool joined = false;
  bool noticed = false;
  bool left = false;
  // Fitted revocation models only:
  int pool = -1;          ///< the runner's pool of the instance; -1: the constant-rate law
  double up_s = 0;        ///< is up (billed from here); +inf: never comes
  double age_at_up_s = 0; ///< its age when it is up
  bool follower = false;  ///< leaves with another instance's preemption (starts no cluster)
  std::uint32_t version = 0;  ///< its events on the queue of another version no longer apply (a market switch redrew them)
};

/// Does worker type `k` draw from fitted pools (a model is given and type_pools[k] is not empty)?
[[nodiscard]] inline bool draws_from_pools(const SimulateOptions& options, std::size_t k) {
  return options.revocations.model && k < options.revocations.type_pools.size() &&
         !options.revocations.type_pools[k].empty();
}

/// The work of one simulation, counted in events (an instance drawn, an event handled; a re-plan counts
/// kReplanWork, kReplanWorkPerSurvivor per instance that stays and the work its planner reports, which
/// Replanner::policy() leaves at 0 so that its memo cannot change the count),
/// shared by its threads. Beyond kMaxSimulatedEvents every runner stops with spotdnn::invalid_argument: the total work of a simulation does not depend on the threads, so whether
/// it is refused does not either.
class WorkMeter {
 public:
  /// A re-plan costs at least this many other events (measured on the preset), plus its search's work.
  static constexpr std::int64_t kReplanWork = 10;
  /// ... and this many per instance that must stay (measured: about 2.5 µs per survivor at quota 10,000).
  static constexpr std::int64_t kReplanWorkPerSurvivor = 5;

  void add(std::int64_t events) {
    local_ += events;
    if (local_ < 4096) return;
    flush();
  }
  /// Adds what is pending; throws when the total exceeds the maximum (WorkLimitReached when the shared
  /// meter says `quiet`, for a caller that stops there: the confidence search).
  void flush() {
    const std::int64_t total = shared_.total.fetch_add(local_) + local_;
    local_ = 0;
    if (total > shared_.limit) {
      if (shared_.quiet) throw WorkLimitReached{};
      fail("simulate", "work", std::to_string(total) + " events",
           "a simulation may handle at most " + std::to_string(kMaxSimulatedEvents) +
               " events (instances drawn, revocations and joins; a re-plan counts " + std::to_string(kReplanWork) +
               " plus " + std::to_string(kReplanWorkPerSurvivor) + " per survivor and the work its planner reports); simulate fewer scenarios, a smaller cluster or a lower hazard");
    }
  }
  /// What flush() throws beyond the maximum for a `quiet` meter.
  struct WorkLimitReached {};
  /// A per-thread view of a shared meter.
  struct Shared {
    std::atomic<std::int64_t> total{0};
    bool quiet = false;  ///< beyond the maximum, throw WorkLimitReached instead of spotdnn::invalid_argument
    std::int64_t limit = kMaxSimulatedEvents;  ///< the maximum (a quiet caller may set a lower one)
  };
  explicit WorkMeter(Shared& shared) : shared_(shared) {}

 private:
  Shared& shared_;
  std::int64_t local_ = 0;
};

/// Runs scenarios of one setup; keeps scratch buffers so that a scenario does not allocate (without
/// replacements). One runner per thread.
class ScenarioRunner {
 public:
  ScenarioRunner(const PerformanceModel& model, const InterruptionModel& interruption, std::vector<int> counts,
                 double target_loss, double deadline_s, const SimulateOptions& options, WorkMeter& work)
      : work_(work),
        model_(model),
        interruption_(interruption),
        initial_(std::move(counts)),
        target_loss_(target_loss),
        deadline_s_(deadline_s),
        options_(options),
        active_(initial_.size(), 0),
        unnoticed_(initial_.size(), 0) {
    std::size_t n = 0;
    for (int c : initial_) n += std::size_t(c);
    instances_.reserve(2 * n + 8);
    events_.reserve(3 * n + 8);
    if (options_.revocations.model) set_up_fitted(*options_.revocations.model);
    if (fitted_) followers_.reserve(n + 8);
  }

  [[nodiscard]] ScenarioOutcome run(std::uint64_t index) {
    ScenarioRng rng(scenario_seed(options_.seed, index));
    instances_.clear();
    std::fill(unnoticed_.begin(), unnoticed_.end(), 0);
    if (!fitted_) {
      if (!quick_) quick_ = quick_finish();
      if (quick_->possible) {
        // One draw per instance, as add_instance() makes them. When every draw is above its type's
        // threshold, every notice and revocation comes after the starting cluster finishes: the scenario
        // is that finish, and the lifetimes need not be computed.
        raw_draws_.clear();
        bool all_late = true;
        for (std::size_t k = 0; k < initial_.size(); ++k) {
          for (int i = 0; i < initial_[k]; ++i) {
            raw_draws_.push_back(rng());
            all_late = all_late && (raw_draws_.back() >> 11) >= quick_->threshold[k];
          }
        }
        if (all_late) {
          work_.add(std::int64_t(raw_draws_.size()) + 1);  // the instances drawn and the loop's one pass
          return finished_at_start(quick_->finish_s, *initial_estimate_);
        }
        std::size_t draw = 0;
        for (std::size_t k = 0; k < initial_.size(); ++k) {
          for (int i = 0; i < initial_[k]; ++i) add_instance_drawn(k, 0.0, 0.0, raw_draws_[draw++], false);
        }
      } else {
        for (std::size_t k = 0; k < initial_.size(); ++k) {
          for (int i = 0; i < initial_[k]; ++i) add_instance(k, 0.0, 0.0, rng, false);
        }
      }
    } else {
      std::fill(pool_alive_.begin(), pool_alive_.end(), 0);
      std::fill(shock_pending_.begin(), shock_pending_.end(), char(0));
      for (MarketGroup& g : groups_) {
        g.state = detail::unit_uniform(rng()) < g.time_share[0] ? 0 : 1;
        g.switch_pending = false;
        g.frozen_s = 0;
      }
      add_initial_fitted(rng);
    }
    std::fill(active_.begin(), active_.end(), 0);
    events_.clear();
    for (std::size_t i = 0; i < instances_.size(); ++i) {
      if (instances_[i].pool < 0) {  // a fitted instance trains join_delay_s after it is up
        instances_[i].joined = true;
        ++active_[instances_[i].type];
      }
      if (fitted_) schedule(i);  // without a fitted model: below, once the first event is known
    }
    for (std::size_t pool = 0; fitted_ && pool < pool_alive_.size(); ++pool) {
      if (pool_alive_[pool] > 0) schedule_shock(pool, 0.0, rng);
    }
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (group_alive(g)) schedule_switch(g, 0.0, rng);
    }
    const LossModel& loss_model = model_.workload().loss_model;
    const double horizon_s = options_.horizon_factor * deadline_s_;

    ScenarioOutcome out;
    // Without a fitted model every scenario starts from the same cluster: its estimate is computed once.
    // (quick_finish() computed it.)
    Estimate e = fitted_ ? model_.estimate(active_.data(), target_loss_, options_.predict) : *initial_estimate_;
    LossCurve curve = loss_curve(loss_model, e);
    double j = 0;  // iterations done on the current cluster's curve
    double loss = curve.decreasing() ? curve.loss_at(0.0) : std::numeric_limits<double>::infinity();
    double t = 0;
    double worker_cost = 0;
    if (!fitted_) {
      // Most scenarios of a low hazard finish before their first event: found by a scan, such a scenario
      // ends here exactly as the first pass of the loop below would end it, and no event is queued.
      double first_s = std::numeric_limits<double>::infinity();
      for (const SimInstance& inst : instances_) {
        if (options_.replacement != Replacement::none) first_s = std::min(first_s, inst.notice_s);
        first_s = std::min(first_s, inst.leave_s);
      }
      if (e.workers > 0 && curve.decreasing()) {
        const double j_target = curve.iterations_at(target_loss_);
        const double finish_s = j_target > j ? t + (j_target - j) * e.iteration_time_s : t;
        if (finish_s <= first_s && finish_s <= horizon_s) {
          work_.add(1);
          worker_cost += units::cost_usd(e.worker_price_usd_per_hour, finish_s - t);
          out.samples_trained += e.samples_per_s * (finish_s - t);
          out.finished = true;
          out.met_deadline = finish_s <= deadline_s_;
          out.time_s = finish_s;
          out.final_loss = target_loss_;
          return settle(out, finish_s, worker_cost);
        }
      }
      // Queued at once: the events are distinct in (time, instance, kind), the queue's strict order, so one
      // heapify pops them in the order pushing them one by one would.
      for (std::size_t i = 0; i < instances_.size(); ++i) schedule(i, false);
      std::make_heap(events_.begin(), events_.end(), Event::later);
    }
    auto re_estimate = [&] {
      e = model_.estimate(active_.data(), target_loss_, options_.predict);
      curve = loss_curve(loss_model, e);
      if (e.workers > 0 && curve.decreasing()) {
        j = std::isinf(loss) ? 0.0 : curve.iterations_at(loss);
        if (std::isinf(loss)) loss = curve.loss_at(0.0);
      }
    };
    // With a fitted model, instances found up together join together: when the cluster changed and another
    // event comes at the same moment, the estimate is recomputed once, after the last of them. Instances
    // that join at time 0 belong to the starting cluster: nothing has trained yet (loss +inf), so training
    // starts at the beginning of the curve of the cluster they make.
    bool dirty = false;
    if (fitted_ && !events_.empty() && events_.front().time_s == 0.0) {
      dirty = true;
      loss = std::numeric_limits<double>::infinity();
    }

    for (;;) {
      work_.add(1);
      // The next event: a notice, a join or a revocation (earliest first; on ties the first instance, and
      // for one instance notice before join before leave). Events that no longer apply are dropped here.
      double t_event = std::numeric_limits<double>::infinity();
      std::size_t which = 0;
      int kind = -1;  // 0 notice, 1 join, 2 leave, 3 a shock to the pool `which`, 4 a switch of market group `which`
      while (!events_.empty()) {
        const Event next = events_.front();
        if (next.kind == 3 || next.kind == 4) {
          // A shock to a pool: only while the pool has an instance that has not left (and at its state's rate
          // when it was drawn). A market switch: only while the group has such an instance.
          const bool shock = next.kind == 3;
          const bool current = shock ? next.version == shock_version_[next.instance] : true;
          if (current && (shock ? pool_alive_[next.instance] > 0 : group_alive(next.instance))) {
            t_event = next.time_s, which = next.instance, kind = next.kind;
            break;
          }
          if (current && shock) shock_pending_[next.instance] = 0;
          if (!shock) freeze(next.instance, t);
          std::pop_heap(events_.begin(), events_.end(), Event::later);
          events_.pop_back();
          continue;
        }
        const SimInstance& inst = instances_[next.instance];
        const bool applies = next.version == inst.version && !inst.left &&
                             (next.kind == 2 || (next.kind == 0 ? !inst.noticed : !inst.joined));
        if (applies) {
          t_event = next.time_s, which = next.instance, kind = next.kind;
          break;
        }
        std::pop_heap(events_.begin(), events_.end(), Event::later);
        events_.pop_back();
      }
      if (kind >= 0) {
        std::pop_heap(events_.begin(), events_.end(), Event::later);
        events_.pop_back();
      }
      if (!(dirty && kind >= 0 && t_event == t)) {  // else: one more change at this moment, nothing trains
        if (dirty) {
          re_estimate();
          dirty = false;
        }
        const bool training = e.workers > 0 && curve.decreasing();
        if (training) {
          const double j_target = curve.iterations_at(target_loss_);
          const double finish_s = j_target > j ? t + (j_target - j) * e.iteration_time_s : t;
          if (finish_s <= t_event && finish_s <= horizon_s) {
            if (!fitted_) worker_cost += units::cost_usd(e.worker_price_usd_per_hour, finish_s - t);
            out.samples_trained += e.samples_per_s * (finish_s - t);
            out.finished = true;
            out.met_deadline = finish_s <= deadline_s_;
            out.time_s = finish_s;
            out.final_loss = target_loss_;
            t = finish_s;
            break;
          }
        }
        if (kind < 0 || t_event > horizon_s) {
          // Nothing more happens (no worker left) or the horizon comes first: abandon.
          const double end_s = kind < 0 && !training ? t : horizon_s;
          if (e.workers > 0) {
            if (!fitted_) worker_cost += units::cost_usd(e.worker_price_usd_per_hour, end_s - t);
            if (training) {
              out.samples_trained += e.samples_per_s * (end_s - t);
              j += (end_s - t) * e.iterations_per_s;
              loss = curve.loss_at(j);
            }
          }
          t = end_s;
          out.final_loss = loss;
          break;
        }
        if (e.workers > 0) {
          const double dt = t_event - t;
          if (!fitted_) worker_cost += units::cost_usd(e.worker_price_usd_per_hour, dt);
          if (training) {
            out.samples_trained += e.samples_per_s * dt;
            j += dt * e.iterations_per_s;
          }
        }
        t = t_event;
        if (training) loss = curve.loss_at(j);
      }

      if (kind == 3) {
        on_shock(which, t, loss, rng, out);
        continue;
      }
      if (kind == 4) {
        on_switch(which, t, rng);
        continue;
      }
      SimInstance& inst = instances_[which];
      bool changed = false;
      if (kind == 0) {
        inst.noticed = true;
        --unnoticed_[inst.type];
        if (fitted_ && inst.pool >= 0 && !inst.follower) {
          // A trigger: its followers get their notice now and leave with it.
          const double leave_s = inst.leave_s;
          draw_followers(which, t, rng);
          for (std::size_t f : followers_) {
            SimInstance& follower = instances_[f];
            follower.noticed = true;
            --unnoticed_[follower.type];
            follower.notice_s = t;
            follower.leave_s = std::min(follower.leave_s, leave_s);
            push_event(follower.leave_s, f, 2);
          }
          on_notice(which, t, loss, rng, out);
          for (std::size_t f : followers_) on_notice(f, t, loss, rng, out);
        } else {
          on_notice(which, t, loss, rng, out);
        }
      } else if (kind == 1) {
        inst.joined = true;
        ++active_[inst.type];
        changed = true;
      } else {
        inst.left = true;
        if (!inst.noticed) --unnoticed_[inst.type];
        inst.noticed = true;
        ++out.revocations;
        if (inst.joined) {
          --active_[inst.type];
          changed = true;
        }
        if (fitted_ && inst.pool >= 0) {
          --pool_alive_[std::size_t(inst.pool)];
          on_fitted_leave(which, t, rng, out, changed);
        }
      }
      if (changed) {
        if (fitted_ && !events_.empty() && events_.front().time_s == t) {
          dirty = true;
        } else {
          re_estimate();
        }
      }
    }
    if (fitted_) worker_cost = fitted_worker_cost_usd(t);
    return settle(out, t, worker_cost);
  }

 private:
  /// Without a fitted model: when a scenario can end at the starting cluster's finish without a lifetime
  /// computed (see run()). `threshold[k]`: a draw whose top 53 bits are at least this gives an instance
  /// of type k a revocation (and notice) after the finish, with a margin of 1e-6 (relative) over the
  /// rounding of the lifetime's computation; 2^53: never.
  struct QuickFinish {
    bool possible = false;
    double finish_s = 0;
    std::vector<std::uint64_t> threshold;
  };

  [[nodiscard]] QuickFinish quick_finish() {
    QuickFinish q;
    initial_estimate_ = model_.estimate(initial_.data(), target_loss_, options_.predict);
    const Estimate& e = *initial_estimate_;
    const LossCurve curve = loss_curve(model_.workload().loss_model, e);
    if (!(e.workers > 0 && curve.decreasing())) return q;
    const double j_target = curve.iterations_at(target_loss_);
    q.finish_s = j_target > 0.0 ? 0.0 + (j_target - 0.0) * e.iteration_time_s : 0.0;  // the loop's first pass, t = j = 0
    if (!(q.finish_s <= options_.horizon_factor * deadline_s_)) return q;
    constexpr std::uint64_t kNever = std::uint64_t(1) << 53;
    // Each event must come after the finish: the revocation, and its notice notice_s before it.
    const double required_s = (q.finish_s + (options_.replacement != Replacement::none ? options_.notice_s : 0.0)) * (1 + 1e-6) + 1e-6;
    q.threshold.assign(initial_.size(), kNever);
    for (std::size_t k = 0; k < initial_.size(); ++k) {
      if (initial_[k] == 0) continue;
      if (std::isinf(interruption_.lifetime_s(k, 1.0))) {  // never revoked (no hazard: on demand)
        q.threshold[k] = 0;
        continue;
      }
      double lo = 0, hi = 1;  // unit-exponential draws E: lifetime_s is increasing in E
      while (hi < 1e3 && !(interruption_.lifetime_s(k, hi) >= required_s)) lo = hi, hi *= 2;
      if (!(interruption_.lifetime_s(k, hi) >= required_s)) continue;  // about e^-1000: never
      for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
        const double mid = 0.5 * (lo + hi);
        (interruption_.lifetime_s(k, mid) >= required_s ? hi : lo) = mid;
      }
      const double u = -std::expm1(-hi * (1 + 1e-6));  // E = −log1p(−u) ≥ hi·(1 + 1e-6) for u at least this
      const double m = std::ceil(u * 0x1.0p53) + 1;
      q.threshold[k] = m >= 0x1.0p53 ? kNever : std::uint64_t(m);
    }
    q.possible = true;
    return q;
  }

  /// The outcome of a scenario the starting cluster `e` finishes at `finish_s` before any event.
  [[nodiscard]] ScenarioOutcome finished_at_start(double finish_s, const Estimate& e) const {
    ScenarioOutcome out;
    out.samples_trained = 0.0 + e.samples_per_s * (finish_s - 0.0);  // as the loop's pass from t = 0 adds them
    out.finished = true;
    out.met_deadline = finish_s <= deadline_s_;
    out.time_s = finish_s;
    out.final_loss = target_loss_;
    return settle(out, finish_s, 0.0 + units::cost_usd(e.worker_price_usd_per_hour, finish_s - 0.0));
  }

  /// The bill of a scenario that ended at `end_s`: the workers' `worker_cost` and the PS's.
  [[nodiscard]] ScenarioOutcome& settle(ScenarioOutcome& out, double end_s, double worker_cost) const {
    out.worker_cost_usd = worker_cost;
    out.ps_cost_usd =
        options_.predict.charge_parameter_server ? units::cost_usd(model_.catalog().parameter_server.price_usd_per_hour, end_s) : 0.0;
    out.cost_usd = out.worker_cost_usd + out.ps_cost_usd;
    return out;
  }

  /// Adds an instance requested at `request_s` that starts training at `join_s`; `scheduled` puts its
  /// events on the queue at once (replacements; the initial instances are scheduled once all joined).
  void add_instance(std::size_t type, double request_s, double join_s, ScenarioRng& rng, bool scheduled = true) {
    add_instance_drawn(type, request_s, join_s, rng(), scheduled);
  }
  /// add_instance() with the instance's draw made already (`bits`, the next output of the stream).
  void add_instance_drawn(std::size_t type, double request_s, double join_s, std::uint64_t bits, bool scheduled) {
    work_.add(1);
    SimInstance inst;
    inst.type = type;
    inst.join_s = join_s;
    inst.leave_s = request_s + interruption_.lifetime_s(type, unit_exponential(bits));
    inst.notice_s = std::max(request_s, inst.leave_s - options_.notice_s);
    instances_.push_back(inst);
    ++unnoticed_[type];
    if (scheduled) schedule(instances_.size() - 1);
  }

  /// Adds an instance of `pool` (a runner pool index) of worker type `type` that is up at `up_s` (+inf:
  /// never) at age `age_s`: it trains join_delay_s later and lives the residual lifetime drawn from its age.
  void add_fitted_instance(std::size_t type, int pool, double up_s, double age_s, ScenarioRng& rng, bool scheduled = true) {
    work_.add(1);
    SimInstance inst;
    inst.type = type;
    inst.pool = pool;
    inst.up_s = up_s;
    inst.join_s = up_s + options_.join_delay_s;
    inst.age_at_up_s = age_s;
    inst.leave_s = std::isinf(up_s) ? up_s : up_s + law_now(std::size_t(pool)).draw_lifetime_s(age_s, rng);
    inst.notice_s = std::max(up_s, inst.leave_s - options_.notice_s);
    instances_.push_back(inst);
    ++unnoticed_[type];
    if (scheduled) schedule(instances_.size() - 1);
    if (std::isfinite(up_s)) {
      const int g = group_of_[std::size_t(pool)];
      const bool was_alive = g >= 0 && group_alive(std::size_t(g));
      ++pool_alive_[std::size_t(pool)];
      if (scheduled) {
        if (g >= 0 && !was_alive && !groups_[std::size_t(g)].switch_pending) {
          thaw(std::size_t(g), request_time_s_, rng);  // the state now, after the time nothing watched it
        }
        schedule_shock(std::size_t(pool), up_s, rng);  // no instance of the pool is up before
      }
    }
  }

  /// The law runner pool `pool` is met and replaced by now: its market state's, or its own.
  [[nodiscard]] const PoolLaw& law_now(std::size_t pool) const {
    const int g = group_of_[pool];
    return g < 0 ? laws_[pool] : state_laws_[pool][std::size_t(groups_[std::size_t(g)].state)];
  }
  /// Has market group `g` a pool with an instance that will be or is up and has not left?
  [[nodiscard]] bool group_alive(std::size_t g) const {
    for (std::size_t pool : groups_[g].pools) {
      if (pool_alive_[pool] > 0) return true;
    }
    return false;
  }
  /// Puts market group `g`'s next switch on the queue after `now` (one pending at a time).
  void schedule_switch(std::size_t g, double now, ScenarioRng& rng) {
    MarketGroup& group = groups_[g];
    if (group.switch_pending || !(group.leave_rate_per_s[std::size_t(group.state)] > 0)) return;
    group.switch_pending = true;
    events_.push_back({now + unit_exponential(rng()) / group.leave_rate_per_s[std::size_t(group.state)], g, 4, 0});
    std::push_heap(events_.begin(), events_.end(), Event::later);
  }
  /// Group `g` has no instance left at `now`: its switches stop; its state is kept as of `now`.
  void freeze(std::size_t g, double now) {
    groups_[g].switch_pending = false;
    groups_[g].frozen_s = now;
  }
  /// Group `g` has an instance again at `now`: its state drawn over the time since it froze (file comment),
  /// then its next switch.
  void thaw(std::size_t g, double now, ScenarioRng& rng) {
    MarketGroup& group = groups_[g];
    const double q0 = group.leave_rate_per_s[0], q1 = group.leave_rate_per_s[1], total = q0 + q1;
    if (total > 0 && now > group.frozen_s) {
      const std::size_t s = std::size_t(group.state);
      const double stationary = (s == 0 ? q1 : q0) / total;
      const double stay = stationary + (1 - stationary) * std::exp(-total * (now - group.frozen_s));
      if (!(detail::unit_uniform(rng()) < stay)) group.state = 1 - group.state;
    }
    schedule_switch(g, now, rng);
  }
  /// A switch of market group `g` at `t`: the other state; every instance of the group's pools that has
  /// neither left nor had its notice draws its residual lifetime again, from max(t, up) at its age then,
  /// under the new multiplier (its events re-queued); the pools' pending shocks are drawn again at the new
  /// state's rate. Then the next switch.
  void on_switch(std::size_t g, double t, ScenarioRng& rng) {
    MarketGroup& group = groups_[g];
    group.switch_pending = false;
    group.state = 1 - group.state;
    work_.add(std::int64_t(instances_.size()));
    for (std::size_t i = 0; i < instances_.size(); ++i) {
      SimInstance& inst = instances_[i];
      if (inst.pool < 0 || group_of_[std::size_t(inst.pool)] != int(g) || inst.left || inst.noticed || std::isinf(inst.up_s)) continue;
      const double from_s = std::max(t, inst.up_s);
      const double age_s = inst.age_at_up_s + (from_s - inst.up_s);
      inst.leave_s = from_s + law_now(std::size_t(inst.pool)).draw_lifetime_s(age_s, rng);
      inst.notice_s = std::max(from_s, inst.leave_s - options_.notice_s);
      ++inst.version;
      schedule(i);
    }
    for (std::size_t pool : group.pools) {
      if (!shock_pending_[pool]) continue;
      shock_pending_[pool] = 0;
      ++shock_version_[pool];
      schedule_shock(pool, t, rng);
    }
    schedule_switch(g, t, rng);
  }

  /// Puts runner pool `pool`'s next shock on the queue after `now` (a Poisson process: memoryless), unless
  /// it has none or one is already pending. Its event's `instance` is the pool.
  void schedule_shock(std::size_t pool, double now, ScenarioRng& rng) {
    const int g = group_of_[pool];
    const double rate_per_s = g < 0 ? shock_rate_per_s_[pool] : state_shock_rate_per_s_[pool][std::size_t(groups_[std::size_t(g)].state)];
    if (!(rate_per_s > 0) || shock_pending_[pool]) return;
    shock_pending_[pool] = 1;
    events_.push_back({now + unit_exponential(rng()) / rate_per_s, pool, 3, shock_version_[pool]});
    std::push_heap(events_.begin(), events_.end(), Event::later);
  }

  /// A shock to runner pool `pool` at `t`: every instance of it that is up, has not left and has had no
  /// notice is hit with the pool's probability: its notice is now and it leaves notice_s later (or at its
  /// own leave, if sooner). Then the pool's next shock.
  void on_shock(std::size_t pool, double t, double loss, ScenarioRng& rng, ScenarioOutcome& out) {
    shock_pending_[pool] = 0;
    work_.add(std::int64_t(instances_.size()));
    const double hit = shock_hit_[pool];
    const std::size_t before = instances_.size();  // not the instances a policy adds at these notices
    for (std::size_t i = 0; i < before; ++i) {
      SimInstance& inst = instances_[i];
      if (inst.pool != int(pool) || inst.left || inst.noticed || !(inst.up_s <= t)) continue;
      if (!(detail::unit_uniform(rng()) < hit)) continue;
      inst.noticed = true;
      inst.follower = true;  // a shock's: it starts no zone burst of its own
      --unnoticed_[inst.type];
      inst.notice_s = t;
      inst.leave_s = std::min(inst.leave_s, t + options_.notice_s);
      push_event(inst.leave_s, i, 2);
      on_notice(i, t, loss, rng, out);
    }
    if (pool_alive_[pool] > 0) schedule_shock(pool, t, rng);
  }

  /// The initial instances with a fitted model (see the file comment for the draws and their order).
  void add_initial_fitted(ScenarioRng& rng) {
    // Zones up and down together: one pattern per region with a joint law, for the first instance of each
    // of its pools in use.
    std::fill(joint_state_.begin(), joint_state_.end(), -1);
    for (const JointStart& j : joints_) {
      const std::vector<double>& share = j.group < 0 ? j.share : j.share_by_state[std::size_t(groups_[std::size_t(j.group)].state)];
      const double u = detail::unit_uniform(rng());
      std::size_t pattern = 0;
      double cumulative = 0;
      for (; pattern + 1 < share.size(); ++pattern) {
        cumulative += share[pattern];
        if (u < cumulative) break;
      }
      for (std::size_t bit = 0; bit < j.pools.size(); ++bit) {
        if (j.pools[bit] >= 0) joint_state_[std::size_t(j.pools[bit])] = int((pattern >> bit) & 1u);
      }
    }
    for (std::size_t k = 0; k < initial_.size(); ++k) {
      const std::vector<int>& pools = type_pools_[k];
      const int n = initial_[k];
      rr_[k] = n;
      if (pools.empty()) {
        for (int i = 0; i < n; ++i) add_instance(k, 0.0, 0.0, rng, false);
        continue;
      }
      const int m = int(pools.size());
      for (int p = 0; p < m; ++p) {  // a gang count per pool that has one and is asked for no more than it
        const PoolLaw& law = law_now(std::size_t(pools[std::size_t(p)]));
        const int assigned = n / m + (p < n % m ? 1 : 0);
        gang_up_[std::size_t(p)] = assigned > 0 && law.has_gang() && assigned <= law.gang_requested() ? law.draw_gang_count(rng) : -1;
      }
      for (int i = 0; i < n; ++i) {
        const int p = i % m;
        const int pool = pools[std::size_t(p)];
        const PoolLaw& law = law_now(std::size_t(pool));
        const int gang = gang_up_[std::size_t(p)];
        const int joint = i < m && gang < 0 ? joint_state_[std::size_t(pool)] : -1;  // the pool's first instance
        const PoolLaw::Start start = joint == 1   ? law.draw_found_up(rng)
                                     : joint == 0 ? law.draw_waiting(rng)
                                     : gang < 0   ? law.draw_start(rng)
                                     : i / m < gang ? law.draw_found_up(rng)
                                                    : law.draw_waiting(rng);
        add_fitted_instance(k, pool, start.found_up ? 0.0 : start.wait_s, start.age_s, rng, false);
      }
    }
  }

  /// Queues an event of instance `i` (`heap`: keep the queue a heap; false: the caller heapifies).
  void push_event(double time_s, std::size_t i, int kind, bool heap = true) {
    if (!(time_s < std::numeric_limits<double>::infinity())) return;
    events_.push_back({time_s, i, kind, instances_[i].version});
    if (heap) std::push_heap(events_.begin(), events_.end(), Event::later);
  }

  /// Puts the events of instance `i` on the queue: its notice (when replacements listen for notices), its
  /// join (when it is not yet training and joins before it leaves) and its leaving. Events that never
  /// happen (an on-demand instance leaves at +inf) are not queued.
  void schedule(std::size_t i, bool heap = true) {
    const SimInstance& inst = instances_[i];
    if (options_.replacement != Replacement::none) push_event(inst.notice_s, i, 0, heap);
    if (!inst.joined && inst.join_s < inst.leave_s) push_event(inst.join_s, i, 1, heap);
    push_event(inst.leave_s, i, 2, heap);
  }

  /// Draws the followers of trigger `trigger` at `now` into followers_ (and marks them): every other fitted
  /// instance up at `now`, not left and without a notice, with the probability of its pool's link to the
  /// trigger's (follow_).
  void draw_followers(std::size_t trigger, double now, ScenarioRng& rng) {
    followers_.clear();
    const std::size_t a = std::size_t(instances_[trigger].pool);
    if (!any_follow_[a]) return;
    work_.add(std::int64_t(instances_.size()));  // the scan
    const double* link = follow_.data() + a * laws_.size();
    for (std::size_t i = 0; i < instances_.size(); ++i) {
      SimInstance& other = instances_[i];
      if (i == trigger || other.pool < 0 || other.left || other.noticed || !(other.up_s <= now)) continue;
      const double p = link[other.pool];
      if (!(p > 0)) continue;
      if (p < 1 && !(unit_uniform(rng()) < p)) continue;
      other.follower = true;
      followers_.push_back(i);
    }
  }

  /// After fitted instance `which` left at `t`: without notices, its followers leave with it now (when it
  /// is a trigger); with same_type, its replacement is requested now.
  void on_fitted_leave(std::size_t which, double t, ScenarioRng& rng, ScenarioOutcome& out, bool& changed) {
    const std::size_t type = instances_[which].type;
    const int pool = instances_[which].pool;
    if (options_.replacement == Replacement::none && !instances_[which].follower) {
      draw_followers(which, t, rng);
      for (std::size_t f : followers_) {
        SimInstance& follower = instances_[f];
        follower.left = true;
        --pool_alive_[std::size_t(follower.pool)];
        follower.noticed = true;
        --unnoticed_[follower.type];
        follower.notice_s = t;
        follower.leave_s = t;
        ++out.revocations;
        if (follower.joined) {
          --active_[follower.type];
          changed = true;
        }
      }
    }
    if (options_.replacement == Replacement::same_type) {
      const double wait_s = law_now(std::size_t(pool)).replacement_wait().draw_s(rng);
      request_time_s_ = t;
      add_fitted_instance(type, pool, t + wait_s, 0.0, rng);
      ++out.replacements;
    }
  }

  void on_notice(std::size_t which, double t, double loss, ScenarioRng& rng, ScenarioOutcome& out) {
    const std::size_t leaving_type = instances_[which].type;
    const double join_s = t + options_.join_delay_s;
    if (options_.replacement == Replacement::same_type) {
      if (instances_[which].pool >= 0) return;  // fitted: replaced when it leaves (on_fitted_leave)
      add_instance(leaving_type, t, join_s, rng);
      ++out.replacements;
      return;
    }
    if (options_.replacement != Replacement::replan) return;
    RevocationNotice notice;
    notice.time_s = t;
    notice.deadline_s = deadline_s_;
    notice.target_loss = target_loss_;
    notice.loss_reached = loss;
    notice.leaving_type = leaving_type;
    notice.survivors = unnoticed_;
    std::int64_t planner_work = 0;
    notice.planner_work = &planner_work;
    const std::vector<int> additions = options_.replacement_planner(notice);
    std::int64_t survivors = 0;
    for (int count : notice.survivors) survivors += count;
    // A re-plan's search grows with the instances that must stay (its infeasibility diagnosis most).
    work_.add(WorkMeter::kReplanWork + WorkMeter::kReplanWorkPerSurvivor * survivors + planner_work);
    if (additions.size() != initial_.size()) {
      fail("simulate", "replacement_planner result size", double(additions.size()),
           "must equal the number of worker types (" + std::to_string(initial_.size()) + ")");
    }
    for (std::size_t k = 0; k < additions.size(); ++k) {
      const bool pooled = fitted_ && !type_pools_[k].empty();
      if (additions[k] > 0 && !pooled) interruption_.require_hazard(k, "simulate", "the replacement planner adds it");
      for (int i = 0; i < additions[k]; ++i) {
        if (pooled) {
          const std::vector<int>& pools = type_pools_[k];
          const int pool = pools[std::size_t(rr_[k]++) % pools.size()];
          const double wait_s = law_now(std::size_t(pool)).replacement_wait().draw_s(rng);
          request_time_s_ = t;
          add_fitted_instance(k, pool, t + wait_s, 0.0, rng);
        } else {
          add_instance(k, t, join_s, rng);
        }
        ++out.replacements;
      }
    }
  }

  /// With a fitted model: each instance billed from when it is up (a constant-rate one from when it
  /// trains) until it leaves or the scenario ends at `end_s`.
  [[nodiscard]] double fitted_worker_cost_usd(double end_s) const {
    double cost = 0;
    for (const SimInstance& inst : instances_) {
      const double from_s = inst.pool >= 0 ? inst.up_s : inst.joined ? inst.join_s : std::numeric_limits<double>::infinity();
      const double to_s = std::min(inst.leave_s, end_s);
      if (to_s > from_s) cost += units::cost_usd(price_usd_per_hour_[inst.type], to_s - from_s);
    }
    return cost;
  }

  /// The runner's pools (those type_pools names), their laws and how their preemptions go together.
  void set_up_fitted(const RevocationModel& model) {
    const std::vector<std::vector<int>>& type_pools = options_.revocations.type_pools;
    type_pools_.assign(initial_.size(), {});
    std::vector<int> local(model.pools.size(), -1);
    std::vector<std::size_t> used;  // model pool of each runner pool
    std::size_t widest = 0;
    for (std::size_t k = 0; k < initial_.size() && k < type_pools.size(); ++k) {
      for (int p : type_pools[k]) {
        if (local[std::size_t(p)] < 0) {
          local[std::size_t(p)] = int(used.size());
          used.push_back(std::size_t(p));
        }
        type_pools_[k].push_back(local[std::size_t(p)]);
      }
      widest = std::max(widest, type_pools[k].size());
    }
    if (used.empty()) return;  // no type has pools: the constant-rate simulation, exactly
    fitted_ = true;
    const std::size_t n = used.size();
    laws_.reserve(n);
    std::vector<std::string> zones, regions;
    std::vector<double> region_probability;
    shock_rate_per_s_.clear();
    shock_hit_.clear();
    for (std::size_t q = 0; q < used.size(); ++q) {
      const std::size_t p = used[q];
      const PoolModel& pool = model.pools[p];
      laws_.emplace_back(pool, "simulate", "options.revocations.model->pools[" + std::to_string(p) + "]");
      shock_rate_per_s_.push_back(pool.clustering.shock_rate_per_hour / units::kSecondsPerHour);
      shock_hit_.push_back(pool.clustering.shock_hit_probability);
      zones.push_back(pool.pool.zone);
      regions.push_back(region_of_zone(pool.pool.zone));
      double probability = 0;
      for (const RegionCorrelation& r : model.regions) {
        if (r.region == regions.back()) {
          probability = r.co_preemption_probability;
          break;
        }
      }
      region_probability.push_back(probability);
    }
    follow_.assign(n * n, 0.0);
    any_follow_.assign(n, false);
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) {
        // Within a pool, bursts are the shocks' (when the pool has them); across zones, followers.
        const double p = a == b ? (shock_rate_per_s_[a] > 0 ? 0.0 : laws_[a].co_preemption_probability())
                                : regions[a] == regions[b] && zones[a] != zones[b] ? region_probability[a] : 0.0;
        follow_[a * n + b] = p;
        if (p > 0) any_follow_[a] = true;
      }
    }
    price_usd_per_hour_.clear();
    for (const WorkerType& w : model_.worker_types()) price_usd_per_hour_.push_back(w.price_usd_per_hour);
    rr_.assign(initial_.size(), 0);
    gang_up_.assign(widest, -1);
    pool_alive_.assign(n, 0);
    shock_pending_.assign(n, 0);
    shock_version_.assign(n, 0);
    // Market groups: the pools in use of each region with market states.
    groups_.clear();
    group_of_.assign(n, -1);
    state_laws_.assign(n, {});
    state_shock_rate_per_s_.assign(n, {0.0, 0.0});
    for (const MarketRegimes& r : model.regimes) {
      if (r.states.size() != 2) continue;
      MarketGroup g;
      for (std::size_t q = 0; q < n; ++q) {
        const PoolModel& pool = model.pools[used[q]];
        if (region_of_zone(pool.pool.zone) == r.region && pool.in_state.size() == 2) g.pools.push_back(q);
      }
      if (g.pools.empty()) continue;
      const double shares = r.states[0].time_share + r.states[1].time_share;
      for (std::size_t st = 0; st < 2; ++st) {
        g.time_share[st] = shares > 0 ? r.states[st].time_share / shares : 0.5;
        g.leave_rate_per_s[st] = r.states[st].leave_rate_per_hour / units::kSecondsPerHour;
      }
      for (std::size_t q : g.pools) {
        group_of_[q] = int(groups_.size());
        const PoolModel& pool = model.pools[used[q]];
        for (std::size_t st = 0; st < 2; ++st) {
          state_laws_[q][st] = PoolLaw(pool_in_market_state(pool, st), "simulate",
                                       "options.revocations.model->pools[" + std::to_string(used[q]) + "].in_state[" + std::to_string(st) + "]");
          state_shock_rate_per_s_[q][st] = pool.in_state[st].shock_rate_per_hour / units::kSecondsPerHour;
        }
      }
      groups_.push_back(std::move(g));
    }
    // Joint start laws of regions with two or more of their joint pools in use.
    joints_.clear();
    joint_state_.assign(n, -1);
    for (const RegionCorrelation& r : model.regions) {
      if (r.joint_pools.size() < 2 || r.joint_up_share.size() != (std::size_t(1) << r.joint_pools.size())) continue;
      JointStart j;
      int in_use = 0;
      for (const std::string& name : r.joint_pools) {
        int local_pool = -1;
        for (std::size_t q = 0; q < n; ++q) {
          if (model.pools[used[q]].pool.name() == name) local_pool = int(q);
        }
        j.pools.push_back(local_pool);
        in_use += local_pool >= 0 ? 1 : 0;
      }
      if (in_use < 2) continue;  // one pool alone: its own start state is the pattern's marginal
      j.share = r.joint_up_share;
      if (const MarketRegimes* regimes = model.regimes_of(r.region); regimes && regimes->joint_up_share_by_state.size() == 2) {
        const int first = j.pools.front() >= 0 ? j.pools.front() : j.pools.back();
        bool fits = group_of_[std::size_t(first)] >= 0;
        for (const std::vector<double>& share : regimes->joint_up_share_by_state) fits = fits && share.size() == j.share.size();
        if (fits) {
          j.group = group_of_[std::size_t(first)];
          j.share_by_state = regimes->joint_up_share_by_state;
        }
      }
      joints_.push_back(std::move(j));
    }
  }

  WorkMeter& work_;
  const PerformanceModel& model_;
  const InterruptionModel& interruption_;
  std::vector<int> initial_;
  double target_loss_;
  double deadline_s_;
  const SimulateOptions& options_;
  std::vector<int> active_;
  std::vector<int> unnoticed_;  ///< per type: instances that have neither left nor had a notice
  std::vector<SimInstance> instances_;
  /// A min-heap of pending events by (time, instance, kind): O(log n) per event instead of a scan of
  /// every instance, so large clusters with many revocations stay fast.
  struct Event {
    double time_s;
    std::size_t instance;
    int kind;  ///< 0 notice, 1 join, 2 leave, 3 a shock (`instance` is then the runner pool), 4 a market switch (the group)
    std::uint32_t version;  ///< the instance's (or the pool's shocks') version it was drawn for
    static bool later(const Event& a, const Event& b) {
      if (a.time_s != b.time_s) return a.time_s > b.time_s;
      if (a.instance != b.instance) return a.instance > b.instance;
      return a.kind > b.kind;
    }
  };
  std::vector<Event> events_;
  std::optional<Estimate> initial_estimate_;  ///< without a fitted model: the starting cluster's estimate
  std::optional<QuickFinish> quick_;          ///< without a fitted model: computed at the first scenario
  std::vector<std::uint64_t> raw_draws_;      ///< the starting instances' draws of a scenario

  // A fitted revocation model (set_up_fitted); fitted_ false: none, or no type has pools.
  bool fitted_ = false;
  std::vector<PoolLaw> laws_;                  ///< per runner pool
  std::vector<std::vector<int>> type_pools_;   ///< per type: runner pools
  std::vector<double> follow_;                 ///< [a·pools + b]: P(an instance of b follows a trigger of a)
  std::vector<bool> any_follow_;               ///< per runner pool: some link above 0
  std::vector<double> price_usd_per_hour_;     ///< per type
  std::vector<int> rr_;                        ///< per type: instances assigned to pools so far (round-robin)
  /// A region's joint start law over the runner's pools (-1: a joint pool not in use).
  struct JointStart {
    std::vector<int> pools;
    std::vector<double> share;
    int group = -1;  ///< its region's market group, whose state picks share_by_state; -1: `share`
    std::vector<std::vector<double>> share_by_state;
  };
  /// The runner's pools of one region with market states (MarketRegimes) and the scenario's state.
  struct MarketGroup {
    std::vector<std::size_t> pools;
    std::array<double, 2> time_share{1, 0};
    std::array<double, 2> leave_rate_per_s{0, 0};
    // Scratch, per scenario:
    int state = 0;
    bool switch_pending = false;
    double frozen_s = 0;  ///< when its switches stopped (no instance left)
  };
  std::vector<MarketGroup> groups_;
  std::vector<int> group_of_;                          ///< per runner pool: its market group, -1 none
  std::vector<std::array<PoolLaw, 2>> state_laws_;     ///< per runner pool in a group: its law per state
  std::vector<std::array<double, 2>> state_shock_rate_per_s_;  ///< per runner pool in a group
  std::vector<std::uint32_t> shock_version_;           ///< scratch: per runner pool, the version of its pending shock
  double request_time_s_ = 0;                          ///< scratch: when the instance being added was requested
  std::vector<JointStart> joints_;
  std::vector<double> shock_rate_per_s_;  ///< per runner pool: its shocks' rate (0: none)
  std::vector<double> shock_hit_;         ///< per runner pool: P(an instance up is hit by a shock)
  std::vector<int> pool_alive_;           ///< scratch: per runner pool, instances that will be or are up and have not left
  std::vector<char> shock_pending_;       ///< scratch: per runner pool, a shock event is on the queue
  std::vector<int> joint_state_;  ///< scratch: per runner pool, the drawn state of its first instance (-1: none)
  std::vector<int> gang_up_;                   ///< scratch: per position in a type's pools, the gang count or -1
  std::vector<std::size_t> followers_;         ///< scratch: the followers of the current trigger
};

inline Percentiles nearest_rank_percentiles(std::vector<double> values) {
  Percentiles p;
  if (values.empty()) return p;
  // The k-th smallest for increasing k: each selection leaves the smaller values before k, so the next one
  // selects among the values after it (linear time each, the values a full sort would give).
  std::size_t selected = 0;  // values[0, selected) hold their sorted values
  auto at = [&](double q) {
    const std::size_t rank = std::size_t(std::ceil(q * double(values.size())));
    const std::size_t k = std::min(values.size(), std::max<std::size_t>(rank, 1)) - 1;
    if (k >= selected) {
      std::nth_element(values.begin() + std::ptrdiff_t(selected), values.begin() + std::ptrdiff_t(k), values.end());
      selected = k + 1;
    }
    return values[k];
  };
  p.p10 = at(0.10);
  p.p50 = at(0.50);
  p.p90 = at(0.90);
  p.p95 = at(0.95);
  p.p99 = at(0.99);
  return p;
}

inline void validate_simulate_options(std::string_view fn, const SimulateOptions& options) {
  if (options.scenarios < 1 || options.scenarios > kMaxScenarios) {
    fail(fn, "options.scenarios", options.scenarios, "must be from 1 to " + std::to_string(kMaxScenarios));
  }
  require_non_negative(fn, "options.notice_s", options.notice_s);
  require_non_negative(fn, "options.join_delay_s", options.join_delay_s);
  if (!(options.horizon_factor >= 1) || !std::isfinite(options.horizon_factor)) {
    fail(fn, "options.horizon_factor", options.horizon_factor, "must be a finite number >= 1");
  }
  if (options.threads < 0 || options.threads > kMaxThreads) {
    fail(fn, "options.threads", options.threads, "must be from 0 (one per core) to " + std::to_string(kMaxThreads));
  }
  if (!(options.confidence_level > 0 && options.confidence_level < 1)) {
    fail(fn, "options.confidence_level", options.confidence_level, "must be in (0, 1)");
  }
  if (options.replacement == Replacement::replan && !options.replacement_planner) {
    fail(fn, "options.replacement_planner", "empty", "the replan policy needs a planner (see replanning_policy)");
  }
}


/// Per worker type: may a simulation of `counts` run an instance of it? The cluster's types, and with the
/// replan policy every type with a quota above 0 (the planner may add any of them); same-type replacement
/// adds only the cluster's types.
[[nodiscard]] inline std::vector<bool> types_in_use(const PerformanceModel& model, const std::vector<int>& counts,
                                                    Replacement replacement) {
  std::vector<bool> used(counts.size(), false);
  for (std::size_t k = 0; k < counts.size() && k < model.worker_types().size(); ++k) {
    used[k] = counts[k] > 0 || (replacement == Replacement::replan && model.worker_types()[k].quota > 0);
  }
  return used;
}

/// Checks options.revocations against the model's worker types (FittedRevocations): without a model no
/// type_pools; with one, one list per worker type of valid, distinct indices of pools of that type whose
/// numbers can be drawn from (PoolLaw), and region probabilities in [0, 1].
inline void validate_fitted_revocations(std::string_view fn, const PerformanceModel& model, const SimulateOptions& options) {
  const FittedRevocations& fitted = options.revocations;
  if (!fitted.model) {
    if (!fitted.type_pools.empty()) {
      fail(fn, "options.revocations.type_pools.size()", double(fitted.type_pools.size()),
           "must be 0 without a revocation model (options.revocations.model is null)");
    }
    return;
  }
  const RevocationModel& m = *fitted.model;
  const std::vector<WorkerType>& types = model.worker_types();
  if (fitted.type_pools.size() != types.size()) {
    fail(fn, "options.revocations.type_pools.size()", double(fitted.type_pools.size()),
         "must equal the number of worker types (" + std::to_string(types.size()) + ")");
  }
  std::vector<bool> checked(m.pools.size(), false);
  for (std::size_t k = 0; k < types.size(); ++k) {
    const std::vector<int>& pools = fitted.type_pools[k];
    for (std::size_t i = 0; i < pools.size(); ++i) {
      const std::string field = "options.revocations.type_pools[" + std::to_string(k) + "][" + std::to_string(i) + "]";
      const int p = pools[i];
      if (p < 0 || std::size_t(p) >= m.pools.size()) {
        fail(fn, field, p, "must index a pool of the model (0 to " + std::to_string(m.pools.size()) + " - 1)");
      }
      for (std::size_t before = 0; before < i; ++before) {
        if (pools[before] == p) fail(fn, field, p, "names pool " + std::to_string(p) + " twice for one type");
      }
      const PoolModel& pool = m.pools[std::size_t(p)];
      if (pool.pool.type != types[k].name) {
        fail(fn, field, p,
             "pool " + detail::quoted(pool.pool.name()) + " is of type " + detail::quoted(pool.pool.type) + ", not the worker type " +
                 detail::quoted(types[k].name));
      }
      if (!checked[std::size_t(p)]) {
        const PoolLaw law(pool, fn, "options.revocations.model->pools[" + std::to_string(p) + "]");
        checked[std::size_t(p)] = true;
      }
    }
  }
  for (std::size_t r = 0; r < m.regions.size(); ++r) {
    check_probability(fn, "options.revocations.model->regions[" + std::to_string(r) + "].co_preemption_probability",
                      m.regions[r].co_preemption_probability);
  }
  for (std::size_t r = 0; r < m.regimes.size(); ++r) {
    const std::string at = "options.revocations.model->regimes[" + std::to_string(r) + "]";
    if (m.regimes[r].states.size() != 2) {
      fail(fn, at + ".states.size()", double(m.regimes[r].states.size()), "must be 2 (calm, then stormy)");
    }
    for (std::size_t st = 0; st < 2; ++st) {
      const MarketState& state = m.regimes[r].states[st];
      const std::string field = at + ".states[" + std::to_string(st) + "]";
      check_probability(fn, field + ".time_share", state.time_share);
      if (!std::isfinite(state.hazard_multiplier) || state.hazard_multiplier < 0) {
        fail(fn, field + ".hazard_multiplier", state.hazard_multiplier, "must be a finite number >= 0");
      }
      if (!std::isfinite(state.leave_rate_per_hour) || state.leave_rate_per_hour < 0 ||
          state.leave_rate_per_hour > PoolLaw::kMaxShockRatePerHour) {
        fail(fn, field + ".leave_rate_per_hour", state.leave_rate_per_hour,
             "must be a finite number from 0 to " + detail::format_number(PoolLaw::kMaxShockRatePerHour) + " per hour");
      }
    }
    if (!(m.regimes[r].states[0].time_share + m.regimes[r].states[1].time_share > 0)) {
      fail(fn, at + ".states[0].time_share", m.regimes[r].states[0].time_share, "the two states' time shares must not both be 0");
    }
  }
  for (std::size_t p = 0; p < m.pools.size(); ++p) {
    const PoolModel& pool = m.pools[p];
    if (!pool.in_state.empty() && pool.in_state.size() != 2) {
      fail(fn, "options.revocations.model->pools[" + std::to_string(p) + "].in_state.size()", double(pool.in_state.size()),
           "must be 0 or 2 (one per market state)");
    }
    for (std::size_t st = 0; st < pool.in_state.size(); ++st) {
      const std::string field = "options.revocations.model->pools[" + std::to_string(p) + "].in_state[" + std::to_string(st) + "]";
      const double shock_rate_per_hour = pool.in_state[st].shock_rate_per_hour;
      if (!std::isfinite(shock_rate_per_hour) || shock_rate_per_hour < 0 || shock_rate_per_hour > PoolLaw::kMaxShockRatePerHour) {
        fail(fn, field + ".shock_rate_per_hour", shock_rate_per_hour,
             "must be a finite number from 0 to " + detail::format_number(PoolLaw::kMaxShockRatePerHour) + " per hour");
      }
      const PoolLaw law(pool_in_market_state(pool, st), fn, field);
    }
  }
}

/// The checks of simulate_scenarios() for up to `scenarios` scenarios of `counts`: options, sizes, counts,
/// the event limit, the fitted revocation model, and a hazard for every type in use that does not draw
/// from fitted pools.
inline void validate_simulation(std::string_view fn, const PerformanceModel& model, const InterruptionModel& interruption,
                                const std::vector<int>& counts, double target_loss, double deadline_s,
                                const SimulateOptions& options, std::int64_t scenarios) {
  validate_simulate_options(fn, options);
  require_finite(fn, "target_loss", target_loss);
  require_positive(fn, "deadline_s", deadline_s);
  if (counts.size() != model.worker_types().size()) {
    fail(fn, "counts.size()", double(counts.size()),
         "must equal the number of worker types (" + std::to_string(model.worker_types().size()) + ")");
  }
  if (interruption.types().size() != model.worker_types().size()) {
    fail(fn, "interruption.types().size()", double(interruption.types().size()),
         "must equal the number of worker types (" + std::to_string(model.worker_types().size()) + ")");
  }
  std::int64_t workers = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] < 0) fail(fn, "counts[" + std::to_string(k) + "]", counts[k], "must not be negative");
    workers += counts[k];
  }
  if (workers > kMaxClusterWorkers || scenarios * workers > kMaxSimulatedEvents) {
    fail(fn, "options.scenarios", double(scenarios),
         "scenarios x workers = " + std::to_string(scenarios * workers) + " exceeds the maximum of " +
             std::to_string(kMaxSimulatedEvents) + " simulated events; simulate fewer scenarios or a smaller cluster");
  }
  validate_fitted_revocations(fn, model, options);
  const std::vector<bool> used = types_in_use(model, counts, options.replacement);
  for (std::size_t k = 0; k < used.size(); ++k) {
    if (!used[k] || draws_from_pools(options, k)) continue;
    interruption.require_hazard(k, fn,
                                counts[k] > 0 ? "the cluster uses it"
                                              : "the replan replacement policy may add it (its quota is above 0)");
  }
}

/// Runs scenarios [first, first + count) of `counts` into `outcomes[0, count)` on `options.threads`
/// threads (contiguous blocks; scenario i depends on (seed, i) only). `work` is the simulation's event
/// meter, shared by every call that belongs to one simulation. No validation and no progress reports.
inline void run_scenarios(const PerformanceModel& model, const InterruptionModel& interruption, const std::vector<int>& counts,
                          double target_loss, double deadline_s, const SimulateOptions& options, std::uint64_t first,
                          ScenarioOutcome* outcomes, std::size_t count, WorkMeter::Shared& shared_work) {
  if (count == 0) return;
  unsigned threads = options.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : unsigned(options.threads);
  threads = unsigned(std::min<std::size_t>(threads, count));
  auto run_block = [&](std::size_t begin, std::size_t end) {
    WorkMeter work(shared_work);
    ScenarioRunner runner(model, interruption, counts, target_loss, deadline_s, options, work);
    for (std::size_t i = begin; i < end; ++i) outcomes[i] = runner.run(first + i);
    work.flush();
  };
  if (threads <= 1) {
    run_block(0, count);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  std::exception_ptr error;
  std::mutex error_mutex;
  const std::size_t per = (count + threads - 1) / threads;
  std::string start_failure;
  for (unsigned w = 0; w < threads; ++w) {
    const std::size_t begin = std::min(count, w * per);
    const std::size_t end = std::min(count, begin + per);
    try {
      pool.emplace_back([&, begin, end] {
        try {
          run_block(begin, end);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      });
    } catch (const std::system_error& e) {  // the machine refused a thread: stop, join the others, report
      start_failure = "simulate: cannot start thread " + std::to_string(w + 1) + " of " + std::to_string(threads) +
                      " (" + e.what() + "); use fewer --threads";
      break;
    }
  }
  for (std::thread& thread : pool) thread.join();
  if (!start_failure.empty()) throw resource_error(start_failure);
  if (error) std::rethrow_exception(error);
}

/// Scenarios per chunk when progress is reported: about 1% of the run, and at least 2048 per thread so
/// that starting the threads of a chunk stays cheap next to its work.
[[nodiscard]] inline std::size_t progress_chunk(std::size_t total, int threads_option) {
  const std::size_t threads =
      threads_option == 0 ? std::max(1u, std::thread::hardware_concurrency()) : std::size_t(threads_option);
  return std::max<std::size_t>({(total + 99) / 100, 2048 * threads, 1});
}

/// Fills the aggregate figures of `r` (probability, means, percentiles, message) from `outcomes`, which
/// it keeps when options.keep_outcomes.
inline void summarize(SimulationResult& r, std::vector<ScenarioOutcome> outcomes, const SimulateOptions& options) {
  int met = 0, finished = 0;
  double time_sum = 0, cost_sum = 0, revocations = 0, replacements = 0;
  std::vector<double> times, costs;
  times.reserve(outcomes.size());
  costs.reserve(outcomes.size());
  for (const ScenarioOutcome& o : outcomes) {
    met += o.met_deadline ? 1 : 0;
    if (o.finished) {
      ++finished;
      time_sum += o.time_s;
    }
    cost_sum += o.cost_usd;
    revocations += o.revocations;
    replacements += o.replacements;
    times.push_back(o.time_s);
    costs.push_back(o.cost_usd);
  }
  const double k = double(outcomes.size());
  r.scenarios = int(outcomes.size());
  r.meets_deadline = wilson_interval(met, int(outcomes.size()), options.confidence_level);
  r.finished_share = finished / k;
  r.mean_time_s = finished > 0 ? time_sum / finished : std::numeric_limits<double>::infinity();
  r.mean_cost_usd = cost_sum / k;
  r.mean_revocations = revocations / k;
  r.mean_replacements = replacements / k;
  r.time_s = nearest_rank_percentiles(std::move(times));
  r.cost_usd = nearest_rank_percentiles(std::move(costs));
  if (options.keep_outcomes) r.outcomes = std::move(outcomes);
  r.status = Status::feasible;
  r.message = "meets the deadline in " + std::to_string(met) + " of " + std::to_string(r.scenarios) +
              " scenarios (P = " + format_number(r.meets_deadline.estimate) + "); without revocations " +
              (r.deterministic_meets_deadline ? "it meets" : "it misses") + " the deadline";
}

}  // namespace detail

/// Outcomes of scenarios [0, options.scenarios) of `counts` (per PerformanceModel::worker_types()), in
/// scenario order, on `options.threads` threads, with progress reports when options.progress is set.
/// Throws like simulate().
[[nodiscard]] inline std::vector<ScenarioOutcome> simulate_scenarios(const PerformanceModel& model,
                                                                     const InterruptionModel& interruption,
                                                                     const std::vector<int>& counts, double target_loss,
                                                                     double deadline_s, const SimulateOptions& options) {
  constexpr std::string_view fn = "simulate_scenarios";
  detail::validate_simulation(fn, model, interruption, counts, target_loss, deadline_s, options, options.scenarios);
  std::vector<ScenarioOutcome> outcomes(std::size_t(options.scenarios));
  detail::WorkMeter::Shared work;
  const std::size_t total = outcomes.size();
  if (!options.progress) {
    detail::run_scenarios(model, interruption, counts, target_loss, deadline_s, options, 0, outcomes.data(), total, work);
    return outcomes;
  }
  const std::size_t chunk = detail::progress_chunk(total, options.threads);
  detail::report(options.progress, "simulate", "scenarios", 0, double(total));
  for (std::size_t done = 0; done < total;) {
    const std::size_t count = std::min(chunk, total - done);
    detail::run_scenarios(model, interruption, counts, target_loss, deadline_s, options, done, outcomes.data() + done, count,
                          work);
    done += count;
    detail::report(options.progress, "simulate", "scenarios", double(done), double(total));
  }
  return outcomes;
}

/// Simulates `cluster` training to `target_loss` under revocations, `options.scenarios` times.
/// Throws spotdnn::invalid_argument for an empty cluster, unknown types, a deadline that is not > 0, an
/// interruption model of another size, a type in use without a hazard (see the file comment) or bad
/// options (options.revocations included: validate_fitted_revocations). A target the cluster cannot reach even without revocations comes back as status infeasible.
[[nodiscard]] inline SimulationResult simulate(const PerformanceModel& model, const InterruptionModel& interruption,
                                               const Cluster& cluster, double target_loss, double deadline_s,
                                               const SimulateOptions& options = {}) {
  constexpr std::string_view fn = "simulate";
  detail::validate_simulate_options(fn, options);
  detail::require_finite(fn, "target_loss", target_loss);
  detail::require_positive(fn, "deadline_s", deadline_s);
  if (cluster.empty()) detail::fail(fn, "cluster", "{}", "give at least one worker (TYPE=N with N >= 1)");
  const std::vector<int> counts = model.counts_of(cluster);

  SimulationResult r;
  r.cluster = cluster;
  r.target_loss = target_loss;
  r.deadline_s = deadline_s;
  r.scenarios = options.scenarios;
  r.seed = options.seed;
  r.replacement = options.replacement;
  r.parameter_server_charged = options.predict.charge_parameter_server;
  const Estimate e = model.estimate(counts, target_loss, options.predict);
  r.deterministic_time_s = e.training_time_s;
  r.deterministic_cost_usd = e.cost_usd;
  r.deterministic_meets_deadline = e.reaches_target() && e.training_time_s <= deadline_s;
  if (!e.reaches_target()) {
    r.status = Status::infeasible;
    r.message = "the cluster cannot reach loss " + detail::format_number(target_loss) +
                " even without revocations (" + std::string(describe(e.outcome)) + ")";
    return r;
  }
  detail::validate_simulation(fn, model, interruption, counts, target_loss, deadline_s, options, options.scenarios);
  detail::summarize(r, simulate_scenarios(model, interruption, counts, target_loss, deadline_s, options), options);
  return r;
}

}  // namespace spotdnn
