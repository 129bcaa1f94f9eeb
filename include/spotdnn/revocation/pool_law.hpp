#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/pool_law.hpp Drawing from one fitted pool (a PoolModel of revocation_model.hpp): the
/// state an instance is met in, its residual lifetime under the piecewise-constant hazard by age, the waits
/// for an instance, and the size of a gang; what the simulator (simulate.hpp) draws per instance.
///
/// Residual lifetime. The trigger hazard h(a) is constant on each age bin [from_i, from_{i+1}) (the last
/// bin extends to +inf, whatever its `to_age_s` says). Its integral H(a) = ∫_0^a h is piecewise linear,
/// and the survival of an instance of age a over a further t is S(t | a) = exp(−(H(a + t) − H(a))). With
/// E ~ Exp(1), the residual lifetime is the t with H(a + t) − H(a) = E (inversion of S, the construction of
/// InterruptionModel::lifetime_s): walking the bins from a's one, each bin uses up h_i·(width) of E until
/// the bin where the rest runs out, at x + rest/h_i. O(bins). A hazard of 0 from some bin to +inf with E
/// not used up before means the instance is never preempted: +inf.
///
/// Quantiles. `age_quantiles_s` and a wait's `quantiles_s` hold the values at probabilities 0, 1/(m−1),
/// ..., 1 (m = 101 as the fitter writes them; any m >= 1 is read the same way); a draw u ∈ [0, 1) gives the
/// linear interpolation between the two quantiles around u·(m−1) (the inverse of the piecewise-linear CDF
/// through them). An empty list reads as 0 (an age of 0; a wait of 0).
///
/// Draws, each from one 64-bit output of the scenario's generator (so a draw sequence is the same with every
/// standard library): a uniform u = top 53 bits / 2^53 ∈ [0, 1), an Exp(1) variate −ln(1 − u)
/// (detail::unit_exponential). A Bernoulli draw whose probability is 0 or 1 and a quantile draw from an
/// empty or one-value list take no output.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/revocation/interruption.hpp"
#include "spotdnn/revocation/revocation_model.hpp"
#include "spotdnn/units.hpp"

namespace spotdnn {

namespace detail {

/// A uniform variate in [0, 1) from one 64-bit draw: the top 53 bits / 2^53 (the u of unit_exponential).
inline double unit_uniform(std::uint64_t bits) noexcept { return double(bits >> 11) * 0x1.0p-53; }

/// The value at probability `u` ∈ [0, 1] of the piecewise-linear CDF through `quantiles` (values at
/// probabilities 0, 1/(m−1), ..., 1): linear interpolation between the two around u·(m−1). 0 when empty.
inline double interpolate_quantile(const std::vector<double>& quantiles, double u) noexcept {
  const std::size_t m = quantiles.size();
  if (m == 0) return 0.0;
  if (m == 1 || !(u > 0)) return quantiles.front();
  const double position = u * double(m - 1);
  if (!(position < double(m - 1))) return quantiles.back();
  const std::size_t i = std::size_t(position);
  const double fraction = position - double(i);
  return quantiles[i] + fraction * (quantiles[i + 1] - quantiles[i]);
}

/// Checks a list of quantiles: finite, not negative, not decreasing.
inline void check_quantiles(std::string_view fn, const std::string& field, const std::vector<double>& quantiles) {
  for (std::size_t i = 0; i < quantiles.size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    if (!std::isfinite(quantiles[i]) || quantiles[i] < 0) fail(fn, at, quantiles[i], "must be a finite number >= 0 (seconds)");
    if (i > 0 && quantiles[i] < quantiles[i - 1]) fail(fn, at, quantiles[i], "quantiles must not decrease");
  }
}

/// Checks a probability in [0, 1].
inline void check_probability(std::string_view fn, const std::string& field, double p) {
  if (!(p >= 0 && p <= 1)) fail(fn, field, p, "must be a probability in [0, 1]");
}

}  // namespace detail

/// A wait to obtain an instance, ready to draw: WaitDistribution's `none_share` and quantiles.
class WaitLaw {
 public:
  WaitLaw() = default;
  /// Throws spotdnn::invalid_argument naming `function` and `field` for a share outside [0, 1] or quantiles
  /// that are negative, not finite or decreasing.
  WaitLaw(const WaitDistribution& wait, std::string_view function, const std::string& field)
      : none_share_(wait.none_share), quantiles_s_(wait.quantiles_s) {
    detail::check_probability(function, field + ".none_share", wait.none_share);
    detail::check_quantiles(function, field + ".quantiles_s", wait.quantiles_s);
  }

