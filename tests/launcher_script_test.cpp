// SPDX-License-Identifier: MIT
// The launcher's emitted text: quoting, validation, the golden two-type script, bash -n and shellcheck
// on every emitted script, the 16 KB user-data limit, and the strict AWS/plan JSON readers.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include <spotdnn/io/aws_config_json.hpp>
#include <spotdnn/launcher.hpp>
#include <spotdnn/presets.hpp>

#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using launcher::AwsConfig;
using launcher::LaunchPlan;

namespace {

LaunchPlan two_type_plan() { return {"resnet110-demo", {{"p3.2xlarge", 2}, {"g3.8xlarge", 4}}}; }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

/// bash -n and shellcheck (all severities) on `script`; returns shellcheck's output on failure.
void check_script(const test::TempDir& dir, const std::string& name, const std::string& script) {
  const std::string path = dir / name;
  test::write_text(path, script);
  CHECK_MESSAGE(test::run_bash("bash -n " + launcher::shell_quote(path)) == 0, name);
  const std::string out = dir / (name + ".shellcheck");
  const int rc = test::run_bash("shellcheck " + launcher::shell_quote(path) + " >" + launcher::shell_quote(out) + " 2>&1");
  INFO(name, ": ", test::read_text(out));
  CHECK(rc == 0);
}

}  // namespace

TEST_CASE("shell_quote gives back every string verbatim through bash, quotes and newlines included") {
  test::TempDir dir;
  const std::string hostile = "it's \"x\" $(touch pwned) `touch pwned2` ${HOME} \\ \n\t end '' '";
  const std::string command = "cd " + launcher::shell_quote(dir.path().string()) + " && printf '%s' " +
                              launcher::shell_quote(hostile) + " > out";
  REQUIRE(test::run_bash(command) == 0);
  CHECK(test::read_text(dir / "out") == hostile);
  CHECK_FALSE(std::filesystem::exists(dir / "pwned"));
  CHECK_FALSE(std::filesystem::exists(dir / "pwned2"));
  CHECK(launcher::shell_quote("") == "''");
  CHECK(launcher::shell_quote("a'b") == "'a'\\''b'");
}

TEST_CASE("base64 matches RFC 4648 and is_base64 accepts exactly its alphabet and padding") {
  for (const char* text : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "it's \"x\" $(y) __SPOTDNN_USER_DATA_BASE64__"}) {
    const std::string encoded = launcher::base64_encode(text);
    CHECK(launcher::is_base64(encoded) == (*text != '\0'));
  }
  for (const char* bad : {"Zg=", "Zg===", "Z===", "Zm9v\"", "Zm9v\n", "Zm=v", "Zm9v}", "Zm-_"}) {
    CAPTURE(bad);
    CHECK_FALSE(launcher::is_base64(bad));
  }
  CHECK(launcher::base64_encode("") == "");
  CHECK(launcher::base64_encode("f") == "Zg==");
  CHECK(launcher::base64_encode("fo") == "Zm8=");
  CHECK(launcher::base64_encode("foo") == "Zm9v");
  CHECK(launcher::base64_encode("foobar") == "Zm9vYmFy");
}

TEST_CASE("invalid IDs and names are refused with the field named") {
  const auto with = [](auto change) {
    AwsConfig c = test::example_config();
    change(c);
    return message_of([&] { c.validate(); });
  };
  CHECK(with([](AwsConfig& c) { c.image_id = "ami-123"; }).find("image_id = \"ami-123\"") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.image_id = "ami-0123456789ABCDEF0"; }).find("image_id") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.subnet_id = "subnet-12345678; rm -rf /"; }).find("subnet_id") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.security_group_ids = {"sg-12345678", "sg-$(x)"}; }).find("security_group_ids[1]") !=
        std::string::npos);
  CHECK(with([](AwsConfig& c) { c.security_group_ids.clear(); }).find("security_group_ids") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.region = "us-east-1'"; }).find("region") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.region = "useast1"; }).find("region") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.checkpoint_s3_uri = "https://bucket/x"; }).find("checkpoint_s3_uri") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.checkpoint_s3_uri = "s3://Bad_Bucket/x"; }).find("checkpoint_s3_uri") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.checkpoint_s3_uri = "s3://bucket/a\nb"; }).find("checkpoint_s3_uri = \"s3://bucket/a\\nb\"") !=
        std::string::npos);
  CHECK(with([](AwsConfig& c) { c.tags = {{"aws:name", "x"}}; }).find("reserved by AWS") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.tags = {{"spotdnn:role", "x"}}; }).find("reserved for the launcher") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.tags = {{"k", std::string(257, 'v')}}; }).find("tags.k") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.tags = {{"k", "bad \xff utf8"}}; }).find("valid UTF-8") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.iam_instance_profile = "role name"; }).find("iam_instance_profile") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.checkpoint_dir = "relative/dir"; }).find("checkpoint_dir") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.parameter_server_type = "m5 xlarge"; }).find("parameter_server_type") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.image_ids = {{"p3.2xlarge", "ami-xyz"}}; }).find("image_ids.p3.2xlarge") != std::string::npos);
  CHECK(with([](AwsConfig& c) { c.poll_interval_s = 0; }).find("poll_interval_s") != std::string::npos);
  CHECK(with([](AwsConfig&) {}) == "(no exception)");

  LaunchPlan plan = two_type_plan();
  plan.plan_id = "bad id";
  CHECK(message_of([&] { plan.validate(); }).find("plan_id") != std::string::npos);
  plan = two_type_plan();
  plan.cluster.set("p3.2xlarge;reboot", 1);
  CHECK(message_of([&] { plan.validate(); }).find("cluster type") != std::string::npos);
  plan = two_type_plan();
  plan.cluster.set("x9.large", 1);
  CHECK(message_of([&] { (void)launcher::launch_script(plan, presets::resnet110_catalog(), test::example_config()); })
            .find("not in the catalog") != std::string::npos);
}

