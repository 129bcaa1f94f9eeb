// SPDX-License-Identifier: MIT
// What moto 5.2 (moto_server) and the real aws CLI do that the launcher tests rely on, checked through the
// CLI against a fresh moto on 127.0.0.1: if moto or the CLI changes, these cases say so first. Each case
// prints "skipped: <why>" (and ctest reports it skipped) when moto_server or an aws CLI is missing.

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/moto_server.hpp"

using nlohmann::json;
using spotdnn::test::AwsCli;
using spotdnn::test::AwsTestEnv;
using spotdnn::test::ProcessResult;
using spotdnn::test::MotoServer;

namespace {

/// Returns from the test case with "skipped: <why>" when moto or the aws CLI is missing.
#define SKIP_WITHOUT_MOTO()                                    \
  if (const auto why = MotoServer::unavailable_reason()) {     \
    MESSAGE("skipped: " << *why);                              \
    return;                                                    \
  }

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = std::string(SPOTDNN_TEST_BINARY_DIR) + "/moto-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// A fresh moto and the aws CLI environment against it.
struct Moto {
  ScratchDir dir;
  MotoServer server{dir.path()};
  AwsTestEnv env = spotdnn::test::aws_test_env(server.url());

  json aws(const std::vector<std::string>& args) const { return spotdnn::test::aws_json(env, args); }
  ProcessResult aws_raw(const std::vector<std::string>& args) const { return spotdnn::test::aws_run(env, args); }

  /// Every instance of a describe-instances answer, flattened.
  std::vector<json> instances(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"ec2", "describe-instances"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<json> out;
    const json answer = aws(args);
    for (const json& reservation : answer["Reservations"]) {
      for (const json& instance : reservation["Instances"]) out.push_back(instance);
    }
    return out;
  }
  json instance(const std::string& id) const {
    std::vector<json> found = instances({"--instance-ids", id});
    REQUIRE(found.size() == 1);
    return found.front();
  }
};

const std::string kUbuntuAmi = "ami-1e749f67";  // built into moto (ubuntu-trusty-14.04, us-east-1)
const std::string kSpotMarket =
    R"({"MarketType":"spot","SpotOptions":{"SpotInstanceType":"one-time","InstanceInterruptionBehavior":"terminate"}})";
const std::string kRun = "20261124-101010-abcdef";

std::map<std::string, std::string> tags_of(const json& resource) {
  std::map<std::string, std::string> tags;
  for (const json& tag : resource.value("Tags", json::array())) tags[tag["Key"]] = tag["Value"];
  return tags;
}

std::set<std::string> ids_of(const std::vector<json>& instances) {
  std::set<std::string> ids;
  for (const json& i : instances) ids.insert(i["InstanceId"].get<std::string>());
  return ids;
}

std::string run_one(const Moto& m, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"ec2", "run-instances", "--image-id", kUbuntuAmi, "--instance-type", "p3.2xlarge"};
  args.insert(args.end(), extra.begin(), extra.end());
  const json out = m.aws(args);
  REQUIRE(out["Instances"].size() == 1);
  return out["Instances"][0]["InstanceId"];
}

}  // namespace

