#pragma once
// SPDX-License-Identifier: MIT
/// @file support/moto_server.hpp Test fixture: moto_server (the AWS API emulator) on a free 127.0.0.1
/// port, stopped by its process-group id; the real aws CLI run against it with dummy credentials, no
/// config files and a proxy that refuses anything not addressed to loopback; moto's request recorder.
///
///   if (auto why = MotoServer::unavailable_reason()) { MESSAGE("skipped: " << *why); return; }
///   MotoServer moto(dir);                       // dir holds moto.log and the recording
///   AwsTestEnv env = aws_test_env(moto.url());  // env.prefix() + " bash script.sh" for shell commands
///   moto.start_recording();
///   nlohmann::json out = aws_json(env, {"ec2", "describe-instances"});
///   std::vector<nlohmann::json> calls = moto.recording();  // {"Action", "params", ...} per request
///
/// Environment: SPOTDNN_MOTO_SERVER (moto_server to run: a path, or a name looked up on PATH; default
/// moto_server on PATH), SPOTDNN_TEST_AWS (the aws CLI to use; default: of `aws` on PATH (pyenv shims
/// resolved) and /usr/bin/aws, the first one that honours AWS_ENDPOINT_URL, else the first that runs).
/// Doctest-agnostic; needs SPOTDNN_TEST_BINARY_DIR (defined for every test target) for the aws bin dir.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/base64.hpp"

extern char** environ;

namespace spotdnn::test {

/// Exit code (128 + signal when killed, -1 on the time limit), stdout and stderr of a program.
struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

namespace moto_detail {

inline bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

/// Every executable `name` on PATH, in PATH order (like `which -a`); `name` with a '/' is itself.
inline std::vector<std::string> which_all(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return is_executable_file(name) ? std::vector<std::string>{name} : std::vector<std::string>{};
  }
  std::vector<std::string> found;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate) && std::find(found.begin(), found.end(), candidate) == found.end()) {
      found.push_back(candidate);
    }
  }
  return found;
}

inline std::optional<std::string> which(const std::string& name) {
  std::vector<std::string> all = which_all(name);
  if (all.empty()) return std::nullopt;
  return all.front();
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// The last `lines` lines of `text` without its trailing blank lines.
inline std::string tail(const std::string& full, int lines) {
  const std::size_t last = full.find_last_not_of(" \t\r\n");
  const std::string text = last == std::string::npos ? std::string() : full.substr(0, last + 1);
  std::size_t pos = text.size();
  for (int n = 0; n < lines && pos != std::string::npos && pos > 0; ++n) pos = text.rfind('\n', pos - 1);
  return pos == std::string::npos || pos == 0 ? text : text.substr(pos + 1);
}

/// `text` in single quotes for a POSIX shell.
inline std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// NAME=value strings as the NULL-terminated array execve wants (pointers into `strings`).
inline std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

/// This process's environment with `overrides` (NAME=value) replacing or adding entries.
inline std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                      [&](const std::string& o) { return name_of(o) == name_of(entry); });
    if (!replaced) out.push_back(entry);
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

/// Runs `argv` (no shell) with exactly the environment `env` (this process's when null), stdin
/// /dev/null, and captures stdout and stderr; killed (exit code -1, a note on stderr) after `timeout`.
inline ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>* env,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  std::vector<std::string> args = argv;
  std::vector<std::string> vars = env != nullptr ? *env : environment_with({});
  std::vector<char*> c_args = c_array(args);
  std::vector<char*> c_vars = c_array(vars);
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error("pipe failed");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execve(c_args[0], c_args.data(), c_vars.data());
    const std::string message = "execve " + args[0] + ": " + std::strerror(errno) + "\n";
    [[maybe_unused]] const ssize_t ignored = ::write(2, message.data(), message.size());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buffer[8192];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    result.exit_code = -1;
    result.err += "\n[run_process: killed after " + std::to_string(timeout.count()) + " ms]\n";
  } else {
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return result;
}

struct HttpResponse {
  int status = 0;
  std::string body;
};

