#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/preemption_clustering.hpp How preemptions go together: which ones follow another
/// within the burst window (so that the simulator draws only the others, the *triggers*, from the hazard),
/// bursts within one pool, and preemptions shared by the zones of one region.
///
/// All times are on the clock the traces of one fit share (a trace's time plus its clock_offset_s). With
/// window w, preemptions are put in one fixed order (time, then pool name, then slot, then the order they
/// were given in), and preemption p, of an instance that started at b_p, at time t_p, is a
///
/// - *pool follower* when an earlier preemption q of the same pool has t_p − w <= t_q and b_p < t_q: the
///   instance was up when q happened, within the window before p (a simultaneous q counts when it comes
///   first in the order);
/// - *zone follower* when such a q is in another zone of the same region (region_of_zone);
/// - *trigger* when it is neither.
///
/// The condition b_p < t_q (the follower was up when its predecessor happened) keeps a quick second
/// preemption of a *replacement* a trigger: a replacement started after q cannot have been preempted with
/// it, and the simulator co-preempts only instances that are up.
///
/// Per pool (PoolClustering), with n preemptions at times t_1 <= ... <= t_n over an observed span T:
/// share_with_another = share of i with some j ≠ i and |t_j − t_i| <= w; share_by_chance =
/// 1 − exp(−2 w n / T) (a Poisson process at the pool's rate puts another within ±w with that chance);
/// bursts = groups of consecutive preemptions each within w of the previous one; co_preemption_probability
/// = pool followers / Σ over the pool's own triggers (preemptions that are not pool followers) of the
/// other instances of the pool up at that moment, at most 1 (a chain longer than the window can follow
/// with more instances than were up at its start); `observed` is false when the pool never had two
/// instances up at once, and the probability then 0.
///
/// Per region with two zones or more (RegionCorrelation): the preemptions of its pools at moments another
/// zone of the region was observed; of those, the share with a preemption of another zone within ±w, and
/// the same share by chance, the mean over them of 1 − exp(−2 w Σ_z' n_z' / T_z') over the other zones z'
/// observed at that moment (n_z' preemptions over an observed span T_z'); co_preemption_probability =
/// zone followers / Σ over the region's triggers of the instances up in other zones of the region then,
/// at most 1.
///
/// An instance is *up at* moment t when it started before t and ended after t, or ended at t by a
/// preemption (a preemption at the same moment comes after in the order, so is a follower's).

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "spotdnn/revocation/revocation_model.hpp"

namespace spotdnn {

/// One up interval on the shared clock (s).
struct SharedClockInterval {
  double start_s = 0;
  double end_s = 0;
  bool preempted = false;
};

/// How many intervals of a set are up at a moment (file comment), by binary search: O(log n) a query.
class UpCounter {
 public:
  UpCounter() = default;
  explicit UpCounter(const std::vector<SharedClockInterval>& intervals) {
    for (const SharedClockInterval& i : intervals) {
      starts_.push_back(i.start_s);
      (i.preempted ? preempted_ends_ : censored_ends_).push_back(i.end_s);
    }
    std::sort(starts_.begin(), starts_.end());
    std::sort(preempted_ends_.begin(), preempted_ends_.end());
    std::sort(censored_ends_.begin(), censored_ends_.end());
  }
  /// Intervals with start < t and (end > t or (end == t and preempted)).
  [[nodiscard]] std::int64_t up_at(double t) const {
    const auto started = std::lower_bound(starts_.begin(), starts_.end(), t) - starts_.begin();
    const auto preempted_before = std::lower_bound(preempted_ends_.begin(), preempted_ends_.end(), t) - preempted_ends_.begin();
    const auto censored_by = std::upper_bound(censored_ends_.begin(), censored_ends_.end(), t) - censored_ends_.begin();
    return std::max<std::int64_t>(0, started - preempted_before - censored_by);
  }

