// SPDX-License-Identifier: MIT
// `spotdnn catalog fetch` against a real moto_server with the real aws CLI: the EC2 calls (spot price
// history, instance types) answer; moto has no Pricing API and no EC2 service quotas, so those optional
// sources fail into warnings and missing_sources; the fetched catalog then plans. moto 5.2 knows g4dn and
// g5 (no p3, g3 or p2 any more); its spot prices are all $0.00001 observed 2006-01-02T15:04:05Z.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/moto_launch.hpp"

namespace {

namespace fs = std::filesystem;
using spotdnn::test::AwsTestEnv;
using spotdnn::test::MotoServer;
using spotdnn::test::ProcessResult;

std::string header(const nlohmann::json& call, const std::string& name) {
  for (const auto& [key, value] : call["headers"].items()) {
    std::string lower = key;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (lower == name && value.is_string()) return value.get<std::string>();
  }
  return "";
}

}  // namespace

TEST_CASE("catalog fetch against moto imports the EC2 outputs, records the missing Pricing and quota sources, and the catalog plans") {
  if (const auto why = MotoServer::unavailable_reason()) {
    MESSAGE("skipped: " << *why);
    return;
  }
  REQUIRE_MESSAGE(fs::exists(spotdnn::test::spotdnn_cli_path()), "build spotdnn_cli first: " << spotdnn::test::spotdnn_cli_path());
  const fs::path dir = fs::path(SPOTDNN_TEST_BINARY_DIR) / "moto_catalog_fetch";
  fs::remove_all(dir);
  MotoServer moto(dir);
  const AwsTestEnv env = spotdnn::test::aws_test_env(moto.url());
  moto.start_recording();

  const ProcessResult fetched = run_spotdnn(env, {"catalog", "fetch", "--region", "us-east-1", "--types", "g4dn.4xlarge,g5.xlarge",
                                                  "--as-of", "2026-11-24T09:00:00Z", "--start-time", "2026-11-24T09:00:00Z"});
  INFO("stderr: " << fetched.err);
  REQUIRE(fetched.exit_code == 0);
  const nlohmann::json catalog = nlohmann::json::parse(fetched.out);
  REQUIRE(catalog["instance_types"].size() == 2);
  const nlohmann::json& g4dn = catalog["instance_types"][0];
  const nlohmann::json& g5 = catalog["instance_types"][1];
  CHECK(g4dn["name"] == "g4dn.4xlarge");
  CHECK(g4dn["gpu_model"] == "T4");
  CHECK(g4dn["vcpus"] == 16);
  CHECK(g4dn["zone_prices_usd_per_hour"].size() >= 2);
  CHECK(g4dn["quota_groups"]["spot"] == "L-3819A6DF");
  CHECK(g5["name"] == "g5.xlarge");
  CHECK(g5["gpu_model"] == "A10G");
  CHECK(g5["gpus"] == 1);
  const std::vector<std::string> missing = catalog["missing_sources"].get<std::vector<std::string>>();
  // moto 5.2 does not implement GetSpotPlacementScores: the placement scores are a missing source too
  // (describe-availability-zones it answers).
  REQUIRE(missing.size() == 5);
  CHECK(missing[0].rfind("on-demand prices: aws pricing get-products exited ", 0) == 0);
  CHECK(missing[1].rfind("quotas: aws service-quotas list-service-quotas exited ", 0) == 0);
  CHECK(missing[2].rfind("default quotas: aws service-quotas list-aws-default-service-quotas exited ", 0) == 0);
  CHECK(missing[3].rfind("placement scores: aws ec2 get-spot-placement-scores ", 0) == 0);
  CHECK(missing[4] == "advisor: not given");
  CHECK(fetched.err.find("spotdnn catalog fetch: warning: quotas: aws service-quotas list-service-quotas exited") != std::string::npos);
  CHECK(fetched.err.find("is 7630.7 days old") != std::string::npos);

  // Read-only: every request moto saw describes or lists; nothing was created.
  std::vector<std::string> seen;
  for (const nlohmann::json& call : moto.recording()) {
    const std::string action = call["Action"];
    const std::string target = header(call, "x-amz-target");
    seen.push_back(action.empty() ? target : action);
    CHECK_MESSAGE((action.rfind("Describe", 0) == 0 || action.rfind("Get", 0) == 0 || target.find(".Get") != std::string::npos ||
                   target.find(".List") != std::string::npos),
                  "a call that is not read-only: " << call.dump());
  }
  CHECK(std::find(seen.begin(), seen.end(), "DescribeSpotPriceHistory") != seen.end());
  CHECK(std::find(seen.begin(), seen.end(), "DescribeInstanceTypes") != seen.end());
  // The parameter server's type is described beside the GPU types: its vCPUs are known.
  CHECK(catalog["parameter_server"]["type"] == "m5.xlarge");
  CHECK(catalog["parameter_server"].value("vcpus", 0) == 4);
  const std::vector<nlohmann::json> described = moto.recorded_calls("DescribeInstanceTypes");
  REQUIRE(described.size() == 1);
  CHECK(described[0]["params"].value("InstanceType.3", "") == "m5.xlarge");
  for (const nlohmann::json& call : moto.recorded_calls("DescribeSpotPriceHistory")) {
    CHECK(call["params"].value("InstanceType.1", "") == "g4dn.4xlarge");
    CHECK(call["params"].value("StartTime", "") == "2026-11-24T09:00:00Z");
  }

  // The fetched catalog plans: g4dn.4xlarge has a profile in the preset workload, g5.xlarge does not.
  const std::string path = (dir / "fetched.json").string();
  std::ofstream(path) << fetched.out;
  const ProcessResult plan = run_spotdnn(env, {"plan", "--catalog", path, "--target-loss", "0.8", "--deadline", "20h", "--format", "json"});
  INFO("plan stderr: " << plan.err);
  REQUIRE(plan.exit_code == 0);
  const nlohmann::json planned = nlohmann::json::parse(plan.out);
  CHECK(planned["status"] == "optimal");
  CHECK(planned["cluster"].contains("g4dn.4xlarge"));
  CHECK(planned["zone"].is_string());
  CHECK(!planned["cluster"].contains("g5.xlarge"));
  // With an estimate scaled from g4dn.4xlarge by GPU peak throughput, g5.xlarge can be planned too.
  const ProcessResult estimated = run_spotdnn(env, {"plan", "--catalog", path, "--target-loss", "0.8", "--deadline", "20h",
                                                    "--estimate-profiles-from", "g4dn.4xlarge", "--format", "json"});
  REQUIRE(estimated.exit_code == 0);
  CHECK(nlohmann::json::parse(estimated.out)["estimated_profiles"].contains("g5.xlarge"));
}