/// One HTTP/1.0 request to 127.0.0.1:`port` over a plain socket (moto closes the connection after the
/// body). Throws std::runtime_error when the connection fails or the answer is not HTTP.
inline HttpResponse http_request(int port, const std::string& method, const std::string& path,
                                 const std::string& body = "", int timeout_seconds = 30) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  timeval tv{};
  tv.tv_sec = timeout_seconds;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("connect 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  const std::string request = method + " " + path + " HTTP/1.0\r\nHost: 127.0.0.1:" + std::to_string(port) +
                              "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                              body;
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("send to 127.0.0.1:" + std::to_string(port) + " failed");
    }
    sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      raw.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw std::runtime_error(method + " " + path + ": " + why);
    }
  }
  ::close(fd);
  HttpResponse response;
  const std::size_t line_end = raw.find("\r\n");
  const std::size_t head_end = raw.find("\r\n\r\n");
  if (raw.compare(0, 5, "HTTP/") != 0 || line_end == std::string::npos || head_end == std::string::npos) {
    throw std::runtime_error(method + " " + path + ": not an HTTP response: " + raw.substr(0, 200));
  }
  const std::size_t space = raw.find(' ');
  response.status = std::atoi(raw.c_str() + space + 1);
  response.body = raw.substr(head_end + 4);
  return response;
}

/// A port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind 127.0.0.1:0");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

/// application/x-www-form-urlencoded decoding of one component ('+' is a space).
inline std::string url_decode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

/// name=value&... into `params` (a later repeat of a name wins).
inline void parse_form(const std::string& text, nlohmann::json& params) {
  std::istringstream in(text);
  for (std::string pair; std::getline(in, pair, '&');) {
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    params[url_decode(pair.substr(0, eq))] = eq == std::string::npos ? std::string() : url_decode(pair.substr(eq + 1));
  }
}

/// The real program behind a pyenv shim (`pyenv which NAME`), or `path` itself.
inline std::string resolve_pyenv_shim(const std::string& path) {
  const std::string text = read_file(path).substr(0, 4096);
  const std::string marker = "/libexec/pyenv\" exec ";
  const std::size_t at = text.find(marker);
  if (text.compare(0, 2, "#!") != 0 || at == std::string::npos) return path;
  const std::size_t start = text.rfind('"', at);
  if (start == std::string::npos) return path;
  const std::size_t end = at + std::string("/libexec/pyenv").size();
  const std::string pyenv = text.substr(start + 1, end - start - 1);
  const std::string name = std::filesystem::path(path).filename().string();
  ProcessResult which = run_process({pyenv, "which", name}, nullptr, std::chrono::seconds(30));
  std::string real = which.out.substr(0, which.out.find('\n'));
  return which.exit_code == 0 && is_executable_file(real) ? real : path;
}

inline std::string test_binary_dir() {
#ifdef SPOTDNN_TEST_BINARY_DIR
  return SPOTDNN_TEST_BINARY_DIR;
#else
  return std::filesystem::temp_directory_path().string();
#endif
}

}  // namespace moto_detail

/// One aws CLI program and its version.
struct AwsCli {
  std::string path;     ///< absolute path of the program (pyenv shims resolved)
  std::string version;  ///< "2.9.19" (from `aws --version`: "aws-cli/2.9.19 Python/...")
  int major = 0, minor = 0, patch = 0;

  /// Whether this CLI reads the endpoint from the AWS_ENDPOINT_URL environment variable (AWS CLI
  /// 1.29.0 and 2.13.0 added it); an older one ignores it and calls the real AWS endpoint instead.
  [[nodiscard]] bool honours_endpoint_env() const {
    const auto at_least = [&](int a, int b) { return minor > a || (minor == a && patch >= b); };
    return major > 2 || (major == 2 && at_least(13, 0)) || (major == 1 && at_least(29, 0));
  }
};

/// The aws CLI at `path` if `aws --version` runs (any environment it needs: none but PATH).
inline std::optional<AwsCli> probe_aws_cli(const std::string& path) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=/nonexistent", "AWS_CONFIG_FILE=/dev/null",
                                  "AWS_SHARED_CREDENTIALS_FILE=/dev/null"};
  ProcessResult r = moto_detail::run_process({path, "--version"}, &env, std::chrono::seconds(60));
  const std::string text = r.out + r.err;
  const std::size_t at = text.find("aws-cli/");
  if (r.exit_code != 0 || at == std::string::npos) return std::nullopt;
  AwsCli cli;
  cli.path = path;
  cli.version = text.substr(at + 8, text.find_first_of(" \n", at) - at - 8);
  if (std::sscanf(cli.version.c_str(), "%d.%d.%d", &cli.major, &cli.minor, &cli.patch) < 2) return std::nullopt;
  return cli;
}

