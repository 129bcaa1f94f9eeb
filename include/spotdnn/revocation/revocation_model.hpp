#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/revocation_model.hpp A revocation model fitted to spot traces (revocation/fit_revocations.hpp):
/// per pool (type × zone) the hazard by instance age, how preemptions cluster, the waits to obtain an
/// instance, the chance of obtaining N at once, and the period it was fitted on. The simulator draws from
/// it (revocation/pool_law.hpp); io/revocation_model_json.hpp reads and writes it as the document of kind
/// "spotdnn.revocations", schema_version 1 (docs/revocations.md).
///
/// What the simulator draws, per instance of a pool:
/// - **start**: with probability `start.up_share` an instance is there at once, found at an age drawn from
///   `start.age_quantiles_s` (a trace of one pool cannot tell a fresh instance from one found running, so
///   spotdnn meets the pool as the trace does at a random moment); otherwise it comes after a wait drawn
///   from `start.wait` (or never, with that distribution's `none_share`), at age 0;
/// - **lifetime**: from its age on, by the piecewise-constant hazard `trigger_hazard_by_age` (the
///   preemptions that came alone); a replacement starts at age 0;
/// - **shocks**: a pool's bursts of two or more preemptions come as a Poisson process at
///   `clustering.shock_rate_per_hour`, and each preempts every instance of the pool up then with
///   probability `clustering.shock_hit_probability`;
/// - **zones**: when an instance is preempted on its own, every instance of another zone of its region is
///   preempted with it with the region's `co_preemption_probability` (RegionCorrelation).
///   `trigger_hazard_by_age` leaves out the preemptions of a pool's bursts and the zone followers, so that
///   the lifetime hazard, the shocks and the zone followers together give each pool its observed hazard
///   (`hazard_by_age`);
/// - **replacements**: the wait after a preemption from `replacement_wait` (or none comes: `none_share`);
/// - **gangs**: where a `counts` trace (or a spot group's events) gives one, the number of instances
///   obtained at the start, of those requested, is drawn from `gang.count_share`;
/// - **zones together**: where a region's single-instance pools were observed together, whether each is up
///   at the start is drawn jointly from the region's `joint_up_share` (for the first instance of each).

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "spotdnn/revocation/trace.hpp"

