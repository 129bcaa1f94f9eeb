// SPDX-License-Identifier: MIT
// Fuzzes the throughput-trace CSV reader: parse_throughput_trace. An accepted trace must validate, and
// every sample's cluster must read back from its own TYPE=N;TYPE=N text.
#include <spotdnn/io/csv.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto trace = fuzz::read_or_reject([&] { return parse_throughput_trace(fuzz::as_text(data, size), "fuzz.csv"); });
  if (!trace) return 0;

  fuzz::must_succeed("validate_throughput_trace", [&] { validate_throughput_trace(*trace); });
  for (const ThroughputSample& s : trace->samples) {
    const std::string text = s.cluster.to_string(';');
    const Cluster back = fuzz::must_succeed("re-reading a sample's cluster", [&] { return Cluster::parse(text, ';'); });
    fuzz::check(back == s.cluster, "a sample's cluster does not round-trip: " + text);
  }
  return 0;
}
