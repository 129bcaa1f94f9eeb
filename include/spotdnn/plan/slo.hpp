#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/slo.hpp The service-level objective a plan must meet: a target loss and a deadline.

#include <cmath>
#include <limits>
#include <string_view>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn {

/// What the user asks of training: reach `target_loss` within `deadline_s` seconds (docs/model.md section 2).
struct Slo {
  double target_loss = 0;  ///< L, the training loss to reach
  /// Wall-clock training time allowed (s). +infinity means "no deadline" (allowed in budget mode only).
  double deadline_s = std::numeric_limits<double>::infinity();

  /// Throws spotdnn::invalid_argument naming the field: a non-finite loss, a deadline that is not > 0.
  void validate(std::string_view function) const {
    detail::require_finite(function, "slo.target_loss", target_loss);
    if (std::isnan(deadline_s) || !(deadline_s > 0)) {
      detail::fail(function, "slo.deadline_s", deadline_s, "must be greater than zero (seconds)");
    }
  }
};

}  // namespace spotdnn
