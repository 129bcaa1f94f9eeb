#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/market_regimes.hpp Calm and stormy periods of a region's market: a two-state hidden
/// Markov model on counts in time bins, fitted by EM (Baum–Welch). It is the discrete-time form of a
/// Markov-modulated Poisson process (W. Fischer and K. Meier-Hellstern, "The Markov-modulated Poisson
/// process (MMPP) cookbook", Performance Evaluation 18, 1993); fit_revocations uses it per region
/// (MarketRegimes in revocation_model.hpp).
///
/// Data, per bin b of width Δ on the region's shared clock: N_b preemptions that came alone (what the
/// trigger hazard counts) and X_b their expected number under the pools' own trigger hazard by age
/// (Σ over the instances up in the bin of H(age at its end in the bin) − H(age at its start)); A_b
/// instances that came after a wait, and R_b their expected number at each pool's mean return rate
/// (arrivals / down slot-time) times the down slot-time in the bin. Hidden state s_b ∈ {0, 1}; given it,
///
///     N_b ~ Poisson(m_s X_b),  A_b ~ Poisson(r_s R_b),  independent,
///
/// and s_b is a Markov chain with P(s_{b+1} ≠ s | s_b = s) = p_s. A bin with nothing observed
/// (X_b = R_b = 0) carries no evidence. EM (L. E. Baum et al., Ann. Math. Statist. 41, 1970; L. R.
/// Rabiner, Proc. IEEE 77, 1989, eqs. 27 and 40a–c), with the forward–backward pass scaled per bin:
///
///     γ_b(s) = P(s_b = s | data),  ξ_b(s, s') = P(s_b = s, s_{b+1} = s' | data),
///     m_s = Σ_b γ_b(s) N_b / Σ_b γ_b(s) X_b,  r_s = Σ_b γ_b(s) A_b / Σ_b γ_b(s) R_b,
///     p_s = Σ_b ξ_b(s, 1 − s) / Σ_{b < B−1} γ_b(s),  π = γ_0,
///
/// from m = (m̂/2, 2m̂), r = (3r̂/2, r̂/2), p = (0.1, 0.1), where m̂ = ΣN/ΣX and r̂ = ΣA/ΣR are the
/// one-state rates, until the log-likelihood gains less than 1e-9
/// (relative) or after kMaxRegimeIterations. The states are then ordered by m (calm first). The
/// log-likelihoods leave out the Σ log(N_b!) + log(A_b!) both models share. The one-state model has
/// m = m̂, r = r̂. Two states are kept when their log-likelihood beats one state's by more than the
/// BIC penalty (4 more parameters: ½ · 4 · ln B = 2 ln B for B observed bins).
///
/// Switching rates: a two-state chain with generator rates q_0, q_1 has, over Δ, P(leave s) =
/// q_s / (q_0 + q_1) · (1 − e^{−(q_0 + q_1)Δ}); so q_0 + q_1 = −ln(1 − p_0 − p_1) / Δ and
/// q_s = p_s (q_0 + q_1) / (p_0 + p_1) (p_0 + p_1 held below 0.999).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace spotdnn {

/// The most EM iterations of fit_market_regimes.
inline constexpr int kMaxRegimeIterations = 1000;

/// The counts of one time bin (file comment).
struct RegimeBin {
  double preemptions = 0;           ///< N_b
  double expected_preemptions = 0;  ///< X_b at multiplier 1
  double arrivals = 0;              ///< A_b
  double expected_arrivals = 0;     ///< R_b at multiplier 1
  [[nodiscard]] bool observed() const { return expected_preemptions > 0 || expected_arrivals > 0; }
};

