// SPDX-License-Identifier: MIT
// Fuzzes the serverless profile reader: serverless_profile_from_json. An accepted profile must validate,
// round-trip through its document, and give a model (or a clear refusal) whose estimates are finite.
#include <cmath>

#include <spotdnn/io/serverless_profile_json.hpp>
#include <spotdnn/serverless/serverless_model.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto profile = fuzz::read_or_reject([&] {
    return io::serverless_profile_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz.json"), "profile", "fuzz");
  });
  if (!profile) return 0;
  fuzz::must_succeed("validate", [&] { profile->validate(); });
  const serverless::ServerlessProfile back = fuzz::must_succeed("re-reading the profile document", [&] {
    return io::serverless_profile_from_json(io::serverless_profile_document(*profile), "profile", "fuzz");
  });
  fuzz::check(back.a == profile->a && back.b == profile->b && back.m == profile->m && back.k1 == profile->k1 &&
                  back.k2 == profile->k2 && back.name == profile->name,
              "the profile does not round-trip");
  serverless::ServerlessWork work;
  work.epochs = 1;
  const auto model = fuzz::read_or_reject([&] { return serverless::ServerlessModel(*profile, work); });
  if (!model) return 0;
  const serverless::ServerlessEstimate e = model->estimate({1, 1024, 1});
  if (e.runnable()) {
    fuzz::check(std::isfinite(e.training_time_s) && e.training_time_s >= 0 && std::isfinite(e.cost_usd()) && e.cost_usd() >= 0,
                "a runnable configuration with a time or cost that is not finite and non-negative");
  }
  return 0;
}
