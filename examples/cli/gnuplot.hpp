#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/gnuplot.hpp Runs gnuplot without a shell and writes its plot (SVG, PNG or PDF, as the script's
/// terminal says) to the user's path only when it succeeded.
///
/// gnuplot is started with posix_spawnp and a fixed argv (`gnuplot /dev/stdin`: the script is a file
/// that gnuplot reads from a pipe, and it stops at the first error as it does for any script file).
/// The output path never reaches gnuplot: scripts say `set output` without a file name, so the plot goes
/// to gnuplot's standard output, which is a private file made with mkostemp next to the target. The
/// child gets exactly three descriptors (the script pipe, that file, an error pipe); every other one is
/// closed. When gnuplot exits 0 having written something, the file is renamed onto the path; otherwise
/// it is removed, so a failure never leaves a partial plot. User text inside a script must go through
/// gnuplot_string() with `noenhanced` (plot_script.hpp explains why that is safe); plot_preamble() there
/// picks the terminal from the file's extension.
///
/// Errors: a path whose directory is missing or refuses new files is bad input (usage_error, exit 2); a
/// gnuplot that cannot be started or fails, or a file that cannot be written, is a resource_error
/// (exit 1). Either way the message is one line naming the option, the path and what failed.
///
/// Every command with --plot draws an answer it also prints, and never loses that answer to the plot: it
/// checks the path with check_plot_path() before any work (bad input, exit 2), computes, then draws with
/// draw_plot(), which returns a failure as its one line instead of throwing. The command prints its
/// answer, warns with that line on stderr and exits kExitPlotFailed (4) instead of 0.

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spotdnn/detail/validate.hpp>
#include <spotdnn/errors.hpp>

#include "command.hpp"
#include "plot_script.hpp"  // gnuplot_string and plot_preamble for the scripts

extern char** environ;  // the environment gnuplot inherits (POSIX leaves it undeclared)

namespace spotdnn::cli {

namespace gnuplot_detail {

/// `"text"` for a message, control characters and invalid UTF-8 escaped.
inline std::string shown(std::string_view text) { return "\"" + spotdnn::detail::escape_for_message(text) + "\""; }

inline std::string error_text(int error) { return std::strerror(error); }

/// True for errors that say the path itself is unusable (bad input), not that the machine failed.
inline bool is_path_error(int error) {
  return error == EACCES || error == EPERM || error == EROFS || error == ENOENT || error == ENOTDIR ||
         error == ENAMETOOLONG || error == ELOOP || error == EISDIR;
}

/// A file descriptor closed on destruction.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

/// Moves `fd` above the standard descriptors (a CLI started with one of them closed gets 0, 1 or 2 from
/// open), keeping close-on-exec. Returns the new descriptor, or -1.
inline int above_standard(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

/// The private output file: removed on destruction unless kept.
struct TempFile {
  std::string path;
  Fd fd;
  bool keep = false;
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    fd.reset();
    if (!keep && !path.empty()) ::unlink(path.c_str());
  }
};

/// SIGPIPE ignored while the script is written (gnuplot may exit before reading all of it: write() then
/// fails with EPIPE instead of killing the CLI); the previous disposition comes back on destruction.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    active_ = ::sigaction(SIGPIPE, &ignore, &previous_) == 0;
  }
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;
  ~IgnoreSigpipe() {
    if (active_) ::sigaction(SIGPIPE, &previous_, nullptr);
  }

 private:
  struct sigaction previous_ = {};
  bool active_ = false;
};

/// The line of gnuplot's stderr that says what went wrong: the first error naming a script line
/// ("script line 3: invalid command"), else the first non-empty line; at most 200 bytes, escaped.
inline std::string first_error(const std::string& errors) {
  constexpr std::string_view kPrefix = "\"/dev/stdin\" line ";
  std::string first, located;
  std::size_t start = 0;
  while (start < errors.size()) {
    std::size_t end = errors.find('\n', start);
    if (end == std::string::npos) end = errors.size();
    std::string_view line(errors.data() + start, end - start);
    start = end + 1;
    if (first.empty() && line.find_first_not_of(" \t\r") != std::string_view::npos) first = std::string(line);
    if (line.substr(0, kPrefix.size()) == kPrefix && line.find("warning:") == std::string_view::npos) {
      located = "script line " + std::string(line.substr(kPrefix.size()));
      break;
    }
  }
  std::string line = located.empty() ? first : located;
  if (line.size() > 200) {
    std::size_t cut = 200;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0u) == 0x80u) --cut;  // keep UTF-8 whole
    line = line.substr(0, cut) + "...";
  }
  return spotdnn::detail::escape_for_message(line);
}

}  // namespace gnuplot_detail

