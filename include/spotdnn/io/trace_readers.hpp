#pragma once
// SPDX-License-Identifier: MIT
/// @file io/trace_readers.hpp Every spot trace reader, and read_trace_files: the trace files of one kind,
/// with their pools from --type/--zone or from their names, as PoolTraces (docs/traces.md).
///
/// - JSON series (`lifetimes`, `availability`, `counts`): io/trace_series.hpp
/// - add/remove events CSV (`events`): io/trace_events.hpp
/// - fleet log CSV (`time_s,pool,instance,event`, read as `events`): io/trace_fleet.hpp
/// - pools and dates from file names and folders: io/trace_names.hpp

#include <cstddef>
#include <map>
#include <cstdio>
#include <optional>
#include <cstdint>
#include <algorithm>
#include <string>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/io/trace_events.hpp"
#include "spotdnn/io/trace_fleet.hpp"
#include "spotdnn/io/trace_names.hpp"
#include "spotdnn/io/trace_series.hpp"
#include "spotdnn/io/trace_source.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/revocation/trace.hpp"

namespace spotdnn::io {

/// What the command line says about a set of trace files (`--kind`, `--requested`, `--type`, `--zone`,
/// `--gpu-map`).
struct TraceFileOptions {
  TraceKind kind = TraceKind::lifetimes;
  bool fleet = false;                  ///< every file is a fleet log (`--kind fleet`); `kind` is not used
  int requested = 1;                   ///< N of a counts trace; 1 for every other kind
  std::string type;                    ///< the instance type of every file; empty: from each file's name
  std::string zone;                    ///< the zone of the one file; empty: from its name
  GpuMap gpu_map = default_gpu_map();  ///< file-name GPU token → instance type
};

/// Reads trace files of one kind into PoolTraces, in the order given (a fleet log's pools in pool order).
/// With `fleet`, every file is read as a fleet log (read_fleet_trace).
/// Each file's pool: `type` and `zone` when given, else from its name `<zone>_<gpu>_<n>.json`
/// (pool_from_trace_file_name); `zone` applies to one file only (several files name their zones). Each
/// file's observed_from comes from its folder (observed_from_trace_path). Kind `events` reads an add/remove
/// CSV, or a fleet log when the file starts with a fleet header (is_fleet_trace_text): its pools come from
/// its rows, so `type` and `zone` must be empty then. Throws spotdnn::invalid_argument naming the file:
/// no files or more than kMaxTracePools pools, a pool that the options and the name leave unknown, a pool
/// given by two files (or twice), and every error of the readers.
[[nodiscard]] inline std::vector<PoolTrace> read_trace_files(const std::vector<std::string>& paths,
                                                             const TraceFileOptions& options) {
  constexpr std::string_view fn = "read_trace_files";
  if (paths.empty()) spotdnn::detail::fail(fn, "paths", "(none)", "give at least one trace file");
  if (paths.size() > kMaxTracePools) {
    spotdnn::detail::fail(fn, "paths", std::to_string(paths.size()) + " files", "at most " + std::to_string(kMaxTracePools) + " trace files at once");
  }
  if (!options.zone.empty() && paths.size() > 1) {
    spotdnn::detail::fail(fn, "zone", spotdnn::detail::quoted(options.zone),
                 "--zone applies to one trace file; with several, each file's zone comes from its name (<zone>_<gpu>_<n>.json)");
  }
  std::vector<PoolTrace> traces;
  std::map<PoolId, std::string> seen;  // pool → the file that gave it
  const auto add = [&](PoolTrace trace, const std::string& path) {
    const auto [where, fresh] = seen.emplace(trace.pool, path);
    if (!fresh) {
      spotdnn::detail::fail(fn, path, trace.pool.name(),
                   "the pool is given twice (also by " + where->second + "): give each pool's trace once");
    }
    if (traces.size() == kMaxTracePools) {
      spotdnn::detail::fail(fn, path, std::to_string(traces.size() + 1) + " pools", "at most " + std::to_string(kMaxTracePools) + " pools at once");
    }
    traces.push_back(std::move(trace));
  };
  for (const std::string& path : paths) {
    const std::string observed_from = observed_from_trace_path(path);
    std::string text;  // an events file's text, read once
    if (options.fleet || options.kind == TraceKind::events) {
      text = read_checked_file(path, kMaxTraceFileBytes, fn);
      if (options.fleet || is_fleet_trace_text(text)) {
        if (!options.type.empty() || !options.zone.empty()) {
          spotdnn::detail::fail(fn, path, spotdnn::detail::quoted(options.type.empty() ? options.zone : options.type),
                       "a fleet log names its pools in its rows: leave out --type and --zone");
        }
        if (options.requested != 1) {
          spotdnn::detail::fail(fn, path, std::to_string(options.requested), "--requested applies to counts traces only");
        }
        for (PoolTrace& trace : spotdnn::detail::parse_fleet_trace("read_fleet_trace", text, path, observed_from)) {
          add(std::move(trace), path);
        }
        continue;
      }
    }
    TraceSource source;
    source.kind = options.kind;
    source.requested = options.requested;
    source.name = path;
    source.observed_from = observed_from;
    source.pool.type = options.type;
    source.pool.zone = options.zone;
    if (source.pool.type.empty()) {
      const PoolId named = pool_from_trace_file_name(path, options.gpu_map);
      source.pool.type = named.type;
      if (source.pool.zone.empty()) source.pool.zone = named.zone;
    } else if (source.pool.zone.empty()) {
      std::string zone, token;
      if (!split_trace_file_name(path, zone, token)) {
        spotdnn::detail::fail(fn, "path", spotdnn::detail::quoted(path),
                     "the file name does not say the zone (expected <zone>_<gpu>_<n>.json, e.g. us-east-1c_v100_1.json): give --zone");
      }
      source.pool.zone = zone;
    }
    if (options.kind == TraceKind::events) {
      add(spotdnn::detail::parse_events_trace("read_events_trace", text, source), path);
    } else {
      add(read_series_trace(path, source), path);
    }
  }
  // Traces of different dates are not simultaneous: each is placed on the shared clock at its date's
  // distance from the earliest (whole days; traces without a date, or of one folder, stay at 0). Replay
  // then pairs only what was observed together, and the fit's cross-zone figures compare only that.
  const auto days_of = [](const std::string& date) -> std::optional<std::int64_t> {
    int y = 0, m = 0, d = 0;
    if (date.size() != 10 || std::sscanf(date.c_str(), "%4d-%2d-%2d", &y, &m, &d) != 3 || m < 1 || m > 12 || d < 1 || d > 31) {
      return std::nullopt;
    }
    // Days since 1970-01-01 (H. Hinnant's days_from_civil).
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
  };
  std::optional<std::int64_t> earliest;
  for (const PoolTrace& t : traces) {
    if (const auto days = days_of(t.observed_from)) earliest = earliest ? std::min(*earliest, *days) : *days;
  }
  if (earliest) {
    for (PoolTrace& t : traces) {
      if (const auto days = days_of(t.observed_from)) t.clock_offset_s = double(*days - *earliest) * 86400.0;
    }
  }
  return traces;
}

}  // namespace spotdnn::io
