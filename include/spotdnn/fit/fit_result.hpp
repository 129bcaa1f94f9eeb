#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/fit_result.hpp What every spotdnn fit returns: estimates with standard errors and 95% intervals,
/// goodness of fit, and a status (Ceres `Solver::Summary` style).

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

namespace spotdnn {

/// How a fit came out. The spelling of each value is part of the CLI/JSON contract.
enum class FitStatus {
  converged,         ///< the solver met its convergence tolerance; estimates and intervals are meaningful
  no_convergence,    ///< the iteration limit was hit first: estimates are the best found, use with care
  not_identifiable,  ///< the data cannot separate some parameters: no estimates are returned (values are NaN)
  failure,           ///< the solver failed (non-finite model values, ...): the message says why
};

constexpr std::string_view to_string(FitStatus status) {
  switch (status) {
    case FitStatus::converged: return "converged";
    case FitStatus::no_convergence: return "no_convergence";
    case FitStatus::not_identifiable: return "not_identifiable";
    case FitStatus::failure: return "failure";
  }
  return "failure";
}

constexpr std::optional<FitStatus> fit_status_from_string(std::string_view text) {
  for (FitStatus s : {FitStatus::converged, FitStatus::no_convergence, FitStatus::not_identifiable, FitStatus::failure}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

/// One estimated (or held) parameter.
struct FitParameter {
  std::string name;   ///< e.g. "gamma1", "alpha1", "iteration_time_s[p3.2xlarge]"
  double value = std::numeric_limits<double>::quiet_NaN();
  /// Standard error: sqrt of the covariance diagonal scaled by the residual variance 2·cost/(m − p).
  /// NaN when the fit gives none (held parameter, m ≤ p, not identifiable).
  double standard_error = std::numeric_limits<double>::quiet_NaN();
  double ci95_low = std::numeric_limits<double>::quiet_NaN();   ///< value − t(0.975, m − p)·standard_error
  double ci95_high = std::numeric_limits<double>::quiet_NaN();  ///< value + t(0.975, m − p)·standard_error
  bool free = true;        ///< false: held at its given value, not estimated
  bool at_bound = false;   ///< the estimate sits on a bound of the physical box (intervals are then optimistic)

  /// The standard error is larger than the estimate's magnitude (a relative error above 100%, so the 95%
  /// interval, at least ±1.96 standard errors wide, includes 0): the data hardly determine this parameter
  /// and the estimate should not be relied on. False when there is no standard error (held, or none).
  [[nodiscard]] bool uncertain() const {
    return std::isfinite(value) && std::isfinite(standard_error) && standard_error > std::abs(value);
  }
};

/// The outcome of a fit, whatever was fitted.
struct FitResult {
  FitStatus status = FitStatus::failure;
  std::string message;                  ///< one sentence a person can read
  std::vector<FitParameter> parameters; ///< in a fixed, documented order per fit
  std::size_t observations = 0;         ///< m, residuals in the fit
  std::size_t free_parameters = 0;      ///< p
  double rmse = std::numeric_limits<double>::quiet_NaN();       ///< sqrt(Σ (y − ŷ)² / m), data units, unweighted
  double r_squared = std::numeric_limits<double>::quiet_NaN();  ///< 1 − Σ (y − ŷ)² / Σ (y − ȳ)²
  double final_cost = std::numeric_limits<double>::quiet_NaN(); ///< Ceres cost ½·Σ ρ(r²) of the best start
  int iterations = 0;                   ///< solver iterations of the best start
  int starts = 0;                       ///< starts tried (multi-start)
  /// Multi-start fits that report it (fit_throughput): how many starts ended within the fit's tolerance of
  /// the best cost (1 = only the best start found that minimum). 0 when the fit does not report it.
  int starts_at_best = 0;
  /// Multi-start fits that report it: local solves stopped by the iteration limit (each may have gone lower).
  int starts_at_iteration_limit = 0;
  /// Multi-start fits that report it: the best cost may not be the lowest the starts could reach (only one
  /// start reached it, every start reaching it lies on the edge of the start grid, or solves hit the
  /// iteration limit). The message says which, after "the global optimum may not have been found".
  bool optimum_may_not_be_global = false;
  double solve_time_s = 0;              ///< wall time of the fit (loss fit: the whole call, start search to intervals)

  [[nodiscard]] bool ok() const { return status == FitStatus::converged; }

  /// The names of the parameters whose standard error is larger than the estimate's magnitude
  /// (FitParameter::uncertain), in parameter order.
  [[nodiscard]] std::vector<std::string> uncertain_parameters() const {
    std::vector<std::string> names;
    for (const auto& p : parameters) {
      if (p.uncertain()) names.push_back(p.name);
    }
    return names;
  }

  /// The parameter called `name`; nullptr when there is none.
  [[nodiscard]] const FitParameter* find(std::string_view name) const {
    for (const auto& p : parameters) {
      if (p.name == name) return &p;
    }
    return nullptr;
  }
};

namespace detail {

/// Two-sided 95% Student-t quantile t(0.975, dof); NaN for dof < 1.
inline double student_t_975(std::size_t degrees_of_freedom) {
  if (degrees_of_freedom < 1) return std::numeric_limits<double>::quiet_NaN();
  const boost::math::students_t_distribution<double> t(static_cast<double>(degrees_of_freedom));
  return boost::math::quantile(t, 0.975);
}

/// Fills standard_error and the 95% interval from an unscaled covariance diagonal entry.
/// @param unit_variance_covariance diagonal of (JᵀJ)⁻¹ (Ceres assumes unit residual variance)
/// @param residual_variance 2·cost/(m − p)
inline void set_interval(FitParameter& parameter, double unit_variance_covariance, double residual_variance,
                         double t_quantile) {
  if (!(unit_variance_covariance >= 0) || !std::isfinite(residual_variance) || !std::isfinite(t_quantile)) return;
  parameter.standard_error = std::sqrt(unit_variance_covariance * residual_variance);
  parameter.ci95_low = parameter.value - t_quantile * parameter.standard_error;
  parameter.ci95_high = parameter.value + t_quantile * parameter.standard_error;
}

/// RMSE and R² of predictions against data (unweighted, data units).
inline void set_goodness_of_fit(FitResult& result, const std::vector<double>& observed,
                                const std::vector<double>& predicted) {
  const std::size_t m = observed.size();
  if (m == 0 || predicted.size() != m) return;
  double mean = 0;
  for (double y : observed) mean += y;
  mean /= double(m);
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < m; ++i) {
    ss_res += (observed[i] - predicted[i]) * (observed[i] - predicted[i]);
    ss_tot += (observed[i] - mean) * (observed[i] - mean);
  }
  result.rmse = std::sqrt(ss_res / double(m));
  result.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace detail
}  // namespace spotdnn
