// SPDX-License-Identifier: MIT
// `spotdnn launch`, `status` and `teardown` end to end through the CLI: the README's commands work as
// printed, plan documents are the only thing launch takes, run ids are checked, --format works. (The
// scripts themselves run against moto_server in launcher_moto_test.cpp.)
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/io/json.hpp>

#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::run_cli;
using spotdnn::test::run_shell;
using spotdnn::test::write_temp_file;

namespace {

const std::string kRepo = SPOTDNN_TEST_SOURCE_DIR;
const std::string kRun = "20261124-101500-3fa9c2";

/// `spotdnn ARGS` run in the repository root, as a reader of the README would.
spotdnn::test::CommandResult in_repo(const std::string& arguments) {
  return run_shell("cd '" + kRepo + "' && '" + SPOTDNN_CLI_PATH + "' " + arguments);
}

}  // namespace

TEST_CASE("the README's plan and launch commands work as printed, with examples/aws.json") {
  const auto planned = in_repo("plan --target-loss 0.8 --deadline 2400 --format json");
  REQUIRE(planned.exit_code == 0);
  const Json plan = Json::parse(planned.out);
  CHECK(plan["kind"] == "spotdnn.plan");
  CHECK(plan["schema_version"] == 2);
  const std::string plan_path = write_temp_file("cli_launch_readme_plan.json", planned.out);
  const auto launched = in_repo("launch --plan '" + plan_path + "' --aws examples/aws.json");
  REQUIRE(launched.exit_code == 0);
  CHECK(launched.err.empty());
  CHECK(launched.out.rfind("#!/usr/bin/env bash", 0) == 0);
  CHECK(launched.out.find("RUN_ID=\"$(date -u +%Y%m%d-%H%M%S)-") != std::string::npos);
  const std::string script = write_temp_file("cli_launch_readme.sh", launched.out);
  CHECK(run_shell("bash -n '" + script + "'").exit_code == 0);

  for (const std::string command : {"status", "teardown"}) {
    INFO(command);
    const auto r = in_repo(command + " --run " + kRun + " --aws examples/aws.json");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("readonly RUN_ID='" + kRun + "'") != std::string::npos);
    CHECK(run_shell("bash -n '" + write_temp_file("cli_launch_" + command + ".sh", r.out) + "'").exit_code == 0);
  }
}

TEST_CASE("launch takes only plan documents: a prediction, a hand-made plan and a replan without --join are refused") {
  const auto predicted = run_cli("predict --cluster p3.2xlarge=2 --target-loss 0.8 --format json");
  REQUIRE(predicted.exit_code == 0);
  const std::string aws = kRepo + "/examples/aws.json";
  const auto from_prediction = run_cli("launch --plan '" + write_temp_file("cli_launch_predicted.json", predicted.out) + "' --aws '" + aws + "'");
  CHECK(from_prediction.exit_code == 2);
  CHECK(from_prediction.out.empty());
  CHECK(from_prediction.err_lines() == 1);
  CHECK(from_prediction.err.find("kind") != std::string::npos);

  const std::string hand_made = write_temp_file("cli_launch_hand_made.json", R"({"status": "optimal", "cluster": {"p3.2xlarge": 2}})");
  const auto from_hand_made = run_cli("launch --plan '" + hand_made + "' --aws '" + aws + "'");
  CHECK(from_hand_made.exit_code == 2);
  CHECK(from_hand_made.err_lines() == 1);

  const auto infeasible = run_cli("plan --target-loss 0.8 --deadline 60 --format json");
  REQUIRE(infeasible.exit_code == 3);
  const auto from_infeasible =
      run_cli("launch --plan '" + write_temp_file("cli_launch_infeasible.json", infeasible.out) + "' --aws '" + aws + "'");
  CHECK(from_infeasible.exit_code == 2);
  CHECK(from_infeasible.err_lines() == 1);
  CHECK(from_infeasible.err.find("infeasible") != std::string::npos);

  const std::string state = kRepo + "/tests/hostile/state.json";
  const auto replanned = run_cli("replan --state '" + state + "' --format json");
  REQUIRE(replanned.exit_code == 0);
  const Json replan = Json::parse(replanned.out);
  CHECK(replan["kind"] == "spotdnn.replan");
  const std::string replan_path = write_temp_file("cli_launch_replan.json", replanned.out);
  const auto without_join = run_cli("launch --plan '" + replan_path + "' --aws '" + aws + "'");
  CHECK(without_join.exit_code == 2);
  CHECK(without_join.err.find("--join") != std::string::npos);

  const auto joined = run_cli("launch --join " + kRun + " --plan '" + replan_path + "' --aws '" + aws + "'");
  REQUIRE(joined.exit_code == 0);
  CHECK(joined.out.find("readonly RUN_ID='" + kRun + "'") != std::string::npos);
  CHECK(joined.out.find("RUN_ID=\"$(date") == std::string::npos);  // a join never makes a new run
  CHECK(run_shell("bash -n '" + write_temp_file("cli_launch_join.sh", joined.out) + "'").exit_code == 0);
}

