#pragma once
// SPDX-License-Identifier: MIT
/// @file io/trace_source.hpp What a trace reader is told about one trace file (its kind, pool, the count
/// requested, its name and date), and the checks every trace reader shares (docs/traces.md).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/revocation/trace.hpp"

namespace spotdnn::io {

/// What a file does not say about itself: which form it has, which pool it measured, how many instances
/// each tick asked for (`counts` only), a name for messages and the date of its time 0.
struct TraceSource {
  TraceKind kind = TraceKind::lifetimes;
  PoolId pool;                ///< instance type and zone (both required)
  int requested = 1;          ///< N of a `counts` trace (1..kMaxTraceRequested); 1 for every other kind
  std::string name;           ///< the file, for messages and PoolTrace::source (default "<text>")
  std::string observed_from;  ///< ISO date of time 0 ("2023-04-19") or empty
};

}  // namespace spotdnn::io

// Helpers live in spotdnn::detail (as io/csv.hpp's do): a spotdnn::io::detail namespace would capture the
// unqualified spotdnn::detail:: of io headers included after this one.
namespace spotdnn::detail {

/// The name a trace is shown by: its given name, or "<text>".
inline std::string trace_name(const io::TraceSource& source) { return source.name.empty() ? "<text>" : source.name; }

/// Checks the parts of a TraceSource every reader needs: a printable type and zone, `requested` in range
/// (and 1 unless the kind is `counts`), a printable name.
inline void check_trace_source(std::string_view fn, const io::TraceSource& source) {
  const std::string name = trace_name(source);
  require_printable_name(fn, "source.name", name);
  if (source.pool.type.empty()) {
    fail(fn, name + ": type", "\"\"", "the instance type is not known: give --type (or a file named <zone>_<gpu>_<n>.json)");
  }
  if (source.pool.zone.empty()) {
    fail(fn, name + ": zone", "\"\"", "the zone is not known: give --zone (or a file named <zone>_<gpu>_<n>.json)");
  }
  require_printable_name(fn, name + ": type", source.pool.type);
  require_printable_name(fn, name + ": zone", source.pool.zone);
  require_printable_name(fn, name + ": observed_from", source.observed_from);
  if (source.kind == TraceKind::counts) {
    if (source.requested < 1 || source.requested > kMaxTraceRequested) {
      fail(fn, name + ": requested", std::to_string(source.requested),
           "a counts trace needs the number of instances requested, 1 to " + std::to_string(kMaxTraceRequested));
    }
  } else if (source.requested != 1) {
    fail(fn, name + ": requested", std::to_string(source.requested),
         "--requested applies to counts traces only, not to " + std::string(to_string(source.kind)) + " traces");
  }
}

/// A PoolTrace with the fields a TraceSource gives filled in.
inline PoolTrace start_pool_trace(const io::TraceSource& source) {
  PoolTrace trace;
  trace.pool = source.pool;
  trace.kind = source.kind;
  trace.source = trace_name(source);
  trace.observed_from = source.observed_from;
  return trace;
}

/// Throws when one more interval would pass kMaxTraceIntervals.
inline void check_interval_count(std::string_view fn, std::string_view where, std::size_t count) {
  if (count >= kMaxTraceIntervals) {
    fail(fn, where, std::to_string(count + 1) + " intervals",
         "a trace may hold at most " + std::to_string(kMaxTraceIntervals) + " up intervals");
  }
}

/// Trace text without a leading UTF-8 byte-order mark; refused when it holds a NUL byte (naming its line).
inline std::string_view trace_csv_text(std::string_view text, std::string_view fn, std::string_view name) {
  if (text.data() == nullptr) return std::string_view("", 0);
  if (text.substr(0, io::kUtf8ByteOrderMark.size()) == io::kUtf8ByteOrderMark) text.remove_prefix(io::kUtf8ByteOrderMark.size());
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const auto line = std::size_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(nul), '\n')) + 1;
    fail(fn, std::string(name) + ":" + std::to_string(line), "<NUL byte>", "a text file must not contain NUL bytes");
  }
  return text;
}

/// The lines of CSV text one by one: LF or CRLF endings, numbered from 1; lines holding only spaces, tabs
/// or a CR are skipped (they are not rows).
class TraceCsvLines {
 public:
  explicit TraceCsvLines(std::string_view text) : text_(text) {}

