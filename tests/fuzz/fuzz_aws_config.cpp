// SPDX-License-Identifier: MIT
// Fuzzes the AWS configuration reader: parse_json + aws_config_from_json. An accepted configuration must
// read back unchanged from the JSON of its fields, and must give a launch script for a one-worker plan
// or be refused cleanly (e.g. user data over 16 KB).
#include <spotdnn/io/aws_config_json.hpp>
#include <spotdnn/launcher/aws_cli.hpp>
#include <spotdnn/presets.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

namespace {

/// Every field under its key (spotdnn has no writer for this file: people write it).
io::Json written_config(const launcher::AwsConfig& c) {
  return {{"region", c.region},
          {"subnet_id", c.subnet_id},
          {"security_group_ids", c.security_group_ids},
          {"image_id", c.image_id},
          {"image_ids", c.image_ids},
          {"key_name", c.key_name},
          {"iam_instance_profile", c.iam_instance_profile},
          {"checkpoint_s3_uri", c.checkpoint_s3_uri},
          {"checkpoint_dir", c.checkpoint_dir},
          {"tags", c.tags},
          {"placement_group", c.placement_group},
          {"create_placement_group", c.create_placement_group},
          {"parameter_server_type", c.parameter_server_type},
          {"training_command", c.training_command},
          {"revocation_hook", c.revocation_hook},
          {"poll_interval_s", c.poll_interval_s},
          {"checkpoint_sync_interval_s", c.checkpoint_sync_interval_s},
          {"metadata_hop_limit", c.metadata_hop_limit}};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto config = fuzz::read_or_reject([&] { return io::aws_config_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!config) return 0;

  const std::string written = written_config(*config).dump();
  const launcher::AwsConfig back = fuzz::must_succeed("re-reading the written configuration",
                                                      [&] { return io::aws_config_from_json(io::parse_json(written, "written")); });
  fuzz::check(written_config(back).dump() == written, "the configuration does not round-trip: " + written);

  static const Catalog catalog = presets::resnet110_catalog();
  launcher::LaunchPlan plan;
  plan.plan_id = "fuzz";
  plan.cluster = Cluster{{"p3.2xlarge", 1}};
  const auto script = fuzz::read_or_reject([&] { return launcher::launch_script(plan, catalog, *config); });
  fuzz::check(!script || script->rfind("#!/usr/bin/env bash\n", 0) == 0, "the launch script has no shebang");
  return 0;
}
