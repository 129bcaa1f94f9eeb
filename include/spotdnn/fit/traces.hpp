#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/traces.hpp Profiling traces as plain data (loss curves and cluster throughput) and their
/// validation; io/csv.hpp reads them from the CSV files of docs/formats.md.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/inline.hpp"
#include "spotdnn/detail/validate.hpp"

namespace spotdnn {

/// One point of a loss curve: the training loss of run `run` after `iteration` PS updates.
struct LossSample {
  std::string run;                ///< run label; all samples of a run share workers, batch and R
  double workers = 1;             ///< n, worker instances (a whole number ≥ 1)
  double weighted_batch = 0;      ///< b_w (samples per PS update), docs/model.md eq. (4)
  double iteration = 0;           ///< j, PS updates so far (≥ 0)
  double loss = 0;                ///< training loss (≥ 0)
  /// R of the run's cluster (docs/model.md eq. (5)); needed by the CC form. When absent the CC fit uses the
  /// homogeneous value sqrt(1 − 1/n).
  std::optional<double> convergence_coefficient;
  std::size_t line = 0;           ///< line in `LossTrace::source` (1-based, header is line 1); 0 if not from a file
};

/// A loss trace: samples of one or more runs (docs/formats.md: `run,workers,weighted_batch,iteration,loss`
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

/// A throughput trace (docs/formats.md: `cluster,iterations_per_s` with cluster `TYPE=N;TYPE=N`).
struct ThroughputTrace {
  std::string source;
  std::vector<ThroughputSample> samples;
};

/// The R a homogeneous cluster of n workers has: sqrt(1 − 1/n) (docs/model.md eq. (5)).
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

/// One run of a LossTable: the cluster every sample of the run was measured on.
struct LossRun {
  std::string name;               ///< run label
  double workers = 1;             ///< n, worker instances (a whole number ≥ 1)
  double weighted_batch = 0;      ///< b_w (samples per PS update), docs/model.md eq. (4)
  /// R of the run's cluster (docs/model.md eq. (5)); absent: the CC fit uses sqrt(1 − 1/n).
  std::optional<double> convergence_coefficient;
  std::size_t line = 0;           ///< line of the run's first sample (0 if not from a file)
};

/// A loss trace in columns: a table of runs plus three numbers per sample (24 bytes instead of a
/// LossSample's 88), which is what `spotdnn fit loss` reads 10⁵-row traces into. Same content and
/// rules as LossTrace; to_loss_table converts.
struct LossTable {
  std::string source;                  ///< file name for messages ("" when built in code)
  std::vector<LossRun> runs;
  std::vector<std::uint32_t> run;      ///< per sample: index into `runs`
  std::vector<double> iteration;       ///< per sample: j, PS updates so far (≥ 0)
  std::vector<double> loss;            ///< per sample: training loss (≥ 0)
  /// Per sample line in `source`; empty when sample i is on line first_line + i (no blank lines).
  std::vector<std::uint32_t> line;
  std::size_t first_line = 0;          ///< see `line`; 0 when not from a file

  [[nodiscard]] std::size_t size() const { return iteration.size(); }
  /// The line of sample i in `source` (1-based, header is line 1); 0 if not from a file.
  [[nodiscard]] std::size_t line_of(std::size_t i) const {
    return line.empty() ? (first_line > 0 ? first_line + i : 0) : std::size_t(line[i]);
  }
};

namespace detail {

/// Appends samples to a LossTable with the checks of validate_loss_trace, sample by sample and with the
/// same messages, so that a file read straight into columns fails exactly as its LossTrace would.
class LossTableBuilder {
 public:
  explicit LossTableBuilder(LossTable& table, bool has_r) : table_(table), has_r_(has_r) {}

  void reserve(std::size_t rows) {
    table_.run.reserve(rows);
    table_.iteration.reserve(rows);
    table_.loss.reserve(rows);
  }

  /// Appends one sample, or throws as validate_loss_trace would for it.
  SPOTDNN_ALWAYS_INLINE SPOTDNN_FLATTEN void add(std::string_view run, double workers, double weighted_batch, double iteration, double loss,
           std::optional<double> r, std::size_t line) {
    // The usual sample (valid, the run of the one before, on the next line) inline; add_checked() takes the
    // rest and does the same to it.
    const std::size_t i = table_.size();
    if (current_ != kNone && !stored_lines_ && line == table_.line_of(i) &&
        plain_sample(run, workers, weighted_batch, iteration, loss, r)) {
      const LossRun& current = table_.runs[current_];
      if (current.workers == workers && current.weighted_batch == weighted_batch && current.convergence_coefficient == r &&
          current.name == run) {
        table_.run.push_back(std::uint32_t(current_));
        table_.iteration.push_back(iteration);
        table_.loss.push_back(loss);
        return;
      }
    }
    add_checked(run, workers, weighted_batch, iteration, loss, r, line);
  }

