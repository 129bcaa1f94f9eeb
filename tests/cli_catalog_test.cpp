// SPDX-License-Identifier: MIT
// `spotdnn catalog import | fetch | show`: a catalog from saved AWS outputs (tests/fixtures/aws), from a
// stand-in `aws` program (a shell script that records its argv and prints saved outputs), and shown as a
// table or JSON; bad input is one line and exit 2, a failing environment exit 1.
#include <doctest/doctest.h>

#include <sys/stat.h>

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

const std::string kFixtures = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/aws/";
const std::string kCli = SPOTDNN_CLI_PATH;

std::string fixture(const std::string& name) { return quote(kFixtures + name); }

/// Every stderr line is a warning of `command` ("spotdnn catalog import: warning: ...").
bool only_warnings(const std::string& err, const std::string& command) {
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("spotdnn " + command + ": warning: ", 0) != 0) return false;
  }
  return true;
}

/// The fixture import every test compares with: all six sources, us-east-1, now 2026-11-24T09:00:00Z.
const std::string kImportAll = "catalog import --region us-east-1 --spot-prices " + fixture("spot-price-history.json") +
                               " --instance-types " + fixture("instance-types.json") + " --on-demand-prices " +
                               fixture("pricing-products.json") + " --quotas " + fixture("service-quotas.json") +
                               " --default-quotas " + fixture("default-service-quotas.json") + " --advisor " +
                               fixture("spot-advisor-data.json") + " --as-of 2026-11-24T09:00:00Z";

/// A fresh directory under the test binary dir for one test case.
std::string fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(SPOTDNN_TEST_BINARY_DIR) / ("cli_catalog_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

/// A stand-in `aws` in `dir`: appends its arguments (one per line, then "--end--") to dir/calls.log and
/// prints dir/OP.json for OP sp, it, pr, q, dq, az, ps (spot prices, instance types, pricing, quotas, default
/// quotas, availability zones, placement scores); with dir/OP.fail it prints an empty line and that file on stderr and exits 254; with
/// dir/OP.sleep it sleeps that many seconds first. The saved outputs start as the fixtures.
std::string stand_in_aws(const std::string& dir) {
  const std::string script = dir + "/aws";
  std::ofstream out(script);
  out << "#!/bin/sh\n"
         "d=" << quote(dir) << "\n"
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
         "if [ -f \"$d/$op.sleep\" ]; then sleep \"$(cat \"$d/$op.sleep\")\"; fi\n"
         "if [ -f \"$d/$op.fail\" ]; then echo >&2; cat \"$d/$op.fail\" >&2; exit 254; fi\n"
         "cat \"$d/$op.json\"\n";
  out.close();
  ::chmod(script.c_str(), 0755);
  fs::copy_file(kFixtures + "spot-price-history.json", dir + "/sp.json", fs::copy_options::overwrite_existing);
  fs::copy_file(kFixtures + "instance-types.json", dir + "/it.json", fs::copy_options::overwrite_existing);
  fs::copy_file(kFixtures + "pricing-products.json", dir + "/pr.json", fs::copy_options::overwrite_existing);
  fs::copy_file(kFixtures + "service-quotas.json", dir + "/q.json", fs::copy_options::overwrite_existing);
  fs::copy_file(kFixtures + "default-service-quotas.json", dir + "/dq.json", fs::copy_options::overwrite_existing);
  fs::copy_file(std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/skypilot/availability-zones-us-east-1.json", dir + "/az.json",
                fs::copy_options::overwrite_existing);
  std::ofstream(dir + "/ps.json") << "{\"SpotPlacementScores\": [{\"Region\": \"us-east-1\", \"AvailabilityZoneId\": \"use1-az1\", "
                                     "\"Score\": 9}, {\"Region\": \"us-east-1\", \"AvailabilityZoneId\": \"use1-az2\", \"Score\": 3}]}\n";
  return script;
}

/// `spotdnn catalog fetch ARGS` with the stand-in aws of `dir`, with AWS_ENDPOINT_URL set to `endpoint`
/// (unset when empty).
CommandResult fetch(const std::string& dir, const std::string& args, const std::string& endpoint = "") {
  const std::string env = endpoint.empty() ? "env -u AWS_ENDPOINT_URL " : "env AWS_ENDPOINT_URL=" + quote(endpoint) + " ";
  return run_shell(env + quote(kCli) + " catalog fetch --aws-cli " + quote(dir + "/aws") + " " + args);
}

}  // namespace

