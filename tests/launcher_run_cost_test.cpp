// SPDX-License-Identifier: MIT
// The cost of a run: run_instances_from_describe (only the run's instances, every field, hostile outputs
// refused naming the key path) and run_cost (per-second billing with the one-minute minimum, the spot
// price history integrated over each life, on-demand prices from the catalog, the free EC2 interruption
// in the first hour, projection to the deadline), checked against figures computed by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/io/json.hpp>
#include <spotdnn/launcher/run_cost.hpp>
#include <spotdnn/launcher/run_instances_json.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;
using launcher::RunInstance;
using launcher::SpotPriceBook;
using spotdnn::test::error_of;
using json = nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kRun = "20261124-080000-a1b2c3";
const std::string kOtherRun = "20261124-080000-ffffff";
constexpr double kT0 = 1795507200;  // 2026-11-24T08:00:00Z (1795507200 = days_from_civil(2026,11,24) * 86400 + 8 h)

json tag(const std::string& key, const std::string& value) { return {{"Key", key}, {"Value", value}}; }

/// One describe-instances Instance of run `run` (role worker, spot p3.2xlarge in us-east-1b, running).
json instance(const std::string& id, const std::string& run = kRun) {
  return {{"InstanceId", id},
          {"InstanceType", "p3.2xlarge"},
          {"InstanceLifecycle", "spot"},
          {"LaunchTime", "2026-11-24T08:00:00+00:00"},
          {"State", {{"Code", 16}, {"Name", "running"}}},
          {"StateTransitionReason", ""},
          {"Placement", {{"AvailabilityZone", "us-east-1b"}}},
          {"Tags", json::array({tag("spotdnn:run", run), tag("spotdnn:role", "worker"), tag("spotdnn:rank-base", "1")})}};
}

template <typename... Instances>
json describe(const Instances&... instances) {
  json reservation = {{"ReservationId", "r-0123"}, {"Instances", json::array()}};
  (reservation["Instances"].push_back(instances), ...);
  return {{"Reservations", json::array({reservation})}};
}

std::vector<RunInstance> parse(const json& output) { return launcher::run_instances_from_describe(output, kRun, "cost"); }

std::string refusal(const json& output) {
  return error_of([&] { (void)parse(output); });
}

RunInstance spot(const std::string& id, double launch, std::optional<double> end, const std::string& zone = "us-east-1b") {
  RunInstance r;
  r.instance_id = id;
  r.type = "p3.2xlarge";
  r.market = Market::spot;
  r.role = "worker";
  r.state = end ? "terminated" : "running";
  r.zone = zone;
  r.launch_time_unix_s = launch;
  r.end_time_unix_s = end;
  return r;
}

RunInstance ps(double launch, std::optional<double> end = std::nullopt) {
  RunInstance r = spot("i-0000000000000000a", launch, end);
  r.type = "m5.xlarge";
  r.market = Market::on_demand;
  r.role = "ps";
  return r;
}

/// A catalog with p3.2xlarge (on-demand $3.06/h) and the parameter server m5.xlarge at $0.192/h.
Catalog catalog() {
  Catalog c;
  c.region = "us-east-1";
  InstanceType p3;
  p3.name = "p3.2xlarge";
  p3.price_usd_per_hour = 0.918;
  p3.on_demand_price_usd_per_hour = 3.06;
  p3.quota = 10;
  c.instance_types.push_back(p3);
  c.parameter_server.type = "m5.xlarge";
  c.parameter_server.price_usd_per_hour = 0.192;
  return c;
}

/// p3.2xlarge in us-east-1b: $0.90/h from T0 − 1 h, $1.80/h from T0 + 30 min.
SpotPriceBook book() {
  SpotPriceBook b;
  b.add("p3.2xlarge", "us-east-1b", std::int64_t(kT0) - 3600, 0.90);
  b.add("p3.2xlarge", "us-east-1b", std::int64_t(kT0) + 1800, 1.80);
  return b;
}

}  // namespace