  /// A wait (s): +inf (none comes) with probability `none_share`, else a value of the quantiles (0 when
  /// there are none). Takes one output for the none-draw when 0 < none_share < 1, and one for the quantile
  /// when there are two or more.
  template <class Rng>
  [[nodiscard]] double draw_s(Rng& rng) const {
    if (none_share_ >= 1) return std::numeric_limits<double>::infinity();
    if (none_share_ > 0 && detail::unit_uniform(rng()) < none_share_) return std::numeric_limits<double>::infinity();
    return quantile_s(quantiles_s_.size() >= 2 ? detail::unit_uniform(rng()) : 0.0);
  }
  /// The wait at probability `u` among the waits that end (0 when none is known).
  [[nodiscard]] double quantile_s(double u) const noexcept { return detail::interpolate_quantile(quantiles_s_, u); }
  [[nodiscard]] double none_share() const noexcept { return none_share_; }

 private:
  double none_share_ = 0;
  std::vector<double> quantiles_s_;
};

/// One pool's PoolModel, ready to draw from (see the file comment).
class PoolLaw {
 public:
  /// How an instance of the pool is met at the start.
  struct Start {
    bool found_up = true;  ///< there at once (up at time 0), else after `wait_s`
    double age_s = 0;      ///< its age when met (0 when it comes after a wait)
    double wait_s = 0;     ///< +inf: none comes
  };

  PoolLaw() = default;

  /// Throws spotdnn::invalid_argument "function: field.…" for numbers that cannot be drawn from: no trigger
  /// hazard bins, bins that do not start at age 0 or do not follow one another, a hazard that is negative or
  /// not finite, shares outside [0, 1], bad quantiles (PoolLaw::WaitLaw), a gang whose `count_share` is not
  /// `requested` + 1 shares >= 0 with a positive sum.
  /// Most shocks per hour a pool may have (one a second): beyond, a simulation would only count events.
  static constexpr double kMaxShockRatePerHour = 3600;