TEST_CASE("moto fixture: starts moto on loopback - records requests - resets - stops it (j)") {
  SKIP_WITHOUT_MOTO();
  pid_t pid = -1;
  {
    Moto m;
    pid = m.server.pid();
    MESSAGE("moto_server " << MotoServer::program() << " at " << m.server.url() << " answered after "
                           << m.server.startup_seconds() << " s, RSS " << m.server.rss_kib() / 1024 << " MiB; aws CLI "
                           << m.env.cli.path << " " << m.env.cli.version);
    CHECK(m.server.url().rfind("http://127.0.0.1:", 0) == 0);
    CHECK(m.server.startup_seconds() < 60);
    CHECK(m.server.http("GET", "/moto-api/").status == 200);

    m.server.start_recording();
    const json vpcs = m.aws({"ec2", "describe-vpcs", "--filters", "Name=is-default,Values=true"});
    REQUIRE(vpcs["Vpcs"].size() == 1);
    const std::string default_vpc = vpcs["Vpcs"][0]["VpcId"];
    const std::vector<json> calls = m.server.recording();
    REQUIRE(calls.size() == 1);
    CHECK(calls[0]["Action"] == "DescribeVpcs");
    CHECK(calls[0]["method"] == "POST");
    CHECK(calls[0]["params"]["Filter.1.Name"] == "is-default");
    CHECK(calls[0]["params"]["Filter.1.Value.1"] == "true");
    m.server.stop_recording();
    m.aws({"ec2", "describe-vpcs"});
    CHECK(m.server.recording().size() == 1);  // stopped

    // reset: a new default VPC (new IDs); the recording stays.
    m.server.reset();
    const json after = m.aws({"ec2", "describe-vpcs", "--filters", "Name=is-default,Values=true"});
    REQUIRE(after["Vpcs"].size() == 1);
    CHECK(after["Vpcs"][0]["VpcId"] != default_vpc);
    CHECK(m.server.recording().size() == 1);
    MESSAGE("RSS after a few calls: " << m.server.rss_kib() / 1024 << " MiB");
  }
  CHECK(::kill(pid, 0) == -1);
  CHECK(errno == ESRCH);
}

TEST_CASE("moto: run-instances with spot market options gives InstanceLifecycle spot and no spot request (a)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  m.server.start_recording();
  const std::string on_demand = run_one(m, {});
  const std::string spot = run_one(m, {"--instance-market-options", kSpotMarket});

  const json od = m.instance(on_demand);
  CHECK_FALSE(od.contains("InstanceLifecycle"));
  CHECK_FALSE(od.contains("SpotInstanceRequestId"));
  const json sp = m.instance(spot);
  CHECK(sp.value("InstanceLifecycle", "") == "spot");
  CHECK_FALSE(sp.contains("SpotInstanceRequestId"));  // moto makes no spot request for run-instances
  CHECK(m.aws({"ec2", "describe-spot-instance-requests"})["SpotInstanceRequests"].empty());
  // The instance-lifecycle filter is not implemented (HTTP 500, NotImplementedError in the log).
  const ProcessResult lifecycle = m.aws_raw({"ec2", "describe-instances", "--filters", "Name=instance-lifecycle,Values=spot"});
  CHECK(lifecycle.exit_code != 0);
  CHECK(m.server.log().find("Filter dicts have not been implemented in Moto for 'instance-lifecycle' yet") !=
        std::string::npos);

  const std::vector<json> runs = m.server.recorded_calls("RunInstances");
  REQUIRE(runs.size() == 2);
  CHECK_FALSE(runs[0]["params"].contains("InstanceMarketOptions.MarketType"));
  const json& p = runs[1]["params"];
  CHECK(p["InstanceMarketOptions.MarketType"] == "spot");
  CHECK(p["InstanceMarketOptions.SpotOptions.SpotInstanceType"] == "one-time");
  CHECK(p["InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior"] == "terminate");
  CHECK(p["MinCount"] == "1");
  CHECK(p["MaxCount"] == "1");
}

