// SPDX-License-Identifier: MIT
// `spotdnn catalog import --skypilot` (every region of SkyPilot's AWS catalog, tests/fixtures/skypilot, on
// standard output or one file per region), Spot Placement Scores in `catalog import` (with the aws outputs,
// a SkyPilot catalog or a --base catalog), `catalog show` of them, and `catalog fetch` asking for them from a
// stand-in `aws` (a shell script that records its argv and prints saved outputs).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"
#include "support/stand_in_aws.hpp"

using spotdnn::test::quote;
using spotdnn::test::read_text;
using spotdnn::test::recorded_calls;
using spotdnn::test::write_file;

namespace {

using spotdnn::test::CommandResult;
using spotdnn::test::run_cli;
using spotdnn::test::run_shell;
namespace fs = std::filesystem;

const std::string kSource = std::string(SPOTDNN_TEST_SOURCE_DIR);
const std::string kCli = SPOTDNN_CLI_PATH;

const std::string kVms = quote(kSource + "/tests/fixtures/skypilot/vms.csv");
const std::string kZones = quote(kSource + "/tests/fixtures/skypilot/availability-zones-us-east-1.json");
const std::string kAwsFixtures = kSource + "/tests/fixtures/aws/";

/// A get-spot-placement-scores --single-availability-zone output for us-east-1 (use1-az4 is us-east-1a,
/// use1-az1 us-east-1c and use1-az2 us-east-1d in availability-zones-us-east-1.json).
const std::string kScoresJson = R"({"SpotPlacementScores": [
  {"Region": "us-east-1", "AvailabilityZoneId": "use1-az1", "Score": 9},
  {"Region": "us-east-1", "AvailabilityZoneId": "use1-az2", "Score": 3},
  {"Region": "us-east-1", "AvailabilityZoneId": "use1-az4", "Score": 7}]}
)";

/// A fresh directory under the test binary dir for one test case.
std::string fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(SPOTDNN_TEST_BINARY_DIR) / ("cli_catalog_sources_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

/// Every stderr line is a warning of `command` ("spotdnn catalog import: warning: ...").
bool only_warnings(const std::string& err, const std::string& command) {
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("spotdnn " + command + ": warning: ", 0) != 0) return false;
  }
  return true;
}

/// Checks a refusal: exit 2, nothing on stdout, one line on stderr containing every text of `named`.
void check_refused(const CommandResult& r, const std::vector<std::string>& named) {
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
  for (const std::string& text : named) CHECK_MESSAGE(r.err.find(text) != std::string::npos, r.err);
}

/// A stand-in `aws` in `dir`: appends its arguments (one per line, then "--end--") to dir/calls.log and
/// prints dir/OP.json for OP sp, it, pr, q, dq, az, ps; with dir/OP.fail it prints that file on stderr and
/// exits 254. The saved outputs start as the fixtures and kScoresJson.
void stand_in_aws(const std::string& dir) {
  const std::string script = dir + "/aws";
  write_file(script, "#!/bin/sh\n"
                     "d=" + quote(dir) + "\n"
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
                     "  *) op=unknown ;;\n"
                     "esac\n"
                     "if [ -f \"$d/$op.fail\" ]; then cat \"$d/$op.fail\" >&2; exit 254; fi\n"
                     "cat \"$d/$op.json\"\n");
  ::chmod(script.c_str(), 0755);
  for (const auto& [op, file] : std::vector<std::pair<std::string, std::string>>{{"sp", "spot-price-history.json"},
                                                                                {"it", "instance-types.json"},
                                                                                {"pr", "pricing-products.json"},
                                                                                {"q", "service-quotas.json"},
                                                                                {"dq", "default-service-quotas.json"}}) {
    fs::copy_file(kAwsFixtures + file, dir + "/" + op + ".json", fs::copy_options::overwrite_existing);
  }
  fs::copy_file(kSource + "/tests/fixtures/skypilot/availability-zones-us-east-1.json", dir + "/az.json",
                fs::copy_options::overwrite_existing);
  write_file(dir + "/ps.json", kScoresJson);
}

CommandResult fetch(const std::string& dir, const std::string& args) {
  return run_shell("env -u AWS_ENDPOINT_URL " + quote(kCli) + " catalog fetch --aws-cli " + quote(dir + "/aws") + " " + args);
}

}  // namespace

