#pragma once
// SPDX-License-Identifier: MIT
/// @file io/csv.hpp Reads loss and throughput traces (docs/formats.md) with fast-cpp-csv-parser; every bad
/// row is an error naming FILE:LINE and the reason, nothing is skipped silently.
///
/// Loss trace header: `run,workers,weighted_batch,iteration,loss` and optionally `convergence_coefficient`,
/// in any order. Throughput trace header: `cluster,iterations_per_s`, cluster cells `TYPE=N;TYPE=N`.
/// Cells may be double-quoted; spaces and tabs around cells are trimmed; blank lines are not rows.
/// Files: regular files only, at most kMaxCsvFileBytes; a UTF-8 byte-order mark is skipped; run names
/// must be valid UTF-8.
/// Rejected with FILE:LINE: an empty file, a header without rows, a missing, unknown or repeated column,
/// a header row repeated further down (concatenated files), too few or too many cells, a non-numeric
/// cell, NaN or infinity, a negative value and (via validate_loss_trace) a run that changes cluster.

#include <limits>  // libfccp/csv.h uses std::numeric_limits without including <limits>

#define CSV_IO_NO_THREAD
#if defined(__GNUC__) && !defined(__clang__)
// fast-cpp-csv-parser copies file names with strncpy into fixed buffers (it terminates them itself);
// g++ 12 flags that when the code is inlined into ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop
#else
#include <libfccp/csv.h>
#endif

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <new>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/errors.hpp"
#include "spotdnn/fit/traces.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/limits.hpp"

