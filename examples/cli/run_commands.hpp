#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/run_commands.hpp `spotdnn status` and `spotdnn teardown`: the bash scripts that list and
/// terminate the instances of one run, selected by its exact run tag.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/run_scripts.hpp>

#include "command.hpp"
#include "script_output.hpp"

namespace spotdnn::cli {

/// One of the two run commands: `status` or `teardown`.
class RunCommand : public Command {
 public:
  enum class Kind { status, teardown };
  explicit RunCommand(Kind kind) : kind_(kind) {}

  void attach(CLI::App& parent) override {
    subcommand_ = kind_ == Kind::status
                      ? parent.add_subcommand("status", "write the bash script that lists the instances of a run (exit 3: none)")
                      : parent.add_subcommand("teardown", "write the bash script that terminates the instances of a run (exit 3: none)");
    add_run_option(*subcommand_, run_id_);
    add_aws_option(*subcommand_, aws_path_);
    add_script_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    require_run_id_option("--run", run_id_);
    const launcher::AwsConfig aws = read_aws_input(aws_path_);
    const std::string script =
        kind_ == Kind::status ? launcher::status_script(run_id_, aws) : launcher::teardown_script(run_id_, aws);
    nlohmann::ordered_json about;
    about["run_id"] = run_id_;
    about["region"] = aws.region;
    write_script(out, format_, name(), about, script);
    return 0;
  }

 private:
  Kind kind_;
  std::string run_id_;
  std::string aws_path_;
  OutputFormat format_ = OutputFormat::script;
};

}  // namespace spotdnn::cli
