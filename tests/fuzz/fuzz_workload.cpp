// SPDX-License-Identifier: MIT
// Fuzzes the workload reader: parse_json + workload_from_json. An accepted workload must bind to the
// preset catalog or be refused cleanly, and must read back from its own JSON unchanged.
#include <vector>

#include <spotdnn/io/json.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/presets.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto workload = fuzz::read_or_reject([&] { return io::workload_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!workload) return 0;

  const std::string written = fuzz::must_succeed("to_json(workload)", [&] { return io::to_json(*workload).dump(); });
  const Workload back = fuzz::must_succeed("re-reading the written workload",
                                           [&] { return io::workload_from_json(io::parse_json(written, "written")); });
  fuzz::check(io::to_json(back).dump() == written, "the workload does not round-trip: " + written);

  const auto model = fuzz::read_or_reject([&] { return PerformanceModel(*workload, presets::resnet110_catalog()); });
  if (model && !model->worker_types().empty()) {
    const std::vector<int> one_each(model->worker_types().size(), 1);
    (void)model->estimate(one_each.data(), 0.8);
  }
  return 0;
}
