#pragma once
// SPDX-License-Identifier: MIT
/// @file io/trace_fleet.hpp Reads a fleet log, spotdnn's neutral CSV for people who log their own spot
/// instances, into one PoolTrace per pool (docs/traces.md).
///
/// Header `time_s,pool,instance,event` (the columns in any order), then one row per event, in time order:
/// - `time_s`: seconds on any clock (Unix time works; decimals allowed), finite, not negative, never less
///   than the row before; the first row's time is the trace's time 0.
/// - `pool`: `TYPE@ZONE`, e.g. `p3.2xlarge@us-east-1b`.
/// - `instance`: any printable name that identifies one instance (or its request) within the file.
/// - `event`: `request` (we asked for it), `up` (it runs), `preempted` (the provider reclaimed it),
///   `stopped` (we ended it, or gave up the request), or `end` (the observation ended: the last row, with
///   `pool` and `instance` empty; without it the observation ends at the last row's time).
/// Each instance goes request → up → preempted or stopped; `request` is optional, and a request may be
/// stopped before the instance comes up. Anything else (an instance up twice, preempted before it was up,
/// an event after its end, a second pool for one instance) is an error naming FILE:LINE. Same text rules
/// as the events traces (io/trace_events.hpp): a byte-order mark, CRLF, blank lines, trimmed and
/// double-quoted cells; at most kMaxTraceEvents rows and kMaxTracePools pools.
///
/// Each pool's PoolTrace (kind `events`, slot −1, `slotted` false, revocation/trace.hpp): an up →
/// preempted stay is a preempted interval; up → stopped, or still up at the end, a censored one; every
/// interval has `age_known` true (the log records launches). `waits` holds each request: arrived when its
/// instance came up, censored when stopped or still waiting at the end; `after_preemption` when the pool
/// had a preemption that no earlier request followed (write a preemption before the request that replaces
/// it). span_s = the end (or last) time less the first; tick_s = the smallest step between distinct times;
/// slots = the most instances of the pool up at once (0 for a pool that never had one).

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/io/trace_source.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/revocation/trace.hpp"

