#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/lifetime_mle.hpp Parametric lifetime laws (exponential, Weibull) fitted by maximum
/// likelihood to censored and left-truncated lifetimes, and the comparison with the piecewise hazard by AIC.
///
/// Data: spans i = 1..n (revocation/hazard_by_age.hpp), each observed from age a_i (0 unless the fit window
/// cut its start) to age t_i, δ_i = 1 when it ended in a preemption; d = Σ δ_i, E = Σ (t_i − a_i). Times are
/// in seconds, so every log-likelihood is of densities per second and the three are comparable.
///
/// - Exponential, hazard λ:  ln L = d ln λ − λ E, maximised at λ = d / E.
/// - Weibull, S(t) = exp(−(t/s)^k), hazard h(t) = (k/s)(t/s)^{k−1}:
///
///       ln L(k, s) = Σ_i δ_i [ln k − k ln s + (k − 1) ln t_i] − Σ_i (t_i^k − a_i^k) / s^k.
///
///   For fixed k the best scale is s^k = Σ_i (t_i^k − a_i^k) / d; putting it back, the profile likelihood
///   is maximal where
///
///       g(k) = d / k + Σ_i δ_i ln t_i − d · Σ_i (t_i^k ln t_i − a_i^k ln a_i) / Σ_i (t_i^k − a_i^k) = 0
///
///   (Cohen 1965; the a_i terms are those of left truncation, 0 when a_i = 0). g falls with k; spotdnn
///   solves g(k) = 0 by bisection on k ∈ [0.05, 20] (the bound itself when g keeps one sign there), with
///   ages divided by the largest t_i so that t^k neither overflows nor underflows.
/// - Piecewise-constant hazard h_b = d_b / E_b by age bin: ln L = Σ_b (d_b ln h_b − h_b E_b), one
///   parameter per bin with exposure.
///
/// The law the data favour is the one with the lowest AIC = 2·parameters − 2·ln L (exponential 1,
/// Weibull 2, piecewise the bins with exposure); ties go to the simpler law. With no preemption at all no
/// law can be told apart: the exponential (λ = 0) is named, the Weibull keeps k = 1 and s = +inf.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "spotdnn/revocation/hazard_by_age.hpp"
#include "spotdnn/revocation/revocation_model.hpp"