TEST_CASE("catalog import builds a validated catalog from saved AWS outputs and prints one warning line each on stderr") {
  const CommandResult r = run_cli(kImportAll);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const nlohmann::json catalog = nlohmann::json::parse(r.out);
  CHECK(catalog["region"] == "us-east-1");
  nlohmann::json p3;
  for (const nlohmann::json& type : catalog["instance_types"]) {
    if (type["name"] == "p3.2xlarge") p3 = type;
  }
  REQUIRE(p3.is_object());
  CHECK(p3["price_usd_per_hour"] == doctest::Approx(0.918));
  CHECK(p3["zone_prices_usd_per_hour"]["us-east-1b"] == doctest::Approx(0.918));
  CHECK(p3["price_observed_at"] == "2026-11-24T07:30:00Z");
  CHECK(p3["on_demand_price_usd_per_hour"] == doctest::Approx(3.06));
  CHECK(p3["quota_groups"]["spot"] == "L-7212CCBC");
  CHECK(catalog["quota_groups"]["L-7212CCBC"]["vcpus"] == 64);
  CHECK(!catalog.contains("missing_sources"));
  CHECK(only_warnings(r.err, "catalog import"));
  CHECK(r.err.find("g4dn.xlarge in us-east-1a: the latest spot price ($0.21/h, 2026-11-20T08:00:00Z) is 4.0 days old") !=
        std::string::npos);
  CHECK(r.err.find("skipped 2 rows that are not Linux/UNIX") != std::string::npos);
  // The same input and --as-of give the same output, byte for byte.
  const CommandResult again = run_cli(kImportAll);
  CHECK(again.out == r.out);
  CHECK(again.err == r.err);
}

TEST_CASE("catalog import without optional sources says in missing_sources what the catalog lacks") {
  const CommandResult r = run_cli("catalog import --region us-east-1 --spot-prices " + fixture("spot-price-history.json") +
                                  " --instance-types " + fixture("instance-types.json") + " --types p3.2xlarge,g4dn.xlarge");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const nlohmann::json catalog = nlohmann::json::parse(r.out);
  CHECK(catalog["instance_types"].size() == 2);
  CHECK(catalog["missing_sources"] ==
        nlohmann::json({"on-demand prices: not given", "quotas: not given", "default quotas: not given", "advisor: not given"}));
  CHECK(r.err.find("its quota is set to 16 instances") != std::string::npos);
}

TEST_CASE("catalog import reads one source from standard input and refuses two") {
  const CommandResult one = run_shell(quote(kCli) + " catalog import --region us-east-1 --spot-prices - --instance-types " +
                                      fixture("instance-types.json") + " < " + fixture("spot-price-history.json"));
  CHECK_MESSAGE(one.exit_code == 0, one.err);
  CHECK(one.err.find("<stdin>: skipped 2 rows") != std::string::npos);
  const CommandResult two = run_cli("catalog import --region us-east-1 --spot-prices - --instance-types -");
  CHECK(two.exit_code == 2);
  CHECK(two.out.empty());
  CHECK(two.err_lines() == 1);
  CHECK(two.err.find("--instance-types") != std::string::npos);
}

TEST_CASE("catalog import refuses a malformed output with one line naming the file, the field and the value") {
  std::string text = read_text(kFixtures + "spot-price-history.json");
  text.replace(text.find("\"0.918000\""), 10, "\"abc\"");
  const std::string path = spotdnn::test::write_temp_file("cli_catalog_bad_price.json", text);
  const CommandResult r = run_cli("catalog import --region us-east-1 --spot-prices " + quote(path) + " --instance-types " +
                                  fixture("instance-types.json"));
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("spotdnn catalog import: error: --spot-prices \"" + path + "\": SpotPriceHistory[3].SpotPrice = \"abc\"") !=
        std::string::npos);
}

