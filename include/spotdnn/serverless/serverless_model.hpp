#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/serverless_model.hpp One serverless configuration (W functions of M MB, K aggregators)
/// estimated end to end: batches, iterations (rounded up, so that the epochs asked are trained), time and
/// cost (docs/model.md eqs. (S1)–(S6)).

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/serverless/batch_rule.hpp"
#include "spotdnn/serverless/function_time.hpp"
#include "spotdnn/serverless/iteration_time.hpp"
#include "spotdnn/serverless/pricing.hpp"
#include "spotdnn/serverless/profile.hpp"
#include "spotdnn/serverless/transfer_table.hpp"

namespace spotdnn::serverless {

/// Lambda's memory limits (MB): 128 MB up to 10,240 MB in 1 MB steps.
inline constexpr int kLambdaMinMemoryMb = 128;
inline constexpr int kLambdaMaxMemoryMb = 10240;
/// Most samples to train in one serverless question (D·E): 10¹⁵, far above any real run, so that
/// iteration counts stay exact in 64 bits.
inline constexpr double kMaxServerlessSamples = 1e15;

/// How the iteration count I is rounded from D·E/P, P = K·B + (W − K)·A the global batch (docs/model.md
/// eq. (S5)).
enum class IterationRounding {
  up,           ///< I = ⌈D·E/P⌉: the plan trains at least the D·E samples asked (the default)
  fasdl_floor,  ///< I = ⌊D·E/P⌋, FasDL's optimizer: trains up to one global batch less than asked (reproduction only)
};

constexpr std::string_view to_string(IterationRounding rounding) {
  switch (rounding) {
    case IterationRounding::up: return "up";
    case IterationRounding::fasdl_floor: return "fasdl_floor";
  }
  return "up";
}

constexpr std::optional<IterationRounding> iteration_rounding_from_string(std::string_view text) {
  if (text == "up") return IterationRounding::up;
  if (text == "fasdl_floor") return IterationRounding::fasdl_floor;
  return std::nullopt;
}

/// The work: how much to train and the batch rules (docs/model.md eqs. (S2), (S5)).
struct ServerlessWork {
  double epochs = 0;                ///< E (may be fractional); D·E samples are asked
  int max_global_batch = 1024;      ///< Bg: the most samples of one iteration over all functions
  std::optional<int> batch;         ///< B given explicitly; otherwise round(b/(1/γ − 1)) with γ = 0.8
  ServerlessPricing pricing = ServerlessPricing::aws();
  /// I = ⌈D·E/P⌉ (at least the epochs asked); IterationRounding::fasdl_floor reproduces FasDL's ⌊D·E/P⌋,
  /// which trains less than asked. Every planner uses this one rule through ServerlessModel::estimate.
  IterationRounding iteration_rounding = IterationRounding::up;
};

/// One configuration: W functions of M MB, K of which aggregate.
struct ServerlessConfiguration {
  int workers = 1;      ///< W
  int memory_mb = 128;  ///< M (MB)
  int aggregators = 1;  ///< K, 1 ≤ K ≤ W
};

/// Why a configuration cannot run (none when it can).
enum class ConfigurationProblem {
  none,
  idle_non_aggregators,     ///< A < 1: the non-aggregators would train no sample
  batch_exceeds_work,       ///< K·B + (W − K)·A > D·E: one global batch is more than the samples asked (either rounding)
  iteration_over_invocation_limit,  ///< t > 900 s: an iteration does not fit in one Lambda invocation
  figures_not_finite,       ///< a time or cost overflows (or is NaN) for this profile: check its coefficients
};

constexpr std::string_view to_string(ConfigurationProblem problem) {
  switch (problem) {
    case ConfigurationProblem::none: return "none";
    case ConfigurationProblem::idle_non_aggregators: return "idle_non_aggregators";
    case ConfigurationProblem::batch_exceeds_work: return "batch_exceeds_work";
    case ConfigurationProblem::iteration_over_invocation_limit: return "iteration_over_invocation_limit";
    case ConfigurationProblem::figures_not_finite: return "figures_not_finite";
  }
  return "none";
}

/// Every figure of one configuration (docs/formats.md, serverless plan).
struct ServerlessEstimate {
  ServerlessConfiguration configuration;
  ConfigurationProblem problem = ConfigurationProblem::none;
  int batch = 0;                          ///< B (samples per aggregator per iteration)
  std::int64_t non_aggregator_batch = 0;  ///< A (samples per non-aggregator per iteration)
  std::int64_t iterations = 0;            ///< I = ⌈D·E/(K·B + (W − K)·A)⌉ (⌊⌋ under IterationRounding::fasdl_floor)
  IterationTimes<double> iteration;       ///< the parts of one iteration
  double iteration_time_s = 0;            ///< t
  double training_time_s = 0;             ///< T = I·t
  ServerlessCost cost;                    ///< lambda (with requests) and S3
  /// I·(K·B + (W − K)·A): at least D·E and less than D·E + one global batch when rounded up; at most D·E
  /// under IterationRounding::fasdl_floor.
  double samples_trained = 0;
  double samples_asked = 0;               ///< D·E, the samples the work asks for (as ServerlessModel::samples_to_train)
  bool extrapolated = false;              ///< a transfer time came from outside the measured cells

