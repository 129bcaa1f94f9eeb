// SPDX-License-Identifier: MIT
// An AWS configuration of several regions: the `regions` map {REGION: settings} beside the flat
// one-region form (never both), the keys its top level shares with every region, the strict reading and
// validation of every entry, the pick of the plan's region's settings for a launch (a region without an
// entry refused naming the regions there are), and the region, AMI and subnet of the script written.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher.hpp>
#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher/serverless_launch_script.hpp>

#include "support/error_of.hpp"
#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using launcher::AwsConfig;
using launcher::AwsConfigUse;
using launcher::AwsRegionConfigs;
using launcher::LaunchPlan;
using spotdnn::test::error_of;
using json = io::Json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kEastSubnet = "subnet-0eeeeeeeeeeeeeee1";
const std::string kWestSubnetA = "subnet-0aaaaaaaaaaaaaaa2";
const std::string kWestSubnetB = "subnet-0bbbbbbbbbbbbbbb2";
const std::string kEastAmi = "ami-0eeeeeeeeeeeeeee1";
const std::string kWestAmi = "ami-0aaaaaaaaaaaaaaa2";

/// Two regions: us-east-1 (one subnet, its own tags) and us-west-2 (two zones, a GPU AMI), sharing the
/// checkpoint URI, key name, tags and training command at the top level.
json two_region_json() {
  return json::parse(R"({
    "checkpoint_s3_uri": "s3://team-bucket/ckpt",
    "key_name": "team-key",
    "tags": {"Project": "resnet"},
    "training_command": "python3 train.py",
    "poll_interval_s": 2,
    "regions": {
      "us-east-1": {"subnet_id": ")" + kEastSubnet + R"(", "security_group_ids": ["sg-0eeeeeeeeeeeeeee1"],
                    "image_id": ")" + kEastAmi + R"(", "tags": {"Team": "east"}},
      "us-west-2": {"subnet_ids": {"us-west-2a": ")" + kWestSubnetA + R"(", "us-west-2b": ")" + kWestSubnetB + R"("},
                    "security_group_ids": ["sg-0aaaaaaaaaaaaaaa2"], "image_id": ")" + kWestAmi + R"(",
                    "image_ids": {"p3.2xlarge": "ami-0ccccccccccccccc2"}, "key_name": "west-key"}
    }
  })");
}

/// The flat one-region form (us-east-1).
json flat_json() {
  return {{"region", "us-east-1"},
          {"subnet_id", kEastSubnet},
          {"security_group_ids", {"sg-0eeeeeeeeeeeeeee1"}},
          {"image_id", kEastAmi},
          {"checkpoint_s3_uri", "s3://team-bucket/ckpt"}};
}

/// The error of reading `aws` in either form for a spot launch.
std::string regions_error(const json& aws) {
  return error_of([&] { (void)launcher::aws_region_configs_from_json(aws); });
}

LaunchPlan plan_in(const std::string& region, const std::string& zone) {
  LaunchPlan plan = test::two_type_plan();
  plan.region = region;
  plan.zone = zone;
  return plan;
}

}  // namespace

TEST_CASE("the flat form reads as a configuration of one region that a launch takes whatever the plan's region") {
  const AwsRegionConfigs configs = launcher::aws_region_configs_from_json(flat_json());
  CHECK_FALSE(configs.region_map);
  REQUIRE(configs.regions.size() == 1);
  CHECK(configs.region_names() == "us-east-1");
  CHECK(configs.for_region("us-east-1").subnet_id == kEastSubnet);
  // The launch script, not the pick, compares the regions (and honours --region-override).
  CHECK(configs.for_launch("eu-west-1").region == "us-east-1");
  CHECK(contains(error_of([&] { (void)launcher::launch_script(plan_in("eu-west-1", ""), configs.for_launch("eu-west-1")); }),
                 "--region-override"));
  CHECK(contains(error_of([&] { (void)configs.for_region("eu-west-1"); }), "\"eu-west-1\" missing"));
}

