// SPDX-License-Identifier: MIT
// The serverless launcher (FasDL on AWS Lambda): the serverless plan document reader, the serverless
// object of the AWS configuration and its validation, the function timeout rule, the golden launch script,
// bash -n and shellcheck, and the script run with a stand-in aws CLI: what it creates, the values that
// arrive verbatim, and the clean-up after a failure. Nothing here talks to AWS or a fake of it (moto:
// moto_serverless_launch_test.cpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/serverless_launch_script.hpp>
#include <spotdnn/launcher/serverless_plan_json.hpp>

#include "support/error_of.hpp"
#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using launcher::AwsConfig;
using launcher::ServerlessLaunchPlan;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

/// The serverless plan document as `spotdnn serverless plan --format json` writes it (the optimum of the
/// FasDL reference profile for a 3,000 s deadline), with the keys the launcher ignores.
json example_document() {
  return json::parse(R"({"kind": "spotdnn.serverless_plan", "schema_version": 2, "status": "optimal",
    "message": "optimal: 9 functions of 1536 MB", "algorithm": "exact", "profile_name": "resnet-fasdl", "epochs": 10,
    "deadline_s": 3000, "workers": 9, "memory_mb": 1536, "aggregators": 2, "batch": 32, "non_aggregator_batch": 130,
    "iterations": 513, "iteration_time_s": 5.676, "training_time_s": 2911.8, "cost_usd": 0.7079, "lambda_cost_usd": 0.655,
    "s3_cost_usd": 0.0527, "samples_trained": 500000, "extrapolated": false})");
}

ServerlessLaunchPlan example_plan() { return launcher::serverless_launch_plan_from_json(example_document()); }

/// A plan of 3 functions (2 aggregating) that fits one invocation: 100 iterations of 1.5 s.
ServerlessLaunchPlan small_plan() {
  ServerlessLaunchPlan p;
  p.profile_name = "tiny";
  p.epochs = 0.5;
  p.deadline_s = 600;
  p.workers = 3;
  p.memory_mb = 2048;
  p.aggregators = 2;
  p.batch = 32;
  p.non_aggregator_batch = 48;
  p.iterations = 100;
  p.iteration_time_s = 1.5;
  p.training_time_s = 150;
  p.cost_usd = 0.012;
  return p;
}

launcher::ServerlessConfig example_serverless() {
  launcher::ServerlessConfig s;
  s.image_uri = "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest";
  s.role_arn = "arn:aws:iam::123456789012:role/fasdl";
  s.bucket_prefix = "team-fasdl";
  s.environment = {{"MODEL", "resnet50"}, {"NOTE", "it's \"q\" $(touch PWNED)"}};
  return s;
}

/// A serverless-only configuration: region, the serverless object, awkward tags; no spot fields.
AwsConfig serverless_config() {
  AwsConfig c;
  c.region = "us-east-1";
  c.serverless = example_serverless();
  c.tags = {{"Project", "it's \"spot\" $(touch PWNED) `touch PWNED`"}, {"cost center", "ml & research"}};
  return c;
}

/// hostile values in every free-text field a serverless launch uses.
AwsConfig hostile_serverless_config() {
  AwsConfig c = serverless_config();
  c.tags = {{"k'\"`touch PWNED`$(touch PWNED);&|@m{x}", test::kHostileLine + "\nsecond line\t\xc3\xa9"},
            {"00000000-000000-000000", "11111111-111111-111111 6666666 7777777"}};
  c.serverless->environment = {{"HOSTILE", test::kHostileLine + "\nsecond line"}, {"STAND_IN", "6666666 00000000-000000-000000"}};
  return c;
}

/// bash -n and shellcheck (all severities) on `script`, written to `dir`/`name`.
void check_script(const test::TempDir& dir, const std::string& name, const std::string& script) {
  const std::string path = dir / name;
  test::write_text(path, script);
  CHECK_MESSAGE(test::run_bash("bash -n " + launcher::shell_quote(path)) == 0, name);
  const std::string out = dir / (name + ".shellcheck");
  const int rc = test::run_bash("shellcheck " + launcher::shell_quote(path) + " >" + launcher::shell_quote(out) + " 2>&1");
  INFO(name, ": ", test::read_text(out));
  CHECK(rc == 0);
}

