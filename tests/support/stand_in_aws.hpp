#pragma once
// SPDX-License-Identifier: MIT
/// @file support/stand_in_aws.hpp What the tests of `catalog fetch` with a stand-in `aws` script share:
/// shell quoting, reading and writing whole files, and the calls the stand-in recorded.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace spotdnn::test {

/// `text` in single quotes for /bin/sh.
inline std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The whole file at `path` ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// The calls a stand-in aws recorded in dir/calls.log (one argument per line, each call ended by a line
/// `--end--`), each its argument list.
inline std::vector<std::vector<std::string>> recorded_calls(const std::string& dir) {
  std::vector<std::vector<std::string>> calls(1);
  std::istringstream lines(read_text(dir + "/calls.log"));
  for (std::string line; std::getline(lines, line);) {
    if (line == "--end--") {
      calls.emplace_back();
    } else {
      calls.back().push_back(line);
    }
  }
  calls.pop_back();
  return calls;
}

}  // namespace spotdnn::test
