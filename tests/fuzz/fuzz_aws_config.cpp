// SPDX-License-Identifier: MIT
// Fuzzes the AWS configuration reader: parse_json + aws_config_from_json. An accepted configuration must
// read back unchanged from the JSON of its fields; must give launch scripts (run-instances and EC2 Fleet)
// for a fixed two-group plan and a join script for a fixed replan, or be refused for the one reason left
// (user data over 16 KB); and must always give the status and teardown scripts of a run.
#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

namespace {

/// Every field under its key (spotdnn has no writer for this file: people write it); the subnets as given
/// (subnet_id, subnet_ids or both).
io::Json written_config(const launcher::AwsConfig& c) {
  io::Json written = {{"region", c.region},
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
  if (!c.subnet_id.empty()) written["subnet_id"] = c.subnet_id;
  if (!c.subnet_ids.empty()) written["subnet_ids"] = c.subnet_ids;
  return written;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Either form (one region, or a `regions` map of several): every entry accepted is a configuration of
  // its own region that the one-region reader accepts back.
  if (const auto configs = fuzz::read_or_reject(
          [&] { return launcher::aws_region_configs_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); })) {
    for (const auto& [region, entry] : configs->regions) {
      fuzz::check(entry.region == region, "a regions entry holds another region than its key: " + region);
      const std::string entry_written = written_config(entry).dump();
      (void)fuzz::must_succeed("re-reading a region's configuration",
                               [&] { return launcher::aws_config_from_json(io::parse_json(entry_written, "written")); });
    }
  }

  const auto config = fuzz::read_or_reject([&] { return launcher::aws_config_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!config) return 0;

  const std::string written = written_config(*config).dump();
  const launcher::AwsConfig back = fuzz::must_succeed("re-reading the written configuration",
                                                      [&] { return launcher::aws_config_from_json(io::parse_json(written, "written")); });
  fuzz::check(written_config(back).dump() == written, "the configuration does not round-trip: " + written);

  // A fixed valid plan and replan: a spot and an on-demand group (so both launch paths and, with EC2
  // Fleet, a launch template are built), priced in the configuration's region or launched there with
  // --region-override; in no zone when the configuration gives subnet_id, else in its first zone of
  // subnet_ids (a plan without a zone launches in subnet_id, a plan in a zone in subnet_ids[zone]).
  static const launcher::LaunchPlan zoneless_plan = [] {
    launcher::LaunchPlan p;
    p.region = "us-east-1";
    p.workload_name = "fuzz";
    p.target_loss = 0.5;
    p.deadline_s = 3600;
    p.workers = {{"p3.2xlarge", 2, 1, Market::spot}, {"g3.8xlarge", 1, 2, Market::on_demand}};
    p.parameter_server_type = "m5.xlarge";
    return p;
  }();
  launcher::LaunchPlan plan = zoneless_plan;
  if (config->subnet_id.empty() && !config->subnet_ids.empty()) plan.zone = config->subnet_ids.begin()->first;
  // The replan adds the same groups, so launch and join build the same worker user data.
  launcher::LaunchPlan replan = plan;
  replan.kind = std::string(launcher::kReplanDocumentKind);
  replan.survivors = Cluster{{"p3.2xlarge", 1}, {"g3.8xlarge", 1}};
  const std::string run_id = "20260301-120000-0a1b2c";
  launcher::LaunchOptions options;
  options.region_override = true;
  options.fleet = (size % 2) == 1;

  // The only refusal left once the configuration is valid: a user data script over 16 KB.
  const auto launched = [&](const char* what, auto&& emit) -> std::optional<std::string> {
    try {
      return emit();
    } catch (const spotdnn::invalid_argument& e) {
      fuzz::check_one_line(e);
      const std::string message = e.what();
      fuzz::check(message.find("EC2 user data is limited to 16384 bytes") != std::string::npos,
                  std::string(what) + " refused an accepted configuration: " + message);
      return std::nullopt;
    }
  };
  const auto script = launched("launch_script", [&] { return launcher::launch_script(plan, *config, options); });
  const auto join = launched("join_script", [&] { return launcher::join_script(replan, run_id, *config, options); });
  fuzz::check(script.has_value() == join.has_value(), "launch and join disagree about the user data size");
  if (script) {
    fuzz::check(script->rfind("#!/usr/bin/env bash\n", 0) == 0, "the launch script has no shebang");
    fuzz::check(script->size() >= 7 && script->compare(script->size() - 7, 7, "launch\n") == 0, "the launch script does not end by launching");
    fuzz::check(join->rfind("#!/usr/bin/env bash\n", 0) == 0, "the join script has no shebang");
    // Every user data fits with the longest values the script can fill in.
    for (const launcher::InstanceRole& who : {launcher::InstanceRole{"ps", "m5.xlarge", Market::on_demand},
                                              launcher::InstanceRole{"worker", "p3.2xlarge", Market::spot},
                                              launcher::InstanceRole{"worker", "g3.8xlarge", Market::on_demand}}) {
      const launcher::BashTemplate t = fuzz::must_succeed("user_data_template", [&] {
        return launcher::user_data_template(*config, who, who.role == "ps" ? 0 : 1);
      });
      fuzz::check(t.filled(launcher::longest_slot_values()).size() <= launcher::kUserDataLimitBytes, "user data over 16 KB accepted");
      fuzz::check(t.slots.size() == t.pieces.size() - 1, "a template's pieces and holes do not add up");
    }
  }
  const std::string status = fuzz::must_succeed("status_script", [&] { return launcher::status_script(run_id, *config); });
  const std::string teardown = fuzz::must_succeed("teardown_script", [&] { return launcher::teardown_script(run_id, *config); });
  fuzz::check(status.find("readonly RUN_ID='" + run_id + "'\n") != std::string::npos, "the status script lost its run id");
  fuzz::check(teardown.find("readonly RUN_ID='" + run_id + "'\n") != std::string::npos, "the teardown script lost its run id");
  return 0;
}
