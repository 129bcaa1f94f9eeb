#pragma once
// SPDX-License-Identifier: MIT
/// @file io/serverless_trace_csv.hpp Reads a serverless profiling trace (docs/formats.md, "Serverless
/// profile"): the `--trace F.csv` of `spotdnn serverless fit`.
///
/// Header `batch,memory_mb,train_time_s,transform_time_s`, columns by name in any order; `memory_mb` and at
/// least one of the times are required, `batch` whenever `train_time_s` is there. One row per measurement on
/// a Lambda function of `memory_mb` MB: a row may leave `train_time_s` or `transform_time_s` empty when only
/// the other was measured (and `batch` empty when it has no train time), not both. Same file rules and
/// FILE:LINE messages as the other traces (io/csv.hpp); memory a whole number in 1..10,240 MB, batch a whole
/// number in 1..10⁸, times finite and > 0, at most kMaxServerlessTraceSamples rows.

#include <cmath>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "spotdnn/io/csv.hpp"
#include "spotdnn/serverless/profile_trace.hpp"

// The reader lives in spotdnn::detail (as io/csv.hpp's do): a spotdnn::io::detail namespace would capture the
// unqualified detail:: of io headers included after this one.
namespace spotdnn::detail {

inline constexpr std::string_view kServerlessTraceHeader = "batch,memory_mb,train_time_s,transform_time_s";

inline serverless::ServerlessTrace read_serverless_trace_from(CsvInput& input) {
  using spotdnn::detail::csv_where;
  using spotdnn::detail::fail;
  using spotdnn::detail::parse_csv_non_negative;
  using spotdnn::detail::quoted;
  const std::string_view fn = input.function();
  const std::string& source = input.source();
  enum Slot : std::size_t { kBatch, kMemory, kTrain, kTransform };
  CsvTable<4> in(input, {"batch", "memory_mb", "train_time_s", "transform_time_s"}, kServerlessTraceHeader);
  serverless::ServerlessTrace trace;
  trace.source = source;
  in.read_header(false);
  spotdnn::detail::require_csv_column(fn, source, in.has_column(kMemory), "memory_mb", kServerlessTraceHeader);
  const bool has_batch = in.has_column(kBatch), has_train = in.has_column(kTrain);
  const bool has_transform = in.has_column(kTransform);
  if (!has_train && !has_transform) {
    fail(fn, source + ":1: header", quoted("train_time_s"),
         "missing column: give train_time_s, transform_time_s or both (expected the header " +
             std::string(kServerlessTraceHeader) + ")");
  }
  if (has_train) spotdnn::detail::require_csv_column(fn, source, has_batch, "batch", kServerlessTraceHeader);
  while (in.read_row()) {
    const std::size_t line = in.line();
    const std::string_view batch = in.cell(kBatch), memory = in.cell(kMemory), train = in.cell(kTrain),
                           transform = in.cell(kTransform);
    if (memory == "memory_mb") fail(fn, csv_where(source, line), "<row>", "the header row is repeated (concatenated files?)");
    if (trace.samples.size() >= serverless::kMaxServerlessTraceSamples) {
      fail(fn, csv_where(source, line), "<row>",
           "more than " + std::to_string(serverless::kMaxServerlessTraceSamples) + " rows: the trace is too large");
    }
    const auto present = [](bool column, std::string_view cell) { return column && !cell.empty(); };
    const auto positive = [&](std::string_view column, std::string_view cell) {
      const double value = parse_csv_non_negative(fn, source, line, column, cell);
      if (!(value > 0)) fail(fn, csv_where(source, line) + ": " + std::string(column), quoted(cell), "must be greater than zero");
      return value;
    };
    serverless::ServerlessSample s;
    s.line = line;
    s.memory_mb = parse_csv_non_negative(fn, source, line, "memory_mb", memory);
    if (s.memory_mb < 1 || s.memory_mb > serverless::kLambdaMaxTraceMemoryMb) {
      fail(fn, csv_where(source, line) + ": memory_mb", quoted(memory), "must be in 1..10240 MB (Lambda's memory range)");
    }
    if (present(has_train, train)) s.train_time_s = positive("train_time_s", train);
    if (present(has_transform, transform)) s.transform_time_s = positive("transform_time_s", transform);
    if (!s.train_time_s && !s.transform_time_s) {
      fail(fn, csv_where(source, line) + ": " + (has_train ? "train_time_s" : "transform_time_s"), "\"\"",
           "the row has no time: give train_time_s, transform_time_s or both");
    }
    if (present(has_batch, batch) || s.train_time_s) {
      s.batch = parse_csv_non_negative(fn, source, line, "batch", batch);
      if (*s.batch < 1 || *s.batch > serverless::kMaxTraceBatch || *s.batch != std::floor(*s.batch)) {
        fail(fn, csv_where(source, line) + ": batch", quoted(batch), "must be a whole number of samples from 1 to 100000000");
      }
    }
    if (s.memory_mb != std::floor(s.memory_mb)) {
      fail(fn, csv_where(source, line) + ": memory_mb", quoted(memory), "must be a whole number of MB");
    }
    trace.samples.push_back(s);
  }
  if (trace.samples.empty()) fail(fn, source, "<no rows>", "the file has a header but no data rows");
  serverless::validate_serverless_trace(trace);  // every check above; a second line of defence
  return trace;
}

}  // namespace spotdnn::detail

namespace spotdnn::io {

/// Reads a serverless trace file. Throws spotdnn::invalid_argument naming FILE:LINE, the column, the cell and why.
[[nodiscard]] inline serverless::ServerlessTrace read_serverless_trace(const std::string& path) {
  std::uintmax_t bytes = 0;
  const auto file = spotdnn::detail::open_trace_file(path, "read_serverless_trace", bytes);
  return spotdnn::detail::read_serverless_trace_from(*file);
}

/// Parses serverless-trace CSV text; `source` names it in messages (FILE:LINE).
[[nodiscard]] inline serverless::ServerlessTrace parse_serverless_trace(std::string_view text, const std::string& source = "<text>") {
  text = spotdnn::detail::trace_text(text, "parse_serverless_trace", source);
  spotdnn::detail::CsvInput input(text, "parse_serverless_trace", source);
  return spotdnn::detail::read_serverless_trace_from(input);
}

}  // namespace spotdnn::io
