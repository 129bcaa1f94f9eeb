// SPDX-License-Identifier: MIT
// The user data of a run's instances, run with bash against tests/support/fake_imds.py (IMDSv2 on
// 127.0.0.1) and a stand-in aws CLI that logs its arguments and prints a canned describe-instances text
// output (test::write_aws_stub): the worker's revocation watcher, the PS checkpoint sync loop, and cluster
// discovery (ranks, WORLD_SIZE, MASTER_ADDR, TF_CONFIG). No aws CLI, moto or network is needed.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>

#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using nlohmann::json;

namespace {

const launcher::InstanceRole kWorker{"worker", "p3.2xlarge", Market::spot};
const launcher::InstanceRole kParameterServer{"ps", "m5.xlarge", Market::on_demand};

std::vector<json> json_lines(const std::string& path) {
  std::vector<json> out;
  std::istringstream in(test::read_text(path));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

int count_lines(const std::string& path) {
  const std::string text = test::read_text(path);
  return int(std::count(text.begin(), text.end(), '\n'));
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// A clean environment for the user data: the stand-in aws, AWS_ENDPOINT_URL (which the scripts must
/// pass on as --endpoint-url) and `extra` (more NAME=VALUE words).
std::string bootstrap_env(const test::TempDir& dir, const std::string& extra) {
  return "env -i PATH=/usr/bin:/bin HOME=/nonexistent SPOTDNN_AWS=" + launcher::shell_quote(dir / "aws") +
         " AWS_ENDPOINT_URL=http://127.0.0.1:9 SPOTDNN_LOG_DIR=" + launcher::shell_quote(dir.path().string()) + " " + extra;
}

/// Runs `bash FILE MODE` in `dir` under `timeout`; stdout in out.txt, stderr in err.txt. Returns the exit code.
int run_user_data(const test::TempDir& dir, const std::string& file, const std::string& mode, const std::string& env,
                  int timeout_s = 60) {
  return test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && timeout " + std::to_string(timeout_s) + " " + env +
                        " bash " + file + " " + mode + " >out.txt 2>err.txt");
}

/// `run` values with world size `world_size` and rank base `rank_base`.
launcher::SlotValues values_of(const std::string& world_size, const std::string& rank_base) {
  return {test::kExampleRunId, "10.0.0.10", world_size, rank_base};
}

/// The describe-instances text output of a run (tab-separated: InstanceId State PrivateIp role
/// rank-base): the PS; a group with rank base 1 of three, one of them terminated; a group joined later
/// with rank base 4; and three rows not tagged as spotdnn tags (no rank base, another role, a bad ID).
const std::string kRunRows =
    "i-0aaaaaaaaaaaaaaa0\trunning\t10.0.0.10\tps\t0\n"
    "i-0b00000000000003\trunning\t10.0.1.3\tworker\t1\n"
    "i-0b00000000000001\tterminated\tNone\tworker\t1\n"
    "i-0b00000000000002\trunning\t10.0.1.2\tworker\t1\n"
    "i-0c00000000000001\tpending\t10.0.2.1\tworker\t4\n"
    "i-0d00000000000001\trunning\t10.0.3.1\tworker\tNone\n"
    "i-0e00000000000001\trunning\t10.0.3.2\tadmin\t5\n"
    "x-$(touch${IFS}PWNED)\trunning\t10.0.3.3\tworker\t5\n";

}  // namespace

TEST_CASE("the worker watcher ignores 404, refreshes its token on 401, runs the hook exactly once and tags itself") {
  test::TempDir dir;
  test::write_aws_stub(dir);
  test::FakeServer imds("fake_imds.py", dir, "imds",
                        {"--instance-action", "404,404,401,404,notice", "--rebalance", "404,404,notice"});
  launcher::AwsConfig config = test::example_config();
  config.revocation_hook = "echo \"hook $SPOTDNN_INSTANCE_TYPE $SPOTDNN_RUN_ID\" >> " + launcher::shell_quote(dir / "hook.log");
  test::write_text(dir / "worker.sh", launcher::user_data(config, kWorker, 1, test::example_values()));
  const int rc = run_user_data(dir, "worker.sh", "watch",
                               bootstrap_env(dir, "SPOTDNN_IMDS_URL=" + imds.url() + " SPOTDNN_POLL_INTERVAL_S=0.05"));
  INFO(test::read_text(dir / "err.txt"));
  REQUIRE(rc == 0);
  // The rebalance recommendation came first (3rd poll), the interruption notice later: one hook run.
  CHECK(test::read_text(dir / "hook.log") == "hook p3.2xlarge " + test::kExampleRunId + "\n");

  const std::vector<json> requests = json_lines(imds.log_path());
  int token_puts = 0, unauthorized = 0, not_found = 0;
  for (const json& r : requests) {
    if (r["method"] == "PUT") {
      ++token_puts;
      CHECK(r["ttl"] == "21600");
    }
    if (r["outcome"] == 401) ++unauthorized;
    if (r["outcome"] == 404) ++not_found;
  }
  CHECK(token_puts == 2);  // the first token, and one refresh after the 401
  CHECK(unauthorized == 1);
  CHECK(not_found == 5);  // instance-action 404 on polls 1, 2 and 3 (after the refresh), rebalance on 1 and 2
  CHECK(requests.back()["path"] == "/latest/meta-data/instance-id");

  // It tagged itself revoked through the aws CLI (endpoint passed on): first for the rebalance
  // recommendation, then for the interruption; the custom hook replaced the S3 sync.
  const std::string tag = "--region|us-east-1|--endpoint-url|http://127.0.0.1:9|ec2|create-tags|--resources|i-0123456789abcdef0|"
                          "--tags|Key=spotdnn:revoked,Value=";
  CHECK(test::aws_stub_calls(dir) == std::vector<std::string>{tag + "rebalance|", tag + "instance-action|"});
}

TEST_CASE("a worker with no notice keeps polling and never runs the hook") {
  test::TempDir dir;
  test::write_aws_stub(dir);
  test::FakeServer imds("fake_imds.py", dir, "imds");
  launcher::AwsConfig config = test::example_config();
  config.revocation_hook = "echo hook >> " + launcher::shell_quote(dir / "hook.log");
  test::write_text(dir / "worker.sh",
                   launcher::user_data(config, {"worker", "g3.8xlarge", Market::on_demand}, 2, test::example_values()));
  const int rc = run_user_data(dir, "worker.sh", "watch",
                               bootstrap_env(dir, "SPOTDNN_IMDS_URL=" + imds.url() + " SPOTDNN_POLL_INTERVAL_S=0.1"), 2);
  CHECK(rc == 124);  // still watching when the timeout stopped it
  CHECK_FALSE(std::filesystem::exists(dir / "hook.log"));
  CHECK_FALSE(std::filesystem::exists(dir / "aws.log"));
  CHECK(count_lines(imds.log_path()) >= 6);
}

TEST_CASE("the default hook syncs the checkpoint directory to S3, leaving out .ckpt-* files being written") {
  test::TempDir dir;
  test::write_aws_stub(dir);
  test::FakeServer imds("fake_imds.py", dir, "imds", {"--instance-action", "notice"});
  launcher::AwsConfig config = test::example_config();
  config.revocation_hook.clear();
  config.checkpoint_dir = dir / "ckpt dir";
  test::write_text(dir / "worker.sh", launcher::user_data(config, kWorker, 1, test::example_values()));
  const int rc = run_user_data(dir, "worker.sh", "watch",
                               bootstrap_env(dir, "SPOTDNN_IMDS_URL=" + imds.url() + " SPOTDNN_POLL_INTERVAL_S=0.05"));
  INFO(test::read_text(dir / "err.txt"));
  REQUIRE(rc == 0);
  const std::vector<std::string> calls = test::aws_stub_calls(dir);
  REQUIRE(calls.size() == 2);
  const std::string sync = "--region|us-east-1|--endpoint-url|http://127.0.0.1:9|s3|sync|" + config.checkpoint_dir +
                           "|s3://my-bucket/checkpoints/run 1|";
  CHECK(calls[0].rfind(sync, 0) == 0);
  CHECK(contains(calls[0], "|--exclude|.ckpt-*|"));
  CHECK(contains(calls[1], "|ec2|create-tags|--resources|i-0123456789abcdef0|--tags|Key=spotdnn:revoked,Value=instance-action|"));
  CHECK(std::filesystem::is_directory(config.checkpoint_dir));
}

TEST_CASE("the PS sync loop runs aws s3 sync of the checkpoint directory periodically and once more on SIGTERM") {
  test::TempDir dir;
  test::write_aws_stub(dir);
  launcher::AwsConfig config = test::example_config();
  config.checkpoint_dir = dir / "ckpt dir";
  test::write_text(dir / "ps.sh", launcher::user_data(config, kParameterServer, 0, values_of("7", "0")));
  const std::string sync = "--region|us-east-1|--endpoint-url|http://127.0.0.1:9|s3|sync|" + config.checkpoint_dir +
                           "|s3://my-bucket/checkpoints/run 1|";
  const auto run_for = [&](const std::string& interval, const std::string& seconds) {
    std::filesystem::remove(dir / "aws.log");
    return test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && (" +
                          bootstrap_env(dir, "SPOTDNN_SYNC_INTERVAL_S=" + interval) + " bash ps.sh sync >out.txt 2>err.txt & pid=$!; sleep " +
                          seconds + "; kill -TERM $pid; wait $pid)");
  };

  SUBCASE("periodic syncs") {
    CHECK(run_for("0.2", "1.1") == 0);
    const std::vector<std::string> calls = test::aws_stub_calls(dir);
    CHECK(calls.size() >= 3);  // ~5 periodic syncs in 1.1 s plus the final one
    for (const std::string& call : calls) {
      CHECK(call.rfind(sync, 0) == 0);
      CHECK(contains(call, "|--exclude|.ckpt-*|"));
    }
  }
  SUBCASE("SIGTERM before the first period ends: exactly the final sync, exit 0") {
    CHECK(run_for("20", "0.5") == 0);
    const std::vector<std::string> calls = test::aws_stub_calls(dir);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].rfind(sync, 0) == 0);
    CHECK(contains(calls[0], "|--exclude|.ckpt-*|"));
  }
  CHECK(std::filesystem::is_directory(config.checkpoint_dir));
}