 private:
  std::vector<double> starts_, preempted_ends_, censored_ends_;
};

/// The most intervals up at once (an interval ending at t is no longer up when another starts at t).
[[nodiscard]] inline std::int64_t most_up_at_once(const std::vector<SharedClockInterval>& intervals) {
  std::vector<std::pair<double, int>> steps;
  steps.reserve(2 * intervals.size());
  for (const SharedClockInterval& i : intervals) {
    steps.emplace_back(i.start_s, +1);
    steps.emplace_back(i.end_s, -1);
  }
  std::sort(steps.begin(), steps.end());  // at one moment, ends (-1) before starts (+1)
  std::int64_t up = 0, most = 0;
  for (const auto& step : steps) most = std::max(most, up += step.second);
  return most;
}

/// One preemption of a fit.
struct Preemption {
  double time_s = 0;          ///< on the shared clock
  double started_s = 0;       ///< when its instance started, on the shared clock
  std::size_t pool = 0;       ///< index of its pool
  int slot = 0;
  std::size_t sequence = 0;   ///< order of discovery: the last tie-breaker
  bool pool_follower = false;
  bool zone_follower = false;
  bool in_pool_burst = false;  ///< one of a burst of two or more preemptions of its pool (a shock's)
  [[nodiscard]] bool trigger() const { return !pool_follower && !zone_follower; }
  /// Came alone: neither in a pool's burst nor a zone follower (what the lifetime hazard counts).
  [[nodiscard]] bool alone() const { return trigger() && !in_pool_burst; }
};

/// Sorts `preemptions` into the fixed order (time, pool name, slot, sequence) and marks followers (file
/// comment). `pool_names`, `pool_zones`, `pool_regions` are indexed by Preemption::pool. O(n log n + n z)
/// for z zones in a region.
inline void mark_followers(std::vector<Preemption>& preemptions, const std::vector<std::string>& pool_names,
                           const std::vector<std::string>& pool_zones, const std::vector<std::string>& pool_regions,
                           double window_s) {
  std::sort(preemptions.begin(), preemptions.end(), [&](const Preemption& a, const Preemption& b) {
    return std::tie(a.time_s, pool_names[a.pool], a.slot, a.sequence) <
           std::tie(b.time_s, pool_names[b.pool], b.slot, b.sequence);
  });
  std::vector<double> last_in_pool(pool_names.size(), -std::numeric_limits<double>::infinity());
  std::map<std::string, std::map<std::string, double>> last_in_zone;  // region -> zone -> time
  for (Preemption& p : preemptions) {
    const double since = std::max(p.time_s - window_s, std::nextafter(p.started_s, std::numeric_limits<double>::infinity()));
    p.pool_follower = last_in_pool[p.pool] >= since;
    for (const auto& [zone, time] : last_in_zone[pool_regions[p.pool]]) {
      if (zone != pool_zones[p.pool] && time >= since) p.zone_follower = true;
    }
    last_in_pool[p.pool] = p.time_s;
    last_in_zone[pool_regions[p.pool]][pool_zones[p.pool]] = p.time_s;
  }
}

/// Total length of the union of windows [from, to) (s).
[[nodiscard]] inline double union_length_s(std::vector<std::pair<double, double>> windows) {
  std::sort(windows.begin(), windows.end());
  double total = 0, reach = -std::numeric_limits<double>::infinity();
  for (const auto& [from, to] : windows) {
    const double start = std::max(from, reach);
    if (to > start) total += to - start;
    reach = std::max(reach, to);
  }
  return total;
}

/// Clustering of one pool (file comment): `preemptions` are the pool's, in the fixed order, with followers
/// marked; `intervals` every up interval of the pool; `observed_span_s` the length of time it was observed.
[[nodiscard]] inline PoolClustering pool_clustering(const std::vector<Preemption>& preemptions,
                                                    const std::vector<SharedClockInterval>& intervals,
                                                    double observed_span_s, double window_s) {
  PoolClustering c;
  c.window_s = window_s;
  const std::size_t n = preemptions.size();
  if (n > 0) {
    std::vector<double> times;
    times.reserve(n);
    for (const Preemption& p : preemptions) times.push_back(p.time_s);
    std::sort(times.begin(), times.end());
    std::size_t with_another = 0, burst = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if ((i > 0 && times[i] - times[i - 1] <= window_s) || (i + 1 < n && times[i + 1] - times[i] <= window_s)) ++with_another;
      if (i == 0 || times[i] - times[i - 1] > window_s) {
        ++c.bursts;
        burst = 0;
      }
      c.largest_burst = std::max(c.largest_burst, int(++burst));
    }
    c.share_with_another = double(with_another) / double(n);
    if (observed_span_s > 0) c.share_by_chance = 1 - std::exp(-2 * window_s * double(n) / observed_span_s);
  }
  c.observed = most_up_at_once(intervals) >= 2;
  if (!c.observed) return c;
  const UpCounter up(intervals);
  // Shocks: the bursts of two or more preemptions (chains within the window), each hitting its size over
  // the instances up just before it began.
  if (n > 1) {
    std::vector<double> times;
    times.reserve(n);
    for (const Preemption& p : preemptions) times.push_back(p.time_s);
    std::sort(times.begin(), times.end());
    double hit_sum = 0;
    for (std::size_t first = 0; first < n;) {
      std::size_t last = first;
      while (last + 1 < n && times[last + 1] - times[last] <= window_s) ++last;
      const std::size_t size = last - first + 1;
      if (size >= 2) {
        const std::int64_t up_then = std::max<std::int64_t>(std::int64_t(size), up.up_at(times[first]));
        ++c.shocks;
        hit_sum += double(size) / double(up_then);
      }
      first = last + 1;
    }
    if (c.shocks > 0) {
      c.shock_hit_probability = std::min(1.0, hit_sum / c.shocks);
      if (observed_span_s > 0) c.shock_rate_per_hour = c.shocks / (observed_span_s / 3600);
    }
  }
  double followers = 0, opportunities = 0;
  for (const Preemption& p : preemptions) {
    if (p.pool_follower) {
      ++followers;
    } else {
      opportunities += double(std::max<std::int64_t>(0, up.up_at(p.time_s) - 1));  // less the trigger's own
    }
  }
  if (opportunities > 0) c.co_preemption_probability = std::min(1.0, followers / opportunities);
  return c;
}

