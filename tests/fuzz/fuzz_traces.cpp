// SPDX-License-Identifier: MIT
// Fuzzes the spot trace readers (io/trace_readers.hpp). The first byte picks the reader, the rest is its text:
//   0 lifetimes series, 1 availability series, 2 counts series (N = 1 + second byte % 32, the rest the text),
//   3 events CSV, 4 fleet log, 5 file-name and GPU-map parsing (lines: a --gpu-map text, then paths).
// Every accepted trace must keep revocation/trace.hpp's promises: finite times, 0 <= start <= end <= span,
// intervals ordered by start (ties by slot), slots of a series in range and never overlapping, preempted
// exactly when a series interval ends before the span, waits inside the span.
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <spotdnn/io/trace_readers.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;
namespace sio = spotdnn::io;

namespace {

void check_trace(const PoolTrace& t) {
  fuzz::check(std::isfinite(t.tick_s) && t.tick_s > 0, "tick_s is not a positive number");
  fuzz::check(std::isfinite(t.span_s) && t.span_s > 0 && t.span_s <= kMaxTraceSpanS, "span_s is not in (0, limit]");
  fuzz::check(!t.pool.type.empty() && !t.pool.zone.empty(), "a trace without a pool");
  fuzz::check(t.up.size() <= kMaxTraceIntervals && t.waits.size() <= kMaxTraceIntervals, "more intervals than the limit");
  fuzz::check(t.slots >= 0, "negative slots");
  std::vector<double> slot_end(t.slotted ? std::size_t(t.slots) : 0, 0.0);
  for (std::size_t i = 0; i < t.up.size(); ++i) {
    const UpInterval& u = t.up[i];
    fuzz::check(std::isfinite(u.start_s) && std::isfinite(u.end_s), "an interval time is not finite");
    fuzz::check(0 <= u.start_s && u.start_s <= u.end_s && u.end_s <= t.span_s, "an interval is not inside [0, span]");
    if (i > 0) {
      const UpInterval& p = t.up[i - 1];
      fuzz::check(p.start_s < u.start_s || (p.start_s == u.start_s && p.slot <= u.slot), "intervals are not ordered");
    }
    if (t.slotted) {
      fuzz::check(u.slot >= 0 && u.slot < t.slots, "a series interval's slot is out of range");
      fuzz::check(u.start_s >= slot_end[std::size_t(u.slot)], "two intervals of one slot overlap");
      slot_end[std::size_t(u.slot)] = u.end_s;
      fuzz::check(u.preempted == (u.end_s < t.span_s), "a series interval is preempted but reaches the end, or not");
      fuzz::check(u.age_known == (u.start_s > 0), "a series interval's age_known does not match its start");
      fuzz::check(u.end_s > u.start_s, "an empty series interval");
    } else {
      fuzz::check(u.slot == -1, "an events interval with a slot");
      fuzz::check(u.age_known, "an events interval of unknown age");
    }
  }
  for (const WaitObservation& w : t.waits) {
    fuzz::check(0 <= w.start_s && w.start_s <= w.end_s && w.end_s <= t.span_s, "a wait is not inside [0, span]");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0] % 6;
  std::string_view text = fuzz::as_text(data + 1, size - 1);
  sio::TraceSource source;
  source.pool = PoolId{"p3.2xlarge", "us-east-1a"};
  source.name = "fuzz";
  switch (selector) {
    case 0:
    case 1:
    case 2: {
      source.kind = selector == 0 ? TraceKind::lifetimes : selector == 1 ? TraceKind::availability : TraceKind::counts;
      if (selector == 2) {
        if (text.empty()) return 0;
        source.requested = 1 + static_cast<unsigned char>(text[0]) % 32;
        text.remove_prefix(1);
      }
      const auto trace = fuzz::read_or_reject([&] { return sio::parse_series_trace(text, source); });
      if (!trace) return 0;
      fuzz::check(trace->slotted && trace->slots == source.requested, "a series trace with the wrong slots");
      check_trace(*trace);
      break;
    }
    case 3: {
      source.kind = TraceKind::events;
      const auto trace = fuzz::read_or_reject([&] { return sio::parse_events_trace(text, source); });
      if (!trace) return 0;
      fuzz::check(!trace->slotted && trace->slots >= 1, "an events trace with no node up");
      check_trace(*trace);
      break;
    }
    case 4: {
      const auto traces = fuzz::read_or_reject([&] { return sio::parse_fleet_trace(text, "fuzz"); });
      if (!traces) return 0;
      fuzz::check(!traces->empty(), "an accepted fleet log without pools");
      fuzz::check(sio::is_fleet_trace_text(text), "an accepted fleet log is not recognised as one");
      for (std::size_t i = 0; i < traces->size(); ++i) {
        check_trace((*traces)[i]);
        fuzz::check(!(*traces)[i].slotted, "a fleet trace is slotted");
        if (i > 0) fuzz::check((*traces)[i - 1].pool < (*traces)[i].pool, "fleet pools are not ordered and distinct");
      }
      break;
    }
    default: {
      const std::size_t newline = text.find('\n');
      const std::string_view map_text = text.substr(0, newline);
      const auto map = fuzz::read_or_reject([&] { return sio::parse_gpu_map(map_text); });
      fuzz::check(!map || map->size() >= sio::default_gpu_map().size(), "a GPU map lost default entries");
      std::string_view rest = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
      while (!rest.empty()) {
        const std::size_t end = std::min(rest.find('\n'), rest.size());
        const std::string_view path = rest.substr(0, end);
        rest.remove_prefix(std::min(end + 1, rest.size()));
        const auto pool = fuzz::read_or_reject([&] { return sio::pool_from_trace_file_name(path, map ? *map : sio::default_gpu_map()); });
        if (pool) fuzz::check(!pool->type.empty() && !pool->zone.empty(), "a pool from a file name without a type or zone");
        const std::string date = sio::observed_from_trace_path(path);
        fuzz::check(date.empty() || (date.size() == 10 && date[4] == '-' && date[7] == '-'), "a date that is not YYYY-MM-DD");
      }
      break;
    }
  }
  return 0;
}
