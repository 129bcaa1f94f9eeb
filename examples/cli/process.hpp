#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/process.hpp Running another program without a shell: an argv vector through posix_spawnp in a
/// process group of its own, stdin /dev/null, stdout and stderr captured through pipes (each capped), one
/// deadline enforced by polling the child itself, the group ended on timeout, overflow or SIGINT/SIGTERM/SIGHUP
/// of this process, and always reaped (no zombie, nothing left behind).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <spotdnn/errors.hpp>

extern char** environ;

namespace spotdnn::cli {

/// Limits of one run.
struct ProcessOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};  ///< from the start; then the process group is ended
  std::size_t max_output_bytes = std::size_t(64) << 20;           ///< per stream; more ends the process group
  /// NAME=value entries that replace (or add to) this process's environment for the child.
  std::vector<std::string> environment_overrides;
  /// After the child exits, how long its pipes are still read while something it started keeps them open;
  /// then they are closed and what is left of its process group is ended.
  std::chrono::milliseconds drain_grace{200};
  /// Ending a process group: SIGTERM (and SIGCONT), then SIGKILL after at most this long.
  std::chrono::milliseconds kill_grace{300};
};

/// How a run ended and what it printed.
struct ProcessResult {
  bool started = false;     ///< false: the program could not be run (see start_error)
  std::string start_error;  ///< e.g. "No such file or directory"
  int exit_code = -1;       ///< the exit status when it exited
  int signal = 0;           ///< the signal that ended it, 0 when it exited
  bool timed_out = false;   ///< ended after ProcessOptions::timeout
  bool output_too_large = false;  ///< ended when a stream passed ProcessOptions::max_output_bytes
  int interrupted_by = 0;   ///< the SIGINT/SIGTERM/SIGHUP this process got while the child ran (it was ended)
  bool left_processes = false;  ///< the child exited but processes it started stayed in its group (they were ended)
  std::string out;          ///< stdout (at most max_output_bytes)
  std::string err;          ///< stderr (at most max_output_bytes)

  [[nodiscard]] bool succeeded() const {
    return started && !timed_out && !output_too_large && interrupted_by == 0 && signal == 0 && exit_code == 0;
  }

  /// "exited 255", "was killed by signal 9", "did not finish in time and was killed", "printed more than the
  /// output limit and was killed", "was stopped: spotdnn got signal 2", "could not be run: No such file or
  /// directory".
  [[nodiscard]] std::string outcome() const {
    if (!started) return "could not be run: " + start_error;
    if (interrupted_by != 0) return "was stopped: spotdnn got signal " + std::to_string(interrupted_by);
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
    if (text.size() > max_bytes) {
      std::size_t cut = max_bytes;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // a whole UTF-8 sequence
      text = text.substr(0, cut) + "...";
    }
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

/// The process group of the child being run (0: none), for the signal handler.
inline volatile std::sig_atomic_t running_group = 0;
/// The first SIGINT, SIGTERM or SIGHUP that arrived while a child ran (0: none).
inline volatile std::sig_atomic_t pending_signal = 0;

/// The signals that end spotdnn and so must end the child's group first.
inline constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

/// The handler while a child runs: records the signal and sends SIGTERM to the child's group. Only
/// async-signal-safe calls (kill), errno kept.
inline void on_signal(int signo) {
  const int saved_errno = errno;
  if (pending_signal == 0) pending_signal = signo;
  const pid_t group = static_cast<pid_t>(running_group);
  if (group > 0) {
    ::kill(-group, SIGTERM);
    ::kill(-group, SIGCONT);
  }
  errno = saved_errno;
}

/// Installs on_signal for the forwarded signals this process does not ignore, for its lifetime, and puts
/// the old actions back after. finish() then raises a signal that arrived, so the old action runs (by
/// default: spotdnn ends by that signal, after its child's group).
class SignalForwarding {
 public:
  SignalForwarding() {
    pending_signal = 0;
    running_group = 0;
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < std::size(kForwardedSignals); ++i) {
      if (::sigaction(kForwardedSignals[i], nullptr, &old_[i]) != 0) continue;
      const bool ignored = (old_[i].sa_flags & SA_SIGINFO) == 0 && old_[i].sa_handler == SIG_IGN;
      installed_[i] = !ignored && ::sigaction(kForwardedSignals[i], &action, nullptr) == 0;
    }
  }
  ~SignalForwarding() { restore(); }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

  /// Puts the old actions back; then raises the signal that arrived meanwhile, if any, and returns it.
  int finish() {
    restore();
    const int signo = pending_signal;
    pending_signal = 0;
    if (signo != 0) ::raise(signo);
    return signo;
  }

 private:
  void restore() {
    running_group = 0;
    for (std::size_t i = 0; i < std::size(kForwardedSignals); ++i) {
      if (installed_[i]) ::sigaction(kForwardedSignals[i], &old_[i], nullptr);
      installed_[i] = false;
    }
  }
  struct sigaction old_[std::size(kForwardedSignals)];
  bool installed_[std::size(kForwardedSignals)] = {};
};

/// True when `pid` (a child of this process) has ended; it stays a zombie (not reaped), so its process
/// id, and with it the id of its group, cannot be reused while the group is signalled.
inline bool has_exited(pid_t pid) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

/// Sleeps `ms` milliseconds (a signal may end it early).
inline void nap(int ms) { (void)::poll(nullptr, 0, ms); }

/// Whole milliseconds from now until `until` (rounded up), at least 0, at most `cap`.
inline int millis_until(std::chrono::steady_clock::time_point until, int cap) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
  return int(std::clamp<long long>(left, 0, cap));
}