namespace spotdnn {
namespace detail {

using CsvTrim = ::io::trim_chars<' ', '\t', '\r'>;
using CsvQuote = ::io::double_quote_escape<',', '"'>;
template <unsigned Columns>
using CsvReader = ::io::CSVReader<Columns, CsvTrim, CsvQuote, ::io::throw_on_overflow, ::io::empty_line_comment>;

inline std::string csv_where(std::string_view source, std::size_t line) {
  return std::string(source) + ":" + std::to_string(line);
}

/// Parses a whole cell as a finite double; throws naming FILE:LINE, the column and the cell.
/// Parses a whole cell as a finite, non-negative double; throws naming FILE:LINE, the column and the cell.
/// (The location text is built only on error: traces can have 10⁵ rows.)
inline double parse_csv_non_negative(std::string_view fn, std::string_view source, std::size_t line,
                                     std::string_view column, const char* cell) {
  const std::string_view text = cell == nullptr ? std::string_view() : std::string_view(cell);
  auto bad = [&](std::string_view value, std::string_view why) {
    fail(fn, csv_where(source, line) + ": " + std::string(column), value, why);
  };
  if (text.empty()) bad("\"\"", "the cell is empty");
  double value = 0;
  const char* begin = text.data();
  if (*begin == '+') ++begin;  // from_chars rejects an explicit plus sign
  const auto parsed = std::from_chars(begin, text.data() + text.size(), value);
  if (parsed.ec == std::errc::result_out_of_range) bad(quoted(text), "the number is out of range");
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) bad(quoted(text), "not a number");
  if (std::isnan(value)) bad(quoted(text), "NaN is not a measurement");
  if (std::isinf(value)) bad(quoted(text), "infinity is not a measurement");
  if (value < 0) bad(quoted(text), "must not be negative");
  return value;
}

/// Runs `body(reader)` and turns the parser's own errors into spotdnn::invalid_argument with FILE:LINE.
template <typename Reader, typename Body>
void with_csv_errors(std::string_view fn, std::string_view source, std::string_view expected_header, Reader& reader,
                     Body&& body) {
  const std::string header_help = "expected the header " + std::string(expected_header);
  try {
    body(reader);
  } catch (const ::io::error::header_missing&) {
    fail(fn, source, "<empty>", "the file is empty: " + header_help);
  } catch (const ::io::error::extra_column_in_header& e) {
    fail(fn, std::string(source) + ":1: header", quoted(e.column_name), "unknown column: " + header_help);
  } catch (const ::io::error::duplicated_column_in_header& e) {
    fail(fn, std::string(source) + ":1: header", quoted(e.column_name), "duplicate column in the header");
  } catch (const ::io::error::too_few_columns& e) {
    fail(fn, csv_where(source, std::size_t(e.file_line)), "<row>", "too few cells: " + header_help);
  } catch (const ::io::error::too_many_columns& e) {
    fail(fn, csv_where(source, std::size_t(e.file_line)), "<row>", "too many cells: " + header_help);
  } catch (const ::io::error::escaped_string_not_closed& e) {
    fail(fn, csv_where(source, std::size_t(e.file_line)), "<row>", "a quoted cell is not closed");
  } catch (const ::io::error::line_length_limit_exceeded& e) {
    fail(fn, csv_where(source, std::size_t(e.file_line)), "<row>", "the line is too long");
  } catch (const ::io::error::base& e) {
    fail(fn, source, "<file>", e.what());
  }
}

inline void require_csv_column(std::string_view fn, std::string_view source, bool present, std::string_view column,
                               std::string_view expected_header) {
  if (!present) {
    fail(fn, std::string(source) + ":1: header", quoted(column),
         "missing column: expected the header " + std::string(expected_header));
  }
}

inline bool cell_is(const char* cell, std::string_view name) { return cell != nullptr && std::string_view(cell) == name; }

inline constexpr std::string_view kLossTraceHeader =
    "run,workers,weighted_batch,iteration,loss[,convergence_coefficient]";
inline constexpr std::string_view kThroughputTraceHeader = "cluster,iterations_per_s";

/// At most one row per 10 bytes ("a,1,1,0,0\n"): reserving that much address space up front avoids
/// copying 10⁵ samples through every doubling of the vector (only the touched part is ever mapped).
inline std::size_t csv_row_bound(std::uintmax_t bytes) { return std::size_t(std::min<std::uintmax_t>(bytes / 10 + 1, 1u << 24)); }

/// Reads the rows of a loss-trace CSV, calling row(run, workers, weighted_batch, iteration, loss, r, line)
/// for each (the cells are parsed and checked; `run` points into the parser's buffer). Returns the rows read.
template <typename Row, typename... Source>
std::size_t read_loss_rows(std::string_view fn, const std::string& source, bool& has_r, Row&& row, Source&&... input) {
  std::unique_ptr<CsvReader<6>> reader;
  try {
    reader = std::make_unique<CsvReader<6>>(std::forward<Source>(input)...);
  } catch (const ::io::error::base& e) {
    fail(fn, source, "<file>", std::string("cannot read the file: ") + e.what());
  }
  std::size_t rows = 0;
  with_csv_errors(fn, source, kLossTraceHeader, *reader, [&](CsvReader<6>& in) {
    in.read_header(::io::ignore_missing_column, "run", "workers", "weighted_batch", "iteration", "loss",
                   "convergence_coefficient");
    for (const char* column : {"run", "workers", "weighted_batch", "iteration", "loss"}) {
      require_csv_column(fn, source, in.has_column(column), column, kLossTraceHeader);
    }
    has_r = in.has_column("convergence_coefficient");
    char *run = nullptr, *workers = nullptr, *batch = nullptr, *iteration = nullptr, *loss = nullptr, *r = nullptr;
    while (in.read_row(run, workers, batch, iteration, loss, r)) {
      const std::size_t line = in.get_file_line();
      if (cell_is(run, "run") && cell_is(workers, "workers") && cell_is(loss, "loss")) {
        fail(fn, csv_where(source, line), "<row>", "the header row is repeated (concatenated files?)");
      }
      const std::string_view name = run == nullptr ? std::string_view() : std::string_view(run);
      if (name.empty()) fail(fn, csv_where(source, line) + ": run", "\"\"", "the cell is empty");
      if (!is_valid_utf8(name)) fail(fn, csv_where(source, line) + ": run", quoted(name), "the run name is not valid UTF-8");
      if (!is_printable_utf8(name)) {
        fail(fn, csv_where(source, line) + ": run", quoted(name), "the run name must not contain control characters");
      }
      const double n = parse_csv_non_negative(fn, source, line, "workers", workers);
      if (n > double(kMaxClusterWorkers)) {
        fail(fn, csv_where(source, line) + ": workers", quoted(workers), "must be at most " + std::to_string(kMaxClusterWorkers));
      }
      const double b = parse_csv_non_negative(fn, source, line, "weighted_batch", batch);
      const double j = parse_csv_non_negative(fn, source, line, "iteration", iteration);
      const double y = parse_csv_non_negative(fn, source, line, "loss", loss);
      std::optional<double> coefficient;
      if (has_r) coefficient = parse_csv_non_negative(fn, source, line, "convergence_coefficient", r);
      row(name, n, b, j, y, coefficient, line);
      ++rows;
    }
  });
  if (rows == 0) fail(fn, source, "<no rows>", "the file has a header but no data rows");
  return rows;
}

template <typename... Source>
LossTrace read_loss_trace_from(std::string_view fn, const std::string& source, std::size_t row_bound, Source&&... input) {
  LossTrace trace;
  trace.source = source;
  trace.samples.reserve(row_bound);
  bool has_r = false;
  read_loss_rows(
      fn, source, has_r,
      [&](std::string_view run, double workers, double batch, double iteration, double loss, std::optional<double> r,
          std::size_t line) {
        LossSample s;
        s.line = line;
        s.run = std::string(run);
        s.workers = workers;
        s.weighted_batch = batch;
        s.iteration = iteration;
        s.loss = loss;
        s.convergence_coefficient = r;
        trace.samples.push_back(std::move(s));
      },
      std::forward<Source>(input)...);
  validate_loss_trace(trace);  // runs that change cluster, R given for some rows only: names FILE:LINE
  return trace;
}

/// The rows straight into columns (24 bytes a row, no per-row string), checked as validate_loss_trace does
/// while they arrive.
template <typename... Source>
LossTable read_loss_table_from(std::string_view fn, const std::string& source, std::size_t row_bound, Source&&... input) {
  LossTable table;
  table.source = source;
  std::optional<LossTableBuilder> builder;
  bool has_r = false;
  read_loss_rows(
      fn, source, has_r,
      [&](std::string_view run, double workers, double batch, double iteration, double loss, std::optional<double> r,
          std::size_t line) {
        if (!builder) {
          builder.emplace(table, has_r);
          builder->reserve(row_bound);
        }
        builder->add(run, workers, batch, iteration, loss, r, line);
      },
      std::forward<Source>(input)...);
  return table;
}

template <typename... Source>
ThroughputTrace read_throughput_trace_from(std::string_view fn, const std::string& source, Source&&... input) {
  ThroughputTrace trace;
  trace.source = source;
  std::unique_ptr<CsvReader<2>> reader;
  try {
    reader = std::make_unique<CsvReader<2>>(std::forward<Source>(input)...);
  } catch (const ::io::error::base& e) {
    fail(fn, source, "<file>", std::string("cannot read the file: ") + e.what());
  }
  with_csv_errors(fn, source, kThroughputTraceHeader, *reader, [&](CsvReader<2>& in) {
    in.read_header(::io::ignore_no_column, "cluster", "iterations_per_s");
    char *cluster = nullptr, *rate = nullptr;
    while (in.read_row(cluster, rate)) {
      const std::size_t line = in.get_file_line();
      const std::string where = csv_where(source, line);
      if (cell_is(cluster, "cluster") && cell_is(rate, "iterations_per_s")) {
        fail(fn, where, "<row>", "the header row is repeated (concatenated files?)");
      }
      ThroughputSample s;
      s.line = line;
      try {
        s.cluster = Cluster::parse(cluster == nullptr ? std::string_view() : std::string_view(cluster), ';');
      } catch (const spotdnn::invalid_argument& e) {
        fail(fn, where + ": cluster", quoted(cluster == nullptr ? "" : cluster), e.what());
      }
      if (s.cluster.empty()) fail(fn, where + ": cluster", quoted(cluster), "the cluster has no workers");
      s.iterations_per_s = parse_csv_non_negative(fn, source, line, "iterations_per_s", rate);
      if (!(s.iterations_per_s > 0)) fail(fn, where + ": iterations_per_s", quoted(rate), "must be greater than zero");
      trace.samples.push_back(std::move(s));
    }
  });
  if (trace.samples.empty()) fail(fn, source, "<no rows>", "the file has a header but no data rows");
  return trace;
}

/// Throws naming `source` and the line when a text file holds a NUL byte: the CSV parser works on C strings
/// and would silently cut the cell there.
[[noreturn]] inline void fail_nul_byte(std::string_view fn, std::string_view source, std::size_t line) {
  fail(fn, csv_where(source, line), "<NUL byte>", "a text file must not contain NUL bytes");
}

/// The CSV parser's byte source for a trace file: reads the FILE (owned) and refuses NUL bytes.
class TraceFileSource : public ::io::ByteSourceBase {
 public:
  TraceFileSource(std::FILE* file, std::string_view fn, std::string source) : file_(file), fn_(fn), source_(std::move(source)) {
    std::setvbuf(file_, nullptr, _IONBF, 0);  // the parser buffers
  }
  TraceFileSource(const TraceFileSource&) = delete;
  TraceFileSource& operator=(const TraceFileSource&) = delete;
  ~TraceFileSource() override { std::fclose(file_); }

