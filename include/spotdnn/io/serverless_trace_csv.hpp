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

template <typename... Source>
serverless::ServerlessTrace read_serverless_trace_from(std::string_view fn, const std::string& source, Source&&... input) {
  using spotdnn::detail::CsvReader;
  using spotdnn::detail::csv_where;
  using spotdnn::detail::fail;
  using spotdnn::detail::parse_csv_non_negative;
  using spotdnn::detail::quoted;
  std::unique_ptr<CsvReader<4>> reader;
  try {
    reader = std::make_unique<CsvReader<4>>(std::forward<Source>(input)...);
  } catch (const ::io::error::base& e) {
    fail(fn, source, "<file>", std::string("cannot read the file: ") + e.what());
  }
  serverless::ServerlessTrace trace;
  trace.source = source;
  spotdnn::detail::with_csv_errors(fn, source, kServerlessTraceHeader, *reader, [&](CsvReader<4>& in) {
    in.read_header(::io::ignore_missing_column, "batch", "memory_mb", "train_time_s", "transform_time_s");
    spotdnn::detail::require_csv_column(fn, source, in.has_column("memory_mb"), "memory_mb", kServerlessTraceHeader);
    const bool has_batch = in.has_column("batch"), has_train = in.has_column("train_time_s");
    const bool has_transform = in.has_column("transform_time_s");
    if (!has_train && !has_transform) {
      fail(fn, source + ":1: header", quoted("train_time_s"),
           "missing column: give train_time_s, transform_time_s or both (expected the header " +
               std::string(kServerlessTraceHeader) + ")");
    }
    if (has_train) spotdnn::detail::require_csv_column(fn, source, has_batch, "batch", kServerlessTraceHeader);
    char *batch = nullptr, *memory = nullptr, *train = nullptr, *transform = nullptr;
    while (in.read_row(batch, memory, train, transform)) {
      const std::size_t line = in.get_file_line();
      if (spotdnn::detail::cell_is(memory, "memory_mb")) {
        fail(fn, csv_where(source, line), "<row>", "the header row is repeated (concatenated files?)");
      }
      if (trace.samples.size() >= serverless::kMaxServerlessTraceSamples) {
        fail(fn, csv_where(source, line), "<row>",
             "more than " + std::to_string(serverless::kMaxServerlessTraceSamples) + " rows: the trace is too large");
      }
      const auto present = [](bool column, const char* cell) { return column && cell != nullptr && *cell != '\0'; };
      const auto positive = [&](std::string_view column, const char* cell) {
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
  });
  if (trace.samples.empty()) fail(fn, source, "<no rows>", "the file has a header but no data rows");
  serverless::validate_serverless_trace(trace);  // every check above; a second line of defence
  return trace;
}

}  // namespace spotdnn::detail

namespace spotdnn::io {

/// Reads a serverless trace file. Throws spotdnn::invalid_argument naming FILE:LINE, the column, the cell and why.
[[nodiscard]] inline serverless::ServerlessTrace read_serverless_trace(const std::string& path) {
  std::uintmax_t bytes = 0;
  auto file = spotdnn::detail::open_trace_file(path, "read_serverless_trace", bytes);
  return spotdnn::detail::read_serverless_trace_from("read_serverless_trace", path, path, std::move(file));
}

/// Parses serverless-trace CSV text; `source` names it in messages (FILE:LINE).
[[nodiscard]] inline serverless::ServerlessTrace parse_serverless_trace(std::string_view text, const std::string& source = "<text>") {
  text = spotdnn::detail::trace_text(text, "parse_serverless_trace", source);
  return spotdnn::detail::read_serverless_trace_from("parse_serverless_trace", source, source, text.data(), text.data() + text.size());
}

}  // namespace spotdnn::io
