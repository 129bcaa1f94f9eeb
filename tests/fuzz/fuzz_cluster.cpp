// SPDX-License-Identifier: MIT
// Fuzzes cluster strings: Cluster::parse with ',' (--cluster, --keep) and ';' (a trace's cluster cell).
// An accepted cluster must read back from its own to_string() and count its workers without overflow.
#include <spotdnn/cluster.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  for (const char separator : {',', ';'}) {
    const auto cluster = fuzz::read_or_reject([&] { return Cluster::parse(text, separator); });
    if (!cluster) continue;
    (void)cluster->total_workers();
    if (cluster->empty()) continue;  // every count 0: to_string() is "", which parse() refuses
    const std::string written = cluster->to_string(separator);
    const Cluster back = fuzz::must_succeed("re-reading the written cluster", [&] { return Cluster::parse(written, separator); });
    fuzz::check(back == *cluster, "the cluster does not round-trip: " + written);
  }
  return 0;
}
