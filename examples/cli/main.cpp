// SPDX-License-Identifier: MIT
// The `spotdnn` command-line tool: the library's functions over JSON/CSV files (docs/formats.md).
// Each command lives in its own header; add it with one #include and one kCommands entry below. `spotdnn fit`
// (and `spotdnn workload build`) runs the separate program spotdnn-fit (fit_program.hpp), so that only it loads Ceres.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/detail/validate.hpp>
#include <spotdnn/errors.hpp>
#include <spotdnn/version.hpp>

#include "catalog_command.hpp"
#include "command.hpp"
#include "compare_command.hpp"
#include "fit_program.hpp"
#include "frontier_command.hpp"
#include "help.hpp"
#include "program.hpp"
#include "launch_command.hpp"
#include "plan_command.hpp"
#include "predict_command.hpp"
#include "profile_plan_command.hpp"
#include "replan_command.hpp"
#include "replay_command.hpp"
#include "revocations_command.hpp"
#include "cost_command.hpp"
#include "run_commands.hpp"
#include "watch_command.hpp"
#include "serverless_command.hpp"
#include "simulate_command.hpp"
#include "suggest.hpp"

namespace {

using spotdnn::cli::kExitBadInput;
using spotdnn::cli::one_line;

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) { return spotdnn::cli::run_guarded(run, argc, argv); }

