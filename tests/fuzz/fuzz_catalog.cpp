// SPDX-License-Identifier: MIT
// Fuzzes the catalog reader: parse_json + catalog_from_json. An accepted catalog must bind to the
// preset workload or be refused cleanly, and must read back from its own JSON unchanged.
#include <vector>

#include <spotdnn/io/json.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/presets.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto catalog = fuzz::read_or_reject([&] { return io::catalog_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!catalog) return 0;

  const std::string written = fuzz::must_succeed("to_json(catalog)", [&] { return io::to_json(*catalog).dump(); });
  const Catalog back = fuzz::must_succeed("re-reading the written catalog",
                                          [&] { return io::catalog_from_json(io::parse_json(written, "written")); });
  fuzz::check(io::to_json(back).dump() == written, "the catalog does not round-trip: " + written);

  const auto model = fuzz::read_or_reject([&] { return PerformanceModel(presets::resnet110_workload(), *catalog); });
  if (model && !model->worker_types().empty()) {
    const std::vector<int> one_each(model->worker_types().size(), 1);
    (void)model->estimate(one_each.data(), 0.8);
  }
  return 0;
}
