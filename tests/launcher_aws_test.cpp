// SPDX-License-Identifier: MIT
// The emitted launch script run with the real aws CLI (/usr/bin/aws) against tests/support/fake_ec2.py
// on 127.0.0.1: the exact EC2 calls and parameters, hostile values arriving verbatim, teardown, fleet.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>
#include <spotdnn/presets.hpp>

#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using nlohmann::json;

namespace {

std::vector<json> calls(const std::string& log_path) { return test::ec2_calls(log_path); }

std::vector<std::string> actions(const std::vector<json>& log) {
  std::vector<std::string> out;
  for (const json& call : log) out.push_back(call["Action"].get<std::string>());
  return out;
}

using test::base64_decode;
using test::tags_of;

const launcher::LaunchPlan kPlan{"resnet110-demo", {{"p3.2xlarge", 2}, {"g3.8xlarge", 4}}};

/// Runs `bash script [mode]` in `dir` against `endpoint`; returns the exit code.
int run_script(const test::TempDir& dir, const std::string& script, const std::string& endpoint, const std::string& mode = "") {
  test::write_text(dir / "launch.sh", script);
  return test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && timeout 240 " + test::aws_env(endpoint) +
                        " SPOTDNN_CLUSTER_SPEC=spec.json bash launch.sh " + mode + " >stdout.txt 2>stderr.txt");
}

}  // namespace

TEST_CASE("the launch script makes exactly the expected EC2 calls through the real aws CLI") {
  test::TempDir dir;
  test::FakeServer ec2("fake_ec2.py", dir, "ec2");
  const launcher::AwsConfig config = test::example_config();
  const std::string script = launcher::launch_script(kPlan, presets::resnet110_catalog(), config);
  REQUIRE(run_script(dir, script, ec2.url()) == 0);

  const std::vector<json> log = calls(ec2.log_path());
  CHECK(actions(log) == std::vector<std::string>{"CreatePlacementGroup", "RunInstances", "RunInstances", "RunInstances",
                                                 "DescribeInstances", "DescribeInstances"});
  CHECK(log[0]["params"] == json{{"GroupName", "spotdnn 'pg'"}, {"Strategy", "cluster"}});

  const json& ps = log[1]["params"];
  CHECK(ps["InstanceType"] == "m5.xlarge");
  CHECK(ps["MinCount"] == "1");
  CHECK(ps["MaxCount"] == "1");
  CHECK_FALSE(ps.contains("InstanceMarketOptions.MarketType"));  // the PS is on-demand
  CHECK(tags_of(ps, "instance").at("spotdnn:role") == "ps");

  const std::vector<std::pair<std::string, std::string>> workers = {{"g3.8xlarge", "4"}, {"p3.2xlarge", "2"}};
  for (std::size_t k = 0; k < workers.size(); ++k) {
    const json& p = log[2 + k]["params"];
    CAPTURE(workers[k].first);
    CHECK(p["InstanceType"] == workers[k].first);
    CHECK(p["MinCount"] == workers[k].second);
    CHECK(p["MaxCount"] == workers[k].second);
    CHECK(p["ImageId"] == config.image_for(workers[k].first));
    CHECK(p["InstanceMarketOptions.MarketType"] == "spot");
    CHECK(p["InstanceMarketOptions.SpotOptions.SpotInstanceType"] == "one-time");
    CHECK(p["InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior"] == "terminate");
    CHECK(p["MetadataOptions.HttpTokens"] == "required");
    CHECK(p["MetadataOptions.HttpEndpoint"] == "enabled");
    CHECK(p["Placement.GroupName"] == "spotdnn 'pg'");
    CHECK(p["KeyName"] == "team's \"key\"");
    CHECK(p["IamInstanceProfile.Name"] == "spotdnn-training");
    CHECK(p["SecurityGroupId.1"] == "sg-0123456789abcdef0");
    CHECK(p["SecurityGroupId.2"] == "sg-89abcdef");
    for (const char* resource : {"instance", "spot-instances-request"}) {
      const auto tags = tags_of(p, resource);
      CHECK(tags.at("spotdnn:plan-id") == "resnet110-demo");
      CHECK(tags.at("spotdnn:role") == "worker");
      CHECK(tags.at("spotdnn:instance-type") == workers[k].first);
      CHECK(tags.at("Project") == config.tags.at("Project"));  // hostile value, verbatim
      CHECK(tags.at("cost center") == "ml & research");
    }
    // The decoded user data is the bootstrap with the PS address filled in.
    const int gpus = workers[k].first == "p3.2xlarge" ? 1 : 2;
    const std::string expected = launcher::worker_user_data(config, kPlan.plan_id, workers[k].first, gpus, "10.0.0.11");
    CHECK(base64_decode(p["UserData"].get<std::string>()) == expected);
  }
  // Same subnet for everything.
  for (std::size_t i = 1; i <= 3; ++i) CHECK(log[i]["params"]["SubnetId"] == "subnet-0123456789abcdef0");

  // The cluster spec lists the PS and the six workers with their GPUs.
  const json spec = json::parse(test::read_text(dir / "spec.json"));
  CHECK(spec["plan_id"] == "resnet110-demo");
  CHECK(spec["parameter_server"]["type"] == "m5.xlarge");
  CHECK(spec["parameter_server"]["private_ip"] == "10.0.0.11");
  REQUIRE(spec["workers"].size() == 6);
  int gpus = 0;
  for (const json& w : spec["workers"]) gpus += w["gpus"].get<int>();
  CHECK(gpus == 4 * 2 + 2 * 1);
  // Nothing from the hostile values ran on this machine.
  for (const char* file : {"pwned", "pwned2", "pwned3"}) CHECK_FALSE(std::filesystem::exists(dir / file));

  // teardown terminates everything tagged with the plan.
  std::filesystem::remove(ec2.log_path());
  REQUIRE(run_script(dir, script, ec2.url(), "teardown") == 0);
  const std::vector<json> down = calls(ec2.log_path());
  REQUIRE(actions(down) == std::vector<std::string>{"DescribeInstances", "TerminateInstances"});
  CHECK(down[0]["params"]["Filter.1.Name"] == "tag:spotdnn:plan-id");
  CHECK(down[0]["params"]["Filter.1.Value.1"] == "resnet110-demo");
  CHECK(down[1]["params"].size() == 7);  // InstanceId.1 .. InstanceId.7
}

