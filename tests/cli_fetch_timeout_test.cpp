// SPDX-License-Identifier: MIT
// `spotdnn catalog fetch` (and the aws calls of cost and watch) never hang and leave nothing behind: a
// stand-in `aws` (a shell script in a directory whose name is unique, so its processes can be found in
// /proc by their command line) that hangs, closes its pipes early and hangs, forks a child that keeps the
// pipes open and exits, or exits non-zero; each run returns within --aws-timeout (1 s) plus one second. A
// SIGINT of spotdnn ends the aws call's process group first. An optional source that parses but fails
// validation, or answers with a web page, becomes a warning and a missing_sources entry without markup.
// --as-of does not move describe-spot-price-history's --start-time.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../examples/cli/process.hpp"
#include "support/run_command.hpp"
#include "support/stand_in_aws.hpp"
#include "support/live_processes.hpp"

using spotdnn::test::quote;
using spotdnn::test::read_text;
using spotdnn::test::recorded_calls;
using spotdnn::test::write_file;

using spotdnn::test::live_processes_with;

namespace {

namespace fs = std::filesystem;
using spotdnn::test::CommandResult;
using spotdnn::test::run_shell;
using Clock = std::chrono::steady_clock;

const std::string kFixtures = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/aws/";
const std::string kHostile = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/hostile/";
const std::string kCli = SPOTDNN_CLI_PATH;
constexpr double kTimeoutS = 1.0;  // --aws-timeout of every run here

/// A directory for one case whose path (unique to the case) marks the stand-in's processes, with
/// the fixtures as OP.json (sp, it, pr, q, dq, az, ps) and `aws`: a script that records its arguments to calls.log
/// (one per line, then --end--), sets $op from the call and $d to the directory, and then runs `body`.
struct StandIn {
  std::string dir;
  std::string aws;
};

StandIn stand_in(const std::string& name, const std::string& body) {
  StandIn s;
  s.dir = (fs::path(SPOTDNN_TEST_BINARY_DIR) / ("fetch_timeout_" + name)).string();
  fs::remove_all(s.dir);
  fs::create_directories(s.dir);
  s.aws = s.dir + "/aws";
  write_file(s.aws, "#!/bin/sh\n"
                    "d=" + quote(s.dir) + "\n"
                    "for a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$d/calls.log\"\n"
                    "echo --end-- >> \"$d/calls.log\"\n"
                    "case \"$*\" in\n"
                    "  *describe-spot-price-history*) op=sp ;;\n"
                    "  *describe-instance-types*) op=it ;;\n"
                    "  *get-products*) op=pr ;;\n"
                    "  *list-aws-default-service-quotas*) op=dq ;;\n"
                    "  *list-service-quotas*) op=q ;;\n"
                    "  *describe-availability-zones*) op=az ;;\n"
                    "  *get-spot-placement-scores*) op=ps ;;\n"
                    "  *) op=other ;;\n"
                    "esac\n" +
                        body + "\n");
  ::chmod(s.aws.c_str(), 0755);
  for (const auto& [op, file] : std::vector<std::pair<std::string, std::string>>{{"sp", "spot-price-history.json"},
                                                                                {"it", "instance-types.json"},
                                                                                {"pr", "pricing-products.json"},
                                                                                {"q", "service-quotas.json"},
                                                                                {"dq", "default-service-quotas.json"}}) {
    fs::copy_file(kFixtures + file, s.dir + "/" + op + ".json", fs::copy_options::overwrite_existing);
  }
  fs::copy_file(std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/skypilot/availability-zones-us-east-1.json", s.dir + "/az.json",
                fs::copy_options::overwrite_existing);
  write_file(s.dir + "/ps.json", R"({"SpotPlacementScores": [{"Region": "us-east-1", "AvailabilityZoneId": "use1-az1", "Score": 9}]})");
  return s;
}

struct Timed {
  CommandResult result;
  double seconds = 0;
};

/// `spotdnn ARGS --aws-cli STAND_IN --aws-timeout 1s` without AWS_ENDPOINT_URL, timed.
Timed run_with(const StandIn& s, const std::string& args) {
  const auto start = Clock::now();
  Timed t;
  t.result = run_shell("env -u AWS_ENDPOINT_URL " + quote(kCli) + " " + args + " --aws-cli " + quote(s.aws) + " --aws-timeout 1s");
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return t;
}

const std::string kFetch = "catalog fetch --region us-east-1 --types p3.2xlarge --as-of 2026-11-24T09:00:00Z";

/// Hangs, its pipes open (a background copy too, so the group has more than one process).
const std::string kHang = "(while :; do sleep 0.05; done) & while :; do sleep 0.05; done";

}  // namespace