/// What fit_market_regimes finds.
struct RegimeFit {
  std::array<double, 2> hazard_multiplier{1, 1};   ///< m_s, calm first
  std::array<double, 2> arrival_multiplier{1, 1};  ///< r_s
  std::array<double, 2> leave_probability{0, 0};   ///< p_s per bin
  std::array<double, 2> leave_rate_per_s{0, 0};    ///< q_s
  std::vector<std::array<double, 2>> posterior;    ///< γ_b per bin
  double log_likelihood = 0;
  double one_state_log_likelihood = 0;
  int observed_bins = 0;
  int iterations = 0;
  bool two_states_better = false;  ///< by BIC (file comment)
  /// The state most probable in bin b (calm on a tie).
  [[nodiscard]] int state_of(std::size_t b) const { return posterior[b][1] > posterior[b][0] ? 1 : 0; }
};

namespace detail {

/// log Poisson(n; μ) without log n!: n ln μ − μ (0 when μ = 0 and n = 0; −inf when μ = 0 < n).
inline double poisson_log_kernel(double n, double mean) {
  if (!(mean > 0)) return n > 0 ? -std::numeric_limits<double>::infinity() : 0.0;
  return (n > 0 ? n * std::log(mean) : 0.0) - mean;
}

/// Σ_b log P(bin b | state s) for the multipliers m, r.
inline double bin_log_emission(const RegimeBin& bin, double m, double r) {
  return poisson_log_kernel(bin.preemptions, m * bin.expected_preemptions) + poisson_log_kernel(bin.arrivals, r * bin.expected_arrivals);
}

}  // namespace detail

