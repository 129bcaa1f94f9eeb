// SPDX-License-Identifier: MIT
// Fuzzes what `spotdnn launch --plan` reads: parse_json + launch_plan_from_json (plan and replan
// documents). An accepted document must read back unchanged from the document launch_plan_document
// writes for it, and that document must carry the kind and schema version this spotdnn reads.
#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/launcher/launch_plan_json.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto plan = fuzz::read_or_reject([&] { return launcher::launch_plan_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!plan) return 0;

  fuzz::check(!plan->workers.empty() && plan->worker_count() >= 1, "an accepted plan launches no workers");
  fuzz::check(plan->is_join() || plan->survivors.empty(), "a plan (not a replan) has survivors");
  const std::string written = fuzz::must_succeed("launch_plan_document(plan)", [&] { return launcher::launch_plan_document(*plan).dump(); });
  const launcher::LaunchPlan back = fuzz::must_succeed("re-reading the written document", [&] {
    return launcher::launch_plan_from_json(io::parse_json(written, "written"));
  });
  fuzz::check(back == *plan, "the plan does not round-trip: " + written);
  fuzz::check(launcher::launch_plan_document(back).dump() == written, "the written document does not round-trip: " + written);
  return 0;
}