 private:
  /// Whether a sample needs none of validate_loss_trace's checks of one sample. Whole workers are tested
  /// without a call to floor (x86-64 has no rounding instruction before SSE4.1): a double in [1, 2^53] is
  /// whole when it survives the round trip through an integer (larger ones take the checks, which pass).
  [[nodiscard]] bool plain_sample(std::string_view run, double workers, double weighted_batch, double iteration, double loss,
                                  const std::optional<double>& r) const {
    const bool whole_workers = workers >= 1 && workers <= 9007199254740992.0 && double(std::uint64_t(workers)) == workers;
    return !run.empty() && whole_workers && std::isfinite(weighted_batch) && weighted_batch > 0 && std::isfinite(iteration) &&
           iteration >= 0 && std::isfinite(loss) && loss >= 0 && r.has_value() == has_r_ &&
           (!has_r_ || (std::isfinite(*r) && *r >= 0));
  }

  SPOTDNN_NOINLINE void add_checked(std::string_view run, double workers, double weighted_batch, double iteration, double loss,
                   std::optional<double> r, std::size_t line) {
    constexpr std::string_view fn = "validate_loss_trace";
    const std::size_t i = table_.size();
    const bool plain = plain_sample(run, workers, weighted_batch, iteration, loss, r);
    if (!plain) {
      const std::string at = trace_location(table_.source, line, i) + ": ";
      require_non_empty(fn, at + "run", run);
      require_finite(fn, at + "workers", workers);
      if (workers < 1 || std::floor(workers) != workers) {
        fail(fn, at + "workers", workers, "must be a whole number of at least 1");
      }
      require_positive(fn, at + "weighted_batch", weighted_batch);
      require_non_negative(fn, at + "iteration", iteration);
      require_non_negative(fn, at + "loss", loss);
      if (r.has_value() != has_r_) {
        fail(fn, at + "convergence_coefficient", r ? "given" : "missing", "give it for every sample or for none");
      }
      if (r) require_non_negative(fn, at + "convergence_coefficient", *r);
    }
    if (current_ == kNone || table_.runs[current_].name != run) {  // runs are usually contiguous
      const auto found = index_.find(run);
      if (found == index_.end()) {
        current_ = table_.runs.size();
        table_.runs.push_back(LossRun{std::string(run), workers, weighted_batch, r, line});
        first_index_.push_back(i);
        index_.emplace(std::string(run), current_);
      } else {
        current_ = found->second;
      }
    }
    const LossRun& first = table_.runs[current_];
    if (first.workers != workers || first.weighted_batch != weighted_batch || first.convergence_coefficient != r) {
      const std::string where = trace_location(table_.source, line, i) + ": ";
      const std::string first_at = trace_location(table_.source, first.line, first_index_[current_]) + ": ";
      const std::string name(run);
      if (first.workers != workers) {
        fail(fn, where + "workers", workers,
             "run \"" + name + "\" had " + format_number(first.workers) + " workers at " + first_at +
                 "a run is one cluster and keeps its workers");
      }
      if (first.weighted_batch != weighted_batch) {
        fail(fn, where + "weighted_batch", weighted_batch,
             "run \"" + name + "\" had " + format_number(first.weighted_batch) + " at " + first_at +
                 "a run keeps its weighted batch");
      }
      fail(fn, where + "convergence_coefficient", *r,
           "run \"" + name + "\" had " + format_number(*first.convergence_coefficient) + " at " + first_at +
               "a run keeps its convergence coefficient");
    }
    // Lines: implicit while sample i sits on line first_line + i, stored from the first gap on.
    if (i == 0) table_.first_line = line;
    if (!stored_lines_ && line != table_.line_of(i)) {
      table_.line.reserve(table_.iteration.capacity());
      for (std::size_t k = 0; k < i; ++k) table_.line.push_back(std::uint32_t(table_.first_line + k));
      table_.first_line = 0;
      stored_lines_ = true;
    }
    if (stored_lines_) table_.line.push_back(std::uint32_t(line));
    table_.run.push_back(std::uint32_t(current_));
    table_.iteration.push_back(iteration);
    table_.loss.push_back(loss);
  }