/// The aws CLIs on this machine that run: SPOTDNN_TEST_AWS alone when set; else every `aws` on PATH
/// (pyenv shims resolved to the program they run) and /usr/bin/aws, each once. Computed once.
inline const std::vector<AwsCli>& aws_cli_candidates() {
  static const std::vector<AwsCli> candidates = [] {
    std::vector<std::string> paths;
    const char* chosen = std::getenv("SPOTDNN_TEST_AWS");
    if (chosen != nullptr && *chosen != '\0') {
      paths = moto_detail::which_all(chosen);
      if (paths.size() > 1) paths.resize(1);
    } else {
      paths = moto_detail::which_all("aws");
      paths.push_back("/usr/bin/aws");
    }
    std::vector<AwsCli> out;
    std::vector<std::string> seen;
    for (const std::string& path : paths) {
      if (!moto_detail::is_executable_file(path)) continue;
      const std::string real = moto_detail::resolve_pyenv_shim(path);
      std::error_code ec;
      const std::string canonical = std::filesystem::canonical(real, ec).string();
      const std::string key = ec ? real : canonical;
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      if (std::optional<AwsCli> cli = probe_aws_cli(real)) out.push_back(*cli);
    }
    return out;
  }();
  return candidates;
}

/// The aws CLI the tests use: of aws_cli_candidates(), the first that honours AWS_ENDPOINT_URL, else the
/// first; none when there is none.
inline std::optional<AwsCli> chosen_aws_cli() {
  const std::vector<AwsCli>& all = aws_cli_candidates();
  for (const AwsCli& cli : all) {
    if (cli.honours_endpoint_env()) return cli;
  }
  if (all.empty()) return std::nullopt;
  return all.front();
}

/// The environment of the real aws CLI (and of scripts that call `aws`) against a local endpoint.
struct AwsTestEnv {
  std::string url;     ///< the endpoint, e.g. http://127.0.0.1:PORT
  std::string region;  ///< e.g. us-east-1
  AwsCli cli;          ///< the CLI; `aws` on variables' PATH runs it
  std::string bin_dir;                 ///< the PATH directory whose `aws` links to cli.path
  std::vector<std::string> variables;  ///< the whole environment, NAME=value

  /// `env -i 'NAME=value' ...`: the prefix of a shell command line that runs with exactly `variables`.
  [[nodiscard]] std::string prefix() const {
    std::string out = "env -i";
    for (const std::string& v : variables) out += " " + moto_detail::shell_quote(v);
    return out;
  }
};

/// A directory (under the test binary dir, one per CLI, shared by tests) holding only `aws`, a symlink
/// to `cli.path`, so PATH can select the CLI without putting its neighbours (python, pip) first.
inline std::string aws_bin_dir(const AwsCli& cli) {
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(cli.path));
  const std::filesystem::path dir = std::filesystem::path(moto_detail::test_binary_dir()) / "moto-aws-bin" / hash;
  std::filesystem::create_directories(dir);
  std::error_code ec;
  if (std::filesystem::read_symlink(dir / "aws", ec) != cli.path) {
    const std::filesystem::path temporary = dir / ("aws.tmp." + std::to_string(::getpid()));
    std::filesystem::remove(temporary, ec);
    std::filesystem::create_symlink(cli.path, temporary);
    std::filesystem::rename(temporary, dir / "aws");  // atomic: concurrent tests see old or new
  }
  return dir.string();
}