TEST_CASE("the regions map gives every region its entry over the shared top-level keys, an entry's key replacing the shared one whole") {
  const AwsRegionConfigs configs = launcher::aws_region_configs_from_json(two_region_json());
  CHECK(configs.region_map);
  CHECK(configs.region_names() == "us-east-1, us-west-2");
  const AwsConfig& east = configs.for_region("us-east-1");
  const AwsConfig& west = configs.for_region("us-west-2");
  CHECK(east.region == "us-east-1");
  CHECK(west.region == "us-west-2");
  CHECK(east.subnet_id == kEastSubnet);
  CHECK(east.subnet_ids.empty());
  CHECK(west.subnet_id.empty());
  CHECK(west.subnet_ids.at("us-west-2b") == kWestSubnetB);
  CHECK(east.image_for("p3.2xlarge") == kEastAmi);
  CHECK(west.image_for("p3.2xlarge") == "ami-0ccccccccccccccc2");
  CHECK(west.image_for("g3.8xlarge") == kWestAmi);
  // Shared keys reach both; an entry's own key replaces the shared one (tags are not merged).
  CHECK(east.checkpoint_s3_uri == "s3://team-bucket/ckpt");
  CHECK(west.checkpoint_s3_uri == "s3://team-bucket/ckpt");
  CHECK(east.training_command == "python3 train.py");
  CHECK(west.poll_interval_s == 2);
  CHECK(east.key_name == "team-key");
  CHECK(west.key_name == "west-key");
  CHECK(east.tags == std::map<std::string, std::string>{{"Team", "east"}});
  CHECK(west.tags == std::map<std::string, std::string>{{"Project", "resnet"}});
  CHECK(&configs.for_launch("us-west-2") == &west);
}

TEST_CASE("region beside regions is refused naming both, and region-specific keys are refused at the map's top level") {
  json both = two_region_json();
  both["region"] = "us-east-1";
  const std::string e = regions_error(both);
  CHECK(contains(e, "aws.region = \"us-east-1\""));
  CHECK(contains(e, "region and regions"));
  for (const char* key : {"subnet_id", "image_id", "security_group_ids", "placement_group"}) {
    json top = two_region_json();
    top[key] = key == std::string("security_group_ids") ? json::array({"sg-0eeeeeeeeeeeeeee1"}) : json("x");
    const std::string error = regions_error(top);
    CHECK_MESSAGE(contains(error, "aws." + std::string(key) + " = "), error);
    CHECK_MESSAGE(contains(error, "each region's entry"), error);
  }
  json unknown = two_region_json();
  unknown["bogus"] = 1;
  CHECK(contains(regions_error(unknown), "aws.bogus = 1: unknown key"));
}

TEST_CASE("every entry of the regions map is read strictly and validated, errors naming the entry's key path") {
  const auto error_with = [](auto&& edit) {
    json aws = two_region_json();
    edit(aws);
    return regions_error(aws);
  };
  CHECK(contains(error_with([](json& a) { a["regions"]["us-west-2"]["subnet_ids"]["us-west-2a"] = "subnet-x"; }),
                 "aws.regions[\"us-west-2\"].subnet_ids.us-west-2a = \"subnet-x\""));
  CHECK(contains(error_with([](json& a) { a["regions"]["us-west-2"].erase("image_id"); }),
                 "aws.regions[\"us-west-2\"].image_id = missing: this key is required in every region's entry"));
  CHECK(contains(error_with([](json& a) { a["regions"]["us-east-1"].erase("security_group_ids"); }),
                 "aws.regions[\"us-east-1\"].security_group_ids = missing"));
  CHECK(contains(error_with([](json& a) { a["regions"]["us-east-1"].erase("subnet_id"); }),
                 "aws.regions[\"us-east-1\"].subnet_id = missing"));
  CHECK(contains(error_with([](json& a) { a.erase("checkpoint_s3_uri"); }),
                 "aws.regions[\"us-east-1\"].checkpoint_s3_uri = missing: this key is required: give it in every region's entry or once"));
  CHECK(error_with([](json& a) {
          a.erase("checkpoint_s3_uri");
          a["regions"]["us-east-1"]["checkpoint_s3_uri"] = "s3://east/ckpt";
          a["regions"]["us-west-2"]["checkpoint_s3_uri"] = "s3://west/ckpt";
        }) == "(accepted)");
  CHECK(contains(error_with([](json& a) { a["regions"]["us-east-1"]["region"] = "us-east-1"; }),
                 "aws.regions[\"us-east-1\"].region = \"us-east-1\": the entry's key names its region"));
  CHECK(contains(error_with([](json& a) { a["regions"]["us-east-1"]["regions"] = json::object(); }),
                 "aws.regions[\"us-east-1\"].regions = {}: unknown key"));
  CHECK(contains(error_with([](json& a) { a["regions"]["us-east-1"] = "subnet-0eeeeeeeeeeeeeee1"; }),
                 "aws.regions[\"us-east-1\"] = \"subnet-0eeeeeeeeeeeeeee1\": expected a JSON object"));
  CHECK(contains(error_with([](json& a) { a["regions"]["US-EAST-1"] = a["regions"]["us-east-1"]; }),
                 "aws.regions key = \"US-EAST-1\": expected a region like us-east-1"));
  CHECK(contains(error_with([](json& a) { a["regions"] = json::object(); }), "aws.regions = {}: give the settings of at least one region"));
  CHECK(contains(error_with([](json& a) { a["regions"] = json::array(); }), "aws.regions = []: expected a JSON object"));
  // A bad shared key is named at the top level, where it is written; the same key in an entry, in the entry.
  CHECK(contains(error_with([](json& a) { a["tags"]["spotdnn:run"] = "x"; }), "aws.tags key = \"spotdnn:run\""));
  CHECK(contains(error_with([](json& a) { a["training_command"] = std::string("a\0b", 3); }), "aws.training_command = "));
  CHECK(contains(error_with([](json& a) { a["regions"]["us-east-1"]["tags"]["spotdnn:run"] = "x"; }),
                 "aws.regions[\"us-east-1\"].tags key = \"spotdnn:run\""));
  CHECK(contains(error_with([](json& a) { a["poll_interval_s"] = -1; }), "aws.poll_interval_s = -1: must be greater than zero"));
}