/// The two captured streams: reads what is ready, each capped.
class Streams {
 public:
  Streams(int out_fd, int err_fd, ProcessResult& result, std::size_t max_bytes)
      : fds_{out_fd, err_fd}, sinks_{&result.out, &result.err}, result_(result), max_bytes_(max_bytes) {}

  [[nodiscard]] bool any_open() const { return fds_[0] >= 0 || fds_[1] >= 0; }
  [[nodiscard]] bool poll_failed() const { return poll_failed_; }
  [[nodiscard]] int poll_errno() const { return poll_errno_; }

  /// Waits up to `wait_ms` for output (sleeps when both streams are closed) and reads what came. A stream
  /// at its end is closed; one past the cap sets output_too_large (the rest is dropped).
  void pump(int wait_ms) {
    pollfd polled[2];
    int count = 0;
    for (int fd : fds_) {
      if (fd >= 0) polled[count++] = {fd, POLLIN, 0};
    }
    if (count == 0) {
      nap(wait_ms);
      return;
    }
    const int ready = ::poll(polled, nfds_t(count), wait_ms);
    if (ready < 0) {
      if (errno != EINTR) {
        poll_failed_ = true;
        poll_errno_ = errno;
      }
      return;
    }
    for (int k = 0; k < count; ++k) {
      if ((polled[k].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) == 0) continue;
      const int i = polled[k].fd == fds_[0] ? 0 : 1;
      const ssize_t n = ::read(fds_[i], buffer_, sizeof buffer_);
      if (n > 0) {
        const std::size_t room = max_bytes_ - std::min(max_bytes_, sinks_[i]->size());
        sinks_[i]->append(buffer_, std::min(room, std::size_t(n)));
        if (std::size_t(n) > room) result_.output_too_large = true;
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds_[i] = -1;  // the Pipe closes it
      }
    }
  }

  /// Stops reading: a writer left gets SIGPIPE (reset to the default in the child) once the pipes close.
  void stop() { fds_[0] = fds_[1] = -1; }

 private:
  int fds_[2];
  std::string* sinks_[2];
  ProcessResult& result_;
  std::size_t max_bytes_;
  bool poll_failed_ = false;
  int poll_errno_ = 0;
  char buffer_[1 << 16];
};

/// Ends the process group `group` whose leader `leader` has not been reaped: SIGTERM (and SIGCONT, for a
/// stopped member), up to `grace` for the leader to exit, then SIGKILL to the group.
inline void end_group(pid_t group, pid_t leader, std::chrono::milliseconds grace) {
  ::kill(-group, SIGTERM);
  ::kill(-group, SIGCONT);
  const auto until = std::chrono::steady_clock::now() + grace;
  while (!has_exited(leader) && millis_until(until, 5) > 0) nap(millis_until(until, 5));
  ::kill(-group, SIGKILL);
}

