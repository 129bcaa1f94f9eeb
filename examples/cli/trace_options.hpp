#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/trace_options.hpp --trace FILE (repeatable), --kind, --type, --zone, --requested, --gpu-map:
/// which spot traces a command reads and how (docs/traces.md). Shared by `revocations fit`,
/// `revocations check` and `replay`.

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/io/trace_readers.hpp>
#include <spotdnn/limits.hpp>
#include <spotdnn/revocation/trace.hpp>

#include "command.hpp"

namespace spotdnn::cli {

struct TraceCliOptions {
  std::vector<std::string> paths;
  std::string kind_text;
  std::string type;
  std::string zone;
  int requested = 0;
  std::string gpu_map_text;

  void add_to(CLI::App& app) {
    app.add_option("--trace", paths,
                   "a trace file (repeat for several pools; series of one folder share one clock): a JSON series "
                   "<zone>_<gpu>_<n>.json, an events CSV (ms,add|remove,node) or a fleet CSV (time_s,pool,instance,event)")
        ->required()
        ->check(non_empty_path());
    app.add_option("--kind", kind_text,
                   "what the files record: lifetimes (1 = our instance is up), availability (1 = a one-time request "
                   "succeeded), counts (instances obtained of --requested N), events (node add/remove CSV) or fleet "
                   "(our own fleet log CSV)")
        ->required();
    app.add_option("--type", type, "the instance type of every trace (default: from the file name through the GPU map)")
        ->check(non_empty_text("an instance type", "leave --type out to take it from the file name"));
    app.add_option("--zone", zone, "the Availability Zone of the trace (one file; default: from the file name)")
        ->check(non_empty_text("an Availability Zone", "leave --zone out to take it from the file name"));
    app.add_option("--requested", requested, "counts traces: the number of instances requested at each tick (N)")
        ->check(CLI::Range(1, kMaxTraceRequested));
    app.add_option("--gpu-map", gpu_map_text,
                   "file-name GPU tokens to instance types, e.g. v100_1=p3.2xlarge,k80_1=p2.xlarge (added to and "
                   "overriding the default map)");
  }

  /// The traces, read and checked (spotdnn::invalid_argument naming the file otherwise).
  [[nodiscard]] std::vector<PoolTrace> read() const {
    io::TraceFileOptions o;
    if (kind_text == "fleet") {
      o.fleet = true;
    } else {
      const auto kind = trace_kind_from_string(kind_text);
      if (!kind) {
        throw usage_error("--kind = " + detail::quoted(kind_text) +
                          ": expected lifetimes, availability, counts, events or fleet");  // usage_words suggests
      }
      o.kind = *kind;
    }
    if (o.kind == TraceKind::counts && requested == 0 && !o.fleet) {
      throw usage_error("--kind counts needs --requested N (the instances asked for at each tick)");
    }
    o.requested = requested == 0 ? 1 : requested;
    o.type = type;
    o.zone = zone;
    if (!gpu_map_text.empty()) o.gpu_map = io::parse_gpu_map(gpu_map_text);
    return io::read_trace_files(paths, o);
  }
};

}  // namespace spotdnn::cli
