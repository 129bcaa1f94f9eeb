// SPDX-License-Identifier: MIT
// Launching in an Availability Zone: the AWS configuration's subnet_ids {AZ: subnet} (read strictly and
// validated), a plan document's `zone` (written and read back), and the subnet the launch and join
// scripts and the EC2 Fleet request use: subnet_ids[zone] for a zoned plan, subnet_id for a plan without
// a zone, and a zoned plan whose zone has no subnet refused naming the zone and the key to add.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>
#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/launch_plan_json.hpp>

#include "support/error_of.hpp"
#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using launcher::AwsConfig;
using launcher::LaunchPlan;
using spotdnn::test::error_of;
using json = io::Json;  // ordered: a document's worker order is its launch order

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kSubnetA = "subnet-0aaaaaaaaaaaaaaaa";
const std::string kSubnetB = "subnet-0bbbbbbbbbbbbbbbb";

/// The AWS JSON of a spot launch with subnet_ids for us-east-1a and us-east-1b and no subnet_id.
json zoned_aws_json() {
  return {{"region", "us-east-1"},
          {"subnet_ids", {{"us-east-1a", kSubnetA}, {"us-east-1b", kSubnetB}}},
          {"security_group_ids", {"sg-0123456789abcdef0"}},
          {"image_id", "ami-0123456789abcdef0"},
          {"checkpoint_s3_uri", "s3://bucket/ckpt"}};
}

/// example_config() with subnet_ids for us-east-1a and us-east-1b beside its subnet_id.
AwsConfig zoned_config() {
  AwsConfig c = test::example_config();
  c.subnet_ids = {{"us-east-1a", kSubnetA}, {"us-east-1b", kSubnetB}};
  return c;
}

LaunchPlan plan_in(const std::string& zone) {
  LaunchPlan plan = test::two_type_plan();
  plan.zone = zone;
  return plan;
}

/// The error of reading `aws` as a spot launch's configuration.
std::string aws_error(const json& aws) {
  return error_of([&] { (void)launcher::aws_config_from_json(aws); });
}

}  // namespace

TEST_CASE("the AWS configuration reads subnet_ids and a spot launch needs subnet_id or subnet_ids") {
  const AwsConfig c = launcher::aws_config_from_json(zoned_aws_json());
  CHECK(c.subnet_id.empty());
  CHECK(c.subnet_ids == std::map<std::string, std::string>{{"us-east-1a", kSubnetA}, {"us-east-1b", kSubnetB}});
  CHECK(c.subnet_for("us-east-1b") == kSubnetB);

  json both = zoned_aws_json();
  both["subnet_id"] = "subnet-0123456789abcdef0";
  CHECK(launcher::aws_config_from_json(both).subnet_for("") == "subnet-0123456789abcdef0");

  json neither = zoned_aws_json();
  neither.erase("subnet_ids");
  const std::string error = aws_error(neither);
  CHECK(contains(error, "aws.subnet_id = missing"));
  CHECK(contains(error, "subnet_ids"));
}

TEST_CASE("subnet_ids entries are validated like subnet_id and name their key path") {
  json bad_subnet = zoned_aws_json();
  bad_subnet["subnet_ids"]["us-east-1b"] = "sg-0123456789abcdef0";
  CHECK(contains(aws_error(bad_subnet), "subnet_ids.us-east-1b = \"sg-0123456789abcdef0\": expected a subnet ID"));

  json injected = zoned_aws_json();
  injected["subnet_ids"]["us-east-1b"] = "subnet-0123456789abcdef0'; touch PWNED; '";
  CHECK(contains(aws_error(injected), "expected a subnet ID"));

  json not_string = zoned_aws_json();
  not_string["subnet_ids"]["us-east-1b"] = 7;
  CHECK(contains(aws_error(not_string), "aws.subnet_ids[\"us-east-1b\"]"));

  json not_object = zoned_aws_json();
  not_object["subnet_ids"] = json::array({kSubnetA});
  CHECK(contains(aws_error(not_object), "aws.subnet_ids"));

  json control = zoned_aws_json();
  control["subnet_ids"]["us-east-1a\n"] = kSubnetA;
  CHECK(contains(aws_error(control), "subnet_ids key"));

  json long_name = zoned_aws_json();
  long_name["subnet_ids"][std::string(101, 'z')] = kSubnetA;
  CHECK(contains(aws_error(long_name), "1 to 100 characters"));

  json many = zoned_aws_json();
  for (int i = 0; i < 101; ++i) many["subnet_ids"]["zone-" + std::to_string(i)] = kSubnetA;
  CHECK(contains(aws_error(many), "at most 100 Availability Zones"));

  json empty_map = zoned_aws_json();
  empty_map["subnet_ids"] = json::object();
  CHECK(contains(aws_error(empty_map), "subnet_id = missing"));
}

TEST_CASE("a serverless-only configuration is still refused for a spot launch when it lacks both subnet keys") {
  json aws = zoned_aws_json();
  aws["serverless"] = {{"image_uri", "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest"},
                       {"role_arn", "arn:aws:iam::123456789012:role/fasdl"}};
  CHECK_NOTHROW((void)launcher::aws_config_from_json(aws));  // subnet_ids stands for subnet_id
  aws.erase("subnet_ids");
  CHECK(contains(aws_error(aws), "aws.subnet_id = missing: spot instances need this key"));
}