  [[nodiscard]] bool runnable() const { return problem == ConfigurationProblem::none; }
  [[nodiscard]] double cost_usd() const { return cost.total_usd; }
};

/// The FasDL model of one workload on Lambda: validated once, then evaluated per configuration.
class ServerlessModel {
 public:
  /// Throws spotdnn::invalid_argument naming the first bad field (profile, epochs, batch, global batch).
  ServerlessModel(ServerlessProfile profile, ServerlessWork work,
                  std::shared_ptr<const TransferTable> transfer = nullptr)
      : profile_(std::move(profile)), work_(std::move(work)), transfer_(std::move(transfer)) {
    constexpr std::string_view fn = "ServerlessModel";
    profile_.validate();
    spotdnn::detail::require_positive(fn, "epochs", work_.epochs);
    if (!(profile_.samples_per_epoch * work_.epochs <= kMaxServerlessSamples)) {
      spotdnn::detail::fail(fn, "epochs", work_.epochs, "gives more than 10¹⁵ samples to train (samples_per_epoch × epochs)");
    }
    if (work_.max_global_batch < 1 || work_.max_global_batch > 100000000) {
      spotdnn::detail::fail(fn, "max_global_batch", double(work_.max_global_batch), "must be in 1..10⁸");
    }
    if (work_.batch) {
      if (*work_.batch < 1 || *work_.batch > work_.max_global_batch) {
        spotdnn::detail::fail(fn, "batch", double(*work_.batch),
                              "must be in 1..max_global_batch (" + std::to_string(work_.max_global_batch) + ")");
      }
      batch_ = *work_.batch;
    } else {
      batch_ = aggregator_batch(profile_.b);
      if (batch_ > work_.max_global_batch) {
        spotdnn::detail::fail(fn, "max_global_batch", double(work_.max_global_batch),
                              "is below the aggregator batch " + std::to_string(batch_) + " of the profile's b: raise it or give --batch");
      }
    }
    if (!(double(kLambdaMinMemoryMb) + profile_.m > 0)) {
      spotdnn::detail::fail(fn, "m", profile_.m, "makes M + m ≤ 0 at Lambda's smallest memory (128 MB)");
    }
    if (!transfer_) transfer_ = std::shared_ptr<const TransferTable>(&TransferTable::fasdl_measured(), [](const TransferTable*) {});
  }

  [[nodiscard]] const ServerlessProfile& profile() const { return profile_; }
  [[nodiscard]] const ServerlessWork& work() const { return work_; }
  [[nodiscard]] const TransferTable& transfer() const { return *transfer_; }
  /// B, docs/model.md eq. (S2).
  [[nodiscard]] int batch() const { return batch_; }
  /// ⌊Bg/B⌋, docs/model.md eq. (S2).
  [[nodiscard]] int max_workers() const { return serverless::max_workers(work_.max_global_batch, batch_); }
  /// D·E.
  [[nodiscard]] double samples_to_train() const { return profile_.samples_per_epoch * work_.epochs; }
  /// fs = S/K (MB).
  [[nodiscard]] double chunk_mb(int aggregators) const { return profile_.model_size_mb / aggregators; }

  /// Estimates a configuration. Throws invalid_argument when it is outside the model's domain:
  /// W not in 1..max_workers(), K not in 1..W, M not in 128..10,240.
  [[nodiscard]] ServerlessEstimate estimate(const ServerlessConfiguration& c) const {
    check(c);
    return estimate(c, transfer_->for_object_size(chunk_mb(c.aggregators)));
  }

