// SPDX-License-Identifier: MIT
// The serverless launch script run with bash and the real aws CLI against moto_server (Lambda, S3 and
// IAM): the functions and the exchange bucket as Lambda and S3 hold them (memory, timeout, image, role,
// environment, tags with the run id), two runs side by side in two regions, and the clean-up after a
// failure. The functions are not invoked (SPOTDNN_INVOKE=0: moto 5.2 cannot run image functions).
// Each case prints "skipped: <why>" (ctest reports it skipped) when moto_server or an aws CLI is missing.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/serverless_launch_script.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/moto_launch.hpp"
#include "support/moto_serverless.hpp"

using namespace spotdnn;
using nlohmann::json;
using test::MotoCloud;
using test::ProcessResult;
using test::create_lambda_role;
using test::env_in;
using test::moto_serverless_config;
using test::moto_serverless_plan;

namespace {

/// The fixture's configuration with quotes and $(...) in its tags and environment.
launcher::AwsConfig hostile_serverless_config(const std::string& region, const std::string& role_arn) {
  launcher::AwsConfig c = moto_serverless_config(region, role_arn);
  c.serverless->environment = {{"MODEL", "resnet50"}, {"NOTE", "it's \"q\" $(touch PWNED) `touch PWNED`"}};
  c.tags = {{"Project", "it's \"serverless\" $(touch PWNED)"}, {"cost center", "ml & research"}};
  return c;
}


/// Runs the serverless launch script (SPOTDNN_INVOKE=0); returns the run id after checking exit 0.
std::string launch(const MotoCloud& cloud, const launcher::ServerlessLaunchPlan& plan, const launcher::AwsConfig& config,
                   const std::string& name = "serverless.sh") {
  const ProcessResult r = cloud.run_script(name, launcher::serverless_launch_script(plan, config), "", {"SPOTDNN_INVOKE=0"});
  INFO("launch stderr: ", r.err);
  REQUIRE(r.exit_code == 0);
  const std::string id = test::run_id_of(r.out);
  CAPTURE(r.out);
  REQUIRE(std::regex_match(id, test::kServerlessRunIdPattern));
  return id;
}

/// The functions Lambda lists in `env`'s region whose name starts with spotdnn-RUN-, by name.
std::map<std::string, json> run_functions(const test::AwsTestEnv& env, const std::string& run) {
  std::map<std::string, json> out;
  const json listed = test::aws_json(env, {"lambda", "list-functions"});
  for (const json& f : listed["Functions"]) {
    const std::string name = f["FunctionName"];
    if (name.rfind("spotdnn-" + run + "-", 0) == 0) out[name] = f;
  }
  return out;
}

std::set<std::string> bucket_names(const test::AwsTestEnv& env) {
  std::set<std::string> out;
  const json listed = test::aws_json(env, {"s3api", "list-buckets"});
  for (const json& b : listed.value("Buckets", json::array())) out.insert(b["Name"].get<std::string>());
  return out;
}

std::map<std::string, std::string> bucket_tags(const test::AwsTestEnv& env, const std::string& bucket) {
  std::map<std::string, std::string> out;
  const json tagging = test::aws_json(env, {"s3api", "get-bucket-tagging", "--bucket", bucket});
  for (const json& tag : tagging["TagSet"]) {
    out[tag["Key"].get<std::string>()] = tag["Value"].get<std::string>();
  }
  return out;
}

}  // namespace

TEST_CASE("moto serverless launch: functions with the plan's memory, timeout, image, role, environment and run tags, and a tagged bucket") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const std::string role = create_lambda_role(cloud, "fasdl");
  const launcher::AwsConfig config = hostile_serverless_config("us-east-1", role);
  const launcher::ServerlessLaunchPlan plan = moto_serverless_plan();
  const std::string run = launch(cloud, plan, config);
  CHECK(test::pwned_files(cloud.dir().path()).empty());

  const test::AwsTestEnv& env = cloud.env();
  const std::map<std::string, json> functions = run_functions(env, run);
  REQUIRE(functions.size() == 3);
  const std::string bucket = "spotdnn-moto-" + run;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string name = "spotdnn-" + run + "-" + std::to_string(rank);
    INFO(name);
    REQUIRE(functions.count(name) == 1);
    const json& f = functions.at(name);
    const bool aggregator = rank < 2;
    CHECK(f["MemorySize"] == 1024);
    CHECK(f["Timeout"] == 210);
    CHECK(f["PackageType"] == "Image");
    CHECK(f["Role"] == role);
    const json& variables = f["Environment"]["Variables"];
    CHECK(variables["SPOTDNN_RUN_ID"] == run);
    CHECK(variables["SPOTDNN_RANK"] == std::to_string(rank));
    CHECK(variables["SPOTDNN_ROLE"] == (aggregator ? "aggregator" : "worker"));
    CHECK(variables["SPOTDNN_WORKERS"] == "3");
    CHECK(variables["SPOTDNN_AGGREGATORS"] == "2");
    CHECK(variables["SPOTDNN_BATCH"] == (aggregator ? "32" : "40"));
    CHECK(variables["SPOTDNN_ITERATIONS"] == "100");
    CHECK(variables["SPOTDNN_TIMEOUT_S"] == "210");
    CHECK(variables["SPOTDNN_BUCKET"] == bucket);
    CHECK(variables["SPOTDNN_FUNCTION_PREFIX"] == "spotdnn-" + run + "-");
    CHECK(variables["NOTE"] == config.serverless->environment.at("NOTE"));

    const json got = test::aws_json(env, {"lambda", "get-function", "--function-name", name});
    CHECK(got["Code"]["ImageUri"] == config.serverless->image_uri);
    const json& tags = got["Tags"];
    CHECK(tags["spotdnn:run"] == run);
    CHECK(tags["spotdnn:role"] == (aggregator ? "aggregator" : "worker"));
    CHECK(tags["spotdnn:rank-base"] == std::to_string(rank));
    CHECK(tags["Project"] == config.tags.at("Project"));
    CHECK(tags["cost center"] == "ml & research");
  }

  REQUIRE(bucket_names(env).count(bucket) == 1);
  const std::map<std::string, std::string> tags = bucket_tags(env, bucket);
  CHECK(tags.at("spotdnn:run") == run);
  CHECK(tags.at("spotdnn:role") == "bucket");
  CHECK(tags.at("Project") == config.tags.at("Project"));
}

