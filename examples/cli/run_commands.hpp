#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/run_commands.hpp `spotdnn status` and `spotdnn teardown`: the bash scripts that list and
/// terminate the instances of one run, selected by its exact run tag; with --serverless, that list and
/// delete the Lambda functions and the exchange bucket of one serverless run. The AWS configuration may
/// hold several regions: --region picks the run's (read_run_aws_input).

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/run_scripts.hpp>
#include <spotdnn/launcher/serverless_run_scripts.hpp>

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
                      ? parent.add_subcommand("status", "write the bash script that lists the instances of a run, or with --serverless its Lambda functions and bucket (exit 3: none)")
                      : parent.add_subcommand("teardown", "write the bash script that terminates the instances of a run, or with --serverless deletes its Lambda functions and bucket (exit 3: none)");
    add_run_option(*subcommand_, run_id_);
    add_aws_option(*subcommand_, aws_path_);
    add_run_region_option(*subcommand_, region_);
    subcommand_->add_flag("--serverless", serverless_,
                          kind_ == Kind::status
                              ? "a serverless run (launch --serverless): list its Lambda functions and exchange bucket; the AWS JSON "
                                "needs region and serverless{...}"
                              : "a serverless run (launch --serverless): delete its Lambda functions and empty and delete its "
                                "exchange bucket (each only if tagged with the run); the AWS JSON needs region and serverless{...}");
    add_script_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    require_run_id_option("--run", run_id_);
    if (serverless_) return run_serverless(out);
    const launcher::AwsConfig aws = read_run_aws_input(aws_path_, region_);
    const std::string script =
        kind_ == Kind::status ? launcher::status_script(run_id_, aws) : launcher::teardown_script(run_id_, aws);
    nlohmann::ordered_json about;
    about["run_id"] = run_id_;
    about["region"] = aws.region;
    write_script(out, format_, name(), about, script);
    return 0;
  }

 private:
  /// `status --serverless` and `teardown --serverless`: the serverless run scripts (or their JSON document).
  int run_serverless(std::ostream& out) {
    const launcher::AwsConfig aws = read_run_aws_input(aws_path_, region_, {}, launcher::AwsConfigUse::serverless);
    const std::string script = kind_ == Kind::status ? launcher::serverless_status_script(run_id_, aws)
                                                     : launcher::serverless_teardown_script(run_id_, aws);
    nlohmann::ordered_json about;
    about["run_id"] = run_id_;
    about["region"] = aws.region;
    about["function_prefix"] = std::string(launcher::kServerlessFunctionPrefix) + run_id_ + "-";
    about["bucket"] = aws.serverless->bucket_prefix + "-" + run_id_;
    write_script(out, format_, name() + "-serverless", about, script);
    return 0;
  }

  Kind kind_;
  std::string run_id_;
  std::string aws_path_;
  std::string region_;  ///< --region (empty: not given)
  bool serverless_ = false;
  OutputFormat format_ = OutputFormat::script;
};

}  // namespace spotdnn::cli