  /// As estimate(c), with the transfer of this configuration's chunk fs = S/K already taken from the
  /// table (TransferTable::for_object_size(chunk_mb(K))): what a search over memory calls. Unchecked.
  [[nodiscard]] ServerlessEstimate estimate(const ServerlessConfiguration& c, const ObjectSizeTransfer& chunk) const {
    ServerlessEstimate e;
    e.configuration = c;
    e.batch = batch_;
    e.samples_asked = samples_to_train();
    const double memory_mb = c.memory_mb, workers = c.workers, aggregators = c.aggregators;
    const TransferTime transfer = chunk.at_memory(memory_mb);
    e.extrapolated = transfer.extrapolated;
    const double train_s = train_time_s<double>(batch_, memory_mb, profile_.a, profile_.b, profile_.m);
    const double transform_s = transform_time_s<double>(memory_mb, profile_.k1, profile_.k2);
    e.iteration = iteration_times<double>(workers, aggregators, chunk.object_mb(), transfer.upload_s, transfer.download_s,
                                          transform_s, train_s);
    e.iteration_time_s = e.iteration.total_s;
    if (!std::isfinite(e.iteration_time_s)) {
      e.problem = ConfigurationProblem::figures_not_finite;
      return e;
    }
    e.non_aggregator_batch = non_aggregator_batch(c.workers, c.aggregators, batch_, work_.max_global_batch,
                                                  e.iteration.aggregate_s, train_s, memory_mb, profile_.a, profile_.b, profile_.m);
    if (e.non_aggregator_batch < 1) {
      e.problem = ConfigurationProblem::idle_non_aggregators;
      return e;
    }
    const std::int64_t per_iteration = std::int64_t(c.aggregators) * batch_ + std::int64_t(c.workers - c.aggregators) * e.non_aggregator_batch;
    e.iterations = iteration_count(samples_to_train(), per_iteration, work_.iteration_rounding);
    if (e.iterations < 1) {
      e.problem = ConfigurationProblem::batch_exceeds_work;
      return e;
    }
    if (e.iteration_time_s > kLambdaInvocationLimitS) {
      e.problem = ConfigurationProblem::iteration_over_invocation_limit;
      return e;
    }
    e.samples_trained = double(e.iterations) * double(per_iteration);
    e.training_time_s = double(e.iterations) * e.iteration_time_s;
    e.cost = serverless_cost(work_.pricing, c.workers, c.aggregators, memory_mb, double(e.iterations), e.training_time_s);
    if (!std::isfinite(e.training_time_s) || !std::isfinite(e.cost.total_usd)) e.problem = ConfigurationProblem::figures_not_finite;
    return e;
  }

  /// ⌊samples/per_iteration⌋ exactly for the samples (≤ 10¹⁵) and batches (< 2⁶³) this model sees.
  static std::int64_t whole_iterations(double samples, std::int64_t per_iteration) {
    if (per_iteration <= 0) return 0;
    auto whole = std::int64_t(std::floor(samples / double(per_iteration)));
    while (whole > 0 && double(whole) * double(per_iteration) > samples) --whole;
    while (double(whole + 1) * double(per_iteration) <= samples) ++whole;
    return whole;
  }

  /// The iteration count I of a global batch of `per_iteration` samples, docs/model.md eq. (S5): 0 when
  /// per_iteration > samples (one global batch is more than the work, under either rule); otherwise
  /// ⌈samples/per_iteration⌉ (IterationRounding::up) or ⌊samples/per_iteration⌋ (fasdl_floor), exactly
  /// (whole·per_iteration ≤ samples + per_iteration stays below 2⁵³ for samples ≤ 10¹⁵ and per_iteration ≤
  /// samples). Never rises with per_iteration, under either rule.
  /// @note docs/model.md eq. (S5).
  static std::int64_t iteration_count(double samples, std::int64_t per_iteration, IterationRounding rounding) {
    const std::int64_t whole = whole_iterations(samples, per_iteration);
    if (whole < 1 || rounding == IterationRounding::fasdl_floor) return whole;
    return double(whole) * double(per_iteration) < samples ? whole + 1 : whole;
  }

 private:
  void check(const ServerlessConfiguration& c) const {
    constexpr std::string_view fn = "ServerlessModel::estimate";
    if (c.workers < 1 || c.workers > max_workers()) {
      spotdnn::detail::fail(fn, "workers", double(c.workers), "must be in 1..⌊max_global_batch/batch⌋ = " + std::to_string(max_workers()));
    }
    if (c.aggregators < 1 || c.aggregators > c.workers) {
      spotdnn::detail::fail(fn, "aggregators", double(c.aggregators), "must be in 1..workers (" + std::to_string(c.workers) + ")");
    }
    if (c.memory_mb < kLambdaMinMemoryMb || c.memory_mb > kLambdaMaxMemoryMb) {
      spotdnn::detail::fail(fn, "memory_mb", double(c.memory_mb), "must be in Lambda's 128..10240 MB");
    }
  }

  ServerlessProfile profile_;
  ServerlessWork work_;
  std::shared_ptr<const TransferTable> transfer_;
  int batch_ = 1;
};

}  // namespace spotdnn::serverless