/// Writes `dir`/aws: a stand-in aws CLI that logs each call's arguments as one JSON array per line to
/// `dir`/calls.jsonl, and fails (exit 254) the create-function call numbered FAIL_AT (unset: none).
std::string write_json_logging_aws(const test::TempDir& dir) {
  const std::string path = dir / "aws";
  test::write_text(path, R"sh(#!/bin/bash
here=$(dirname "$0")
/usr/bin/python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@" >>"$here/calls.jsonl"
for arg in "$@"; do
  if [[ $arg == create-function ]]; then
    n=$(( $(cat "$here/creates" 2>/dev/null || echo 0) + 1 ))
    echo "$n" >"$here/creates"
    if [[ $n == "${FAIL_AT:-0}" ]]; then echo "stand-in: create-function $n fails" >&2; exit 254; fi
  fi
done
)sh");
  REQUIRE(test::run_bash("chmod +x " + launcher::shell_quote(path)) == 0);
  return path;
}

std::vector<json> logged_calls(const test::TempDir& dir) {
  std::vector<json> out;
  std::istringstream in(test::read_text(dir / "calls.jsonl"));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

/// The value after `option` in a logged call ("" when absent).
std::string option_of(const json& call, const std::string& option) {
  for (std::size_t i = 0; i + 1 < call.size(); ++i) {
    if (call[i] == option) return call[i + 1].get<std::string>();
  }
  return "";
}

/// The calls whose arguments include `service` then `operation`.
std::vector<json> calls_to(const std::vector<json>& calls, const std::string& service, const std::string& operation) {
  std::vector<json> out;
  for (const json& call : calls) {
    for (std::size_t i = 0; i + 1 < call.size(); ++i) {
      if (call[i] == service && call[i + 1] == operation) {
        out.push_back(call);
        break;
      }
    }
  }
  return out;
}

struct ScriptRun {
  int exit_code = -1;
  std::string out, err;
};

ScriptRun run_with_stub(const test::TempDir& dir, const std::string& script, const std::string& extra_env = "") {
  const std::string path = dir / "launch.sh";
  test::write_text(path, script);
  const std::string command = "cd " + launcher::shell_quote(dir.path().string()) + " && env -u AWS_ENDPOINT_URL SPOTDNN_AWS=" +
                              launcher::shell_quote(dir / "aws") + " " + extra_env + " bash launch.sh >out.txt 2>err.txt";
  ScriptRun r;
  r.exit_code = test::run_bash(command);
  r.out = test::read_text(dir / "out.txt");
  r.err = test::read_text(dir / "err.txt");
  return r;
}

}  // namespace

TEST_CASE("the serverless plan document reads into what the launcher creates, ignoring the keys it does not need") {
  const ServerlessLaunchPlan p = example_plan();
  CHECK(p.profile_name == "resnet-fasdl");
  CHECK(p.workers == 9);
  CHECK(p.memory_mb == 1536);
  CHECK(p.aggregators == 2);
  CHECK(p.batch == 32);
  CHECK(p.non_aggregator_batch == 130);
  CHECK(p.iterations == 513);
  CHECK(p.training_time_s == doctest::Approx(2911.8).epsilon(1e-12));
  CHECK(p.batch_of(1) == 32);
  CHECK(p.batch_of(2) == 130);
  const ServerlessLaunchPlan back = launcher::serverless_launch_plan_from_json(launcher::serverless_launch_plan_document(p));
  CHECK(back.workers == p.workers);
  CHECK(back.iteration_time_s == p.iteration_time_s);
  CHECK(back.cost_usd == p.cost_usd);
}

TEST_CASE("the function timeout is the training time plus 60 s, at most Lambda's 900 s") {
  ServerlessLaunchPlan p = small_plan();
  CHECK(p.function_timeout_s() == 210);
  p.training_time_s = 150.2;
  CHECK(p.function_timeout_s() == 211);
  p.training_time_s = 840;
  CHECK(p.function_timeout_s() == 900);
  p.training_time_s = 839.5;
  CHECK(p.function_timeout_s() == 900);
  p.training_time_s = 2911.8;
  CHECK(p.function_timeout_s() == 900);
  CHECK(p.invocations_per_function() == 4);
  p.training_time_s = 1e300;
  CHECK(p.function_timeout_s() == 900);
}

