// SPDX-License-Identifier: MIT
// The commands that act on a run (status, teardown, watch, cost) with an AWS configuration of several
// regions: --region picks the run's region, watch and cost take the plan's when --region is absent, a file
// of several regions without either is refused naming them, --region must be one of the file's regions
// (with a one-region file, that region), and a one-region file works as before without --region.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include <sys/stat.h>

#include <spotdnn/io/json.hpp>

#include "support/cli_refusal.hpp"
#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::CommandResult;
using spotdnn::test::run_cli;
using spotdnn::test::check_cli_refused;
using spotdnn::test::write_temp_file;

namespace {

const std::string kRun = "20261124-101500-3fa9c2";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// An AWS configuration of two regions, us-east-1 and us-west-2, each with its own subnet and image.
std::string two_region_aws() {
  return write_temp_file(
      "cli_run_regions_aws2.json",
      R"({"checkpoint_s3_uri": "s3://team-bucket/resnet110", "training_command": "python3 train.py",
          "regions": {
            "us-east-1": {"subnet_id": "subnet-0123456789abcdef0", "security_group_ids": ["sg-0123456789abcdef0"],
                          "image_id": "ami-0123456789abcdef0",
                          "serverless": {"image_uri": "111122223333.dkr.ecr.us-east-1.amazonaws.com/train:1",
                                         "role_arn": "arn:aws:iam::111122223333:role/spotdnn-lambda"}},
            "us-west-2": {"subnet_id": "subnet-0bbbbbbbbbbbbbbb2", "security_group_ids": ["sg-0bbbbbbbbbbbbbbb2"],
                          "image_id": "ami-0bbbbbbbbbbbbbbb2",
                          "serverless": {"image_uri": "111122223333.dkr.ecr.us-west-2.amazonaws.com/train:1",
                                         "role_arn": "arn:aws:iam::111122223333:role/spotdnn-lambda"}}}})");
}

/// The flat (one-region) AWS configuration of us-east-1.
std::string one_region_aws() {
  return write_temp_file("cli_run_regions_aws1.json",
                         R"({"region": "us-east-1", "subnet_id": "subnet-0123456789abcdef0",
                             "security_group_ids": ["sg-0123456789abcdef0"], "image_id": "ami-0123456789abcdef0",
                             "checkpoint_s3_uri": "s3://team-bucket/resnet110", "training_command": "python3 train.py"})");
}

/// A plan document priced in `region`.
std::string plan_in(const std::string& region) {
  return write_temp_file("cli_run_regions_plan_" + region + ".json", R"({"kind": "spotdnn.plan", "schema_version": 2,
    "status": "optimal", "message": "the cheapest cluster meeting the deadline", "region": ")" + region + R"(",
    "workload_name": "resnet110", "target_loss": 0.8, "deadline_s": 2400, "cluster": {"p3.2xlarge": 2},
    "markets": {"p3.2xlarge": "spot"}, "gpus": {"p3.2xlarge": 1},
    "parameter_server": {"type": "m5.xlarge", "market": "on-demand"}, "cost_usd": 3.0976})");
}

/// A stand-in for the aws program that appends its arguments to `log` and answers that the run has no
/// instances; its path.
std::string fake_aws(const std::string& log) {
  const std::string path = write_temp_file("cli_run_regions_aws_" + log.substr(log.rfind('/') + 1) + ".sh",
                                           "#!/bin/sh\necho \"$*\" >> '" + log + "'\necho '{\"Reservations\": []}'\n");
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
  std::remove(log.c_str());
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CommandResult run_ok(const std::string& arguments) {
  const CommandResult r = run_cli(arguments);
  CAPTURE(arguments);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}


}  // namespace

TEST_CASE("status and teardown with --region act in that region of a two-region AWS configuration") {
  const std::string aws = two_region_aws();
  for (const std::string command : {"status", "teardown"}) {
    for (const std::string region : {"us-east-1", "us-west-2"}) {
      const std::string other = region == "us-east-1" ? "us-west-2" : "us-east-1";
      const CommandResult script = run_ok(command + " --run " + kRun + " --aws '" + aws + "' --region " + region);
      CAPTURE(script.out);
      CHECK(contains(script.out, "readonly REGION='" + region + "'\n"));
      CHECK_FALSE(contains(script.out, other));
      const std::string arguments = command + " --run " + kRun + " --aws '" + aws + "' --region " + region + " --format json";
      const Json document = Json::parse(run_ok(arguments).out);
      CHECK(document.at("region") == region);
      CHECK(document.at("command") == command);
    }
  }
}

TEST_CASE("status --serverless and teardown --serverless take --region from a two-region AWS configuration") {
  const std::string aws = two_region_aws();
  const Json document =
      Json::parse(run_ok("teardown --serverless --run " + kRun + " --aws '" + aws + "' --region us-west-2 --format json").out);
  CHECK(document.at("region") == "us-west-2");
  CHECK(contains(document.at("script").get<std::string>(), "us-west-2"));
  check_cli_refused("status --serverless --run " + kRun + " --aws '" + aws + "'", {"holds 2 regions (us-east-1, us-west-2): give --region"});
}

TEST_CASE("a two-region AWS configuration without --region is refused naming its regions") {
  const std::string aws = two_region_aws();
  for (const std::string command : {"status", "teardown"}) {
    check_cli_refused(command + " --run " + kRun + " --aws '" + aws + "'",
                  {"--aws " + aws + " holds 2 regions (us-east-1, us-west-2): give --region"});
  }
  check_cli_refused("cost --run " + kRun + " --aws '" + aws + "' --aws-cli /nonexistent/aws",
                {"holds 2 regions (us-east-1, us-west-2): give --region"});
}

