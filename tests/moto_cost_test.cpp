// SPDX-License-Identifier: MIT
// `spotdnn cost` against a real moto_server with the real aws CLI: instances of a run (an on-demand
// parameter server, spot workers, one terminated) and one of another run are launched with
// `aws ec2 run-instances` and the launcher's tags; `cost` must bill exactly the run's instances, each by
// EC2 per-second billing (max(60 s, end − launch)) at the price moto's spot price history gives (read back
// here with the aws CLI, not assumed: moto 5.2 answers $0.00001 observed 2006-01-02 for every type and
// zone) or the catalog's on-demand price, and its totals must be the sums of its rows. One moto_server
// serves every case of this program. Each case prints "skipped: <why>" without moto_server or an aws CLI.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/io/aws/timestamp.hpp>
#include <spotdnn/launcher.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/moto_launch.hpp"

using namespace spotdnn;
using nlohmann::json;
using test::MotoCloud;
using test::ProcessResult;

namespace {

namespace fs = std::filesystem;

const std::string kRun = "20261124-080000-c0c0a0";
const std::string kOtherRun = "20261124-080000-0f0f0f";
constexpr double kPsPriceUsdPerHour = 0.192;  // the embedded catalog's parameter server, m5.xlarge

/// The run both cases bill: launched once into the program's one moto_server.
struct LaunchedRun {
  std::unique_ptr<MotoCloud> cloud;
  std::string aws_path;
  std::string ps_id;
  std::vector<std::string> worker_ids;  ///< spot g4dn.xlarge; the first one is terminated
  std::string other_run_id;
  double spot_price_usd_per_hour = 0;   ///< what moto's history says for g4dn.xlarge in us-east-1b
};

std::string run_one(const MotoCloud& cloud, const std::string& run, const std::string& role, const std::string& type, bool spot) {
  std::vector<std::string> args = {"ec2", "run-instances", "--image-id", "ami-0123456789abcdef0", "--instance-type", type,
                                   "--count", "1", "--subnet-id", cloud.subnet_id(), "--tag-specifications",
                                   "ResourceType=instance,Tags=[{Key=spotdnn:run,Value=" + run + "},{Key=spotdnn:role,Value=" + role +
                                       "},{Key=spotdnn:rank-base,Value=" + (role == "ps" ? "0" : "1") + "}]"};
  if (spot) args.insert(args.end(), {"--instance-market-options", "MarketType=spot"});
  return cloud.aws(args)["Instances"][0]["InstanceId"].get<std::string>();
}

/// Launched on first use; null when moto or the aws CLI is missing.
LaunchedRun* launched_run() {
  static std::unique_ptr<LaunchedRun> run = [] {
    std::unique_ptr<LaunchedRun> r;
    if (test::MotoServer::unavailable_reason()) return r;
    r = std::make_unique<LaunchedRun>();
    r->cloud = std::make_unique<MotoCloud>();
    const MotoCloud& cloud = *r->cloud;
    r->ps_id = run_one(cloud, kRun, "ps", "m5.xlarge", false);
    for (int k = 0; k < 3; ++k) r->worker_ids.push_back(run_one(cloud, kRun, "worker", "g4dn.xlarge", true));
    r->other_run_id = run_one(cloud, kOtherRun, "worker", "g4dn.xlarge", true);
    cloud.aws({"ec2", "terminate-instances", "--instance-ids", r->worker_ids[0]});
    const fs::path aws = cloud.dir().path() / "aws.json";
    test::write_text(aws, R"({"region": "us-east-1", "subnet_id": ")" + cloud.subnet_id() + R"(", "security_group_ids": [")" +
                              cloud.security_group_id() +
                              R"("], "image_id": "ami-0123456789abcdef0", "checkpoint_s3_uri": "s3://spotdnn-ckpt/runs"})");
    r->aws_path = aws.string();
    // The price moto's history has in force for g4dn.xlarge in us-east-1b (the latest record; its Linux rows).
    const json history = cloud.aws({"ec2", "describe-spot-price-history", "--instance-types", "g4dn.xlarge", "--availability-zone",
                                    "us-east-1b", "--product-descriptions", "Linux/UNIX", "Linux/UNIX (Amazon VPC)"});
    std::string latest;
    for (const json& row : history["SpotPriceHistory"]) {
      if (row["AvailabilityZone"] != "us-east-1b" || row["InstanceType"] != "g4dn.xlarge") continue;
      const std::string at = row["Timestamp"];
      const double price = std::stod(row["SpotPrice"].get<std::string>());
      if (latest.empty() || at > latest || (at == latest && price < r->spot_price_usd_per_hour)) {
        latest = at;
        r->spot_price_usd_per_hour = price;
      }
    }
    return r;
  }();
  return run.get();
}

ProcessResult run_cost(const LaunchedRun& run, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"cost", "--aws", run.aws_path};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_spotdnn(run.cloud->env(), argv, std::chrono::seconds(120));
}

/// Unix seconds of a document's "YYYY-MM-DDTHH:MM:SSZ".
double unix_s(const json& text) { return double(io::aws::parse_aws_timestamp(text.get<std::string>(), "test", "time")); }

}  // namespace

