#pragma once
// SPDX-License-Identifier: MIT
/// @file io/trace_series.hpp Reads a JSON trace series (`lifetimes`, `availability` or `counts`) into a
/// PoolTrace (docs/traces.md).
///
/// Format: `{"metadata": {"gap_seconds": g}, "data": [v0, v1, ...]}`, one value per tick of g seconds from
/// time 0, plus an optional `prices` array of one number per tick (the spot price the Can't Be Late
/// preemption traces record; checked, not used). Rules: `metadata` may hold other keys (ignored), the top
/// level no other key; g finite, > 0 and at most kMaxTraceTickS; `data` 1..kMaxTraceTicks whole numbers
/// (1.0 counts as 1), 0 or 1 for `lifetimes` and `availability`, 0..N for `counts` (N = requested); the
/// span (ticks × g) at most kMaxTraceSpanS. Files: regular, at most kMaxTraceFileBytes, JSON under
/// io::parse_json's limits (nesting, duplicate keys, UTF-8, a byte-order mark accepted).
///
/// The PoolTrace (revocation/trace.hpp): slot i (0 ≤ i < N; N = 1 unless `counts`) is up at tick t while
/// v_t > i, so a run of ticks [a, b) gives the interval [a·g, b·g), `preempted` when b < ticks (the run ended
/// before the data did), `age_known` when a > 0 (it was not already up at the first tick). tick_s = g,
/// span_s = ticks·g, slots = N, slotted, clock_offset_s = 0.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/io/trace_source.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/revocation/trace.hpp"

namespace spotdnn::detail {

/// The value at tick `index` of `data` as a whole number in 0..`maximum`; throws naming the file, the index
/// and the value. `kind_hint` says what the values mean.
inline int series_value(std::string_view fn, const std::string& name, const io::Json& value, std::size_t index,
                        int maximum, std::string_view kind_hint) {
  const auto where = [&] { return name + ": data[" + std::to_string(index) + "]"; };
  if (!value.is_number()) {
    fail(fn, where(), io::JsonObjectReader::excerpt(value), "expected a whole number (" + std::string(kind_hint) + ")");
  }
  if (value.is_number_unsigned()) {
    const auto v = value.get<io::Json::number_unsigned_t>();
    if (v > io::Json::number_unsigned_t(maximum)) {
      fail(fn, where(), std::to_string(v), std::string(kind_hint));
    }
    return int(v);
  }
  if (value.is_number_integer()) {
    const auto v = value.get<io::Json::number_integer_t>();
    if (v < 0 || v > maximum) fail(fn, where(), std::to_string(v), std::string(kind_hint));
    return int(v);
  }
  const double d = value.get<double>();
  if (!std::isfinite(d)) fail(fn, where(), d, "must be a finite number (" + std::string(kind_hint) + ")");
  if (d != std::floor(d)) fail(fn, where(), d, "expected a whole number (" + std::string(kind_hint) + ")");
  if (d < 0 || d > double(maximum)) fail(fn, where(), d, std::string(kind_hint));
  return int(d);
}

/// The up intervals of a series of values 0..slots (already checked), per revocation/trace.hpp: slot i is
/// up while the value exceeds i. Ordered by start, ties by slot. `intervals`: how many there will be, if known.
inline std::vector<UpInterval> series_intervals(std::string_view fn, const std::string& name,
                                                const std::vector<int>& values, double tick_s, int slots,
                                                std::size_t intervals = 0) {
  std::vector<UpInterval> up;
  up.reserve(intervals);
  std::vector<std::size_t> open(std::size_t(slots), 0);  // index into `up` of each slot's open interval
  const std::size_t ticks = values.size();
  int previous = 0;
  for (std::size_t t = 0; t <= ticks; ++t) {
    const int value = t < ticks ? values[t] : 0;
    const double time_s = double(t) * tick_s;
    if (value > previous) {  // slots previous..value-1 come up at tick t
      for (int slot = previous; slot < value; ++slot) {
        check_interval_count(fn, name + ": data[" + std::to_string(t) + "]", up.size());
        UpInterval interval;
        interval.start_s = time_s;
        interval.end_s = time_s;
        interval.age_known = t > 0;
        interval.slot = slot;
        open[std::size_t(slot)] = up.size();
        up.push_back(interval);
      }
    } else if (value < previous) {  // slots value..previous-1 go down at tick t (or the data ends)
      for (int slot = value; slot < previous; ++slot) {
        UpInterval& interval = up[open[std::size_t(slot)]];
        interval.end_s = time_s;
        interval.preempted = t < ticks;
      }
    }
    previous = value;
  }
  return up;  // opened in order of (start tick, slot): already ordered
}

inline PoolTrace series_trace_from_json(std::string_view fn, const io::Json& json, const io::TraceSource& source) {
  check_trace_source(fn, source);
  const std::string name = trace_name(source);
  if (source.kind == TraceKind::events) {
    fail(fn, name + ": kind", spotdnn::detail::quoted("events"), "events traces are CSV files (ms,add|remove,node), not JSON series");
  }
  if (!json.is_object()) {
    fail(fn, name, io::JsonObjectReader::excerpt(json), R"(expected a JSON object {"metadata": {"gap_seconds": g}, "data": [...]})");
  }
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (it.key() != "metadata" && it.key() != "data" && it.key() != "prices") {
      fail(fn, name + ": " + it.key(), io::JsonObjectReader::excerpt(it.value()), "unknown key (expected: metadata, data, prices)");
    }
  }
  const auto required = [&](const char* key) -> const io::Json& {
    const auto found = json.find(key);
    if (found == json.end()) fail(fn, name + ": " + key, "missing", "this key is required");
    return *found;
  };
  const io::Json& metadata = required("metadata");
  if (!metadata.is_object()) fail(fn, name + ": metadata", io::JsonObjectReader::excerpt(metadata), "expected an object");
  // Other metadata keys describe the measurement; they are accepted and not used.
  const auto gap = metadata.find("gap_seconds");
  if (gap == metadata.end()) fail(fn, name + ": metadata.gap_seconds", "missing", "this key is required (the tick in seconds)");
  if (!gap->is_number()) fail(fn, name + ": metadata.gap_seconds", io::JsonObjectReader::excerpt(*gap), "expected a number of seconds");
  const double tick_s = gap->get<double>();
  if (!std::isfinite(tick_s) || !(tick_s > 0) || tick_s > kMaxTraceTickS) {
    fail(fn, name + ": metadata.gap_seconds", tick_s,
         "the tick must be greater than 0 and at most " + format_number(kMaxTraceTickS) + " s (one day)");
  }
  const io::Json& data = required("data");
  if (!data.is_array()) fail(fn, name + ": data", io::JsonObjectReader::excerpt(data), "expected an array of whole numbers");
  if (data.empty()) fail(fn, name + ": data", "[]", "the series has no ticks");
  if (data.size() > kMaxTraceTicks) {
    fail(fn, name + ": data", std::to_string(data.size()) + " ticks", "a series may have at most " + std::to_string(kMaxTraceTicks) + " ticks");
  }
  const double span_s = double(data.size()) * tick_s;
  if (span_s > kMaxTraceSpanS) {
    fail(fn, name + ": data", std::to_string(data.size()) + " ticks of " + format_number(tick_s) + " s",
         "a trace may span at most " + format_number(kMaxTraceSpanS) + " s");
  }
  if (const auto prices = json.find("prices"); prices != json.end()) {
    if (!prices->is_array() || prices->size() != data.size()) {
      fail(fn, name + ": prices", io::JsonObjectReader::excerpt(*prices),
           "expected an array of one price per tick (" + std::to_string(data.size()) + " numbers)");
    }
    for (std::size_t i = 0; i < prices->size(); ++i) {
      const io::Json& price = (*prices)[i];
      const std::string where = name + ": prices[" + std::to_string(i) + "]";
      if (!price.is_number()) fail(fn, where, io::JsonObjectReader::excerpt(price), "expected a number");
      const double p = price.get<double>();
      if (!std::isfinite(p) || p < 0) fail(fn, where, p, "a price must be a finite number, not negative");
    }
  }

