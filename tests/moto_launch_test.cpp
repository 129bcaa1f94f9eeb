// SPDX-License-Identifier: MIT
// The emitted launch, join, status and teardown scripts and the user data, run with bash and the real aws
// CLI against moto_server (each case its own): what EC2 ends up holding (instances, markets, tags, user
// data, metadata options), run isolation, joins, EC2 Fleet, clean-up after a failure, and the user data
// discovering its run and syncing checkpoints to S3 on a revocation notice (with tests/support/fake_imds.py).
// Each case prints "skipped: <why>" (ctest reports it skipped) when moto_server or an aws CLI is missing.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/moto_launch.hpp"

using namespace spotdnn;
using nlohmann::json;
using test::MotoCloud;
using test::ProcessResult;

namespace {

const std::regex kRunIdPattern("^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$");

const launcher::InstanceRole kPsRole{"ps", "m5.xlarge", Market::on_demand};
const launcher::InstanceRole kP3Role{"worker", "p3.2xlarge", Market::spot};
const launcher::InstanceRole kG3Role{"worker", "g3.8xlarge", Market::on_demand};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Runs the launch script of `plan` in `cloud`; checks exit 0 and the `spotdnn run: ID` line; returns ID.
std::string launch(const MotoCloud& cloud, const launcher::LaunchPlan& plan, const launcher::AwsConfig& config,
                   const launcher::LaunchOptions& options = {}, const std::vector<std::string>& extra = {}) {
  const ProcessResult r = cloud.run_script("launch.sh", launcher::launch_script(plan, config, options), "", extra);
  INFO("launch stderr: ", r.err);
  REQUIRE(r.exit_code == 0);
  const std::string id = test::run_id_of(r.out);
  CAPTURE(r.out);
  REQUIRE(std::regex_match(id, kRunIdPattern));
  return id;
}

/// The PS, p3.2xlarge and g3.8xlarge instances of a run of moto_plan(), each sorted by instance ID.
struct RunInstances {
  json ps;
  std::vector<json> p3, g3;
};

RunInstances split_run(const std::vector<json>& all) {
  RunInstances out;
  for (const json& i : all) {
    const std::string type = i["InstanceType"];
    if (type == "m5.xlarge") {
      CHECK(out.ps.is_null());
      out.ps = i;
    } else if (type == "p3.2xlarge") {
      out.p3.push_back(i);
    } else if (type == "g3.8xlarge") {
      out.g3.push_back(i);
    } else {
      FAIL_CHECK("unexpected instance type " << type);
    }
  }
  REQUIRE(out.ps.is_object());
  return out;
}

/// One row of the status table.
struct StatusRow {
  std::string rank, role, id, type, market, state, ip, revoked;
};

/// Rows as text, one line each (what the CHECKs compare, so a difference shows).
std::string text_of(const std::vector<StatusRow>& rows) {
  std::string out;
  for (const StatusRow& r : rows) {
    out += r.rank + " " + r.role + " " + r.id + " " + r.type + " " + r.market + " " + r.state + " " + r.ip + " " + r.revoked + "\n";
  }
  return out;
}

/// The rows of a status script's table (between the header line and the summary line).
std::vector<StatusRow> status_rows(const std::string& out) {
  std::vector<StatusRow> rows;
  std::istringstream in(out);
  std::string line;
  std::getline(in, line);
  CHECK(line.rfind("RANK", 0) == 0);
  while (std::getline(in, line)) {
    if (line.rfind("spotdnn run ", 0) == 0) break;
    std::istringstream fields(line);
    StatusRow r;
    fields >> r.rank >> r.role >> r.id >> r.type >> r.market >> r.state >> r.ip >> r.revoked;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("moto launch: PS on-demand, spot and on-demand groups, tags, IMDSv2, cluster spec and user data as EC2 holds them") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  launcher::AwsConfig config = cloud.config();
  config.iam_instance_profile = "spotdnn-training";
  cloud.aws({"iam", "create-instance-profile", "--instance-profile-name", "spotdnn-training"});
  const launcher::LaunchPlan plan = test::moto_plan();
  cloud.server().start_recording();
  const std::string spec_path = cloud.dir() / "spec.json";
  const std::string run = launch(cloud, plan, config, {}, {"SPOTDNN_CLUSTER_SPEC=" + spec_path});

  const std::vector<json> all = cloud.instances();
  CHECK(all.size() == 4);
  const RunInstances r = split_run(all);
  REQUIRE(r.p3.size() == 2);
  REQUIRE(r.g3.size() == 1);
  CHECK_FALSE(r.ps.contains("InstanceLifecycle"));
  for (const json& i : r.p3) CHECK(i.value("InstanceLifecycle", "") == "spot");
  CHECK_FALSE(r.g3[0].contains("InstanceLifecycle"));

  const std::string ps_ip = r.ps["PrivateIpAddress"];
  const auto check_instance = [&](const json& i, const launcher::InstanceRole& who, const std::string& base) {
    const std::string id = i["InstanceId"];
    CAPTURE(id);
    CAPTURE(who.type);
    std::map<std::string, std::string> expected(config.tags.begin(), config.tags.end());
    expected["spotdnn:run"] = run;
    expected["spotdnn:rank-base"] = base;
    expected["spotdnn:role"] = who.role;
    expected["spotdnn:instance-type"] = who.type;
    expected["spotdnn:market"] = std::string(to_string(who.market));
    CHECK(test::tags_of_resource(i) == expected);
    CHECK(i["State"]["Name"] == "running");
    CHECK(i["ImageId"] == config.image_for(who.type));
    CHECK(i["SubnetId"] == cloud.subnet_id());
    CHECK(i["SecurityGroups"][0]["GroupId"] == cloud.security_group_id());
    CHECK(i["KeyName"] == config.key_name);
    CHECK(i["MetadataOptions"]["HttpTokens"] == "required");
    CHECK(i["MetadataOptions"]["HttpEndpoint"] == "enabled");
    CHECK(i["MetadataOptions"]["HttpPutResponseHopLimit"] == config.metadata_hop_limit);
    const int gpus = who.role == "ps" ? 0 : who.type == "p3.2xlarge" ? 1 : 2;
    CHECK(cloud.user_data_of(id) == launcher::user_data(config, who, gpus, {run, ps_ip, "4", base}));
  };
  check_instance(r.ps, kPsRole, "0");
  for (const json& i : r.p3) check_instance(i, kP3Role, "1");
  check_instance(r.g3[0], kG3Role, "3");

  // Only the spot group's RunInstances asks for a one-time spot instance terminated on interruption.
  const std::vector<json> runs = cloud.server().recorded_calls("RunInstances");
  REQUIRE(runs.size() == 3);
  std::map<std::string, json> by_type;
  for (const json& call : runs) by_type[call["params"]["InstanceType"].get<std::string>()] = call["params"];
  REQUIRE(by_type.size() == 3);
  for (const char* type : {"m5.xlarge", "g3.8xlarge"}) {
    CAPTURE(type);
    CHECK_FALSE(by_type[type].contains("InstanceMarketOptions.MarketType"));
  }
  const json& spot = by_type["p3.2xlarge"];
  CHECK(spot["InstanceMarketOptions.MarketType"] == "spot");
  CHECK(spot["InstanceMarketOptions.SpotOptions.SpotInstanceType"] == "one-time");
  CHECK(spot["InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior"] == "terminate");
  CHECK(spot["MinCount"] == "2");
  CHECK(spot["MaxCount"] == "2");
  CHECK(spot["MetadataOptions.HttpTokens"] == "required");
  // The instance profile goes with every RunInstances (moto 5.2 associates it with the first instance of
  // each call only).
  for (const json& call : runs) CHECK(call["params"]["IamInstanceProfile.Name"] == "spotdnn-training");
  CHECK(r.ps.value("/IamInstanceProfile/Arn"_json_pointer, "") == "arn:aws:iam::123456789012:instance-profile/spotdnn-training");
  CHECK(cloud.server().recorded_calls("CreateFleet").empty());

  // The cluster spec: ranks 0..3 in rank-base then instance-ID order, with the addresses EC2 gave.
  const json spec = json::parse(test::read_text(spec_path));
  CHECK(spec["run_id"] == run);
  CHECK(spec["region"] == "us-east-1");
  REQUIRE(spec["instances"].size() == 4);
  const std::vector<std::pair<json, std::string>> in_rank_order = {
      {r.ps, "ps"}, {r.p3[0], "worker"}, {r.p3[1], "worker"}, {r.g3[0], "worker"}};
  for (std::size_t k = 0; k < in_rank_order.size(); ++k) {
    const json& entry = spec["instances"][k];
    const json& instance = in_rank_order[k].first;
    CAPTURE(entry);
    CHECK(entry["rank"] == k);
    CHECK(entry["role"] == in_rank_order[k].second);
    CHECK(entry["instance_id"] == instance["InstanceId"]);
    CHECK(entry["type"] == instance["InstanceType"]);
    CHECK(entry["market"] == (instance["InstanceType"] == "p3.2xlarge" ? "spot" : "on-demand"));
    CHECK(entry["private_ip"] == instance["PrivateIpAddress"]);
    CHECK(entry["private_ip"].get<std::string>().rfind("10.42.1.", 0) == 0);
  }
}

TEST_CASE("moto runs side by side: two launches of one script get their own ids - status and teardown touch only their run") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const launcher::AwsConfig config = cloud.config();
  const launcher::LaunchPlan plan = test::moto_plan();
  const std::string a = launch(cloud, plan, config);
  const std::string b = launch(cloud, plan, config);
  CHECK(a != b);
  // Without SPOTDNN_CLUSTER_SPEC each run writes ./spotdnn-run-ID.json.
  for (const std::string& run : {a, b}) {
    CAPTURE(run);
    const std::string spec_path = cloud.dir() / ("spotdnn-run-" + run + ".json");
    REQUIRE(std::filesystem::exists(spec_path));
    const json spec = json::parse(test::read_text(spec_path));
    CHECK(spec["run_id"] == run);
    CHECK(spec["instances"].size() == 4);
  }
  const std::set<std::string> ids_a = test::instance_ids(cloud.run_instances(a));
  const std::set<std::string> ids_b = test::instance_ids(cloud.run_instances(b));
  CHECK(ids_a.size() == 4);
  CHECK(ids_b.size() == 4);
  CHECK(cloud.instances().size() == 8);

  for (const std::pair<std::string, std::set<std::string>>& entry : {std::make_pair(a, ids_a), std::make_pair(b, ids_b)}) {
    const std::string& run = entry.first;
    const std::set<std::string>& ids = entry.second;
    CAPTURE(run);
    const ProcessResult status = cloud.run_script("status.sh", launcher::status_script(run, config));
    INFO("status stderr: ", status.err);
    REQUIRE(status.exit_code == 0);
    const std::vector<StatusRow> rows = status_rows(status.out);
    std::set<std::string> listed;
    for (const StatusRow& row : rows) {
      listed.insert(row.id);
      CHECK(row.state == "running");
    }
    CHECK(rows.size() == 4);
    CHECK(listed == ids);
    CHECK(contains(status.out, "spotdnn run " + run + ": 4 instances (4 running)\n"));
  }

  const ProcessResult down = cloud.run_script("teardown.sh", launcher::teardown_script(a, config));
  INFO("teardown stderr: ", down.err);
  REQUIRE(down.exit_code == 0);
  CHECK(down.out == "spotdnn run " + a + ": terminated 4 instances\n");
  CHECK(test::states_of(cloud.run_instances(a)) == test::repeated(4, "terminated"));
  const std::vector<json> still = cloud.run_instances(b);
  CHECK(test::instance_ids(still) == ids_b);
  CHECK(test::states_of(still) == test::repeated(4, "running"));

  const ProcessResult again = cloud.run_script("teardown.sh", launcher::teardown_script(a, config));
  CHECK(again.exit_code == 3);
  CHECK(contains(again.err, "no instances of run " + a + " to terminate; nothing terminated"));
  CHECK(again.out.empty());
  CHECK(test::states_of(cloud.run_instances(b)) == test::repeated(4, "running"));

  // Terminated instances still show in the status while EC2 lists them.
  const ProcessResult gone = cloud.run_script("status.sh", launcher::status_script(a, config));
  CHECK(gone.exit_code == 0);
  CHECK(contains(gone.out, "spotdnn run " + a + ": 4 instances (4 terminated)\n"));

  const std::string unknown = "20000101-000000-000000";
  const ProcessResult none = cloud.run_script("status.sh", launcher::status_script(unknown, config));
  CHECK(none.exit_code == 3);
  CHECK(contains(none.err, "no instances for run " + unknown));
  CHECK(none.out.empty());
}

TEST_CASE("moto join: the replan's additions join the run's PS with rank bases above the run - an unknown run launches nothing") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const launcher::AwsConfig config = cloud.config();
  const std::string a = launch(cloud, test::moto_plan(), config);
  const std::string b = launch(cloud, test::moto_plan(), config);
  const std::vector<json> before_a = cloud.run_instances(a);
  const std::vector<json> before_b = cloud.run_instances(b);
  const std::string ps_ip = split_run(before_a).ps["PrivateIpAddress"];