TEST_CASE("a regions map of more than kMaxConfigRegions regions is refused before any entry is read") {
  json aws = two_region_json();
  const json entry = aws["regions"]["us-east-1"];
  for (std::size_t i = 0; i < launcher::kMaxConfigRegions; ++i) aws["regions"]["xx-test-" + std::to_string(i)] = entry;
  const std::string e = regions_error(aws);
  CHECK(contains(e, "aws.regions = 66 regions: at most 64 regions"));
}

TEST_CASE("credentials in a region's entry are refused with the key path and without the value") {
  json key = two_region_json();
  key["regions"]["us-west-2"]["aws_secret_access_key"] = "hunter2hunter2";
  const std::string e = regions_error(key);
  CHECK(contains(e, "aws.regions[\"us-west-2\"].aws_secret_access_key = (not shown): credentials are never accepted"));
  CHECK_FALSE(contains(e, "hunter2"));
  json value = two_region_json();
  value["regions"]["us-east-1"]["training_command"] = "AWS_SECRET_ACCESS_KEY=abc python3 t.py";
  const std::string v = regions_error(value);
  CHECK(contains(v, "aws.regions[\"us-east-1\"].training_command = (not shown)"));
  CHECK_FALSE(contains(v, "abc python3"));
  json shared = two_region_json();
  shared["tags"]["Owner"] = "AKIAABCDEFGHIJKLMNOP";
  CHECK(contains(regions_error(shared), "(not shown)"));
}

TEST_CASE("a launch picks the plan's region's settings, and a region without an entry is refused naming the regions the file has") {
  const AwsRegionConfigs configs = launcher::aws_region_configs_from_json(two_region_json());
  const std::string e = error_of([&] { (void)configs.for_launch("eu-west-1"); });
  CHECK(contains(e, "regions = \"eu-west-1\" missing"));
  CHECK(contains(e, "gives settings for us-east-1, us-west-2 only"));

  const std::string west = launcher::launch_script(plan_in("us-west-2", "us-west-2b"), configs.for_launch("us-west-2"));
  CHECK(contains(west, "readonly REGION=" + launcher::shell_quote("us-west-2") + "\n"));
  CHECK(contains(west, "# Region: us-west-2, as planned."));
  CHECK(contains(west, kWestSubnetB));
  CHECK_FALSE(contains(west, kWestSubnetA));
  CHECK(contains(west, kWestAmi));
  CHECK(contains(west, "ami-0ccccccccccccccc2"));  // the p3.2xlarge workers' AMI
  CHECK_FALSE(contains(west, kEastAmi));
  CHECK_FALSE(contains(west, kEastSubnet));
  CHECK_FALSE(contains(west, "us-east-1"));

  const std::string east = launcher::launch_script(plan_in("us-east-1", ""), configs.for_launch("us-east-1"));
  CHECK(contains(east, "readonly REGION=" + launcher::shell_quote("us-east-1") + "\n"));
  CHECK(contains(east, kEastSubnet));
  CHECK(contains(east, kEastAmi));
  CHECK_FALSE(contains(east, kWestAmi));
  // A zone that the region's entry has no subnet for is refused as with one region.
  CHECK(contains(error_of([&] { (void)launcher::launch_script(plan_in("us-west-2", "us-west-2c"), configs.for_launch("us-west-2")); }),
                 "subnet_ids = \"us-west-2c\" missing"));
}

