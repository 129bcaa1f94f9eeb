// SPDX-License-Identifier: MIT
// The launcher with shell, JSON and marker metacharacters in every free-text AwsConfig field (tag keys and
// values, key name, placement group, instance profile, checkpoint directory and URI, training command,
// revocation hook): the emitted launch script, run with bash and the real aws CLI against moto_server
// (run-instances and EC2 Fleet), runs none of them on this machine, EC2 holds every value verbatim, and
// the user data EC2 holds carries them as single-quoted bash literals that give them back exactly, and
// runs the revocation hook with them intact. The moto cases print "skipped: <why>" (ctest reports them
// skipped) when moto_server or an aws CLI is missing; the last cases need neither.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>

#include "support/error_of.hpp"
#include "support/launcher_fixtures.hpp"
#include "support/moto_launch.hpp"

using namespace spotdnn;
using nlohmann::json;
using test::MotoCloud;
using test::ProcessResult;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// test::hostile_config() launching into `cloud`: its subnet, security group and an AMI; the instance
/// profile created in moto; no placement group creation (moto 5.2 has none; the name is still sent).
launcher::AwsConfig hostile_config_in(const MotoCloud& cloud) {
  launcher::AwsConfig c = test::hostile_config();
  c.subnet_id = cloud.subnet_id();
  c.security_group_ids = {cloud.security_group_id()};
  c.image_id = "ami-0123456789abcdef0";
  c.image_ids = {{"p3.2xlarge", "ami-0fedcba9876543210"}};
  c.create_placement_group = false;
  cloud.aws({"iam", "create-instance-profile", "--instance-profile-name", c.iam_instance_profile});
  return c;
}

/// The launcher's tags of `who` in run `run` with rank base `base`, then the user's.
std::map<std::string, std::string> expected_tags(const launcher::AwsConfig& config, const launcher::InstanceRole& who,
                                                 const std::string& run, const std::string& base) {
  std::map<std::string, std::string> tags(config.tags.begin(), config.tags.end());
  tags["spotdnn:run"] = run;
  tags["spotdnn:rank-base"] = base;
  tags["spotdnn:role"] = who.role;
  tags["spotdnn:instance-type"] = who.type;
  tags["spotdnn:market"] = std::string(to_string(who.market));
  return tags;
}

/// Role, GPUs and rank base of the instances of a run of moto_plan().
struct Member {
  launcher::InstanceRole who;
  int gpus;
  std::string base;
};

Member member_of(const json& instance) {
  const std::string type = instance["InstanceType"];
  if (type == "m5.xlarge") return {{"ps", type, Market::on_demand}, 0, "0"};
  if (type == "p3.2xlarge") return {{"worker", type, Market::spot}, 1, "1"};
  REQUIRE(type == "g3.8xlarge");
  return {{"worker", type, Market::on_demand}, 2, "3"};
}

/// Checks that `user_data` assigns each free-text value as exactly its single-quoted bash literal, and
/// that bash, running those assignments in `cloud`'s directory, gives every value back.
void check_literals(const MotoCloud& cloud, const std::string& user_data, const launcher::AwsConfig& config, bool worker) {
  struct Literal {
    std::string prefix, next, name, value;
  };
  std::vector<Literal> literals = {
      {"export SPOTDNN_CHECKPOINT_DIR=", "\nexport SPOTDNN_CHECKPOINT_S3_URI=", "SPOTDNN_CHECKPOINT_DIR", config.checkpoint_dir},
      {"export SPOTDNN_CHECKPOINT_S3_URI=", "\nreadonly REGION=", "SPOTDNN_CHECKPOINT_S3_URI", config.checkpoint_s3_uri},
      {"readonly TRAINING_COMMAND=", "\nreadonly LOG_DIR=", "TRAINING_COMMAND", config.training_command}};
  if (worker) literals.push_back({"readonly REVOCATION_HOOK=", "\nreadonly POLL_INTERVAL_S=", "REVOCATION_HOOK", config.revocation_hook});
  std::string script = "set -eu\n";
  std::string expected;
  for (const Literal& l : literals) {
    CAPTURE(l.name);
    const std::size_t start = user_data.find("\n" + l.prefix);
    REQUIRE(start != std::string::npos);
    const std::size_t end = user_data.find(l.next, start + 1);
    REQUIRE(end != std::string::npos);
    const std::string assignment = user_data.substr(start + 1, end - start - 1);
    CHECK(assignment == l.prefix + launcher::shell_quote(l.value));
    script += assignment + "\nprintf '%s\\0' \"$" + l.name + "\" >>literals.out\n";
    expected += l.value + std::string(1, '\0');
  }
  std::filesystem::remove(cloud.dir() / "literals.out");
  const ProcessResult r = cloud.run_script("literals.sh", script);
  INFO("literals stderr: ", r.err);
  CHECK(r.exit_code == 0);
  CHECK(test::read_text(cloud.dir() / "literals.out") == expected);
}