  cloud.server().start_recording();
  const ProcessResult join = cloud.run_script("join.sh", launcher::join_script(test::moto_replan(1), a, config));
  INFO("join stderr: ", join.err);
  REQUIRE(join.exit_code == 0);
  CHECK(test::run_id_of(join.out) == a);

  const std::vector<json> after_a = cloud.run_instances(a);
  REQUIRE(after_a.size() == 5);
  const std::set<std::string> old_ids = test::instance_ids(before_a);
  std::vector<json> added;
  for (const json& i : after_a) {
    if (old_ids.count(i["InstanceId"].get<std::string>()) == 0) added.push_back(i);
  }
  REQUIRE(added.size() == 1);
  const json& joined = added[0];
  CHECK(joined["InstanceType"] == "p3.2xlarge");
  CHECK(joined.value("InstanceLifecycle", "") == "spot");
  CHECK(joined["State"]["Name"] == "running");
  CHECK(test::tag(joined, "spotdnn:run") == a);
  CHECK(test::tag(joined, "spotdnn:rank-base") == "4");
  CHECK(test::tag(joined, "spotdnn:role") == "worker");
  CHECK(test::tag(joined, "spotdnn:market") == "spot");
  CHECK(test::tag(joined, "spotdnn:instance-type") == "p3.2xlarge");
  CHECK(test::tag(joined, "Project") == config.tags.at("Project"));
  CHECK(joined["SubnetId"] == cloud.subnet_id());
  CHECK(joined["MetadataOptions"]["HttpTokens"] == "required");
  CHECK(cloud.user_data_of(joined["InstanceId"]) == launcher::user_data(config, kP3Role, 1, {a, ps_ip, "5", "4"}));
  // Only the addition was launched; run B is untouched.
  const std::vector<json> runs = cloud.server().recorded_calls("RunInstances");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["params"]["MinCount"] == "1");
  CHECK(runs[0]["params"]["InstanceMarketOptions.MarketType"] == "spot");
  CHECK(cloud.server().recorded_calls("TerminateInstances").empty());
  const std::vector<json> after_b = cloud.run_instances(b);
  CHECK(test::instance_ids(after_b) == test::instance_ids(before_b));
  CHECK(test::states_of(after_b) == test::repeated(4, "running"));

  const std::size_t count = cloud.instances().size();
  CHECK(count == 9);
  const std::string unknown = "20000101-000000-000000";
  const ProcessResult nowhere = cloud.run_script("join.sh", launcher::join_script(test::moto_replan(1), unknown, config));
  CHECK(nowhere.exit_code == 3);
  CHECK(contains(nowhere.err, "no running parameter server for run " + unknown + ": nothing launched"));
  CHECK(test::run_id_of(nowhere.out).empty());
  CHECK(cloud.instances().size() == count);
}

