#pragma once
// SPDX-License-Identifier: MIT
/// @file support/preset_traces.hpp Trace files the tests feed to `spotdnn fit`, made from the ResNet-110
/// preset's own predictions so that a fit has a known answer.

#include <sstream>
#include <string>
#include <vector>

#include <spotdnn/planner.hpp>

namespace spotdnn::test {

/// A throughput trace (`cluster,iterations_per_s`) of the preset's predicted update rates for
/// `clusters` (`;` between a cluster's entries, as the trace format has it); by default five clusters,
/// homogeneous and mixed.
inline std::string preset_throughput_trace(const std::vector<std::string>& clusters = {
                                               "p3.2xlarge=2", "g4dn.4xlarge=4", "g3.8xlarge=2;p3.2xlarge=2",
                                               "g3.16xlarge=9", "g4dn.4xlarge=12"}) {
  const PerformanceModel truth(presets::resnet110_workload(), presets::resnet110_catalog());
  std::ostringstream csv;
  csv.precision(17);
  csv << "cluster,iterations_per_s\n";
  for (const std::string& c : clusters) {
    csv << '"' << c << "\"," << truth.estimate(truth.counts_of(Cluster::parse(c, ';')), 0.8).iterations_per_s << '\n';
  }
  return csv.str();
}

}  // namespace spotdnn::test
