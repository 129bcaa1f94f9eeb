#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/function_time.hpp How long one Lambda function computes: training a batch and
/// transforming (serialising) its model chunk (FasDL, IEEE TC 2025; docs/model.md eq. (S1)).
///
/// Both are scalar templates so that the profile fit (serverless/profile_fit.hpp) differentiates the same
/// code the planner evaluates.

#include <cmath>

namespace spotdnn::serverless {

/// Time to train one batch of `batch` samples on a function of `memory_mb` MB: a·(B + b)/(M + m).
/// @note FasDL function-time model, docs/model.md eq. (S1). Lambda's CPU share grows with memory, so the
///       time falls as 1/(M + m); b is the batch's fixed overhead in samples.
/// @param batch B (samples)
/// @param memory_mb M (MB)
/// @param a seconds·MB per sample (fitted)
/// @param b samples of fixed overhead (fitted)
/// @param m MB (fitted); M + m must be positive
/// @return seconds
template <typename T>
T train_time_s(const T& batch, const T& memory_mb, const T& a, const T& b, const T& m) {
  return a * (batch + b) / (memory_mb + m);
}

/// Time to transform (serialise and split) the model on a function of `memory_mb` MB: k1·M^k2.
/// @note FasDL function-time model, docs/model.md eq. (S1).
/// @param memory_mb M (MB), positive
/// @param k1 seconds at M = 1 MB (fitted)
/// @param k2 exponent (fitted; negative when more memory transforms faster)
/// @return seconds
template <typename T>
T transform_time_s(const T& memory_mb, const T& k1, const T& k2) {
  using std::pow;
  return k1 * pow(memory_mb, k2);
}

}  // namespace spotdnn::serverless
