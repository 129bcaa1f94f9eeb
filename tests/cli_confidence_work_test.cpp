// SPDX-License-Identifier: MIT
// `spotdnn plan --confidence` at its simulation work limit: a plan that would need more simulated events
// than the limit stays undecided and is passed over, and the command finishes (exit 0) with the reason,
// instead of stopping late with exit 2 ("simulate: work = ... events ... at most 10000000").
#include <doctest/doctest.h>

#include <string>

#include "support/run_command.hpp"

using spotdnn::test::run_cli;

namespace {

/// The request that stopped late (`--confidence 0.95 --fallback-hazard 1 --target-loss 0.7 --deadline 5000
/// --tolerance 0 --max-scenarios 1000000`) at level 0.25, where the second and third cheapest plans (P about
/// 0.259 and 0.255) cannot be told from 0.25 within --max-events 200000: the same path as the default
/// limit of 10,000,000 events, in a fraction of the time.
const std::string kQuestion =
    "plan --confidence 0.25 --fallback-hazard 1 --target-loss 0.7 --deadline 5000 --tolerance 0 --max-scenarios 1000000 "
    "--max-events 200000 --no-progress";

}  // namespace

TEST_CASE("plan --confidence passes over a plan at the work limit as undecided and finishes with the reason") {
  const spotdnn::test::CommandResult r = run_cli(kQuestion);
  CAPTURE(r.err);
  CAPTURE(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("undecided (work limit)") != std::string::npos);
  CHECK(r.out.find("of them at the work limit of 200000 events, --max-events") != std::string::npos);
  CHECK(r.out.find("stayed undecided at the simulation work limit of 200000 events per candidate") != std::string::npos);
  CHECK(r.out.find("with confidence") != std::string::npos);  // a plan was still found
  CHECK(r.err.find("simulate: work") == std::string::npos);
}

TEST_CASE("plan --max-events is refused without --confidence and outside 1 to 10000000") {
  const spotdnn::test::CommandResult alone = run_cli("plan --target-loss 0.7 --deadline 5000 --max-events 1000");
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("--max-events") != std::string::npos);
  CHECK(alone.err.find("only with --confidence") != std::string::npos);
  const spotdnn::test::CommandResult above = run_cli(
      "plan --confidence 0.9 --fallback-hazard 1 --target-loss 0.7 --deadline 5000 --max-events 10000001");
  CHECK(above.exit_code == 2);
  CHECK(above.err.find("--max-events") != std::string::npos);
}