TEST_CASE("catalog fetch passes --endpoint-url itself, so an aws CLI that ignores AWS_ENDPOINT_URL still reaches moto") {
  if (const auto why = MotoServer::unavailable_reason()) {
    MESSAGE("skipped: " << *why);
    return;
  }
  REQUIRE_MESSAGE(fs::exists(spotdnn::test::spotdnn_cli_path()), "build spotdnn_cli first: " << spotdnn::test::spotdnn_cli_path());
  std::optional<spotdnn::test::AwsCli> old_cli;
  for (const spotdnn::test::AwsCli& cli : spotdnn::test::aws_cli_candidates()) {
    if (!cli.honours_endpoint_env()) old_cli = cli;
  }
  if (!old_cli) {
    MESSAGE("skipped: every aws CLI here honours AWS_ENDPOINT_URL (no aws-cli older than 2.13 / 1.29)");
    return;
  }
  const fs::path dir = fs::path(SPOTDNN_TEST_BINARY_DIR) / "moto_catalog_fetch_old_cli";
  fs::remove_all(dir);
  MotoServer moto(dir);
  // The environment's proxy guard makes a call that misses the endpoint fail instead of reaching AWS.
  const AwsTestEnv env = spotdnn::test::aws_test_env(moto.url(), *old_cli);
  const ProcessResult fetched = run_spotdnn(env, {"catalog", "fetch", "--region", "us-east-1", "--types", "g4dn.xlarge",
                                                  "--aws-cli", old_cli->path, "--as-of", "2026-11-24T09:00:00Z"});
  INFO(old_cli->path << " " << old_cli->version << " stderr: " << fetched.err);
  REQUIRE(fetched.exit_code == 0);
  CHECK(nlohmann::json::parse(fetched.out)["instance_types"][0]["name"] == "g4dn.xlarge");
}