TEST_CASE("moto: tag specifications - tag filters match exactly with star and question mark as wildcards (b)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  const std::string specs = R"([{"ResourceType":"instance","Tags":[{"Key":"spotdnn:run","Value":")" + kRun +
                            R"("},{"Key":"spotdnn:role","Value":"worker"}]},)"
                            R"({"ResourceType":"spot-instances-request","Tags":[{"Key":"spotdnn:run","Value":")" +
                            kRun + R"("}]}])";
  const json out = m.aws({"ec2", "run-instances", "--image-id", kUbuntuAmi, "--instance-type", "p3.2xlarge", "--count", "2",
                          "--instance-market-options", kSpotMarket, "--tag-specifications", specs});
  REQUIRE(out["Instances"].size() == 2);
  for (const json& i : out["Instances"]) {
    CHECK(tags_of(i) == std::map<std::string, std::string>{{"spotdnn:run", kRun}, {"spotdnn:role", "worker"}});
  }
  const std::set<std::string> workers = ids_of(out["Instances"].get<std::vector<json>>());
  const std::string other = run_one(
      m, {"--tag-specifications",
          R"([{"ResourceType":"instance","Tags":[{"Key":"spotdnn:run","Value":"20261124-101010-abcdeX"}]}])"});
  std::set<std::string> all = workers;
  all.insert(other);

  const auto with_run = [&](const std::string& value) {
    return ids_of(m.instances({"--filters", "Name=tag:spotdnn:run,Values=" + value,
                               "Name=instance-state-name,Values=pending,running"}));
  };
  CHECK(with_run(kRun) == workers);                          // exact, key with a colon, shorthand
  CHECK(with_run(kRun.substr(0, kRun.size() - 1)).empty());  // no prefix match
  CHECK(with_run("2026*") == all);                           // * is a wildcard
  CHECK(with_run("20261124-101010-abcde?") == all);          // ? is a wildcard
  CHECK(with_run("20261124-101010-abcde\\?").empty());       // \? is a literal ?
  // The JSON form of --filters.
  CHECK(ids_of(m.instances({"--filters", R"([{"Name":"tag:spotdnn:run","Values":[")" + kRun +
                                             R"("]},{"Name":"instance-state-name","Values":["pending","running"]}])"})) ==
        workers);
  // Tag specifications for spot-instances-request are accepted, but run-instances makes no request.
  CHECK(m.aws({"ec2", "describe-spot-instance-requests"})["SpotInstanceRequests"].empty());
}