  int read(char* buffer, int size) override {
    const std::size_t got = std::fread(buffer, 1, std::size_t(size), file_);
    if (const void* nul = std::memchr(buffer, 0, got)) {
      const auto before = std::size_t(static_cast<const char*>(nul) - buffer);
      fail_nul_byte(fn_, source_, lines_ + std::size_t(std::count(buffer, buffer + before, '\n')) + 1);
    }
    lines_ += std::size_t(std::count(buffer, buffer + got, '\n'));
    return int(got);
  }

 private:
  std::FILE* file_;
  std::string_view fn_;
  std::string source_;
  std::size_t lines_ = 0;  ///< newlines before the current block
};

/// Opens a trace file under the reader limits (a regular file of at most kMaxCsvFileBytes) for the CSV
/// parser, past a UTF-8 byte-order mark if there is one, refusing NUL bytes.
inline std::unique_ptr<::io::ByteSourceBase> open_trace_file(const std::string& path, std::string_view fn,
                                                             std::uintmax_t& size_bytes) {
  const io::CheckedFile file = io::open_checked_file(path, kMaxCsvFileBytes, fn);
  std::FILE* stream = ::fdopen(file.fd, "rb");
  if (stream == nullptr) {
    ::close(file.fd);
    throw std::bad_alloc();
  }
  std::unique_ptr<::io::ByteSourceBase> source;
  try {
    source = std::make_unique<TraceFileSource>(stream, fn, path);
  } catch (...) {
    std::fclose(stream);
    throw;
  }
  char head[3] = {};
  const std::size_t got = std::fread(head, 1, sizeof head, stream);
  if (got != sizeof head || std::string_view(head, sizeof head) != io::kUtf8ByteOrderMark) std::rewind(stream);
  size_bytes = file.size_bytes;
  return source;
}

/// Trace text ready for the parser: without a leading UTF-8 byte-order mark, never a null pointer (the
/// parser copies from it), and refused when it holds a NUL byte.
inline std::string_view trace_text(std::string_view text, std::string_view fn, std::string_view source) {
  if (text.data() == nullptr) return std::string_view("", 0);
  if (text.substr(0, io::kUtf8ByteOrderMark.size()) == io::kUtf8ByteOrderMark) text.remove_prefix(io::kUtf8ByteOrderMark.size());
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    fail_nul_byte(fn, source, std::size_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(nul), '\n')) + 1);
  }
  return text;
}

}  // namespace detail