TEST_CASE("catalog import refuses bad options with exit 2 and one line naming the option") {
  const std::string sources = " --spot-prices " + fixture("spot-price-history.json") + " --instance-types " + fixture("instance-types.json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"catalog import --region 'us-east-1;rm' " + sources, "--region"},
      {"catalog import --region us-east-1 --types p3.2xlarge,,g4dn.xlarge" + sources, "--types"},
      {"catalog import --region us-east-1 --types p3.2xlarge,p3.2xlarge" + sources, "--types"},
      {"catalog import --region us-east-1 --types=--help" + sources, "--types"},
      {"catalog import --region us-east-1 --as-of yesterday" + sources, "--as-of"},
      {"catalog import --region us-east-1 --as-of 2026-02-30T00:00:00Z" + sources, "--as-of"},
      {"catalog import --region us-east-1 --max-price-age -1h" + sources, "--max-price-age"},
      {"catalog import --region us-east-1 --quota-without-group -1" + sources, "--quota-without-group"},
      {"catalog import --region us-east-1 --spot-prices " + fixture("spot-price-history.json"), "--instance-types"},
      {"catalog import --region ap-south-1" + sources, "no Linux/UNIX spot price"},
      {"catalog import --region us-east-1 --base " + fixture("spot-price-history.json") + sources, "key catalog.region is missing"},
  };
  for (const auto& c : cases) {
    const std::string& args = c.first;
    const std::string& named = c.second;
    INFO(args);
    const CommandResult r = run_cli(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
  }
}

TEST_CASE("catalog show prints the preset with unknown price ages and no quota groups") {
  const CommandResult r = run_cli("catalog show --as-of 2026-11-24T09:00:00Z");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.empty());
  CHECK(r.out.find("catalog us-east-1: 5 instance types; parameter server m5.xlarge at $0.192/h on demand") != std::string::npos);
  CHECK(r.out.find("p3.2xlarge") != std::string::npos);
  CHECK(r.out.find("unknown") != std::string::npos);
  CHECK(r.out.find("quota groups: none given") != std::string::npos);
  CHECK(r.out.find("also counts the parameter server") == std::string::npos);
  CHECK(r.out.find("missing sources: none") != std::string::npos);
  // JSON: the preset's parameter server has no vCPUs or group to show.
  const nlohmann::json ps = nlohmann::json::parse(run_cli("catalog show --format json").out)["parameter_server"];
  CHECK_FALSE(ps.contains("vcpus"));
  CHECK_FALSE(ps.contains("quota_group"));
}

TEST_CASE("catalog show prints price ages, cheapest zones, quota groups and missing sources, and warns about stale prices") {
  const CommandResult imported = run_cli(kImportAll + " --types p3.2xlarge,g4dn.xlarge");
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.err);
  const std::string path = spotdnn::test::write_temp_file("cli_catalog_show.json", imported.out);
  const CommandResult r = run_cli("catalog show --catalog " + quote(path) + " --as-of 2026-11-24T10:42:00Z");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // p3.2xlarge's lowest price is us-east-1b's, observed 07:30: 3 h 12 min before 10:42.
  CHECK(r.out.find("3 h 12 min") != std::string::npos);
  CHECK(r.out.find("us-east-1b") != std::string::npos);
  CHECK(r.out.find("L-7212CCBC  spot          64  All P4, P3 and P2 Spot Instance Requests") != std::string::npos);
  // The parameter server's vCPUs and the on-demand group that counts it (describe-instance-types and the quotas).
  CHECK(r.out.find("parameter server m5.xlarge (4 vCPUs, on-demand quota group L-1216C47A) at $") != std::string::npos);
  CHECK(r.out.find("\n  L-1216C47A also counts the parameter server's 4 vCPUs (m5.xlarge, on demand): plans leave them free\n") !=
        std::string::npos);
  CHECK(r.out.find("missing sources: none") != std::string::npos);
  CHECK(r.err ==
        "spotdnn catalog show: warning: g4dn.xlarge: its price ($0.21/h, observed 2026-11-20T08:00:00Z) is 4 d 2 h old: fetch a "
        "fresh catalog (spotdnn catalog fetch) before planning\n");
  const CommandResult fresh = run_cli("catalog show --catalog " + quote(path) + " --as-of 2026-11-24T10:42:00Z --max-price-age 5d");
  CHECK(fresh.exit_code == 0);
  CHECK(fresh.err.empty());
  // JSON: the catalog itself, as imported.
  const CommandResult json = run_shell(quote(kCli) + " catalog show --format json --catalog - < " + quote(path));
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out) == nlohmann::json::parse(imported.out));
  const nlohmann::json ps = nlohmann::json::parse(json.out)["parameter_server"];
  CHECK(ps["vcpus"] == 4);
  CHECK(ps["quota_group"] == "L-1216C47A");
}

