// SPDX-License-Identifier: MIT
// Fuzzes what `spotdnn launch --serverless --plan` reads: parse_json + serverless_launch_plan_from_json.
// An accepted document must read back unchanged from the document serverless_launch_plan_document writes
// for it, and the launch script of an accepted plan must be written without an error.
#include <spotdnn/launcher/serverless_launch_script.hpp>
#include <spotdnn/launcher/serverless_plan_json.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto plan = fuzz::read_or_reject(
      [&] { return launcher::serverless_launch_plan_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!plan) return 0;

  fuzz::check(plan->aggregators >= 1 && plan->aggregators <= plan->workers, "an accepted plan has aggregators outside 1..workers");
  const int timeout = plan->function_timeout_s();
  fuzz::check(timeout >= 1 && timeout <= launcher::kLambdaMaxTimeoutS, "the function timeout is outside 1..900 s");
  const std::string written =
      fuzz::must_succeed("serverless_launch_plan_document(plan)", [&] { return launcher::serverless_launch_plan_document(*plan).dump(); });
  const launcher::ServerlessLaunchPlan back = fuzz::must_succeed("re-reading the written document", [&] {
    return launcher::serverless_launch_plan_from_json(io::parse_json(written, "written"));
  });
  fuzz::check(launcher::serverless_launch_plan_document(back).dump() == written, "the written document does not round-trip: " + written);

  launcher::AwsConfig config;
  config.region = "us-east-1";
  launcher::ServerlessConfig serverless;
  serverless.image_uri = "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest";
  serverless.role_arn = "arn:aws:iam::123456789012:role/fasdl";
  config.serverless = serverless;
  const std::string script = fuzz::must_succeed("serverless_launch_script(plan)", [&] { return launcher::serverless_launch_script(*plan, config); });
  fuzz::check(script.find("spotdnn run: $RUN_ID") != std::string::npos, "the script does not print its run id");
  return 0;
}