namespace spotdnn {

/// The kind and version of a revocation-model document.
inline constexpr const char* kRevocationModelKind = "spotdnn.revocations";
inline constexpr int kRevocationModelSchemaVersion = 1;

/// One age bin of a piecewise-constant hazard: preemptions over instance-time at ages [from_age_s, to_age_s).
struct HazardBin {
  double from_age_s = 0;
  double to_age_s = std::numeric_limits<double>::infinity();  ///< +inf for the last bin
  int events = 0;                 ///< preemptions at ages in the bin
  double exposure_s = 0;          ///< instance-seconds spent at ages in the bin (censoring handled)
  double hazard_per_hour = 0;     ///< events / exposure
  double lower_per_hour = 0;      ///< exact Poisson (Garwood) interval at `confidence_level`
  double upper_per_hour = 0;      ///< +inf when the bin has no exposure
};

/// Parametric lifetime laws fitted by maximum likelihood with censoring, and which one the data favour.
struct ParametricLifetimeFit {
  double exponential_hazard_per_hour = 0;
  double exponential_log_likelihood = 0;
  double weibull_shape = 1;        ///< k < 1: the hazard falls with age
  double weibull_scale_s = 0;      ///< S(t) = exp(−(t/scale)^k)
  double weibull_log_likelihood = 0;
  double piecewise_log_likelihood = 0;
  int piecewise_parameters = 0;    ///< bins with exposure
  /// "exponential", "weibull" or "piecewise": lowest AIC = 2·parameters − 2·log-likelihood.
  std::string best_by_aic;
};

/// The distribution of a wait to obtain an instance: the waits that ended (as quantiles) and the share
/// of waits in which none came before the observation ended.
struct WaitDistribution {
  int observed = 0;        ///< waits seen (ended or not)
  int none_came = 0;       ///< waits still open when the trace ended
  double none_share = 0;   ///< none_came / observed (0 when nothing was observed)
  /// 101 quantiles (0%, 1%, ..., 100%) of the waits that ended, in seconds; empty when none ended.
  std::vector<double> quantiles_s;
};

/// The state of a pool met at a random moment of its trace.
struct StartState {
  double up_share = 1;  ///< share of slot-time an instance was up (could be had at once)
  /// 101 quantiles of the age of the instance found up at a random up moment (s); empty: age 0.
  std::vector<double> age_quantiles_s;
  WaitDistribution wait;  ///< from a random moment with nothing up to the next instance
};

/// How preemptions of one pool cluster in time.
struct PoolClustering {
  double window_s = 180;  ///< two preemptions this close belong to one burst
  /// Share of preemptions with another preemption of the pool within the window (before or after).
  double share_with_another = 0;
  /// The same share if preemptions came at random at the pool's rate: 1 − exp(−2·window·rate).
  double share_by_chance = 0;
  int bursts = 0;          ///< groups of preemptions, each within the window of the previous one
  int largest_burst = 0;   ///< most preemptions in one burst
  /// P(another instance of the pool, up when one is preempted, is preempted with it): followers over
  /// opportunities. 0 (and `observed` false) when the trace holds one instance at a time.
  double co_preemption_probability = 0;
  bool observed = false;
  /// Bursts as shocks to the whole pool: the bursts of two or more preemptions (`shocks` of them) came at
  /// `shock_rate_per_hour` over the time observed, and each took the share `shock_hit_probability` (on
  /// average) of the instances up when it began. 0 when the pool held one instance at a time. The
  /// simulator preempts each instance of the job in the pool with that probability at each shock.
  int shocks = 0;
  double shock_rate_per_hour = 0;
  double shock_hit_probability = 0;
};

/// The chance of obtaining k of N requested at once (a `counts` trace).
struct GangObtainability {
  int requested = 0;
  std::vector<double> count_share;  ///< k = 0..requested: share of ticks with k obtained
};

/// A pool's figures while its region's market is in one state (MarketRegimes): the simulator draws these
/// in place of the pool's own `trigger_hazard_by_age`, `start`, `replacement_wait`, `gang` and
/// `clustering.shock_rate_per_hour` while the region is in that state. Measured over the moments the fit
/// decoded as that state.
struct PoolInMarketState {
  double observed_s = 0;  ///< time the pool was observed in the state (what the figures rest on)
  /// The trigger hazard by age in the state, proportional hazards: `hazard_per_hour` = the state's
  /// hazard_multiplier × the pool's baseline hazard (fitted with the states); `events`, `exposure_s` and the
  /// Garwood interval are what the state's time held (the bins the fit gave the state).
  std::vector<HazardBin> trigger_hazard_by_age;
  StartState start;
  WaitDistribution replacement_wait;        ///< of the preemptions that came in the state
  std::optional<GangObtainability> gang;    ///< where the pool has one
  double shock_rate_per_hour = 0;           ///< bursts that began in the state / observed_s
};

/// Everything fitted for one pool.
struct PoolModel {
  PoolId pool;
  TraceKind kind = TraceKind::lifetimes;
  std::vector<std::string> sources;  ///< the trace files
  std::string observed_from;         ///< calendar date of the first tick when known, else empty
  double from_s = 0;                 ///< the part of the trace fitted: [from_s, to_s) on its clock
  double to_s = 0;
  double tick_s = 0;
  int instances = 0;                 ///< up intervals seen
  int preemptions = 0;
  double exposure_s = 0;             ///< instance-seconds up
  std::vector<HazardBin> hazard_by_age;          ///< every preemption
  std::vector<HazardBin> trigger_hazard_by_age;  ///< preemptions that start a burst (what the simulator draws)
  ParametricLifetimeFit parametric;
  StartState start;
  WaitDistribution replacement_wait;
  PoolClustering clustering;
  std::optional<GangObtainability> gang;
  /// Per state of its region's MarketRegimes (calm first); empty when the region has none.
  std::vector<PoolInMarketState> in_state;
};

/// `pool` as the simulator meets it in market state `state` (PoolModel::in_state, which must have it): the
/// state's hazard (the pool's own when the state gives none), start, replacement wait and gang in place of
/// the pool's; the state's shock rate stays in PoolInMarketState.
[[nodiscard]] inline PoolModel pool_in_market_state(const PoolModel& pool, std::size_t state) {
  PoolModel in_state = pool;
  const PoolInMarketState& figures = pool.in_state[state];
  if (!figures.trigger_hazard_by_age.empty()) in_state.trigger_hazard_by_age = figures.trigger_hazard_by_age;
  in_state.start = figures.start;
  in_state.replacement_wait = figures.replacement_wait;
  in_state.gang = figures.gang;
  return in_state;
}

/// How preemptions in different zones of one region go together.
struct RegionCorrelation {
  std::string region;
  std::vector<std::string> zones;
  double window_s = 180;
  int preemptions = 0;             ///< preemptions in pools of the region observed at the same time as another pool
  double share_with_other_zone = 0;   ///< of those, share with a preemption in another zone within the window
  double share_by_chance = 0;         ///< the same share if zones were independent at their rates
  /// P(an instance of another zone, up when one is preempted, is preempted with it).
  double co_preemption_probability = 0;
  /// Zones are up and down together (capacity comes and goes across a region): the pools (TYPE@ZONE) of
  /// the region fitted on one single-instance trace each, observed over the same period, and the share of
  /// that period each pattern of them was up: bit i of the index is `joint_pools[i]` up. 2^n entries
  /// summing to 1; both empty when fewer than two such pools were observed together (or more than
  /// kMaxJointPools). The simulator draws the first instances of these pools from it together.
  std::vector<std::string> joint_pools;
  std::vector<double> joint_up_share;
};

/// Most pools of one region whose joint up pattern a model keeps (2^10 shares).
inline constexpr int kMaxJointPools = 10;

/// One hidden state of a region's market (MarketRegimes).
struct MarketState {
  double time_share = 0;           ///< share of the region's observed time decoded as this state
  double hazard_multiplier = 1;    ///< the pools' trigger hazard by age is multiplied by this in the state
  double arrival_multiplier = 1;   ///< instances come back this many times as fast as on average (fit only)
  double leave_rate_per_hour = 0;  ///< rate of switching to the other state (mean stay: its inverse)
};

/// Calm and stormy periods of a region's market, shared by its pools: a two-state continuous-time Markov
/// chain modulating the pools' preemptions and returns (a Markov-modulated Poisson process: W. Fischer and
/// K. Meier-Hellstern, "The Markov-modulated Poisson process (MMPP) cookbook", Performance Evaluation 18,
/// 1993), fitted by EM on counts in bins of `bin_s` (revocation/market_regimes.hpp). Kept only where two
/// states explain the region's traces better than one by BIC. The pools' figures per state are their
/// PoolModel::in_state.
struct MarketRegimes {
  std::string region;
  std::vector<std::string> pools;   ///< TYPE@ZONE of the region's pools, in document order
  double bin_s = 1800;
  int bins = 0;                     ///< bins with something observed
  double log_likelihood = 0;            ///< two states (Poisson terms without their constant)
  double one_state_log_likelihood = 0;  ///< one state, the same terms
  std::vector<MarketState> states;  ///< two: calm (the lower hazard multiplier) first
  /// Per state, the region's joint up pattern (RegionCorrelation::joint_up_share, the same joint_pools)
  /// over the time in that state; empty when the region has no joint pattern.
  std::vector<std::vector<double>> joint_up_share_by_state;
};

/// A fitted revocation model.
struct RevocationModel {
  double burst_window_s = 180;
  double confidence_level = 0.95;  ///< of the hazard intervals
  std::vector<double> age_bin_edges_s;  ///< the bins' lower edges (the first is 0)
  std::vector<PoolModel> pools;
  std::vector<RegionCorrelation> regions;
  std::vector<MarketRegimes> regimes;  ///< regions with calm and stormy periods (may be none)
  /// What the model assumes (e.g. how availability windows were read as lifetimes); printed with it.
  std::vector<std::string> assumptions;

  /// The pool of `type` in `zone`, or nullptr.
  [[nodiscard]] const PoolModel* find(const std::string& type, const std::string& zone) const {
    for (const PoolModel& p : pools) {
      if (p.pool.type == type && p.pool.zone == zone) return &p;
    }
    return nullptr;
  }
  /// The market regimes of `region`, or nullptr.
  [[nodiscard]] const MarketRegimes* regimes_of(const std::string& region) const {
    for (const MarketRegimes& r : regimes) {
      if (r.region == region) return &r;
    }
    return nullptr;
  }
  /// Every pool of `type`, in document order.
  [[nodiscard]] std::vector<const PoolModel*> pools_of(const std::string& type) const {
    std::vector<const PoolModel*> out;
    for (const PoolModel& p : pools) {
      if (p.pool.type == type) out.push_back(&p);
    }
    return out;
  }
};

}  // namespace spotdnn
