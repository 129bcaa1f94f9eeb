// SPDX-License-Identifier: MIT
// Fuzzes the state file of `spotdnn replan --state`: parse_json + replan_state_from_json. An accepted
// state must read back unchanged from io::to_json, and re-planning it on the preset must give an answer
// or refuse it cleanly.
#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/presets.hpp>
#include <spotdnn/revocation/replan.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto state = fuzz::read_or_reject([&] { return io::replan_state_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!state) return 0;

  const std::string written = fuzz::must_succeed("to_json(state)", [&] { return io::to_json(*state).dump(); });
  const io::ReplanState back = fuzz::must_succeed("re-reading the written state",
                                                  [&] { return io::replan_state_from_json(io::parse_json(written, "written")); });
  fuzz::check(io::to_json(back).dump() == written, "the state does not round-trip: " + written);

  static const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const auto result = fuzz::read_or_reject([&] { return replan(model, state->request, state->options); });
  fuzz::check(!result || result->status == Status::optimal || result->status == Status::infeasible ||
                  result->status == Status::target_met_at_start,
              "replan answered neither optimal, infeasible nor target_met_at_start");
  return 0;
}