TEST_CASE("moto fleet: spot groups through a launch template and an instant EC2 Fleet - on-demand through run-instances - templates deleted") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const launcher::AwsConfig config = cloud.config();
  launcher::LaunchOptions options;
  options.fleet = true;
  cloud.server().start_recording();
  const std::string spec_path = cloud.dir() / "spec.json";
  const std::string run = launch(cloud, test::moto_plan(), config, options, {"SPOTDNN_CLUSTER_SPEC=" + spec_path});

  const std::vector<json> templates = cloud.server().recorded_calls("CreateLaunchTemplate");
  REQUIRE(templates.size() == 1);
  const json& lt = templates[0]["params"];
  CHECK(lt["LaunchTemplateData.MetadataOptions.HttpTokens"] == "required");
  CHECK(lt["LaunchTemplateData.ImageId"] == config.image_for("p3.2xlarge"));
  CHECK(lt["LaunchTemplateData.KeyName"] == config.key_name);
  const std::vector<json> fleets = cloud.server().recorded_calls("CreateFleet");
  REQUIRE(fleets.size() == 1);
  const json& fleet = fleets[0]["params"];
  CHECK(fleet["Type"] == "instant");
  CHECK(fleet["SpotOptions.MinTargetCapacity"] == "2");
  CHECK(fleet["TargetCapacitySpecification.TotalTargetCapacity"] == "2");
  CHECK(fleet["TargetCapacitySpecification.DefaultTargetCapacityType"] == "spot");
  CHECK(fleet["LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName"] == lt["LaunchTemplateName"]);
  CHECK(fleet["LaunchTemplateConfigs.1.Overrides.1.InstanceType"] == "p3.2xlarge");
  CHECK(fleet["LaunchTemplateConfigs.1.Overrides.1.SubnetId"] == cloud.subnet_id());
  const std::vector<json> runs = cloud.server().recorded_calls("RunInstances");
  REQUIRE(runs.size() == 2);  // the PS and the on-demand group
  std::set<std::string> run_types;
  for (const json& call : runs) {
    run_types.insert(call["params"]["InstanceType"].get<std::string>());
    CHECK_FALSE(call["params"].contains("InstanceMarketOptions.MarketType"));
  }
  CHECK(run_types == std::set<std::string>{"m5.xlarge", "g3.8xlarge"});
  CHECK(cloud.server().recorded_calls("DeleteLaunchTemplate").size() == 1);
  CHECK(cloud.aws({"ec2", "describe-launch-templates"})["LaunchTemplates"].empty());

  const std::vector<json> all = cloud.instances();
  CHECK(cloud.run_instances(run).size() == 4);
  CHECK(all.size() == 4);
  const RunInstances r = split_run(all);
  REQUIRE(r.p3.size() == 2);
  REQUIRE(r.g3.size() == 1);
  const std::string ps_ip = r.ps["PrivateIpAddress"];
  for (const json& i : r.p3) {
    CHECK(i.value("InstanceLifecycle", "") == "spot");
    CHECK(test::tag(i, "spotdnn:run") == run);
    CHECK(test::tag(i, "spotdnn:rank-base") == "1");
    CHECK(test::tag(i, "spotdnn:role") == "worker");
    CHECK(test::tag(i, "spotdnn:market") == "spot");
    CHECK(test::tag(i, "spotdnn:instance-type") == "p3.2xlarge");
    CHECK(test::tag(i, "cost center") == "ml & research");
    CHECK(i["SubnetId"] == cloud.subnet_id());
    CHECK(cloud.user_data_of(i["InstanceId"]) == launcher::user_data(config, kP3Role, 1, {run, ps_ip, "4", "1"}));
  }
  CHECK_FALSE(r.g3[0].contains("InstanceLifecycle"));
  CHECK(test::tag(r.g3[0], "spotdnn:rank-base") == "3");
  CHECK(test::tag(r.ps, "spotdnn:run") == run);
  const json spec = json::parse(test::read_text(spec_path));
  REQUIRE(spec["instances"].size() == 4);
  for (std::size_t k = 0; k < 4; ++k) CHECK(spec["instances"][k]["rank"] == k);
}