TEST_CASE("cost bills the run's moto instances by the second, terminated ones to their end, and its totals are the rows' sums") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  REQUIRE_MESSAGE(fs::exists(test::spotdnn_cli_path()), "build spotdnn_cli first: " << test::spotdnn_cli_path());
  const LaunchedRun& run = *launched_run();
  REQUIRE(run.spot_price_usd_per_hour > 0);
  const json ps = run.cloud->aws({"ec2", "describe-instances", "--instance-ids", run.ps_id})["Reservations"][0]["Instances"][0];
  const double launch = double(io::aws::parse_aws_timestamp(ps["LaunchTime"].get<std::string>(), "test", "LaunchTime"));
  const double now = launch + 7200;  // two hours after the launch: running instances are billed 7200 s
  const ProcessResult r = run_cost(run, {"--run", kRun, "--now", io::aws::format_utc_timestamp(std::int64_t(now)), "--format", "json"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["kind"] == "spotdnn.run_cost");
  CHECK(doc["schema_version"] == 1);
  CHECK(doc["run_id"] == kRun);
  REQUIRE(doc["instances"].size() == 4);
  double sum = 0;
  int terminated = 0;
  for (const json& row : doc["instances"]) {
    INFO(row.dump());
    CHECK(row["instance_id"] != run.other_run_id);
    REQUIRE(row["cost_usd"].is_number());
    const double start = unix_s(row["launch_time"]);
    const double end = row["end_time"].is_null() ? now : unix_s(row["end_time"]);
    const double billed = std::max(60.0, end - start);
    CHECK(row["billed_s"].get<double>() == billed);
    if (row["instance_id"] == run.ps_id) {
      CHECK(row["role"] == "ps");
      CHECK(row["market"] == "on-demand");
      CHECK(row["cost_usd"].get<double>() == doctest::Approx(kPsPriceUsdPerHour * billed / 3600).epsilon(1e-12));
    } else {
      CHECK(row["market"] == "spot");
      CHECK(row["zone"] == "us-east-1b");
      CHECK(row["price_usd_per_hour"].get<double>() == run.spot_price_usd_per_hour);
      CHECK(row["cost_usd"].get<double>() == doctest::Approx(run.spot_price_usd_per_hour * billed / 3600).epsilon(1e-12));
    }
    if (row["state"] == "terminated") {
      ++terminated;
      CHECK(row["instance_id"] == run.worker_ids[0]);
      CHECK(row["end_time"].is_string());
      CHECK(billed < 7200);  // terminated within seconds of its launch: billed the one-minute minimum or a little more
    }
    sum += row["cost_usd"].get<double>();
  }
  CHECK(terminated == 1);
  CHECK(doc["totals"]["complete"] == true);
  CHECK(doc["totals"]["cost_so_far_usd"].get<double>() == doctest::Approx(sum).epsilon(1e-12));
  CHECK(doc["plan"].is_null());

  const ProcessResult table = run_cost(run, {"--run", kRun, "--now", io::aws::format_utc_timestamp(std::int64_t(now))});
  INFO("table stderr: " << table.err);
  CHECK(table.exit_code == 0);
  CHECK(table.out.find(run.ps_id) != std::string::npos);
  CHECK(table.out.find(run.other_run_id) == std::string::npos);
  CHECK(table.out.find("cost so far: ") != std::string::npos);
}

TEST_CASE("with --plan, cost projects the running instances to the parameter server's launch plus the plan's deadline") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  const LaunchedRun& run = *launched_run();
  const fs::path plan = run.cloud->dir().path() / "plan.json";
  fs::copy_file(fs::path(SPOTDNN_TEST_SOURCE_DIR) / "tests" / "hostile" / "plan.json", plan, fs::copy_options::overwrite_existing);
  const json plan_doc = json::parse(test::moto_detail::read_file(plan));
  const double deadline_s = plan_doc["deadline_s"];
  const json ps = run.cloud->aws({"ec2", "describe-instances", "--instance-ids", run.ps_id})["Reservations"][0]["Instances"][0];
  const double launch = double(io::aws::parse_aws_timestamp(ps["LaunchTime"].get<std::string>(), "test", "LaunchTime"));
  const ProcessResult r = run_cost(run, {"--run", kRun, "--plan", plan.string(), "--now",
                                         io::aws::format_utc_timestamp(std::int64_t(launch + 600)), "--format", "json"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["plan"]["cost_usd"] == plan_doc["cost_usd"]);
  CHECK(doc["plan"]["deadline_s"].get<double>() == deadline_s);
  const double deadline = launch + deadline_s;
  CHECK(unix_s(doc["totals"]["deadline"]) == deadline);
  double sum = 0;
  for (const json& row : doc["instances"]) {
    INFO(row.dump());
    const double start = unix_s(row["launch_time"]);
    const double price = row["instance_id"] == run.ps_id ? kPsPriceUsdPerHour : run.spot_price_usd_per_hour;
    const double billed = row["end_time"].is_null() ? std::max(60.0, deadline - start) : row["billed_s"].get<double>();
    CHECK(row["projected_cost_usd"].get<double>() == doctest::Approx(price * billed / 3600).epsilon(1e-12));
    sum += row["projected_cost_usd"].get<double>();
  }
  CHECK(doc["totals"]["projected_total_usd"].get<double>() == doctest::Approx(sum).epsilon(1e-12));
}

TEST_CASE("cost of a run that has no instances exits 3 and says so") {
  SPOTDNN_SKIP_WITHOUT_MOTO();
  const LaunchedRun& run = *launched_run();
  const ProcessResult r = run_cost(run, {"--run", "20261124-080000-abcdef"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("no instances") != std::string::npos);
}
