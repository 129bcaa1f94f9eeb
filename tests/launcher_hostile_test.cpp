// SPDX-License-Identifier: MIT
// The launcher with shell, JSON and marker metacharacters in every free-text AwsConfig field: the emitted
// script, run with bash and the real aws CLI against tests/support/fake_ec2.py, runs none of them on this
// machine, and EC2 receives every value verbatim (tags, key, placement group, instance profile, launch
// template, user data); the user data EC2 received runs on the instance with the PS address and the
// values intact. No value can move where the PS address or the base64 user data goes.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>
#include <spotdnn/presets.hpp>

#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using nlohmann::json;

namespace {

const launcher::LaunchPlan kPlan{"hostile-1", {{"p3.2xlarge", 2}, {"g3.8xlarge", 1}}};

/// Runs `bash launch.sh` in `dir` against `endpoint` (the real aws CLI); returns "" on success, else
/// the exit code and the script's stderr.
std::string run_launch(const test::TempDir& dir, const std::string& script, const std::string& endpoint) {
  test::write_text(dir / "launch.sh", script);
  const int rc = test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && timeout 240 " + test::aws_env(endpoint) +
                                " SPOTDNN_CLUSTER_SPEC=spec.json bash launch.sh >stdout.txt 2>stderr.txt");
  return rc == 0 ? std::string() : "exit " + std::to_string(rc) + ": " + test::read_text(dir / "stderr.txt");
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

/// The launcher's own tags followed by the user's: what every resource of `role` and `type` carries.
std::map<std::string, std::string> expected_tags(const launcher::AwsConfig& config, const std::string& role,
                                                 const std::string& type) {
  std::map<std::string, std::string> tags(config.tags.begin(), config.tags.end());
  tags["spotdnn:plan-id"] = kPlan.plan_id;
  tags["spotdnn:role"] = role;
  tags["spotdnn:instance-type"] = type;
  return tags;
}

int gpus_of(const std::string& type) { return presets::resnet110_catalog().at(type).gpus; }

}  // namespace

TEST_CASE("a run-instances launch with hostile values runs none of them and EC2 receives each verbatim") {
  test::TempDir dir;
  test::FakeServer ec2("fake_ec2.py", dir, "ec2");
  const launcher::AwsConfig config = test::hostile_config();
  REQUIRE(run_launch(dir, launcher::launch_script(kPlan, presets::resnet110_catalog(), config), ec2.url()) == "");
  CHECK(test::pwned_files(dir.path()).empty());

  const std::vector<json> log = test::ec2_calls(ec2.log_path());
  CHECK(test::first_call(log, "CreatePlacementGroup")["params"]["GroupName"] == config.placement_group);
  int workers = 0;
  for (const json& call : log) {
    if (call["Action"] != "RunInstances") continue;
    const json& p = call["params"];
    const std::string type = p["InstanceType"].get<std::string>();
    const bool ps = type == "m5.xlarge";
    CAPTURE(type);
    CHECK(p["KeyName"] == config.key_name);
    CHECK(p["Placement.GroupName"] == config.placement_group);
    CHECK(p["IamInstanceProfile.Name"] == config.iam_instance_profile);
    CHECK(test::tags_of(p, "instance") == expected_tags(config, ps ? "ps" : "worker", type));
    const std::string user_data = test::base64_decode(p["UserData"].get<std::string>());
    if (ps) {
      CHECK(user_data == launcher::parameter_server_user_data(config, kPlan.plan_id, type));
    } else {
      ++workers;
      CHECK(test::tags_of(p, "spot-instances-request") == expected_tags(config, "worker", type));
      CHECK(user_data == launcher::worker_user_data(config, kPlan.plan_id, type, gpus_of(type), "10.0.0.11"));
    }
  }
  CHECK(workers == 2);
}