  static constexpr std::size_t kNone = std::size_t(-1);
  LossTable& table_;
  bool has_r_;
  bool stored_lines_ = false;
  std::size_t current_ = kNone;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::vector<std::size_t> first_index_;  ///< per run: index of its first sample (for messages)
};

}  // namespace detail

/// The columns of a valid trace (validate_loss_trace's checks and messages apply).
[[nodiscard]] inline LossTable to_loss_table(const LossTrace& trace) {
  LossTable table;
  table.source = trace.source;
  const bool has_r = !trace.samples.empty() && trace.samples.front().convergence_coefficient.has_value();
  detail::LossTableBuilder builder(table, has_r);
  builder.reserve(trace.samples.size());
  for (const LossSample& s : trace.samples) {
    builder.add(s.run, s.workers, s.weighted_batch, s.iteration, s.loss, s.convergence_coefficient, s.line);
  }
  if (trace.samples.empty()) {
    detail::fail("validate_loss_trace", trace.source.empty() ? "samples" : trace.source, "[]", "the trace has no samples");
  }
  return table;
}

namespace detail {

/// validate_loss_table without the per-sample pass: column lengths and the run table.
inline void validate_loss_table_shape(const LossTable& table) {
  constexpr std::string_view fn = "validate_loss_table";
  const std::size_t m = table.size();
  if (m == 0) detail::fail(fn, table.source.empty() ? "iteration" : table.source, "[]", "the trace has no samples");
  if (table.loss.size() != m || table.run.size() != m || (!table.line.empty() && table.line.size() != m)) {
    detail::fail(fn, "loss", "[" + std::to_string(table.loss.size()) + " values]",
                 "iteration, loss, run (and line, when given) need one value per sample (" + std::to_string(m) + ")");
  }
  if (table.runs.empty()) detail::fail(fn, "runs", "[]", "the table has no runs");
  const bool has_r = table.runs.front().convergence_coefficient.has_value();
  std::map<std::string_view, std::size_t> names;
  for (std::size_t k = 0; k < table.runs.size(); ++k) {
    const LossRun& r = table.runs[k];
    const std::string at = "runs[" + std::to_string(k) + "].";
    detail::require_non_empty(fn, at + "name", r.name);
    if (!names.emplace(r.name, k).second) detail::fail(fn, at + "name", detail::quoted(r.name), "two runs have this name");
    detail::require_finite(fn, at + "workers", r.workers);
    if (r.workers < 1 || std::floor(r.workers) != r.workers) {
      detail::fail(fn, at + "workers", r.workers, "must be a whole number of at least 1");
    }
    detail::require_positive(fn, at + "weighted_batch", r.weighted_batch);
    if (r.convergence_coefficient.has_value() != has_r) {
      detail::fail(fn, at + "convergence_coefficient", r.convergence_coefficient ? "given" : "missing",
                   "give it for every run or for none");
    }
    if (r.convergence_coefficient) detail::require_non_negative(fn, at + "convergence_coefficient", *r.convergence_coefficient);
  }
}

/// Whether sample i of a table that passed validate_loss_table_shape is valid.
inline bool loss_table_row_ok(const LossTable& table, std::size_t i) {
  return table.run[i] < table.runs.size() && std::isfinite(table.iteration[i]) && table.iteration[i] >= 0 &&
         std::isfinite(table.loss[i]) && table.loss[i] >= 0;
}

}  // namespace detail

/// Checks a LossTable built in code: equal column lengths, run indices in range, distinct run names, and
/// every value as validate_loss_trace requires it. Throws spotdnn::invalid_argument
/// "validate_loss_table: FILE:LINE: field = value: why".
inline void validate_loss_table(const LossTable& table) {
  constexpr std::string_view fn = "validate_loss_table";
  detail::validate_loss_table_shape(table);
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (detail::loss_table_row_ok(table, i)) continue;
    const std::string at = detail::trace_location(table.source, table.line_of(i), i) + ": ";
    if (table.run[i] >= table.runs.size()) {
      detail::fail(fn, at + "run", table.run[i], "there are only " + std::to_string(table.runs.size()) + " runs");
    }
    detail::require_non_negative(fn, at + "iteration", table.iteration[i]);
    detail::require_non_negative(fn, at + "loss", table.loss[i]);
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
