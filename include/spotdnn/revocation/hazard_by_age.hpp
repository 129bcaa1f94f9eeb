#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/hazard_by_age.hpp The piecewise-constant hazard of instance lifetimes by age (the
/// life-table, or Poisson, maximum-likelihood estimate) with exact Poisson (Garwood) intervals.
///
/// Each instance is at risk from the age it entered observation to the age it left it: an AgeSpan. Given
/// age-bin edges 0 = e_0 < e_1 < ... < e_{B-1} (the last bin is [e_{B-1}, +inf)), bin b collects
///
///     d_b = number of spans that end in a preemption at an age a with e_b < a <= e_{b+1}
///     E_b = sum over spans of |[entry, exit) ∩ [e_b, e_{b+1})|   (instance-seconds at ages in the bin)
///
/// and the hazard maximising the likelihood  L = prod_b h_b^{d_b} exp(-h_b E_b)  is  h_b = d_b / E_b.
/// A censored span (the instance was still up when observation ended) adds exposure and no event; a span
/// cut at its start (observation began when the instance was already `entry` old) adds exposure from that
/// age on (left truncation). An event belongs to the bin its exposure ended in: a preemption at age exactly
/// e_{b+1} counts in bin b, where the instance spent its last moments. On a tick grid a lifetime of k ticks
/// is k·tick, so a lifetime of 600 s counts in [0, 600) and not in [600, 1800), where it spent no time.
///
/// The interval at confidence level 1 − α is the exact Poisson one (Garwood 1936):
///
///     lower = χ²_{α/2}(2 d) / (2 E),   upper = χ²_{1−α/2}(2 d + 2) / (2 E)
///
/// (lower = 0 when d = 0; upper = +inf when E = 0), with χ²_p(ν) the p-quantile of the chi-squared law with
/// ν degrees of freedom (Boost.Math). Rates are reported per hour.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <boost/math/distributions/chi_squared.hpp>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/revocation/revocation_model.hpp"

namespace spotdnn {

/// One instance's time at risk by age: observed from age `entry_age_s` (0 unless observation began while
/// it was up) to age `exit_age_s`, ended by a preemption when `event` (else censored).
struct AgeSpan {
  double entry_age_s = 0;
  double exit_age_s = 0;
  bool event = false;
};

/// A rate's exact Poisson confidence interval, per second.
struct PoissonRateInterval {
  double lower_per_s = 0;
  double upper_per_s = std::numeric_limits<double>::infinity();
};

/// The exact (Garwood) interval for a Poisson rate from `events` over `exposure_s` at `confidence_level`
/// (see the file comment); `upper_per_s` is +inf when `exposure_s` is 0.
[[nodiscard]] inline PoissonRateInterval garwood_interval(int events, double exposure_s, double confidence_level) {
  constexpr std::string_view kFunction = "garwood_interval";
  if (events < 0) detail::fail(kFunction, "events", double(events), "must not be negative");
  detail::require_non_negative(kFunction, "exposure_s", exposure_s);
  if (!(confidence_level > 0 && confidence_level < 1)) {
    detail::fail(kFunction, "confidence_level", confidence_level, "must lie strictly between 0 and 1");
  }
  PoissonRateInterval out;
  if (!(exposure_s > 0)) return out;
  const double alpha = 1 - confidence_level;
  using boost::math::chi_squared_distribution;
  if (events > 0) {
    out.lower_per_s = boost::math::quantile(chi_squared_distribution<double>(2.0 * events), alpha / 2) / (2 * exposure_s);
  }
  out.upper_per_s =
      boost::math::quantile(boost::math::complement(chi_squared_distribution<double>(2.0 * events + 2), alpha / 2)) /
      (2 * exposure_s);
  return out;
}

/// The bin of `edges_s` (lower edges, the first 0) that an event at age `age_s` > 0 counts in: the b with
/// e_b < age <= e_{b+1} (the last bin is open above).
[[nodiscard]] inline std::size_t event_age_bin(const std::vector<double>& edges_s, double age_s) {
  const auto first_not_below = std::lower_bound(edges_s.begin(), edges_s.end(), age_s);
  const auto below = std::size_t(first_not_below - edges_s.begin());
  return below == 0 ? 0 : below - 1;
}

/// The piecewise-constant hazard by age of `spans` over the bins whose lower edges are `edges_s` (the first
/// 0, increasing; the last bin is open above), with Garwood intervals at `confidence_level` (file comment).
/// Spans with exit_age_s <= entry_age_s add nothing. O(spans × bins).
/// @note Life-table (Poisson) MLE h_b = d_b / E_b; Garwood (1936) exact Poisson interval.
[[nodiscard]] inline std::vector<HazardBin> hazard_by_age(const std::vector<AgeSpan>& spans,
                                                          const std::vector<double>& edges_s,
                                                          double confidence_level) {
  constexpr std::string_view kFunction = "hazard_by_age";
  if (edges_s.empty() || edges_s.front() != 0) {
    detail::fail(kFunction, "edges_s[0]", edges_s.empty() ? std::string("missing") : detail::format_number(edges_s.front()),
                 "the first age bin must start at 0");
  }
  for (std::size_t b = 1; b < edges_s.size(); ++b) {
    if (!(edges_s[b] > edges_s[b - 1]) || !std::isfinite(edges_s[b])) {
      detail::fail(kFunction, "edges_s[" + std::to_string(b) + "]", edges_s[b], "age bin edges must be finite and increasing");
    }
  }
  const std::size_t bins = edges_s.size();
  std::vector<HazardBin> out(bins);
  for (std::size_t b = 0; b < bins; ++b) {
    out[b].from_age_s = edges_s[b];
    out[b].to_age_s = b + 1 < bins ? edges_s[b + 1] : std::numeric_limits<double>::infinity();
  }
  for (const AgeSpan& s : spans) {
    if (!(s.exit_age_s > s.entry_age_s) || !(s.entry_age_s >= 0)) continue;
    // The bin holding the moment just after entry: entry at an edge e_b starts in bin b.
    std::size_t b = std::size_t(std::upper_bound(edges_s.begin(), edges_s.end(), s.entry_age_s) - edges_s.begin()) - 1;
    for (; b < bins && out[b].from_age_s < s.exit_age_s; ++b) {
      const double from = std::max(out[b].from_age_s, s.entry_age_s);
      const double to = std::min(out[b].to_age_s, s.exit_age_s);
      if (to > from) out[b].exposure_s += to - from;
    }
    if (s.event) ++out[event_age_bin(edges_s, s.exit_age_s)].events;
  }
  for (HazardBin& bin : out) {
    const PoissonRateInterval interval = garwood_interval(bin.events, bin.exposure_s, confidence_level);
    bin.hazard_per_hour = bin.exposure_s > 0 ? bin.events / bin.exposure_s * 3600.0 : 0.0;
    bin.lower_per_hour = interval.lower_per_s * 3600.0;
    bin.upper_per_hour = interval.upper_per_s * 3600.0;
  }
  return out;
}

}  // namespace spotdnn
