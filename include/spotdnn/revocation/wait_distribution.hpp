#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/wait_distribution.hpp Distributions of waits and ages as 101 quantiles: from a list
/// of values, or from whole tick counts given as ranges (every tick of a trace, without visiting each).
///
/// Quantile p = i/100 (i = 0..100) of n sorted values x_0 <= ... <= x_{n−1} is the linear interpolation
/// between order statistics (Hyndman and Fan 1996, definition 7; numpy's default):
///
///     h = p (n − 1),  Q(p) = x_⌊h⌋ + (h − ⌊h⌋)(x_⌊h⌋+1 − x_⌊h⌋).
///
/// A WaitDistribution keeps the waits that ended as these quantiles and the share of waits still open when
/// observation ended (`none_share` = none_came / observed). Counts larger than an int saturate at its
/// largest value; the share is computed before.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "spotdnn/revocation/revocation_model.hpp"

namespace spotdnn {

/// How many quantiles a distribution keeps (0%, 1%, ..., 100%).
inline constexpr int kQuantileCount = 101;

namespace detail {

/// floor(i (n − 1) / 100) and its fractional part, without overflow for any n up to INT64_MAX.
inline std::pair<std::int64_t, double> quantile_rank(std::int64_t n, int i) {
  const std::int64_t m = n - 1, q = m / 100, r = m % 100;
  return {q * i + (r * i) / 100, double((r * i) % 100) / 100.0};
}

/// An int count, saturated.
inline int saturated_int(std::int64_t count) { return count > INT_MAX ? INT_MAX : int(count); }

/// Makes `q` non-decreasing (guards against a rounding step back between interpolations).
inline void make_non_decreasing(std::vector<double>& q) {
  for (std::size_t i = 1; i < q.size(); ++i) q[i] = std::max(q[i], q[i - 1]);
}

}  // namespace detail

/// The 101 quantiles (file comment) of `values`, or an empty vector when there are none.
[[nodiscard]] inline std::vector<double> quantiles_101(std::vector<double> values) {
  std::vector<double> q;
  if (values.empty()) return q;
  std::sort(values.begin(), values.end());
  const auto n = std::int64_t(values.size());
  q.reserve(kQuantileCount);
  for (int i = 0; i < kQuantileCount; ++i) {
    const auto [low, fraction] = detail::quantile_rank(n, i);
    const double a = values[std::size_t(low)];
    const double b = low + 1 < n ? values[std::size_t(low + 1)] : a;
    q.push_back(fraction > 0 ? std::min(b, a + fraction * (b - a)) : a);
  }
  detail::make_non_decreasing(q);
  return q;
}

/// A multiset of whole numbers (tick counts) added as ranges [first, last]; its quantiles without
/// enumerating its members: O(r log r) for r ranges, whatever their lengths.
class TickRangeMultiset {
 public:
  /// Adds every whole number from `first` to `last` once (nothing when last < first).
  void add(std::int64_t first, std::int64_t last) {
    if (last < first) return;
    steps_.emplace_back(first, +1);
    steps_.emplace_back(last + 1, -1);
    count_ += last - first + 1;
  }
  /// Adds `times` copies of `value`.
  void add_copies(std::int64_t value, std::int64_t times) {
    if (times <= 0) return;
    steps_.emplace_back(value, times);
    steps_.emplace_back(value + 1, -times);
    count_ += times;
  }
  [[nodiscard]] std::int64_t count() const { return count_; }

  /// The 101 quantiles (file comment) of the members times `unit` (e.g. tick_s); empty when there are none.
  [[nodiscard]] std::vector<double> quantiles_101(double unit) const {
    std::vector<double> q;
    if (count_ == 0) return q;
    // Segments [x_j, x_{j+1}) with `active` copies of each whole number in them.
    std::vector<std::pair<std::int64_t, std::int64_t>> steps = steps_;
    std::sort(steps.begin(), steps.end());
    struct Segment {
      std::int64_t from, to, active, before;  // `before`: members below `from`
    };
    std::vector<Segment> segments;
    std::int64_t active = 0, before = 0;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      active += steps[k].second;
      const bool last_at_point = k + 1 == steps.size() || steps[k + 1].first != steps[k].first;
      if (!last_at_point || k + 1 == steps.size()) continue;
      const std::int64_t from = steps[k].first, to = steps[k + 1].first;
      if (active > 0) {
        segments.push_back({from, to, active, before});
        before += active * (to - from);
      }
    }
    // The member at rank r (0-based): in the last segment with `before` <= r.
    const auto member = [&](std::int64_t rank) {
      const auto after = std::upper_bound(segments.begin(), segments.end(), rank,
                                          [](std::int64_t r, const Segment& s) { return r < s.before; });
      const Segment& s = *(after - 1);
      return s.from + (rank - s.before) / s.active;
    };
    q.reserve(kQuantileCount);
    for (int i = 0; i < kQuantileCount; ++i) {
      const auto [low, fraction] = detail::quantile_rank(count_, i);
      const double a = double(member(low));
      const double b = low + 1 < count_ ? double(member(low + 1)) : a;
      const double ticks = fraction > 0 ? std::min(b, a + fraction * (b - a)) : a;
      q.push_back(ticks * unit);
    }
    detail::make_non_decreasing(q);
    return q;
  }

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>> steps_;
  std::int64_t count_ = 0;
};

/// A wait distribution from the waits that ended (s) and the count still open at the end of observation.
[[nodiscard]] inline WaitDistribution make_wait_distribution(std::vector<double> ended_waits_s, std::int64_t none_came) {
  WaitDistribution w;
  const std::int64_t observed = std::int64_t(ended_waits_s.size()) + none_came;
  w.observed = detail::saturated_int(observed);
  w.none_came = detail::saturated_int(none_came);
  w.none_share = observed > 0 ? double(none_came) / double(observed) : 0.0;
  w.quantiles_s = quantiles_101(std::move(ended_waits_s));
  return w;
}

/// A wait distribution from waits counted in whole ticks (`ended`, times `tick_s`) and the count still open.
[[nodiscard]] inline WaitDistribution make_wait_distribution(const TickRangeMultiset& ended, std::int64_t none_came,
                                                             double tick_s) {
  WaitDistribution w;
  const std::int64_t observed = ended.count() + none_came;
  w.observed = detail::saturated_int(observed);
  w.none_came = detail::saturated_int(none_came);
  w.none_share = observed > 0 ? double(none_came) / double(observed) : 0.0;
  w.quantiles_s = ended.quantiles_101(tick_s);
  return w;
}

}  // namespace spotdnn