  /// The next non-blank line (without its line ending) and its number; false at the end.
  bool next(std::string_view& line, std::size_t& number) {
    while (position_ < text_.size()) {
      const std::size_t end = std::min(text_.find('\n', position_), text_.size());
      std::string_view candidate = text_.substr(position_, end - position_);
      position_ = end + 1;
      ++number_;
      if (!candidate.empty() && candidate.back() == '\r') candidate.remove_suffix(1);
      if (candidate.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      line = candidate;
      number = number_;
      return true;
    }
    return false;
  }

 private:
  std::string_view text_;
  std::size_t position_ = 0;
  std::size_t number_ = 0;
};

/// Splits one CSV line into exactly `cells.size()` cells: cells are separated by commas, spaces and tabs
/// around a cell are trimmed, and a cell may be double-quoted ("" inside quotes is one quote; a quoted cell
/// may hold commas). Throws naming `where` (FILE:LINE) when the line has too few or too many cells or a
/// quote is not closed; `expected` is the header shown in the message.
inline void split_trace_csv_line(std::string_view fn, const std::string& where, std::string_view line,
                                 std::vector<std::string>& cells, std::string_view expected) {
  const std::size_t want = cells.size();
  std::size_t count = 0;
  std::size_t i = 0;
  const auto skip_blanks = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  for (;;) {
    if (count == want) {
      fail(fn, where, spotdnn::detail::quoted(line), "too many cells: expected " + std::string(expected));
    }
    std::string& cell = cells[count++];
    cell.clear();
    skip_blanks();
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) fail(fn, where, spotdnn::detail::quoted(line), "a quoted cell is not closed");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        cell.push_back(line[i++]);
      }
      skip_blanks();
      if (i < line.size() && line[i] != ',') {
        fail(fn, where, spotdnn::detail::quoted(line), "text after a quoted cell: expected a comma");
      }
    } else {
      const std::size_t comma = std::min(line.find(',', i), line.size());
      std::string_view raw = line.substr(i, comma - i);
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
      cell.assign(raw);
      i = comma;
    }
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  if (count != want) fail(fn, where, spotdnn::detail::quoted(line), "too few cells: expected " + std::string(expected));
}

/// A whole number of milliseconds: digits only, at most kMaxTraceSpanS seconds.
inline std::int64_t parse_trace_milliseconds(std::string_view fn, const std::string& field, std::string_view cell) {
  if (cell.empty()) fail(fn, field, "\"\"", "the cell is empty: expected a whole number of milliseconds");
  if (cell.find_first_not_of("0123456789") != std::string_view::npos) {
    fail(fn, field, spotdnn::detail::quoted(cell), "expected a whole number of milliseconds (digits only, not negative)");
  }
  const auto max_ms = std::int64_t(kMaxTraceSpanS) * 1000;
  std::int64_t value = 0;
  const auto parsed = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (parsed.ec != std::errc() || value > max_ms) {
    fail(fn, field, spotdnn::detail::quoted(cell), "must be at most " + std::to_string(max_ms) + " ms (about 31 years)");
  }
  return value;
}

/// A finite, non-negative number of seconds (decimals and exponents allowed; no sign, NaN or infinity).
inline double parse_trace_seconds(std::string_view fn, const std::string& field, std::string_view cell) {
  if (cell.empty()) fail(fn, field, "\"\"", "the cell is empty: expected a time in seconds");
  double value = 0;
  const auto parsed = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (parsed.ec == std::errc::result_out_of_range) fail(fn, field, spotdnn::detail::quoted(cell), "the number is out of range");
  if (parsed.ec != std::errc() || parsed.ptr != cell.data() + cell.size()) {
    fail(fn, field, spotdnn::detail::quoted(cell), "expected a time in seconds (a number such as 12 or 1700000000.25)");
  }
  if (!std::isfinite(value)) fail(fn, field, spotdnn::detail::quoted(cell), "must be a finite number");
  if (value < 0 || std::signbit(value)) fail(fn, field, spotdnn::detail::quoted(cell), "must not be negative");
  return value;
}

/// The smallest positive difference between consecutive distinct times of a sorted list, or `fallback`.
inline double smallest_step(const std::vector<double>& sorted_distinct_times, double fallback) {
  double step = 0;
  for (std::size_t i = 1; i < sorted_distinct_times.size(); ++i) {
    const double d = sorted_distinct_times[i] - sorted_distinct_times[i - 1];
    if (d > 0 && (step == 0 || d < step)) step = d;
  }
  return step > 0 ? step : fallback;
}

}  // namespace spotdnn::detail