TEST_CASE("describe-instances is read into RunInstance with every field, and only the run's own instances") {
  json a = instance("i-0123456789abcdef0");
  a["State"] = {{"Code", 48}, {"Name", "terminated"}};
  a["StateReason"] = {{"Code", "Server.SpotInstanceTermination"}, {"Message", "Server.SpotInstanceTermination: ..."}};
  a["StateTransitionReason"] = "Service initiated (2026-11-24 09:30:15 GMT)";
  a["Tags"].push_back(tag("spotdnn:revoked", "2026-11-24T09:28:15Z"));
  a["Tags"].push_back(tag("spotdnn:action", "tok-1"));
  json b = instance("i-00000001");
  b.erase("InstanceLifecycle");
  b["InstanceType"] = "m5.xlarge";
  b["Tags"] = json::array({tag("spotdnn:run", kRun), tag("spotdnn:role", "ps"), tag("spotdnn:rank-base", "12345678")});
  const json other = instance("i-0fffffffffffffff0", kOtherRun);
  json untagged = instance("i-0eeeeeeeeeeeeeee0");
  untagged.erase("Tags");
  json prefix_run = instance("i-0ddddddddddddddd0", kRun + "x");
  const std::vector<RunInstance> got = parse(describe(other, a, untagged, b, prefix_run));
  REQUIRE(got.size() == 2);
  const RunInstance& first = got[0];  // sorted by instance ID: i-00000001 < i-0123...
  CHECK(first.instance_id == "i-00000001");
  CHECK(first.type == "m5.xlarge");
  CHECK(first.market == Market::on_demand);
  CHECK(first.role == "ps");
  CHECK_FALSE(first.rank_base.has_value());  // more than 7 digits: no rank base, as the scripts' rank rule
  CHECK(first.state == "running");
  CHECK_FALSE(first.end_time_unix_s.has_value());
  const RunInstance& second = got[1];
  CHECK(second.instance_id == "i-0123456789abcdef0");
  CHECK(second.market == Market::spot);
  CHECK(second.state == "terminated");
  CHECK(second.state_reason_code == "Server.SpotInstanceTermination");
  CHECK(second.zone == "us-east-1b");
  CHECK(second.launch_time_unix_s == kT0);
  REQUIRE(second.end_time_unix_s.has_value());
  CHECK(*second.end_time_unix_s == kT0 + 5415);  // 1 h 30 min 15 s
  CHECK(second.rank_base == 1L);
  CHECK(second.revocation_notice == "2026-11-24T09:28:15Z");
  CHECK(second.action_token == "tok-1");
  CHECK_FALSE(second.is_live());
}

TEST_CASE("an ordered JSON document parses the same, and an empty or absent reservation list gives no instances") {
  const io::Json ordered = io::parse_json(describe(instance("i-0123456789abcdef0")).dump(), "describe.json");
  CHECK(launcher::run_instances_from_describe(ordered, kRun, "cost").size() == 1);
  CHECK(parse(json{{"Reservations", json::array()}}).empty());
  CHECK(parse(json::object()).empty());
  CHECK(parse(describe(instance("i-0123456789abcdef0", kOtherRun))).empty());
}

TEST_CASE("a stopped or terminated instance without a time in its StateTransitionReason has no end time") {
  json a = instance("i-0123456789abcdef0");
  a["State"] = {{"Code", 48}, {"Name", "terminated"}};
  a["StateTransitionReason"] = "User initiated";
  json b = instance("i-0123456789abcdef1");
  b["State"] = {{"Code", 16}, {"Name", "running"}};
  b["StateTransitionReason"] = "User initiated (2026-11-24 09:00:00 GMT)";  // running: not an end
  const std::vector<RunInstance> got = parse(describe(a, b));
  REQUIRE(got.size() == 2);
  CHECK_FALSE(got[0].end_time_unix_s.has_value());
  CHECK_FALSE(got[1].end_time_unix_s.has_value());
}

