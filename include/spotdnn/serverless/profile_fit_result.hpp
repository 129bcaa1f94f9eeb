#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/profile_fit_result.hpp What the serverless profile fit returns: the profile with the
/// fitted a, b, m, k1, k2 (docs/model.md eq. (S1)) and one report per coefficient. Ceres-free, so that the
/// profile document's writer (io/serverless_profile_json.hpp) needs no fitting library.

#include <limits>
#include <vector>

#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/serverless/profile.hpp"

namespace spotdnn::serverless {

/// fit_serverless_profile's answer (serverless/profile_fit.hpp).
///
/// The inherited FitResult pools both fits: parameters a, b, m, k1, k2 in that order (NaN where not
/// estimated), status converged only when both fits converged (else the train fit's status when it did not
/// converge, else the transform fit's), message "train time: ...; transform time: ...", observations and
/// iterations summed, free_parameters 5, optimum_may_not_be_global when either says so. rmse and r_squared
/// stay NaN there: each part reports its own, in seconds, in `train` and `transform`.
struct ServerlessFitResult : FitResult {
  /// The given name, model size and samples per epoch with the fitted coefficients; a coefficient is NaN
  /// when its part did not converge (or stopped at the iteration limit).
  ServerlessProfile profile;
  FitResult train;       ///< T_train(B, M) = a·(B + b)/(M + m): parameters a, b, m
  FitResult transform;   ///< T_trans(M) = k1·M^k2: parameters k1, k2
  bool relative_residuals = false;  ///< the residuals were (f − y)/y, not f − y
  /// The fitted time of every sample of the trace, in trace order; NaN where the sample has no such
  /// measurement or the part has no estimate.
  std::vector<double> predicted_train_time_s;
  std::vector<double> predicted_transform_time_s;
};

}  // namespace spotdnn::serverless
