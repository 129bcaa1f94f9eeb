#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/launch_command.hpp `spotdnn launch`: a plan and an AWS configuration in, a bash launch script out.

#include <ostream>
#include <string>

#include <spotdnn/io/aws_config_json.hpp>
#include <spotdnn/launcher.hpp>

#include "command.hpp"

namespace spotdnn::cli {

class LaunchCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("launch", "write the bash script that launches a plan on AWS (to stdout)");
    subcommand_->add_option("--plan", plan_path_, "plan JSON (the output of spotdnn plan/predict --format json)")->required();
    subcommand_->add_option("--aws", aws_path_, "AWS JSON: region, subnet_id, security_group_ids, image_id, checkpoint_s3_uri, ...")
        ->required();
    subcommand_->add_option("--catalog", catalog_path_, "catalog JSON for GPUs per type (default: the embedded preset)");
    subcommand_->add_option("--plan-id", plan_id_, "tag value naming this launch (default: the plan's plan_id, else a hash)");
    subcommand_->add_flag("--fleet", fleet_, "launch workers with EC2 Fleet 'instant' requests instead of run-instances");
  }

  int run(std::ostream& out) override {
    const launcher::LaunchPlan plan = io::read_launch_plan_file(plan_path_, plan_id_);
    const launcher::AwsConfig aws = io::read_aws_config_file(aws_path_);
    const Catalog catalog = catalog_path_.empty() ? presets::resnet110_catalog() : io::read_catalog_file(catalog_path_);
    launcher::LaunchOptions options;
    options.fleet = fleet_;
    out << launcher::launch_script(plan, catalog, aws, options);
    return 0;
  }

 private:
  std::string plan_path_;
  std::string aws_path_;
  std::string catalog_path_;
  std::string plan_id_;
  bool fleet_ = false;
};

}  // namespace spotdnn::cli
