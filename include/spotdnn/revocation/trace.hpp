#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/trace.hpp What a spot trace says about one pool (an instance type in one Availability
/// Zone): when instances were up, when they were preempted, and what could be had, on one clock.
///
/// Every trace format (io/trace_readers.hpp) becomes a PoolTrace: a list of *up intervals*, each the time
/// one instance was up (or, for probe traces, one window in which an instance could be had), grouped into
/// *slots*. A slot is a position that holds at most one instance at a time; the gap between two intervals
/// of one slot is the wait for a replacement. The kinds:
///
/// - `lifetimes`: a 0/1 series, 1 = our instance is up. One slot; a run of 1s is one instance's lifetime,
///   1→0 a preemption, the 0s after it the wait for a replacement.
/// - `availability`: a 0/1 series, 1 = a one-time request for one instance succeeded at that tick. One slot;
///   a run of 1s is a window in which capacity could be had. spotdnn's assumption (the one the Can't Be Late
///   simulator makes, stated wherever it matters): an instance launched in a window lives until the window
///   ends, so a window is fitted as a lifetime and its end as a preemption.
/// - `counts`: a series of 0..N instances obtained when asking for N (`requested` = N). N slots; slot i is up
///   while the count exceeds i (the same assumption as `availability`, per instance).
/// - `events`: add/remove events of the nodes of a spot group. No fixed slots (`slotted` false): every node
///   is one interval, a remove is a preemption, and a replacement is whichever node the group adds next.
///   Time 0 is the group's start, so a node added then is fresh: every `events` interval has a known age.
///   Fleet logs (io/trace_fleet.hpp) read as `events` traces too, one per pool, with their `waits`.
///
/// Times are seconds since the trace's start (its first tick); the trace observed [0, span_s). An interval
/// still up at span_s is censored (`preempted` false); one up at time 0 has an unknown age
/// (`age_known` false).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spotdnn {

/// Which form a trace file has (the user says; a file does not).
enum class TraceKind {
  lifetimes,     ///< 0/1 series: our instance is up
  availability,  ///< 0/1 series: a one-time request succeeded
  counts,        ///< 0..N series: instances obtained of N requested
  events,        ///< add/remove events of a spot group's nodes
};

constexpr std::string_view to_string(TraceKind kind) {
  switch (kind) {
    case TraceKind::lifetimes: return "lifetimes";
    case TraceKind::availability: return "availability";
    case TraceKind::counts: return "counts";
    case TraceKind::events: return "events";
  }
  return "lifetimes";
}

constexpr std::optional<TraceKind> trace_kind_from_string(std::string_view text) {
  if (text == "lifetimes") return TraceKind::lifetimes;
  if (text == "availability") return TraceKind::availability;
  if (text == "counts") return TraceKind::counts;
  if (text == "events") return TraceKind::events;
  return std::nullopt;
}

/// A pool: one instance type in one Availability Zone. The region is the zone less its last letter
/// ("us-east-1b" → "us-east-1"); a zone ID ("use1-az1") or a GCP zone ("us-central1-a") keeps its own rule
/// (region_of_zone).
struct PoolId {
  std::string type;
  std::string zone;

  [[nodiscard]] std::string name() const { return type + "@" + zone; }
  friend bool operator==(const PoolId& a, const PoolId& b) { return a.type == b.type && a.zone == b.zone; }
  friend bool operator!=(const PoolId& a, const PoolId& b) { return !(a == b); }
  friend bool operator<(const PoolId& a, const PoolId& b) {
    return a.type != b.type ? a.type < b.type : a.zone < b.zone;
  }
};

/// The region of a zone: AWS "us-east-1b" → "us-east-1", GCP "us-central1-a" → "us-central1"; a zone ID
/// ("use1-az1") → "use1"; anything else is its own region.
[[nodiscard]] inline std::string region_of_zone(std::string_view zone) {
  if (const std::size_t az = zone.find("-az"); az != std::string_view::npos && az > 0) return std::string(zone.substr(0, az));
  if (zone.size() >= 3 && zone[zone.size() - 2] == '-' && zone.back() >= 'a' && zone.back() <= 'z') {
    return std::string(zone.substr(0, zone.size() - 2));  // GCP: us-central1-a
  }
  if (zone.size() >= 2 && zone.back() >= 'a' && zone.back() <= 'z' && zone[zone.size() - 2] >= '0' && zone[zone.size() - 2] <= '9') {
    return std::string(zone.substr(0, zone.size() - 1));  // AWS: us-east-1b
  }
  return std::string(zone);
}