TEST_CASE("moto: any AMI ID is accepted - default VPC and subnets and security group exist (c)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  // Built-in AMIs (about 1,200 in us-east-1); any well-formed ID runs anyway (MOTO_ENABLE_AMI_VALIDATION off).
  const json ubuntu = m.aws({"ec2", "describe-images", "--filters", "Name=name,Values=ubuntu/images/*"});
  std::set<std::string> ubuntu_ids;
  for (const json& image : ubuntu["Images"]) ubuntu_ids.insert(image["ImageId"].get<std::string>());
  CHECK(ubuntu_ids.count(kUbuntuAmi) == 1);
  CHECK(m.instance(run_one(m, {}))["ImageId"] == kUbuntuAmi);
  const json unknown = m.aws({"ec2", "run-instances", "--image-id", "ami-0123456789abcdef0", "--instance-type", "c5.xlarge"});
  CHECK(unknown["Instances"][0]["ImageId"] == "ami-0123456789abcdef0");
  CHECK(m.aws({"ec2", "describe-images", "--image-ids", kUbuntuAmi})["Images"].size() == 1);

  // The default VPC 172.31.0.0/16, a default subnet per zone (us-east-1a..f), its "default" group.
  const json vpcs = m.aws({"ec2", "describe-vpcs", "--filters", "Name=is-default,Values=true"});
  REQUIRE(vpcs["Vpcs"].size() == 1);
  CHECK(vpcs["Vpcs"][0]["CidrBlock"] == "172.31.0.0/16");
  const std::string default_vpc = vpcs["Vpcs"][0]["VpcId"];
  const json subnets = m.aws({"ec2", "describe-subnets", "--filters", "Name=default-for-az,Values=true"});
  CHECK(subnets["Subnets"].size() == 6);
  const json groups = m.aws({"ec2", "describe-security-groups", "--filters", "Name=group-name,Values=default"});
  REQUIRE(groups["SecurityGroups"].size() == 1);
  CHECK(groups["SecurityGroups"][0]["VpcId"] == default_vpc);
  const json plain = m.instance(run_one(m, {}));
  CHECK(plain["VpcId"] == default_vpc);  // no subnet given: a default subnet

  // IDs that do not exist are refused.
  const ProcessResult bad_subnet = m.aws_raw({"ec2", "run-instances", "--image-id", kUbuntuAmi, "--subnet-id",
                                              "subnet-0123456789abcdef0"});
  CHECK(bad_subnet.exit_code != 0);
  CHECK(bad_subnet.err.find("InvalidSubnetID.NotFound") != std::string::npos);
  const ProcessResult bad_group = m.aws_raw({"ec2", "run-instances", "--image-id", kUbuntuAmi, "--security-group-ids",
                                             "sg-0123456789abcdef0"});
  CHECK(bad_group.exit_code != 0);
  CHECK(bad_group.err.find("InvalidGroup.NotFound") != std::string::npos);

  // Minimal setup of a VPC, subnet and group of our own.
  const std::string vpc = m.aws({"ec2", "create-vpc", "--cidr-block", "10.42.0.0/16"})["Vpc"]["VpcId"];
  const std::string subnet = m.aws({"ec2", "create-subnet", "--vpc-id", vpc, "--cidr-block", "10.42.1.0/24",
                                    "--availability-zone", "us-east-1b"})["Subnet"]["SubnetId"];
  const std::string group = m.aws({"ec2", "create-security-group", "--group-name", "spotdnn-test", "--description",
                                   "spotdnn test", "--vpc-id", vpc})["GroupId"];
  const json mine = m.instance(run_one(m, {"--subnet-id", subnet, "--security-group-ids", group}));
  CHECK(mine["SubnetId"] == subnet);
  CHECK(mine["VpcId"] == vpc);
  CHECK(mine["Placement"]["AvailabilityZone"] == "us-east-1b");
  CHECK(mine["SecurityGroups"][0]["GroupId"] == group);
  CHECK(mine["PrivateIpAddress"].get<std::string>().rfind("10.42.1.", 0) == 0);
}

TEST_CASE("moto: private IPs at once - pending then running - terminate gives shutting-down then terminated (d)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  const json out = m.aws({"ec2", "run-instances", "--image-id", kUbuntuAmi, "--instance-type", "c5.xlarge"});
  const json& launched = out["Instances"][0];
  const std::string id = launched["InstanceId"];
  CHECK(launched["State"]["Name"] == "pending");
  CHECK_FALSE(launched.value("PrivateIpAddress", "").empty());
  const json described = m.instance(id);
  CHECK(described["State"]["Name"] == "running");  // already on the first describe
  CHECK(described["PrivateIpAddress"] == launched["PrivateIpAddress"]);

  const auto started = std::chrono::steady_clock::now();
  const ProcessResult wait = m.aws_raw({"ec2", "wait", "instance-running", "--instance-ids", id});
  CHECK(wait.exit_code == 0);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));

  const json terminated = m.aws({"ec2", "terminate-instances", "--instance-ids", id});
  CHECK(terminated["TerminatingInstances"][0]["PreviousState"]["Name"] == "running");
  CHECK(terminated["TerminatingInstances"][0]["CurrentState"]["Name"] == "shutting-down");
  CHECK(m.instance(id)["State"]["Name"] == "terminated");
  CHECK(m.aws_raw({"ec2", "wait", "instance-terminated", "--instance-ids", id}).exit_code == 0);
  CHECK(m.instances({"--filters", "Name=instance-state-name,Values=pending,running"}).empty());
}