namespace spotdnn::detail {

inline constexpr std::string_view kFleetTraceHeader = "time_s,pool,instance,event";

/// The pool of a fleet-log cell `TYPE@ZONE`; throws naming `where` unless both parts are non-empty and
/// printable and there is exactly one '@'.
inline PoolId parse_fleet_pool(std::string_view fn, const std::string& where, std::string_view cell) {
  const std::size_t at = cell.find('@');
  if (cell.empty() || at == std::string_view::npos || at == 0 || at + 1 == cell.size() ||
      cell.find('@', at + 1) != std::string_view::npos) {
    fail(fn, where, spotdnn::detail::quoted(cell), "expected TYPE@ZONE, e.g. p3.2xlarge@us-east-1b");
  }
  PoolId pool{std::string(cell.substr(0, at)), std::string(cell.substr(at + 1))};
  require_printable_name(fn, where, cell);
  return pool;
}

inline std::vector<PoolTrace> parse_fleet_trace(std::string_view fn, std::string_view text, const std::string& name,
                                                const std::string& observed_from) {
  require_printable_name(fn, "name", name);
  require_printable_name(fn, name + ": observed_from", observed_from);
  text = trace_csv_text(text, fn, name);

  enum class State { requested, up, ended };
  struct Instance {
    std::size_t pool = 0;
    State state = State::requested;
    std::size_t line = 0;      ///< the line of its last event
    std::size_t interval = 0;  ///< index into its pool's `up` while up
    std::size_t wait = 0;      ///< index into its pool's `waits` while requested
  };
  struct Pool {
    PoolTrace trace;
    int up_now = 0;
    int owed_replacements = 0;  ///< preemptions that no request has followed yet
  };
  std::vector<Pool> pools;
  std::map<std::string, std::size_t, std::less<>> pool_index;
  std::map<std::string, Instance, std::less<>> instances;
  std::vector<double> times;  ///< distinct times since time 0, increasing

  TraceCsvLines lines(text);
  std::string_view line;
  std::size_t number = 0;
  if (!lines.next(line, number)) fail(fn, name, "<empty>", "the file is empty: expected the header " + std::string(kFleetTraceHeader));
  std::vector<std::string> cells(4);
  const std::string header_where = name + ":" + std::to_string(number) + ": header";
  split_trace_csv_line(fn, header_where, line, cells, "the header " + std::string(kFleetTraceHeader));
  std::size_t time_column = 4, pool_column = 4, instance_column = 4, event_column = 4;
  for (std::size_t c = 0; c < 4; ++c) {
    std::size_t* column = cells[c] == "time_s"     ? &time_column
                          : cells[c] == "pool"     ? &pool_column
                          : cells[c] == "instance" ? &instance_column
                          : cells[c] == "event"    ? &event_column
                                                   : nullptr;
    if (column == nullptr) fail(fn, header_where, spotdnn::detail::quoted(cells[c]), "unknown column: expected the header " + std::string(kFleetTraceHeader));
    if (*column != 4) fail(fn, header_where, spotdnn::detail::quoted(cells[c]), "the column is given twice");
    *column = c;
  }

  std::size_t rows = 0;
  double origin = 0, previous = 0, end_time = -1;
  std::size_t previous_line = 0, end_line = 0;
  while (lines.next(line, number)) {
    const std::string where = name + ":" + std::to_string(number);
    split_trace_csv_line(fn, where, line, cells, "rows time_s,pool,instance,event (in the header's order)");
    if (end_line != 0) fail(fn, where, spotdnn::detail::quoted(line), "a row after the end row (line " + std::to_string(end_line) + ")");
    if (rows == kMaxTraceEvents) fail(fn, where, "<row>", "more than " + std::to_string(kMaxTraceEvents) + " rows: the log is too large");
    ++rows;
    const double absolute = parse_trace_seconds(fn, where + ": time_s", cells[time_column]);
    if (rows == 1) origin = absolute;
    if (absolute < previous) {
      fail(fn, where + ": time_s", spotdnn::detail::quoted(cells[time_column]),
           "rows must be in time order: line " + std::to_string(previous_line) + " is at " + format_number(previous) + " s");
    }
    previous = absolute;
    previous_line = number;
    const double t = absolute - origin;
    if (t > kMaxTraceSpanS) {
      fail(fn, where + ": time_s", spotdnn::detail::quoted(cells[time_column]),
           "the log may span at most " + format_number(kMaxTraceSpanS) + " s from its first row");
    }
    if (times.empty() || t > times.back()) times.push_back(t);

    const std::string& event = cells[event_column];
    const std::string& instance_name = cells[instance_column];
    const std::string& pool_cell = cells[pool_column];
    if (event == "end") {
      if (!pool_cell.empty() || !instance_name.empty()) {
        fail(fn, where, spotdnn::detail::quoted(line), "the end row leaves pool and instance empty (it ends the observation of every pool)");
      }
      end_time = t;
      end_line = number;
      continue;
    }
    if (event != "request" && event != "up" && event != "preempted" && event != "stopped") {
      fail(fn, where + ": event", spotdnn::detail::quoted(event), "expected request, up, preempted, stopped or end");
    }
    const PoolId pool_id = parse_fleet_pool(fn, where + ": pool", pool_cell);
    if (instance_name.empty()) fail(fn, where + ": instance", "\"\"", "the instance name is empty");
    require_printable_name(fn, where + ": instance", instance_name);

    auto pool_it = pool_index.find(pool_cell);
    if (pool_it == pool_index.end()) {
      if (pools.size() == kMaxTracePools) {
        fail(fn, where + ": pool", spotdnn::detail::quoted(pool_cell), "more than " + std::to_string(kMaxTracePools) + " pools in one log");
      }
      Pool pool;
      pool.trace.pool = pool_id;
      pool.trace.kind = TraceKind::events;
      pool.trace.source = name;
      pool.trace.slots = 0;
      pool.trace.slotted = false;
      pool.trace.observed_from = observed_from;
      pool_it = pool_index.emplace(pool_cell, pools.size()).first;
      pools.push_back(std::move(pool));
    }
    Pool& pool = pools[pool_it->second];
    auto found = instances.find(instance_name);
    if (found != instances.end()) {
      if (found->second.pool != pool_it->second) {
        fail(fn, where + ": pool", spotdnn::detail::quoted(pool_cell),
             "instance \"" + instance_name + "\" is in pool " + pools[found->second.pool].trace.pool.name() + " (line " +
                 std::to_string(found->second.line) + ")");
      }
      if (found->second.state == State::ended) {
        fail(fn, where + ": event", spotdnn::detail::quoted(event),
             "instance \"" + instance_name + "\" already ended (line " + std::to_string(found->second.line) + ")");
      }
    }
    const auto start_interval = [&](Instance& instance) {
      check_interval_count(fn, where, pool.trace.up.size());
      UpInterval interval;
      interval.start_s = t;
      interval.end_s = t;
      interval.age_known = true;
      interval.slot = -1;
      instance.interval = pool.trace.up.size();
      instance.state = State::up;
      pool.trace.up.push_back(interval);
      pool.trace.slots = std::max(pool.trace.slots, ++pool.up_now);
    };
    if (event == "request") {
      if (found != instances.end()) {
        fail(fn, where + ": event", spotdnn::detail::quoted(event),
             "instance \"" + instance_name + "\" was already requested or up (line " + std::to_string(found->second.line) + ")");
      }
      check_interval_count(fn, where, pool.trace.waits.size());
      WaitObservation wait;
      wait.start_s = t;
      wait.end_s = t;
      wait.after_preemption = pool.owed_replacements > 0;
      if (wait.after_preemption) --pool.owed_replacements;
      Instance instance;
      instance.pool = pool_it->second;
      instance.state = State::requested;
      instance.line = number;
      instance.wait = pool.trace.waits.size();
      pool.trace.waits.push_back(wait);
      instances.emplace(instance_name, instance);
    } else if (event == "up") {
      if (found == instances.end()) {
        Instance instance;
        instance.pool = pool_it->second;
        instance.line = number;
        start_interval(instance);
        instances.emplace(instance_name, instance);
      } else if (found->second.state == State::requested) {
        WaitObservation& wait = pool.trace.waits[found->second.wait];
        wait.end_s = t;
        wait.arrived = true;
        found->second.line = number;
        start_interval(found->second);
      } else {
        fail(fn, where + ": event", spotdnn::detail::quoted(event),
             "instance \"" + instance_name + "\" is already up (line " + std::to_string(found->second.line) + ")");
      }
    } else {  // preempted or stopped
      const bool preempted = event == "preempted";
      if (found == instances.end() || (preempted && found->second.state != State::up)) {
        fail(fn, where + ": event", spotdnn::detail::quoted(event),
             "instance \"" + instance_name + "\" is not up" + (preempted ? "" : " or requested") + " (give an up row before)");
      }
      Instance& instance = found->second;
      if (instance.state == State::up) {
        UpInterval& interval = pool.trace.up[instance.interval];
        interval.end_s = t;
        interval.preempted = preempted;
        --pool.up_now;
        if (preempted) ++pool.owed_replacements;
      } else {  // a request given up: a censored wait
        pool.trace.waits[instance.wait].end_s = t;
      }
      instance.state = State::ended;
      instance.line = number;
    }
  }
  if (rows == 0) fail(fn, name, "<no rows>", "the log has a header but no rows");
  if (pools.empty()) fail(fn, name, "<no instances>", "the log names no instance");
  const double span_s = end_line != 0 ? end_time : times.back();
  if (!(span_s > 0)) fail(fn, name, "0 s", "every row is at the same time: the log observes no time");
  const double tick_s = smallest_step(times, 60);
  for (const auto& [instance_name, instance] : instances) {
    Pool& pool = pools[instance.pool];
    if (instance.state == State::up) pool.trace.up[instance.interval].end_s = span_s;
    if (instance.state == State::requested) pool.trace.waits[instance.wait].end_s = span_s;
  }
  std::vector<PoolTrace> traces;
  traces.reserve(pools.size());
  for (Pool& pool : pools) {
    pool.trace.span_s = span_s;
    pool.trace.tick_s = tick_s;
    // An instance up for no time (up and preempted at one moment, or up at the end) is left out.
    std::vector<UpInterval>& up = pool.trace.up;
    up.erase(std::remove_if(up.begin(), up.end(), [](const UpInterval& u) { return !(u.end_s > u.start_s); }), up.end());
    traces.push_back(std::move(pool.trace));
  }
  std::sort(traces.begin(), traces.end(), [](const PoolTrace& a, const PoolTrace& b) { return a.pool < b.pool; });
  return traces;
}

}  // namespace spotdnn::detail