/// Reads a loss trace file (docs/formats.md). Throws spotdnn::invalid_argument naming FILE:LINE and the reason.
[[nodiscard]] inline LossTrace read_loss_trace(const std::string& path) {
  std::uintmax_t bytes = 0;
  auto file = detail::open_trace_file(path, "read_loss_trace", bytes);
  return detail::read_loss_trace_from("read_loss_trace", path, detail::csv_row_bound(bytes), path, std::move(file));
}

/// Parses loss-trace CSV text; `source` names it in messages (FILE:LINE).
[[nodiscard]] inline LossTrace parse_loss_trace(std::string_view text, const std::string& source = "<text>") {
  text = detail::trace_text(text, "parse_loss_trace", source);
  return detail::read_loss_trace_from("parse_loss_trace", source, detail::csv_row_bound(text.size()), source, text.data(),
                                      text.data() + text.size());
}

/// Reads a loss trace file (docs/formats.md) straight into columns: what `spotdnn fit loss` uses for long traces.
/// Same checks and messages as read_loss_trace.
[[nodiscard]] inline LossTable read_loss_table(const std::string& path) {
  std::uintmax_t bytes = 0;
  auto file = detail::open_trace_file(path, "read_loss_trace", bytes);
  return detail::read_loss_table_from("read_loss_trace", path, detail::csv_row_bound(bytes), path, std::move(file));
}

/// Parses loss-trace CSV text into columns; `source` names it in messages (FILE:LINE).
[[nodiscard]] inline LossTable parse_loss_table(std::string_view text, const std::string& source = "<text>") {
  text = detail::trace_text(text, "parse_loss_trace", source);
  return detail::read_loss_table_from("parse_loss_trace", source, detail::csv_row_bound(text.size()), source, text.data(),
                                      text.data() + text.size());
}

/// Reads a throughput trace file (docs/formats.md). Throws spotdnn::invalid_argument naming FILE:LINE and the reason.
/// Instance types are checked against the workload and catalog by fit_throughput (with FILE:LINE).
[[nodiscard]] inline ThroughputTrace read_throughput_trace(const std::string& path) {
  std::uintmax_t bytes = 0;
  auto file = detail::open_trace_file(path, "read_throughput_trace", bytes);
  return detail::read_throughput_trace_from("read_throughput_trace", path, path, std::move(file));
}

/// Parses throughput-trace CSV text; `source` names it in messages.
[[nodiscard]] inline ThroughputTrace parse_throughput_trace(std::string_view text,
                                                            const std::string& source = "<text>") {
  text = detail::trace_text(text, "parse_throughput_trace", source);
  return detail::read_throughput_trace_from("parse_throughput_trace", source, source, text.data(),
                                            text.data() + text.size());
}

}  // namespace spotdnn