TEST_CASE("--region that the AWS configuration has no settings for is refused naming it and the file's regions") {
  check_cli_refused("status --run " + kRun + " --aws '" + two_region_aws() + "' --region eu-west-1",
                {"--region \"eu-west-1\"", "holds 2 regions (us-east-1, us-west-2)"});
  check_cli_refused("teardown --run " + kRun + " --aws '" + one_region_aws() + "' --region us-west-2",
                {"--region \"us-west-2\"", "holds 1 region (us-east-1)"});
  check_cli_refused("status --run " + kRun + " --aws '" + two_region_aws() + "' --region ''", {"--region", "empty"});
}

TEST_CASE("a one-region AWS configuration works without --region and with its own region") {
  const std::string aws = one_region_aws();
  const CommandResult plain = run_ok("status --run " + kRun + " --aws '" + aws + "'");
  const CommandResult named = run_ok("status --run " + kRun + " --aws '" + aws + "' --region us-east-1");
  CHECK(contains(plain.out, "readonly REGION='us-east-1'\n"));
  CHECK(named.out == plain.out);
}

TEST_CASE("cost takes the plan's region from a two-region AWS configuration when --region is absent") {
  const std::string aws = two_region_aws();
  const std::string log = std::string(SPOTDNN_TEST_BINARY_DIR) + "/cli_run_regions_cost.log";
  const std::string program = fake_aws(log);
  const CommandResult r = run_cli("cost --run " + kRun + " --aws '" + aws + "' --plan '" + plan_in("us-west-2") + "' --aws-cli '" +
                                  program + "' --now 2026-11-24T12:00:00Z");
  CAPTURE(r.err);
  CHECK(r.exit_code == 3);  // no instances
  CHECK(contains(read_file(log), "--region us-west-2"));
  // --region that is not the plan's region is refused: the plan prices another region.
  check_cli_refused("cost --run " + kRun + " --aws '" + aws + "' --plan '" + plan_in("us-west-2") + "' --region us-east-1 --aws-cli '" +
                    program + "'",
                {"was priced for us-west-2, but the run is in us-east-1"});
  // A plan of a region the file does not hold.
  check_cli_refused("cost --run " + kRun + " --aws '" + aws + "' --plan '" + plan_in("eu-west-1") + "' --aws-cli '" + program + "'",
                {"not the plan's region eu-west-1"});
}

TEST_CASE("watch takes the plan's region from a two-region AWS configuration") {
  const std::string aws = two_region_aws();
  const std::string log = std::string(SPOTDNN_TEST_BINARY_DIR) + "/cli_run_regions_watch.log";
  const std::string program = fake_aws(log);
  const CommandResult r = run_cli("watch --run " + kRun + " --aws '" + aws + "' --plan '" + plan_in("us-west-2") + "' --aws-cli '" +
                                  program + "' --once --dry-run --now 2026-11-24T12:00:00Z");
  CAPTURE(r.err);
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);  // the run has no parameter server
  CHECK(contains(r.out + r.err, "in us-west-2"));
  CHECK(contains(read_file(log), "--region us-west-2"));
  check_cli_refused("watch --run " + kRun + " --aws '" + aws + "' --plan '" + plan_in("us-west-2") + "' --region us-east-1 --aws-cli '" +
                    program + "' --once --dry-run",
                {"is not the plan's (us-west-2)"});
}

TEST_CASE("launch --serverless takes --region from a two-region AWS configuration, and an EC2 launch refuses --region") {
  const std::string aws = two_region_aws();
  const std::string plan = write_temp_file("cli_run_regions_serverless_plan.json", R"({"kind": "spotdnn.serverless_plan",
    "schema_version": 2, "status": "optimal", "message": "optimal", "algorithm": "exact", "profile_name": "resnet-fasdl",
    "epochs": 10, "deadline_s": 3000, "workers": 9, "memory_mb": 1536, "aggregators": 2, "batch": 32,
    "non_aggregator_batch": 130, "iterations": 513, "iteration_time_s": 5.676, "training_time_s": 2911.8, "cost_usd": 0.7079,
    "lambda_cost_usd": 0.655, "s3_cost_usd": 0.0527, "samples_trained": 500000, "extrapolated": false})");
  for (const std::string region : {"us-east-1", "us-west-2"}) {
    const std::string other = region == "us-east-1" ? "us-west-2" : "us-east-1";
    const Json document =
        Json::parse(run_ok("launch --serverless --plan '" + plan + "' --aws '" + aws + "' --region " + region + " --format json").out);
    CHECK(document.at("region") == region);
    const std::string script = document.at("script").get<std::string>();
    CHECK(contains(script, "dkr.ecr." + region + ".amazonaws.com/train:1"));
    CHECK_FALSE(contains(script, other));
  }
  check_cli_refused("launch --serverless --plan '" + plan + "' --aws '" + aws + "'", {"holds 2 regions (us-east-1, us-west-2): give --region"});
  check_cli_refused("launch --serverless --plan '" + plan + "' --aws '" + aws + "' --region eu-west-1",
                {"--region \"eu-west-1\"", "us-east-1, us-west-2"});
  check_cli_refused("launch --plan '" + plan_in("us-east-1") + "' --aws '" + aws + "' --region us-east-1",
                {"--region is for --serverless launches"});
}