TEST_CASE("a failed launch terminates what it already started") {
  test::TempDir dir;
  test::FakeServer ec2("fake_ec2.py", dir, "ec2", {"--fail-instance-type", "p3.2xlarge"});
  const std::string script = launcher::launch_script(kPlan, presets::resnet110_catalog(), test::example_config());
  CHECK(run_script(dir, script, ec2.url()) != 0);
  const std::vector<json> log = calls(ec2.log_path());
  CHECK(actions(log) == std::vector<std::string>{"CreatePlacementGroup", "RunInstances", "RunInstances", "RunInstances",
                                                 "DescribeInstances", "TerminateInstances"});
  CHECK(log.back()["params"].size() == 5);  // the PS and the four g3.8xlarge
  CHECK_FALSE(std::filesystem::exists(dir / "spec.json"));
  CHECK(test::read_text(dir / "stderr.txt").find("terminating what was started") != std::string::npos);
}

TEST_CASE("the fleet variant creates a launch template and an instant fleet per type through the real aws CLI") {
  test::TempDir dir;
  test::FakeServer ec2("fake_ec2.py", dir, "ec2");
  launcher::LaunchOptions options;
  options.fleet = true;
  const launcher::AwsConfig config = test::example_config();
  const std::string script = launcher::launch_script(kPlan, presets::resnet110_catalog(), config, options);
  REQUIRE(run_script(dir, script, ec2.url()) == 0);
  const std::vector<json> log = calls(ec2.log_path());
  CHECK(actions(log) == std::vector<std::string>{"CreatePlacementGroup", "RunInstances", "CreateLaunchTemplate", "CreateFleet",
                                                 "CreateLaunchTemplate", "CreateFleet", "DescribeInstances", "DescribeInstances"});
  const json& lt = log[2]["params"];
  CHECK(lt["LaunchTemplateName"] == "spotdnn-resnet110-demo-g3.8xlarge");
  CHECK(lt["LaunchTemplateData.MetadataOptions.HttpTokens"] == "required");
  const std::string expected = launcher::worker_user_data(config, kPlan.plan_id, "g3.8xlarge", 2, "10.0.0.11");
  CHECK(base64_decode(lt["LaunchTemplateData.UserData"].get<std::string>()) == expected);
  const json& fleet = log[3]["params"];
  CHECK(fleet["Type"] == "instant");
  CHECK(fleet["SpotOptions.MinTargetCapacity"] == "4");
  CHECK(fleet["TargetCapacitySpecification.TotalTargetCapacity"] == "4");
  CHECK(fleet["TargetCapacitySpecification.DefaultTargetCapacityType"] == "spot");
  CHECK(fleet["LaunchTemplateConfigs.1.Overrides.1.InstanceType"] == "g3.8xlarge");
  CHECK(fleet["LaunchTemplateConfigs.1.Overrides.1.SubnetId"] == "subnet-0123456789abcdef0");
  CHECK(fleet["TagSpecification.1.ResourceType"] == "fleet");
  CHECK(log[5]["params"]["SpotOptions.MinTargetCapacity"] == "2");
  REQUIRE(json::parse(test::read_text(dir / "spec.json"))["workers"].size() == 6);
}