TEST_CASE("a one-region reader takes the flat form or a map of one region and refuses a map of several, naming them") {
  json one = two_region_json();
  one["regions"].erase("us-east-1");
  const AwsConfig c = launcher::aws_config_from_json(one);
  CHECK(c.region == "us-west-2");
  CHECK(c.checkpoint_s3_uri == "s3://team-bucket/ckpt");
  CHECK(launcher::aws_config_from_json(flat_json()).region == "us-east-1");
  const std::string e = error_of([&] { (void)launcher::aws_config_from_json(two_region_json()); });
  CHECK(contains(e, "aws.regions = 2 regions (us-east-1, us-west-2): this reads the settings of one region"));
}

TEST_CASE("a serverless launch reads a map of one region's serverless settings and refuses a map of several, a serverless plan having no region") {
  const json serverless = {{"image_uri", "123456789012.dkr.ecr.us-west-2.amazonaws.com/fasdl:latest"},
                           {"role_arn", "arn:aws:iam::123456789012:role/fasdl"}};
  json aws = {{"tags", {{"Project", "fasdl"}}}, {"regions", {{"us-west-2", {{"serverless", serverless}}}}}};
  const AwsConfig c = launcher::aws_config_from_json(aws, "aws", "read", AwsConfigUse::serverless);
  CHECK(c.region == "us-west-2");
  CHECK(c.tags.at("Project") == "fasdl");
  launcher::ServerlessLaunchPlan plan;
  plan.profile_name = "tiny";
  plan.epochs = 0.5;
  plan.deadline_s = 600;
  plan.workers = 3;
  plan.memory_mb = 2048;
  plan.aggregators = 2;
  plan.batch = 32;
  plan.non_aggregator_batch = 48;
  plan.iterations = 100;
  plan.iteration_time_s = 1.5;
  plan.training_time_s = 150;
  plan.cost_usd = 0.012;
  CHECK(contains(launcher::serverless_launch_script(plan, c), "readonly REGION=" + launcher::shell_quote("us-west-2") + "\n"));

  // The ECR image must be in its entry's region.
  json elsewhere = aws;
  elsewhere["regions"]["us-west-2"]["serverless"]["image_uri"] = "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest";
  CHECK(contains(error_of([&] { (void)launcher::aws_config_from_json(elsewhere, "aws", "read", AwsConfigUse::serverless); }),
                 "aws.regions[\"us-west-2\"].serverless.image_uri"));
  // serverless is a region's own key: refused at the top level.
  json top = aws;
  top["serverless"] = serverless;
  CHECK(contains(error_of([&] { (void)launcher::aws_config_from_json(top, "aws", "read", AwsConfigUse::serverless); }),
                 "aws.serverless = "));
  json two = aws;
  two["regions"]["us-east-2"] = {{"serverless", serverless}};
  two["regions"]["us-east-2"]["serverless"]["image_uri"] = "123456789012.dkr.ecr.us-east-2.amazonaws.com/fasdl:latest";
  CHECK(launcher::aws_region_configs_from_json(two, "aws", "read", AwsConfigUse::serverless).regions.size() == 2);
  const std::string e = error_of([&] { (void)launcher::aws_config_from_json(two, "aws", "read", AwsConfigUse::serverless); });
  CHECK(contains(e, "aws.regions = 2 regions (us-east-2, us-west-2): a serverless plan has no region"));
  // An entry without the serverless object is refused for a serverless launch.
  json missing = aws;
  missing["regions"]["us-west-2"] = json::object();
  CHECK(contains(error_of([&] { (void)launcher::aws_config_from_json(missing, "aws", "read", AwsConfigUse::serverless); }),
                 "aws.regions[\"us-west-2\"].serverless = missing"));
  // Read for a spot launch, a serverless-only entry says which spot keys it lacks and --serverless.
  CHECK(contains(error_of([&] { (void)launcher::aws_region_configs_from_json(aws); }), "--serverless"));
}