TEST_CASE("catalog import --skypilot with one --region prints that region's catalog, zone prices keyed by zone ID") {
  const CommandResult r = run_cli("catalog import --skypilot " + kVms + " --region us-east-1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const nlohmann::json catalog = nlohmann::json::parse(r.out);
  CHECK(catalog["region"] == "us-east-1");
  CHECK(catalog["instance_types"].size() == 5);
  bool saw_zone_id = false;
  for (const nlohmann::json& type : catalog["instance_types"]) {
    for (const auto& zone : type["zone_prices_usd_per_hour"].items()) saw_zone_id = saw_zone_id || zone.key().rfind("use1-az", 0) == 0;
  }
  CHECK(saw_zone_id);
  CHECK(catalog["missing_sources"][0].get<std::string>().rfind("quotas: not in a SkyPilot catalog", 0) == 0);
  CHECK(only_warnings(r.err, "catalog import"));
  CHECK(r.err.find("inf1.xlarge") != std::string::npos);  // Neuron devices are not GPUs: skipped with a warning

  // --availability-zones names the zone IDs; --quota-without-group sets every type's quota.
  const CommandResult named = run_cli("catalog import --skypilot " + kVms + " --region us-east-1 --availability-zones " + kZones +
                                      " --quota-without-group 7");
  REQUIRE_MESSAGE(named.exit_code == 0, named.err);
  const nlohmann::json named_catalog = nlohmann::json::parse(named.out);
  CHECK(named.out.find("use1-az") == std::string::npos);
  CHECK(named.out.find("\"us-east-1c\"") != std::string::npos);
  CHECK(named_catalog["instance_types"][0]["quota"] == 7);
}

TEST_CASE("catalog import --skypilot reads standard input and keeps a file of one region on standard output without --region") {
  const std::string dir = fresh_dir("stdin");
  std::istringstream lines(read_text(kSource + "/tests/fixtures/skypilot/vms.csv"));
  std::string header, line, west;
  std::getline(lines, header);
  west = header + "\n";
  while (std::getline(lines, line)) {
    if (line.find(",us-west-2,") != std::string::npos) west += line + "\n";
  }
  write_file(dir + "/west.csv", west);
  const CommandResult r = run_shell(quote(kCli) + " catalog import --skypilot - < " + quote(dir + "/west.csv"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(nlohmann::json::parse(r.out)["region"] == "us-west-2");
}

TEST_CASE("catalog import --skypilot of several regions needs --region or --output-dir, and --output-dir writes one catalog per region") {
  check_refused(run_cli("catalog import --skypilot " + kVms),
                {"has 3 regions (eu-west-1, us-east-1, us-west-2)", "--region R", "--output-dir DIR"});

  const std::string dir = fresh_dir("output_dir");
  const std::string out_dir = dir + "/catalogs";
  const CommandResult r = run_cli("catalog import --skypilot " + kVms + " --output-dir " + quote(out_dir));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(only_warnings(r.err, "catalog import"));
  for (const std::string region : {"eu-west-1", "us-east-1", "us-west-2"}) {
    INFO(region);
    const std::string path = out_dir + "/" + region + ".json";
    REQUIRE(fs::exists(path));
    CHECK(nlohmann::json::parse(read_text(path))["region"] == region);
    CHECK(r.out.find(path) != std::string::npos);
    const CommandResult shown = run_cli("catalog show --catalog " + quote(path));
    CHECK(shown.exit_code == 0);
  }
  CHECK(r.out.find("us-east-1    12      3          5            7") != std::string::npos);
  // Nothing but the catalogs is left in the directory (no temporary files).
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out_dir)) files += entry.is_regular_file() ? 1 : 0;
  CHECK(files == 3);

  // --format json: the same summary as JSON; two --region values, an existing directory written again.
  const CommandResult json = run_cli("catalog import --skypilot " + kVms + " --output-dir " + quote(out_dir) +
                                     " --region us-east-1 --region us-west-2 --format json");
  REQUIRE_MESSAGE(json.exit_code == 0, json.err);
  const nlohmann::json summary = nlohmann::json::parse(json.out);
  REQUIRE(summary["catalogs"].size() == 2);
  CHECK(summary["catalogs"][0]["region"] == "us-east-1");
  CHECK(summary["catalogs"][0]["rows"] == 12);
  CHECK(summary["catalogs"][0]["gpu_types"] == 5);
  CHECK(summary["catalogs"][0]["zone_prices"] == 7);
  CHECK(summary["catalogs"][1]["path"] == out_dir + "/us-west-2.json");
}

TEST_CASE("catalog import --output-dir refuses a file or a symbolic link and needs --skypilot") {
  const std::string dir = fresh_dir("output_dir_refused");
  write_file(dir + "/file", "x");
  check_refused(run_cli("catalog import --skypilot " + kVms + " --output-dir " + quote(dir + "/file")), {"--output-dir", "not a directory"});
  fs::create_directories(dir + "/real");
  fs::create_directory_symlink(dir + "/real", dir + "/link");
  check_refused(run_cli("catalog import --skypilot " + kVms + " --output-dir " + quote(dir + "/link")), {"--output-dir", "symbolic link"});
  CHECK(fs::is_empty(dir + "/real"));
  check_refused(run_cli("catalog import --region us-east-1 --output-dir " + quote(dir + "/new") + " --spot-prices " +
                        quote(kAwsFixtures + "spot-price-history.json") + " --instance-types " +
                        quote(kAwsFixtures + "instance-types.json")),
                {"--output-dir", "--skypilot"});
  CHECK(!fs::exists(dir + "/new"));
}

TEST_CASE("catalog import --skypilot cannot be combined with the aws outputs, --advisor or --base") {
  const std::string sp = quote(kAwsFixtures + "spot-price-history.json");
  for (const std::string option : {"--spot-prices", "--instance-types", "--on-demand-prices", "--quotas", "--default-quotas", "--advisor",
                                   "--base"}) {
    INFO(option);
    check_refused(run_cli("catalog import --skypilot " + kVms + " --region us-east-1 " + option + " " + sp), {"--skypilot", option});
  }
  check_refused(run_cli("catalog import --skypilot " + kVms + " --region eu-central-1"), {"eu-central-1"});
  check_refused(run_cli("catalog import --region us-east-1 --region us-west-2 --spot-prices " + sp + " --instance-types " +
                        quote(kAwsFixtures + "instance-types.json")),
                {"--region", "several only with --skypilot"});
  check_refused(run_cli("catalog import --spot-prices " + sp + " --instance-types " + quote(kAwsFixtures + "instance-types.json")),
                {"--region"});
  check_refused(run_cli("catalog import --region us-east-1 --instance-types " + quote(kAwsFixtures + "instance-types.json")),
                {"--spot-prices"});
}

TEST_CASE("catalog import --placement-scores adds the request's scores by zone name, and catalog show prints them") {
  const std::string dir = fresh_dir("scores");
  write_file(dir + "/ps.json", kScoresJson);
  const CommandResult r = run_cli("catalog import --skypilot " + kVms + " --region us-east-1 --availability-zones " + kZones +
                                  " --placement-scores " + quote(dir + "/ps.json") +
                                  " --placement-types p3.2xlarge,g4dn.xlarge --placement-capacity 4");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const nlohmann::json catalog = nlohmann::json::parse(r.out);
  REQUIRE(catalog["placement_scores"].size() == 3);
  CHECK(catalog["placement_scores"][0]["zone"] == "us-east-1c");
  CHECK(catalog["placement_scores"][0]["score"] == 9);
  CHECK(catalog["placement_scores"][0]["target_capacity"] == 4);
  CHECK(catalog["placement_scores"][0]["instance_types"] == nlohmann::json({"p3.2xlarge", "g4dn.xlarge"}));
  write_file(dir + "/catalog.json", r.out);

  const CommandResult shown = run_cli("catalog show --catalog " + quote(dir + "/catalog.json"));
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.err);
  CHECK(shown.out.find("placement scores") != std::string::npos);
  CHECK(shown.out.find("us-east-1d      3         4  p3.2xlarge,g4dn.xlarge") != std::string::npos);
  // A catalog without scores shows no such table.
  CHECK(run_cli("catalog show").out.find("placement scores") == std::string::npos);

  // The aws outputs import takes them too (region-wide scores, vCPU capacity).
  write_file(dir + "/region.json", R"({"SpotPlacementScores": [{"Region": "us-east-1", "Score": 5}]})");
  const CommandResult aws = run_cli("catalog import --region us-east-1 --spot-prices " + quote(kAwsFixtures + "spot-price-history.json") +
                                    " --instance-types " + quote(kAwsFixtures + "instance-types.json") + " --placement-scores " +
                                    quote(dir + "/region.json") + " --placement-types p3.2xlarge --placement-capacity 32 --placement-unit vcpu");
  REQUIRE_MESSAGE(aws.exit_code == 0, aws.err);
  const nlohmann::json region = nlohmann::json::parse(aws.out)["placement_scores"];
  REQUIRE(region.size() == 1);
  CHECK(region[0].value("zone", "") == "");
  CHECK(region[0]["score"] == 5);
  CHECK(region[0]["target_capacity_unit"] == "vcpu");
}