  const int slots = source.kind == TraceKind::counts ? source.requested : 1;
  const std::string hint =
      source.kind == TraceKind::counts
          ? "a counts value is the number of instances obtained, 0 to the " + std::to_string(slots) +
                " requested (give the number requested with --requested)"
          : (source.kind == TraceKind::availability ? "an availability" : "a lifetimes") + std::string(" value is 0 or 1");
  std::vector<int> values(data.size());
  std::size_t intervals = 0;  // each rise of the value opens that many intervals: count them before building any
  for (std::size_t i = 0; i < data.size(); ++i) {
    values[i] = series_value(fn, name, data[i], i, slots, hint);
    const int rise = values[i] - (i > 0 ? values[i - 1] : 0);
    if (rise > 0) {
      intervals += std::size_t(rise);
      if (intervals > kMaxTraceIntervals) {
        fail(fn, name + ": data[" + std::to_string(i) + "]", std::to_string(intervals) + " intervals",
             "a trace may hold at most " + std::to_string(kMaxTraceIntervals) + " up intervals");
      }
    }
  }

  PoolTrace trace = start_pool_trace(source);
  trace.tick_s = tick_s;
  trace.span_s = span_s;
  trace.slots = slots;
  trace.slotted = true;
  trace.up = series_intervals(fn, name, values, tick_s, slots, intervals);
  return trace;
}

}  // namespace spotdnn::detail

namespace spotdnn::io {

/// Turns a parsed JSON series into a PoolTrace (see the file comment). Throws spotdnn::invalid_argument
/// naming the file (source.name), the field or tick index and the value.
[[nodiscard]] inline PoolTrace series_trace_from_json(const Json& json, const TraceSource& source) {
  return spotdnn::detail::series_trace_from_json("series_trace_from_json", json, source);
}

/// Parses JSON series text (io::parse_json's limits) into a PoolTrace; source.name names it in messages.
[[nodiscard]] inline PoolTrace parse_series_trace(std::string_view json_text, const TraceSource& source) {
  const std::string name = spotdnn::detail::trace_name(source);
  return spotdnn::detail::series_trace_from_json("parse_series_trace", parse_json(json_text, name), source);
}

/// Reads a JSON series file (a regular file of at most kMaxTraceFileBytes) into a PoolTrace; the trace's
/// source is source.name, or `path` when that is empty.
[[nodiscard]] inline PoolTrace read_series_trace(const std::string& path, TraceSource source) {
  if (source.name.empty()) source.name = path;
  const std::string text = read_checked_file(path, kMaxTraceFileBytes, "read_series_trace");
  return spotdnn::detail::series_trace_from_json("read_series_trace", parse_json(text, source.name), source);
}

}  // namespace spotdnn::io