/// The time one instance was up (or one window in which one could be had), in seconds since the trace's
/// start.
struct UpInterval {
  double start_s = 0;
  double end_s = 0;
  bool preempted = false;  ///< ended by a preemption (or a window's end) before the trace ended; else censored
  bool age_known = true;   ///< false when it was already up at the trace's first tick (its age then is unknown)
  int slot = 0;            ///< the slot that held it; -1 for `events` traces (no fixed slots)
};

/// One observed wait for an instance: from a request (at start_s) until the instance came up (end_s,
/// `arrived` true) or until the request was given up or the trace ended (`arrived` false: censored). Only
/// traces that log requests carry waits (the fleet log of io/trace_fleet.hpp); series and `events` traces
/// show waits as the gaps between intervals instead.
struct WaitObservation {
  double start_s = 0;
  double end_s = 0;
  bool arrived = false;           ///< the instance came up at end_s; false: censored at end_s
  bool after_preemption = false;  ///< the request replaced an instance of the pool preempted before it
};

/// One pool's trace on its own clock.
struct PoolTrace {
  PoolId pool;
  TraceKind kind = TraceKind::lifetimes;
  std::string source;           ///< where it came from (a file name), for messages
  double tick_s = 0;            ///< resolution: a series' gap_seconds, an event log's smallest step (s)
  double span_s = 0;            ///< observed from 0 to span_s (s)
  int slots = 1;                ///< slot count (N for counts; 1 for series; for events the most nodes up at once)
  bool slotted = true;          ///< false for `events`: a replacement is any node added later
  /// Intervals, ordered by start_s (ties by slot). Within one slot they do not overlap.
  std::vector<UpInterval> up;
  /// Observed request-to-up waits, ordered by start_s (empty unless the trace logs requests).
  std::vector<WaitObservation> waits;
  /// The calendar date of time 0 when known (ISO 8601, e.g. "2023-04-19"), or empty.
  std::string observed_from;
  /// Where this trace's time 0 lies on a clock shared with other traces of one folder (s); series of one
  /// folder are time-aligned, so 0 for each of them.
  double clock_offset_s = 0;
};

/// The part [from_s, to_s) of `trace` (seconds since its start) as a trace of its own: intervals clipped to
/// it and shifted so that from_s becomes time 0, clock_offset_s moved by from_s (so it stays on the shared
/// clock), span to_s − from_s. An interval cut at from_s has an unknown age (`age_known` false); one cut at
/// to_s is censored (`preempted` false). A period outside [0, span_s] is clipped to it; an empty one gives a
/// trace with no intervals and span 0. Used to fit on one period of a trace and replay on another.
[[nodiscard]] inline PoolTrace trace_period(const PoolTrace& trace, double from_s, double to_s) {
  from_s = from_s > 0 ? from_s : 0.0;
  to_s = to_s < trace.span_s ? to_s : trace.span_s;
  PoolTrace out = trace;
  out.up.clear();
  out.span_s = to_s > from_s ? to_s - from_s : 0.0;
  out.clock_offset_s = trace.clock_offset_s + from_s;
  if (!(to_s > from_s)) return out;
  for (const UpInterval& u : trace.up) {
    if (u.end_s <= from_s || u.start_s >= to_s) continue;
    UpInterval v = u;
    if (u.start_s < from_s) {
      v.start_s = from_s;
      v.age_known = false;
    }
    if (u.end_s > to_s) {
      v.end_s = to_s;
      v.preempted = false;
    }
    v.start_s -= from_s;
    v.end_s -= from_s;
    out.up.push_back(v);
  }
  out.waits.clear();
  for (const WaitObservation& w : trace.waits) {
    if (w.start_s < from_s || w.start_s >= to_s) continue;  // a wait belongs to the period it began in
    WaitObservation v = w;
    if (w.end_s > to_s) {
      v.end_s = to_s;
      v.arrived = false;
    }
    v.start_s -= from_s;
    v.end_s -= from_s;
    out.waits.push_back(v);
  }
  return out;
}

}  // namespace spotdnn