TEST_CASE("discovery: ranks from rank-base tags and instance IDs, live instances only in the cluster, bad rows skipped") {
  test::TempDir dir;
  test::write_aws_stub(dir);
  test::write_text(dir / "describe-instances.txt", kRunRows);
  const launcher::AwsConfig config = test::example_config();

  SUBCASE("a worker of the first group") {
    test::FakeServer imds("fake_imds.py", dir, "imds", {"--instance-id", "i-0b00000000000003"});
    test::write_text(dir / "worker.sh", launcher::user_data(config, kWorker, 1, values_of("4", "1")));
    const int rc = run_user_data(dir, "worker.sh", "env", bootstrap_env(dir, "SPOTDNN_IMDS_URL=" + imds.url()));
    const std::string err = test::read_text(dir / "err.txt");
    INFO(err);
    REQUIRE(rc == 0);
    const std::map<std::string, std::string> env = test::environment_of(test::read_text(dir / "out.txt"));
    CHECK(env.at("RANK") == "3");  // base 1: ...01 (terminated) 1, ...02 2, ...03 3
    CHECK(env.at("WORLD_SIZE") == "4");  // PS, ...02, ...03 and the pending ...c01
    CHECK(env.at("MASTER_ADDR") == "10.0.0.10");
    CHECK(env.at("MASTER_PORT") == "29500");
    CHECK(env.at("SPOTDNN_PS_PRIVATE_IP") == "10.0.0.10");
    CHECK(env.at("SPOTDNN_RUN_ID") == test::kExampleRunId);
    CHECK(env.at("SPOTDNN_ROLE") == "worker");
    CHECK(env.at("SPOTDNN_INSTANCE_TYPE") == "p3.2xlarge");
    CHECK(env.at("SPOTDNN_MARKET") == "spot");
    CHECK(env.at("SPOTDNN_GPUS") == "1");
    const json tf = json::parse(env.at("TF_CONFIG"));
    CHECK(tf["cluster"]["chief"] == json::array({"10.0.0.10:2223"}));
    CHECK(tf["cluster"]["ps"] == json::array({"10.0.0.10:2222"}));
    CHECK(tf["cluster"]["worker"] == json::array({"10.0.1.2:2222", "10.0.1.3:2222", "10.0.2.1:2222"}));  // in rank order
    CHECK(tf["task"] == json{{"type", "worker"}, {"index", 1}});
    CHECK(env.count("TF_CONFIG_CHIEF") == 0);
    // The rows not tagged as spotdnn tags were skipped, each with a warning; nothing in them ran.
    CHECK(contains(err, "i-0d00000000000001"));
    CHECK(contains(err, "i-0e00000000000001"));
    CHECK(contains(err, "x-$(touch${IFS}PWNED)"));
    CHECK(test::pwned_files(dir.path()).empty());
    // One describe-instances by the exact run tag, text output, endpoint passed on.
    const std::vector<std::string> calls = test::aws_stub_calls(dir);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].rfind("--region|us-east-1|--endpoint-url|http://127.0.0.1:9|--output|text|ec2|describe-instances|--filters|"
                         "Name=tag:spotdnn:run,Values=" + test::kExampleRunId + "|--query|",
                         0) == 0);
  }
  SUBCASE("the parameter server") {
    test::FakeServer imds("fake_imds.py", dir, "imds", {"--instance-id", "i-0aaaaaaaaaaaaaaa0"});
    test::write_text(dir / "ps.sh", launcher::user_data(config, kParameterServer, 0, values_of("4", "0")));
    const int rc = run_user_data(dir, "ps.sh", "env", bootstrap_env(dir, "SPOTDNN_IMDS_URL=" + imds.url()));
    INFO(test::read_text(dir / "err.txt"));
    REQUIRE(rc == 0);
    const std::map<std::string, std::string> env = test::environment_of(test::read_text(dir / "out.txt"));
    CHECK(env.at("RANK") == "0");
    CHECK(env.at("WORLD_SIZE") == "4");
    CHECK(env.at("MASTER_ADDR") == "10.0.0.10");
    CHECK(env.at("SPOTDNN_GPUS") == "0");
    CHECK(env.at("SPOTDNN_MARKET") == "on-demand");
    const json tf = json::parse(env.at("TF_CONFIG"));
    CHECK(tf["task"] == json{{"type", "ps"}, {"index", 0}});
    CHECK(tf["cluster"]["worker"].size() == 3);
    const json chief = json::parse(env.at("TF_CONFIG_CHIEF"));
    CHECK(chief["task"] == json{{"type", "chief"}, {"index", 0}});
    CHECK(chief["cluster"] == tf["cluster"]);
  }
  SUBCASE("train runs the training command with the discovered environment") {
    test::FakeServer imds("fake_imds.py", dir, "imds", {"--instance-id", "i-0b00000000000002"});
    launcher::AwsConfig training = config;
    training.training_command = "printf '%s %s %s %s\\n' \"$RANK\" \"$WORLD_SIZE\" \"$MASTER_ADDR\" \"$SPOTDNN_CHECKPOINT_DIR\" >train.out";
    test::write_text(dir / "worker.sh", launcher::user_data(training, kWorker, 1, values_of("4", "1")));
    const int rc = run_user_data(dir, "worker.sh", "train", bootstrap_env(dir, "SPOTDNN_IMDS_URL=" + imds.url()));
    INFO(test::read_text(dir / "err.txt"));
    REQUIRE(rc == 0);
    CHECK(test::read_text(dir / "train.out") == "2 4 10.0.0.10 /var/lib/spotdnn/checkpoints\n");
  }
}

