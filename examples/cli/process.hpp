#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/process.hpp Running another program without a shell: an argv vector through posix_spawnp,
/// stdin /dev/null, stdout and stderr captured through pipes (each capped), a time limit that kills it,
/// and always reaped (no zombie).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <spotdnn/errors.hpp>

extern char** environ;

namespace spotdnn::cli {

/// Limits of one run.
struct ProcessOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};  ///< then the process group is killed
  std::size_t max_output_bytes = std::size_t(64) << 20;           ///< per stream; more kills the process group
  /// NAME=value entries that replace (or add to) this process's environment for the child.
  std::vector<std::string> environment_overrides;
};

/// How a run ended and what it printed.
struct ProcessResult {
  bool started = false;     ///< false: the program could not be run (see start_error)
  std::string start_error;  ///< e.g. "No such file or directory"
  int exit_code = -1;       ///< the exit status when it exited
  int signal = 0;           ///< the signal that ended it, 0 when it exited
  bool timed_out = false;   ///< killed after ProcessOptions::timeout
  bool output_too_large = false;  ///< killed when a stream passed ProcessOptions::max_output_bytes
  std::string out;          ///< stdout (at most max_output_bytes)
  std::string err;          ///< stderr (at most max_output_bytes)

  [[nodiscard]] bool succeeded() const { return started && !timed_out && !output_too_large && signal == 0 && exit_code == 0; }

  /// "exited 255", "killed by signal 9", "timed out after 120 s", "printed more than 67108864 bytes",
  /// "could not be run: No such file or directory".
  [[nodiscard]] std::string outcome() const {
    if (!started) return "could not be run: " + start_error;
    if (timed_out) return "did not finish in time and was killed";
    if (output_too_large) return "printed more than the output limit and was killed";
    if (signal != 0) return "was killed by signal " + std::to_string(signal);
    return "exited " + std::to_string(exit_code);
  }

  /// The first non-blank line of stderr (AWS's message starts after an empty line), with the next one when
  /// it ends in ':' ("Parameter validation failed:"), at most `max_bytes`.
  [[nodiscard]] std::string first_error_line(std::size_t max_bytes = 300) const {
    std::string text;
    std::size_t at = 0;
    while (at < err.size()) {
      std::size_t end = err.find('\n', at);
      if (end == std::string::npos) end = err.size();
      std::string_view line(err.data() + at, end - at);
      at = end + 1;
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      if (line.empty()) continue;
      text += (text.empty() ? "" : " ") + std::string(line);
      if (text.back() != ':') break;
    }
    if (text.size() > max_bytes) text = text.substr(0, max_bytes) + "...";
    return text;
  }
};

namespace process_detail {

/// Closes its descriptors on scope exit.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fds, O_CLOEXEC) != 0) throw resource_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_read() {
    if (fds[0] >= 0) ::close(fds[0]);
    fds[0] = -1;
  }
  void close_write() {
    if (fds[1] >= 0) ::close(fds[1]);
    fds[1] = -1;
  }
};

/// This process's environment with `overrides` (NAME=value) replacing entries of the same NAME.
inline std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  const auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool replaced = false;
    for (const std::string& o : overrides) replaced = replaced || name_of(o) == name_of(entry);
    if (!replaced) out.emplace_back(entry);
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

}  // namespace process_detail

/// Runs `argv` (argv[0] looked up on PATH unless it contains '/') in a process group of its own, without a
/// shell: stdin /dev/null, stdout and stderr captured. The whole group is killed (SIGKILL) after
/// options.timeout or when a stream passes options.max_output_bytes; the child is always reaped.
/// A program that cannot be started comes back as started = false (not thrown); running out of pipes or
/// processes throws spotdnn::resource_error.
[[nodiscard]] inline ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {}) {
  ProcessResult result;
  if (argv.empty() || argv.front().empty()) {
    result.start_error = "no program given";
    return result;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> c_args;
  for (std::string& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  std::vector<std::string> vars = process_detail::environment_with(options.environment_overrides);
  std::vector<char*> c_vars;
  for (std::string& v : vars) c_vars.push_back(v.data());
  c_vars.push_back(nullptr);

  process_detail::Pipe out_pipe, err_pipe;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  if (::posix_spawn_file_actions_init(&actions) != 0) throw resource_error("posix_spawn_file_actions_init failed");
  if (::posix_spawnattr_init(&attributes) != 0) {
    ::posix_spawn_file_actions_destroy(&actions);
    throw resource_error("posix_spawnattr_init failed");
  }
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out_pipe.fds[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, err_pipe.fds[1], 2);
  // Its own process group (so a timeout kills what it started too), default signal handling.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigset_t none;
  sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(&attributes, &defaults);
  ::posix_spawnattr_setsigmask(&attributes, &none);
  ::posix_spawnattr_setpgroup(&attributes, 0);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, c_args[0], &actions, &attributes, c_args.data(), c_vars.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    if (spawned == EAGAIN || spawned == ENOMEM) throw resource_error(std::string("cannot start a process: ") + std::strerror(spawned));
    result.start_error = std::strerror(spawned);
    return result;
  }
  result.started = true;
  out_pipe.close_write();
  err_pipe.close_write();

  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  pollfd fds[2] = {{out_pipe.fds[0], POLLIN, 0}, {err_pipe.fds[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_streams = 2;
  bool kill_group = false;
  char buffer[1 << 16];
  while (open_streams > 0 && !kill_group) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = kill_group = true;
      break;
    }
    const int ready = ::poll(fds, 2, int(std::min<long long>(left.count(), 1000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      kill_group = true;
      result.start_error = std::string("poll failed: ") + std::strerror(errno);
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        const std::size_t room = options.max_output_bytes - sinks[i]->size();
        sinks[i]->append(buffer, std::min(room, std::size_t(n)));
        if (std::size_t(n) > room) result.output_too_large = kill_group = true;
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_streams;
      }
    }
  }
  if (kill_group) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace spotdnn::cli