/// Environment for `cli` against `url`: PATH=<dir with only aws>:/usr/bin:/bin, HOME=/nonexistent,
/// dummy keys, AWS_DEFAULT_REGION and AWS_REGION, AWS_ENDPOINT_URL=url, AWS_EC2_METADATA_DISABLED=true,
/// AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE /dev/null, AWS_PAGER empty, and HTTP(S)_PROXY (both
/// cases) pointing at the closed port 127.0.0.1:9 with NO_PROXY=127.0.0.1,localhost: a request that
/// misses the endpoint (a CLI that ignores AWS_ENDPOINT_URL, a script that drops --endpoint-url) fails
/// on this machine ("Failed to connect to proxy URL") instead of reaching AWS.
inline AwsTestEnv aws_test_env(const std::string& url, const AwsCli& cli, const std::string& region = "us-east-1") {
  AwsTestEnv env;
  env.url = url;
  env.region = region;
  env.cli = cli;
  env.bin_dir = aws_bin_dir(cli);
  const std::string guard = "http://127.0.0.1:9";
  env.variables = {"PATH=" + env.bin_dir + ":/usr/bin:/bin",
                   "HOME=/nonexistent",
                   "AWS_ACCESS_KEY_ID=test",
                   "AWS_SECRET_ACCESS_KEY=test",
                   "AWS_DEFAULT_REGION=" + region,
                   "AWS_REGION=" + region,
                   "AWS_ENDPOINT_URL=" + url,
                   "AWS_EC2_METADATA_DISABLED=true",
                   "AWS_CONFIG_FILE=/dev/null",
                   "AWS_SHARED_CREDENTIALS_FILE=/dev/null",
                   "AWS_PAGER=",
                   "HTTP_PROXY=" + guard,
                   "HTTPS_PROXY=" + guard,
                   "http_proxy=" + guard,
                   "https_proxy=" + guard,
                   "NO_PROXY=127.0.0.1,localhost",
                   "no_proxy=127.0.0.1,localhost"};
  return env;
}

/// aws_test_env with chosen_aws_cli() (throws when there is no aws CLI: check
/// MotoServer::unavailable_reason() first).
inline AwsTestEnv aws_test_env(const std::string& url, const std::string& region = "us-east-1") {
  std::optional<AwsCli> cli = chosen_aws_cli();
  if (!cli) throw std::runtime_error("no aws CLI found (aws on PATH, /usr/bin/aws, SPOTDNN_TEST_AWS)");
  return aws_test_env(url, *cli, region);
}

/// Runs `aws --endpoint-url URL --region R --output json ARGS...` (no shell) with exactly env.variables.
inline ProcessResult aws_run(const AwsTestEnv& env, const std::vector<std::string>& args,
                             std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
  std::vector<std::string> argv = {env.cli.path, "--endpoint-url", env.url, "--region", env.region, "--output", "json"};
  argv.insert(argv.end(), args.begin(), args.end());
  return moto_detail::run_process(argv, &env.variables, timeout);
}

/// aws_run's stdout parsed (null when empty); throws std::runtime_error with the stderr on a non-zero exit.
inline nlohmann::json aws_json(const AwsTestEnv& env, const std::vector<std::string>& args) {
  ProcessResult r = aws_run(env, args);
  std::string shown = "aws";
  for (const std::string& a : args) shown += " " + moto_detail::shell_quote(a);
  if (r.exit_code != 0) {
    throw std::runtime_error(shown + " exited " + std::to_string(r.exit_code) + ": " + r.err);
  }
  if (r.out.find_first_not_of(" \t\r\n") == std::string::npos) return nullptr;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(shown + ": output is not JSON (" + e.what() + "): " + r.out.substr(0, 500));
  }
}

/// moto_server on 127.0.0.1 at a free port, in its own process group, logging to `dir`/moto.log, with
/// its request recorder writing `dir`/moto-recording.jsonl. Stopped by the destructor: SIGTERM to the
/// process group, SIGKILL after 5 s. Throws (with the log tail) when it is not answering within 60 s.
class MotoServer {
 public:
  /// The moto_server program: SPOTDNN_MOTO_SERVER (a path, or a name looked up on PATH) or moto_server
  /// on PATH; empty when there is none.
  static std::string program() {
    const char* chosen = std::getenv("SPOTDNN_MOTO_SERVER");
    const std::string name = chosen != nullptr && *chosen != '\0' ? chosen : "moto_server";
    return moto_detail::which(name).value_or("");
  }

