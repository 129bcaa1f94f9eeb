// SPDX-License-Identifier: MIT
// The `spotdnn` command-line tool: the library's functions over JSON/CSV files (design §7).
// Each command lives in its own header; add it with one #include and one push_back below.
#include <cstdio>
#include <iostream>
#include <new>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/detail/validate.hpp>
#include <spotdnn/errors.hpp>
#include <spotdnn/version.hpp>

#include "command.hpp"
#include "fit_command.hpp"
#include "frontier_command.hpp"
#include "launch_command.hpp"
#include "plan_command.hpp"
#include "predict_command.hpp"
#include "replan_command.hpp"
#include "run_commands.hpp"
#include "simulate_command.hpp"

namespace {

/// Exit codes: 0 success, 1 a resource failure or an unexpected internal failure, 2 bad input, 3 a valid
/// question without an answer. Exit codes 1 and 2 print exactly one line on stderr.
constexpr int kExitBadInput = 2;
constexpr int kExitFailure = 1;

/// `text` as one printable line: control characters and bytes that are not UTF-8 escaped, so that a
/// hostile value echoed in a message can neither add lines nor drive the terminal.
std::string one_line(std::string_view text) { return spotdnn::detail::escape_for_message(text); }

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  // Whatever fails, the user gets one line and an exit code, never std::terminate or a signal.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("spotdnn: error: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spotdnn: internal error: %s\n", one_line(e.what()).c_str());
  } catch (...) {
    std::fputs("spotdnn: internal error: unknown exception\n", stderr);
  }
  return kExitFailure;
}

namespace {

int run(int argc, char** argv) {
  using namespace spotdnn::cli;
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(std::make_unique<PredictCommand>());
  commands.push_back(std::make_unique<LaunchCommand>());
  commands.push_back(std::make_unique<FitCommand>());
  commands.push_back(std::make_unique<PlanCommand>());
  commands.push_back(std::make_unique<FrontierCommand>());
  commands.push_back(std::make_unique<SimulateCommand>());
  commands.push_back(std::make_unique<ReplanCommand>());
  commands.push_back(std::make_unique<RunCommand>(RunCommand::Kind::status));
  commands.push_back(std::make_unique<RunCommand>(RunCommand::Kind::teardown));

  CLI::App app{"spotdnn: plan distributed DNN training on cloud spot instances (ResNet-110 preset by default)", "spotdnn"};
  app.set_version_flag("--version", std::string("spotdnn ") + spotdnn::kVersionString);
  app.require_subcommand(1);
  for (auto& command : commands) command->attach(app);

  std::string known;
  bool is_known = false;
  for (auto& command : commands) {
    known += (known.empty() ? "" : ", ") + command->name();
    is_known = is_known || (argc > 1 && command->name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !is_known) {
    std::cerr << "spotdnn: error: unknown command \"" << one_line(argv[1]) << "\" (commands: " << known << ")\n";
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "spotdnn: error: " << one_line(e.what()) << " (see spotdnn --help)\n";
    return kExitBadInput;
  }

  for (auto& command : commands) {
    if (!command->chosen()) continue;
    std::ostringstream out;
    try {
      const int code = command->run(out);
      std::cout << out.str() << std::flush;
      return code;
    } catch (const spotdnn::invalid_argument& e) {
      std::cerr << "spotdnn " << command->name() << ": error: " << one_line(e.what()) << '\n';
      return kExitBadInput;
    } catch (const usage_error& e) {
      std::cerr << "spotdnn " << command->name() << ": error: " << one_line(e.what()) << '\n';
      return kExitBadInput;
    } catch (const std::bad_alloc&) {
      std::cerr << "spotdnn " << command->name() << ": error: out of memory\n";
      return kExitFailure;
    } catch (const spotdnn::resource_error& e) {
      std::cerr << "spotdnn " << command->name() << ": error: " << one_line(e.what()) << '\n';
      return kExitFailure;
    } catch (const std::exception& e) {
      std::cerr << "spotdnn " << command->name() << ": internal error: " << one_line(e.what()) << '\n';
      return kExitFailure;
    }
  }
  return kExitBadInput;
}

}  // namespace