TEST_CASE("catalog fetch returns within --aws-timeout plus one second when aws hangs, and leaves no process behind") {
  const StandIn s = stand_in("hang", kHang);
  const Timed t = run_with(s, kFetch);
  CHECK(t.result.exit_code == 1);
  CHECK(t.result.err_lines() == 1);
  CHECK(t.result.err.find("spot prices: aws ec2 describe-spot-price-history did not finish in time and was killed") != std::string::npos);
  CHECK(t.seconds >= kTimeoutS);
  CHECK(t.seconds < kTimeoutS + 1);
  CHECK(live_processes_with(s.dir) == 0);
}

TEST_CASE("catalog fetch returns within --aws-timeout plus one second when aws closes its pipes early and then hangs") {
  const StandIn s = stand_in("closed_pipes", "printf '{'; exec >&- 2>&-; " + kHang);
  const Timed t = run_with(s, kFetch);
  CHECK(t.result.exit_code == 1);
  CHECK(t.result.err.find("did not finish in time") != std::string::npos);
  CHECK(t.seconds < kTimeoutS + 1);
  CHECK(live_processes_with(s.dir) == 0);
}

TEST_CASE("catalog fetch returns within --aws-timeout plus one second when every aws call forks a child that keeps the pipes open") {
  // Each call prints its output and exits 0; its child goes on holding stdout and stderr.
  const StandIn s = stand_in("holder", "cat \"$d/$op.json\"; (while :; do sleep 0.05; done) & exit 0");
  const Timed t = run_with(s, kFetch);
  REQUIRE_MESSAGE(t.result.exit_code == 0, t.result.err);
  const nlohmann::json catalog = nlohmann::json::parse(t.result.out);
  CHECK(catalog["instance_types"][0]["name"] == "p3.2xlarge");
  CHECK(catalog["missing_sources"] == nlohmann::json({"advisor: not given"}));
  CHECK(recorded_calls(s.dir).size() == 7);
  CHECK(t.seconds < kTimeoutS + 1);
  CHECK(live_processes_with(s.dir) == 0);
}

TEST_CASE("catalog fetch exits 1 at once when aws exits non-zero, and an optional call that hangs is a missing source") {
  const StandIn s = stand_in("fails", "echo >&2; echo 'An error occurred (UnauthorizedOperation) when calling the "
                                      "DescribeSpotPriceHistory operation: not allowed' >&2; exit 254");
  const Timed t = run_with(s, kFetch);
  CHECK(t.result.exit_code == 1);
  CHECK(t.result.err.find("exited 254: An error occurred (UnauthorizedOperation)") != std::string::npos);
  CHECK(t.seconds < 1.0);
  CHECK(live_processes_with(s.dir) == 0);

  const StandIn q = stand_in("optional_hangs", "if [ $op = q ]; then " + kHang + "; fi; cat \"$d/$op.json\"");
  const Timed slow = run_with(q, kFetch);
  REQUIRE_MESSAGE(slow.result.exit_code == 0, slow.result.err);
  const nlohmann::json catalog = nlohmann::json::parse(slow.result.out);
  CHECK(catalog["missing_sources"] == nlohmann::json({"quotas: aws service-quotas list-service-quotas did not finish in time and was killed",
                                                      "advisor: not given"}));
  CHECK(slow.seconds < kTimeoutS + 1);
  CHECK(live_processes_with(q.dir) == 0);
}

TEST_CASE("a SIGINT or SIGTERM of spotdnn while an aws call runs ends the call's process group before spotdnn ends by it") {
  for (const int signo : {SIGINT, SIGTERM}) {
    INFO("signal " << signo);
    // The stand-in signals its parent, spotdnn, and hangs.
    const StandIn s = stand_in("signal" + std::to_string(signo), "kill -" + std::to_string(signo) + " $PPID; " + kHang);
    spotdnn::cli::ProcessOptions options;
    options.timeout = std::chrono::seconds(10);
    options.environment_overrides = {"AWS_ENDPOINT_URL="};
    const auto start = Clock::now();
    const spotdnn::cli::ProcessResult r =
        spotdnn::cli::run_process({kCli, "catalog", "fetch", "--region", "us-east-1", "--types", "p3.2xlarge", "--aws-cli", s.aws,
                                   "--aws-timeout", "5s"},
                                  options);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    CHECK(r.signal == signo);
    CHECK(r.out.empty());
    CHECK(seconds < 1.5);
    CHECK(live_processes_with(s.dir) == 0);
  }
}

TEST_CASE("the aws calls of cost and watch return within --aws-timeout plus one second when aws hangs, leaving no process behind") {
  const StandIn s = stand_in("cost_watch", kHang);
  const Timed cost = run_with(s, "cost --run 20261124-080000-a1b2c3 --aws " + quote(kHostile + "aws.json") + " --now 2026-11-24T10:00:00Z");
  CHECK(cost.result.exit_code == 1);
  CHECK(cost.result.err.find("did not finish in time") != std::string::npos);
  CHECK(cost.seconds < kTimeoutS + 1);
  CHECK(live_processes_with(s.dir) == 0);
  const Timed watch = run_with(s, "watch --run 20261124-080000-a1b2c3 --plan " + quote(kHostile + "plan.json") + " --aws " +
                                      quote(kHostile + "aws.json") + " --once");
  CHECK(watch.result.exit_code != 0);
  CHECK(watch.result.err.find("did not finish in time") != std::string::npos);
  CHECK(watch.seconds < kTimeoutS + 1);
  CHECK(live_processes_with(s.dir) == 0);
}

