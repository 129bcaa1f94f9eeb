// SPDX-License-Identifier: MIT
// Test fixture of the moto launcher tests: a moto_server of its own with a VPC, subnet and security group
// in it, an AwsConfig pointing there, the plan the tests launch, and helpers to run the emitted scripts
// with bash under the aws CLI test environment and to read back what EC2 (moto) holds.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/moto_server.hpp"

/// Returns from the test case with "skipped: <why>" (ctest reports it skipped) when moto or the aws CLI
/// is missing.
#define SPOTDNN_SKIP_WITHOUT_MOTO()                                  \
  if (const auto why = spotdnn::test::MotoServer::unavailable_reason()) { \
    MESSAGE("skipped: " << *why);                                    \
    return;                                                          \
  }

namespace spotdnn::test {

/// The spotdnn CLI: SPOTDNN_CLI_PATH when the build defines it for this test, else the one built next to
/// the tests (build/examples/spotdnn).
inline std::string spotdnn_cli_path() {
#ifdef SPOTDNN_CLI_PATH
  return SPOTDNN_CLI_PATH;
#else
  return (std::filesystem::path(SPOTDNN_TEST_BINARY_DIR).parent_path() / "examples" / "spotdnn").string();
#endif
}

/// `spotdnn ARGS` (no shell) with the aws test environment `env`, killed after `timeout`.
inline ProcessResult run_spotdnn(const AwsTestEnv& env, const std::vector<std::string>& args,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(300)) {
  std::vector<std::string> argv = {spotdnn_cli_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return moto_detail::run_process(argv, &env.variables, timeout);
}

/// Tag Key -> Value of an EC2 resource as describe-* answers it (its "Tags" array).
inline std::map<std::string, std::string> tags_of_resource(const nlohmann::json& resource) {
  std::map<std::string, std::string> tags;
  for (const nlohmann::json& tag : resource.value("Tags", nlohmann::json::array())) {
    tags[tag["Key"].get<std::string>()] = tag.value("Value", std::string());
  }
  return tags;
}

/// The plan the moto tests launch: PS m5.xlarge, 2 x p3.2xlarge spot (1 GPU), 1 x g3.8xlarge on-demand
/// (2 GPUs), priced in us-east-1.
inline launcher::LaunchPlan moto_plan() {
  launcher::LaunchPlan plan = two_type_plan();
  plan.workload_name = "resnet110-moto";
  plan.workers[1].count = 1;  // one g3.8xlarge: fewer instances for moto to start
  return plan;
}

/// A replan adding `count` x p3.2xlarge spot (1 GPU) to a run of moto_plan().
inline launcher::LaunchPlan moto_replan(int count = 1) {
  launcher::LaunchPlan plan = moto_plan();
  plan.kind = std::string(launcher::kReplanDocumentKind);
  plan.workers = {{"p3.2xlarge", count, 1, Market::spot}};
  plan.survivors = Cluster{{"p3.2xlarge", 1}, {"g3.8xlarge", 1}};
  return plan;
}

/// The run id on the last stdout line `spotdnn run: ID` of a launch or join script; "" when the last
/// line is not of that form.
inline std::string run_id_of(const std::string& out) {
  std::string text = out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const std::size_t start = text.rfind('\n');
  const std::string last = start == std::string::npos ? text : text.substr(start + 1);
  const std::string prefix = "spotdnn run: ";
  if (last.compare(0, prefix.size(), prefix) != 0) return "";
  return last.substr(prefix.size());
}

/// A fresh moto_server (in `dir`/moto) with a VPC 10.42.0.0/16, a subnet 10.42.1.0/24 in us-east-1b and a
/// security group of its own; scripts and their outputs go to `dir`.
class MotoCloud {
 public:
  MotoCloud() {
    const nlohmann::json vpc = aws({"ec2", "create-vpc", "--cidr-block", "10.42.0.0/16"});
    vpc_id_ = vpc["Vpc"]["VpcId"].get<std::string>();
    subnet_id_ = aws({"ec2", "create-subnet", "--vpc-id", vpc_id_, "--cidr-block", "10.42.1.0/24", "--availability-zone",
                      "us-east-1b"})["Subnet"]["SubnetId"]
                     .get<std::string>();
    security_group_id_ = aws({"ec2", "create-security-group", "--group-name", "spotdnn-moto", "--description", "spotdnn moto test",
                              "--vpc-id", vpc_id_})["GroupId"]
                             .get<std::string>();
  }

  [[nodiscard]] const TempDir& dir() const { return dir_; }
  [[nodiscard]] const MotoServer& server() const { return server_; }
  [[nodiscard]] const AwsTestEnv& env() const { return env_; }
  [[nodiscard]] const std::string& subnet_id() const { return subnet_id_; }
  [[nodiscard]] const std::string& security_group_id() const { return security_group_id_; }

  /// A valid configuration launching into this moto's subnet and security group, with a second AMI for
  /// p3.2xlarge, a key name and user tags with quotes and `$(...)`, checkpoints to s3://spotdnn-ckpt/runs.
  [[nodiscard]] launcher::AwsConfig config() const {
    launcher::AwsConfig c;
    c.region = "us-east-1";
    c.subnet_id = subnet_id_;
    c.security_group_ids = {security_group_id_};
    c.image_id = "ami-0123456789abcdef0";
    c.image_ids = {{"p3.2xlarge", "ami-0fedcba9876543210"}};
    c.key_name = "team's \"key\"";
    c.checkpoint_s3_uri = "s3://spotdnn-ckpt/runs";
    c.checkpoint_dir = (dir_.path() / "ckpt").string();
    c.tags = {{"Project", "it's \"spot\" $(touch PWNED) `touch PWNED`"}, {"cost center", "ml & research"}};
    c.training_command = "python3 train.py --ps \"$SPOTDNN_PS_PRIVATE_IP\"";
    return c;
  }

  /// `aws ... --output json ARGS` against this moto, parsed; throws with the stderr on a non-zero exit.
  nlohmann::json aws(const std::vector<std::string>& args) const { return aws_json(env_, args); }
  ProcessResult aws_raw(const std::vector<std::string>& args) const { return aws_run(env_, args); }

  /// Writes `text` to dir/`name` and runs `bash NAME ARGS` in dir with the aws test environment plus
  /// `extra` (NAME=value); killed after `timeout`.
  ProcessResult run_script(const std::string& name, const std::string& text, const std::string& args = "",
                           const std::vector<std::string>& extra = {},
                           std::chrono::milliseconds timeout = std::chrono::seconds(240)) const {
    write_text(dir_ / name, text);
    std::vector<std::string> vars = env_.variables;
    for (const std::string& e : extra) {
      const std::string key = e.substr(0, e.find('=') + 1);
      vars.erase(std::remove_if(vars.begin(), vars.end(), [&](const std::string& v) { return v.compare(0, key.size(), key) == 0; }),
                 vars.end());
      vars.push_back(e);
    }
    const std::string command = "cd " + launcher::shell_quote(dir_.path().string()) + " && exec bash " + launcher::shell_quote(name) +
                                (args.empty() ? std::string() : " " + args);
    return moto_detail::run_process({"/bin/bash", "-c", command}, &vars, timeout);
  }

  /// Every instance EC2 lists (optionally filtered: "--filters", ...), flattened.
  [[nodiscard]] std::vector<nlohmann::json> instances(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"ec2", "describe-instances"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<nlohmann::json> out;
    const nlohmann::json answer = aws(args);
    for (const nlohmann::json& reservation : answer["Reservations"]) {
      for (const nlohmann::json& instance : reservation["Instances"]) out.push_back(instance);
    }
    std::sort(out.begin(), out.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a["InstanceId"].get<std::string>() < b["InstanceId"].get<std::string>();
    });
    return out;
  }

  /// The instances tagged spotdnn:run=`run_id`, sorted by instance ID.
  [[nodiscard]] std::vector<nlohmann::json> run_instances(const std::string& run_id) const {
    return instances({"--filters", "Name=tag:spotdnn:run,Values=" + run_id});
  }

  /// The user data EC2 holds for instance `id`, decoded ("" when it holds none).
  [[nodiscard]] std::string user_data_of(const std::string& id) const {
    const nlohmann::json answer = aws({"ec2", "describe-instance-attribute", "--instance-id", id, "--attribute", "userData"});
    const nlohmann::json& value = answer["UserData"];
    if (!value.is_object() || !value.contains("Value") || !value["Value"].is_string()) return "";
    return base64_decode(value["Value"].get<std::string>());
  }

 private:
  TempDir dir_;
  MotoServer server_{dir_.path() / "moto"};
  AwsTestEnv env_ = aws_test_env(server_.url());
  std::string vpc_id_, subnet_id_, security_group_id_;
};

/// Value of tag `key` on an instance, "" when absent.
inline std::string tag(const nlohmann::json& instance, const std::string& key) {
  const std::map<std::string, std::string> tags = tags_of_resource(instance);
  const auto it = tags.find(key);
  return it == tags.end() ? std::string() : it->second;
}

/// The instances of `all` whose `key` tag is `value`.
inline std::vector<nlohmann::json> with_tag(const std::vector<nlohmann::json>& all, const std::string& key, const std::string& value) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& i : all) {
    if (tag(i, key) == value) out.push_back(i);
  }
  return out;
}

/// The state names of `all` ("running", "terminated", ...).
inline std::multiset<std::string> states_of(const std::vector<nlohmann::json>& all) {
  std::multiset<std::string> out;
  for (const nlohmann::json& i : all) out.insert(i["State"]["Name"].get<std::string>());
  return out;
}

/// `n` times `value`.
inline std::multiset<std::string> repeated(std::size_t n, const std::string& value) {
  std::multiset<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.insert(value);
  return out;
}

inline std::set<std::string> instance_ids(const std::vector<nlohmann::json>& all) {
  std::set<std::string> out;
  for (const nlohmann::json& i : all) out.insert(i["InstanceId"].get<std::string>());
  return out;
}

}  // namespace spotdnn::test
