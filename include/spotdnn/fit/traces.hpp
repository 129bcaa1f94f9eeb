#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/traces.hpp Profiling traces as plain data (loss curves and cluster throughput) and their
/// validation; io/csv.hpp reads them from the CSV files of design §7.

#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"

namespace spotdnn {

/// One point of a loss curve: the training loss of run `run` after `iteration` PS updates.
struct LossSample {
  std::string run;                ///< run label; all samples of a run share workers, batch and R
  double workers = 1;             ///< n, worker instances (a whole number ≥ 1)
  double weighted_batch = 0;      ///< b_w (samples per PS update), design §4 eq. 4
  double iteration = 0;           ///< j, PS updates so far (≥ 0)
  double loss = 0;                ///< training loss (≥ 0)
  /// R of the run's cluster (design §4 eq. 5); needed by the CC form. When absent the CC fit uses the
  /// homogeneous value sqrt(1 − 1/n).
  std::optional<double> convergence_coefficient;
  std::size_t line = 0;           ///< line in `LossTrace::source` (1-based, header is line 1); 0 if not from a file
};

/// A loss trace: samples of one or more runs (design §7: `run,workers,weighted_batch,iteration,loss`
/// [+ `convergence_coefficient`]).
struct LossTrace {
  std::string source;             ///< file name for messages ("" when built in code)
  std::vector<LossSample> samples;
};

/// One throughput measurement: cluster `cluster` made `iterations_per_s` PS updates per second (Σ_i 1/T_i).
struct ThroughputSample {
  Cluster cluster;
  double iterations_per_s = 0;
  std::size_t line = 0;           ///< line in `ThroughputTrace::source`; 0 if not from a file
};

/// A throughput trace (design §7: `cluster,iterations_per_s` with cluster `TYPE=N;TYPE=N`).
struct ThroughputTrace {
  std::string source;
  std::vector<ThroughputSample> samples;
};

/// The R a homogeneous cluster of n workers has: sqrt(1 − 1/n) (design §4 eq. 5).
inline double homogeneous_convergence_coefficient(double workers) {
  return workers > 1 ? std::sqrt(1.0 - 1.0 / workers) : 0.0;
}

namespace detail {

/// "file.csv:7" for a sample read from a file, "samples[6]" otherwise.
inline std::string trace_location(std::string_view source, std::size_t line, std::size_t index) {
  if (line > 0) return (source.empty() ? std::string("<trace>") : std::string(source)) + ":" + std::to_string(line);
  return "samples[" + std::to_string(index) + "]";
}

}  // namespace detail

/// Checks every sample; throws spotdnn::invalid_argument "validate_loss_trace: FILE:LINE: field = value: why"
/// for an empty trace, a non-finite or negative value, a fractional or zero worker count, a run whose
/// samples disagree on workers, weighted batch or R, or R given for some samples and not others.
inline void validate_loss_trace(const LossTrace& trace) {
  constexpr std::string_view fn = "validate_loss_trace";
  if (trace.samples.empty()) {
    detail::fail(fn, trace.source.empty() ? "samples" : trace.source, "[]", "the trace has no samples");
  }
  struct RunShape {
    double workers, weighted_batch;
    std::optional<double> r;
    std::size_t index;
  };
  std::map<std::string, RunShape, std::less<>> runs;
  const bool has_r = trace.samples.front().convergence_coefficient.has_value();
  const RunShape* current = nullptr;
  std::string_view current_name;
  for (std::size_t i = 0; i < trace.samples.size(); ++i) {
    const LossSample& s = trace.samples[i];
    const bool plain = !s.run.empty() && std::isfinite(s.workers) && s.workers >= 1 && std::floor(s.workers) == s.workers &&
                       std::isfinite(s.weighted_batch) && s.weighted_batch > 0 && std::isfinite(s.iteration) &&
                       s.iteration >= 0 && std::isfinite(s.loss) && s.loss >= 0 &&
                       s.convergence_coefficient.has_value() == has_r &&
                       (!has_r || (std::isfinite(*s.convergence_coefficient) && *s.convergence_coefficient >= 0));
    if (!plain) {  // the slow path names FILE:LINE; clean rows build no strings
      const std::string at = detail::trace_location(trace.source, s.line, i) + ": ";
      detail::require_non_empty(fn, at + "run", s.run);
      detail::require_finite(fn, at + "workers", s.workers);
      if (s.workers < 1 || std::floor(s.workers) != s.workers) {
        detail::fail(fn, at + "workers", s.workers, "must be a whole number of at least 1");
      }
      detail::require_positive(fn, at + "weighted_batch", s.weighted_batch);
      detail::require_non_negative(fn, at + "iteration", s.iteration);
      detail::require_non_negative(fn, at + "loss", s.loss);
      if (s.convergence_coefficient.has_value() != has_r) {
        detail::fail(fn, at + "convergence_coefficient", s.convergence_coefficient ? "given" : "missing",
                     "give it for every sample or for none");
      }
      if (s.convergence_coefficient) {
        detail::require_non_negative(fn, at + "convergence_coefficient", *s.convergence_coefficient);
      }
    }
    // Samples of a run are usually contiguous: look the run up only when it changes.
    if (current == nullptr || current_name != s.run) {
      current = &runs.try_emplace(s.run, RunShape{s.workers, s.weighted_batch, s.convergence_coefficient, i}).first->second;
      current_name = s.run;
    }
    const RunShape& first = *current;
    if (first.workers != s.workers || first.weighted_batch != s.weighted_batch || first.r != s.convergence_coefficient) {
      const std::string where = detail::trace_location(trace.source, s.line, i) + ": ";
      const LossSample& f = trace.samples[first.index];
      const std::string first_at = detail::trace_location(trace.source, f.line, first.index) + ": ";
      if (first.workers != s.workers) {
        detail::fail(fn, where + "workers", s.workers,
                     "run \"" + s.run + "\" had " + detail::format_number(first.workers) + " workers at " + first_at +
                         "a run is one cluster and keeps its workers");
      }
      if (first.weighted_batch != s.weighted_batch) {
        detail::fail(fn, where + "weighted_batch", s.weighted_batch,
                     "run \"" + s.run + "\" had " + detail::format_number(first.weighted_batch) + " at " + first_at +
                         "a run keeps its weighted batch");
      }
      if (first.r != s.convergence_coefficient) {
        detail::fail(fn, where + "convergence_coefficient", *s.convergence_coefficient,
                     "run \"" + s.run + "\" had " + detail::format_number(*first.r) + " at " + first_at +
                         "a run keeps its convergence coefficient");
      }
    }
  }
}

/// Checks every sample: a non-empty cluster and a positive, finite throughput. Instance types are checked
/// against the workload and catalog by the throughput fit, which reports the sample's FILE:LINE too.
inline void validate_throughput_trace(const ThroughputTrace& trace) {
  constexpr std::string_view fn = "validate_throughput_trace";
  if (trace.samples.empty()) {
    detail::fail(fn, trace.source.empty() ? "samples" : trace.source, "[]", "the trace has no samples");
  }
  for (std::size_t i = 0; i < trace.samples.size(); ++i) {
    const ThroughputSample& s = trace.samples[i];
    const std::string at = detail::trace_location(trace.source, s.line, i) + ": ";
    if (s.cluster.empty()) detail::fail(fn, at + "cluster", "\"\"", "give at least one worker (TYPE=N;TYPE=N)");
    detail::require_positive(fn, at + "iterations_per_s", s.iterations_per_s);
  }
}

}  // namespace spotdnn