TEST_CASE("moto: no placement groups - launch templates - instant fleets carry the template tags (e)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  // create-placement-group is not implemented (HTTP 500; the CLI retries, then exits 255), and
  // --placement GroupName is ignored.
  const ProcessResult pg = m.aws_raw({"ec2", "create-placement-group", "--group-name", "spotdnn-pg", "--strategy", "cluster"});
  CHECK(pg.exit_code != 0);
  CHECK(m.server.log().find("The create_placement_group action has not been implemented") != std::string::npos);
  CHECK(m.instance(run_one(m, {"--placement", "GroupName=no-such-group"}))["Placement"].value("GroupName", "") == "");

  m.aws({"iam", "create-instance-profile", "--instance-profile-name", "spotdnn-training"});
  const std::string subnet = m.aws({"ec2", "describe-subnets", "--filters", "Name=availability-zone,Values=us-east-1c"})
                                 ["Subnets"][0]["SubnetId"];
  const json worker_tags = json::array({{{"Key", "spotdnn:run"}, {"Value", kRun}}, {{"Key", "spotdnn:role"}, {"Value", "worker"}}});
  json data = {{"ImageId", kUbuntuAmi},
               {"InstanceType", "p3.2xlarge"},
               {"KeyName", "spotdnn-key"},
               {"IamInstanceProfile", {{"Name", "spotdnn-training"}}},
               {"UserData", "IyEvYmluL2Jhc2gKZWNobyBoaQo="},
               {"MetadataOptions", {{"HttpTokens", "required"}, {"HttpEndpoint", "enabled"}, {"InstanceMetadataTags", "enabled"}}},
               {"TagSpecifications", json::array({{{"ResourceType", "instance"}, {"Tags", worker_tags}},
                                                  {{"ResourceType", "volume"}, {"Tags", worker_tags}}})}};
  const std::string name = "spotdnn-" + kRun + "-p3.2xlarge";
  const json created = m.aws({"ec2", "create-launch-template", "--launch-template-name", name, "--launch-template-data",
                              data.dump(), "--tag-specifications",
                              R"([{"ResourceType":"launch-template","Tags":[{"Key":"spotdnn:run","Value":")" + kRun + R"("}]}])"});
  CHECK(created["LaunchTemplate"]["LaunchTemplateName"] == name);
  CHECK(tags_of(created["LaunchTemplate"]) == std::map<std::string, std::string>{{"spotdnn:run", kRun}});
  const json version = m.aws({"ec2", "describe-launch-template-versions", "--launch-template-name", name})
                           ["LaunchTemplateVersions"][0]["LaunchTemplateData"];
  CHECK(version["MetadataOptions"]["HttpTokens"] == "required");
  CHECK(version["UserData"] == data["UserData"]);

  json fleet = {{"Type", "instant"},
                {"LaunchTemplateConfigs",
                 json::array({{{"LaunchTemplateSpecification", {{"LaunchTemplateName", name}, {"Version", "$Latest"}}},
                               {"Overrides", json::array({{{"InstanceType", "p3.2xlarge"}, {"SubnetId", subnet}}})}}})},
                {"TargetCapacitySpecification",
                 {{"TotalTargetCapacity", 3}, {"SpotTargetCapacity", 3}, {"OnDemandTargetCapacity", 0},
                  {"DefaultTargetCapacityType", "spot"}}},
                {"SpotOptions",
                 {{"AllocationStrategy", "capacity-optimized"}, {"InstanceInterruptionBehavior", "terminate"},
                  {"SingleInstanceType", true}, {"SingleAvailabilityZone", true}, {"MinTargetCapacity", 3}}},
                {"TagSpecifications", json::array({{{"ResourceType", "fleet"}, {"Tags", json::array({{{"Key", "spotdnn:run"}, {"Value", kRun}}})}}})}};
  const std::filesystem::path request = m.dir.path() / "fleet.json";
  std::ofstream(request) << fleet.dump();
  const json answer = m.aws({"ec2", "create-fleet", "--cli-input-json", "file://" + request.string()});
  CHECK(answer["FleetId"].get<std::string>().rfind("fleet-", 0) == 0);
  CHECK(answer.value("Errors", json::array()).empty());
  std::vector<std::string> ids;
  for (const json& entry : answer["Instances"]) {
    CHECK(entry["Lifecycle"] == "spot");
    CHECK(entry["InstanceType"] == "p3.2xlarge");
    for (const json& id : entry["InstanceIds"]) ids.push_back(id);
  }
  REQUIRE(ids.size() == 3);  // (one Instances entry per instance)
  for (const std::string& id : ids) {
    const json i = m.instance(id);
    CHECK(tags_of(i) == std::map<std::string, std::string>{{"spotdnn:run", kRun}, {"spotdnn:role", "worker"}});
    CHECK(i["SubnetId"] == subnet);
    CHECK(i.value("InstanceLifecycle", "") == "spot");
    CHECK(i["KeyName"] == "spotdnn-key");
    CHECK(m.aws({"ec2", "describe-instance-attribute", "--instance-id", id, "--attribute", "userData"})["UserData"]["Value"] ==
          data["UserData"]);
    // Not applied by moto 5.2: the template's instance profile and metadata options.
    CHECK_FALSE(i.contains("IamInstanceProfile"));
    CHECK(i["MetadataOptions"]["HttpTokens"] == "optional");
  }
  CHECK(ids_of(m.instances({"--filters", "Name=tag:spotdnn:run,Values=" + kRun})).size() == 3);
  // The fleet made one (persistent, active) spot request per instance.
  CHECK(m.aws({"ec2", "describe-spot-instance-requests"})["SpotInstanceRequests"].size() == 3);
}