  /// Why tests that need moto and the aws CLI cannot run here, or nothing when they can. Computed
  /// once (runs `moto_server --help` and `aws --version`).
  static std::optional<std::string> unavailable_reason() {
    static const std::optional<std::string> reason = []() -> std::optional<std::string> {
      const std::string moto = program();
      if (moto.empty()) {
        const char* chosen = std::getenv("SPOTDNN_MOTO_SERVER");
        return chosen != nullptr && *chosen != '\0'
                   ? "SPOTDNN_MOTO_SERVER=" + std::string(chosen) + " is not an executable (on PATH)"
                   : std::string("moto_server is not on PATH (pip install 'moto[server]', or set SPOTDNN_MOTO_SERVER)");
      }
      ProcessResult help = moto_detail::run_process({moto, "--help"}, nullptr, std::chrono::seconds(60));
      if (help.exit_code != 0) {
        return moto + " --help exited " + std::to_string(help.exit_code) + ": " + moto_detail::tail(help.err, 3);
      }
      if (!chosen_aws_cli()) {
        return std::string("no aws CLI runs (looked for aws on PATH and /usr/bin/aws, or SPOTDNN_TEST_AWS)");
      }
      return std::nullopt;
    }();
    return reason;
  }

  explicit MotoServer(const std::filesystem::path& dir) : dir_(dir) {
    const std::string moto = program();
    if (moto.empty()) throw std::runtime_error("moto_server not found: " + unavailable_reason().value_or("?"));
    std::filesystem::create_directories(dir_);
    log_ = (dir_ / "moto.log").string();
    recording_file_ = (dir_ / "moto-recording.jsonl").string();
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = started + std::chrono::seconds(60);
    for (int attempt = 1;; ++attempt) {
      port_ = moto_detail::free_loopback_port();
      spawn(moto);
      const Outcome outcome = wait_until_answering(deadline);
      if (outcome == Outcome::answering) break;
      const std::string log_text = moto_detail::read_file(log_);
      if (outcome == Outcome::exited && log_text.find("Address already in use") != std::string::npos && attempt < 5) {
        continue;  // another process took the port between our probe and moto's bind
      }
      stop();
      throw std::runtime_error(std::string(outcome == Outcome::exited ? "moto_server exited" : "moto_server did not answer") +
                               " (" + moto + " -H 127.0.0.1 -p " + std::to_string(port_) + ", attempt " +
                               std::to_string(attempt) + "); log tail:\n" + moto_detail::tail(log_text, 20));
    }
    startup_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  ~MotoServer() { stop(); }
  MotoServer(const MotoServer&) = delete;
  MotoServer& operator=(const MotoServer&) = delete;

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] const std::string& log_path() const { return log_; }
  [[nodiscard]] std::string log() const { return moto_detail::read_file(log_); }
  /// Seconds from the first spawn until moto answered.
  [[nodiscard]] double startup_seconds() const { return startup_; }

  /// Resident memory of the moto process in KiB (VmRSS from /proc), 0 when unknown.
  [[nodiscard]] long rss_kib() const {
    std::istringstream status(moto_detail::read_file("/proc/" + std::to_string(pid_) + "/status"));
    for (std::string line; std::getline(status, line);) {
      if (line.compare(0, 6, "VmRSS:") == 0) return std::atol(line.c_str() + 6);
    }
    return 0;
  }

  /// An HTTP request to moto (e.g. "GET", "/moto-api/").
  [[nodiscard]] moto_detail::HttpResponse http(const std::string& method, const std::string& path,
                                              const std::string& body = "") const {
    return moto_detail::http_request(port_, method, path, body);
  }

  /// POST /moto-api/reset: every backend back to its initial state (a new default VPC, new IDs). The
  /// recording is not cleared.
  void reset() const { expect_ok("POST", "/moto-api/reset"); }

  /// Empties the recording and starts recording every request but the recorder's own.
  void start_recording() const {
    expect_ok("POST", "/moto-api/recorder/reset-recording");
    expect_ok("POST", "/moto-api/recorder/start-recording");
  }
  void stop_recording() const { expect_ok("POST", "/moto-api/recorder/stop-recording"); }

