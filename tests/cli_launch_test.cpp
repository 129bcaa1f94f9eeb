// SPDX-License-Identifier: MIT
// `spotdnn launch` end to end: a predicted plan becomes a launch script that bash accepts; bad input exits 2;
// hostile AWS values and file names reach EC2 verbatim through the real aws CLI and run nothing.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/io/json.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::run_cli;
using spotdnn::test::run_shell;
using spotdnn::test::write_temp_file;

namespace {
Json aws_config() {
  return {{"region", "us-east-1"},
          {"subnet_id", "subnet-0123456789abcdef0"},
          {"security_group_ids", {"sg-0123456789abcdef0"}},
          {"image_id", "ami-0123456789abcdef0"},
          {"checkpoint_s3_uri", "s3://team-bucket/resnet110"},
          {"tags", {{"Project", "it's $(whoami)"}}},
          {"training_command", "python3 train.py"}};
}
}  // namespace

TEST_CASE("spotdnn launch turns a predicted cluster into a launch script that bash parses") {
  const auto predicted = run_cli("predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --format json");
  REQUIRE(predicted.exit_code == 0);
  const std::string plan = write_temp_file("cli_launch_plan.json", predicted.out);
  const std::string aws = write_temp_file("cli_launch_aws.json", aws_config().dump());
  const auto r = run_cli("launch --plan '" + plan + "' --aws '" + aws + "' --plan-id resnet-run-7");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.rfind("#!/usr/bin/env bash", 0) == 0);
  CHECK(r.out.find("--count 2") != std::string::npos);
  CHECK(r.out.find("--count 4") != std::string::npos);
  CHECK(r.out.find("resnet-run-7") != std::string::npos);
  CHECK(r.out.find("request-spot-instances") == std::string::npos);
  const std::string script = write_temp_file("cli_launch_script.sh", r.out);
  CHECK(run_shell("bash -n '" + script + "'").exit_code == 0);

  const auto fleet = run_cli("launch --plan '" + plan + "' --aws '" + aws + "' --fleet");
  REQUIRE(fleet.exit_code == 0);
  CHECK(fleet.out.find("create-fleet") != std::string::npos);
}

TEST_CASE("spotdnn launch refuses bad input with one line on stderr and exit code 2") {
  const auto predicted = run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --format json");
  REQUIRE(predicted.exit_code == 0);
  const std::string plan = write_temp_file("cli_launch_plan_1.json", predicted.out);
  Json infeasible = Json::parse(predicted.out);
  infeasible["status"] = "infeasible";
  const std::string infeasible_plan = write_temp_file("cli_launch_infeasible.json", infeasible.dump());
  Json bad_subnet = aws_config();
  bad_subnet["subnet_id"] = "subnet-xyz; rm -rf /";
  Json with_secret = aws_config();
  with_secret["aws_secret_access_key"] = "abc";
  const std::string good_aws = write_temp_file("cli_launch_good_aws.json", aws_config().dump());
  const std::string bad_aws = write_temp_file("cli_launch_bad_aws.json", bad_subnet.dump());
  const std::string secret_aws = write_temp_file("cli_launch_secret_aws.json", with_secret.dump());
  const std::pair<std::string, std::string> cases[] = {
      {"launch --plan '" + plan + "' --aws '" + bad_aws + "'", "subnet_id"},
      {"launch --plan '" + plan + "' --aws '" + secret_aws + "'", "credentials are never accepted"},
      {"launch --plan '" + infeasible_plan + "' --aws '" + good_aws + "'", "only an optimal or feasible plan"},
      {"launch --plan '" + plan + "' --aws '" + good_aws + "' --plan-id 'a b'", "plan_id"},
      {"launch --plan /nonexistent.json --aws '" + good_aws + "'", "cannot open the file"},
      {"launch --aws '" + good_aws + "'", "--plan is required"},
  };
  for (const auto& entry : cases) {
    const std::string& arguments = entry.first;
    const std::string& expected = entry.second;
    CAPTURE(arguments);
    const auto r = run_cli(arguments);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK_MESSAGE(r.err.find(expected) != std::string::npos, r.err);
  }
}

