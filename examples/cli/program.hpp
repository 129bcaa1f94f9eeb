#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/program.hpp What the `spotdnn` and `spotdnn-fit` programs share around their commands: exit
/// codes, one-line messages, parsing the command line, and running the chosen command.
///
/// Exit codes: 0 success, 1 a resource failure or an unexpected internal failure, 2 bad input, 3 a valid
/// question without an answer (cli::kExitNoAnswer), 4 the answer printed but its --plot not drawn
/// (cli::kExitPlotFailed, gnuplot.hpp). Exit codes 1 and 2 print exactly one line on stderr.

#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include <spotdnn/detail/validate.hpp>
#include <spotdnn/errors.hpp>

#include "command.hpp"
#include "help.hpp"
#include "user_words.hpp"

namespace spotdnn::cli {

inline constexpr int kExitBadInput = 2;
inline constexpr int kExitFailure = 1;

/// `text` as one printable line: control characters and bytes that are not UTF-8 escaped, so that a
/// hostile value echoed in a message can neither add lines nor drive the terminal.
[[nodiscard]] inline std::string one_line(std::string_view text) { return detail::escape_for_message(text); }

/// Runs `run(argc, argv)`; whatever escapes it, the user gets one line and exit code 1, never
/// std::terminate or a signal.
template <typename Run>
int run_guarded(Run run, int argc, char** argv) {
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

/// One line for a command line CLI11 refused: an option the command does not have (with the closest
/// one it has), or CLI11's complaint in the house's words (parse_error_words: the option, the value given,
/// what is allowed); then where to read the command's options.
inline void report_parse_error(CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  const std::optional<UnknownOption> unknown = find_unknown_option(app, argc, argv);
  const std::string command = unknown ? unknown->command : command_path(app, argc, argv);
  const std::string help = command == "spotdnn" ? "spotdnn --help" : "spotdnn help" + command.substr(7);
  const std::string message = unknown ? unknown->message : parse_error_words(e, command_app(app, argc, argv), argc, argv);
  std::cerr << command << ": error: " << one_line(message) << " (see " << one_line(help) << ")\n";
}

/// Parses the command line; returns the exit code when the program should stop here (help, version, or
/// a refused command line, reported on one line), nothing when a command is to run. An empty value for a
/// number option is refused (refuse_empty_numbers), not read as 0.
[[nodiscard]] inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  refuse_empty_numbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    report_parse_error(app, argc, argv, e);
    return kExitBadInput;
  }
  return std::nullopt;
}

/// Runs `command` and prints its whole output only when it returns, so a failure never leaves partial
/// output on stdout. Bad input (spotdnn::invalid_argument, usage_error, a CLI11 error) exits 2, told in
/// the user's words (user_words.hpp: the option and value they typed, not the library's function and
/// field); running out of a resource or an unexpected failure exits 1; each with one line on stderr.
inline int run_command(Command& command) {
  const std::string prefix = "spotdnn " + command.name();
  std::ostringstream out;
  try {
    const int code = command.run(out);
    std::cout << out.str() << std::flush;
    return code;
  } catch (const spotdnn::invalid_argument& e) {
    std::cerr << prefix << ": error: " << one_line(user_words(e, command.app())) << '\n';
    return kExitBadInput;
  } catch (const usage_error& e) {
    std::cerr << prefix << ": error: " << one_line(usage_words(e.what(), command.app())) << '\n';
    return kExitBadInput;
  } catch (const CLI::Error& e) {
    std::cerr << prefix << ": error: " << one_line(parse_error_words(e, command.app())) << '\n';
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << prefix << ": error: out of memory\n";
    return kExitFailure;
  } catch (const spotdnn::resource_error& e) {
    std::cerr << prefix << ": error: " << one_line(e.what()) << '\n';
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << prefix << ": internal error: " << one_line(e.what()) << '\n';
    return kExitFailure;
  }
}

}  // namespace spotdnn::cli