TEST_CASE("run ids that EC2 filters or the aws CLI would read as patterns or lists are refused") {
  const std::string aws = kRepo + "/examples/aws.json";
  for (const std::string bad : {"'*'", "'2026112?-101500-3fa9c2'", "'20261124-101500-3fa9c2,x'", "20261124-101500-3FA9C2",
                                "2026-11-24", "'20261124-101500-3fa9c2 '", "''"}) {
    INFO(bad);
    for (const std::string command : {"status --run ", "teardown --run "}) {
      const auto r = run_cli(command + bad + " --aws '" + aws + "'");
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err_lines() == 1);
    }
  }
}

TEST_CASE("--format json wraps the script with what it does, and table and csv are refused") {
  const auto planned = run_cli("plan --target-loss 0.8 --deadline 2400 --format json");
  REQUIRE(planned.exit_code == 0);
  const std::string plan_path = write_temp_file("cli_launch_format_plan.json", planned.out);
  const Json plan = Json::parse(planned.out);
  const std::string aws = kRepo + "/examples/aws.json";
  const auto script = run_cli("launch --plan '" + plan_path + "' --aws '" + aws + "'");
  const auto wrapped = run_cli("launch --plan '" + plan_path + "' --aws '" + aws + "' --format json");
  REQUIRE(script.exit_code == 0);
  REQUIRE(wrapped.exit_code == 0);
  const Json document = Json::parse(wrapped.out);
  CHECK(document["kind"] == "spotdnn.script");
  CHECK(document["command"] == "launch");
  CHECK(document["script"] == script.out);
  CHECK(document["region"] == "us-east-1");
  long workers = 0;
  for (const Json& group : document["workers"]) {
    CHECK(plan["cluster"][group["type"].get<std::string>()] == group["count"]);
    CHECK(plan["markets"][group["type"].get<std::string>()] == group["market"]);
    workers += group["count"].get<long>();
  }
  CHECK(workers == plan["workers"].get<long>());
  for (const std::string format : {"table", "csv", "yaml"}) {
    const auto refused = run_cli("launch --plan '" + plan_path + "' --aws '" + aws + "' --format " + format);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("this command writes script or json") != std::string::npos);
  }
}

TEST_CASE("a plan priced for another region launches only with --region-override, which the script states") {
  const auto planned = run_cli("plan --target-loss 0.8 --deadline 2400 --format json");
  REQUIRE(planned.exit_code == 0);
  Json plan = Json::parse(planned.out);
  plan["region"] = "eu-west-1";
  const std::string plan_path = write_temp_file("cli_launch_region_plan.json", plan.dump());
  const std::string aws = kRepo + "/examples/aws.json";
  const auto refused = run_cli("launch --plan '" + plan_path + "' --aws '" + aws + "'");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--region-override") != std::string::npos);
  CHECK(refused.err.find("eu-west-1") != std::string::npos);
  const auto overridden = run_cli("launch --plan '" + plan_path + "' --aws '" + aws + "' --region-override");
  REQUIRE(overridden.exit_code == 0);
  CHECK(overridden.out.find("--region-override: the plan was priced for eu-west-1") != std::string::npos);
  CHECK(overridden.out.find("readonly REGION='us-east-1'") != std::string::npos);
}
