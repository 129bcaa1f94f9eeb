// SPDX-License-Identifier: MIT
// Fuzzes what `spotdnn launch --plan` reads: parse_json + launch_plan_from_json. An accepted plan must
// read back unchanged from {status, cluster, plan_id} written with io::to_json.
#include <spotdnn/io/aws_config_json.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto plan = fuzz::read_or_reject([&] { return io::launch_plan_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!plan) return 0;

  const io::Json written = {{"status", "feasible"}, {"cluster", io::to_json(plan->cluster)}, {"plan_id", plan->plan_id}};
  const launcher::LaunchPlan back = fuzz::must_succeed("re-reading the written plan", [&] {
    return io::launch_plan_from_json(io::parse_json(written.dump(), "written"));
  });
  fuzz::check(back.cluster == plan->cluster && back.plan_id == plan->plan_id, "the plan does not round-trip: " + written.dump());
  const std::string id = io::default_plan_id(plan->cluster);
  fuzz::check(id.size() == 13 && id.rfind("plan-", 0) == 0, "default_plan_id is not plan-XXXXXXXX: " + id);
  return 0;
}
