#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/help.hpp Finding one's way on the command line: the command a line chose, the option it
/// mistyped with "did you mean ...?", and the names `spotdnn help COMMAND [SUBCOMMAND]` accepts.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "suggest.hpp"

namespace spotdnn::cli {

/// The names of `app`'s subcommands, in the order they were declared.
[[nodiscard]] inline std::vector<std::string> subcommand_names(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

/// `app`'s subcommand named `name`, or nullptr.
[[nodiscard]] inline CLI::App* find_subcommand(CLI::App& app, std::string_view name) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

/// " (did you mean `plan`?)"-style tail for a mistyped name among `names`, or "" when none is close.
/// `quote` surrounds the suggestion (a backtick for commands, nothing for options).
[[nodiscard]] inline std::string did_you_mean(std::string_view word, const std::vector<std::string>& names,
                                              std::string_view prefix = "", std::string_view quote = "`") {
  const std::optional<std::string> best = closest_name(word, names);
  if (!best) return {};
  return ": did you mean " + std::string(quote) + std::string(prefix) + *best + std::string(quote) + "?";
}

/// "spotdnn plan": the command path that `argv` selects on `app` (as far as its words name subcommands).
[[nodiscard]] inline std::string command_path(CLI::App& app, int argc, char** argv) {
  std::string path = app.get_name();
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string_view token = argv[i];
    if (token == "--") break;
    if (!token.empty() && token[0] == '-') continue;
    if (CLI::App* sub = find_subcommand(*current, token)) {
      current = sub;
      path += " " + sub->get_name();
    }
  }
  return path;
}

/// The command (or group) that `argv` selects on `app`: `app` itself when its words name no subcommand.
[[nodiscard]] inline CLI::App* command_app(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string_view token = argv[i];
    if (token == "--") break;
    if (!token.empty() && token[0] == '-') continue;
    if (CLI::App* sub = find_subcommand(*current, token)) current = sub;
  }
  return current;
}

/// An option on the command line that the command it belongs to does not declare.
struct UnknownOption {
  std::string command;  ///< "spotdnn plan"
  std::string message;  ///< "unknown option --dedline: did you mean --deadline?"
};

/// The first option in `argv` that its command does not declare, with the closest declared name, or
/// nullopt. Reads words as CLI11 does: "--name[=value]" and "-x" are options ("-5", "-.5" and "-" are
/// values), a word naming a subcommand of the current command enters it, "--" ends the options.
[[nodiscard]] inline std::optional<UnknownOption> find_unknown_option(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  std::string path = app.get_name();
  for (int i = 1; i < argc; ++i) {
    const std::string_view token = argv[i];
    if (token == "--") break;
    if (token.size() < 2 || token[0] != '-') {
      if (CLI::App* sub = find_subcommand(*current, token)) {
        current = sub;
        path += " " + sub->get_name();
      }
      continue;
    }
    std::string name;
    if (token[1] == '-') {
      name = std::string(token.substr(0, token.find('=')));
      if (name.size() == 2) continue;
    } else {
      if ((token[1] >= '0' && token[1] <= '9') || token[1] == '.') continue;
      name = std::string(token.substr(0, 2));
    }
    if (current->get_option_no_throw(name) != nullptr) continue;
    std::vector<std::string> long_names;
    for (const CLI::Option* option : current->get_options()) {
      for (const std::string& n : option->get_lnames()) long_names.push_back(n);
    }
    const std::string bare = name.substr(name.find_first_not_of('-') == std::string::npos ? name.size() : name.find_first_not_of('-'));
    std::string message = "unknown option " + name + did_you_mean(bare, long_names, "--", "");
    if (current == &app) {
      for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        if (sub->get_option_no_throw(name) != nullptr) {
          message = "option " + name + " comes before the command: options follow the command they belong to";
          break;
        }
      }
    }
    return UnknownOption{path, message};
  }
  return std::nullopt;
}

}  // namespace spotdnn::cli