  explicit PoolLaw(const PoolModel& pool, std::string_view function = "PoolLaw", const std::string& field = "pool") {
    const std::vector<HazardBin>& bins = pool.trigger_hazard_by_age;
    const std::string bins_field = field + ".trigger_hazard_by_age";
    if (bins.empty()) detail::fail(function, bins_field + ".size()", 0.0, "give at least one age bin (the last extends to +inf)");
    from_age_s_.reserve(bins.size());
    hazard_per_s_.reserve(bins.size());
    for (std::size_t i = 0; i < bins.size(); ++i) {
      const std::string at = bins_field + "[" + std::to_string(i) + "]";
      const HazardBin& bin = bins[i];
      if (i == 0 && bin.from_age_s != 0) detail::fail(function, at + ".from_age_s", bin.from_age_s, "the first bin must start at age 0");
      if (i > 0 && bin.from_age_s != bins[i - 1].to_age_s) {
        detail::fail(function, at + ".from_age_s", bin.from_age_s,
                     "must equal the previous bin's to_age_s (" + detail::format_number(bins[i - 1].to_age_s) + ")");
      }
      if (i + 1 < bins.size() && !(std::isfinite(bin.to_age_s) && bin.to_age_s > bin.from_age_s)) {
        detail::fail(function, at + ".to_age_s", bin.to_age_s, "must be finite and above from_age_s (only the last bin is open)");
      }
      if (!std::isfinite(bin.hazard_per_hour) || bin.hazard_per_hour < 0) {
        detail::fail(function, at + ".hazard_per_hour", bin.hazard_per_hour, "must be a finite number >= 0");
      }
      from_age_s_.push_back(bin.from_age_s);
      // Ages the trace never reached (no exposure: typically the open last bin) say nothing; an instance
      // that gets there keeps the hazard of the oldest ages seen, rather than a hazard of 0 (never
      // preempted) that no data supports.
      const bool unseen = !(bin.exposure_s > 0) && bin.events == 0 && bin.hazard_per_hour == 0 && i > 0;
      hazard_per_s_.push_back(unseen ? hazard_per_s_.back() : bin.hazard_per_hour / units::kSecondsPerHour);
    }
    detail::check_probability(function, field + ".start.up_share", pool.start.up_share);
    detail::check_quantiles(function, field + ".start.age_quantiles_s", pool.start.age_quantiles_s);
    detail::check_probability(function, field + ".clustering.co_preemption_probability", pool.clustering.co_preemption_probability);
    detail::check_probability(function, field + ".clustering.shock_hit_probability", pool.clustering.shock_hit_probability);
    if (!std::isfinite(pool.clustering.shock_rate_per_hour) || pool.clustering.shock_rate_per_hour < 0 ||
        pool.clustering.shock_rate_per_hour > kMaxShockRatePerHour) {
      detail::fail(function, field + ".clustering.shock_rate_per_hour", pool.clustering.shock_rate_per_hour,
                   "must be a finite number from 0 to " + detail::format_number(kMaxShockRatePerHour) + " per hour");
    }
    up_share_ = pool.start.up_share;
    age_quantiles_s_ = pool.start.age_quantiles_s;
    start_wait_ = WaitLaw(pool.start.wait, function, field + ".start.wait");
    replacement_wait_ = WaitLaw(pool.replacement_wait, function, field + ".replacement_wait");
    co_preemption_probability_ = pool.clustering.co_preemption_probability;
    if (pool.gang) {
      const GangObtainability& gang = *pool.gang;
      if (gang.requested < 1) detail::fail(function, field + ".gang.requested", gang.requested, "must be at least 1");
      if (gang.count_share.size() != std::size_t(gang.requested) + 1) {
        detail::fail(function, field + ".gang.count_share.size()", double(gang.count_share.size()),
                     "must be requested + 1 (" + std::to_string(gang.requested + 1) + "): one share per k = 0..requested");
      }
      double sum = 0;
      for (std::size_t k = 0; k < gang.count_share.size(); ++k) {
        const double share = gang.count_share[k];
        if (!std::isfinite(share) || share < 0) {
          detail::fail(function, field + ".gang.count_share[" + std::to_string(k) + "]", share, "must be a finite number >= 0");
        }
        sum += share;
        gang_cumulative_.push_back(sum);
      }
      if (!(sum > 0) || !std::isfinite(sum)) detail::fail(function, field + ".gang.count_share", sum, "the shares must have a positive finite sum");
      gang_requested_ = gang.requested;
    }
  }

  /// H(age) = ∫_0^age h (unitless): the trigger hazard integrated over ages [0, age_s).
  [[nodiscard]] double cumulative_hazard(double age_s) const noexcept {
    double h = 0;
    for (std::size_t i = 0; i < from_age_s_.size() && from_age_s_[i] < age_s; ++i) {
      const double to = i + 1 < from_age_s_.size() ? std::min(from_age_s_[i + 1], age_s) : age_s;
      h += hazard_per_s_[i] * (to - from_age_s_[i]);
    }
    return h;
  }