TEST_CASE("moto failure: a launch step that fails terminates every instance the run started and deletes its launch templates") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const launcher::AwsConfig config = cloud.config();
  launcher::LaunchOptions options;
  std::string failing_command;
  int nth = 0;
  std::size_t started = 0;
  SUBCASE("the on-demand group's run-instances after the PS and the spot group") {
    failing_command = "run-instances";
    nth = 3;
    started = 3;  // the PS and 2 x p3.2xlarge
  }
  SUBCASE("EC2 Fleet: the spot group's create-fleet after the PS") {
    options.fleet = true;
    failing_command = "create-fleet";
    nth = 1;
    started = 1;  // the PS
  }
  SUBCASE("EC2 Fleet: the on-demand group's run-instances after the PS and the fleet") {
    options.fleet = true;
    failing_command = "run-instances";
    nth = 2;
    started = 3;  // the PS and the 2 fleet instances
  }
  CAPTURE(failing_command);
  CAPTURE(nth);
  // SPOTDNN_AWS: the real aws, except that the nth call of `failing_command` is refused as EC2 would.
  const std::string wrapper = cloud.dir() / "failing-aws";
  test::write_text(wrapper, "#!/bin/bash\n"
                            "count_file=" + launcher::shell_quote(cloud.dir() / "failing-aws.count") + "\n"
                            "for arg in \"$@\"; do\n"
                            "  if [[ $arg == " + launcher::shell_quote(failing_command) + " ]]; then\n"
                            "    n=$(($(cat \"$count_file\" 2>/dev/null || echo 0) + 1))\n"
                            "    echo \"$n\" >\"$count_file\"\n"
                            "    if ((n == " + std::to_string(nth) + ")); then\n"
                            "      echo 'An error occurred (InsufficientInstanceCapacity): refused by the test' >&2\n"
                            "      exit 254\n"
                            "    fi\n"
                            "  fi\n"
                            "done\n"
                            "exec aws \"$@\"\n");
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  const std::string spec_path = cloud.dir() / "spec.json";
  const ProcessResult r = cloud.run_script("launch.sh", launcher::launch_script(test::moto_plan(), config, options), "",
                                           {"SPOTDNN_AWS=" + wrapper, "SPOTDNN_CLUSTER_SPEC=" + spec_path});
  INFO("launch stderr: ", r.err);
  CHECK(r.exit_code == 254);
  CHECK(test::run_id_of(r.out).empty());
  CHECK(contains(r.err, "refused by the test"));
  CHECK(contains(r.err, "launch failed (exit 254); terminating what it started"));
  CHECK_FALSE(std::filesystem::exists(spec_path));

  const std::vector<json> all = cloud.instances();
  CHECK(all.size() == started);
  CHECK(test::states_of(all) == test::repeated(started, "terminated"));
  std::set<std::string> runs;
  for (const json& i : all) runs.insert(test::tag(i, "spotdnn:run"));
  REQUIRE(runs.size() == 1);
  CHECK(std::regex_match(*runs.begin(), kRunIdPattern));
  CHECK(cloud.aws({"ec2", "describe-launch-templates"})["LaunchTemplates"].empty());
}

