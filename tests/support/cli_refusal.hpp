#pragma once
// SPDX-License-Identifier: MIT
/// @file support/cli_refusal.hpp Test helper: a CLI call that must be refused as bad input (exit 2, nothing
/// on stdout, one line on stderr) with words the user needs in that line.

#include <algorithm>
#include <initializer_list>
#include <string>

#include <doctest/doctest.h>

#include "support/run_command.hpp"

namespace spotdnn::test {

/// Runs `spotdnn arguments` and checks a one-line exit-2 refusal whose line contains every part.
inline void check_cli_refused(const std::string& arguments, std::initializer_list<std::string> parts) {
  const CommandResult r = run_cli(arguments);
  CAPTURE(arguments);
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (const std::string& part : parts) CHECK_MESSAGE(r.err.find(part) != std::string::npos, part);
}

}  // namespace spotdnn::test