TEST_CASE("a fleet launch with hostile values sends launch templates and fleets holding each value verbatim") {
  test::TempDir dir;
  test::FakeServer ec2("fake_ec2.py", dir, "ec2");
  const launcher::AwsConfig config = test::hostile_config();
  launcher::LaunchOptions options;
  options.fleet = true;
  REQUIRE(run_launch(dir, launcher::launch_script(kPlan, presets::resnet110_catalog(), config, options), ec2.url()) == "");
  CHECK(test::pwned_files(dir.path()).empty());

  int templates = 0, fleets = 0;
  for (const json& call : test::ec2_calls(ec2.log_path())) {
    const json& p = call["params"];
    if (call["Action"] == "CreateLaunchTemplate") {
      ++templates;
      const std::string type = p["LaunchTemplateName"] == "spotdnn-hostile-1-p3.2xlarge" ? "p3.2xlarge" : "g3.8xlarge";
      CAPTURE(type);
      const std::string prefix = "LaunchTemplateData.";
      CHECK(p[prefix + "KeyName"] == config.key_name);
      CHECK(p[prefix + "Placement.GroupName"] == config.placement_group);
      CHECK(p[prefix + "IamInstanceProfile.Name"] == config.iam_instance_profile);
      for (const char* resource : {"instance", "volume", "spot-instances-request"}) {
        CHECK(test::tags_of(p, resource, prefix) == expected_tags(config, "worker", type));
      }
      CHECK(test::base64_decode(p[prefix + "UserData"].get<std::string>()) ==
            launcher::worker_user_data(config, kPlan.plan_id, type, gpus_of(type), "10.0.0.11"));
    } else if (call["Action"] == "CreateFleet") {
      ++fleets;
      const std::string type = p["LaunchTemplateConfigs.1.Overrides.1.InstanceType"].get<std::string>();
      CHECK(test::tags_of(p, "fleet") == expected_tags(config, "worker", type));
    }
  }
  CHECK(templates == 2);
  CHECK(fleets == 2);
}

TEST_CASE("the user data EC2 received runs the hook with the PS address and the hostile values intact") {
  test::TempDir dir;
  test::FakeServer ec2("fake_ec2.py", dir, "ec2");
  test::FakeServer imds("fake_imds.py", dir, "imds", {"--instance-action", "notice"});
  launcher::AwsConfig config = test::hostile_config();
  // The hook is code by design: it prints what the watcher exported, then a comment holds the hostile line.
  config.revocation_hook = "printf '%s\\n' \"$SPOTDNN_PS_PRIVATE_IP\" \"$SPOTDNN_CHECKPOINT_DIR\" \"$SPOTDNN_CHECKPOINT_S3_URI\" "
                           ">hook.txt # " + test::kHostileLine;
  launcher::LaunchOptions options;
  options.fleet = true;
  REQUIRE(run_launch(dir, launcher::launch_script(kPlan, presets::resnet110_catalog(), config, options), ec2.url()) == "");
  const std::vector<json> log = test::ec2_calls(ec2.log_path());
  const json& lt = test::first_call(log, "CreateLaunchTemplate");
  test::write_text(dir / "worker.sh", test::base64_decode(lt["params"]["LaunchTemplateData.UserData"].get<std::string>()));

  const int rc = test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && timeout 60 " + test::aws_env(ec2.url()) +
                                " SPOTDNN_IMDS_URL=" + imds.url() +
                                " SPOTDNN_POLL_INTERVAL_S=0.05 bash worker.sh watch >out.txt 2>err.txt");
  INFO(test::read_text(dir / "err.txt"));
  REQUIRE(rc == 0);
  CHECK(test::read_text(dir / "hook.txt") == "10.0.0.11\n" + config.checkpoint_dir + "\n" + config.checkpoint_s3_uri + "\n");
  CHECK(test::pwned_files(dir.path()).empty());
}

TEST_CASE("the base64 user data lands only in UserData of the launch-template JSON, whatever the configuration holds") {
  const launcher::AwsConfig config = test::hostile_config();
  const std::string base64 = launcher::base64_encode("#!/bin/bash\necho hi\n");
  const json data = json::parse(launcher::launch_template_data_json(config, "p1", "p3.2xlarge", base64));
  CHECK(data["UserData"] == base64);
  CHECK(data["KeyName"] == config.key_name);
  CHECK(data["Placement"]["GroupName"] == config.placement_group);
  CHECK(data["IamInstanceProfile"]["Name"] == config.iam_instance_profile);
  std::map<std::string, std::string> tags;
  for (const json& tag : data["TagSpecifications"][0]["Tags"]) tags[tag["Key"].get<std::string>()] = tag["Value"].get<std::string>();
  CHECK(tags.at("__SPOTDNN_PS_PRIVATE_IP__") == "__SPOTDNN_USER_DATA_BASE64__");
  CHECK(tags.at("__SPOTDNN_USER_DATA_BASE64__") == "__SPOTDNN_PS_PRIVATE_IP__");
  // The head is fixed text; the configuration is only in the tail.
  const auto parts = launcher::launch_template_data_parts(config, "p1", "p3.2xlarge");
  CHECK(parts.head == "{\"UserData\":\"");
  CHECK(parts.head == launcher::launch_template_data_parts(test::example_config(), "p1", "g3.8xlarge").head);
  for (const char* bad : {"", "abc", "Zm9v\",\"KeyName\":\"x", "Zm9v\n", "__SPOTDNN_USER_DATA_BASE64__"}) {
    CAPTURE(bad);
    CHECK(message_of([&] { (void)launcher::launch_template_data_json(config, "p1", "p3.2xlarge", bad); }).find("user_data_base64") !=
          std::string::npos);
  }
}

