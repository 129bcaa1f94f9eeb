// SPDX-License-Identifier: MIT
// When the machine refuses a resource (memory, a thread), the CLI exits 1 with one line saying which,
// never std::terminate or a signal. The address-space limit (prlimit --as) that provokes the failures
// cannot be combined with AddressSanitizer, which reserves terabytes of shadow memory, so the sanitized
// build skips these cases.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "support/run_command.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define SPOTDNN_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPOTDNN_TEST_UNDER_ASAN 1
#endif
#endif

namespace {

#ifndef SPOTDNN_TEST_UNDER_ASAN
/// The CLI under an address-space limit of `megabytes`.
spotdnn::test::CommandResult run_limited(int megabytes, const std::string& arguments) {
  return spotdnn::test::run_shell("prlimit --as=" + std::to_string(megabytes * 1024LL * 1024LL) + " '" +
                                  SPOTDNN_CLI_PATH + "' " + arguments);
}

/// `simulate` of a `workers`-worker cluster, followed by further options.
std::string simulate(int workers, const std::string& options) {
  return "simulate --cluster p3.2xlarge=" + std::to_string(workers) +
         " --target-loss 0.8 --deadline 3000 --fallback-hazard 0.1 " + options;
}

/// A run that ran out of a resource: exit 1, nothing on stdout, one line on stderr holding every `needle`.
void check_resource_failure(const spotdnn::test::CommandResult& r, std::initializer_list<std::string_view> needles) {
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
  for (std::string_view needle : needles) CHECK(r.err.find(needle) != std::string::npos);
}
#endif

}  // namespace

TEST_CASE("a thread that cannot start ends the run with exit 1 and one line naming the thread") {
#ifdef SPOTDNN_TEST_UNDER_ASAN
  MESSAGE("skipped under AddressSanitizer");
#else
  // 256 threads need 2 GiB of stacks: with 600 MiB of address space some cannot start.
  check_resource_failure(run_limited(600, simulate(2, "--threads 256 --scenarios 100000")),
                         {"cannot start thread", "use fewer --threads"});
  // The same run on one thread fits and answers.
  const auto ok = run_limited(600, simulate(2, "--threads 1 --scenarios 1000"));
  CHECK(ok.exit_code == 0);
#endif
}

TEST_CASE("running out of memory ends the run with exit 1 and one line, not a signal") {
#ifdef SPOTDNN_TEST_UNDER_ASAN
  MESSAGE("skipped under AddressSanitizer");
#else
  // Ten million outcomes kept for the histogram need about 0.5 GB. One worker keeps the run inside the
  // simulation's work limit (scenarios x workers <= 10^7), so memory is what fails.
  check_resource_failure(run_limited(600, simulate(1, "--threads 1 --scenarios 10000000 --plot never-written.svg")),
                         {"out of memory"});
#endif
}