  /// The requests recorded since start_recording(), oldest first, each {"method", "url", "path",
  /// "query", "headers", "body" (decoded), "params" (query string and form body fields), "Action"
  /// (params' Action, "" for REST calls such as S3)}: the {"Action", "params"} shape first_call() and tags_of() read.
  [[nodiscard]] std::vector<nlohmann::json> recording() const {
    moto_detail::HttpResponse r = http("GET", "/moto-api/recorder/download-recording");
    if (r.status != 200) throw std::runtime_error("download-recording: HTTP " + std::to_string(r.status) + ": " + r.body);
    std::vector<nlohmann::json> out;
    std::istringstream lines(r.body);
    for (std::string line; std::getline(lines, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const nlohmann::json entry = nlohmann::json::parse(line);
      nlohmann::json call;
      call["method"] = entry.value("method", "");
      call["url"] = entry.value("url", "");
      call["headers"] = entry.value("headers", nlohmann::json::object());
      std::string body = entry["body"].is_string() ? entry["body"].get<std::string>() : std::string();
      if (entry.value("body_encoded", false)) body = base64_decode(body);
      call["body"] = body;
      const std::string url = call["url"];
      const std::size_t scheme = url.find("://");
      const std::size_t path_start = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
      std::string path = path_start == std::string::npos ? "/" : url.substr(path_start);
      std::string query;
      if (const std::size_t q = path.find('?'); q != std::string::npos) {
        query = path.substr(q + 1);
        path.resize(q);
      }
      call["path"] = path;
      call["query"] = query;
      nlohmann::json params = nlohmann::json::object();
      moto_detail::parse_form(query, params);
      std::string content_type;
      for (const auto& [name, value] : call["headers"].items()) {
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        if (lower == "content-type" && value.is_string()) content_type = value.get<std::string>();
      }
      if (content_type.find("application/x-www-form-urlencoded") != std::string::npos) moto_detail::parse_form(body, params);
      call["params"] = params;
      call["Action"] = params.value("Action", "");
      out.push_back(std::move(call));
    }
    return out;
  }

  /// The recorded calls of `action` (e.g. "RunInstances").
  [[nodiscard]] std::vector<nlohmann::json> recorded_calls(const std::string& action) const {
    std::vector<nlohmann::json> out;
    for (nlohmann::json& call : recording()) {
      if (call["Action"] == action) out.push_back(std::move(call));
    }
    return out;
  }

 private:
  enum class Outcome { answering, exited, timed_out };

  void expect_ok(const std::string& method, const std::string& path) const {
    moto_detail::HttpResponse r = http(method, path);
    if (r.status != 200) throw std::runtime_error(method + " " + path + ": HTTP " + std::to_string(r.status) + ": " + r.body);
  }

  void spawn(const std::string& moto) {
    std::vector<std::string> args = {moto, "-H", "127.0.0.1", "-p", std::to_string(port_)};
    std::vector<std::string> vars =
        moto_detail::environment_with({"MOTO_RECORDER_FILEPATH=" + recording_file_, "PYTHONUNBUFFERED=1"});
    std::vector<char*> c_args = moto_detail::c_array(args);
    std::vector<char*> c_vars = moto_detail::c_array(vars);
    const int log_fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) throw std::runtime_error("cannot open " + log_);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(log_fd);
      throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
      ::setpgid(0, 0);
#ifdef __linux__
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the test process died: do not outlive it
      if (::getppid() != parent) ::_exit(1);
#endif
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd >= 0) ::dup2(null_fd, 0);
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
      ::execve(c_args[0], c_args.data(), c_vars.data());
      const std::string message = "execve " + args[0] + ": " + std::strerror(errno) + "\n";
      [[maybe_unused]] const ssize_t ignored = ::write(2, message.data(), message.size());
      ::_exit(127);
    }
    (void)parent;
    ::setpgid(pid, pid);  // also here, so stop() can signal the group whichever runs first
    ::close(log_fd);
    pid_ = pid;
  }

  Outcome wait_until_answering(std::chrono::steady_clock::time_point deadline) {
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return Outcome::exited;
      }
      try {
        moto_detail::HttpResponse r = moto_detail::http_request(port_, "GET", "/moto-api/", "", 10);
        // Ours only if it is moto's dashboard and our child is still alive (not exited on EADDRINUSE).
        if (r.status == 200 && r.body.find("Moto") != std::string::npos && ::waitpid(pid_, &status, WNOHANG) == 0) {
          return Outcome::answering;
        }
      } catch (const std::runtime_error&) {
        // not listening yet
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Outcome::timed_out;
  }

  /// SIGTERM to moto's process group; SIGKILL to the group after 5 s or once moto has exited (its PID
  /// is still held, unreaped, so the group id cannot have been reused); then reaped.
  void stop() noexcept {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) break;  // not ours
      if (info.si_pid == pid_) break;  // exited, not yet reaped
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

  std::filesystem::path dir_;
  std::string log_, recording_file_;
  int port_ = 0;
  pid_t pid_ = -1;
  double startup_ = 0;
};

}  // namespace spotdnn::test