TEST_CASE("catalog import --base --placement-scores adds scores to an existing catalog, replacing the same question's") {
  const std::string dir = fresh_dir("base_scores");
  const CommandResult base = run_cli("catalog import --skypilot " + kVms + " --region us-east-1 --availability-zones " + kZones);
  REQUIRE(base.exit_code == 0);
  write_file(dir + "/base.json", base.out);
  write_file(dir + "/ps.json", kScoresJson);
  const std::string args = "catalog import --base " + quote(dir + "/base.json") + " --availability-zones " + kZones +
                           " --placement-scores " + quote(dir + "/ps.json") + " --placement-types p3.2xlarge --placement-capacity 2";
  const CommandResult r = run_cli(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  nlohmann::json catalog = nlohmann::json::parse(r.out);
  CHECK(catalog["placement_scores"].size() == 3);
  nlohmann::json without = catalog;
  without.erase("placement_scores");
  CHECK(without == nlohmann::json::parse(base.out));

  // The same request again (a newer answer) replaces the scores rather than adding to them.
  write_file(dir + "/with.json", r.out);
  write_file(dir + "/ps2.json", R"({"SpotPlacementScores": [{"Region": "us-east-1", "AvailabilityZoneId": "use1-az1", "Score": 2}]})");
  const CommandResult again = run_cli("catalog import --base " + quote(dir + "/with.json") + " --availability-zones " + kZones +
                                      " --placement-scores " + quote(dir + "/ps2.json") +
                                      " --placement-types p3.2xlarge --placement-capacity 2");
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  const nlohmann::json scores = nlohmann::json::parse(again.out)["placement_scores"];
  REQUIRE(scores.size() == 3);
  CHECK(scores[2]["zone"] == "us-east-1c");
  CHECK(scores[2]["score"] == 2);

  check_refused(run_cli(args + " --region us-west-2"), {"--region", "us-east-1"});
}

TEST_CASE("catalog import refuses placement-score options that do not describe a get-spot-placement-scores request") {
  const std::string dir = fresh_dir("scores_refused");
  write_file(dir + "/ps.json", kScoresJson);
  const std::string head = "catalog import --skypilot " + kVms + " --region us-east-1 ";
  const std::string ps = " --placement-scores " + quote(dir + "/ps.json");
  check_refused(run_cli(head + ps + " --placement-capacity 4"), {"--placement-types"});
  check_refused(run_cli(head + ps + " --placement-types p3.2xlarge"), {"--placement-capacity"});
  check_refused(run_cli(head + ps + " --placement-types p3.2xlarge --placement-capacity 0"), {"--placement-capacity"});
  check_refused(run_cli(head + ps + " --placement-types p3.2xlarge --placement-capacity 4 --placement-unit gpus"), {"--placement-unit"});
  check_refused(run_cli(head + ps + " --placement-types p3.2xlarge,p3.2xlarge --placement-capacity 4"), {"--placement-types", "twice"});
  check_refused(run_cli(head + " --placement-types p3.2xlarge --placement-capacity 4"), {"--placement-scores"});
  check_refused(run_cli(head + " --placement-scores " + quote(kAwsFixtures + "spot-price-history.json") +
                        " --placement-types p3.2xlarge --placement-capacity 4"),
                {"get-spot-placement-scores"});
  write_file(dir + "/bad.json", R"({"SpotPlacementScores": [{"Region": "us-east-1", "Score": 11}]})");
  check_refused(run_cli(head + " --placement-scores " + quote(dir + "/bad.json") + " --placement-types p3.2xlarge --placement-capacity 4"),
                {"Score", "11"});
}

TEST_CASE("catalog fetch asks for placement scores and zone names read-only, and a failure of either is a warning") {
  const std::string dir = fresh_dir("fetch");
  stand_in_aws(dir);
  const CommandResult r = fetch(dir, "--region us-east-1 --types p3.2xlarge --placement-capacity 4 --as-of 2026-11-24T09:00:00Z");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::vector<std::vector<std::string>> calls = recorded_calls(dir);
  REQUIRE(calls.size() == 7);
  CHECK(calls[5] == std::vector<std::string>{"ec2", "describe-availability-zones", "--region", "us-east-1", "--output", "json"});
  CHECK(calls[6] == std::vector<std::string>{"ec2", "get-spot-placement-scores", "--region", "us-east-1", "--instance-types",
                                             "p3.2xlarge", "--target-capacity", "4", "--single-availability-zone", "--region-names",
                                             "us-east-1", "--output", "json"});
  const nlohmann::json catalog = nlohmann::json::parse(r.out);
  REQUIRE(catalog["placement_scores"].size() == 3);
  CHECK(catalog["placement_scores"][1]["zone"] == "us-east-1d");
  CHECK(catalog["placement_scores"][1]["target_capacity"] == 4);
  CHECK(!catalog["placement_scores"][1].value("observed_at", "").empty());
  CHECK(catalog["missing_sources"] == nlohmann::json({"advisor: not given"}));

  // Without zone names the scores keep the zone IDs, with a warning; without scores the catalog says so.
  write_file(dir + "/az.fail", "An error occurred (UnauthorizedOperation) when calling the DescribeAvailabilityZones operation\n");
  write_file(dir + "/ps.fail", "An error occurred (UnauthorizedOperation) when calling the GetSpotPlacementScores operation\n");
  const CommandResult denied = fetch(dir, "--region us-east-1 --types p3.2xlarge --as-of 2026-11-24T09:00:00Z");
  REQUIRE_MESSAGE(denied.exit_code == 0, denied.err);
  const nlohmann::json without = nlohmann::json::parse(denied.out);
  CHECK(!without.contains("placement_scores"));
  CHECK(without["missing_sources"] ==
        nlohmann::json({"availability zones: aws ec2 describe-availability-zones exited 254: An error occurred (UnauthorizedOperation) "
                        "when calling the DescribeAvailabilityZones operation",
                        "placement scores: aws ec2 get-spot-placement-scores exited 254: An error occurred (UnauthorizedOperation) "
                        "when calling the GetSpotPlacementScores operation",
                        "advisor: not given"}));
  CHECK(only_warnings(denied.err, "catalog fetch"));
  CHECK(denied.err.find("placement scores: aws ec2 get-spot-placement-scores exited 254") != std::string::npos);

  fs::remove(dir + "/ps.fail");
  const CommandResult ids = fetch(dir, "--region us-east-1 --types p3.2xlarge --as-of 2026-11-24T09:00:00Z");
  REQUIRE_MESSAGE(ids.exit_code == 0, ids.err);
  CHECK(nlohmann::json::parse(ids.out)["placement_scores"][0]["zone"] == "use1-az1");
  CHECK(ids.err.find("zone IDs kept as IDs") != std::string::npos);

  // Output that is not a placement-score answer is a missing source too, never an abort.
  fs::remove(dir + "/az.fail");
  write_file(dir + "/ps.json", R"({"SpotPlacementScores": [{"Region": "us-east-1", "Score": 0}]})");
  const CommandResult bad = fetch(dir, "--region us-east-1 --types p3.2xlarge --as-of 2026-11-24T09:00:00Z");
  REQUIRE_MESSAGE(bad.exit_code == 0, bad.err);
  const nlohmann::json missing = nlohmann::json::parse(bad.out)["missing_sources"];
  REQUIRE(missing.size() == 2);
  CHECK(missing[0].get<std::string>().rfind("placement scores: aws ec2 get-spot-placement-scores printed output that is not usable: ", 0) == 0);
  check_refused(fetch(dir, "--region us-east-1 --types p3.2xlarge --placement-capacity 0"), {"--placement-capacity"});
}
