#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/training_profile.hpp What one instance type computes, as the training example's `--profile` mode
/// measured it on that type (docs/formats.md, "Training profiles"): the model's size and, per per-GPU batch and
/// numeric precision, the median compute time of one iteration (T_comp of docs/model.md eq. (3): forward and
/// backward pass, no optimizer step, no transfer). `spotdnn workload build` turns several of them, with a loss
/// trace and a throughput trace, into a workload document (fit/workload_build.hpp).

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/limits.hpp"

namespace spotdnn {

/// The numeric precisions a profile may measure: strict FP32, TF32 matmuls and convolutions, and bf16 or
/// fp16 autocast mixed precision.
inline constexpr std::string_view kTrainingPrecisions[] = {"fp32", "tf32", "bf16", "fp16"};

[[nodiscard]] inline bool is_training_precision(std::string_view text) {
  return std::find(std::begin(kTrainingPrecisions), std::end(kTrainingPrecisions), text) != std::end(kTrainingPrecisions);
}

/// One measured (batch, precision) point of a profile.
struct ComputeMeasurement {
  int batch_per_gpu = 0;
  std::string precision;
  int iterations = 0;          ///< timed iterations the median is of
  double compute_time_s = 0;   ///< median seconds of one forward + backward pass of batch_per_gpu samples
};

/// A profile of one instance type (what `ps_train.py --profile` writes).
struct TrainingProfile {
  std::string instance_type;
  std::string model;           ///< the model's name (mlp, resnet20, ...): every profile of a workload names the same
  double param_bytes = 0;      ///< S: bytes of parameters (= gradient bytes) pushed and pulled per update
  std::string device;          ///< "cpu" or "cuda"
  std::string gpu_name;        ///< empty on the CPU
  int gpu_count = 0;           ///< GPUs of the instance (0 on the CPU)
  std::string framework;       ///< e.g. "torch 2.11.0+cu128" (what produced the figures)
  std::vector<ComputeMeasurement> measurements;

  /// Throws spotdnn::invalid_argument naming the first bad field.
  void validate() const {
    constexpr std::string_view fn = "TrainingProfile::validate";
    detail::require_non_empty(fn, "instance_type", instance_type);
    detail::require_printable_name(fn, "instance_type", instance_type);
    detail::require_non_empty(fn, "model", model);
    detail::require_printable_name(fn, "model", model);
    detail::require_positive(fn, "param_bytes", param_bytes);
    if (measurements.empty()) detail::fail(fn, "measurements", "[]", "a profile needs at least one measurement");
    for (std::size_t i = 0; i < measurements.size(); ++i) {
      const ComputeMeasurement& m = measurements[i];
      const std::string field = "measurements[" + std::to_string(i) + "]";
      if (m.batch_per_gpu < 1 || m.batch_per_gpu > kMaxBatchPerGpu) {
        detail::fail(fn, field + ".batch_per_gpu", m.batch_per_gpu, "must be from 1 to " + std::to_string(kMaxBatchPerGpu));
      }
      if (!is_training_precision(m.precision)) {
        detail::fail(fn, field + ".precision", detail::quoted(m.precision), "expected fp32, tf32, bf16 or fp16");
      }
      if (m.iterations < 1) detail::fail(fn, field + ".iterations", m.iterations, "must be at least 1");
      detail::require_positive(fn, field + ".compute_time_s", m.compute_time_s);
      for (std::size_t k = 0; k < i; ++k) {
        if (measurements[k].batch_per_gpu == m.batch_per_gpu && measurements[k].precision == m.precision) {
          detail::fail(fn, field, "batch " + std::to_string(m.batch_per_gpu) + " " + m.precision,
                       "measured twice (measurements[" + std::to_string(k) + "] has it too)");
        }
      }
    }
  }

  /// The measurement at `precision` and `batch_per_gpu`, or with batch_per_gpu 0 the one with the largest
  /// batch at that precision; nullptr when there is none.
  [[nodiscard]] const ComputeMeasurement* find(std::string_view precision, int batch_per_gpu = 0) const {
    const ComputeMeasurement* best = nullptr;
    for (const ComputeMeasurement& m : measurements) {
      if (m.precision != precision) continue;
      if (batch_per_gpu > 0 ? m.batch_per_gpu == batch_per_gpu : (best == nullptr || m.batch_per_gpu > best->batch_per_gpu)) best = &m;
    }
    return best;
  }

  /// "batch 32 fp32, batch 64 fp32, ...": what was measured, for messages.
  [[nodiscard]] std::string measured_list() const {
    std::string list;
    for (const ComputeMeasurement& m : measurements) {
      list += (list.empty() ? "" : ", ") + ("batch " + std::to_string(m.batch_per_gpu) + " " + m.precision);
    }
    return list;
  }
};

}  // namespace spotdnn
