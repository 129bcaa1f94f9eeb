#pragma once
// SPDX-License-Identifier: MIT
/// @file workload.hpp A training job as the model sees it: model size, bandwidth need, PS contention,
/// the loss model and per-instance-type profiles.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn {

/// Parameters of the PS contention probability P(n) = clamp(α1·√n + β1, 0, 1) (docs/model.md eq. (1)).
struct Contention {
  double alpha1 = 0.0;
  double beta1 = 0.0;
};

/// Which loss model (docs/model.md eq. (6)): the seed form with 4 coefficients, or the convergence-coefficient form
/// with 5.
enum class LossForm { seed, cc };

constexpr std::string_view to_string(LossForm form) { return form == LossForm::seed ? "seed" : "cc"; }

constexpr std::optional<LossForm> loss_form_from_string(std::string_view text) {
  if (text == "seed") return LossForm::seed;
  if (text == "cc") return LossForm::cc;
  return std::nullopt;
}

/// Number of γ coefficients of a loss form.
constexpr std::size_t gamma_count(LossForm form) { return form == LossForm::seed ? 4 : 5; }

/// The loss model f(j) and its coefficients γ1..γ4 (seed) or γ1..γ5 (cc), stored 0-based.
struct LossModel {
  LossForm form = LossForm::seed;
  std::vector<double> gamma;

  /// The loss the model approaches as iterations grow: γ4 (seed) or γ5 (cc). No target at or below it
  /// can be reached.
  [[nodiscard]] double asymptote() const { return gamma.at(gamma_count(form) - 1); }
};

/// How one instance type runs this workload. Give exactly one of the two times.
struct TypeProfile {
  int batch_per_gpu = 0;  ///< per-GPU batch; the worker batch is b_k = g_k · batch_per_gpu
  /// Profiled uncontended iteration time T_prof,k (s); the compute time is derived from it (docs/model.md eq. (3)).
  std::optional<double> iteration_time_s;
  /// Compute time per iteration T_comp,k (s), when measured directly.
  std::optional<double> compute_time_s;
  /// Empty when the profile was measured (or fitted); otherwise the profiled type it was estimated from
  /// (scaled by published GPU peak throughput): every output that uses it says "estimated".
  std::string estimated_from;
};

/// Everything about the training job that does not depend on which instances run it.
struct Workload {
  std::string name;
  double param_bytes = 0;                     ///< S, bytes of parameters pushed and pulled per iteration
  double required_bandwidth_bytes_per_s = 0;  ///< B_req, what one worker needs to never wait on the network
  Contention contention;
  LossModel loss_model;
  std::map<std::string, TypeProfile, std::less<>> profiles;  ///< keyed by instance type name

  /// Throws spotdnn::invalid_argument naming the first bad field.
  void validate() const {
    constexpr std::string_view fn = "Workload::validate";
    detail::require_printable_name(fn, "name", name);
    detail::require_positive(fn, "param_bytes", param_bytes);
    detail::require_positive(fn, "required_bandwidth_bytes_per_s", required_bandwidth_bytes_per_s);
    detail::require_finite(fn, "contention.alpha1", contention.alpha1);
    detail::require_finite(fn, "contention.beta1", contention.beta1);
    const std::size_t want = gamma_count(loss_model.form);
    if (loss_model.gamma.size() != want) {
      detail::fail(fn, "loss_model.gamma", "[" + std::to_string(loss_model.gamma.size()) + " values]",
                   "the " + std::string(to_string(loss_model.form)) + " form needs exactly " + std::to_string(want));
    }
    for (std::size_t i = 0; i < want; ++i) {
      detail::require_finite(fn, "loss_model.gamma[" + std::to_string(i) + "]", loss_model.gamma[i]);
    }
    for (const auto& [type, profile] : profiles) {
      const std::string field = "profiles[\"" + type + "\"]";
      detail::require_non_empty(fn, "profiles key", type);
      detail::require_printable_name(fn, "profiles key", type);
      if (profile.batch_per_gpu < 1) detail::fail(fn, field + ".batch_per_gpu", profile.batch_per_gpu, "must be at least 1");
      if (profile.iteration_time_s.has_value() == profile.compute_time_s.has_value()) {
        detail::fail(fn, field, profile.iteration_time_s ? "both times" : "no time",
                     "give exactly one of iteration_time_s and compute_time_s");
      }
      if (profile.iteration_time_s) detail::require_positive(fn, field + ".iteration_time_s", *profile.iteration_time_s);
      if (profile.compute_time_s) detail::require_positive(fn, field + ".compute_time_s", *profile.compute_time_s);
      if (!profile.estimated_from.empty()) detail::require_printable_name(fn, field + ".estimated_from", profile.estimated_from);
    }
  }
};

}  // namespace spotdnn