/// Launches moto_plan() with `config` (EC2 Fleet for the spot group when `fleet`) in `cloud`, recording;
/// checks that nothing ran and that every instance holds the values verbatim. Returns the run id.
std::string launch_and_check(const MotoCloud& cloud, const launcher::AwsConfig& config, bool fleet) {
  launcher::LaunchOptions options;
  options.fleet = fleet;
  cloud.server().start_recording();
  const ProcessResult launch = cloud.run_script("launch.sh", launcher::launch_script(test::moto_plan(), config, options));
  INFO("launch stderr: ", launch.err);
  REQUIRE(launch.exit_code == 0);
  const std::string run = test::run_id_of(launch.out);
  REQUIRE(launcher::is_run_id(run));
  CHECK(test::pwned_files(cloud.dir().path()).empty());

  const std::vector<json> all = cloud.instances();
  REQUIRE(all.size() == 4);
  std::string ps_ip;
  for (const json& i : all) {
    if (i["InstanceType"] == "m5.xlarge") ps_ip = i["PrivateIpAddress"];
  }
  REQUIRE_FALSE(ps_ip.empty());
  bool literals_checked[2] = {false, false};
  for (const json& i : all) {
    const std::string id = i["InstanceId"];
    const Member m = member_of(i);
    CAPTURE(id);
    CAPTURE(m.who.type);
    const std::map<std::string, std::string> expected = expected_tags(config, m.who, run, m.base);
    CHECK(test::tags_of_resource(i) == expected);
    CHECK(i["KeyName"] == config.key_name);
    const std::string user_data = cloud.user_data_of(id);
    CHECK(user_data == launcher::user_data(config, m.who, m.gpus, {run, ps_ip, "4", m.base}));
    const bool worker = m.who.role == "worker";
    if (!literals_checked[worker]) {
      literals_checked[worker] = true;
      check_literals(cloud, user_data, config, worker);
    }
  }
  // The same tags through describe-tags.
  const std::string ps_id = [&] {
    for (const json& i : all) {
      if (i["InstanceType"] == "m5.xlarge") return i["InstanceId"].get<std::string>();
    }
    return std::string();
  }();
  const json described = cloud.aws({"ec2", "describe-tags", "--filters", "Name=resource-id,Values=" + ps_id});
  std::map<std::string, std::string> ps_tags;
  for (const json& t : described["Tags"]) ps_tags[t["Key"].get<std::string>()] = t["Value"].get<std::string>();
  CHECK(ps_tags == expected_tags(config, {"ps", "m5.xlarge", Market::on_demand}, run, "0"));

  // What the aws CLI sent: the values of run-instances, and of the launch template and fleet.
  for (const json& call : cloud.server().recorded_calls("RunInstances")) {
    const json& p = call["params"];
    const std::string type = p["InstanceType"];
    CAPTURE(type);
    CHECK(p["KeyName"] == config.key_name);
    CHECK(p["Placement.GroupName"] == config.placement_group);
    CHECK(p["IamInstanceProfile.Name"] == config.iam_instance_profile);
    const Member m = member_of(json{{"InstanceType", type}});
    CHECK(test::tags_of(p, "instance") == expected_tags(config, m.who, run, m.base));
    if (m.who.market == Market::spot) CHECK(test::tags_of(p, "spot-instances-request") == expected_tags(config, m.who, run, m.base));
  }
  const launcher::InstanceRole spot_worker{"worker", "p3.2xlarge", Market::spot};
  const std::vector<json> templates = cloud.server().recorded_calls("CreateLaunchTemplate");
  CHECK(templates.size() == (fleet ? 1U : 0U));
  for (const json& call : templates) {
    const json& p = call["params"];
    const std::string prefix = "LaunchTemplateData.";
    CHECK(p[prefix + "KeyName"] == config.key_name);
    CHECK(p[prefix + "Placement.GroupName"] == config.placement_group);
    CHECK(p[prefix + "IamInstanceProfile.Name"] == config.iam_instance_profile);
    for (const char* resource : {"instance", "volume", "spot-instances-request"}) {
      CAPTURE(resource);
      CHECK(test::tags_of(p, resource, prefix) == expected_tags(config, spot_worker, run, "1"));
    }
    CHECK(test::tags_of(p, "launch-template") == expected_tags(config, spot_worker, run, "1"));
  }
  const std::vector<json> fleets = cloud.server().recorded_calls("CreateFleet");
  CHECK(fleets.size() == (fleet ? 1U : 0U));
  for (const json& call : fleets) CHECK(test::tags_of(call["params"], "fleet") == expected_tags(config, spot_worker, run, "1"));
  CHECK(test::pwned_files(cloud.dir().path()).empty());
  return run;
}

}  // namespace