/// Fits the two-state model of the file comment to `bins` of width `bin_s`. With nothing observed, or no
/// preemption and no arrival, one state is all there is (two_states_better false, multipliers 1).
[[nodiscard]] inline RegimeFit fit_market_regimes(const std::vector<RegimeBin>& bins, double bin_s) {
  RegimeFit fit;
  const std::size_t n = bins.size();
  fit.posterior.assign(n, {0.5, 0.5});
  double total_n = 0, total_x = 0, total_a = 0, total_r = 0;
  for (const RegimeBin& b : bins) {
    total_n += b.preemptions, total_x += b.expected_preemptions, total_a += b.arrivals, total_r += b.expected_arrivals;
    if (b.observed()) ++fit.observed_bins;
  }
  const double m1 = total_x > 0 ? total_n / total_x : 1.0, r1 = total_r > 0 ? total_a / total_r : 1.0;
  for (const RegimeBin& b : bins) fit.one_state_log_likelihood += detail::bin_log_emission(b, m1, r1);
  fit.log_likelihood = fit.one_state_log_likelihood;
  fit.hazard_multiplier = {m1, m1};
  fit.arrival_multiplier = {r1, r1};
  if (n < 2 || fit.observed_bins < 2 || (total_n == 0 && total_a == 0)) return fit;

  std::array<double, 2> m{0.5 * m1, 2 * m1}, r{1.5 * r1, 0.5 * r1}, p{0.1, 0.1}, pi{0.5, 0.5};
  std::vector<std::array<double, 2>> alpha(n), beta(n), emission(n);
  std::vector<double> scale(n);
  double previous = -std::numeric_limits<double>::infinity();
  double log_likelihood = previous;
  for (int iteration = 1; iteration <= kMaxRegimeIterations; ++iteration) {
    // Emissions, scaled per bin by their larger value (a common factor leaves γ and ξ unchanged).
    double log_offset = 0;
    for (std::size_t b = 0; b < n; ++b) {
      const double e0 = detail::bin_log_emission(bins[b], m[0], r[0]), e1 = detail::bin_log_emission(bins[b], m[1], r[1]);
      const double top = std::max(e0, e1);
      if (!std::isfinite(top)) {
        emission[b] = {1, 1};  // neither state can give this bin (a multiplier of 0): no evidence either way
        continue;
      }
      emission[b] = {std::exp(e0 - top), std::exp(e1 - top)};
      log_offset += top;
    }
    // Forward.
    double log_scale_sum = 0;
    for (std::size_t b = 0; b < n; ++b) {
      std::array<double, 2> a{};
      for (int s = 0; s < 2; ++s) {
        const double prior = b == 0 ? pi[std::size_t(s)]
                                    : alpha[b - 1][std::size_t(s)] * (1 - p[std::size_t(s)]) + alpha[b - 1][std::size_t(1 - s)] * p[std::size_t(1 - s)];
        a[std::size_t(s)] = prior * emission[b][std::size_t(s)];
      }
      scale[b] = a[0] + a[1];
      if (!(scale[b] > 0)) scale[b] = std::numeric_limits<double>::min();
      alpha[b] = {a[0] / scale[b], a[1] / scale[b]};
      log_scale_sum += std::log(scale[b]);
    }
    log_likelihood = log_scale_sum + log_offset;
    // Backward.
    beta[n - 1] = {1, 1};
    for (std::size_t b = n - 1; b-- > 0;) {
      for (int s = 0; s < 2; ++s) {
        const double stay = (1 - p[std::size_t(s)]) * emission[b + 1][std::size_t(s)] * beta[b + 1][std::size_t(s)];
        const double go = p[std::size_t(s)] * emission[b + 1][std::size_t(1 - s)] * beta[b + 1][std::size_t(1 - s)];
        beta[b][std::size_t(s)] = (stay + go) / scale[b + 1];
      }
    }
    // E-step sums, M-step.
    std::array<double, 2> num_m{}, den_m{}, num_r{}, den_r{}, leave{}, occupied{};
    for (std::size_t b = 0; b < n; ++b) {
      std::array<double, 2> g{alpha[b][0] * beta[b][0], alpha[b][1] * beta[b][1]};
      const double sum = g[0] + g[1];
      g = sum > 0 ? std::array<double, 2>{g[0] / sum, g[1] / sum} : std::array<double, 2>{0.5, 0.5};
      fit.posterior[b] = g;
      for (std::size_t s = 0; s < 2; ++s) {
        num_m[s] += g[s] * bins[b].preemptions, den_m[s] += g[s] * bins[b].expected_preemptions;
        num_r[s] += g[s] * bins[b].arrivals, den_r[s] += g[s] * bins[b].expected_arrivals;
      }
      if (b + 1 < n) {
        for (std::size_t s = 0; s < 2; ++s) {
          occupied[s] += g[s];
          leave[s] += alpha[b][s] * p[s] * emission[b + 1][1 - s] * beta[b + 1][1 - s] / scale[b + 1];
        }
      }
    }
    for (std::size_t s = 0; s < 2; ++s) {
      if (den_m[s] > 0) m[s] = num_m[s] / den_m[s];
      if (den_r[s] > 0) r[s] = num_r[s] / den_r[s];
      if (occupied[s] > 0) p[s] = std::clamp(leave[s] / occupied[s], 1e-9, 1 - 1e-9);
    }
    pi = fit.posterior[0];
    fit.iterations = iteration;
    if (std::abs(log_likelihood - previous) <= 1e-9 * std::max(1.0, std::abs(log_likelihood))) break;
    previous = log_likelihood;
  }
  const bool swap = m[1] < m[0] || (m[1] == m[0] && r[1] > r[0]);
  const std::size_t calm = swap ? 1 : 0, stormy = 1 - calm;
  fit.hazard_multiplier = {m[calm], m[stormy]};
  fit.arrival_multiplier = {r[calm], r[stormy]};
  fit.leave_probability = {p[calm], p[stormy]};
  if (swap) {
    for (std::array<double, 2>& g : fit.posterior) std::swap(g[0], g[1]);
  }
  fit.log_likelihood = log_likelihood;
  const double both = std::min(fit.leave_probability[0] + fit.leave_probability[1], 0.999);
  const double total_rate_per_s = -std::log(1 - both) / bin_s;
  for (std::size_t s = 0; s < 2; ++s) {
    fit.leave_rate_per_s[s] = fit.leave_probability[s] / (fit.leave_probability[0] + fit.leave_probability[1]) * total_rate_per_s;
  }
  fit.two_states_better = fit.log_likelihood - fit.one_state_log_likelihood > 2 * std::log(double(fit.observed_bins));
  return fit;
}

}  // namespace spotdnn