TEST_CASE("moto bootstrap: the user data EC2 holds discovers its run - and a revocation notice syncs checkpoints to S3 and tags the instance") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const launcher::AwsConfig config = cloud.config();
  cloud.aws({"s3api", "create-bucket", "--bucket", "spotdnn-ckpt"});
  const std::string run = launch(cloud, test::moto_plan(), config);
  const RunInstances r = split_run(cloud.run_instances(run));
  REQUIRE(r.p3.size() == 2);
  REQUIRE(r.g3.size() == 1);
  const std::string ps_ip = r.ps["PrivateIpAddress"];
  const auto ip_of = [](const json& i) { return i["PrivateIpAddress"].get<std::string>(); };
  const std::vector<std::string> workers = {ip_of(r.p3[0]) + ":2222", ip_of(r.p3[1]) + ":2222", ip_of(r.g3[0]) + ":2222"};

  /// `bash USERDATA env` of instance `i` (its user data as EC2 holds it) with a fake IMDS answering its ID.
  const auto env_of = [&](const json& i) {
    const std::string id = i["InstanceId"];
    test::FakeServer imds("fake_imds.py", cloud.dir(), "imds-" + id, {"--instance-id", id});
    const ProcessResult out = cloud.run_script("user-data-" + id + ".sh", cloud.user_data_of(id), "env",
                                               {"SPOTDNN_IMDS_URL=" + imds.url(), "SPOTDNN_DISCOVERY_TIMEOUT_S=20"});
    INFO(id, " env stderr: ", out.err);
    CHECK(out.exit_code == 0);
    return test::environment_of(out.out);
  };
  const json cluster = {{"chief", {ps_ip + ":2223"}}, {"ps", {ps_ip + ":2222"}}, {"worker", workers}};
  const std::vector<std::pair<json, int>> checked_workers = {{r.p3[1], 2}, {r.g3[0], 3}};
  for (const auto& entry : checked_workers) {
    const json& instance = entry.first;
    const int rank = entry.second;
    CAPTURE(rank);
    std::map<std::string, std::string> env = env_of(instance);
    CHECK(env["SPOTDNN_RUN_ID"] == run);
    CHECK(env["SPOTDNN_ROLE"] == "worker");
    CHECK(env["SPOTDNN_INSTANCE_TYPE"] == instance["InstanceType"]);
    CHECK(env["RANK"] == std::to_string(rank));
    CHECK(env["WORLD_SIZE"] == "4");
    CHECK(env["MASTER_ADDR"] == ps_ip);
    CHECK(env["MASTER_PORT"] == "29500");
    CHECK(env["SPOTDNN_PS_PRIVATE_IP"] == ps_ip);
    CHECK(env.count("TF_CONFIG_CHIEF") == 0);
    const json tf = json::parse(env["TF_CONFIG"]);
    CHECK(tf["cluster"] == cluster);
    CHECK(tf["task"] == json{{"type", "worker"}, {"index", rank - 1}});
  }
  std::map<std::string, std::string> ps_env = env_of(r.ps);
  CHECK(ps_env["SPOTDNN_ROLE"] == "ps");
  CHECK(ps_env["RANK"] == "0");
  CHECK(ps_env["WORLD_SIZE"] == "4");
  CHECK(ps_env["MASTER_ADDR"] == ps_ip);
  const json ps_tf = json::parse(ps_env["TF_CONFIG"]);
  CHECK(ps_tf["cluster"] == cluster);
  CHECK(ps_tf["task"] == json{{"type", "ps"}, {"index", 0}});
  const json chief_tf = json::parse(ps_env["TF_CONFIG_CHIEF"]);
  CHECK(chief_tf["cluster"] == cluster);
  CHECK(chief_tf["task"] == json{{"type", "chief"}, {"index", 0}});

  // The revocation: an interruption notice on the second poll; the default hook syncs the checkpoint
  // directory to S3 without the .ckpt-* files being written, and the instance tags itself revoked.
  const std::filesystem::path ckpt = config.checkpoint_dir;
  std::filesystem::create_directories(ckpt / "sub");
  test::write_text((ckpt / "ckpt-000000000100.pt").string(), "weights at step 100");
  test::write_text((ckpt / ".ckpt-xxx.tmp").string(), "half written");
  test::write_text((ckpt / "sub" / ".ckpt-y.tmp").string(), "half written");
  const std::string revoked = r.p3[0]["InstanceId"];
  test::FakeServer imds("fake_imds.py", cloud.dir(), "imds-watch", {"--instance-id", revoked, "--instance-action", "404,notice"});
  const ProcessResult watch = cloud.run_script("watch.sh", cloud.user_data_of(revoked), "watch",
                                               {"SPOTDNN_IMDS_URL=" + imds.url(), "SPOTDNN_POLL_INTERVAL_S=0.05"},
                                               std::chrono::seconds(60));
  INFO("watch stderr: ", watch.err);
  REQUIRE(watch.exit_code == 0);
  const json listed = cloud.aws({"s3api", "list-objects-v2", "--bucket", "spotdnn-ckpt"});
  std::map<std::string, long> objects;
  for (const json& o : listed.value("Contents", json::array())) objects[o["Key"].get<std::string>()] = o["Size"].get<long>();
  CHECK(objects == std::map<std::string, long>{{"runs/ckpt-000000000100.pt", long(std::string("weights at step 100").size())}});
  const std::vector<json> now = cloud.run_instances(run);
  for (const json& i : now) {
    const std::string id = i["InstanceId"];
    CAPTURE(id);
    CHECK(test::tag(i, "spotdnn:revoked") == (id == revoked ? "instance-action" : ""));
  }
}