TEST_CASE("moto hostile values: a run-instances launch runs none of them and EC2 holds each verbatim") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const launcher::AwsConfig config = hostile_config_in(cloud);
  launch_and_check(cloud, config, false);
}

TEST_CASE("moto hostile values: an EC2 Fleet launch holds each verbatim - the worker user data runs the hook with them intact") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  launcher::AwsConfig config = hostile_config_in(cloud);
  // The hook is code by design: it prints what the watcher exported, then a comment holds the hostile line.
  config.revocation_hook = "printf '%s\\n' \"$SPOTDNN_PS_PRIVATE_IP\" \"$SPOTDNN_CHECKPOINT_DIR\" \"$SPOTDNN_CHECKPOINT_S3_URI\" "
                           ">hook.txt # " + test::kHostileLine;
  const std::string run = launch_and_check(cloud, config, true);

  std::string ps_ip, worker;
  for (const json& i : cloud.run_instances(run)) {
    if (i["InstanceType"] == "m5.xlarge") ps_ip = i["PrivateIpAddress"];
    if (i["InstanceType"] == "p3.2xlarge" && worker.empty()) worker = i["InstanceId"];
  }
  REQUIRE_FALSE(worker.empty());
  test::FakeServer imds("fake_imds.py", cloud.dir(), "imds", {"--instance-id", worker, "--instance-action", "notice"});
  const ProcessResult watch = cloud.run_script("worker.sh", cloud.user_data_of(worker), "watch",
                                               {"SPOTDNN_IMDS_URL=" + imds.url(), "SPOTDNN_POLL_INTERVAL_S=0.05"},
                                               std::chrono::seconds(60));
  INFO("watch stderr: ", watch.err);
  REQUIRE(watch.exit_code == 0);
  CHECK(test::read_text(cloud.dir() / "hook.txt") == ps_ip + "\n" + config.checkpoint_dir + "\n" + config.checkpoint_s3_uri + "\n");
  CHECK(test::pwned_files(cloud.dir().path()).empty());
  const std::vector<json> tagged = cloud.instances({"--instance-ids", worker});
  REQUIRE(tagged.size() == 1);
  CHECK(test::tag(tagged[0], "spotdnn:revoked") == "instance-action");
}

TEST_CASE("the base64 user data lands only in UserData of the launch-template JSON whatever the configuration holds") {
  const launcher::AwsConfig config = test::hostile_config();
  const std::string base64 = launcher::base64_encode("#!/bin/bash\necho hi\n");
  const json data = json::parse(launcher::launch_template_data_json(config, "p3.2xlarge", base64, test::example_values()));
  CHECK(data["UserData"] == base64);
  CHECK(data["KeyName"] == config.key_name);
  CHECK(data["Placement"]["GroupName"] == config.placement_group);
  CHECK(data["IamInstanceProfile"]["Name"] == config.iam_instance_profile);
  std::map<std::string, std::string> tags;
  for (const json& t : data["TagSpecifications"][0]["Tags"]) tags[t["Key"].get<std::string>()] = t["Value"].get<std::string>();
  CHECK(tags.at("__SPOTDNN_PS_PRIVATE_IP__") == "__SPOTDNN_USER_DATA_BASE64__");
  CHECK(tags.at("__SPOTDNN_USER_DATA_BASE64__") == "__SPOTDNN_PS_PRIVATE_IP__");
  CHECK(tags.at("spotdnn:run") == test::kExampleRunId);
  for (const char* bad : {"", "abc", "Zm9v\",\"KeyName\":\"x", "Zm9v\n", "__SPOTDNN_USER_DATA_BASE64__"}) {
    CAPTURE(bad);
    CHECK(contains(test::error_of([&] { (void)launcher::launch_template_data_json(config, "p3.2xlarge", bad, test::example_values()); }),
                   "user_data_base64"));
  }
}

TEST_CASE("a key name or placement group that the aws CLI would read as a file or URL is refused") {
  for (const char* value : {"file:///etc/passwd", "fileb://key", "FILE://x", "http://example.com/k", "https://example.com/k"}) {
    CAPTURE(value);
    launcher::AwsConfig config = test::example_config();
    config.key_name = value;
    CHECK(contains(test::error_of([&] { config.validate(); }), "key_name"));
    config = test::example_config();
    config.placement_group = value;
    CHECK(contains(test::error_of([&] { config.validate(); }), "placement_group"));
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
    CHECK(contains(test::error_of([&] { (void)launcher::launch_script(test::moto_plan(), config); }), "parameter_server_type"));
    launcher::LaunchPlan plan = test::moto_plan();
    plan.parameter_server_type = type;
    CHECK(contains(test::error_of([&] { (void)launcher::launch_script(plan, test::example_config()); }), "parameter_server_type"));
  }
}
