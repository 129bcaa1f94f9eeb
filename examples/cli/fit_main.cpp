// SPDX-License-Identifier: MIT
// `spotdnn-fit`: the `spotdnn fit loss|throughput` and `spotdnn serverless fit` commands as their own program,
// the only one that links Ceres. `spotdnn fit ...` and `spotdnn serverless fit ...` exec it with the same
// arguments (cli/fit_program.hpp), so it parses and reports exactly as the `spotdnn` tool does: messages start
// "spotdnn fit" or "spotdnn serverless fit", exit codes 0, 1, 2 and 3 as in main.cpp (program.hpp holds what
// both share).
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <glog/logging.h>

#include <spotdnn/version.hpp>

#include "command.hpp"
#include "fit_command.hpp"
#include "program.hpp"
#include "serverless_fit_command.hpp"
#include "workload_build_command.hpp"

namespace {

using spotdnn::cli::kExitBadInput;
using spotdnn::cli::one_line;

/// Ceres reports through glog even with logging_type = SILENT (e.g. "Terminating: Residual and Jacobian
/// evaluation failed." at ERROR when a start point cannot be evaluated, which the fit handles by trying the
/// next start). The fit's report says what happened; glog's lines would only break the rule that stderr
/// carries nothing but the one error line. Only fatal messages (a failed Ceres CHECK) still reach stderr.
/// glog is not initialised, so it writes no log files.
void silence_ceres_logging() {
  FLAGS_minloglevel = google::GLOG_FATAL;
  FLAGS_stderrthreshold = google::GLOG_FATAL;
  FLAGS_logtostderr = false;
}

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  silence_ceres_logging();
  return spotdnn::cli::run_guarded(run, argc, argv);
}

namespace {

int run(int argc, char** argv) {
  using namespace spotdnn::cli;
  FitCommand fit;
  ServerlessFitCommand serverless;
  WorkloadBuildCommand workload;
  Command* const commands[] = {&fit, &serverless, &workload};

  CLI::App app{"spotdnn: plan distributed DNN training on cloud spot instances (ResNet-110 preset by default)", "spotdnn"};
  app.set_version_flag("--version", std::string("spotdnn ") + spotdnn::kVersionString);
  app.require_subcommand(1);
  app.footer("Run `spotdnn help COMMAND` (or `spotdnn COMMAND --help`) for a command's options.");
  for (Command* command : commands) command->attach(app);

  if (argc > 1 && argv[1][0] != '-' && find_subcommand(app, argv[1]) == nullptr) {
    std::cerr << "spotdnn: error: unknown command \"" << one_line(argv[1]) << "\" (spotdnn-fit runs: fit, serverless fit, workload build)\n";
    return kExitBadInput;
  }
  if (const std::optional<int> stop = parse_command_line(app, argc, argv)) return *stop;
  for (Command* command : commands) {
    if (command->chosen()) return run_command(*command);
  }
  std::cerr << "spotdnn: error: give the command first (see spotdnn --help)\n";
  return kExitBadInput;
}

}  // namespace
