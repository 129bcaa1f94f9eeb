#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/profile_trace.hpp Lambda profiling runs as plain data (the trace `spotdnn serverless fit`
/// reads; io/serverless_trace_csv.hpp reads it from CSV) and their validation.

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn::serverless {

/// Lambda's largest function memory (MB); a trace row above it cannot have been measured on Lambda.
inline constexpr double kLambdaMaxTraceMemoryMb = 10240;
/// The largest batch a trace row may name (samples): the planner's own limit on batches.
inline constexpr double kMaxTraceBatch = 100000000;
/// Most samples of one trace: profiling runs on Lambda give tens to hundreds; the limit bounds the fit's work
/// (a 10⁵-sample trace fits in about a second).
inline constexpr std::size_t kMaxServerlessTraceSamples = 100000;

/// One profiling measurement on a Lambda function of `memory_mb` MB: the time to train one batch of `batch`
/// samples and/or the time to transform the model (docs/model.md eq. (S1)). At least one time is present.
struct ServerlessSample {
  std::optional<double> batch;             ///< B (samples, a whole number ≥ 1); required with train_time_s
  double memory_mb = 0;                    ///< M (MB, a whole number in 1..10240)
  std::optional<double> train_time_s;      ///< T_train(B, M), seconds (> 0)
  std::optional<double> transform_time_s;  ///< T_trans(M), seconds (> 0)
  std::size_t line = 0;                    ///< line in ServerlessTrace::source (header is 1); 0 if not from a file
};

/// A serverless profiling trace (docs/formats.md, "Serverless profile": `batch,memory_mb,train_time_s,transform_time_s`).
struct ServerlessTrace {
  std::string source;  ///< file name for messages ("" when built in code)
  std::vector<ServerlessSample> samples;
};

namespace detail {

/// "file.csv:7" for a sample read from a file, "samples[6]" otherwise.
inline std::string sample_location(std::string_view source, std::size_t line, std::size_t index) {
  if (line > 0) return (source.empty() ? std::string("<trace>") : std::string(source)) + ":" + std::to_string(line);
  return "samples[" + std::to_string(index) + "]";
}

}  // namespace detail

/// Checks one sample; throws spotdnn::invalid_argument "function: WHERE: field = value: why" (WHERE is FILE:LINE
/// or samples[i]) for a memory outside 1..10240 MB or fractional, a batch below 1, fractional or above 10⁸, a
/// time that is not a finite number > 0, a train time without a batch, or a row with no time at all.
inline void validate_serverless_sample(std::string_view function, const ServerlessSample& s, std::string_view where) {
  using spotdnn::detail::fail;
  const std::string at(where);
  if (!std::isfinite(s.memory_mb) || s.memory_mb < 1 || s.memory_mb > kLambdaMaxTraceMemoryMb) {
    fail(function, at + ": memory_mb", s.memory_mb, "must be in 1..10240 MB (Lambda's memory range)");
  }
  if (s.memory_mb != std::floor(s.memory_mb)) fail(function, at + ": memory_mb", s.memory_mb, "must be a whole number of MB");
  if (s.batch) {
    if (!std::isfinite(*s.batch) || *s.batch < 1 || *s.batch > kMaxTraceBatch) {
      fail(function, at + ": batch", *s.batch, "must be a whole number of samples from 1 to 100000000");
    }
    if (*s.batch != std::floor(*s.batch)) fail(function, at + ": batch", *s.batch, "must be a whole number of samples");
  }
  const auto check_time = [&](const char* name, const std::optional<double>& time) {
    if (time && !(std::isfinite(*time) && *time > 0)) fail(function, at + ": " + name, *time, "must be a finite number of seconds > 0");
  };
  check_time("train_time_s", s.train_time_s);
  check_time("transform_time_s", s.transform_time_s);
  if (s.train_time_s && !s.batch) fail(function, at + ": batch", "\"\"", "a train time needs the batch it trained");
  if (!s.train_time_s && !s.transform_time_s) {
    fail(function, at + ": train_time_s", "\"\"", "give train_time_s, transform_time_s or both");
  }
}

/// Checks every sample (validate_serverless_sample) and that there are 1..kMaxServerlessTraceSamples of them.
inline void validate_serverless_trace(const ServerlessTrace& trace) {
  constexpr std::string_view fn = "validate_serverless_trace";
  const std::string where = trace.source.empty() ? "samples" : trace.source;
  if (trace.samples.empty()) spotdnn::detail::fail(fn, where, "[]", "the trace has no samples");
  if (trace.samples.size() > kMaxServerlessTraceSamples) {
    spotdnn::detail::fail(fn, where, "[" + std::to_string(trace.samples.size()) + " samples]",
                          "a trace may hold at most " + std::to_string(kMaxServerlessTraceSamples) + " samples");
  }
  for (std::size_t i = 0; i < trace.samples.size(); ++i) {
    validate_serverless_sample(fn, trace.samples[i], detail::sample_location(trace.source, trace.samples[i].line, i));
  }
}

}  // namespace spotdnn::serverless
