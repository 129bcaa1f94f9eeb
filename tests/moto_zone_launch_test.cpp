// SPDX-License-Identifier: MIT
// Launching in an Availability Zone against moto_server: a VPC with subnets in two zones, an AWS
// configuration with subnet_ids for both, and a plan pinned to the second zone. Every instance of the run
// (PS, spot and on-demand workers; run-instances and EC2 Fleet) lands in that zone's subnet, as EC2 reads
// it back. A plan of us-west-2 launched with an AWS configuration of two regions lands in us-west-2, in
// that region's subnet and with its AMIs. Each case prints "skipped: <why>" (ctest reports it skipped) when moto_server or an aws CLI is
// missing.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>
#include <spotdnn/launcher/aws_config_json.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/moto_launch.hpp"

using namespace spotdnn;
using nlohmann::json;
using test::MotoCloud;
using test::ProcessResult;

namespace {

const std::regex kRunIdPattern("^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$");

/// Two more subnets in the fixture's VPC: 10.42.2.0/24 in us-east-1a and 10.42.3.0/24 in us-east-1c
/// (the fixture's own subnet is in us-east-1b); the configuration maps both zones to them and keeps the
/// fixture's subnet as subnet_id.
struct TwoZones {
  std::string subnet_a, subnet_c;
  launcher::AwsConfig config;

  explicit TwoZones(const MotoCloud& cloud) {
    const std::string vpc = cloud.aws({"ec2", "describe-subnets", "--subnet-ids", cloud.subnet_id()})["Subnets"][0]["VpcId"];
    subnet_a = create_subnet(cloud, vpc, "10.42.2.0/24", "us-east-1a");
    subnet_c = create_subnet(cloud, vpc, "10.42.3.0/24", "us-east-1c");
    config = cloud.config();
    config.subnet_ids = {{"us-east-1a", subnet_a}, {"us-east-1c", subnet_c}};
  }

  static std::string create_subnet(const MotoCloud& cloud, const std::string& vpc, const std::string& cidr, const std::string& zone) {
    return cloud.aws({"ec2", "create-subnet", "--vpc-id", vpc, "--cidr-block", cidr, "--availability-zone", zone})["Subnet"]["SubnetId"];
  }
};

std::string launch(const MotoCloud& cloud, const launcher::LaunchPlan& plan, const launcher::AwsConfig& config,
                   const launcher::LaunchOptions& options = {}) {
  const ProcessResult r = cloud.run_script("launch.sh", launcher::launch_script(plan, config, options));
  INFO("launch stderr: ", r.err);
  REQUIRE(r.exit_code == 0);
  const std::string id = test::run_id_of(r.out);
  CAPTURE(r.out);
  REQUIRE(std::regex_match(id, kRunIdPattern));
  return id;
}

/// Checks that every instance of `run` (4: PS, 2 x p3.2xlarge, 1 x g3.8xlarge) is in `subnet` and `zone`.
void check_all_in(const MotoCloud& cloud, const std::string& run, const std::string& subnet, const std::string& zone,
                  const std::string& cidr_prefix) {
  const std::vector<json> instances = cloud.run_instances(run);
  CHECK(instances.size() == 4);
  for (const json& i : instances) {
    CAPTURE(i["InstanceType"]);
    CHECK(i["SubnetId"] == subnet);
    CHECK(i["Placement"]["AvailabilityZone"] == zone);
    CHECK(i["PrivateIpAddress"].get<std::string>().rfind(cidr_prefix, 0) == 0);
  }
}

}  // namespace

TEST_CASE("moto zones: a plan pinned to the second zone launches every instance in that zone's subnet") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const TwoZones zones(cloud);
  launcher::LaunchPlan plan = test::moto_plan();
  plan.zone = "us-east-1c";
  cloud.server().start_recording();
  const std::string run = launch(cloud, plan, zones.config);
  check_all_in(cloud, run, zones.subnet_c, "us-east-1c", "10.42.3.");
  const std::vector<json> runs = cloud.server().recorded_calls("RunInstances");
  REQUIRE(runs.size() == 3);
  for (const json& call : runs) CHECK(call["params"]["SubnetId"] == zones.subnet_c);

  // The same plan without a zone goes to subnet_id (the fixture's us-east-1b subnet), beside the first run.
  plan.zone.clear();
  const std::string unzoned = launch(cloud, plan, zones.config);
  check_all_in(cloud, unzoned, cloud.subnet_id(), "us-east-1b", "10.42.1.");
  CHECK(cloud.run_instances(run).size() == 4);
}