/// Exit code of a command that printed its answer but could not draw its --plot (the warning on stderr
/// says why). A question without an answer still exits kExitNoAnswer (3), plot or not.
inline constexpr int kExitPlotFailed = 4;

/// Checks that `path` can name a new plot: not empty, not a directory, in a directory that exists, with a
/// file name the file system allows. Throws usage_error (exit 2) with one line naming `option` and the
/// path. Returns the directory ("." for a bare file name). Commands call it before any work.
inline std::string check_plot_path(const std::string& path, std::string_view option = "--plot") {
  using gnuplot_detail::shown;
  const std::string where = std::string(option) + " = " + shown(path);
  if (path.empty()) throw usage_error(where + ": give a file name");
  const std::size_t slash = path.rfind('/');
  if (slash + 1 == path.size()) throw usage_error(where + ": names a directory, not a file");
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat info = {};
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw usage_error(where + ": the directory " + shown(dir) + " does not exist");
  }
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) throw usage_error(where + ": is a directory");
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (path.size() - (slash == std::string::npos ? 0 : slash + 1) > std::size_t(name_max > 0 ? name_max : 255)) {
    throw usage_error(where + ": the file name is longer than the file system allows");
  }
  return dir;
}

/// Runs gnuplot on `script` (which must say `set output` with no file name, and quote user text with
/// gnuplot_string) and puts what it writes on standard output at `path`, replacing the file
/// atomically. `option` names the command-line option in messages ("--plot").
inline void run_gnuplot(const std::string& script, const std::string& path, std::string_view option = "--plot") {
  using gnuplot_detail::error_text;
  using gnuplot_detail::Fd;
  using gnuplot_detail::shown;
  const std::string where = std::string(option) + " = " + shown(path);

  // The path: an existing directory that takes a new file, and a name that is not a directory.
  const std::string dir = check_plot_path(path, option);

  gnuplot_detail::TempFile output;
  std::string pattern = (dir == "/" ? std::string() : dir) + "/.spotdnn-plot-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  output.fd.fd = gnuplot_detail::above_standard(::mkostemp(name.data(), O_CLOEXEC));
  if (output.fd.fd < 0) {
    const int e = errno;
    const std::string why = where + ": cannot create a file in " + shown(dir) + ": " + error_text(e);
    if (gnuplot_detail::is_path_error(e)) throw usage_error(why);
    throw resource_error(why);
  }
  output.path = name.data();

  // Pipes for the script (gnuplot's stdin) and its messages (stderr), close-on-exec in this process.
  int in_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) throw resource_error(where + ": cannot create a pipe: " + error_text(errno));
  Fd script_read(gnuplot_detail::above_standard(in_pipe[0])), script_write(gnuplot_detail::above_standard(in_pipe[1]));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw resource_error(where + ": cannot create a pipe: " + error_text(errno));
  Fd errors_read(gnuplot_detail::above_standard(err_pipe[0])), errors_write(gnuplot_detail::above_standard(err_pipe[1]));
  if (script_read.fd < 0 || script_write.fd < 0 || errors_read.fd < 0 || errors_write.fd < 0) {
    throw resource_error(where + ": cannot create a pipe: " + error_text(errno));
  }

  // The child: the three descriptors as 0, 1, 2, nothing else open, default SIGPIPE, no blocked signals.
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  if (::posix_spawn_file_actions_init(&actions) != 0) throw resource_error(where + ": cannot start gnuplot");
  if (::posix_spawnattr_init(&attributes) != 0) {
    ::posix_spawn_file_actions_destroy(&actions);
    throw resource_error(where + ": cannot start gnuplot");
  }
  sigset_t defaults, none;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&none);
  int setup = ::posix_spawn_file_actions_adddup2(&actions, script_read.fd, 0);
  setup = setup ? setup : ::posix_spawn_file_actions_adddup2(&actions, output.fd.fd, 1);
  setup = setup ? setup : ::posix_spawn_file_actions_adddup2(&actions, errors_write.fd, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  setup = setup ? setup : ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // also what we did not open
#endif
  setup = setup ? setup : ::posix_spawnattr_setsigdefault(&attributes, &defaults);
  setup = setup ? setup : ::posix_spawnattr_setsigmask(&attributes, &none);
  setup = setup ? setup : ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  char program[] = "gnuplot";
  char script_file[] = "/dev/stdin";
  char* argv[] = {program, script_file, nullptr};
  const int spawned = setup ? setup : ::posix_spawnp(&pid, program, &actions, &attributes, argv, environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    throw resource_error(where + ": cannot start gnuplot: " + error_text(spawned) +
                         (spawned == ENOENT ? " (is gnuplot installed? scripts/deps installs it)" : ""));
  }
  script_read.reset();
  errors_write.reset();

  // Write the script and collect stderr at the same time, so that neither pipe can fill up and block.
  std::string errors;
  bool script_cut = false;
  {
    const gnuplot_detail::IgnoreSigpipe no_sigpipe;
    ::fcntl(script_write.fd, F_SETFL, ::fcntl(script_write.fd, F_GETFL) | O_NONBLOCK);
    std::size_t written = 0;
    if (script.empty()) script_write.reset();
    while (script_write.fd >= 0 || errors_read.fd >= 0) {
      pollfd polled[2];
      nfds_t count = 0;
      if (script_write.fd >= 0) polled[count++] = {script_write.fd, POLLOUT, 0};
      if (errors_read.fd >= 0) polled[count++] = {errors_read.fd, POLLIN, 0};
      if (::poll(polled, count, -1) < 0) {
        if (errno == EINTR) continue;
        script_write.reset();  // cannot happen with valid descriptors; closing both ends lets gnuplot
        errors_read.reset();   // finish (or fail) instead of waiting on a full pipe
        break;
      }
      for (nfds_t k = 0; k < count; ++k) {
        if (polled[k].revents == 0) continue;
        if (polled[k].fd == script_write.fd) {
          const ssize_t n = ::write(script_write.fd, script.data() + written, script.size() - written);
          if (n > 0) written += std::size_t(n);
          if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            script_cut = true;  // gnuplot closed its input (EPIPE): it stopped or died
            script_write.reset();
          } else if (written == script.size()) {
            script_write.reset();  // end of file: gnuplot finishes
          }
        } else {
          char buffer[4096];
          const ssize_t n = ::read(errors_read.fd, buffer, sizeof buffer);
          if (n > 0) {
            if (errors.size() < 65536) errors.append(buffer, std::size_t(n));
          } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            errors_read.reset();
          }
        }
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw resource_error(where + ": lost track of gnuplot: " + error_text(errno));
  }

  if (WIFSIGNALED(status)) {
    throw resource_error(where + ": gnuplot was killed by signal " + std::to_string(WTERMSIG(status)));
  }
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (exit_code != 0) {
    const std::string line = gnuplot_detail::first_error(errors);
    throw resource_error(where + ": gnuplot failed: " +
                         (line.empty() ? "exit status " + std::to_string(exit_code) : line));
  }
  if (script_cut) throw resource_error(where + ": gnuplot stopped reading the script before its end");
  struct stat written_file = {};
  if (::fstat(output.fd.fd, &written_file) != 0 || written_file.st_size == 0) {
    throw resource_error(where + ": gnuplot wrote nothing");
  }
  if (const std::optional<PlotFormat> format = plot_format_of(path)) {  // what the extension promises
    char head[16] = {};
    const ssize_t got = ::pread(output.fd.fd, head, sizeof head, 0);
    const std::string_view start(head, got > 0 ? std::size_t(got) : 0);
    const bool right = *format == PlotFormat::svg   ? start.find("<svg") == 0 || start.find("<?xml") == 0
                       : *format == PlotFormat::png ? start.find("\x89PNG") == 0
                                                    : start.find("%PDF") == 0;
    if (!right) throw resource_error(where + ": gnuplot did not write " + std::string(plot_format_name(*format)) + " (is its terminal missing?)");
  }

  // A plot made by the user's own gnuplot gets the permissions of any new file (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const bool synced = ::fchmod(output.fd.fd, 0666 & ~mask) == 0 && ::fsync(output.fd.fd) == 0;
  const int error = errno;
  const bool closed = ::close(output.fd.fd) == 0;
  output.fd.fd = -1;
  if (!synced || !closed) throw resource_error(where + ": cannot write the plot: " + error_text(synced ? errno : error));
  if (::rename(output.path.c_str(), path.c_str()) != 0) {
    const int e = errno;
    if (gnuplot_detail::is_path_error(e)) throw usage_error(where + ": cannot write the plot: " + error_text(e));
    throw resource_error(where + ": cannot write the plot: " + error_text(e));
  }
  output.keep = true;
}

/// run_gnuplot() for a plot that draws an answer the command prints anyway: a failure (gnuplot missing or
/// failing, the file not writable, even a path refused late) comes back as its one-line message instead
/// of an exception; empty when the plot was written. Running out of memory still throws.
[[nodiscard]] inline std::string draw_plot(const std::string& script, const std::string& path, std::string_view option = "--plot") {
  try {
    run_gnuplot(script, path, option);
  } catch (const usage_error& e) {
    return e.what();
  } catch (const resource_error& e) {
    return e.what();
  }
  return {};
}

/// The warning a command prints when draw_plot() failed: its message, and that the answer is printed
/// without the plot.
[[nodiscard]] inline std::string plot_failed_warning(const std::string& failure) {
  return failure + "; the answer is printed without the plot (exit " + std::to_string(kExitPlotFailed) + ")";
}

}  // namespace spotdnn::cli
