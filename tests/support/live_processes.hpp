#pragma once
// SPDX-License-Identifier: MIT
/// @file support/live_processes.hpp Test helper: how many processes that are still alive carry a marker
/// in their command line (the tests of process.hpp and of `catalog fetch` check that nothing is left).

#include <dirent.h>

#include <fstream>
#include <sstream>
#include <string>

namespace spotdnn::test {

/// The live processes (not zombies) whose command line contains `text`; -1 when /proc cannot be read.
inline int live_processes_with(const std::string& text) {
  const auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
  };
  int count = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return -1;
  while (const dirent* entry = ::readdir(proc)) {
    const std::string pid = entry->d_name;
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (read("/proc/" + pid + "/cmdline").find(text) == std::string::npos) continue;
    const std::string stat = read("/proc/" + pid + "/stat");
    const std::size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') continue;
    if (!stat.empty()) ++count;
  }
  ::closedir(proc);
  return count;
}

}  // namespace spotdnn::test