TEST_CASE("the JSON of spotdnn plan is a launch plan: plan, then launch") {
  const auto planned = run_cli("plan --target-loss 0.8 --deadline 2400 --format json");
  REQUIRE(planned.exit_code == 0);
  CHECK(Json::parse(planned.out)["status"] == "optimal");
  const std::string plan = write_temp_file("cli_launch_from_plan.json", planned.out);
  const std::string aws = write_temp_file("cli_launch_from_plan_aws.json", aws_config().dump());
  const auto r = run_cli("launch --plan '" + plan + "' --aws '" + aws + "'");
  REQUIRE(r.exit_code == 0);
  // The optimal plan on the preset is p3.2xlarge=2, g3.8xlarge=4 (design §4, issue #3).
  CHECK(r.out.find("2 x p3.2xlarge") != std::string::npos);
  CHECK(r.out.find("4 x g3.8xlarge") != std::string::npos);
  const std::string script = write_temp_file("cli_launch_from_plan.sh", r.out);
  CHECK(run_shell("bash -n '" + script + "'").exit_code == 0);

  const auto infeasible = run_cli("plan --target-loss 0.8 --deadline 100 --format json");
  REQUIRE(infeasible.exit_code == 3);
  const std::string no_plan = write_temp_file("cli_launch_no_plan.json", infeasible.out);
  const auto refused = run_cli("launch --plan '" + no_plan + "' --aws '" + aws + "'");
  CHECK(refused.exit_code == 2);
  CHECK(refused.out.empty());
  CHECK(refused.err.find("only an optimal or feasible plan") != std::string::npos);
}

TEST_CASE("spotdnn launch --fleet turns hostile AWS values and file names into a script that sends them verbatim") {
  namespace test = spotdnn::test;
  namespace launcher = spotdnn::launcher;
  test::TempDir dir;
  test::FakeServer ec2("fake_ec2.py", dir, "ec2");
  const launcher::AwsConfig c = test::hostile_config();
  Json tags = Json::object();
  for (const auto& [key, value] : c.tags) tags[key] = value;
  const Json aws = {{"region", c.region},
                    {"subnet_id", c.subnet_id},
                    {"security_group_ids", c.security_group_ids},
                    {"image_id", c.image_id},
                    {"key_name", c.key_name},
                    {"iam_instance_profile", c.iam_instance_profile},
                    {"checkpoint_s3_uri", c.checkpoint_s3_uri},
                    {"checkpoint_dir", c.checkpoint_dir},
                    {"tags", tags},
                    {"placement_group", c.placement_group},
                    {"create_placement_group", true},
                    {"training_command", c.training_command},
                    {"revocation_hook", c.revocation_hook}};
  const std::string aws_path = "aws 'q' `touch PWNED` $(touch PWNED).json";
  const std::string plan_path = "plan \"d\" ;&| $(touch PWNED).json";
  test::write_text(dir / aws_path, aws.dump());
  const auto predicted = run_cli("predict --cluster p3.2xlarge=1,g3.8xlarge=2 --target-loss 0.8 --format json");
  REQUIRE(predicted.exit_code == 0);
  test::write_text(dir / plan_path, predicted.out);

  const auto emitted = run_shell("cd " + launcher::shell_quote(dir.path().string()) + " && '" + SPOTDNN_CLI_PATH +
                                 "' launch --fleet --plan-id hostile-cli --plan " + launcher::shell_quote(plan_path) +
                                 " --aws " + launcher::shell_quote(aws_path));
  INFO(emitted.err);
  REQUIRE(emitted.exit_code == 0);
  test::write_text(dir / "launch.sh", emitted.out);
  const int rc = test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && timeout 240 " + test::aws_env(ec2.url()) +
                                " SPOTDNN_CLUSTER_SPEC=spec.json bash launch.sh >stdout.txt 2>stderr.txt");
  INFO(test::read_text(dir / "stderr.txt"));
  REQUIRE(rc == 0);
  int templates = 0;
  for (const nlohmann::json& call : test::ec2_calls(ec2.log_path())) {
    if (call["Action"] != "CreateLaunchTemplate") continue;
    ++templates;
    const nlohmann::json& p = call["params"];
    const std::string type = p["LaunchTemplateName"] == "spotdnn-hostile-cli-p3.2xlarge" ? "p3.2xlarge" : "g3.8xlarge";
    CAPTURE(type);
    CHECK(p["LaunchTemplateData.KeyName"] == c.key_name);
    CHECK(p["LaunchTemplateData.Placement.GroupName"] == c.placement_group);
    CHECK(p["LaunchTemplateData.IamInstanceProfile.Name"] == c.iam_instance_profile);
    const auto sent = test::tags_of(p, "instance", "LaunchTemplateData.");
    for (const auto& tag : c.tags) CHECK(sent.at(tag.first) == tag.second);
    CHECK(test::base64_decode(p["LaunchTemplateData.UserData"].get<std::string>()) ==
          launcher::worker_user_data(c, "hostile-cli", type, type == "p3.2xlarge" ? 1 : 2, "10.0.0.11"));
  }
  CHECK(templates == 2);
  CHECK(test::pwned_files(dir.path()).empty());
}