TEST_CASE("catalog fetch turns optional outputs that fail validation or are web pages into warnings and missing_sources without markup") {
  const StandIn s = stand_in("invalid_optional",
                             "case $op in\n"
                             "  q) cat \"$d/q.bad\" ;;\n"
                             "  pr) cat \"$d/pr.html\" ;;\n"
                             "  dq) printf '\\nAn error occurred (403) when calling the ListAWSDefaultServiceQuotas operation: "
                             "<!DOCTYPE html>\\n<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1>"
                             "<script>alert(1)</script></body></html>\\n' >&2; exit 255 ;;\n"
                             "  *) cat \"$d/$op.json\" ;;\n"
                             "esac");
  write_file(s.dir + "/q.bad", R"({"Quotas": "not a list"})");
  write_file(s.dir + "/pr.html", "\n<!DOCTYPE html>\n<html>\n<head><title>502 Bad\n  Gateway</title></head>\n<body>"
                                 "<p>The proxy said no.</p></body></html>\n");
  const Timed t = run_with(s, kFetch);
  REQUIRE_MESSAGE(t.result.exit_code == 0, t.result.err);
  const nlohmann::json catalog = nlohmann::json::parse(t.result.out);
  const std::vector<std::string> missing = catalog["missing_sources"].get<std::vector<std::string>>();
  REQUIRE(missing.size() == 4);
  CHECK(missing[0] == "on-demand prices: aws pricing get-products printed an HTTP error page (title: 502 Bad Gateway) instead of JSON");
  CHECK(missing[1] == "default quotas: aws service-quotas list-aws-default-service-quotas exited 255: An error occurred (403) when "
                      "calling the ListAWSDefaultServiceQuotas operation: an HTTP error page (title: 403 Forbidden)");
  CHECK(missing[2].rfind("quotas: aws service-quotas list-service-quotas printed output that is not usable: ", 0) == 0);
  CHECK(missing[3] == "advisor: not given");
  for (const std::string& entry : missing) {
    INFO(entry);
    CHECK(entry.find('<') == std::string::npos);
    CHECK(entry.size() <= 300 + 40);
  }
  CHECK(t.result.err.find("spotdnn catalog fetch: warning: quotas: aws service-quotas list-service-quotas printed output that is "
                          "not usable: ") != std::string::npos);
  CHECK(t.result.err.find("<script>") == std::string::npos);
  // Without quotas or default quotas, each type falls back to the per-type quota, with a warning.
  CHECK(catalog["instance_types"][0]["name"] == "p3.2xlarge");
}

TEST_CASE("catalog fetch asks for the spot prices at --start-time, else the clock: --as-of does not move it") {
  const StandIn s = stand_in("start_time", "cat \"$d/$op.json\"");
  const std::time_t before = std::time(nullptr);
  const Timed clock = run_with(s, kFetch);
  const std::time_t after = std::time(nullptr);
  REQUIRE_MESSAGE(clock.result.exit_code == 0, clock.result.err);
  std::vector<std::vector<std::string>> calls = recorded_calls(s.dir);
  REQUIRE(!calls.empty());
  std::string start_time;
  for (std::size_t k = 0; k + 1 < calls[0].size(); ++k) {
    if (calls[0][k] == "--start-time") start_time = calls[0][k + 1];
  }
  CHECK(start_time != "2026-11-24T09:00:00Z");
  std::tm parsed{};
  REQUIRE(::strptime(start_time.c_str(), "%Y-%m-%dT%H:%M:%SZ", &parsed) != nullptr);
  const std::time_t asked = ::timegm(&parsed);
  CHECK(asked >= before);
  CHECK(asked <= after);

  fs::remove(s.dir + "/calls.log");
  const Timed fixed = run_with(s, kFetch + " --start-time 2026-11-24T08:30:00+01:00");
  REQUIRE_MESSAGE(fixed.result.exit_code == 0, fixed.result.err);
  calls = recorded_calls(s.dir);
  REQUIRE(!calls.empty());
  bool found = false;
  for (std::size_t k = 0; k + 1 < calls[0].size(); ++k) found = found || (calls[0][k] == "--start-time" && calls[0][k + 1] == "2026-11-24T07:30:00Z");
  CHECK(found);
  const Timed bad = run_with(s, kFetch + " --start-time yesterday");
  CHECK(bad.result.exit_code == 2);
  CHECK(bad.result.err_lines() == 1);
}
