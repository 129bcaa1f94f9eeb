#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/launch_command.hpp `spotdnn launch`: a plan document and an AWS configuration in, the bash
/// script that starts a new run out (a frontier document with --step N: that step's plan); with --join
/// RUN_ID, a replan document's additions joined to a run; with --serverless, a serverless plan
/// document's Lambda functions and exchange bucket.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/launcher.hpp>
#include <spotdnn/launcher/launch_plan_json.hpp>
#include <spotdnn/launcher/serverless_launch_script.hpp>
#include <spotdnn/launcher/serverless_plan_json.hpp>

#include "command.hpp"
#include "options.hpp"
#include "script_output.hpp"

namespace spotdnn::cli {

class LaunchCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand(
        "launch", "write the bash script that starts a run of a plan on AWS (or, with --join, adds a replan's instances to a run)");
    subcommand_->add_option("--plan", plan_path_,
                            "plan document, - for stdin: spotdnn plan --format json, or spotdnn frontier --format json with "
                            "--step N (a replan document with --join, a serverless plan document with --serverless)")
        ->required()
        ->check(non_empty_path());
    subcommand_->add_option("--step", step_,
                            "with a frontier document: launch its step N (numbered from 1 by increasing deadline, as the "
                            "frontier table numbers them)")
        ->type_name("N");
    add_aws_option(*subcommand_, aws_path_);
    subcommand_->add_option("--join", join_run_id_, "add the replan document's additions to this run (its id, as launch printed it)");
    subcommand_->add_flag("--region-override", options_.region_override,
                          "launch in the AWS configuration's region even though the plan was priced for another (a "
                          "configuration of one region only: with a regions map, launch picks the plan's region's entry)");
    subcommand_->add_flag("--fleet", options_.fleet, "launch spot workers with EC2 Fleet 'instant' requests instead of run-instances");
    subcommand_->add_flag("--serverless", serverless_,
                          "launch a serverless plan (spotdnn serverless plan --format json) on AWS Lambda: the functions and the "
                          "exchange bucket; the AWS JSON needs region and serverless{image_uri, role_arn}");
    add_run_region_option(*subcommand_, serverless_region_);
    subcommand_->get_option("--region")->description(
        "with --serverless: the region to create the functions in, a key of the AWS JSON's regions map (needed when "
        "it holds several; a one-region AWS JSON: its region or left out). An EC2 plan carries its region");
    add_script_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    require_one_stdin({{"--plan", plan_path_}, {"--aws", aws_path_}});
    if (serverless_) return run_serverless(out);
    if (subcommand_->count("--region") > 0) {
      throw usage_error("--region is for --serverless launches: an EC2 plan carries its region, and launch takes that "
                        "region's entry of the AWS JSON's regions map");
    }
    const launcher::LaunchPlan plan = read_json_input(
        "--plan", plan_path_,
        [this](const io::Json& json, const std::string& file) { return spot_plan_from_json(json, file, step_); },
        [this](const std::string& file) { return spot_plan_from_json(io::read_json_file(file), file, step_); });
    const launcher::AwsConfig aws = aws_for_plan(read_aws_region_configs(), plan);
    const bool join = subcommand_->count("--join") > 0;
    if (join) require_run_id_option("--join", join_run_id_);
    const std::string script = join ? launcher::join_script(plan, join_run_id_, aws, options_) : launcher::launch_script(plan, aws, options_);
    nlohmann::ordered_json about;
    about["run_id"] = join ? nlohmann::ordered_json(join_run_id_) : nlohmann::ordered_json(nullptr);
    about["region"] = aws.region;
    about["plan_region"] = plan.region;
    about["zone"] = plan.zone.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(plan.zone);
    about["subnet_id"] = aws.subnet_for(plan.zone);
    about["parameter_server"] = join ? nlohmann::ordered_json(nullptr)
                                     : nlohmann::ordered_json{{"type", plan.parameter_server_type}, {"market", "on-demand"}};
    nlohmann::ordered_json workers = nlohmann::ordered_json::array();
    for (const launcher::WorkerGroup& g : plan.workers) {
      workers.push_back({{"type", g.type}, {"count", g.count}, {"gpus", g.gpus}, {"market", std::string(to_string(g.market))}});
    }
    about["workers"] = workers;
    write_script(out, format_, join ? "join" : "launch", about, script);
    return 0;
  }

 private:
  /// A plan or replan document, or step `step` of a frontier document; a serverless plan document is
  /// refused with the flag it needs.
  static launcher::LaunchPlan spot_plan_from_json(const io::Json& json, const std::string& file, std::optional<std::int64_t> step) {
    const std::string function = "read_launch_plan_file(" + file + ")";
    if (json.is_object() && json.contains("kind") && json["kind"] == launcher::kServerlessPlanDocumentKind) {
      spotdnn::detail::fail(function, "plan.kind", spotdnn::detail::quoted(launcher::kServerlessPlanDocumentKind),
                            "a serverless plan launches Lambda functions: add --serverless");
    }
    // --step is the user's option, not a key of the file: its refusals name it (the library says the same
    // of the document's key path).
    if (step) {
      const std::string given = "--step = " + std::to_string(*step);
      if (!launcher::is_frontier_document(json)) {
        if (json.is_object() && json.contains("kind") &&
            (json["kind"] == io::kPlanDocumentKind || json["kind"] == io::kReplanDocumentKind)) {
          throw usage_error(given + ": only a frontier document (spotdnn frontier --format json) has steps; launch this document "
                                    "without --step");
        }
      } else if (const std::size_t count = json["steps"].size(); count > 0 && (*step < 1 || std::uint64_t(*step) > count)) {
        throw usage_error(given + ": the frontier has steps " +
                          (count == 1 ? std::string("1 (it has one step)") : "1 to " + std::to_string(count)));
      }
    }
    return launcher::launch_plan_from_document(json, step, "plan", function);
  }

  /// The AWS configuration of --aws in either form (one region, or a `regions` map of several).
  [[nodiscard]] launcher::AwsRegionConfigs read_aws_region_configs() const {
    return read_json_input(
        "--aws", aws_path_,
        [](const io::Json& json, const std::string& file) {
          return launcher::aws_region_configs_from_json(json, "aws", "read_aws_config_file(" + file + ")");
        },
        [](const std::string& file) { return launcher::read_aws_region_configs_file(file); });
  }

  /// The settings `plan` launches with: a configuration of one region gives its own (the launch script
  /// then refuses another region than the plan's unless --region-override); a `regions` map gives the
  /// plan's region's entry, and a plan whose region has none is refused naming the regions there are.
  [[nodiscard]] launcher::AwsConfig aws_for_plan(const launcher::AwsRegionConfigs& configs, const launcher::LaunchPlan& plan) const {
    if (configs.regions.size() > 1 && configs.regions.count(plan.region) == 0) {
      throw usage_error("--aws: the plan was priced in " + plan.region + ", and the AWS configuration's regions map gives settings for " +
                        configs.region_names() + " only: add \"" + plan.region +
                        "\": {subnet_ids, security_group_ids, image_id, ...} to regions, or plan in one of those regions" +
                        (options_.region_override ? " (--region-override applies only to a configuration of one region)" : ""));
    }
    return configs.for_launch(plan.region);
  }

  /// `launch --serverless`: the serverless launch script (or its JSON document).
  int run_serverless(std::ostream& out) {
    for (const char* spot_only : {"--join", "--fleet", "--region-override", "--step"}) {
      if (subcommand_->count(spot_only) > 0) {
        throw usage_error(std::string(spot_only) + " is for EC2 launches and does not go with --serverless" +
                          (std::string_view(spot_only) == "--region-override"
                               ? " (a serverless plan has no region: the functions are created in the AWS configuration's region)"
                               : ""));
      }
    }
    const launcher::ServerlessLaunchPlan plan = read_json_input(
        "--plan", plan_path_,
        [](const io::Json& json, const std::string& file) {
          return launcher::serverless_launch_plan_from_json(json, "plan", "read_serverless_launch_plan_file(" + file + ")");
        },
        [](const std::string& file) { return launcher::read_serverless_launch_plan_file(file); });
    const launcher::AwsConfig aws = read_run_aws_input(aws_path_, serverless_region_, {}, launcher::AwsConfigUse::serverless);
    const std::string script = launcher::serverless_launch_script(plan, aws);
    nlohmann::ordered_json about;
    about["run_id"] = nullptr;
    about["region"] = aws.region;
    nlohmann::ordered_json functions;
    functions["count"] = plan.workers;
    functions["aggregators"] = plan.aggregators;
    functions["memory_mb"] = plan.memory_mb;
    functions["timeout_s"] = plan.function_timeout_s();
    functions["image_uri"] = aws.serverless->image_uri;
    functions["role_arn"] = aws.serverless->role_arn;
    functions["architecture"] = aws.serverless->architecture;
    about["functions"] = functions;
    about["bucket_prefix"] = aws.serverless->bucket_prefix;
    write_script(out, format_, "launch-serverless", about, script);
    return 0;
  }

  std::string plan_path_;
  std::string aws_path_;
  std::string join_run_id_;
  std::string serverless_region_;  ///< --region (launch --serverless only)
  std::optional<std::int64_t> step_;
  launcher::LaunchOptions options_;
  bool serverless_ = false;
  OutputFormat format_ = OutputFormat::script;
};

}  // namespace spotdnn::cli