namespace spotdnn::io {

/// True when `text` starts (after a byte-order mark and blank lines) with a fleet log's header line, whatever
/// the order of its columns: how read_trace_files tells a fleet log from an add/remove events CSV.
[[nodiscard]] inline bool is_fleet_trace_text(std::string_view text) {
  if (text.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) text.remove_prefix(kUtf8ByteOrderMark.size());
  spotdnn::detail::TraceCsvLines lines(text);
  std::string_view line;
  std::size_t number = 0;
  if (!lines.next(line, number)) return false;
  std::vector<std::string> cells(4);
  try {
    spotdnn::detail::split_trace_csv_line("is_fleet_trace_text", "", line, cells, "");
  } catch (const invalid_argument&) {
    return false;
  }
  std::sort(cells.begin(), cells.end());
  return cells == std::vector<std::string>{"event", "instance", "pool", "time_s"};
}

/// Parses fleet-log text (see the file comment) into one PoolTrace per pool, ordered by pool. `name` names it
/// in messages and PoolTrace::source; `observed_from` (an ISO date or empty) is copied to every trace.
/// Throws spotdnn::invalid_argument naming FILE:LINE, the column and the value.
[[nodiscard]] inline std::vector<PoolTrace> parse_fleet_trace(std::string_view text, const std::string& name = "<text>",
                                                              const std::string& observed_from = "") {
  return spotdnn::detail::parse_fleet_trace("parse_fleet_trace", text, name, observed_from);
}

/// Reads a fleet-log file (a regular file of at most kMaxTraceFileBytes) into one PoolTrace per pool.
[[nodiscard]] inline std::vector<PoolTrace> read_fleet_trace(const std::string& path, const std::string& observed_from = "") {
  const std::string text = read_checked_file(path, kMaxTraceFileBytes, "read_fleet_trace");
  return spotdnn::detail::parse_fleet_trace("read_fleet_trace", text, path, observed_from);
}

}  // namespace spotdnn::io