TEST_CASE("moto: create-tags and a --query picking a tag by key in text output (f)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  const std::string ps = run_one(m, {});
  const std::string worker = run_one(m, {});
  CHECK(m.aws_raw({"ec2", "create-tags", "--resources", ps, "--tags", "Key=spotdnn:role,Value=ps",
                   "Key=spotdnn:run,Value=" + kRun})
            .exit_code == 0);
  CHECK(m.aws_raw({"ec2", "create-tags", "--resources", worker, "--tags",
                   R"([{"Key":"spotdnn:role","Value":"worker"},{"Key":"spotdnn:run","Value":")" + kRun + R"("},)"
                   R"j({"Key":"odd key","Value":"it's \"q\" $(x)"}])j"})
            .exit_code == 0);
  const ProcessResult text = m.aws_raw({"ec2", "describe-instances", "--filters", "Name=tag:spotdnn:run,Values=" + kRun,
                                        "--query",
                                        "Reservations[].Instances[].[InstanceId,PrivateIpAddress,Tags[?Key==`spotdnn:role`]|[0].Value]",
                                        "--output", "text"});  // the later --output wins
  REQUIRE(text.exit_code == 0);
  const std::string ps_ip = m.instance(ps)["PrivateIpAddress"];
  const std::string worker_ip = m.instance(worker)["PrivateIpAddress"];
  CHECK(text.out.find(ps + "\t" + ps_ip + "\tps\n") != std::string::npos);
  CHECK(text.out.find(worker + "\t" + worker_ip + "\tworker\n") != std::string::npos);
  CHECK(tags_of(m.instance(worker))["odd key"] == "it's \"q\" $(x)");
}

TEST_CASE("aws CLI and moto: s3 mb - s3 sync --exclude - s3api list-objects-v2 (g)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  const std::filesystem::path ckpt = m.dir.path() / "ckpt";
  std::filesystem::create_directories(ckpt / "sub");
  for (const char* file : {"model.pt", ".ckpt-tmp", "sub/x", "sub/.ckpt-part", "a.ckpt-b"}) std::ofstream(ckpt / file) << "x";
  CHECK(m.aws_raw({"s3", "mb", "s3://spotdnn-bucket"}).exit_code == 0);
  const auto keys = [&](const std::string& prefix) {
    std::set<std::string> out;
    const json listed = m.aws({"s3api", "list-objects-v2", "--bucket", "spotdnn-bucket", "--prefix", prefix});
    for (const json& o : listed.value("Contents", json::array())) out.insert(o["Key"].get<std::string>());
    return out;
  };
  // --exclude '.ckpt-*' matches paths relative to the synced directory: only top-level .ckpt-* files.
  CHECK(m.aws_raw({"s3", "sync", ckpt.string(), "s3://spotdnn-bucket/checkpoints/run 1", "--exclude", ".ckpt-*"}).exit_code == 0);
  CHECK(keys("checkpoints/run 1/") == std::set<std::string>{"checkpoints/run 1/a.ckpt-b", "checkpoints/run 1/model.pt",
                                                             "checkpoints/run 1/sub/.ckpt-part", "checkpoints/run 1/sub/x"});
  // ... and '*/.ckpt-*' as well leaves them out at every depth.
  CHECK(m.aws_raw({"s3", "sync", ckpt.string(), "s3://spotdnn-bucket/deep", "--exclude", ".ckpt-*", "--exclude", "*/.ckpt-*"})
            .exit_code == 0);
  CHECK(keys("deep/") == std::set<std::string>{"deep/a.ckpt-b", "deep/model.pt", "deep/sub/x"});
}

TEST_CASE("aws CLI: AWS_ENDPOINT_URL alone reaches moto from CLI 1.29 and 2.13 on but not before (h)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  for (const AwsCli& cli : spotdnn::test::aws_cli_candidates()) {
    const AwsTestEnv env = spotdnn::test::aws_test_env(m.server.url(), cli);
    ProcessResult r = spotdnn::test::moto_detail::run_process({cli.path, "ec2", "describe-vpcs", "--output", "json"},
                                                              &env.variables);
    MESSAGE(cli.path << " " << cli.version << ": exit " << r.exit_code << " "
                     << spotdnn::test::moto_detail::tail(r.err, 1));
    if (cli.honours_endpoint_env()) {
      CHECK(r.exit_code == 0);
      CHECK(json::parse(r.out)["Vpcs"].size() == 1);
    } else {
      CHECK(r.exit_code != 0);
      CHECK(r.err.find("proxy") != std::string::npos);  // went for AWS itself; the proxy guard refused
    }
    // Through a shell with the prefix: `aws` on PATH is this CLI.
    const ProcessResult shell = spotdnn::test::moto_detail::run_process(
        {"/bin/sh", "-c", env.prefix() + " aws --endpoint-url " + m.server.url() + " --version"}, nullptr);
    CHECK((shell.out + shell.err).find("aws-cli/" + cli.version) != std::string::npos);
  }
}

TEST_CASE("moto: instance profiles must exist but key pairs and instance types are not checked (i)") {
  SKIP_WITHOUT_MOTO();
  Moto m;
  const ProcessResult profile =
      m.aws_raw({"ec2", "run-instances", "--image-id", kUbuntuAmi, "--iam-instance-profile", "Name=spotdnn-training"});
  CHECK(profile.exit_code != 0);
  CHECK(profile.err.find("NoSuchEntity") != std::string::npos);
  m.aws({"iam", "create-instance-profile", "--instance-profile-name", "spotdnn-training"});
  const json with_profile = m.instance(run_one(m, {"--iam-instance-profile", "Name=spotdnn-training"}));
  CHECK(with_profile["IamInstanceProfile"]["Arn"] == "arn:aws:iam::123456789012:instance-profile/spotdnn-training");

  const json keyed = m.instance(run_one(m, {"--key-name", "team's \"key\""}));
  CHECK(keyed["KeyName"] == "team's \"key\"");
  const json odd_type = m.aws({"ec2", "run-instances", "--image-id", kUbuntuAmi, "--instance-type", "zz9.huge"});
  CHECK(odd_type["Instances"][0]["InstanceType"] == "zz9.huge");
}