TEST_CASE("hostile describe-instances outputs are refused naming the key path and the value") {
  const auto with = [](const std::string& key, const json& value) {
    json a = instance("i-0123456789abcdef0");
    a[key] = value;
    return describe(instance("i-0aaaaaaaaaaaaaaa0"), instance("i-0bbbbbbbbbbbbbbb0"), a);
  };
  CHECK(contains(refusal(with("LaunchTime", "noon")), "Reservations[0].Instances[2].LaunchTime = \"noon\""));
  CHECK(contains(refusal(with("LaunchTime", 5)), "Reservations[0].Instances[2].LaunchTime = 5: expected a string"));
  CHECK(contains(refusal(with("InstanceId", "i-XYZ; rm -rf /")), "Reservations[0].Instances[2].InstanceId"));
  CHECK(contains(refusal(with("InstanceId", "i-0123456")), "8 to 17"));
  CHECK(contains(refusal(with("InstanceId", "i-0123456789abcdef01")), "8 to 17"));
  CHECK(contains(refusal(with("InstanceType", "p3.2xlarge --debug")), "Instances[2].InstanceType"));
  CHECK(contains(refusal(with("State", {{"Name", "exploded"}})), "Instances[2].State.Name = \"exploded\""));
  CHECK(contains(refusal(with("State", "running")), "Instances[2].State = \"running\": expected a JSON object"));
  CHECK(contains(refusal(with("Placement", {{"AvailabilityZone", "us-east-1b\x1b[2J"}})), "Placement.AvailabilityZone"));
  CHECK(contains(refusal(with("Tags", {{{"Key", "spotdnn:role"}, {"Value", 7}}})), "Instances[2].Tags[0].Value = 7"));
  CHECK(contains(refusal(with("Tags", "spotdnn:run")), "Instances[2].Tags"));
  CHECK(contains(refusal(with("StateTransitionReason", json::array())), "StateTransitionReason"));
  CHECK(contains(refusal(with("LaunchTime", std::string(5000, '9'))), "longer than"));
  json late = instance("i-0123456789abcdef0");
  late["State"] = {{"Name", "terminated"}};
  late["StateTransitionReason"] = "User initiated (2026-11-24 07:00:00 GMT)";
  CHECK(contains(refusal(describe(late)), "before its LaunchTime"));
  late["StateTransitionReason"] = "User initiated (2026-02-30 07:00:00 GMT)";
  CHECK(contains(refusal(describe(late)), "no such day"));
  json missing = instance("i-0123456789abcdef0");
  missing.erase("InstanceId");
  CHECK(contains(refusal(describe(missing)), "Reservations[0].Instances[0].InstanceId = missing"));
  CHECK(contains(refusal(describe(instance("i-0123456789abcdef0"), instance("i-0123456789abcdef0"))), "listed twice"));
  CHECK(contains(refusal(json::array()), "expected a JSON object"));
  CHECK(contains(refusal(json{{"Reservations", json::array({json{{"Instances", 3}}})}}), "Reservations[0].Instances = 3"));
  // Another run's instance is skipped but still type-checked: a hostile listing is never half-read.
  json foreign = instance("i-0123456789abcdef0", kOtherRun);
  foreign["LaunchTime"] = "yesterday";
  CHECK(contains(refusal(describe(foreign)), "LaunchTime"));
  CHECK(contains(error_of([] { (void)launcher::run_instances_from_describe(json::object(), "*", "cost"); }), "run_id"));
}

TEST_CASE("more than 100000 instances in one output are refused before they are read") {
  json reservation = {{"Instances", json::array()}};
  reservation["Instances"].get_ref<json::array_t&>().resize(launcher::kMaxDescribedInstances + 1, json::object());
  CHECK(contains(refusal(json{{"Reservations", json::array({reservation})}}), "at most 100000"));
}

TEST_CASE("the spot cost integrates the price history: a price change in mid-life is charged from its time on") {
  const SpotPriceBook b = book();
  const std::vector<launcher::SpotPricePoint>& s = *b.series("p3.2xlarge", "us-east-1b");
  // 08:00 to 09:00: 30 min at $0.90/h and 30 min at $1.80/h = 0.45 + 0.90 = $1.35 (exact in binary to 1e-12).
  CHECK(*launcher::spot_cost_usd(s, kT0, kT0 + 3600) == doctest::Approx(1.35).epsilon(1e-12));
  // After the last record its price holds: 09:00 to 10:00 at $1.80/h.
  CHECK(*launcher::spot_cost_usd(s, kT0 + 3600, kT0 + 7200) == doctest::Approx(1.80).epsilon(1e-12));
  // A start before the first record has no price in force.
  CHECK_FALSE(launcher::spot_cost_usd(s, kT0 - 7200, kT0).has_value());
  CHECK(*launcher::spot_price_at(s, kT0 + 1799) == 0.90);
  CHECK(*launcher::spot_price_at(s, kT0 + 1800) == 1.80);
}

TEST_CASE("per-second billing: a minute minimum, and no charge when EC2 interrupts a spot instance in its first hour") {
  CHECK(launcher::billed_seconds(10, false) == 60);
  CHECK(launcher::billed_seconds(61, false) == 61);
  CHECK(launcher::billed_seconds(-5, false) == 60);
  CHECK(launcher::billed_seconds(3599, true) == 0);
  CHECK(launcher::billed_seconds(3700, true) == 3700);
}