TEST_CASE("discovery at its timeout goes on with the instances it found, or fails without a parameter server") {
  test::TempDir dir;
  test::write_aws_stub(dir);
  const launcher::AwsConfig config = test::example_config();
  test::FakeServer imds("fake_imds.py", dir, "imds", {"--instance-id", "i-0b00000000000002"});
  // The run was launched with 6 instances; 4 are live.
  test::write_text(dir / "worker.sh", launcher::user_data(config, kWorker, 1, values_of("6", "1")));
  const std::string env = bootstrap_env(dir, "SPOTDNN_IMDS_URL=" + imds.url() + " SPOTDNN_DISCOVERY_TIMEOUT_S=0");

  SUBCASE("fewer instances than the world size") {
    test::write_text(dir / "describe-instances.txt", kRunRows);
    const int rc = run_user_data(dir, "worker.sh", "env", env);
    const std::string err = test::read_text(dir / "err.txt");
    INFO(err);
    REQUIRE(rc == 0);
    CHECK(contains(err, "found 4 of 6 instances of run " + test::kExampleRunId));
    const std::map<std::string, std::string> found = test::environment_of(test::read_text(dir / "out.txt"));
    CHECK(found.at("RANK") == "2");
    CHECK(found.at("WORLD_SIZE") == "4");
    CHECK(json::parse(found.at("TF_CONFIG"))["task"]["index"] == 0);
  }
  SUBCASE("no parameter server") {
    std::string rows = kRunRows;
    rows.erase(0, rows.find('\n') + 1);
    test::write_text(dir / "describe-instances.txt", rows);
    const int rc = run_user_data(dir, "worker.sh", "env", env);
    const std::string err = test::read_text(dir / "err.txt");
    INFO(err);
    CHECK(rc != 0);
    CHECK(rc != 124);
    CHECK(contains(err, "no parameter server"));
    CHECK_FALSE(contains(test::read_text(dir / "out.txt"), "RANK="));
  }
  SUBCASE("this instance is not in the run") {
    test::write_text(dir / "describe-instances.txt", "i-0aaaaaaaaaaaaaaa0\trunning\t10.0.0.10\tps\t0\n");
    const int rc = run_user_data(dir, "worker.sh", "env", env);
    INFO(test::read_text(dir / "err.txt"));
    CHECK(rc != 0);
    CHECK(contains(test::read_text(dir / "err.txt"), "no entry for i-0b00000000000002"));
  }
}

