#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/launch_command.hpp `spotdnn launch`: a plan document and an AWS configuration in, the bash
/// script that starts a new run out; with --join RUN_ID, a replan document's additions joined to a run.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/launcher.hpp>
#include <spotdnn/launcher/launch_plan_json.hpp>

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
                            "plan document, - for stdin: spotdnn plan|frontier --format json (a replan document with --join)")
        ->required()
        ->check(non_empty_path());
    add_aws_option(*subcommand_, aws_path_);
    subcommand_->add_option("--join", join_run_id_, "add the replan document's additions to this run (its id, as launch printed it)");
    subcommand_->add_flag("--region-override", options_.region_override,
                          "launch in the AWS configuration's region even though the plan was priced for another");
    subcommand_->add_flag("--fleet", options_.fleet, "launch spot workers with EC2 Fleet 'instant' requests instead of run-instances");
    add_script_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    require_one_stdin({{"--plan", plan_path_}, {"--aws", aws_path_}});
    const launcher::LaunchPlan plan = read_json_input(
        "--plan", plan_path_,
        [](const io::Json& json, const std::string& file) {
          return launcher::launch_plan_from_json(json, "plan", "read_launch_plan_file(" + file + ")");
        },
        [](const std::string& file) { return launcher::read_launch_plan_file(file); });
    const launcher::AwsConfig aws = read_aws_input(aws_path_);
    const bool join = subcommand_->count("--join") > 0;
    if (join) require_run_id_option("--join", join_run_id_);
    const std::string script = join ? launcher::join_script(plan, join_run_id_, aws, options_) : launcher::launch_script(plan, aws, options_);
    nlohmann::ordered_json about;
    about["run_id"] = join ? nlohmann::ordered_json(join_run_id_) : nlohmann::ordered_json(nullptr);
    about["region"] = aws.region;
    about["plan_region"] = plan.region;
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
  std::string plan_path_;
  std::string aws_path_;
  std::string join_run_id_;
  launcher::LaunchOptions options_;
  OutputFormat format_ = OutputFormat::script;
};

}  // namespace spotdnn::cli