TEST_CASE("moto status table: ranks, roles, markets and states after a join and after an instance is terminated by hand") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  MotoCloud cloud;
  const launcher::AwsConfig config = cloud.config();
  const std::string run = launch(cloud, test::moto_plan(), config);
  const ProcessResult join = cloud.run_script("join.sh", launcher::join_script(test::moto_replan(1), run, config));
  INFO("join stderr: ", join.err);
  REQUIRE(join.exit_code == 0);
  const std::vector<json> all = cloud.run_instances(run);
  const RunInstances r = split_run(all);
  REQUIRE(r.p3.size() == 3);
  REQUIRE(r.g3.size() == 1);
  std::vector<json> first_p3, joined_p3;
  for (const json& i : r.p3) (test::tag(i, "spotdnn:rank-base") == "1" ? first_p3 : joined_p3).push_back(i);
  REQUIRE(first_p3.size() == 2);
  REQUIRE(joined_p3.size() == 1);
  const auto row = [](const json& i, const std::string& rank, const std::string& state, const std::string& revoked) {
    const std::string type = i["InstanceType"];
    return StatusRow{rank,     type == "m5.xlarge" ? "ps" : "worker", i["InstanceId"].get<std::string>(), type,
                     type == "p3.2xlarge" ? "spot" : "on-demand", state, i["PrivateIpAddress"].get<std::string>(), revoked};
  };
  const std::string script = launcher::status_script(run, config);
  const ProcessResult status = cloud.run_script("status.sh", script);
  INFO("status stderr: ", status.err);
  REQUIRE(status.exit_code == 0);
  CHECK(text_of(status_rows(status.out)) == text_of({
                                              row(r.ps, "0", "running", "-"), row(first_p3[0], "1", "running", "-"),
                                              row(first_p3[1], "2", "running", "-"), row(r.g3[0], "3", "running", "-"),
                                              row(joined_p3[0], "4", "running", "-")}));
  CHECK(contains(status.out, "spotdnn run " + run + ": 5 instances (5 running)\n"));

  // A revocation as the watcher reports it, then the termination: the instance keeps its rank.
  const std::string gone = first_p3[0]["InstanceId"];
  cloud.aws({"ec2", "create-tags", "--resources", gone, "--tags", "Key=spotdnn:revoked,Value=instance-action"});
  cloud.aws({"ec2", "terminate-instances", "--instance-ids", gone});
  const ProcessResult later = cloud.run_script("status.sh", script);
  INFO("status stderr: ", later.err);
  REQUIRE(later.exit_code == 0);
  std::vector<StatusRow> rows = status_rows(later.out);
  // A terminated instance has no private address any more in EC2's answer (moto keeps it; both are fine).
  for (StatusRow& rr : rows) {
    if (rr.id == gone && rr.ip == "-") rr.ip = first_p3[0]["PrivateIpAddress"].get<std::string>();
  }
  CHECK(text_of(rows) == text_of({row(r.ps, "0", "running", "-"), row(first_p3[0], "1", "terminated", "instance-action"),
                                             row(first_p3[1], "2", "running", "-"), row(r.g3[0], "3", "running", "-"),
                                             row(joined_p3[0], "4", "running", "-")}));
  CHECK(contains(later.out, "spotdnn run " + run + ": 5 instances (4 running, 1 terminated)\n"));
}
