#pragma once
// SPDX-License-Identifier: MIT
/// @file support/run_command.hpp Test helper: run a shell command (or the spotdnn CLI) and capture its
/// exit code, stdout and stderr separately.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace spotdnn::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr

  /// Number of lines on stderr (a trailing newline does not start a new line).
  [[nodiscard]] int err_lines() const {
    int lines = 0;
    for (std::size_t i = 0; i < err.size(); ++i) {
      if (err[i] == '\n' || i + 1 == err.size()) ++lines;
    }
    return lines;
  }
};

/// Runs `command` with /bin/sh; stdin is /dev/null.
inline CommandResult run_shell(const std::string& command) {
  static int counter = 0;
  const std::string err_path = std::string(SPOTDNN_TEST_BINARY_DIR) + "/stderr_" + std::to_string(::getpid()) + "_" +
                               std::to_string(counter++) + ".txt";
  const std::string full = "(" + command + ") </dev/null 2>'" + err_path + "'";
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  CommandResult result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err_file(err_path);
  std::ostringstream err;
  err << err_file.rdbuf();
  result.err = err.str();
  std::remove(err_path.c_str());
  return result;
}

/// Runs the built `spotdnn` CLI with `arguments` (already shell-quoted where needed).
inline CommandResult run_cli(const std::string& arguments) {
  return run_shell(std::string("'") + SPOTDNN_CLI_PATH + "' " + arguments);
}

/// Writes `text` to a file under the test binary dir and returns its path. ctest runs a binary's test cases
/// in parallel and several may write the same file, so the text goes to a file of this process first and is
/// renamed into place (atomic on POSIX): a reader sees the old whole file or the new one, never a torn one.
inline std::string write_temp_file(const std::string& name, const std::string& text) {
  static int counter = 0;
  const std::string path = std::string(SPOTDNN_TEST_BINARY_DIR) + "/" + name;
  const std::string staging = path + ".staging_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  {
    std::ofstream out(staging, std::ios::binary);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + staging);
  }
  if (std::rename(staging.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + staging + " to " + path);
  return path;
}

}  // namespace spotdnn::test