TEST_CASE("run_cost bills each instance by hand-computed figures and sums them, the parameter server included") {
  const double now = kT0 + 7200;  // 10:00
  std::vector<RunInstance> run;
  run.push_back(ps(kT0));                                          // m5.xlarge on demand, running 2 h: 0.192 * 2 = 0.384
  run.push_back(spot("i-0000000000000000b", kT0, kT0 + 3600));     // terminated by the user at 09:00: 1.35
  run.push_back(spot("i-0000000000000000c", kT0 + 1800, kT0 + 1810));  // 10 s billed as 60 s at $1.80/h: 0.03
  RunInstance interrupted = spot("i-0000000000000000d", kT0, kT0 + 1200);
  interrupted.state_reason_code = "Server.SpotInstanceTermination";  // EC2 interrupted it after 20 min: free
  run.push_back(interrupted);
  run.push_back(spot("i-0000000000000000e", kT0 + 3600, std::nullopt));  // running 09:00 to now: 1.80
  launcher::RunCostOptions options;
  options.now_unix_s = now;
  const launcher::RunCost cost = launcher::run_cost(run, book(), catalog(), options);
  REQUIRE(cost.instances.size() == 5);
  CHECK(cost.complete);
  CHECK(cost.instances[0].billed_s == 7200);
  CHECK(*cost.instances[0].cost_usd == doctest::Approx(0.384).epsilon(1e-12));
  CHECK(*cost.instances[0].price_usd_per_hour == 0.192);
  CHECK(*cost.instances[1].cost_usd == doctest::Approx(1.35).epsilon(1e-12));
  CHECK(*cost.instances[1].on_demand_cost_usd == doctest::Approx(3.06).epsilon(1e-12));
  CHECK(cost.instances[2].run_s == 10);
  CHECK(cost.instances[2].billed_s == 60);
  CHECK(*cost.instances[2].cost_usd == doctest::Approx(0.03).epsilon(1e-12));
  CHECK(cost.instances[3].interrupted_by_ec2);
  CHECK(cost.instances[3].billed_s == 0);
  CHECK(*cost.instances[3].cost_usd == 0);
  CHECK_FALSE(cost.instances[4].ended);
  CHECK(cost.instances[4].end_unix_s == now);
  CHECK(*cost.instances[4].cost_usd == doctest::Approx(1.80).epsilon(1e-12));
  CHECK(cost.cost_so_far_usd == doctest::Approx(0.384 + 1.35 + 0.03 + 0 + 1.80).epsilon(1e-12));
  CHECK_FALSE(cost.deadline_unix_s.has_value());
  CHECK_FALSE(cost.projected_total_usd.has_value());
}

TEST_CASE("with a deadline, live instances are projected to the parameter server's launch plus deadline_s") {
  std::vector<RunInstance> run;
  run.push_back(ps(kT0));
  run.push_back(spot("i-0000000000000000b", kT0, kT0 + 3600));
  run.push_back(spot("i-0000000000000000e", kT0 + 3600, std::nullopt));
  launcher::RunCostOptions options;
  options.now_unix_s = kT0 + 5400;  // 09:30
  options.deadline_s = 4 * 3600;    // 12:00
  const launcher::RunCost cost = launcher::run_cost(run, book(), catalog(), options);
  REQUIRE(cost.deadline_unix_s.has_value());
  CHECK(*cost.deadline_unix_s == kT0 + 4 * 3600);
  // PS: 4 h x 0.192 = 0.768; terminated worker: 1.35 as so far; running worker 09:00-12:00 at 1.80 = 5.40.
  CHECK(*cost.instances[0].projected_cost_usd == doctest::Approx(0.768).epsilon(1e-12));
  CHECK(*cost.instances[1].projected_cost_usd == doctest::Approx(1.35).epsilon(1e-12));
  CHECK(*cost.instances[2].projected_cost_usd == doctest::Approx(5.40).epsilon(1e-12));
  CHECK(*cost.projected_total_usd == doctest::Approx(0.768 + 1.35 + 5.40).epsilon(1e-12));
  CHECK(cost.cost_so_far_usd == doctest::Approx(0.192 * 1.5 + 1.35 + 0.90).epsilon(1e-12));
  // A deadline already past projects to now: the projection equals the cost so far.
  options.deadline_s = 600;
  const launcher::RunCost past = launcher::run_cost(run, book(), catalog(), options);
  CHECK(*past.projected_total_usd == doctest::Approx(past.cost_so_far_usd).epsilon(1e-12));
}

