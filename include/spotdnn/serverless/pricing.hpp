#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/pricing.hpp What a serverless run costs: Lambda compute and requests, S3 PUTs and
/// GETs (docs/model.md eq. (S6)).

#include <cmath>
#include <string_view>

namespace spotdnn::serverless {

/// Lambda's invocation limit: a function runs at most 15 minutes per invocation (s).
inline constexpr double kLambdaInvocationLimitS = 900;

/// Prices of one serverless run (USD).
struct ServerlessPricing {
  double lambda_usd_per_mb_s = 0.0000166667 / 1024;  ///< compute: $0.0000166667 per GB-second (x86), per MB-second
  double lambda_usd_per_request = 0.20e-6;           ///< $0.20 per million requests (invocations)
  double s3_usd_per_put = 0.005 / 1000;              ///< $0.005 per 1,000 PUT requests
  double s3_usd_per_get = 0.0004 / 1000;             ///< $0.0004 per 1,000 GET requests
  bool fasdl = false;                                ///< FasDL's own accounting (fasdl_accounting())

  /// AWS's published prices (us-east-1, x86; the defaults above).
  static ServerlessPricing aws() { return {}; }

  /// FasDL's optimizer's accounting: $1.64·10⁻⁸ per MB-second and no request fee (so no charge for the
  /// re-invocations either); S3 as AWS.
  static ServerlessPricing fasdl_accounting() {
    ServerlessPricing p;
    p.lambda_usd_per_mb_s = 1.64e-8;
    p.lambda_usd_per_request = 0;
    p.fasdl = true;
    return p;
  }
};

/// The cost of a run, split as the output reports it.
struct ServerlessCost {
  double lambda_usd = 0;  ///< compute plus requests (the re-invocations included)
  double s3_usd = 0;      ///< PUTs and GETs of the exchange
  double total_usd = 0;
};

/// Invocations of each function: one per started 900 s of training, ⌈T/900⌉ (at least 1).
inline double invocations_per_function(double training_time_s) {
  return std::fmax(1.0, std::ceil(training_time_s / kLambdaInvocationLimitS));
}

/// Lambda: price per MB-s × M × T × W + price per request × W·⌈T/900⌉; S3: I·(PUT·K·W + GET·2·K·(W − 1)).
/// @note FasDL cost model with the request fee, docs/model.md eq. (S6).
/// @param workers W, @param aggregators K, @param memory_mb M (MB), @param iterations I,
/// @param training_time_s T (s)
inline ServerlessCost serverless_cost(const ServerlessPricing& pricing, int workers, int aggregators, double memory_mb,
                                      double iterations, double training_time_s) {
  ServerlessCost c;
  const double w = workers, k = aggregators;
  c.lambda_usd = pricing.lambda_usd_per_mb_s * memory_mb * training_time_s * w +
                 pricing.lambda_usd_per_request * w * invocations_per_function(training_time_s);
  c.s3_usd = iterations * (pricing.s3_usd_per_put * k * w + pricing.s3_usd_per_get * 2.0 * k * (w - 1.0));
  c.total_usd = c.lambda_usd + c.s3_usd;
  return c;
}

}  // namespace spotdnn::serverless