  /// The residual lifetime (s) of an instance of age `age_s` whose Exp(1) draw is `unit_exponential`: the
  /// t with H(age + t) − H(age) = E (see the file comment); +inf when the hazard is 0 from some age on and E
  /// is not used up before. With one bin of hazard λ it is E/λ, as InterruptionModel::lifetime_s.
  [[nodiscard]] double residual_lifetime_s(double age_s, double unit_exponential) const noexcept {
    const std::size_t n = from_age_s_.size();
    std::size_t b = 0;
    while (b + 1 < n && from_age_s_[b + 1] <= age_s) ++b;
    double x = age_s;
    double rest = unit_exponential;
    for (; b + 1 < n; ++b) {
      const double used = hazard_per_s_[b] * (from_age_s_[b + 1] - x);
      if (rest <= used) return (x - age_s) + (rest > 0 ? rest / hazard_per_s_[b] : 0.0);
      rest -= used;
      x = from_age_s_[b + 1];
    }
    if (!(rest > 0)) return x - age_s;
    if (!(hazard_per_s_[n - 1] > 0)) return std::numeric_limits<double>::infinity();
    return (x - age_s) + rest / hazard_per_s_[n - 1];
  }

  /// A residual lifetime from `age_s`, drawing E from one output of `rng`.
  template <class Rng>
  [[nodiscard]] double draw_lifetime_s(double age_s, Rng& rng) const {
    return residual_lifetime_s(age_s, detail::unit_exponential(rng()));
  }

  /// The start of one instance met independently: found up with probability `start.up_share` (one output
  /// unless the share is 0 or 1), at an age from `start.age_quantiles_s`; else after a wait from `start.wait`.
  template <class Rng>
  [[nodiscard]] Start draw_start(Rng& rng) const {
    const bool up = up_share_ >= 1 || (up_share_ > 0 && detail::unit_uniform(rng()) < up_share_);
    return up ? draw_found_up(rng) : draw_waiting(rng);
  }
  /// An instance found up: its age from `start.age_quantiles_s` (0 when empty).
  template <class Rng>
  [[nodiscard]] Start draw_found_up(Rng& rng) const {
    Start s;
    s.age_s = age_quantiles_s_.size() >= 2 ? detail::interpolate_quantile(age_quantiles_s_, detail::unit_uniform(rng()))
                                           : detail::interpolate_quantile(age_quantiles_s_, 0.0);
    return s;
  }
  /// An instance not up at the start: it comes after a wait from `start.wait` (+inf: never), at age 0.
  template <class Rng>
  [[nodiscard]] Start draw_waiting(Rng& rng) const {
    Start s;
    s.found_up = false;
    s.wait_s = start_wait_.draw_s(rng);
    return s;
  }
  /// How many of `requested` are obtained at once: k with probability count_share[k] / Σ count_share (one
  /// output). Only for a pool with a gang (has_gang()).
  template <class Rng>
  [[nodiscard]] int draw_gang_count(Rng& rng) const {
    const double u = detail::unit_uniform(rng()) * gang_cumulative_.back();
    int k = 0;
    while (std::size_t(k) + 1 < gang_cumulative_.size() && !(u < gang_cumulative_[std::size_t(k)])) ++k;
    return k;
  }

  [[nodiscard]] bool has_gang() const noexcept { return gang_requested_ > 0; }
  [[nodiscard]] int gang_requested() const noexcept { return gang_requested_; }  ///< 0 without a gang
  [[nodiscard]] double up_share() const noexcept { return up_share_; }
  [[nodiscard]] double co_preemption_probability() const noexcept { return co_preemption_probability_; }
  [[nodiscard]] const WaitLaw& start_wait() const noexcept { return start_wait_; }
  [[nodiscard]] const WaitLaw& replacement_wait() const noexcept { return replacement_wait_; }

 private:
  std::vector<double> from_age_s_;    ///< bin lower edges; bin i is [from_i, from_{i+1}), the last to +inf
  std::vector<double> hazard_per_s_;  ///< per bin
  double up_share_ = 1;
  std::vector<double> age_quantiles_s_;
  WaitLaw start_wait_;
  WaitLaw replacement_wait_;
  double co_preemption_probability_ = 0;
  int gang_requested_ = 0;
  std::vector<double> gang_cumulative_;  ///< Σ_{j<=k} count_share[j]
};

}  // namespace spotdnn