TEST_CASE("serverless plan documents that cannot launch are refused naming the key and the value") {
  const auto error_with = [](const std::function<void(json&)>& change) {
    json d = example_document();
    change(d);
    return test::error_of([&] { (void)launcher::serverless_launch_plan_from_json(d); });
  };
  CHECK(contains(error_with([](json& d) { d["kind"] = "spotdnn.plan"; }), "drop --serverless"));
  CHECK(contains(error_with([](json& d) { d["kind"] = "spotdnn.replan"; }), "drop --serverless"));
  CHECK(contains(error_with([](json& d) { d["kind"] = "x"; }), "plan.kind = \"x\""));
  CHECK(contains(error_with([](json& d) { d.erase("kind"); }), "no kind"));
  CHECK(contains(error_with([](json& d) { d["schema_version"] = 3; }), "newer spotdnn"));
  CHECK(contains(error_with([](json& d) { d["schema_version"] = "2"; }), "plan.schema_version"));
  const std::string infeasible = error_with([](json& d) {
    d["status"] = "infeasible";
    d["message"] = "no configuration meets the deadline; the fastest takes 1389.08 s";
  });
  CHECK(contains(infeasible, "plan.status = \"infeasible\""));
  CHECK(contains(infeasible, "the fastest takes 1389.08 s"));
  CHECK(contains(error_with([](json& d) { d["status"] = "invalid_input"; }), "only an optimal or feasible plan"));
  CHECK(contains(error_with([](json& d) { d["workers"] = 0; }), "plan.workers = 0"));
  CHECK(contains(error_with([](json& d) { d["workers"] = 1025; }), "plan.workers = 1025"));
  CHECK(contains(error_with([](json& d) { d["workers"] = 9.5; }), "plan.workers = 9.5: expected a whole number"));
  CHECK(contains(error_with([](json& d) { d["memory_mb"] = 127; }), "plan.memory_mb = 127"));
  CHECK(contains(error_with([](json& d) { d["memory_mb"] = 10241; }), "plan.memory_mb = 10241"));
  CHECK(contains(error_with([](json& d) { d["memory_mb"] = 1536.5; }), "plan.memory_mb"));
  CHECK(contains(error_with([](json& d) { d["memory_mb"] = "1536"; }), "plan.memory_mb = \"1536\""));
  CHECK(contains(error_with([](json& d) { d["aggregators"] = 10; }), "plan.aggregators = 10"));
  CHECK(contains(error_with([](json& d) { d["aggregators"] = 0; }), "plan.aggregators = 0"));
  CHECK(contains(error_with([](json& d) { d["iteration_time_s"] = 901; }), "cannot run on Lambda"));
  CHECK(contains(error_with([](json& d) { d["training_time_s"] = -1; }), "plan.training_time_s = -1"));
  CHECK(contains(error_with([](json& d) { d["profile_name"] = "a\nb"; }), "plan.profile_name"));
  CHECK(contains(error_with([](json& d) { d.erase("iterations"); }), "plan.iterations = missing"));
  CHECK(contains(test::error_of([] { (void)launcher::serverless_launch_plan_from_json(json::array()); }), "no kind"));
}

