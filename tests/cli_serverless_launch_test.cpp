// SPDX-License-Identifier: MIT
// `spotdnn launch --serverless` through the CLI: a serverless plan document and examples/aws-serverless.json
// in, the bash script out (or its JSON document); the wrong document or configuration for the flag, an
// infeasible plan and the EC2-only flags are refused with exit 2 and one line. (The script itself runs
// against moto_server in moto_serverless_launch_test.cpp.)
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
const std::string kServerlessAws = kRepo + "/examples/aws-serverless.json";
const std::string kSpotAws = kRepo + "/examples/aws.json";

/// A serverless plan document as `spotdnn serverless plan --format json` writes it.
Json serverless_document() {
  return Json::parse(R"({"kind": "spotdnn.serverless_plan", "schema_version": 2, "status": "optimal",
    "message": "optimal", "algorithm": "exact", "profile_name": "resnet-fasdl", "epochs": 10, "deadline_s": 3000,
    "workers": 9, "memory_mb": 1536, "aggregators": 2, "batch": 32, "non_aggregator_batch": 130, "iterations": 513,
    "iteration_time_s": 5.676, "training_time_s": 2911.8, "cost_usd": 0.7079, "lambda_cost_usd": 0.655,
    "s3_cost_usd": 0.0527, "samples_trained": 500000, "extrapolated": false})");
}

std::string serverless_plan_file(const std::string& name, const Json& document = serverless_document()) {
  return write_temp_file(name, document.dump(2));
}

}  // namespace

TEST_CASE("launch --serverless writes the Lambda launch script of a serverless plan, from a file or stdin") {
  const std::string plan = serverless_plan_file("cli_serverless_plan.json");
  const auto launched = run_cli("launch --serverless --plan '" + plan + "' --aws '" + kServerlessAws + "'");
  INFO(launched.err);
  REQUIRE(launched.exit_code == 0);
  CHECK(launched.err.empty());
  CHECK(launched.out.rfind("#!/usr/bin/env bash", 0) == 0);
  CHECK(launched.out.find("--memory-size 1536 --timeout 900") != std::string::npos);
  CHECK(launched.out.find("readonly BUCKET='my-team-fasdl-'\"$RUN_ID\"") != std::string::npos);
  CHECK(run_shell("bash -n '" + write_temp_file("cli_serverless_launch.sh", launched.out) + "'").exit_code == 0);

  const auto from_stdin = run_shell("'" + std::string(SPOTDNN_CLI_PATH) + "' launch --serverless --plan - --aws '" + kServerlessAws +
                                    "' < '" + plan + "'");
  CHECK(from_stdin.exit_code == 0);
  CHECK(from_stdin.out == launched.out);
}

TEST_CASE("launch --serverless --format json wraps the script with the functions it creates") {
  const std::string plan = serverless_plan_file("cli_serverless_format_plan.json");
  const auto script = run_cli("launch --serverless --plan '" + plan + "' --aws '" + kServerlessAws + "'");
  const auto wrapped = run_cli("launch --serverless --plan '" + plan + "' --aws '" + kServerlessAws + "' --format json");
  REQUIRE(script.exit_code == 0);
  REQUIRE(wrapped.exit_code == 0);
  const Json document = Json::parse(wrapped.out);
  CHECK(document["kind"] == "spotdnn.script");
  CHECK(document["command"] == "launch-serverless");
  CHECK(document["run_id"].is_null());
  CHECK(document["region"] == "us-east-1");
  CHECK(document["functions"]["count"] == 9);
  CHECK(document["functions"]["aggregators"] == 2);
  CHECK(document["functions"]["memory_mb"] == 1536);
  CHECK(document["functions"]["timeout_s"] == 900);
  CHECK(document["functions"]["image_uri"] == "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest");
  CHECK(document["bucket_prefix"] == "my-team-fasdl");
  CHECK(document["script"] == script.out);
}

TEST_CASE("launch refuses a serverless plan without --serverless and a spot plan with it, each saying which flag to use") {
  const std::string serverless_plan = serverless_plan_file("cli_serverless_kind_plan.json");
  const auto without_flag = run_cli("launch --plan '" + serverless_plan + "' --aws '" + kSpotAws + "'");
  CHECK(without_flag.exit_code == 2);
  CHECK(without_flag.out.empty());
  CHECK(without_flag.err_lines() == 1);
  CHECK(without_flag.err.find("add --serverless") != std::string::npos);

  const auto planned = run_cli("plan --target-loss 0.8 --deadline 2400 --format json");
  REQUIRE(planned.exit_code == 0);
  const std::string spot_plan = write_temp_file("cli_serverless_spot_plan.json", planned.out);
  const auto with_flag = run_cli("launch --serverless --plan '" + spot_plan + "' --aws '" + kServerlessAws + "'");
  CHECK(with_flag.exit_code == 2);
  CHECK(with_flag.out.empty());
  CHECK(with_flag.err_lines() == 1);
  CHECK(with_flag.err.find("drop --serverless") != std::string::npos);
}

TEST_CASE("launch --serverless needs the serverless configuration, and a serverless-only configuration cannot launch EC2") {
  const std::string plan = serverless_plan_file("cli_serverless_config_plan.json");
  const auto spot_config = run_cli("launch --serverless --plan '" + plan + "' --aws '" + kSpotAws + "'");
  CHECK(spot_config.exit_code == 2);
  CHECK(spot_config.err_lines() == 1);
  CHECK(spot_config.err.find("key aws.serverless is missing") != std::string::npos);

  const auto planned = run_cli("plan --target-loss 0.8 --deadline 2400 --format json");
  REQUIRE(planned.exit_code == 0);
  const std::string spot_plan = write_temp_file("cli_serverless_config_spot_plan.json", planned.out);
  const auto serverless_config = run_cli("launch --plan '" + spot_plan + "' --aws '" + kServerlessAws + "'");
  CHECK(serverless_config.exit_code == 2);
  CHECK(serverless_config.err_lines() == 1);
  CHECK(serverless_config.err.find("key aws.subnet_id is missing") != std::string::npos);
  CHECK(serverless_config.err.find("--serverless") != std::string::npos);
}

TEST_CASE("launch --serverless refuses an infeasible plan quoting its message, and the EC2-only flags") {
  Json infeasible = serverless_document();
  infeasible["status"] = "infeasible";
  infeasible["message"] = "no configuration meets the deadline of 1000 s; the fastest takes 1389.08 s";
  const std::string infeasible_plan = serverless_plan_file("cli_serverless_infeasible.json", infeasible);
  const auto refused = run_cli("launch --serverless --plan '" + infeasible_plan + "' --aws '" + kServerlessAws + "'");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err_lines() == 1);
  CHECK(refused.err.find("infeasible") != std::string::npos);
  CHECK(refused.err.find("1389.08 s") != std::string::npos);

  const std::string plan = serverless_plan_file("cli_serverless_flags_plan.json");
  for (const std::string flag : {"--fleet", "--region-override", "--join 20261124-101500-3fa9c2"}) {
    INFO(flag);
    const auto r = run_cli("launch --serverless " + flag + " --plan '" + plan + "' --aws '" + kServerlessAws + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("does not go with --serverless") != std::string::npos);
  }

  Json hostile = serverless_document();
  hostile["memory_mb"] = 20000;
  const auto too_much = run_cli("launch --serverless --plan '" + serverless_plan_file("cli_serverless_memory.json", hostile) +
                                "' --aws '" + kServerlessAws + "'");
  CHECK(too_much.exit_code == 2);
  CHECK(too_much.err.find("plan.memory_mb = 20000") != std::string::npos);
}