/// Kills the group `group` and reaps its leader `leader` on scope exit unless released: nothing is left
/// running when an exception (bad_alloc) leaves run_process.
class ChildGuard {
 public:
  explicit ChildGuard(pid_t leader) : leader_(leader) {}
  ~ChildGuard() {
    if (leader_ <= 0) return;
    ::kill(-leader_, SIGKILL);
    while (::waitpid(leader_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  void release() { leader_ = -1; }

 private:
  pid_t leader_;
};

/// While alive, makes this process the child subreaper (Linux): what the child starts and leaves behind
/// becomes this process's child when the child exits, so it can be reaped here (else it stays a zombie until
/// init reaps it, and a zombie still counts as a member of its group). Puts the old setting back after.
class Subreaper {
 public:
  Subreaper() {
#ifdef __linux__
    int old = 0;
    if (::prctl(PR_GET_CHILD_SUBREAPER, &old, 0, 0, 0) == 0 && old == 0) set_ = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
#endif
  }
  ~Subreaper() {
#ifdef __linux__
    if (set_) ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
#endif
  }
  Subreaper(const Subreaper&) = delete;
  Subreaper& operator=(const Subreaper&) = delete;

 private:
  bool set_ = false;
};

/// Reaps the ended members of the group `group` that are children of this process; true when the group
/// has no member left.
inline bool group_gone(pid_t group) {
  while (::waitpid(-group, nullptr, WNOHANG) > 0) {
  }
  return ::kill(-group, 0) != 0 && errno == ESRCH;
}

/// Ends what is left of the group `group` after its leader was reaped (processes the leader started that
/// outlived it): SIGTERM, up to `grace` for them to go, then SIGKILL; reaped here when they became this
/// process's children (Subreaper). Returns whether any was there. The group id stays taken while any member
/// lives, and process ids are handed out in turn, so it names no other group here.
inline bool end_leftovers(pid_t group, std::chrono::milliseconds grace) {
  if (group_gone(group)) return false;
  ::kill(-group, SIGTERM);
  ::kill(-group, SIGCONT);
  const auto until = std::chrono::steady_clock::now() + grace;
  bool killed = false;
  while (!group_gone(group)) {
    const int wait_ms = millis_until(until, 2);
    if (wait_ms <= 0) {
      if (killed) break;  // what is left are zombies that another process reaps
      ::kill(-group, SIGKILL);
      killed = true;
      nap(2);  // SIGKILL takes effect at once; reaped on the next look
      continue;
    }
    nap(wait_ms);
  }
  return true;
}

}  // namespace process_detail

/// Runs `argv` (argv[0] looked up on PATH unless it contains '/') without a shell, in a process group of its
/// own: stdin /dev/null, stdout and stderr captured. Under one deadline (options.timeout from the start) the
/// child itself is watched, not only its pipes: a child that closes its pipes and goes on is still ended at
/// the deadline. On the deadline, on a stream past options.max_output_bytes, or on SIGINT/SIGTERM/SIGHUP of
/// this process (handled only while the child runs; the old actions come back after), the whole group gets
/// SIGTERM, then SIGKILL after options.kill_grace. After the child exits, its pipes are read for at most
/// options.drain_grace more (a process it started may hold them open) and closed; what is left of its group
/// is ended too. The child is always reaped. A signal that arrived is raised again once the group is gone,
/// so the old action runs (by default this process ends by it); if that returns, the result has
/// interrupted_by set. A program that cannot be started comes back as started = false (not thrown); running
/// out of pipes or processes throws spotdnn::resource_error. A grandchild that leaves the group (setsid)
/// is out of reach.
[[nodiscard]] inline ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {}) {
  namespace pd = process_detail;
  using Clock = std::chrono::steady_clock;
  ProcessResult result;
  if (argv.empty() || argv.front().empty()) {
    result.start_error = "no program given";
    return result;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> c_args;
  for (std::string& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  std::vector<std::string> vars = pd::environment_with(options.environment_overrides);
  std::vector<char*> c_vars;
  for (std::string& v : vars) c_vars.push_back(v.data());
  c_vars.push_back(nullptr);

  pd::Pipe out_pipe, err_pipe;
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
  // Its own process group (so ending it ends what it started too), default signal handling.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  for (int signo : pd::kForwardedSignals) sigaddset(&defaults, signo);
  sigset_t none;
  sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(&attributes, &defaults);
  ::posix_spawnattr_setsigmask(&attributes, &none);
  ::posix_spawnattr_setpgroup(&attributes, 0);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  pd::SignalForwarding forwarding;  // before the spawn: a signal from now on ends the child
  const pd::Subreaper subreaper;
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, c_args[0], &actions, &attributes, c_args.data(), c_vars.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    if (spawned == EAGAIN || spawned == ENOMEM) throw resource_error(std::string("cannot start a process: ") + std::strerror(spawned));
    result.start_error = std::strerror(spawned);
    (void)forwarding.finish();
    return result;
  }
  result.started = true;
  pd::ChildGuard guard(pid);
  pd::running_group = pid;
  out_pipe.close_write();
  err_pipe.close_write();

  const auto deadline = Clock::now() + options.timeout;
  pd::Streams streams(out_pipe.fds[0], err_pipe.fds[0], result, options.max_output_bytes);
  bool exited = false;
  for (;;) {
    if (pd::pending_signal != 0 || result.output_too_large || streams.poll_failed()) break;
    if (pd::has_exited(pid)) {
      exited = true;
      break;
    }
    const int wait_ms = pd::millis_until(deadline, 10);  // the child is looked at every 10 ms at least
    if (wait_ms <= 0) {
      result.timed_out = true;
      break;
    }
    streams.pump(wait_ms);
  }
  if (exited) {
    // What it wrote before it exited is in the pipes; a process it started may go on writing, or just hold
    // them open: read until both end or the grace is over.
    const auto until = Clock::now() + options.drain_grace;
    while (streams.any_open() && !result.output_too_large && !streams.poll_failed()) {
      const int wait_ms = pd::millis_until(until, 1000);
      if (wait_ms <= 0) break;
      streams.pump(wait_ms);
    }
  }
  streams.stop();
  out_pipe.close_read();
  err_pipe.close_read();
  if (!exited) {
    if (streams.poll_failed()) result.start_error = std::string("poll failed: ") + std::strerror(streams.poll_errno());
    pd::end_group(pid, pid, options.kill_grace);
  }
  pd::running_group = 0;  // from here the handler signals nothing: the group's id is freed once reaped
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  guard.release();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  const bool left = pd::end_leftovers(pid, options.kill_grace);  // after a timeout: already killed, only reaped here
  if (exited) result.left_processes = left;
  result.interrupted_by = forwarding.finish();
  return result;
}

}  // namespace spotdnn::cli