TEST_CASE("the serverless object is read strictly and a serverless-only configuration needs no spot fields") {
  const json file = json::parse(R"({"region": "us-east-1", "tags": {"team": "ml"},
    "serverless": {"image_uri": "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest",
                   "role_arn": "arn:aws:iam::123456789012:role/service-role/fasdl", "bucket_prefix": "team-fasdl",
                   "architecture": "arm64", "environment": {"MODEL": "resnet50"}}})");
  const AwsConfig c = launcher::aws_config_from_json(file, "aws", "read", launcher::AwsConfigUse::serverless);
  REQUIRE(c.serverless);
  CHECK(c.serverless->image_uri == "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest");
  CHECK(c.serverless->bucket_prefix == "team-fasdl");
  CHECK(c.serverless->architecture == "arm64");
  CHECK(c.serverless->environment.at("MODEL") == "resnet50");
  CHECK(c.subnet_id.empty());

  // The same file read for a spot launch says what is missing and how to launch it instead.
  const std::string spot = test::error_of([&] { (void)launcher::aws_config_from_json(file, "aws", "read"); });
  CHECK(contains(spot, "aws.subnet_id = missing"));
  CHECK(contains(spot, "--serverless"));

  // A spot configuration read for a serverless launch lacks the serverless object.
  json spot_file = json::parse(test::read_text(std::string(SPOTDNN_TEST_SOURCE_DIR) + "/examples/aws.json"));
  CHECK(contains(test::error_of([&] { (void)launcher::aws_config_from_json(spot_file, "aws", "read", launcher::AwsConfigUse::serverless); }),
                 "aws.serverless = missing"));
  // ... and both launchers read a file that has both.
  spot_file["serverless"] = file["serverless"];
  CHECK(launcher::aws_config_from_json(spot_file, "aws", "read").serverless);
  CHECK(launcher::aws_config_from_json(spot_file, "aws", "read", launcher::AwsConfigUse::serverless).subnet_id == "subnet-0123456789abcdef0");

  const auto error_with = [&](const std::function<void(json&)>& change) {
    json d = file;
    change(d);
    return test::error_of([&] { (void)launcher::aws_config_from_json(d, "aws", "read", launcher::AwsConfigUse::serverless); });
  };
  CHECK(contains(error_with([](json& d) { d["serverless"]["image"] = "x"; }), "aws.serverless.image = \"x\": unknown key"));
  CHECK(contains(error_with([](json& d) { d["serverless"].erase("role_arn"); }), "aws.serverless.role_arn = missing"));
  CHECK(contains(error_with([](json& d) { d["serverless"]["environment"]["AWS_SECRET_ACCESS_KEY"] = "x"; }), "credentials are never accepted"));
  CHECK(contains(error_with([](json& d) { d["serverless"]["environment"]["MY_SETTING"] = "AKIA" "IOSFODNN7EXAMPLE"; }),
                 "aws.serverless.environment[\"MY_SETTING\"] = (not shown)"));
  CHECK(contains(error_with([](json& d) { d["serverless"]["environment"]["MY_SETTING"] = "AKIA" "IOSFODNN7EXAMPLE"; }), "execution role"));
  CHECK(contains(error_with([](json& d) { d["serverless"]["environment"]["N"] = 1; }), "aws.serverless.environment[\"N\"] = 1: expected a string"));
  CHECK(contains(error_with([](json& d) { d["serverless"] = "x"; }), "aws.serverless = \"x\": expected a JSON object"));
  CHECK(contains(error_with([](json& d) { d["subnet_id"] = 5; }), "aws.subnet_id = 5: expected a string"));
  CHECK(contains(error_with([](json& d) { d["region"] = "eu-west-1"; }), "the image is in us-east-1"));
}