TEST_CASE("subnet_for gives the zone's subnet and refuses a zone without one naming the zone and the key to add") {
  const AwsConfig c = zoned_config();
  CHECK(c.subnet_for("us-east-1a") == kSubnetA);
  CHECK(c.subnet_for("") == "subnet-0123456789abcdef0");
  const std::string missing = error_of([&] { (void)c.subnet_for("us-east-1c"); });
  CHECK(contains(missing, "subnet_ids = \"us-east-1c\" missing"));
  CHECK(contains(missing, "add \"subnet_ids\": {\"us-east-1c\": \"subnet-...\"}"));
  CHECK(contains(missing, "subnet_id cannot be checked to be in that zone"));
  AwsConfig zones_only = c;
  zones_only.subnet_id.clear();
  CHECK(contains(error_of([&] { (void)zones_only.subnet_for(""); }), "subnet_id = missing"));
}

TEST_CASE("a plan document's zone is written and read back and a plan without a zone reads back without one") {
  for (const std::string zone : {"us-east-1b", ""}) {
    const LaunchPlan plan = plan_in(zone);
    const json document = launcher::launch_plan_document(plan);
    CHECK(document.at("zone") == (zone.empty() ? json(nullptr) : json(zone)));
    CHECK(launcher::launch_plan_from_json(document) == plan);
  }
  json older = launcher::launch_plan_document(plan_in(""));
  older.erase("zone");  // documents written before zones existed
  CHECK(launcher::launch_plan_from_json(older).zone.empty());
  CHECK(plan_in("us-east-1a") != plan_in("us-east-1b"));
}

TEST_CASE("a plan document's zone must be null or an Availability Zone name") {
  json document = launcher::launch_plan_document(plan_in("us-east-1b"));
  document["zone"] = 3;
  CHECK(contains(error_of([&] { (void)launcher::launch_plan_from_json(document); }), "plan.zone"));
  document["zone"] = "";
  CHECK(contains(error_of([&] { (void)launcher::launch_plan_from_json(document); }), "plan.zone = \"\""));
  document["zone"] = "us-east-1b\n$(touch PWNED)";
  CHECK(contains(error_of([&] { (void)launcher::launch_plan_from_json(document); }), "plan.zone"));
  document["zone"] = std::string(101, 'a');
  CHECK(contains(error_of([&] { (void)launcher::launch_plan_from_json(document); }), "1 to 100 characters"));
}

TEST_CASE("a zoned plan launches in its zone's subnet in run-instances and in the EC2 Fleet override") {
  const AwsConfig c = zoned_config();
  for (bool fleet : {false, true}) {
    launcher::LaunchOptions options;
    options.fleet = fleet;
    const std::string script = launcher::launch_script(plan_in("us-east-1b"), c, options);
    CHECK(contains(script, "readonly SUBNET_ID='" + kSubnetB + "'\n"));
    CHECK(contains(script, "# Availability Zone: us-east-1b (priced there), subnet " + kSubnetB + ".\n"));
    CHECK_FALSE(contains(script, kSubnetA));
    CHECK_FALSE(contains(script, "subnet-0123456789abcdef0"));
    if (fleet) CHECK(contains(script, "\"SubnetId\":\"" + kSubnetB + "\""));
  }
  const std::string fleet_request = launcher::fleet_request_template(c, "p3.2xlarge", 2, "us-east-1a").filled(test::example_values());
  const json request = json::parse(fleet_request);
  CHECK(request["LaunchTemplateConfigs"][0]["Overrides"][0]["SubnetId"] == kSubnetA);
  CHECK_FALSE(request["LaunchTemplateConfigs"][0]["Overrides"][0].contains("AvailabilityZone"));
  const json plain = json::parse(launcher::fleet_request_template(c, "p3.2xlarge", 2).filled(test::example_values()));
  CHECK(plain["LaunchTemplateConfigs"][0]["Overrides"][0]["SubnetId"] == "subnet-0123456789abcdef0");
}

TEST_CASE("a plan without a zone launches in subnet_id and its script is unchanged by subnet_ids") {
  const std::string with_zones = launcher::launch_script(plan_in(""), zoned_config());
  const std::string without = launcher::launch_script(plan_in(""), test::example_config());
  CHECK(with_zones == without);
  CHECK(contains(without, "readonly SUBNET_ID='subnet-0123456789abcdef0'\n"));
  CHECK_FALSE(contains(without, "Availability Zone"));
}

TEST_CASE("a zoned plan whose zone has no subnet is refused and so is an unzoned plan without subnet_id") {
  const std::string error = error_of([] { (void)launcher::launch_script(plan_in("us-east-1c"), zoned_config()); });
  CHECK(contains(error, "us-east-1c"));
  CHECK(contains(error, "subnet_ids"));
  AwsConfig zones_only = zoned_config();
  zones_only.subnet_id.clear();
  CHECK(contains(error_of([&] { (void)launcher::launch_script(plan_in(""), zones_only); }), "subnet_id = missing"));
  CHECK_NOTHROW((void)launcher::launch_script(plan_in("us-east-1a"), zones_only));
}

TEST_CASE("a zoned replan joins its run in the zone's subnet") {
  LaunchPlan replan = test::example_replan();
  replan.zone = "us-east-1a";
  const std::string script = launcher::join_script(replan, test::kExampleRunId, zoned_config());
  CHECK(contains(script, "readonly SUBNET_ID='" + kSubnetA + "'\n"));
  CHECK(contains(error_of([&] {
                   replan.zone = "us-east-1c";
                   (void)launcher::join_script(replan, test::kExampleRunId, zoned_config());
                 }),
                 "us-east-1c"));
}
