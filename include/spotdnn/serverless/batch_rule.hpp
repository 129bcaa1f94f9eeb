#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/batch_rule.hpp The aggregator batch B, the worker cap, and the non-aggregator batch A
/// that keeps non-aggregators busy while aggregators exchange (docs/model.md eqs. (S2), (S5)).

#include <cmath>
#include <cstdint>
#include <string_view>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn::serverless {

/// FasDL's target share of an iteration spent training, γ (docs/model.md eq. (S2)).
inline constexpr double kFasdlTrainingShare = 0.8;

/// B = round(b/(1/γ − 1)), half away from zero (docs/model.md eq. (S2)). Throws invalid_argument when B
/// would be below 1 (then give the batch explicitly).
/// @param b the fitted batch overhead b (samples)
/// @param training_share γ in (0, 1)
inline int aggregator_batch(double b, double training_share = kFasdlTrainingShare) {
  constexpr std::string_view fn = "aggregator_batch";
  spotdnn::detail::require_finite(fn, "b", b);
  if (!(training_share > 0.0 && training_share < 1.0)) spotdnn::detail::fail(fn, "training_share", training_share, "must be in (0, 1)");
  const double batch = std::round(b / (1.0 / training_share - 1.0));
  if (!(batch >= 1.0)) {
    spotdnn::detail::fail(fn, "b", b, "gives an aggregator batch round(b/(1/γ − 1)) = " + spotdnn::detail::format_number(batch) +
                                          " below 1: give the batch explicitly (--batch)");
  }
  if (batch > 1e9) spotdnn::detail::fail(fn, "b", b, "gives an aggregator batch above 10⁹ samples: give the batch explicitly (--batch)");
  return int(batch);
}

/// The most workers: ⌊Bg/B⌋ (docs/model.md eq. (S2)); 0 when B > Bg.
constexpr int max_workers(int max_global_batch, int batch) { return batch > 0 ? max_global_batch / batch : 0; }

/// A = B when K = W, else min(A_max, A_con) with A_max = round((T_agg + T_train(B, M))·(M + m)/a − b)
/// (the batch a non-aggregator trains while the aggregators aggregate and train) and
/// A_con = ⌊(Bg − K·B)/(W − K)⌋ (the global batch cap). docs/model.md eq. (S5).
/// @return A (samples); may be below 1, when non-aggregators would train nothing (see ServerlessModel)
inline std::int64_t non_aggregator_batch(int workers, int aggregators, int batch, int max_global_batch,
                                         double aggregate_s, double train_s, double memory_mb, double a, double b,
                                         double m) {
  if (aggregators >= workers) return batch;
  const double busy = std::round((aggregate_s + train_s) * (memory_mb + m) / a - b);
  const std::int64_t cap = (std::int64_t(max_global_batch) - std::int64_t(aggregators) * batch) / (workers - aggregators);
  if (!(busy < double(cap))) return cap;  // also NaN-safe: a NaN busy batch takes the cap
  return std::int64_t(busy);
}

}  // namespace spotdnn::serverless