TEST_CASE("image URIs, role ARNs, bucket prefixes and environment names are checked against AWS's spellings") {
  const auto error_with = [](const std::function<void(launcher::ServerlessConfig&)>& change) {
    AwsConfig c = serverless_config();
    change(*c.serverless);
    return test::error_of([&] { c.validate_serverless(); });
  };
  CHECK(error_with([](auto&) {}) == "(accepted)");
  for (const std::string& good : std::vector<std::string>{"123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest",
                                 "123456789012.dkr.ecr.us-east-1.amazonaws.com/team/fasdl-train_v2:1.0.3",
                                 "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl@sha256:" + std::string(64, 'a')}) {
    CHECK_MESSAGE(error_with([&](auto& s) { s.image_uri = good; }) == "(accepted)", good);
  }
  for (const std::string& bad : std::vector<std::string>
       {"fasdl:latest", "docker.io/library/fasdl:latest", "12345678901.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl", "123456789012.dkr.ecr.us-east-1.amazonaws.com/Fasdl:latest",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:$(touch PWNED)", "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:-x",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl@sha256:abc", "123456789012.dkr.ecr.us-east-1.amazonaws.com/fa//sdl:x",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest\n", "123456789012.dkr.ecr.eu-west-1.amazonaws.com/fasdl:latest", ""}) {
    const std::string e = error_with([&](auto& s) { s.image_uri = bad; });
    CHECK_MESSAGE(contains(e, "serverless.image_uri = "), bad);
  }
  for (const std::string good : {"arn:aws:iam::123456789012:role/fasdl", "arn:aws-cn:iam::123456789012:role/a/b/fa+sdl=,.@_-"}) {
    CHECK_MESSAGE(error_with([&](auto& s) { s.role_arn = good; }) == "(accepted)", good);
  }
  for (const std::string& bad : std::vector<std::string>{"fasdl", "arn:aws:iam::123456789012:user/fasdl", "arn:aws:iam::12345678901:role/fasdl",
                                "arn:aws:iam::123456789012:role/", "arn:aws:iam::123456789012:role/a b",
                                "arn:aws:iam::123456789012:role/" + std::string(65, 'r'), "arn:aws:sts::123456789012:role/fasdl",
                                "file:///etc/passwd"}) {
    CHECK_MESSAGE(contains(error_with([&](auto& s) { s.role_arn = bad; }), "serverless.role_arn = "), bad);
  }
  for (const std::string& bad : std::vector<std::string>{"", "Team", "team.fasdl", "-team", "xn--team", "sthree-x", "amzn-s3-demo-x", std::string(41, 'a'),
                                "team_fasdl", "team fasdl"}) {
    CHECK_MESSAGE(contains(error_with([&](auto& s) { s.bucket_prefix = bad; }), "serverless.bucket_prefix = "), bad);
  }
  CHECK(error_with([](auto& s) { s.bucket_prefix = std::string(40, 'a'); }) == "(accepted)");
  CHECK(contains(error_with([](auto& s) { s.architecture = "x86"; }), "serverless.architecture = \"x86\""));
  for (const std::string bad : {"SPOTDNN_RANK", "AWS_REGION", "LAMBDA_TASK_ROOT", "1X", "_X", "A-B", "A B", ""}) {
    CHECK_MESSAGE(contains(error_with([&](auto& s) { s.environment[bad] = "v"; }), "serverless.environment key = "), bad);
  }
  CHECK(contains(error_with([](auto& s) { s.environment["BIG"] = std::string(3100, 'x'); }), "serverless.environment = "));
  CHECK(contains(error_with([](auto& s) { s.environment["BAD"] = "\xff"; }), "serverless.environment.BAD"));
  CHECK(contains(error_with([](auto& s) { s.environment["NUL"] = std::string("a\0b", 3); }), "NUL"));

  AwsConfig no_serverless = serverless_config();
  no_serverless.serverless.reset();
  CHECK(contains(test::error_of([&] { no_serverless.validate_serverless(); }), "serverless = missing"));
  AwsConfig spot_tag = serverless_config();
  spot_tag.tags["spotdnn:run"] = "x";
  CHECK(contains(test::error_of([&] { spot_tag.validate_serverless(); }), "reserved"));
  // A spot configuration with a broken serverless object is refused too: the object is checked where it is.
  AwsConfig spot = test::example_config();
  spot.serverless = example_serverless();
  spot.serverless->role_arn = "x";
  CHECK(contains(test::error_of([&] { spot.validate(); }), "AwsConfig::validate: serverless.role_arn = \"x\""));
}

TEST_CASE("the serverless launch script matches the golden text") {
  const std::string script = launcher::serverless_launch_script(example_plan(), serverless_config());
  const std::string path = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/golden/serverless_launch.sh";
  if (std::getenv("SPOTDNN_UPDATE_GOLDEN")) test::write_text(path, script);
  INFO("golden file ", path, " (regenerate with SPOTDNN_UPDATE_GOLDEN=1 after reviewing the difference)");
  CHECK(script == test::read_text(path));
  CHECK(contains(script, "set -Eeuo pipefail"));
  CHECK(contains(script, "--memory-size 1536 --timeout 900"));
  CHECK(count_of(script, "lambda create-function") == 2);  // one loop for the aggregators, one for the others
  CHECK(contains(script, "for ((rank_base = 0; rank_base < 2; rank_base++))"));
  CHECK(contains(script, "for ((rank_base = 2; rank_base < 9; rank_base++))"));
}

TEST_CASE("every serverless launch script passes bash -n and shellcheck") {
  test::TempDir dir;
  check_script(dir, "example.sh", launcher::serverless_launch_script(example_plan(), serverless_config()));
  check_script(dir, "small.sh", launcher::serverless_launch_script(small_plan(), serverless_config()));
  ServerlessLaunchPlan all_aggregate = small_plan();
  all_aggregate.aggregators = all_aggregate.workers;
  check_script(dir, "all_aggregate.sh", launcher::serverless_launch_script(all_aggregate, serverless_config()));
  AwsConfig frankfurt = serverless_config();
  frankfurt.region = "eu-central-1";
  frankfurt.serverless->image_uri = "123456789012.dkr.ecr.eu-central-1.amazonaws.com/fasdl:latest";
  const std::string in_frankfurt = launcher::serverless_launch_script(small_plan(), frankfurt);
  CHECK(contains(in_frankfurt, "--create-bucket-configuration '{\"LocationConstraint\":\"eu-central-1\"}'"));
  check_script(dir, "frankfurt.sh", in_frankfurt);
  check_script(dir, "hostile.sh", launcher::serverless_launch_script(small_plan(), hostile_serverless_config()));
}

TEST_CASE("the serverless script creates the bucket and the functions with the values verbatim, and invokes each once") {
  test::TempDir dir;
  write_json_logging_aws(dir);
  const AwsConfig config = hostile_serverless_config();
  const ServerlessLaunchPlan plan = small_plan();
  const ScriptRun r = run_with_stub(dir, launcher::serverless_launch_script(plan, config));
  INFO("stderr: ", r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(test::pwned_files(dir.path()).empty());
  const std::string prefix = "spotdnn run: ";
  REQUIRE(r.out.rfind(prefix, 0) == 0);
  const std::string run = r.out.substr(prefix.size(), launcher::kRunIdLength);
  CHECK(launcher::is_run_id(run));
  CHECK(r.out == prefix + run + "\n");
  const std::string bucket = "team-fasdl-" + run;

  const std::vector<json> calls = logged_calls(dir);
  for (const json& call : calls) {
    CHECK(option_of(call, "--region") == "us-east-1");
    CHECK_FALSE(contains(call.dump(), "--endpoint-url"));  // AWS_ENDPOINT_URL is unset here
  }
  const auto created_buckets = calls_to(calls, "s3api", "create-bucket");
  REQUIRE(created_buckets.size() == 1);
  CHECK(option_of(created_buckets[0], "--bucket") == bucket);
  CHECK_FALSE(contains(created_buckets[0].dump(), "--create-bucket-configuration"));  // us-east-1 takes none
  const auto tagging = calls_to(calls, "s3api", "put-bucket-tagging");
  REQUIRE(tagging.size() == 1);
  std::map<std::string, std::string> bucket_tags;
  const json tag_set = json::parse(option_of(tagging[0], "--tagging"))["TagSet"];
  for (const json& tag : tag_set) bucket_tags[tag["Key"].get<std::string>()] = tag["Value"].get<std::string>();
  CHECK(bucket_tags.at("spotdnn:run") == run);
  CHECK(bucket_tags.at("spotdnn:role") == "bucket");
  CHECK(bucket_tags.at(config.tags.begin()->first) == config.tags.begin()->second);

  const auto created = calls_to(calls, "lambda", "create-function");
  REQUIRE(created.size() == 3);
  std::set<std::string> names;
  for (std::size_t rank = 0; rank < created.size(); ++rank) {
    const json& call = created[rank];
    const std::string name = "spotdnn-" + run + "-" + std::to_string(rank);
    CHECK(option_of(call, "--function-name") == name);
    names.insert(name);
    CHECK(option_of(call, "--package-type") == "Image");
    CHECK(json::parse(option_of(call, "--code")) == json{{"ImageUri", config.serverless->image_uri}});
    CHECK(option_of(call, "--role") == config.serverless->role_arn);
    CHECK(option_of(call, "--memory-size") == "2048");
    CHECK(option_of(call, "--timeout") == "210");
    CHECK(option_of(call, "--architectures") == "x86_64");
    const json env = json::parse(option_of(call, "--environment"))["Variables"];
    const bool aggregator = rank < 2;
    CHECK(env["SPOTDNN_RUN_ID"] == run);
    CHECK(env["SPOTDNN_RANK"] == std::to_string(rank));
    CHECK(env["SPOTDNN_ROLE"] == (aggregator ? "aggregator" : "worker"));
    CHECK(env["SPOTDNN_WORKERS"] == "3");
    CHECK(env["SPOTDNN_AGGREGATORS"] == "2");
    CHECK(env["SPOTDNN_BATCH"] == (aggregator ? "32" : "48"));
    CHECK(env["SPOTDNN_ITERATIONS"] == "100");
    CHECK(env["SPOTDNN_TIMEOUT_S"] == "210");
    CHECK(env["SPOTDNN_BUCKET"] == bucket);
    CHECK(env["SPOTDNN_FUNCTION_PREFIX"] == "spotdnn-" + run + "-");
    CHECK(env["HOSTILE"] == config.serverless->environment.at("HOSTILE"));
    CHECK(env["STAND_IN"] == "6666666 00000000-000000-000000");
    const json tags = json::parse(option_of(call, "--tags"));
    CHECK(tags["spotdnn:run"] == run);
    CHECK(tags["spotdnn:rank-base"] == std::to_string(rank));
    CHECK(tags["spotdnn:role"] == (aggregator ? "aggregator" : "worker"));
    for (const auto& entry : config.tags) CHECK(tags[entry.first] == entry.second);
  }
  CHECK(calls_to(calls, "lambda", "wait").size() == 3);
  const auto invoked = calls_to(calls, "lambda", "invoke");
  REQUIRE(invoked.size() == 3);
  for (const json& call : invoked) {
    CHECK(names.count(option_of(call, "--function-name")) == 1);
    CHECK(option_of(call, "--invocation-type") == "Event");
  }
  CHECK(calls_to(calls, "lambda", "delete-function").empty());
}

TEST_CASE("SPOTDNN_INVOKE=0 creates everything and invokes nothing, and AWS_ENDPOINT_URL becomes --endpoint-url") {
  test::TempDir dir;
  write_json_logging_aws(dir);
  const ScriptRun r =
      run_with_stub(dir, launcher::serverless_launch_script(small_plan(), serverless_config()), "SPOTDNN_INVOKE=0 AWS_ENDPOINT_URL=http://127.0.0.1:9");
  INFO("stderr: ", r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<json> calls = logged_calls(dir);
  CHECK(calls_to(calls, "lambda", "create-function").size() == 3);
  CHECK(calls_to(calls, "lambda", "invoke").empty());
  for (const json& call : calls) CHECK(option_of(call, "--endpoint-url") == "http://127.0.0.1:9");
}

TEST_CASE("a failed function creation deletes the functions and the bucket the run created, and exits non-zero") {
  test::TempDir dir;
  write_json_logging_aws(dir);
  const ScriptRun r = run_with_stub(dir, launcher::serverless_launch_script(example_plan(), serverless_config()), "FAIL_AT=4");
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 254);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "launch failed (exit 254)"));
  const std::vector<json> calls = logged_calls(dir);
  CHECK(calls_to(calls, "lambda", "create-function").size() == 4);
  CHECK(calls_to(calls, "lambda", "invoke").empty());
  std::set<std::string> created, deleted;
  for (const json& call : calls_to(calls, "lambda", "create-function")) created.insert(option_of(call, "--function-name"));
  for (const json& call : calls_to(calls, "lambda", "delete-function")) deleted.insert(option_of(call, "--function-name"));
  CHECK(deleted == created);  // the stand-in's get-function finds each one, including the fourth
  const auto buckets = calls_to(calls, "s3api", "delete-bucket");
  REQUIRE(buckets.size() == 1);
  CHECK(option_of(buckets[0], "--bucket") == option_of(calls_to(calls, "s3api", "create-bucket").at(0), "--bucket"));
}

TEST_CASE("two runs of one serverless script get different run ids, buckets and function names") {
  test::TempDir dir;
  write_json_logging_aws(dir);
  const std::string script = launcher::serverless_launch_script(small_plan(), serverless_config());
  const ScriptRun first = run_with_stub(dir, script, "SPOTDNN_INVOKE=0");
  const ScriptRun second = run_with_stub(dir, script, "SPOTDNN_INVOKE=0");
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  CHECK(first.out != second.out);
  const auto buckets = calls_to(logged_calls(dir), "s3api", "create-bucket");
  REQUIRE(buckets.size() == 2);
  CHECK(option_of(buckets[0], "--bucket") != option_of(buckets[1], "--bucket"));
}