TEST_CASE("a missing price marks the row and the totals incomplete instead of guessing") {
  std::vector<RunInstance> run;
  run.push_back(spot("i-0000000000000000b", kT0, kT0 + 3600, "us-east-1c"));  // no history in us-east-1c
  run.push_back(spot("i-0000000000000000c", kT0 - 7200, kT0));                // launched before the first record
  RunInstance unknown = ps(kT0);
  unknown.type = "x9.huge";  // not in the catalog
  run.push_back(unknown);
  RunInstance no_end = spot("i-0000000000000000d", kT0, std::nullopt);
  no_end.state = "terminated";
  run.push_back(no_end);
  run.push_back(spot("i-0000000000000000e", kT0, kT0 + 60));
  launcher::RunCostOptions options;
  options.now_unix_s = kT0 + 7200;
  options.deadline_s = 3600;
  const launcher::RunCost cost = launcher::run_cost(run, book(), catalog(), options);
  CHECK_FALSE(cost.complete);
  REQUIRE(cost.missing.size() == 4);
  CHECK(contains(cost.instances[0].missing, "no spot price record for p3.2xlarge in us-east-1c"));
  CHECK(contains(cost.instances[1].missing, "at or before its launch 2026-11-24T06:00:00Z"));
  CHECK(contains(cost.instances[2].missing, "no on-demand price for x9.huge"));
  CHECK(contains(cost.instances[3].missing, "no end time"));
  CHECK(*cost.instances[4].cost_usd == doctest::Approx(0.015).epsilon(1e-12));
  CHECK(cost.cost_so_far_usd == doctest::Approx(0.015).epsilon(1e-12));
  CHECK_FALSE(cost.projected_total_usd.has_value());
}

TEST_CASE("a describe-spot-price-history output fills the book, Linux rows only, the lower of two Linux prices at one time") {
  const io::Json output = io::parse_json(R"json({"SpotPriceHistory": [
    {"AvailabilityZone": "us-east-1b", "InstanceType": "p3.2xlarge", "ProductDescription": "Linux/UNIX",
     "SpotPrice": "0.900000", "Timestamp": "2026-11-24T07:00:00+00:00"},
    {"AvailabilityZone": "us-east-1b", "InstanceType": "p3.2xlarge", "ProductDescription": "Linux/UNIX (Amazon VPC)",
     "SpotPrice": "0.850000", "Timestamp": "2026-11-24T07:00:00+00:00"},
    {"AvailabilityZone": "us-east-1b", "InstanceType": "p3.2xlarge", "ProductDescription": "Windows",
     "SpotPrice": "9.000000", "Timestamp": "2026-11-24T08:00:00+00:00"},
    {"AvailabilityZone": "us-east-1b", "InstanceType": "p3.2xlarge", "ProductDescription": "Linux/UNIX",
     "SpotPrice": "1.800000", "Timestamp": "2026-11-24T08:30:00.000Z"}]})json",
                                         "sp.json");
  SpotPriceBook b;
  launcher::add_spot_price_history(b, output, "sp.json");
  const auto* s = b.series("p3.2xlarge", "us-east-1b");
  REQUIRE(s != nullptr);
  REQUIRE(s->size() == 2);
  CHECK((*s)[0].price_usd_per_hour == 0.85);
  CHECK((*s)[1].at_unix_s == std::int64_t(kT0) + 1800);
  launcher::add_spot_price_history(b, io::parse_json(R"({"SpotPriceHistory": []})", "empty.json"), "empty.json");
  CHECK(b.size() == 1);
  CHECK(contains(error_of([&] {
                   launcher::add_spot_price_history(
                       b, io::parse_json(R"({"SpotPriceHistory": [{"AvailabilityZone": "us-east-1b", "InstanceType": "p3.2xlarge",
                       "ProductDescription": "Linux/UNIX", "SpotPrice": "-1", "Timestamp": "2026-11-24T07:00:00Z"}]})", "bad.json"),
                       "bad.json");
                 }),
                 "SpotPriceHistory[0].SpotPrice"));
}