namespace spotdnn {

/// The bracket of the Weibull shape search.
inline constexpr double kWeibullShapeMin = 0.05;
inline constexpr double kWeibullShapeMax = 20.0;

/// Fits the exponential and Weibull laws to `spans` by maximum likelihood (file comment), evaluates the
/// piecewise law of `bins` (hazard_by_age of the same spans) on the same data, and names the best by AIC.
/// @note Weibull MLE with right censoring and left truncation: profile equation g(k) = 0 (file comment).
[[nodiscard]] inline ParametricLifetimeFit fit_parametric_lifetimes(const std::vector<AgeSpan>& spans,
                                                                    const std::vector<HazardBin>& bins) {
  ParametricLifetimeFit fit;
  double events = 0, exposure_s = 0, largest_s = 0;
  for (const AgeSpan& s : spans) {
    if (!(s.exit_age_s > s.entry_age_s) || !(s.entry_age_s >= 0)) continue;
    exposure_s += s.exit_age_s - s.entry_age_s;
    if (s.event) ++events;
    largest_s = std::max(largest_s, s.exit_age_s);
  }
  // Piecewise: Σ_b d_b ln h_b − h_b E_b with h_b per second.
  for (const HazardBin& bin : bins) {
    if (!(bin.exposure_s > 0)) continue;
    ++fit.piecewise_parameters;
    if (bin.events > 0) {
      const double h = bin.events / bin.exposure_s;
      fit.piecewise_log_likelihood += bin.events * std::log(h) - h * bin.exposure_s;
    }
  }
  fit.weibull_shape = 1;
  fit.weibull_scale_s = std::numeric_limits<double>::infinity();
  if (events == 0) {
    fit.best_by_aic = "exponential";
    return fit;
  }
  const double rate_per_s = events / exposure_s;
  fit.exponential_hazard_per_hour = rate_per_s * 3600.0;
  fit.exponential_log_likelihood = events * std::log(rate_per_s) - rate_per_s * exposure_s;

  // Weibull on ages scaled by the largest: u = t / T, v = a / T in (0, 1].
  const double scale_T = largest_s;
  double sum_log_u_events = 0;
  for (const AgeSpan& s : spans) {
    if (s.exit_age_s > s.entry_age_s && s.entry_age_s >= 0 && s.event) sum_log_u_events += std::log(s.exit_age_s / scale_T);
  }
  // Σ (u^k − v^k) and Σ (u^k ln u − v^k ln v).
  const auto sums = [&](double k, double& difference, double& weighted_log) {
    difference = 0;
    weighted_log = 0;
    for (const AgeSpan& s : spans) {
      if (!(s.exit_age_s > s.entry_age_s) || !(s.entry_age_s >= 0)) continue;
      const double u = s.exit_age_s / scale_T;
      const double uk = std::pow(u, k);
      difference += uk;
      weighted_log += uk * std::log(u);
      if (s.entry_age_s > 0) {
        const double v = s.entry_age_s / scale_T;
        const double vk = std::pow(v, k);
        difference -= vk;
        weighted_log -= vk * std::log(v);
      }
    }
  };
  const auto g = [&](double k) {
    double difference = 0, weighted_log = 0;
    sums(k, difference, weighted_log);
    if (!(difference > 0)) return -std::numeric_limits<double>::infinity();
    return events / k + sum_log_u_events - events * weighted_log / difference;
  };
  double k = 0;
  if (!(g(kWeibullShapeMin) > 0)) {
    k = kWeibullShapeMin;
  } else if (g(kWeibullShapeMax) >= 0) {
    k = kWeibullShapeMax;
  } else {
    double low = kWeibullShapeMin, high = kWeibullShapeMax;
    for (int iteration = 0; iteration < 200 && high - low > 1e-13 * high; ++iteration) {
      const double middle = 0.5 * (low + high);
      (g(middle) > 0 ? low : high) = middle;
    }
    k = 0.5 * (low + high);
  }
  double difference = 0, weighted_log = 0;
  sums(k, difference, weighted_log);
  // s^k = T^k Σ(u^k − v^k) / d, so s = T (Σ(u^k − v^k) / d)^{1/k}.
  const double scale_s = scale_T * std::pow(difference / events, 1.0 / k);
  fit.weibull_shape = k;
  fit.weibull_scale_s = scale_s;
  // ln L = Σ δ [ln k − k ln s + (k−1) ln t] − Σ (t^k − a^k)/s^k; the last sum is Σ(u^k − v^k)·T^k/s^k = d.
  const double log_scale = std::log(scale_s), log_T = std::log(scale_T);
  double log_likelihood = 0;
  for (const AgeSpan& s : spans) {
    if (!(s.exit_age_s > s.entry_age_s) || !(s.entry_age_s >= 0) || !s.event) continue;
    log_likelihood += std::log(k) - k * log_scale + (k - 1) * (std::log(s.exit_age_s / scale_T) + log_T);
  }
  log_likelihood -= difference * std::exp(k * (log_T - log_scale));
  fit.weibull_log_likelihood = log_likelihood;

  const double aic_exponential = 2 * 1 - 2 * fit.exponential_log_likelihood;
  const double aic_weibull = 2 * 2 - 2 * fit.weibull_log_likelihood;
  const double aic_piecewise = 2 * fit.piecewise_parameters - 2 * fit.piecewise_log_likelihood;
  fit.best_by_aic = "exponential";
  double best = aic_exponential;
  if (aic_weibull < best) {
    fit.best_by_aic = "weibull";
    best = aic_weibull;
  }
  if (aic_piecewise < best) fit.best_by_aic = "piecewise";
  return fit;
}

}  // namespace spotdnn