TEST_CASE("moto zones: EC2 Fleet spot groups of a zoned plan launch in the zone's subnet") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const TwoZones zones(cloud);
  launcher::LaunchPlan plan = test::moto_plan();
  plan.zone = "us-east-1a";
  launcher::LaunchOptions options;
  options.fleet = true;
  cloud.server().start_recording();
  const std::string run = launch(cloud, plan, zones.config, options);
  const std::vector<json> fleets = cloud.server().recorded_calls("CreateFleet");
  REQUIRE(fleets.size() == 1);
  CHECK(fleets[0]["params"]["LaunchTemplateConfigs.1.Overrides.1.SubnetId"] == zones.subnet_a);
  CHECK_FALSE(fleets[0]["params"].contains("LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone"));
  check_all_in(cloud, run, zones.subnet_a, "us-east-1a", "10.42.2.");
}

TEST_CASE("moto zones: a replan in the run's zone joins its additions in that zone's subnet") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const TwoZones zones(cloud);
  launcher::LaunchPlan plan = test::moto_plan();
  plan.zone = "us-east-1c";
  const std::string run = launch(cloud, plan, zones.config);
  launcher::LaunchPlan replan = test::moto_replan(1);
  replan.zone = "us-east-1c";
  const ProcessResult joined = cloud.run_script("join.sh", launcher::join_script(replan, run, zones.config));
  INFO("join stderr: ", joined.err);
  REQUIRE(joined.exit_code == 0);
  const std::vector<json> instances = cloud.run_instances(run);
  CHECK(instances.size() == 5);
  for (const json& i : instances) {
    CHECK(i["SubnetId"] == zones.subnet_c);
    CHECK(i["Placement"]["AvailabilityZone"] == "us-east-1c");
  }
}

TEST_CASE("moto regions: a plan of us-west-2 launched with a two-region AWS configuration runs in us-west-2 with that region's settings") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  // A VPC, a subnet in us-west-2b and a security group in us-west-2 (the fixture's are in us-east-1).
  const test::AwsTestEnv west = test::aws_test_env(cloud.server().url(), "us-west-2");
  const std::string vpc = test::aws_json(west, {"ec2", "create-vpc", "--cidr-block", "10.43.0.0/16"})["Vpc"]["VpcId"];
  const std::string subnet =
      test::aws_json(west, {"ec2", "create-subnet", "--vpc-id", vpc, "--cidr-block", "10.43.1.0/24", "--availability-zone", "us-west-2b"})
          ["Subnet"]["SubnetId"];
  const std::string group = test::aws_json(west, {"ec2", "create-security-group", "--group-name", "spotdnn-moto-west", "--description",
                                                  "spotdnn moto test", "--vpc-id", vpc})["GroupId"];
  const launcher::AwsConfig east = cloud.config();
  io::Json file = {{"checkpoint_s3_uri", east.checkpoint_s3_uri},
                   {"checkpoint_dir", east.checkpoint_dir},
                   {"key_name", east.key_name},
                   {"tags", east.tags},
                   {"training_command", east.training_command}};
  file["regions"]["us-east-1"] = {{"subnet_id", cloud.subnet_id()},
                                  {"security_group_ids", east.security_group_ids},
                                  {"image_id", east.image_id},
                                  {"image_ids", east.image_ids}};
  file["regions"]["us-west-2"] = {{"subnet_ids", {{"us-west-2b", subnet}}},
                                  {"security_group_ids", {group}},
                                  {"image_id", "ami-0aaaaaaaaaaaaaaa2"},
                                  {"image_ids", {{"p3.2xlarge", "ami-0bbbbbbbbbbbbbbb2"}}}};
  const launcher::AwsRegionConfigs configs = launcher::aws_region_configs_from_json(file);
  launcher::LaunchPlan plan = test::moto_plan();
  plan.region = "us-west-2";
  plan.zone = "us-west-2b";
  // The script runs with AWS_REGION=us-east-1 in its environment: only its own --region puts it in us-west-2.
  const std::string run = launch(cloud, plan, configs.for_launch(plan.region));
  const json listed = test::aws_json(west, {"ec2", "describe-instances", "--filters", "Name=tag:spotdnn:run,Values=" + run});
  std::vector<json> instances;
  for (const json& reservation : listed["Reservations"]) {
    for (const json& i : reservation["Instances"]) instances.push_back(i);
  }
  INFO("us-west-2 instances: ", test::aws_json(west, {"ec2", "describe-instances"}).dump());
  INFO("us-east-1 instances: ", cloud.aws({"ec2", "describe-instances"}).dump());
  CHECK(instances.size() == 4);
  for (const json& i : instances) {
    CAPTURE(i["InstanceType"]);
    CHECK(i["SubnetId"] == subnet);
    CHECK(i["Placement"]["AvailabilityZone"] == "us-west-2b");
    CHECK(i["PrivateIpAddress"].get<std::string>().rfind("10.43.1.", 0) == 0);
    CHECK(i["ImageId"] == (i["InstanceType"] == "p3.2xlarge" ? "ami-0bbbbbbbbbbbbbbb2" : "ami-0aaaaaaaaaaaaaaa2"));
    REQUIRE(i["SecurityGroups"].size() == 1);
    CHECK(i["SecurityGroups"][0]["GroupId"] == group);
  }
  CHECK(cloud.run_instances(run).empty());  // nothing in us-east-1
}