TEST_CASE("catalog show refuses a bad catalog or format with one line") {
  const CommandResult bad = run_cli("catalog show --catalog " + fixture("spot-price-history.json"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err_lines() == 1);
  CHECK(bad.err.find("--catalog \"" + kFixtures + "spot-price-history.json\": key catalog.region is missing") != std::string::npos);
  const CommandResult csv = run_cli("catalog show --format csv");
  CHECK(csv.exit_code == 2);
  CHECK(csv.err.find("--format") != std::string::npos);
}

TEST_CASE("catalog suggests the closest subcommand and help catalog import prints its options") {
  const CommandResult typo = run_cli("catalog fecth --region us-east-1");
  CHECK(typo.exit_code == 2);
  CHECK(typo.err_lines() == 1);
  CHECK(typo.err.find("did you mean `fetch`?") != std::string::npos);
  const CommandResult help = run_cli("help catalog import");
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--spot-prices") != std::string::npos);
  CHECK(help.out.find("--quota-without-group") != std::string::npos);
  const CommandResult group = run_cli("help catalog");
  CHECK(group.exit_code == 0);
  CHECK(group.out.find("fetch") != std::string::npos);
  const CommandResult listed = run_cli("--help");
  CHECK(listed.out.find("catalog") != std::string::npos);
}

TEST_CASE("catalog fetch runs the read-only aws calls with the exact argv and passes AWS_ENDPOINT_URL as --endpoint-url") {
  const std::string dir = fresh_dir("argv");
  const std::string aws = stand_in_aws(dir);
  const std::string endpoint = "http://127.0.0.1:4566";
  const CommandResult r = fetch(dir, "--region us-east-1 --types p3.2xlarge,g4dn.xlarge --as-of 2026-11-24T09:00:00Z --start-time 2026-11-24T09:00:00Z", endpoint);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::vector<std::vector<std::string>> calls = recorded_calls(dir);
  REQUIRE(calls.size() == 7);
  using Args = std::vector<std::string>;
  const Args e = {"--endpoint-url", endpoint};
  const auto with_endpoint = [&](Args args) {
    args.insert(args.begin(), e.begin(), e.end());
    return args;
  };
  CHECK(calls[0] == with_endpoint({"ec2", "describe-spot-price-history", "--region", "us-east-1", "--instance-types", "p3.2xlarge",
                                   "g4dn.xlarge", "--product-descriptions", "Linux/UNIX", "Linux/UNIX (Amazon VPC)", "--start-time",
                                   "2026-11-24T09:00:00Z", "--output", "json"}));
  // The parameter server's type is described too: its vCPUs count in its on-demand quota group.
  CHECK(calls[1] == with_endpoint({"ec2", "describe-instance-types", "--region", "us-east-1", "--instance-types", "p3.2xlarge",
                                   "g4dn.xlarge", "m5.xlarge", "--output", "json"}));
  CHECK(calls[2] == with_endpoint({"pricing", "get-products", "--region", "us-east-1", "--service-code", "AmazonEC2", "--filters",
                                   "Type=TERM_MATCH,Field=regionCode,Value=us-east-1",
                                   "Type=TERM_MATCH,Field=operatingSystem,Value=Linux", "Type=TERM_MATCH,Field=tenancy,Value=Shared",
                                   "Type=TERM_MATCH,Field=preInstalledSw,Value=NA", "Type=TERM_MATCH,Field=capacitystatus,Value=Used",
                                   "Type=ANY_OF,Field=instanceType,Value=\"p3.2xlarge,g4dn.xlarge,m5.xlarge\"", "--output", "json"}));
  CHECK(calls[3] == with_endpoint({"service-quotas", "list-service-quotas", "--service-code", "ec2", "--region", "us-east-1",
                                   "--output", "json"}));
  CHECK(calls[4] == with_endpoint({"service-quotas", "list-aws-default-service-quotas", "--service-code", "ec2", "--region",
                                   "us-east-1", "--output", "json"}));
  CHECK(calls[5] == with_endpoint({"ec2", "describe-availability-zones", "--region", "us-east-1", "--output", "json"}));
  CHECK(calls[6] == with_endpoint({"ec2", "get-spot-placement-scores", "--region", "us-east-1", "--instance-types", "p3.2xlarge",
                                   "g4dn.xlarge", "--target-capacity", "1", "--single-availability-zone", "--region-names",
                                   "us-east-1", "--output", "json"}));
  // The catalog is the one `catalog import` makes of the same outputs, with the placement scores added
  // (zone IDs named by describe-availability-zones).
  nlohmann::json fetched = nlohmann::json::parse(r.out);
  REQUIRE(fetched["placement_scores"].size() == 2);
  CHECK(fetched["placement_scores"][0]["zone"] == "us-east-1c");
  CHECK(fetched["placement_scores"][0]["score"] == 9);
  CHECK(fetched["placement_scores"][0]["target_capacity"] == 1);
  CHECK(fetched["placement_scores"][0]["instance_types"] == nlohmann::json({"p3.2xlarge", "g4dn.xlarge"}));
  CHECK(fetched["placement_scores"][1]["zone"] == "us-east-1d");
  fetched.erase("placement_scores");
  const CommandResult imported = run_cli(
      "catalog import --region us-east-1 --types p3.2xlarge,g4dn.xlarge --as-of 2026-11-24T09:00:00Z --spot-prices " +
      fixture("spot-price-history.json") + " --instance-types " + fixture("instance-types.json") + " --on-demand-prices " +
      fixture("pricing-products.json") + " --quotas " + fixture("service-quotas.json") + " --default-quotas " +
      fixture("default-service-quotas.json"));
  REQUIRE(imported.exit_code == 0);
  CHECK(fetched == nlohmann::json::parse(imported.out));
  CHECK(only_warnings(r.err, "catalog fetch"));
  CHECK(r.err.find("aws ec2 describe-spot-price-history: skipped 2 rows") != std::string::npos);
}

TEST_CASE("catalog fetch without AWS_ENDPOINT_URL passes no --endpoint-url and prices the base catalog's parameter server") {
  const std::string dir = fresh_dir("no_endpoint");
  stand_in_aws(dir);
  const CommandResult preset = run_cli("catalog show --format json");
  REQUIRE(preset.exit_code == 0);
  nlohmann::json base_catalog = nlohmann::json::parse(preset.out);
  base_catalog["parameter_server"]["type"] = "c5.xlarge";
  write_file(dir + "/base.json", base_catalog.dump());
  const CommandResult r = fetch(dir, "--region us-east-1 --types p3.2xlarge --base " + quote(dir + "/base.json"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::vector<std::vector<std::string>> calls = recorded_calls(dir);
  REQUIRE(calls.size() == 7);
  for (const std::vector<std::string>& call : calls) {
    REQUIRE(!call.empty());
    CHECK(call.front() != "--endpoint-url");
  }
  CHECK(calls[1] == std::vector<std::string>{"ec2", "describe-instance-types", "--region", "us-east-1", "--instance-types", "p3.2xlarge",
                                             "c5.xlarge", "--output", "json"});
  CHECK(calls[2][12] == "Type=ANY_OF,Field=instanceType,Value=\"p3.2xlarge,c5.xlarge\"");
}

TEST_CASE("catalog fetch turns a failing optional source into a warning and a missing_sources entry") {
  const std::string dir = fresh_dir("optional_fails");
  stand_in_aws(dir);
  write_file(dir + "/q.fail", "An error occurred (AccessDeniedException) when calling the ListServiceQuotas operation: no\n"
                              "second line\n");
  write_file(dir + "/pr.fail", "Parameter validation failed:\nInvalid type for parameter Filters[5].Value\n");
  const CommandResult r = fetch(dir, "--region us-east-1 --types p3.2xlarge --as-of 2026-11-24T09:00:00Z");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const nlohmann::json catalog = nlohmann::json::parse(r.out);
  CHECK(catalog["missing_sources"] ==
        nlohmann::json({"on-demand prices: aws pricing get-products exited 254: Parameter validation failed: Invalid type for "
                        "parameter Filters[5].Value",
                        "quotas: aws service-quotas list-service-quotas exited 254: An error occurred (AccessDeniedException) when "
                        "calling the ListServiceQuotas operation: no",
                        "advisor: not given"}));
  CHECK(r.err.find("spotdnn catalog fetch: warning: quotas: aws service-quotas list-service-quotas exited 254: An error occurred "
                   "(AccessDeniedException) when calling the ListServiceQuotas operation: no: the catalog goes without it\n") !=
        std::string::npos);
  CHECK(r.err.find("second line") == std::string::npos);
  // The default quotas still give the groups their values.
  CHECK(catalog["quota_groups"]["L-7212CCBC"]["vcpus"].is_number());
}

TEST_CASE("catalog fetch exits 1 quoting aws's first error line when a required source fails") {
  const std::string dir = fresh_dir("required_fails");
  stand_in_aws(dir);
  write_file(dir + "/it.fail", "An error occurred (InvalidInstanceType) when calling the DescribeInstanceTypes operation: "
                               "The following supplied instance types do not exist: [p3.2xlarge]\x1b[2J\n");
  const CommandResult r = fetch(dir, "--region us-east-1 --types p3.2xlarge");
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("spotdnn catalog fetch: error: instance types: aws ec2 describe-instance-types exited 254: An error occurred "
                   "(InvalidInstanceType)") != std::string::npos);
  CHECK(r.err.find('\x1b') == std::string::npos);
  // The pricing and quota calls never ran.
  CHECK(recorded_calls(dir).size() == 2);
}

TEST_CASE("catalog fetch exits 1 when the aws program cannot run or outlives --aws-timeout") {
  const std::string dir = fresh_dir("environment");
  stand_in_aws(dir);
  const CommandResult missing =
      run_cli("catalog fetch --region us-east-1 --types p3.2xlarge --aws-cli " + quote(dir + "/no-such-aws"));
  CHECK(missing.exit_code == 1);
  CHECK(missing.err_lines() == 1);
  CHECK(missing.err.find("spot prices: cannot run") != std::string::npos);
  CHECK(missing.err.find("--aws-cli") != std::string::npos);
  write_file(dir + "/sp.sleep", "30");
  const CommandResult slow = fetch(dir, "--region us-east-1 --types p3.2xlarge --aws-timeout 1s");
  CHECK(slow.exit_code == 1);
  CHECK(slow.err_lines() == 1);
  CHECK(slow.err.find("did not finish in time") != std::string::npos);
  // Not JSON on stdout from a required call is bad input, named after the call.
  fs::remove(dir + "/sp.sleep");
  write_file(dir + "/sp.json", "not json");
  const CommandResult garbage = fetch(dir, "--region us-east-1 --types p3.2xlarge");
  CHECK(garbage.exit_code == 2);
  CHECK(garbage.err_lines() == 1);
  CHECK(garbage.err.find("aws ec2 describe-spot-price-history") != std::string::npos);
}

TEST_CASE("catalog fetch requires --types and refuses names that could read as aws options") {
  const std::string dir = fresh_dir("bad_types");
  stand_in_aws(dir);
  for (const std::string& args : {std::string("--region us-east-1"), std::string("--region us-east-1 --types=--debug"),
                                  std::string("--region us-east-1 --types 'p3.2xlarge g5.xlarge'"),
                                  std::string("--region --endpoint-url --types p3.2xlarge")}) {
    INFO(args);
    const CommandResult r = fetch(dir, args);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
  }
  CHECK(!fs::exists(dir + "/calls.log"));
}