TEST_CASE("the user data holds the run's values as the script filled them, checked by kind") {
  const launcher::AwsConfig config = test::example_config();
  const std::string worker = launcher::user_data(config, kWorker, 1, test::example_values());
  CHECK(contains(worker, "SPOTDNN_RUN_ID='" + test::kExampleRunId + "'\n"));
  CHECK(contains(worker, "SPOTDNN_PS_PRIVATE_IP='10.0.0.10'\n"));
  CHECK(contains(worker, "SPOTDNN_WORLD_SIZE='7'\n"));
  CHECK(contains(worker, "SPOTDNN_RANK_BASE='3'\n"));
  CHECK(contains(worker, "readonly DISCOVERY_TIMEOUT_S=\"${SPOTDNN_DISCOVERY_TIMEOUT_S:-900}\"\n"));
  const std::string ps = launcher::user_data(config, kParameterServer, 0, test::example_values());
  CHECK(contains(ps, "SPOTDNN_PS_PRIVATE_IP=''\n"));  // the PS learns its own address by discovery
  CHECK(contains(ps, "readonly SYNC_INTERVAL_S=\"${SPOTDNN_SYNC_INTERVAL_S:-300}\"\n"));
  CHECK_FALSE(contains(ps, "REVOCATION_HOOK"));
  CHECK_THROWS_AS((void)launcher::user_data(config, kWorker, 1, {"*", "10.0.0.10", "7", "3"}), invalid_argument);
  CHECK_THROWS_AS((void)launcher::user_data(config, kWorker, 1, {test::kExampleRunId, "10.0.0.10'", "7", "3"}), invalid_argument);
}
