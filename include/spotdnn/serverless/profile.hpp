#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/profile.hpp What serverless planning knows about a workload: the model's size, the
/// samples of one epoch and the fitted function-time coefficients (docs/model.md eq. (S1)).

#include <cmath>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn::serverless {

/// A workload profiled on AWS Lambda (what `spotdnn serverless fit` writes).
struct ServerlessProfile {
  std::string name = "serverless-profile";  ///< shown in outputs; printable UTF-8
  double model_size_mb = 0;      ///< S: the model's parameters (MB, 10⁶ bytes)
  double samples_per_epoch = 0;  ///< D: training samples in one epoch
  double a = 0;                  ///< T_train coefficient (s·MB per sample), eq. (S1)
  double b = 0;                  ///< T_train batch overhead (samples), eq. (S1)
  double m = 0;                  ///< T_train memory offset (MB), eq. (S1)
  double k1 = 0;                 ///< T_trans coefficient (s at 1 MB), eq. (S1)
  double k2 = 0;                 ///< T_trans exponent, eq. (S1)

  /// Throws spotdnn::invalid_argument naming the first bad field
  /// ("ServerlessProfile::validate: a = -1: must be greater than zero").
  void validate() const {
    constexpr std::string_view fn = "ServerlessProfile::validate";
    spotdnn::detail::require_printable_name(fn, "name", name);
    spotdnn::detail::require_positive(fn, "model_size_mb", model_size_mb);
    spotdnn::detail::require_positive(fn, "samples_per_epoch", samples_per_epoch);
    spotdnn::detail::require_positive(fn, "a", a);
    spotdnn::detail::require_finite(fn, "b", b);
    spotdnn::detail::require_finite(fn, "m", m);
    spotdnn::detail::require_non_negative(fn, "k1", k1);
    spotdnn::detail::require_finite(fn, "k2", k2);
  }
};

}  // namespace spotdnn::serverless
