// SPDX-License-Identifier: MIT
// The worker user data against tests/support/fake_imds.py (IMDSv2 on 127.0.0.1) and the PS checkpoint
// sync loop, with the real aws CLI tagging against tests/support/fake_ec2.py.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>

#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using nlohmann::json;

namespace {

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

}  // namespace

TEST_CASE("the worker watcher ignores 404, refreshes its token on 401 and runs the hook exactly once") {
  test::TempDir dir;
  test::FakeServer imds("fake_imds.py", dir, "imds",
                        {"--instance-action", "404,404,401,404,notice", "--rebalance", "404,404,notice"});
  test::FakeServer ec2("fake_ec2.py", dir, "ec2");
  launcher::AwsConfig config = test::example_config();
  config.revocation_hook = "echo \"hook $SPOTDNN_INSTANCE_TYPE\" >> " + launcher::shell_quote(dir / "hook.log");
  test::write_text(dir / "worker.sh", launcher::worker_user_data(config, "plan-1", "p3.2xlarge", 1, "10.0.0.11"));
  const int rc = test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && timeout 60 " + test::aws_env(ec2.url()) +
                                " SPOTDNN_IMDS_URL=" + imds.url() +
                                " SPOTDNN_POLL_INTERVAL_S=0.05 bash worker.sh watch >out.txt 2>err.txt");
  INFO(test::read_text(dir / "err.txt"));
  REQUIRE(rc == 0);
  // The rebalance recommendation came first (3rd poll), the interruption notice later: one hook run.
  CHECK(test::read_text(dir / "hook.log") == "hook p3.2xlarge\n");

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

  // It tagged itself revoked: first for the rebalance recommendation, then for the interruption.
  const std::vector<json> tags = json_lines(ec2.log_path());
  REQUIRE(tags.size() == 2);
  for (const json& call : tags) {
    CHECK(call["Action"] == "CreateTags");
    CHECK(call["params"]["ResourceId.1"] == "i-0123456789abcdef0");
    CHECK(call["params"]["Tag.1.Key"] == "spotdnn:revoked");
  }
  CHECK(tags[0]["params"]["Tag.1.Value"] == "rebalance");
  CHECK(tags[1]["params"]["Tag.1.Value"] == "instance-action");
}

TEST_CASE("a worker with no notice keeps polling and never runs the hook") {
  test::TempDir dir;
  test::FakeServer imds("fake_imds.py", dir, "imds");
  launcher::AwsConfig config = test::example_config();
  config.revocation_hook = "echo hook >> " + launcher::shell_quote(dir / "hook.log");
  test::write_text(dir / "worker.sh", launcher::worker_user_data(config, "plan-1", "g3.8xlarge", 2, "10.0.0.11"));
  const int rc = test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && timeout 2 env SPOTDNN_IMDS_URL=" +
                                imds.url() + " SPOTDNN_POLL_INTERVAL_S=0.1 bash worker.sh watch >out.txt 2>err.txt");
  CHECK(rc == 124);  // still watching when the timeout stopped it
  CHECK_FALSE(std::filesystem::exists(dir / "hook.log"));
  CHECK(count_lines(imds.log_path()) >= 6);
}

TEST_CASE("the default hook and the PS sync loop run aws s3 sync of the checkpoint directory, also on SIGTERM") {
  test::TempDir dir;
  // A stand-in aws that records its arguments (the default hook's S3 call cannot go to the fake EC2).
  test::write_text(dir / "aws", "#!/bin/bash\nprintf '%s|' \"$@\" >> \"$(dirname \"$0\")/aws.log\"\necho >> \"$(dirname \"$0\")/aws.log\"\n");
  REQUIRE(test::run_bash("chmod +x " + launcher::shell_quote(dir / "aws")) == 0);
  launcher::AwsConfig config = test::example_config();
  config.checkpoint_dir = dir / "ckpt dir";
  test::write_text(dir / "ps.sh", launcher::parameter_server_user_data(config, "plan-1", "m5.xlarge"));
  const std::string env = "env SPOTDNN_AWS=" + launcher::shell_quote(dir / "aws") + " SPOTDNN_SYNC_INTERVAL_S=0.2 ";
  const int rc = test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && (" + env +
                                "bash ps.sh sync & pid=$!; sleep 1.1; kill -TERM $pid; wait $pid)");
  CHECK(rc == 0);
  const std::string log = test::read_text(dir / "aws.log");
  const std::string expected_line = "--region|us-east-1|s3|sync|" + config.checkpoint_dir + "|s3://my-bucket/checkpoints/run 1|\n";
  const int syncs = count_lines(dir / "aws.log");
  CHECK(syncs >= 3);  // ~5 periodic syncs in 1.1 s plus the final one
  CHECK(log.substr(log.size() - expected_line.size()) == expected_line);
  CHECK(std::filesystem::is_directory(config.checkpoint_dir));
}