TEST_CASE("the PS address goes only between the fixed head and the body of the worker user data and must be IPv4") {
  const launcher::AwsConfig config = test::hostile_config();
  const auto parts = launcher::worker_user_data_parts(config, "p1", "p3.2xlarge", 1);
  CHECK(parts.head == launcher::worker_user_data_parts(test::example_config(), "p1", "g3.8xlarge", 2).head);
  CHECK(parts.head.size() >= 23);
  CHECK(parts.head.substr(parts.head.size() - 23) == "SPOTDNN_PS_PRIVATE_IP='");
  CHECK(parts.body.rfind("'\nexport SPOTDNN_PS_PRIVATE_IP\n", 0) == 0);
  CHECK(parts.with_ps_address("172.31.255.7") == parts.head + "172.31.255.7" + parts.body);
  for (const char* bad : {"", "10.0.0", "10.0.0.256", "10.0.0.1'; touch PWNED; '", "1.2.3.4.5", "0010.0.0.1", "10.0.0.1\n",
                          "__SPOTDNN_PS_PRIVATE_IP__", "::1"}) {
    CAPTURE(bad);
    CHECK(message_of([&] { (void)parts.with_ps_address(bad); }).find("ps_private_ip") != std::string::npos);
  }
}

TEST_CASE("every script emitted for the hostile configuration passes bash -n and shellcheck") {
  test::TempDir dir;
  const launcher::AwsConfig config = test::hostile_config();
  std::vector<std::pair<std::string, std::string>> scripts = {
      {"worker.sh", launcher::worker_user_data(config, "p1", "p3.2xlarge", 1, "10.0.0.11")},
      {"ps.sh", launcher::parameter_server_user_data(config, "p1", "m5.xlarge")}};
  for (bool fleet : {false, true}) {
    launcher::LaunchOptions options;
    options.fleet = fleet;
    scripts.emplace_back(fleet ? "fleet.sh" : "run.sh", launcher::launch_script(kPlan, presets::resnet110_catalog(), config, options));
  }
  for (const auto& entry : scripts) {
    const std::string path = dir / entry.first;
    test::write_text(path, entry.second);
    CHECK_MESSAGE(test::run_bash("bash -n " + launcher::shell_quote(path)) == 0, entry.first);
    const std::string out = dir / (entry.first + ".shellcheck");
    const int rc = test::run_bash("shellcheck " + launcher::shell_quote(path) + " >" + launcher::shell_quote(out) + " 2>&1");
    INFO(entry.first, ": ", test::read_text(out));
    CHECK(rc == 0);
  }
}

TEST_CASE("a key name or placement group that the aws CLI would read as a file or URL is refused") {
  for (const char* value : {"file:///etc/passwd", "fileb://key", "FILE://x", "http://example.com/k", "https://example.com/k"}) {
    CAPTURE(value);
    launcher::AwsConfig config = test::example_config();
    config.key_name = value;
    CHECK(message_of([&] { config.validate(); }).find("key_name") != std::string::npos);
    config = test::example_config();
    config.placement_group = value;
    CHECK(message_of([&] { config.validate(); }).find("placement_group") != std::string::npos);
  }
  launcher::AwsConfig config = test::example_config();
  config.key_name = "team-file://key";  // only a prefix is read as a URI
  CHECK_NOTHROW(config.validate());
}

TEST_CASE("a parameter-server type with shell or JSON metacharacters is refused before any script is written") {
  for (const char* type : {"m5.xlarge'; touch PWNED; '", "m5.xlarge\"}", "m5.$(touch PWNED)", "__SPOTDNN_PS_PRIVATE_IP__"}) {
    CAPTURE(type);
    launcher::AwsConfig config = test::example_config();
    config.parameter_server_type = type;
    CHECK(message_of([&] { (void)launcher::launch_script(kPlan, presets::resnet110_catalog(), config); }).find("parameter_server_type") !=
          std::string::npos);
  }
}