/// What region_correlation needs to know of one zone of the region.
struct ZoneObservation {
  std::string zone;
  std::vector<std::pair<double, double>> windows_s;  ///< when it was observed, on the shared clock [from, to)
  std::vector<SharedClockInterval> intervals;        ///< its up intervals (every pool of the zone)
  std::vector<double> preemption_times_s;            ///< its preemptions (every pool of the zone)
};

/// The correlation of the zones of one region (file comment). `preemptions`: the region's, with followers
/// marked, each with the index into `zones` of its zone in `zone_of`.
[[nodiscard]] inline RegionCorrelation region_correlation(const std::string& region, std::vector<ZoneObservation> zones,
                                                          const std::vector<Preemption>& preemptions,
                                                          const std::vector<std::size_t>& zone_of, double window_s) {
  RegionCorrelation r;
  r.region = region;
  r.window_s = window_s;
  std::vector<double> rate_per_s(zones.size(), 0.0);
  std::vector<UpCounter> up;
  for (std::size_t z = 0; z < zones.size(); ++z) {
    r.zones.push_back(zones[z].zone);
    std::sort(zones[z].preemption_times_s.begin(), zones[z].preemption_times_s.end());
    const double span = union_length_s(zones[z].windows_s);
    if (span > 0) rate_per_s[z] = double(zones[z].preemption_times_s.size()) / span;
    up.emplace_back(zones[z].intervals);
  }
  const auto observed_at = [&](std::size_t z, double t) {
    for (const auto& [from, to] : zones[z].windows_s) {
      if (from <= t && t < to) return true;
    }
    return false;
  };
  std::int64_t counted = 0, with_other = 0;
  double chance_sum = 0, followers = 0, opportunities = 0;
  for (std::size_t k = 0; k < preemptions.size(); ++k) {
    const Preemption& p = preemptions[k];
    const std::size_t own = zone_of[k];
    double other_rate = 0;
    bool other_observed = false, near = false;
    for (std::size_t z = 0; z < zones.size(); ++z) {
      if (z == own || !observed_at(z, p.time_s)) continue;
      other_observed = true;
      other_rate += rate_per_s[z];
      const std::vector<double>& times = zones[z].preemption_times_s;
      const auto first = std::lower_bound(times.begin(), times.end(), p.time_s - window_s);
      if (first != times.end() && *first <= p.time_s + window_s) near = true;
    }
    if (other_observed) {
      ++counted;
      if (near) ++with_other;
      chance_sum += 1 - std::exp(-2 * window_s * other_rate);
    }
    if (p.zone_follower) ++followers;
    if (p.trigger()) {
      for (std::size_t z = 0; z < zones.size(); ++z) {
        if (z != own) opportunities += double(up[z].up_at(p.time_s));
      }
    }
  }
  r.preemptions = counted > INT_MAX ? INT_MAX : int(counted);
  if (counted > 0) {
    r.share_with_other_zone = double(with_other) / double(counted);
    r.share_by_chance = chance_sum / double(counted);
  }
  if (opportunities > 0) r.co_preemption_probability = std::min(1.0, followers / opportunities);
  return r;
}

}  // namespace spotdnn
