#pragma once
// SPDX-License-Identifier: MIT
/// @file io/trace_events.hpp Reads an `events` trace: the add/remove log of a spot group's nodes
/// (`ms,add|remove,node`, the Bamboo traces' form) into a PoolTrace (docs/traces.md).
///
/// One row per event: milliseconds since the group's start (a whole number, non-decreasing from row to row,
/// at most kMaxTraceSpanS s), `add` or `remove`, and the node's name (non-empty, printable UTF-8). An
/// optional first line `ms,event,node` is a header. A UTF-8 byte-order mark, CRLF line endings, blank lines,
/// spaces around cells and double-quoted cells are accepted; a NUL byte, an `add` of a node that is up, a
/// `remove` of a node that is not, and more than kMaxTraceEvents rows are errors naming FILE:LINE.
///
/// The PoolTrace (revocation/trace.hpp): each node's stay is one interval (slot −1, `slotted` false), from
/// its add to its remove (`preempted`) or, still up after the last event, to span_s (censored). Time 0 is
/// the group's start, so a node added at 0 is fresh: every interval has `age_known` true. span_s = the time
/// of the last event (the log says nothing after it); tick_s = the smallest step between two distinct event
/// times (60 s when all events share one time); slots = the most nodes up at once. A log whose events all
/// fall at one time observes nothing and is refused.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <string>
#include <string_view>
#include <map>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/io/trace_source.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/revocation/trace.hpp"

namespace spotdnn::detail {

inline constexpr std::string_view kEventsTraceHeader = "ms,event,node";
inline constexpr std::string_view kEventsTraceRow = "rows ms,add|remove,node";

/// The tick of an events trace when its events do not show one (all at one time): Bamboo's 60 s.
inline constexpr double kDefaultEventsTickS = 60;

inline PoolTrace parse_events_trace(std::string_view fn, std::string_view text, const io::TraceSource& source) {
  check_trace_source(fn, source);
  const std::string name = trace_name(source);
  if (source.kind != TraceKind::events) {
    fail(fn, name + ": kind", spotdnn::detail::quoted(to_string(source.kind)),
         "an add/remove CSV is an events trace; lifetimes, availability and counts traces are JSON series");
  }
  text = trace_csv_text(text, fn, name);
  PoolTrace trace = start_pool_trace(source);
  trace.slotted = false;

  struct Up {
    std::size_t interval;  ///< index into trace.up
    std::size_t line;      ///< the line that added it
  };
  std::map<std::string, Up, std::less<>> up_now;
  std::vector<double> times;  ///< distinct event times, increasing
  std::vector<std::string> cells(3);
  TraceCsvLines lines(text);
  std::string_view line;
  std::size_t number = 0, rows = 0;
  std::int64_t previous_ms = 0;
  std::size_t previous_line = 0;
  bool first = true;
  int most_up = 0;
  while (lines.next(line, number)) {
    const std::string where = name + ":" + std::to_string(number);
    if (first && line.substr(0, 7) == "time_s,") {
      fail(fn, where, spotdnn::detail::quoted(line), "this looks like a fleet log (time_s,pool,instance,event): read it as one (io/trace_fleet.hpp)");
    }
    split_trace_csv_line(fn, where, line, cells, kEventsTraceRow);
    if (first && cells[0] == "ms" && cells[1] == "event" && cells[2] == "node") {
      first = false;
      continue;
    }
    first = false;
    if (rows == kMaxTraceEvents) {
      fail(fn, where, "<row>", "more than " + std::to_string(kMaxTraceEvents) + " rows: the trace is too large");
    }
    ++rows;
    const std::int64_t ms = parse_trace_milliseconds(fn, where + ": ms", cells[0]);
    if (rows > 1 && ms < previous_ms) {
      fail(fn, where + ": ms", cells[0],
           "events must be in time order: line " + std::to_string(previous_line) + " is at " + std::to_string(previous_ms) + " ms");
    }
    previous_ms = ms;
    previous_line = number;
    const double time_s = double(ms) / 1000;
    if (times.empty() || time_s > times.back()) times.push_back(time_s);
    const std::string& node = cells[2];
    if (node.empty()) fail(fn, where + ": node", "\"\"", "the node name is empty");
    require_printable_name(fn, where + ": node", node);
    if (cells[1] == "add") {
      const auto found = up_now.find(node);
      if (found != up_now.end()) {
        fail(fn, where + ": node", spotdnn::detail::quoted(node),
             "added while it is up (added at line " + std::to_string(found->second.line) + " and not removed since)");
      }
      check_interval_count(fn, where, trace.up.size());
      UpInterval interval;
      interval.start_s = time_s;
      interval.end_s = time_s;
      interval.age_known = true;  // time 0 is the group's start: a node added then is fresh
      interval.slot = -1;
      up_now.emplace(node, Up{trace.up.size(), number});
      trace.up.push_back(interval);
      most_up = std::max(most_up, int(up_now.size()));
    } else if (cells[1] == "remove") {
      const auto found = up_now.find(node);
      if (found == up_now.end()) fail(fn, where + ": node", spotdnn::detail::quoted(node), "removed while it is not up (no add before this line)");
      UpInterval& interval = trace.up[found->second.interval];
      interval.end_s = time_s;
      interval.preempted = true;
      up_now.erase(found);
    } else {
      fail(fn, where + ": event", spotdnn::detail::quoted(cells[1]), "expected add or remove");
    }
  }
  if (rows == 0) fail(fn, name, "<no rows>", "the trace has no events: expected " + std::string(kEventsTraceRow) +
                                           " (after an optional header " + std::string(kEventsTraceHeader) + ")");
  if (times.size() < 2) {
    fail(fn, name, std::to_string(previous_ms) + " ms", "every event is at the same time: the trace observes no time");
  }
  trace.span_s = times.back();
  trace.tick_s = smallest_step(times, kDefaultEventsTickS);
  trace.slots = most_up;
  for (const auto& [node, open] : up_now) trace.up[open.interval].end_s = trace.span_s;  // censored
  // A node added at the last event's time (or removed when it was added) was up for no time: it says
  // nothing about lifetimes and is left out.
  trace.up.erase(std::remove_if(trace.up.begin(), trace.up.end(), [](const UpInterval& u) { return !(u.end_s > u.start_s); }),
                 trace.up.end());
  return trace;
}

}  // namespace spotdnn::detail

namespace spotdnn::io {

/// Parses events-trace CSV text (see the file comment) into a PoolTrace; source.kind must be `events`.
/// Throws spotdnn::invalid_argument naming FILE:LINE (source.name), the column and the value.
[[nodiscard]] inline PoolTrace parse_events_trace(std::string_view text, const TraceSource& source) {
  return spotdnn::detail::parse_events_trace("parse_events_trace", text, source);
}

/// Reads an events-trace file (a regular file of at most kMaxTraceFileBytes) into a PoolTrace; its source
/// is source.name, or `path` when that is empty.
[[nodiscard]] inline PoolTrace read_events_trace(const std::string& path, TraceSource source) {
  if (source.name.empty()) source.name = path;
  const std::string text = read_checked_file(path, kMaxTraceFileBytes, "read_events_trace");
  return spotdnn::detail::parse_events_trace("read_events_trace", text, source);
}

}  // namespace spotdnn::io