TEST_CASE("moto serverless launch: two runs, one in eu-central-1, never share a function or a bucket") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const std::string role = create_lambda_role(cloud, "fasdl");
  const launcher::ServerlessLaunchPlan plan = moto_serverless_plan();
  const std::string first = launch(cloud, plan, hostile_serverless_config("us-east-1", role), "first.sh");
  const std::string second = launch(cloud, plan, hostile_serverless_config("eu-central-1", role), "second.sh");
  CHECK(first != second);
  const test::AwsTestEnv frankfurt = env_in(cloud, "eu-central-1");
  CHECK(run_functions(cloud.env(), first).size() == 3);
  CHECK(run_functions(cloud.env(), second).empty());
  CHECK(run_functions(frankfurt, second).size() == 3);
  CHECK(run_functions(frankfurt, first).empty());
  const std::set<std::string> buckets = bucket_names(cloud.env());
  CHECK(buckets.count("spotdnn-moto-" + first) == 1);
  CHECK(buckets.count("spotdnn-moto-" + second) == 1);
  const json location = test::aws_json(frankfurt, {"s3api", "get-bucket-location", "--bucket", "spotdnn-moto-" + second});
  CHECK(location["LocationConstraint"] == "eu-central-1");
}

TEST_CASE("moto serverless launch: a failure deletes the functions and the bucket the run created") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const std::string role = create_lambda_role(cloud, "fasdl");
  const launcher::AwsConfig config = hostile_serverless_config("us-east-1", role);
  // An aws CLI that runs the real one but fails the third create-function, after two functions exist.
  const std::string wrapper = cloud.dir() / "aws-failing";
  test::write_text(wrapper, R"sh(#!/bin/bash
here=$(dirname "$0")
for arg in "$@"; do
  if [[ $arg == create-function ]]; then
    n=$(( $(cat "$here/creates" 2>/dev/null || echo 0) + 1 ))
    echo "$n" >"$here/creates"
    if ((n == 3)); then echo "aws-failing: the third create-function fails" >&2; exit 254; fi
  fi
done
exec aws "$@"
)sh");
  REQUIRE(test::run_bash("chmod +x " + launcher::shell_quote(wrapper)) == 0);
  const std::set<std::string> buckets_before = bucket_names(cloud.env());
  const ProcessResult r = cloud.run_script("failing.sh", launcher::serverless_launch_script(moto_serverless_plan(), config), "",
                                           {"SPOTDNN_INVOKE=0", "SPOTDNN_AWS=" + wrapper});
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 254);
  CHECK(test::run_id_of(r.out).empty());
  CHECK(r.err.find("launch failed (exit 254)") != std::string::npos);
  CHECK(r.err.find("clean-up failed") == std::string::npos);
  CHECK(test::aws_json(cloud.env(), {"lambda", "list-functions"})["Functions"].empty());
  CHECK(bucket_names(cloud.env()) == buckets_before);

  // A role Lambda cannot assume fails the first create-function: only the bucket is there to delete.
  const launcher::AwsConfig unknown_role = hostile_serverless_config("us-east-1", "arn:aws:iam::123456789012:role/missing");
  const ProcessResult refused = cloud.run_script("refused.sh", launcher::serverless_launch_script(moto_serverless_plan(), unknown_role), "",
                                                 {"SPOTDNN_INVOKE=0"});
  INFO("stderr: ", refused.err);
  CHECK(refused.exit_code != 0);
  CHECK(test::aws_json(cloud.env(), {"lambda", "list-functions"})["Functions"].empty());
  CHECK(bucket_names(cloud.env()) == buckets_before);
}
