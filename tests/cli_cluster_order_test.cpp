// SPDX-License-Identifier: MIT
// One cluster, one order: every command prints a cluster in type-name order (Cluster::to_string), whether
// in a table, a message, a JSON label or a CSV cell (';' there, so it stays one cell), whatever order the
// catalog lists the types in. The preset's 2,400 s plan is p3.2xlarge=2 and g3.8xlarge=4; the catalog lists
// p3.2xlarge first.
#include <doctest/doctest.h>

#include <string>

#include "support/run_command.hpp"

using spotdnn::test::run_cli;

namespace {

const std::string kNameOrder = "g3.8xlarge=4,p3.2xlarge=2";
const std::string kNameOrderCell = "g3.8xlarge=4;p3.2xlarge=2";

/// `text` holds the cluster in name order and never in catalog order (with either separator).
void check_name_order(const std::string& text, const std::string& expected) {
  CHECK(text.find(expected) != std::string::npos);
  CHECK(text.find("p3.2xlarge=2,g3.8xlarge=4") == std::string::npos);
  CHECK(text.find("p3.2xlarge=2;g3.8xlarge=4") == std::string::npos);
}

}  // namespace

TEST_CASE("plan, frontier, simulate and compare print one cluster in one order") {
  const auto plan = run_cli("plan --target-loss 0.8 --deadline 2400");
  REQUIRE(plan.exit_code == 0);
  check_name_order(plan.out, kNameOrder);  // "cheapest plan: g3.8xlarge=4,p3.2xlarge=2 reaches ..."

  const auto plan_json = run_cli("plan --target-loss 0.8 --deadline 2400 --format json");
  REQUIRE(plan_json.exit_code == 0);
  check_name_order(plan_json.out, kNameOrder);  // its message

  const auto plan_csv = run_cli("plan --target-loss 0.8 --deadline 2400 --format csv");
  REQUIRE(plan_csv.exit_code == 0);
  check_name_order(plan_csv.out, kNameOrderCell);

  // The staircase from 2,300 s to 2,500 s holds the 2,400 s plan as one of its steps.
  const auto frontier = run_cli("frontier --target-loss 0.8 --deadlines 2300:2500");
  REQUIRE(frontier.exit_code == 0);
  check_name_order(frontier.out, kNameOrder);
  const auto frontier_csv = run_cli("frontier --target-loss 0.8 --deadlines 2300:2500 --format csv");
  REQUIRE(frontier_csv.exit_code == 0);
  check_name_order(frontier_csv.out, kNameOrderCell);

  // Given in catalog order, printed in name order.
  const std::string simulate = "simulate --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --deadline 45m --fallback-hazard 0.3 --scenarios 50";
  const auto simulated = run_cli(simulate);
  REQUIRE(simulated.exit_code == 0);
  check_name_order(simulated.out, kNameOrder);
  const auto simulated_csv = run_cli(simulate + " --format csv");
  REQUIRE(simulated_csv.exit_code == 0);
  check_name_order(simulated_csv.out, kNameOrderCell);
}
