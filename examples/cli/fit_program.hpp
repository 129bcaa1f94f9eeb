#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/fit_program.hpp `spotdnn fit ...` runs the separate program `spotdnn-fit`, installed next to
/// `spotdnn`: only it links Ceres (and glog, SuiteSparse, BLAS...), so the commands that do not fit start
/// without loading them. exec_fit_program() replaces the process with the sibling `spotdnn-fit`, found in
/// the directory of /proc/self/exe, with the same arguments (argv[1] is "fit"), so its output, error
/// messages ("spotdnn fit: error: ...") and exit codes are those of `spotdnn fit`.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <spotdnn/detail/validate.hpp>

namespace spotdnn::cli {

/// The fitting program's file name, next to the `spotdnn` executable.
inline constexpr const char* kFitProgramName = "spotdnn-fit";

/// The absolute path of `spotdnn-fit` beside the running executable, or "" with `why` set when
/// /proc/self/exe cannot be read.
inline std::string fit_program_path(std::string& why) {
  std::vector<char> buffer(4096);
  for (;;) {
    const ssize_t length = ::readlink("/proc/self/exe", buffer.data(), buffer.size());
    if (length < 0) {
      why = std::string("cannot read /proc/self/exe: ") + std::strerror(errno);
      return {};
    }
    if (static_cast<std::size_t>(length) < buffer.size()) {
      const std::string self(buffer.data(), static_cast<std::size_t>(length));
      const std::size_t slash = self.rfind('/');
      return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + kFitProgramName;
    }
    if (buffer.size() >= (std::size_t(1) << 20)) {
      why = "cannot read /proc/self/exe: the path is too long";
      return {};
    }
    buffer.resize(buffer.size() * 2);
  }
}

/// Replaces this process with `spotdnn-fit` (argv passed through unchanged). Returns only on failure:
/// then prints one line "spotdnn fit: error: cannot run PATH: REASON" on stderr and returns 1 (the machine
/// refused a resource).
/// @param argc, argv main()'s arguments; argv[argc] is the null pointer, as main() guarantees
inline int exec_fit_program(int argc, char** argv) {
  (void)argc;
  std::string why;
  const std::string path = fit_program_path(why);
  if (!path.empty()) {
    std::fflush(nullptr);
    ::execv(path.c_str(), argv);
    why = std::strerror(errno);
  }
  std::fprintf(stderr, "spotdnn fit: error: cannot run %s: %s\n",
               detail::escape_for_message(path.empty() ? kFitProgramName : path).c_str(),
               detail::escape_for_message(why).c_str());
  return 1;
}

}  // namespace spotdnn::cli
