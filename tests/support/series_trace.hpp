#pragma once
// SPDX-License-Identifier: MIT
/// @file support/series_trace.hpp Hand-made traces for the replay tests: a 0/1 series of one slot.

#include <cstddef>
#include <string>

#include <spotdnn/revocation/trace.hpp>

namespace spotdnn::test {

/// A 0/1 series of one slot, `tick_s` apart: a run of 1s over ticks [i, j) is the interval [i·tick, j·tick),
/// preempted unless it reaches the end.
inline PoolTrace series_trace(const std::string& bits, double tick_s, const std::string& type = "p3.2xlarge") {
  PoolTrace trace;
  trace.pool = {type, "us-east-1a"};
  trace.kind = TraceKind::lifetimes;
  trace.source = "hand-made " + type;
  trace.tick_s = tick_s;
  trace.span_s = double(bits.size()) * tick_s;
  for (std::size_t i = 0; i < bits.size();) {
    if (bits[i] != '1') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < bits.size() && bits[j] == '1') ++j;
    UpInterval up;
    up.start_s = double(i) * tick_s;
    up.end_s = double(j) * tick_s;
    up.preempted = j < bits.size();
    up.age_known = i > 0;
    trace.up.push_back(up);
    i = j;
  }
  return trace;
}

}  // namespace spotdnn::test