TEST_CASE("region and instance-type spellings AWS uses are accepted") {
  AwsConfig c = test::example_config();
  for (const char* region : {"us-east-1", "eu-central-2", "us-gov-west-1", "ap-southeast-4", "il-central-1"}) {
    c.region = region;
    CHECK_NOTHROW(c.validate());
  }
  for (const char* type : {"p3.2xlarge", "g4dn.12xlarge", "u-6tb1.metal", "p4d.24xlarge", "m5.xlarge"}) {
    CHECK_NOTHROW(launcher::require_instance_type("t", "type", type));
  }
  CHECK_THROWS_AS(launcher::require_instance_type("t", "type", "p3..2xlarge"), invalid_argument);
  CHECK_THROWS_AS(launcher::require_instance_type("t", "type", "P3.2xlarge"), invalid_argument);
}

TEST_CASE("the two-type launch script matches the golden text") {
  const std::string script = launcher::launch_script(two_type_plan(), presets::resnet110_catalog(), test::example_config());
  const std::string golden_path = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/golden/launch_two_types.sh";
  if (std::getenv("SPOTDNN_UPDATE_GOLDEN")) test::write_text(golden_path, script);
  CHECK(script == test::read_text(golden_path));
  // Spot-only APIs of the legacy kind are never used, nor eval.
  CHECK(script.find("request-spot-instances") == std::string::npos);
  CHECK(script.find("eval ") == std::string::npos);
  CHECK(script.find("AWS_SECRET") == std::string::npos);
}

TEST_CASE("the fleet launch script matches the golden text and has one instant fleet per type") {
  launcher::LaunchOptions options;
  options.fleet = true;
  const std::string script = launcher::launch_script(two_type_plan(), presets::resnet110_catalog(), test::example_config(), options);
  const std::string golden_path = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/golden/launch_two_types_fleet.sh";
  if (std::getenv("SPOTDNN_UPDATE_GOLDEN")) test::write_text(golden_path, script);
  CHECK(script == test::read_text(golden_path));
  const std::string fleet = launcher::fleet_request_json(test::example_config(), "resnet110-demo", "g3.8xlarge", 4);
  CHECK(fleet.find("\"Type\":\"instant\"") != std::string::npos);
  CHECK(fleet.find("\"MinTargetCapacity\":4") != std::string::npos);
  CHECK(fleet.find("\"TotalTargetCapacity\":4") != std::string::npos);
  CHECK(fleet.find("\"Overrides\":[{\"InstanceType\":\"g3.8xlarge\",\"SubnetId\":\"subnet-0123456789abcdef0\"}]") != std::string::npos);
  CHECK(script.find("request-spot-instances") == std::string::npos);
}

TEST_CASE("every emitted script passes bash -n and shellcheck") {
  test::TempDir dir;
  const Catalog catalog = presets::resnet110_catalog();
  AwsConfig minimal;
  minimal.region = "eu-west-1";
  minimal.subnet_id = "subnet-12345678";
  minimal.security_group_ids = {"sg-12345678"};
  minimal.image_id = "ami-12345678";
  minimal.checkpoint_s3_uri = "s3://bucket";
  for (const AwsConfig& config : {test::example_config(), minimal}) {
    for (bool fleet : {false, true}) {
      launcher::LaunchOptions options;
      options.fleet = fleet;
      const LaunchPlan plan{"p1", {{"p3.2xlarge", 1}, {"g4dn.4xlarge", 3}, {"p2.8xlarge", 5}}};
      check_script(dir, std::string("launch-") + (fleet ? "fleet" : "run") + config.region + ".sh",
                   launcher::launch_script(plan, catalog, config, options));
    }
    check_script(dir, "worker-" + config.region + ".sh", launcher::worker_user_data(config, "p1", "p3.2xlarge", 1, "10.0.0.11"));
    check_script(dir, "ps-" + config.region + ".sh", launcher::parameter_server_user_data(config, "p1", "m5.xlarge"));
  }
}

