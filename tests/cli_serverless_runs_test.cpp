// SPDX-License-Identifier: MIT
// `spotdnn status --serverless` and `spotdnn teardown --serverless` through the CLI: a run id and
// examples/aws-serverless.json in, the library's script out (or its JSON document); a bad run id, a
// configuration without the serverless object, and a serverless-only configuration without the flag are
// refused with exit 2 and one line. (The scripts run against a stand-in aws CLI in
// serverless_run_scripts_test.cpp and against moto_server in moto_serverless_runs_test.cpp.)
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/io/json.hpp>
#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/serverless_run_scripts.hpp>

#include "support/run_command.hpp"

using namespace spotdnn;
using spotdnn::io::Json;
using spotdnn::test::run_cli;
using spotdnn::test::run_shell;
using spotdnn::test::write_temp_file;

namespace {

const std::string kRepo = SPOTDNN_TEST_SOURCE_DIR;
const std::string kServerlessAws = kRepo + "/examples/aws-serverless.json";
const std::string kSpotAws = kRepo + "/examples/aws.json";
const std::string kRun = "20261124-101500-3fa9c2";

launcher::AwsConfig example_serverless_config() {
  return launcher::read_aws_config_file(kServerlessAws, launcher::AwsConfigUse::serverless);
}

}  // namespace

TEST_CASE("status --serverless and teardown --serverless write the library's scripts for the run, from a file or stdin") {
  const auto status = run_cli("status --serverless --run " + kRun + " --aws '" + kServerlessAws + "'");
  INFO(status.err);
  REQUIRE(status.exit_code == 0);
  CHECK(status.err.empty());
  CHECK(status.out == launcher::serverless_status_script(kRun, example_serverless_config()));
  CHECK(status.out.find("readonly BUCKET='my-team-fasdl-'\"$RUN_ID\"") != std::string::npos);
  CHECK(run_shell("bash -n '" + write_temp_file("cli_serverless_status.sh", status.out) + "'").exit_code == 0);

  const auto teardown = run_cli("teardown --serverless --run " + kRun + " --aws '" + kServerlessAws + "'");
  INFO(teardown.err);
  REQUIRE(teardown.exit_code == 0);
  CHECK(teardown.out == launcher::serverless_teardown_script(kRun, example_serverless_config()));
  CHECK(run_shell("bash -n '" + write_temp_file("cli_serverless_teardown.sh", teardown.out) + "'").exit_code == 0);

  const auto from_stdin = run_shell("'" + std::string(SPOTDNN_CLI_PATH) + "' teardown --serverless --run " + kRun + " --aws - < '" +
                                    kServerlessAws + "'");
  CHECK(from_stdin.exit_code == 0);
  CHECK(from_stdin.out == teardown.out);

  // A file with both parts serves the EC2 and the serverless commands.
  Json both = io::read_json_file(kSpotAws);
  both["serverless"] = io::read_json_file(kServerlessAws)["serverless"];
  const std::string both_file = write_temp_file("cli_serverless_runs_both.json", both.dump());
  CHECK(run_cli("status --serverless --run " + kRun + " --aws '" + both_file + "'").exit_code == 0);
  CHECK(run_cli("status --run " + kRun + " --aws '" + both_file + "'").out.find("describe-instances") != std::string::npos);
}

TEST_CASE("status --serverless --format json wraps the script with the run's function prefix and bucket") {
  for (const std::string command : {"status", "teardown"}) {
    INFO(command);
    const auto script = run_cli(command + " --serverless --run " + kRun + " --aws '" + kServerlessAws + "'");
    const auto wrapped = run_cli(command + " --serverless --run " + kRun + " --aws '" + kServerlessAws + "' --format json");
    REQUIRE(script.exit_code == 0);
    REQUIRE(wrapped.exit_code == 0);
    const Json document = Json::parse(wrapped.out);
    CHECK(document["kind"] == "spotdnn.script");
    CHECK(document["command"] == command + "-serverless");
    CHECK(document["run_id"] == kRun);
    CHECK(document["region"] == "us-east-1");
    CHECK(document["function_prefix"] == "spotdnn-" + kRun + "-");
    CHECK(document["bucket"] == "my-team-fasdl-" + kRun);
    CHECK(document["script"] == script.out);
  }
}

TEST_CASE("status and teardown --serverless refuse a bad run id and the wrong configuration with one line") {
  for (const std::string command : {"status", "teardown"}) {
    INFO(command);
    for (const std::string bad : {"'20261124-101500-*'", "latest", "'20261124-101500-3fa9c2,x'"}) {
      const auto r = run_cli(command + " --serverless --run " + bad + " --aws '" + kServerlessAws + "'");
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err_lines() == 1);
      CHECK(r.err.find("--run") != std::string::npos);
    }
    const auto spot_config = run_cli(command + " --serverless --run " + kRun + " --aws '" + kSpotAws + "'");
    CHECK(spot_config.exit_code == 2);
    CHECK(spot_config.err_lines() == 1);
    CHECK(spot_config.err.find("key aws.serverless is missing") != std::string::npos);

    const auto without_flag = run_cli(command + " --run " + kRun + " --aws '" + kServerlessAws + "'");
    CHECK(without_flag.exit_code == 2);
    CHECK(without_flag.err_lines() == 1);
    CHECK(without_flag.err.find("key aws.subnet_id is missing") != std::string::npos);
    CHECK(without_flag.err.find("--serverless") != std::string::npos);

    const auto no_run = run_cli(command + " --serverless --aws '" + kServerlessAws + "'");
    CHECK(no_run.exit_code == 2);
    CHECK(no_run.err.find("--run") != std::string::npos);
  }
}

TEST_CASE("the status and teardown help mention --serverless") {
  for (const std::string command : {"status", "teardown"}) {
    const auto help = run_cli(command + " --help");
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("--serverless") != std::string::npos);
  }
}
