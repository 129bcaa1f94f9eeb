// SPDX-License-Identifier: MIT
// How the CLI runs another program (examples/cli/process.hpp): captured streams and exit codes, one
// deadline that holds whatever the child does with its pipes, its process group ended (nothing left
// behind, checked in /proc by a marker in the command line), output capped, and a SIGTERM of this process
// forwarded to the child's group before it is raised again.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../examples/cli/process.hpp"
#include "support/live_processes.hpp"

using spotdnn::test::live_processes_with;

namespace {

using spotdnn::cli::ProcessOptions;
using spotdnn::cli::ProcessResult;
using spotdnn::cli::run_process;
using Clock = std::chrono::steady_clock;

/// A marker unique to this test process and `name`, put in the child's command line ($0 of sh -c).
std::string marker(const std::string& name) { return "spotdnn-process-test-" + name + "-" + std::to_string(::getpid()); }

/// `/bin/sh -c SCRIPT MARKER` run with `options`, and how long it took.
ProcessResult run_sh(const std::string& script, const std::string& mark, const ProcessOptions& options, double& seconds) {
  const auto start = Clock::now();
  ProcessResult result = run_process({"/bin/sh", "-c", script, mark}, options);
  seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

ProcessOptions with_timeout_ms(int ms) {
  ProcessOptions options;
  options.timeout = std::chrono::milliseconds(ms);
  return options;
}

volatile std::sig_atomic_t g_seen_signal = 0;
void record_signal(int signo) { g_seen_signal = signo; }

}  // namespace

TEST_CASE("run_process captures stdout, stderr and the exit code of a program run without a shell") {
  double seconds = 0;
  const ProcessResult r = run_sh("printf 'out'; printf 'err\\n' >&2; exit 3", marker("plain"), with_timeout_ms(5000), seconds);
  CHECK(r.started);
  CHECK(r.exit_code == 3);
  CHECK(r.signal == 0);
  CHECK(!r.timed_out);
  CHECK(!r.left_processes);
  CHECK(r.out == "out");
  CHECK(r.err == "err\n");
  CHECK(!r.succeeded());
  CHECK(r.outcome() == "exited 3");
  CHECK(seconds < 1.0);
  const ProcessResult missing = run_process({"/nonexistent/spotdnn-no-such-program"});
  CHECK(!missing.started);
  CHECK(missing.outcome().rfind("could not be run: ", 0) == 0);
}

TEST_CASE("run_process ends a child that hangs at its deadline, with its whole process group") {
  const std::string mark = marker("hang");
  double seconds = 0;
  const ProcessResult r = run_sh("(while :; do sleep 0.05; done) & while :; do sleep 0.05; done", mark, with_timeout_ms(300), seconds);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGTERM);
  CHECK(r.outcome() == "did not finish in time and was killed");
  CHECK(seconds >= 0.29);
  CHECK(seconds < 0.3 + 0.3 + 0.4);  // the deadline, the kill grace, slack
  CHECK(live_processes_with(mark) == 0);
}

TEST_CASE("run_process holds the deadline for a child that closes its pipes early and goes on") {
  const std::string mark = marker("closed");
  double seconds = 0;
  const ProcessResult r = run_sh("printf early; exec >&- 2>&-; while :; do sleep 0.05; done", mark, with_timeout_ms(300), seconds);
  CHECK(r.timed_out);
  CHECK(r.out == "early");
  CHECK(seconds < 1.0);
  CHECK(live_processes_with(mark) == 0);
}

TEST_CASE("run_process returns after the drain grace when a grandchild keeps the pipes open, and ends that grandchild") {
  const std::string mark = marker("holder");
  double seconds = 0;
  const ProcessResult r =
      run_sh("printf '{\"a\": 1}'; (while :; do sleep 0.05; done) & exit 0", mark, with_timeout_ms(5000), seconds);
  CHECK(r.succeeded());
  CHECK(r.exit_code == 0);
  CHECK(r.out == "{\"a\": 1}");
  CHECK(r.left_processes);
  CHECK(seconds >= 0.19);             // the drain grace (200 ms) ...
  CHECK(seconds < 0.2 + 0.3 + 0.4);   // ... then the kill grace at most, with slack; never the 5 s timeout
  CHECK(live_processes_with(mark) == 0);
}

TEST_CASE("run_process ends a child that prints past the output limit and keeps exactly the limit") {
  const std::string mark = marker("flood");
  ProcessOptions options = with_timeout_ms(5000);
  options.max_output_bytes = 1000;
  double seconds = 0;
  const ProcessResult r = run_sh("while :; do echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; done", mark, options, seconds);
  CHECK(r.output_too_large);
  CHECK(!r.succeeded());
  CHECK(r.out.size() == 1000);
  CHECK(seconds < 1.5);
  CHECK(live_processes_with(mark) == 0);
}

TEST_CASE("run_process forwards a SIGTERM of this process to the child's group, reaps it, then raises the signal again") {
  const std::string mark = marker("sigterm");
  struct sigaction recording, old;
  std::memset(&recording, 0, sizeof recording);
  recording.sa_handler = record_signal;
  sigemptyset(&recording.sa_mask);
  REQUIRE(::sigaction(SIGTERM, &recording, &old) == 0);
  g_seen_signal = 0;
  double seconds = 0;
  // The child signals its parent (this test process) and then hangs.
  const ProcessResult r = run_sh("kill -TERM $PPID; while :; do sleep 0.05; done", mark, with_timeout_ms(5000), seconds);
  struct sigaction during;
  ::sigaction(SIGTERM, &old, &during);
  const bool restored = during.sa_handler == &record_signal;
  CHECK(restored);  // the old action came back
  CHECK(r.interrupted_by == SIGTERM);
  CHECK(g_seen_signal == SIGTERM);  // raised again once the child was gone
  CHECK(!r.timed_out);
  CHECK(!r.succeeded());
  CHECK(r.outcome() == "was stopped: spotdnn got signal " + std::to_string(SIGTERM));
  CHECK(seconds < 1.0);
  CHECK(live_processes_with(mark) == 0);
}

TEST_CASE("first_error_line skips blank lines, joins a line ending in ':' with the next, and caps at a UTF-8 boundary") {
  ProcessResult r;
  r.err = "\n  Parameter validation failed:\nInvalid type\nmore\n";
  CHECK(r.first_error_line() == "Parameter validation failed: Invalid type");
  r.err = std::string(10, 'a') + "\xc3\xa9" + "zz";
  CHECK(r.first_error_line(11) == std::string(10, 'a') + "...");
}