TEST_CASE("user data over 16384 bytes is refused and the limit itself is accepted, counting the longest PS address") {
  AwsConfig config = test::example_config();
  config.training_command.clear();
  const auto parts = launcher::worker_user_data_parts(config, "p1", "p3.2xlarge", 1);
  const std::size_t empty_base = parts.head.size() + launcher::kMaxIpv4AddressLength + parts.body.size();
  REQUIRE(empty_base < launcher::kUserDataLimitBytes);
  // Plain 'x' characters are inserted unchanged inside the single quotes.
  config.training_command = std::string(launcher::kUserDataLimitBytes - empty_base, 'x');
  CHECK(launcher::worker_user_data(config, "p1", "p3.2xlarge", 1, "255.255.255.255").size() == launcher::kUserDataLimitBytes);
  CHECK(launcher::worker_user_data(config, "p1", "p3.2xlarge", 1, "10.0.0.1").size() < launcher::kUserDataLimitBytes);
  config.training_command += 'x';
  const std::string message = message_of([&] { (void)launcher::worker_user_data_parts(config, "p1", "p3.2xlarge", 1); });
  CHECK(message.find("16385 bytes") != std::string::npos);
  CHECK(message.find("16384") != std::string::npos);
  CHECK_THROWS_AS((void)launcher::launch_script(two_type_plan(), presets::resnet110_catalog(), config), invalid_argument);
}

TEST_CASE("the AWS JSON reader refuses credentials, unknown keys and bad IDs with their key path") {
  const auto read = [](const std::string& text) {
    return message_of([&] { (void)io::aws_config_from_json(io::parse_json(text, "test")); });
  };
  const std::string good = R"("region": "us-east-1", "subnet_id": "subnet-12345678", "security_group_ids": ["sg-12345678"],
      "image_id": "ami-12345678", "checkpoint_s3_uri": "s3://bucket/x")";
  CHECK(read("{" + good + "}") == "(no exception)");
  CHECK(read("{" + good + R"(, "aws_secret_access_key": "abc"})").find("credentials are never accepted") != std::string::npos);
  CHECK(read("{" + good + R"(, "aws_secret_access_key": "abc"})").find("abc") == std::string::npos);
  CHECK(read("{" + good + R"(, "AccessKeyId": "abc"})").find("aws.AccessKeyId") != std::string::npos);
  CHECK(read("{" + good + R"(, "colour": "blue"})").find("aws.colour") != std::string::npos);
  CHECK(read("{" + good + R"(, "tags": {"k": 3}})").find("aws.tags[\"k\"]") != std::string::npos);
  CHECK(read(R"({"region": "us-east-1", "subnet_id": "subnet-zz", "security_group_ids": ["sg-12345678"],
      "image_id": "ami-12345678", "checkpoint_s3_uri": "s3://bucket/x"})")
            .find("aws.subnet_id = \"subnet-zz\"") != std::string::npos);
  const AwsConfig c = io::aws_config_from_json(io::parse_json("{" + good + R"(, "tags": {"a b": "c'd"}, "poll_interval_s": 0.5})", "t"));
  CHECK(c.tags.at("a b") == "c'd");
  CHECK(c.poll_interval_s == 0.5);
}

TEST_CASE("the plan reader takes status and cluster and refuses an infeasible plan") {
  const auto plan = io::launch_plan_from_json(io::parse_json(
      R"({"status": "optimal", "message": "", "cluster": {"p3.2xlarge": 2, "g3.8xlarge": 4}, "cost_usd": 3.1})", "t"));
  CHECK(plan.cluster == Cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}});
  CHECK(plan.plan_id == io::default_plan_id(plan.cluster));
  CHECK(plan.plan_id.size() == 13);
  CHECK(io::launch_plan_from_json(io::parse_json(R"({"status": "feasible", "cluster": {"p3.2xlarge": 1}, "plan_id": "x1"})", "t"))
            .plan_id == "x1");
  const std::string infeasible = message_of([] {
    (void)io::launch_plan_from_json(io::parse_json(R"({"status": "infeasible", "message": "deadline too short", "cluster": {}})", "t"));
  });
  CHECK(infeasible.find("plan.status") != std::string::npos);
  CHECK(infeasible.find("deadline too short") != std::string::npos);
  CHECK(message_of([] { (void)io::launch_plan_from_json(io::parse_json(R"({"status": "optimal", "cluster": {}})", "t")); })
            .find("no workers") != std::string::npos);
}