namespace {

/// `spotdnn help [COMMAND [SUBCOMMAND]]`: the help of that command, as `spotdnn COMMAND [SUBCOMMAND]
/// --help` prints it (the fit program prints fit's). Returns the exit code; unknown names get a suggestion.
int run_help(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> words(argv + 2, argv + argc);
  if (words.size() > 2) {
    std::cerr << "spotdnn help: error: give at most a command and its subcommand, got " << words.size()
              << " words (spotdnn help [COMMAND [SUBCOMMAND]])\n";
    return kExitBadInput;
  }
  if (words.size() == 1 && words.front() == "help") {
    std::cout << "print a command's options, as spotdnn COMMAND [SUBCOMMAND] --help does\n"
                 "Usage: spotdnn help [COMMAND [SUBCOMMAND]]\n";
    return 0;
  }
  CLI::App* current = &app;
  std::string path = "spotdnn";
  for (const std::string& word : words) {
    CLI::App* sub = spotdnn::cli::find_subcommand(*current, word);
    if (sub == nullptr || word == "help") {
      const std::vector<std::string> names = spotdnn::cli::subcommand_names(*current);
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      std::cerr << "spotdnn help: error: " << (current == &app ? "unknown command " : path + " has no subcommand ")
                << one_line(spotdnn::detail::quoted(word)) << one_line(spotdnn::cli::did_you_mean(word, names))
                << (list.empty() ? std::string(" (it has none)") : " (" + (current == &app ? "commands" : path + " has") + ": " + list + ")")
                << '\n';
      return kExitBadInput;
    }
    current = sub;
    path += " " + word;
  }
  std::vector<char*> help_argv = {argv[0]};
  for (int i = 2; i < argc; ++i) help_argv.push_back(argv[i]);
  static char help_flag[] = "--help";
  help_argv.push_back(help_flag);
  help_argv.push_back(nullptr);
  const int help_argc = int(help_argv.size()) - 1;
  if (!words.empty() && (words.front() == "fit" || words.front() == "workload" ||
                         (words.front() == "serverless" && words.size() == 2 && words[1] == "fit"))) {
    return spotdnn::cli::exec_fit_program(help_argc, help_argv.data());
  }
  try {
    app.parse(help_argc, help_argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return kExitBadInput;
}

/// A command of the program: the word that selects it on the command line (for a group's subcommand,
/// the group's word: catalog, revocations) and how to make it. In the order `spotdnn --help` lists them.
struct CommandEntry {
  std::string_view word;
  std::unique_ptr<spotdnn::cli::Command> (*make)();
};

template <typename C>
std::unique_ptr<spotdnn::cli::Command> make_command() {
  return std::make_unique<C>();
}

template <spotdnn::cli::RunCommand::Kind kind>
std::unique_ptr<spotdnn::cli::Command> make_run_command() {
  return std::make_unique<spotdnn::cli::RunCommand>(kind);
}

constexpr CommandEntry kCommands[] = {
    {"predict", make_command<spotdnn::cli::PredictCommand>},
    {"launch", make_command<spotdnn::cli::LaunchCommand>},
    {"plan", make_command<spotdnn::cli::PlanCommand>},
    {"frontier", make_command<spotdnn::cli::FrontierCommand>},
    {"simulate", make_command<spotdnn::cli::SimulateCommand>},
    {"replan", make_command<spotdnn::cli::ReplanCommand>},
    {"status", make_run_command<spotdnn::cli::RunCommand::Kind::status>},
    {"teardown", make_run_command<spotdnn::cli::RunCommand::Kind::teardown>},
    {"cost", make_command<spotdnn::cli::CostCommand>},
    {"watch", make_command<spotdnn::cli::WatchCommand>},
    {"serverless", make_command<spotdnn::cli::ServerlessCommand>},
    {"compare", make_command<spotdnn::cli::CompareCommand>},
    {"catalog", make_command<spotdnn::cli::CatalogImportCommand>},
    {"catalog", make_command<spotdnn::cli::CatalogFetchCommand>},
    {"catalog", make_command<spotdnn::cli::CatalogShowCommand>},
    {"revocations", make_command<spotdnn::cli::RevocationsFitCommand>},
    {"revocations", make_command<spotdnn::cli::RevocationsShowCommand>},
    {"revocations", make_command<spotdnn::cli::RevocationsCheckCommand>},
    {"replay", make_command<spotdnn::cli::ReplayCommand>},
    {"profile", make_command<spotdnn::cli::ProfilePlanCommand>},
};

/// The commands and the CLI11 application they are declared on. The commands keep pointers into `app`
/// and use them until run_command() returns; `app` is destroyed first, as nothing uses them then.
struct Program {
  std::vector<std::unique_ptr<spotdnn::cli::Command>> commands;
  std::unique_ptr<CLI::App> app;
};

/// The program with the commands selected by `word` (argv[1]): only those of kCommands with that word,
/// or all of them when no entry has it. Should an entry's word not be the one its command declares, the
/// word selects nothing on the smaller application and every command is built after all.
Program make_program(std::string_view word) {
  using namespace spotdnn::cli;
  bool known = false;
  for (const CommandEntry& entry : kCommands) known = known || entry.word == word;
  Program program;
  for (const CommandEntry& entry : kCommands) {
    if (!known || entry.word == word) program.commands.push_back(entry.make());
  }
  program.app = std::make_unique<CLI::App>(
      "spotdnn: plan distributed DNN training on cloud spot instances (ResNet-110 preset by default)", "spotdnn");
  CLI::App& app = *program.app;
  app.set_version_flag("--version", std::string("spotdnn ") + spotdnn::kVersionString);
  app.require_subcommand(1);
  app.footer("Run `spotdnn help COMMAND` (or `spotdnn COMMAND --help`) for a command's options.");
  for (auto& command : program.commands) command->attach(app);
  // fit and help are handled before parsing; declared here for the command list, help and suggestions.
  CLI::App* fit = app.add_subcommand("fit", "fit the model to profiling traces (Ceres): fit loss, fit throughput");
  fit->add_subcommand("loss", "fit the loss model to a loss trace");
  fit->add_subcommand("throughput", "fit the contention and bandwidth model to measured update rates");
  CLI::App* workload = app.add_subcommand("workload", "build a workload from your own model's profiles (Ceres): workload build");
  workload->add_subcommand("build", "a workload from training profiles, a loss trace and a throughput trace");
  app.add_subcommand("help", "print a command's options: spotdnn help COMMAND [SUBCOMMAND]");
  if (known && find_subcommand(app, word) == nullptr) return make_program(std::string_view());
  return program;
}

int run(int argc, char** argv) {
  using namespace spotdnn::cli;
  // `spotdnn fit ...` and `spotdnn serverless fit ...` are their own program; nothing here parses their arguments.
  if (argc > 1 && (std::string_view(argv[1]) == "fit" || std::string_view(argv[1]) == "workload")) return exec_fit_program(argc, argv);
  if (argc > 2 && std::string_view(argv[1]) == "serverless" && std::string_view(argv[2]) == "fit") return exec_fit_program(argc, argv);

  // Only the command that argv names is built (declaring every command's options costs more CPU than
  // answering `predict`); a command line that names none (help, --help, --version, an unknown word, no
  // word) gets every command, for the command list, help and suggestions.
  Program program = make_program(argc > 1 ? std::string_view(argv[1]) : std::string_view());
  CLI::App& app = *program.app;
  const std::vector<std::unique_ptr<Command>>& commands = program.commands;

  if (argc > 1 && std::string_view(argv[1]) == "help") return run_help(app, argc, argv);
  // `spotdnn` alone: the overview (as `spotdnn help` prints it), exit 0; a command line that names no
  // command but gives options is still refused below.
  if (argc <= 1) {
    std::cout << app.help() << std::flush;
    return 0;
  }

  if (argc > 1 && argv[1][0] != '-' && find_subcommand(app, argv[1]) == nullptr) {
    const std::vector<std::string> names = subcommand_names(app);
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    std::cerr << "spotdnn: error: unknown command " << one_line(spotdnn::detail::quoted(argv[1]))
              << one_line(did_you_mean(argv[1], names)) << " (commands: " << known << ")\n";
    return kExitBadInput;
  }
  // A command group (serverless) followed by a word that is none of its subcommands.
  if (argc > 2 && argv[2][0] != '-') {
    CLI::App* group = argv[1][0] == '-' ? nullptr : find_subcommand(app, argv[1]);
    const std::vector<std::string> names = group == nullptr ? std::vector<std::string>{} : subcommand_names(*group);
    if (!names.empty() && find_subcommand(*group, argv[2]) == nullptr) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      std::cerr << "spotdnn " << argv[1] << ": error: unknown subcommand " << one_line(spotdnn::detail::quoted(argv[2]))
                << one_line(did_you_mean(argv[2], names)) << " (spotdnn " << argv[1] << " has: " << known << ")\n";
      return kExitBadInput;
    }
  }
  if (const std::optional<int> stop = parse_command_line(app, argc, argv)) return *stop;

  for (auto& command : commands) {
    if (command->chosen()) return run_command(*command);
  }
  std::cerr << "spotdnn: error: give the command first (see spotdnn --help)\n";
  return kExitBadInput;
}

}  // namespace
