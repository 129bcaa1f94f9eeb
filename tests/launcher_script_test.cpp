// SPDX-License-Identifier: MIT
// The launcher's emitted text (launch contract v2): quoting, validation, run ids, BashTemplate holes and
// the bash words that fill them, the golden launch (run-instances and EC2 Fleet), join, status and
// teardown scripts, markets per group, bash -n and shellcheck on every emitted script and user data,
// the 16 KB user-data limit, and the strict AWS JSON reader. Nothing here talks to AWS or a fake of it.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/aws_config_json.hpp>
#include <spotdnn/launcher.hpp>

#include "support/error_of.hpp"
#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using launcher::AwsConfig;
using launcher::BashTemplate;
using launcher::LaunchPlan;
using launcher::Slot;
using launcher::SlotValues;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

/// A configuration with only the required fields.
AwsConfig minimal_config() {
  AwsConfig c;
  c.region = "eu-west-1";
  c.subnet_id = "subnet-12345678";
  c.security_group_ids = {"sg-12345678"};
  c.image_id = "ami-12345678";
  c.checkpoint_s3_uri = "s3://bucket";
  return c;
}

launcher::LaunchOptions with_fleet(bool fleet) {
  launcher::LaunchOptions options;
  options.fleet = fleet;
  return options;
}

/// bash -n and shellcheck (all severities) on `script`, written to `dir`/`name`.
void check_script(const test::TempDir& dir, const std::string& name, const std::string& script) {
  const std::string path = dir / name;
  test::write_text(path, script);
  CHECK_MESSAGE(test::run_bash("bash -n " + launcher::shell_quote(path)) == 0, name);
  const std::string out = dir / (name + ".shellcheck");
  const int rc = test::run_bash("shellcheck " + launcher::shell_quote(path) + " >" + launcher::shell_quote(out) + " 2>&1");
  INFO(name, ": ", test::read_text(out));
  CHECK(rc == 0);
}

/// Compares `text` with tests/golden/`name`; SPOTDNN_UPDATE_GOLDEN=1 rewrites the file first.
void check_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/golden/" + name;
  if (std::getenv("SPOTDNN_UPDATE_GOLDEN")) test::write_text(path, text);
  INFO("golden file ", path, " (regenerate with SPOTDNN_UPDATE_GOLDEN=1 after reviewing the difference)");
  CHECK(text == test::read_text(path));
}

/// What `bash -c 'RUN_ID=..; ps_ip=..; world_size=..; rank_base=..; EXTRA printf %s WORD'` prints, run in
/// `dir`; `extra` is more bash (assignments) before the printf.
std::string bash_value(const test::TempDir& dir, const std::string& word, const SlotValues& values, const std::string& extra = "") {
  std::string command = "cd " + launcher::shell_quote(dir.path().string()) + " && ";
  for (Slot slot : {Slot::run_id, Slot::ps_address, Slot::world_size, Slot::rank_base}) {
    command += std::string(launcher::bash_variable(slot)) + "=" + launcher::shell_quote(values[static_cast<std::size_t>(slot)]) + "; ";
  }
  command += extra + "printf %s " + word + " >word.out";
  std::filesystem::remove(dir / "word.out");
  const int rc = test::run_bash(command);
  INFO("bash word: ", word);
  CHECK(rc == 0);
  return test::read_text(dir / "word.out");
}

/// The commands of `script` whose first line contains `head`, each with its continuation lines (those
/// after a line ending in " \").
std::vector<std::string> commands(const std::string& script, const std::string& head) {
  std::vector<std::string> out;
  std::istringstream in(script);
  std::string line, current;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && contains(line, head)) inside = true;
    if (!inside) continue;
    current += line + "\n";
    if (line.size() < 2 || line.compare(line.size() - 2, 2, " \\") != 0) {
      out.push_back(current);
      current.clear();
      inside = false;
    }
  }
  return out;
}

/// The rest of the line after "--option " in `command`, without a trailing " \".
std::string argument_of(const std::string& command, const std::string& option) {
  const std::size_t at = command.find(option + " ");
  if (at == std::string::npos) return "";
  const std::size_t start = at + option.size() + 1;
  std::string rest = command.substr(start, command.find('\n', start) - start);
  if (rest.size() >= 2 && rest.compare(rest.size() - 2, 2, " \\") == 0) rest.resize(rest.size() - 2);
  return rest;
}

/// Key -> Value of a TagSpecifications entry.
std::map<std::string, std::string> tag_map(const json& specification) {
  std::map<std::string, std::string> tags;
  for (const json& tag : specification.at("Tags")) tags[tag.at("Key").get<std::string>()] = tag.at("Value").get<std::string>();
  return tags;
}

/// The launcher's tags followed by the user's, as every resource of `who` in run kExampleRunId with
/// rank base `rank_base` carries them.
std::map<std::string, std::string> expected_tags(const AwsConfig& config, const std::string& role, const std::string& type,
                                                 const std::string& market, const std::string& rank_base) {
  std::map<std::string, std::string> tags(config.tags.begin(), config.tags.end());
  tags["spotdnn:run"] = test::kExampleRunId;
  tags["spotdnn:rank-base"] = rank_base;
  tags["spotdnn:role"] = role;
  tags["spotdnn:instance-type"] = type;
  tags["spotdnn:market"] = market;
  return tags;
}

/// A valid run id, IPv4 address and numbers as long as longest_slot_values().
SlotValues longest_valid_values() { return {"99991231-235959-ffffff", "255.255.255.255", "1000001", "1000001"}; }

const launcher::InstanceRole kWorker{"worker", "p3.2xlarge", Market::spot};
const launcher::InstanceRole kParameterServer{"ps", "m5.xlarge", Market::on_demand};

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
  for (const char* text : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "it's \"x\" $(y) \n\xff\x01"}) {
    const std::string encoded = launcher::base64_encode(text);
    CHECK(launcher::is_base64(encoded) == (*text != '\0'));
    CHECK(test::base64_decode(encoded) == text);
  }
  for (const char* bad : {"Zg=", "Zg===", "Z===", "Zm9v\"", "Zm9v\n", "Zm=v", "Zm9v}", "Zm-_", ""}) {
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
    return test::error_of([&] { c.validate(); });
  };
  CHECK(contains(with([](AwsConfig& c) { c.image_id = "ami-123"; }), "image_id = \"ami-123\""));
  CHECK(contains(with([](AwsConfig& c) { c.image_id = "ami-0123456789ABCDEF0"; }), "image_id"));
  CHECK(contains(with([](AwsConfig& c) { c.subnet_id = "subnet-12345678; rm -rf /"; }), "subnet_id"));
  CHECK(contains(with([](AwsConfig& c) { c.security_group_ids = {"sg-12345678", "sg-$(x)"}; }), "security_group_ids[1]"));
  CHECK(contains(with([](AwsConfig& c) { c.security_group_ids.clear(); }), "security_group_ids"));
  CHECK(contains(with([](AwsConfig& c) { c.region = "us-east-1'"; }), "region"));
  CHECK(contains(with([](AwsConfig& c) { c.region = "useast1"; }), "region"));
  CHECK(contains(with([](AwsConfig& c) { c.checkpoint_s3_uri = "https://bucket/x"; }), "checkpoint_s3_uri"));
  CHECK(contains(with([](AwsConfig& c) { c.checkpoint_s3_uri = "s3://Bad_Bucket/x"; }), "checkpoint_s3_uri"));
  CHECK(contains(with([](AwsConfig& c) { c.checkpoint_s3_uri = "s3://bucket/a\nb"; }), "checkpoint_s3_uri = \"s3://bucket/a\\nb\""));
  CHECK(contains(with([](AwsConfig& c) { c.tags = {{"aws:name", "x"}}; }), "reserved by AWS"));
  CHECK(contains(with([](AwsConfig& c) { c.tags = {{"spotdnn:role", "x"}}; }), "reserved for the launcher"));
  CHECK(contains(with([](AwsConfig& c) { c.tags = {{"spotdnn:run", "x"}}; }), "reserved for the launcher"));
  CHECK(contains(with([](AwsConfig& c) { c.tags = {{"k", std::string(257, 'v')}}; }), "tags.k"));
  CHECK(contains(with([](AwsConfig& c) { c.tags = {{"k", "bad \xff utf8"}}; }), "valid UTF-8"));
  CHECK(contains(with([](AwsConfig& c) { c.iam_instance_profile = "role name"; }), "iam_instance_profile"));
  CHECK(contains(with([](AwsConfig& c) { c.checkpoint_dir = "relative/dir"; }), "checkpoint_dir"));
  CHECK(contains(with([](AwsConfig& c) { c.parameter_server_type = "m5 xlarge"; }), "parameter_server_type"));
  CHECK(contains(with([](AwsConfig& c) { c.image_ids = {{"p3.2xlarge", "ami-xyz"}}; }), "image_ids.p3.2xlarge"));
  CHECK(contains(with([](AwsConfig& c) { c.poll_interval_s = 0; }), "poll_interval_s"));
  CHECK(contains(with([](AwsConfig& c) { c.discovery_timeout_s = -1; }), "discovery_timeout_s"));
  CHECK(contains(with([](AwsConfig& c) { c.training_command = std::string("a\0b", 3); }), "training_command"));
  CHECK(with([](AwsConfig&) {}) == "(accepted)");
}

TEST_CASE("a launch plan is refused naming its first bad field") {
  const auto with = [](auto change) {
    LaunchPlan plan = test::two_type_plan();
    change(plan);
    return test::error_of([&] { plan.validate(); });
  };
  CHECK(with([](LaunchPlan&) {}) == "(accepted)");
  CHECK(with([](LaunchPlan& p) { p = test::example_replan(); }) == "(accepted)");
  CHECK(contains(with([](LaunchPlan& p) { p.kind = "spotdnn.frontier"; }), "kind"));
  CHECK(contains(with([](LaunchPlan& p) { p.region = "us-east-1'"; }), "region"));
  CHECK(contains(with([](LaunchPlan& p) { p.parameter_server_type = "m5.xlarge;reboot"; }), "parameter_server_type"));
  CHECK(contains(with([](LaunchPlan& p) { p.workers[1].type = "g3.8xlarge;reboot"; }), "workers[1].type"));
  CHECK(contains(with([](LaunchPlan& p) { p.workers[0].count = 0; }), "workers[0].count"));
  CHECK(contains(with([](LaunchPlan& p) { p.workers[1].gpus = 0; }), "workers[1].gpus"));
  CHECK(contains(with([](LaunchPlan& p) { p.workers[1].type = "p3.2xlarge"; }), "appears twice"));
  CHECK(contains(with([](LaunchPlan& p) { p.workers.clear(); }), "no workers"));
  CHECK(contains(with([](LaunchPlan& p) {
                   p = test::example_replan();
                   p.workers.clear();
                 }),
                 "nothing to launch"));
  CHECK(contains(with([](LaunchPlan& p) { p.survivors.set("x;y", 1); }), "survivors"));
  CHECK(contains(with([](LaunchPlan& p) { p.workload_name = "a\nb"; }), "workload_name"));
  CHECK(contains(with([](LaunchPlan& p) { p.deadline_s = 0; }), "deadline_s"));
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

TEST_CASE("is_run_id accepts exactly YYYYMMDD-HHMMSS-xxxxxx, as the scripts' bash regex does") {
  const std::vector<std::string> good = {"20260301-120000-0a1b2c", "00000000-000000-000000", "99999999-999999-ffffff",
                                         test::kExampleRunId};
  const std::vector<std::string> bad = {"",
                                        "*",
                                        "?",
                                        "20260301-120000-*",
                                        "20260301-120000-0a1b2?",
                                        "2026030?-120000-0a1b2c",
                                        "20260301-120000-0a1b2c,20260301-120000-0a1b2d",
                                        "20260301-120000-0a,b2c",
                                        "20260301-120000-0A1B2C",
                                        "20260301-120000-0a1b2C",
                                        "20260301-120000-0a1b2g",
                                        "20260301-120000-0a1b2",
                                        "20260301-120000-0a1b2c0",
                                        "2026030-1120000-0a1b2c",
                                        "202603011-20000-0a1b2c",
                                        " 20260301-120000-0a1b2c",
                                        "20260301-120000-0a1b2c ",
                                        "20260301 120000 0a1b2c",
                                        "20260301-120000-0a1b2 ",
                                        "20260301-120000-0a1b2c\n",
                                        "20260301-120000-0a1b2\n",
                                        "20260301_120000_0a1b2c",
                                        "2026-03-01-120000-0a1b",
                                        "0000000000000000000000",
                                        std::string("20260301-120000-0a1b2\0", 22)};
  for (const std::string& id : good) {
    CAPTURE(id);
    CHECK(launcher::is_run_id(id));
    CHECK_NOTHROW(launcher::require_run_id("t", "--run", id));
  }
  for (const std::string& id : bad) {
    CAPTURE(id);
    CHECK_FALSE(launcher::is_run_id(id));
    CHECK(contains(test::error_of([&] { launcher::require_run_id("t", "--run", id); }), "--run"));
  }
  static_assert(launcher::is_run_id("20260301-120000-0a1b2c"), "is_run_id is constexpr");

  // The emitted scripts check the id with bash =~ and kRunIdRegex: the same verdicts (NUL aside, which
  // no bash string holds).
  test::TempDir dir;
  std::string expected;
  std::string command = "cd " + launcher::shell_quote(dir.path().string()) + " && { ";
  for (const std::vector<std::string>* list : {&good, &bad}) {
    for (const std::string& id : *list) {
      if (id.find('\0') != std::string::npos) continue;
      command += "x=" + launcher::shell_quote(id) + "; if [[ $x =~ " + std::string(launcher::kRunIdRegex) +
                 " ]]; then echo y; else echo n; fi; ";
      expected += launcher::is_run_id(id) ? "y\n" : "n\n";
    }
  }
  command += "} >verdicts";
  REQUIRE(test::run_bash(command) == 0);
  CHECK(test::read_text(dir / "verdicts") == expected);
}

TEST_CASE("make_template finds exactly the holes: none, one or several of each slot, adjacent, at the start and end") {
  using Make = std::function<std::string(const SlotValues&)>;
  const auto v = [](const SlotValues& values, Slot slot) { return values[static_cast<std::size_t>(slot)]; };
  const std::vector<Slot> all = {Slot::run_id, Slot::ps_address, Slot::world_size, Slot::rank_base};

  SUBCASE("no hole") {
    for (const std::string& text : {std::string(), std::string("plain text 0123456789 -.- 2.2.2.2 4444444")}) {
      const BashTemplate t = launcher::make_template([&](const SlotValues&) { return text; });
      CHECK(t.pieces == std::vector<std::string>{text});
      CHECK(t.slots.empty());
      CHECK(t.filled(test::example_values()) == text);
    }
  }
  SUBCASE("one hole of each slot, in the middle, at the start, at the end and alone") {
    for (Slot slot : all) {
      CAPTURE(launcher::bash_variable(slot));
      const BashTemplate middle = launcher::make_template([&](const SlotValues& x) { return "{\"a\":\"" + v(x, slot) + "\"}"; });
      CHECK(middle.pieces == std::vector<std::string>{"{\"a\":\"", "\"}"});
      CHECK(middle.slots == std::vector<Slot>{slot});
      const BashTemplate start = launcher::make_template([&](const SlotValues& x) { return v(x, slot) + "-tail"; });
      CHECK(start.pieces == std::vector<std::string>{"", "-tail"});
      CHECK(start.slots == std::vector<Slot>{slot});
      const BashTemplate end = launcher::make_template([&](const SlotValues& x) { return "head-" + v(x, slot); });
      CHECK(end.pieces == std::vector<std::string>{"head-", ""});
      const BashTemplate alone = launcher::make_template([&](const SlotValues& x) { return v(x, slot); });
      CHECK(alone.pieces == std::vector<std::string>{"", ""});
      CHECK(alone.slots == std::vector<Slot>{slot});
    }
  }
  SUBCASE("several holes of each slot, adjacent ones, and text made of the stand-ins' characters around them") {
    const Make make = [&](const SlotValues& x) {
      return v(x, Slot::rank_base) + v(x, Slot::run_id) + "0" + v(x, Slot::run_id) + "1-" + v(x, Slot::ps_address) + "." +
             v(x, Slot::ps_address) + v(x, Slot::world_size) + v(x, Slot::world_size) + " 4444444 5555555 " + v(x, Slot::rank_base) +
             "\n" + v(x, Slot::run_id) + v(x, Slot::ps_address) + v(x, Slot::world_size) + v(x, Slot::rank_base);
    };
    const BashTemplate t = launcher::make_template(make);
    CHECK(t.pieces == std::vector<std::string>{"", "", "0", "1-", ".", "", "", " 4444444 5555555 ", "\n", "", "", "", ""});
    CHECK(t.slots == std::vector<Slot>{Slot::rank_base, Slot::run_id, Slot::run_id, Slot::ps_address, Slot::ps_address,
                                       Slot::world_size, Slot::world_size, Slot::rank_base, Slot::run_id, Slot::ps_address,
                                       Slot::world_size, Slot::rank_base});
    for (const SlotValues& values : {test::example_values(), longest_valid_values(), SlotValues{"r", "p", "w", "b"}}) {
      CHECK(t.filled(values) == make(values));
    }
  }
  SUBCASE("the holes of a JSON document built from the values, with hostile configuration text around them") {
    const launcher::InstanceRole who{"worker", "p3.2xlarge", Market::spot};
    const AwsConfig config = test::hostile_config();
    const BashTemplate t = launcher::tag_specifications_template(config, who, {"instance", "spot-instances-request"});
    CHECK(t.slots == std::vector<Slot>{Slot::run_id, Slot::rank_base, Slot::run_id, Slot::rank_base});
    const std::string filled = t.filled(test::example_values());
    CHECK(filled == launcher::json_text(launcher::tag_specifications_json(
                        {"instance", "spot-instances-request"}, launcher::resource_tags(config, who, test::example_values()))));
  }
}

TEST_CASE("make_template throws std::logic_error when the text changes length or a value is mangled") {
  const auto v = [](const SlotValues& values, Slot slot) { return values[static_cast<std::size_t>(slot)]; };
  // Longer with one set of stand-ins than with the other.
  CHECK_THROWS_AS((void)launcher::make_template([&](const SlotValues& x) {
                    return v(x, Slot::run_id) + (v(x, Slot::run_id)[0] == '0' ? "" : "x");
                  }),
                  std::logic_error);
  // A value changed on the way (here by arithmetic): 4444445 and 5555556 differ, but not as whole stand-ins.
  CHECK_THROWS_AS((void)launcher::make_template([&](const SlotValues& x) { return std::to_string(std::stol(v(x, Slot::world_size)) + 1); }),
                  std::logic_error);
  // Reversed, cut short, or with a character changed.
  CHECK_THROWS_AS((void)launcher::make_template([&](const SlotValues& x) {
                    const std::string id = v(x, Slot::run_id);
                    return "a" + std::string(id.rbegin(), id.rend());
                  }),
                  std::logic_error);
  CHECK_THROWS_AS((void)launcher::make_template([&](const SlotValues& x) { return "a" + v(x, Slot::rank_base).substr(0, 3) + "b"; }),
                  std::logic_error);
  CHECK_THROWS_AS((void)launcher::make_template([&](const SlotValues& x) {
                    std::string ip = v(x, Slot::ps_address);
                    ip[0] = 'x';
                    return ip;
                  }),
                  std::logic_error);
  // A difference that is not where a value went.
  CHECK_THROWS_AS((void)launcher::make_template([&](const SlotValues& x) { return std::string(1, v(x, Slot::run_id)[0] == '0' ? 'a' : 'b'); }),
                  std::logic_error);
}

TEST_CASE("a template's bash word gives exactly filled(values) in bash, and nothing in it expands") {
  test::TempDir dir;
  const auto v = [](const SlotValues& values, Slot slot) { return values[static_cast<std::size_t>(slot)]; };
  const std::string nasty = "it's \"q\" \\ \\' '\\'' \n$(touch PWNED) `touch PWNED` ${HOME} $HOME !! * ? [a] ~ \t;&|<>\n";
  const std::vector<std::function<std::string(const SlotValues&)>> makes = {
      [&](const SlotValues&) { return std::string(); },
      [&](const SlotValues&) { return nasty; },
      [&](const SlotValues& x) { return v(x, Slot::run_id); },
      [&](const SlotValues& x) { return nasty + v(x, Slot::run_id) + nasty + v(x, Slot::ps_address) + nasty; },
      [&](const SlotValues& x) {
        return v(x, Slot::world_size) + "'" + v(x, Slot::rank_base) + v(x, Slot::rank_base) + "\\" + v(x, Slot::ps_address) + "\n";
      },
      [&](const SlotValues& x) {
        return "\"" + v(x, Slot::run_id) + "\"'" + v(x, Slot::ps_address) + "'$(" + v(x, Slot::world_size) + ")`" +
               v(x, Slot::rank_base) + "`\\";
      },
      [&](const SlotValues& x) { return "''" + v(x, Slot::run_id) + "''" + v(x, Slot::run_id) + "\n\n"; },
  };
  for (std::size_t i = 0; i < makes.size(); ++i) {
    CAPTURE(i);
    const BashTemplate t = launcher::make_template(makes[i]);
    const std::string word = t.bash_word();
    for (const SlotValues& values : {test::example_values(), longest_valid_values(), SlotValues{"$(touch PWNED)", "`touch PWNED`", "*", "'"}}) {
      CHECK(bash_value(dir, word, values) == t.filled(values));
      CHECK(t.filled(values) == makes[i](values));
    }
  }
  CHECK(test::pwned_files(dir.path()).empty());
  CHECK(launcher::fixed_template("").bash_word() == "''");
  CHECK(launcher::make_template([&](const SlotValues& x) { return v(x, Slot::run_id); }).bash_word() == "\"$RUN_ID\"");
}

TEST_CASE("the two-type launch script matches the golden text") {
  const std::string script = launcher::launch_script(test::two_type_plan(), test::example_config());
  check_golden("launch_two_types.sh", script);
  // Spot-only APIs of the legacy kind are never used, nor eval; the standard endpoint variable is.
  CHECK_FALSE(contains(script, "request-spot-instances"));
  CHECK_FALSE(contains(script, "create-fleet"));
  CHECK_FALSE(contains(script, "eval "));
  CHECK_FALSE(contains(script, "AWS_SECRET"));
  CHECK_FALSE(contains(script, "SPOTDNN_AWS_ENDPOINT_URL"));
  CHECK(contains(script, "--endpoint-url \"$AWS_ENDPOINT_URL\""));
  CHECK(contains(script, "# Region: us-east-1, as planned.\n"));
  CHECK(script.rfind("#!/usr/bin/env bash\n", 0) == 0);
}

TEST_CASE("the fleet launch script matches the golden text and has one instant fleet per spot group") {
  const std::string script = launcher::launch_script(test::two_type_plan(), test::example_config(), with_fleet(true));
  check_golden("launch_two_types_fleet.sh", script);
  CHECK_FALSE(contains(script, "request-spot-instances"));
  CHECK_FALSE(contains(script, "eval "));
  const std::string fleet = launcher::fleet_request_template(test::example_config(), "g3.8xlarge", 4).filled(test::example_values());
  CHECK(contains(fleet, "\"Type\":\"instant\""));
  CHECK(contains(fleet, "\"MinTargetCapacity\":4"));
  CHECK(contains(fleet, "\"TotalTargetCapacity\":4"));
  CHECK(contains(fleet, "\"Overrides\":[{\"InstanceType\":\"g3.8xlarge\",\"SubnetId\":\"subnet-0123456789abcdef0\"}]"));
}

TEST_CASE("the join script matches the golden text") {
  const std::string script = launcher::join_script(test::example_replan(), test::kExampleRunId, test::example_config());
  check_golden("join_replan.sh", script);
  CHECK(contains(script, "readonly RUN_ID='" + test::kExampleRunId + "'\n"));
  CHECK(contains(script, "# Survivors as the replan saw them: g3.8xlarge=4,p3.2xlarge=1.\n"));
  CHECK(contains(script, "Name=tag:spotdnn:run,Values=$RUN_ID"));
  CHECK(contains(script, "exit 3"));
  CHECK_FALSE(contains(script, "create-placement-group"));  // a join never touches what the run already has
  CHECK_FALSE(contains(script, "eval "));
}

TEST_CASE("the status and teardown scripts match the golden texts and select by the exact run tag") {
  const std::string status = launcher::status_script(test::kExampleRunId, test::example_config());
  const std::string teardown = launcher::teardown_script(test::kExampleRunId, test::example_config());
  check_golden("status_run.sh", status);
  check_golden("teardown_run.sh", teardown);
  for (const std::string* script : {&status, &teardown}) {
    CHECK(contains(*script, "readonly RUN_ID='" + test::kExampleRunId + "'\n"));
    CHECK(contains(*script, "[[ $RUN_ID =~ " + std::string(launcher::kRunIdRegex) + " ]]"));
    CHECK(contains(*script, "\"Name=tag:spotdnn:run,Values=$RUN_ID\""));
    CHECK_FALSE(contains(*script, "run-instances"));
  }
  CHECK(count_of(teardown, "terminate-instances") == 1);
  CHECK(contains(teardown, "'Name=instance-state-name,Values=pending,running,stopping,stopped'"));
  CHECK_FALSE(contains(status, "terminate-instances"));
  for (const std::string& bad : {std::string("*"), std::string("20260301-120000-*"), std::string("20260301-120000-0a1b2c,x")}) {
    CAPTURE(bad);
    CHECK(contains(test::error_of([&] { (void)launcher::status_script(bad, test::example_config()); }), "--run"));
    CHECK(contains(test::error_of([&] { (void)launcher::teardown_script(bad, test::example_config()); }), "--run"));
  }
}

namespace {

/// Runs `script` as `bash NAME` in `dir` with the stand-in aws (test::write_aws_stub); stdout in
/// out.txt, stderr in err.txt. Returns the exit code.
int run_with_stub(const test::TempDir& dir, const std::string& name, const std::string& script) {
  test::write_aws_stub(dir);
  test::write_text(dir / name, script);
  return test::run_bash("cd " + launcher::shell_quote(dir.path().string()) + " && timeout 60 env -i PATH=/usr/bin:/bin SPOTDNN_AWS=" +
                        launcher::shell_quote(dir / "aws") + " AWS_ENDPOINT_URL=http://127.0.0.1:9 bash " + name +
                        " >out.txt 2>err.txt");
}

/// The whitespace-separated words of each line of `text`.
std::vector<std::vector<std::string>> words_of(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    out.emplace_back();
    for (std::string word; in >> word;) out.back().push_back(word);
  }
  return out;
}

}  // namespace

TEST_CASE("the status script lists the run's instances by rank, and exits 3 for a run without any") {
  const std::string script = launcher::status_script(test::kExampleRunId, test::example_config());
  const std::string describe = "--region|us-east-1|--output|text|--endpoint-url|http://127.0.0.1:9|ec2|describe-instances|--filters|"
                               "Name=tag:spotdnn:run,Values=" + test::kExampleRunId + "|--query|";
  SUBCASE("instances") {
    test::TempDir dir;
    // InstanceId State InstanceType PrivateIp role market rank-base revoked, as the aws CLI prints them.
    test::write_text(dir / "describe-instances.txt",
                     "i-0c00000000000001\trunning\tg3.8xlarge\t10.0.2.1\tworker\ton-demand\t3\tNone\n"
                     "i-0b00000000000002\trunning\tp3.2xlarge\t10.0.1.2\tworker\tspot\t1\trebalance\n"
                     "i-0aaaaaaaaaaaaaaa0\trunning\tm5.xlarge\t10.0.0.10\tps\ton-demand\t0\tNone\n"
                     "i-0b00000000000001\tterminated\tp3.2xlarge\tNone\tworker\tspot\t1\tinstance-action\n"
                     "i-0d00000000000001\trunning\tp3.2xlarge\t10.0.3.1\tworker\tspot\tNone\t$(touch${IFS}PWNED)\n");
    const int rc = run_with_stub(dir, "status.sh", script);
    INFO(test::read_text(dir / "err.txt"));
    REQUIRE(rc == 0);
    using Row = std::vector<std::string>;
    CHECK(words_of(test::read_text(dir / "out.txt")) ==
          std::vector<Row>{{"RANK", "ROLE", "INSTANCE_ID", "TYPE", "MARKET", "STATE", "PRIVATE_IP", "REVOKED"},
                           {"0", "ps", "i-0aaaaaaaaaaaaaaa0", "m5.xlarge", "on-demand", "running", "10.0.0.10", "-"},
                           {"1", "worker", "i-0b00000000000001", "p3.2xlarge", "spot", "terminated", "-", "instance-action"},
                           {"2", "worker", "i-0b00000000000002", "p3.2xlarge", "spot", "running", "10.0.1.2", "rebalance"},
                           {"3", "worker", "i-0c00000000000001", "g3.8xlarge", "on-demand", "running", "10.0.2.1", "-"},
                           {"?", "worker", "i-0d00000000000001", "p3.2xlarge", "spot", "running", "10.0.3.1", "-"},
                           {"spotdnn", "run", test::kExampleRunId + ":", "5", "instances", "(4", "running,", "1", "terminated)"}});
    CHECK(test::aws_stub_calls(dir).size() == 1);
    CHECK(test::aws_stub_calls(dir)[0].rfind(describe, 0) == 0);
    CHECK(test::pwned_files(dir.path()).empty());
  }
  SUBCASE("no instances") {
    test::TempDir dir;
    const int rc = run_with_stub(dir, "status.sh", script);
    CHECK(rc == 3);
    CHECK(contains(test::read_text(dir / "err.txt"), "no instances for run " + test::kExampleRunId));
  }
}

TEST_CASE("the teardown script terminates the run's live instances, and exits 3 when there are none") {
  const std::string script = launcher::teardown_script(test::kExampleRunId, test::example_config());
  SUBCASE("instances") {
    test::TempDir dir;
    test::write_text(dir / "describe-instances.txt", "i-0aaaaaaaaaaaaaaa0\ti-0b00000000000002\n");
    const int rc = run_with_stub(dir, "teardown.sh", script);
    INFO(test::read_text(dir / "err.txt"));
    REQUIRE(rc == 0);
    const std::vector<std::string> calls = test::aws_stub_calls(dir);
    REQUIRE(calls.size() == 2);
    CHECK(contains(calls[0], "|ec2|describe-instances|--filters|Name=tag:spotdnn:run,Values=" + test::kExampleRunId +
                                 "|Name=instance-state-name,Values=pending,running,stopping,stopped|"));
    CHECK(contains(calls[1], "|ec2|terminate-instances|--instance-ids|i-0aaaaaaaaaaaaaaa0|i-0b00000000000002|"));
    CHECK(test::read_text(dir / "out.txt") == "spotdnn run " + test::kExampleRunId + ": terminated 2 instances\n");
  }
  SUBCASE("an unexpected ID: nothing terminated") {
    test::TempDir dir;
    test::write_text(dir / "describe-instances.txt", "i-0aaaaaaaaaaaaaaa0\t*\n");
    CHECK(run_with_stub(dir, "teardown.sh", script) != 0);
    CHECK(test::aws_stub_calls(dir).size() == 1);
  }
  SUBCASE("no instances") {
    test::TempDir dir;
    CHECK(run_with_stub(dir, "teardown.sh", script) == 3);
    CHECK(test::aws_stub_calls(dir).size() == 1);
    CHECK(contains(test::read_text(dir / "err.txt"), "nothing terminated"));
  }
}

TEST_CASE("the join script takes rank bases above every rank of the run and the PS it finds, or exits 3 without one") {
  const std::string script = launcher::join_script(test::example_replan(), test::kExampleRunId, test::example_config());
  // InstanceId State PrivateIp role rank-base: ranks 0 (PS), 1..3 (one terminated) and 4 are taken.
  const std::string rows =
      "i-0aaaaaaaaaaaaaaa0\trunning\t10.0.0.10\tps\t0\n"
      "i-0b00000000000001\tterminated\tNone\tworker\t1\n"
      "i-0b00000000000002\trunning\t10.0.1.2\tworker\t1\n"
      "i-0b00000000000003\trunning\t10.0.1.3\tworker\t1\n"
      "i-0c00000000000001\tpending\t10.0.2.1\tworker\t4\n";
  SUBCASE("a running PS") {
    test::TempDir dir;
    test::write_text(dir / "describe-instances.txt", rows);
    const int rc = run_with_stub(dir, "join.sh", script);
    INFO(test::read_text(dir / "err.txt"));
    REQUIRE(rc == 0);
    CHECK(test::read_text(dir / "out.txt") == "spotdnn run: " + test::kExampleRunId + "\n");
    const std::string log = test::read_text(dir / "aws.log");
    CHECK(count_of(log, "|ec2|run-instances|") == 2);
    // 4 live instances + 2 additions; the groups get ranks 5 and 6.
    CHECK(count_of(log, "SPOTDNN_WORLD_SIZE='6'\n") == 2);
    CHECK(count_of(log, "SPOTDNN_PS_PRIVATE_IP='10.0.0.10'\n") == 2);
    CHECK(contains(log, "SPOTDNN_RANK_BASE='5'\nexport SPOTDNN_RUN_ID SPOTDNN_PS_PRIVATE_IP SPOTDNN_WORLD_SIZE SPOTDNN_RANK_BASE\n"
                        "export SPOTDNN_ROLE='worker'\nexport SPOTDNN_INSTANCE_TYPE='p3.2xlarge'\n"));
    CHECK(contains(log, "SPOTDNN_RANK_BASE='6'\nexport SPOTDNN_RUN_ID SPOTDNN_PS_PRIVATE_IP SPOTDNN_WORLD_SIZE SPOTDNN_RANK_BASE\n"
                        "export SPOTDNN_ROLE='worker'\nexport SPOTDNN_INSTANCE_TYPE='g4dn.4xlarge'\n"));
    CHECK(contains(log, "{\"Key\":\"spotdnn:run\",\"Value\":\"" + test::kExampleRunId + "\"},{\"Key\":\"spotdnn:rank-base\",\"Value\":\"5\"}"));
    CHECK(contains(log, "{\"Key\":\"spotdnn:run\",\"Value\":\"" + test::kExampleRunId + "\"},{\"Key\":\"spotdnn:rank-base\",\"Value\":\"6\"}"));
    CHECK_FALSE(contains(log, "terminate-instances"));
  }
  SUBCASE("no running PS: exit 3, nothing launched") {
    test::TempDir dir;
    std::string without_ps = rows;
    without_ps.replace(without_ps.find("running\t10.0.0.10"), 7, "stopped");
    test::write_text(dir / "describe-instances.txt", without_ps);
    CHECK(run_with_stub(dir, "join.sh", script) == 3);
    CHECK(contains(test::read_text(dir / "err.txt"), "no running parameter server for run " + test::kExampleRunId));
    CHECK(test::aws_stub_calls(dir).size() == 1);
    CHECK(test::read_text(dir / "out.txt").empty());
  }
}

TEST_CASE("launch refuses a replan document, join a plan document or a bad run id, and both refuse another region unless overridden") {
  const AwsConfig config = test::example_config();
  CHECK(contains(test::error_of([&] { (void)launcher::launch_script(test::example_replan(), config); }), "--join"));
  CHECK(contains(test::error_of([&] { (void)launcher::join_script(test::two_type_plan(), test::kExampleRunId, config); }), "kind"));
  for (const std::string& bad : {std::string(""), std::string("*"), std::string("20260301-120000-0a1b2?"),
                                 std::string("20260301-120000-0A1B2C"), test::kExampleRunId + "\n"}) {
    CAPTURE(bad);
    CHECK(contains(test::error_of([&] { (void)launcher::join_script(test::example_replan(), bad, config); }), "--join"));
  }

  LaunchPlan plan = test::two_type_plan();
  LaunchPlan replan = test::example_replan();
  plan.region = replan.region = "us-west-2";
  const std::string launch_error = test::error_of([&] { (void)launcher::launch_script(plan, config); });
  CHECK(contains(launch_error, "region"));
  CHECK(contains(launch_error, "us-west-2"));
  CHECK(contains(launch_error, "--region-override"));
  CHECK(contains(test::error_of([&] { (void)launcher::join_script(replan, test::kExampleRunId, config); }), "--region-override"));
  launcher::LaunchOptions options;
  options.region_override = true;
  const std::string note = "# Region: us-east-1 (--region-override: the plan was priced for us-west-2).\n";
  const std::string launch = launcher::launch_script(plan, config, options);
  const std::string join = launcher::join_script(replan, test::kExampleRunId, config, options);
  CHECK(contains(launch, note));
  CHECK(contains(join, note));
  CHECK(contains(launch, "readonly REGION='us-east-1'\n"));
  CHECK(contains(join, "readonly REGION='us-east-1'\n"));
}

TEST_CASE("markets: spot groups are one-time spot terminated on interruption, on-demand groups and the PS are on-demand") {
  test::TempDir dir;
  const AwsConfig config = test::example_config();
  const SlotValues values = test::example_values();

  SUBCASE("run-instances") {
    const std::string script = launcher::launch_script(test::two_type_plan(), config);
    const std::vector<std::string> launches = commands(script, "aws_ec2 run-instances");
    REQUIRE(launches.size() == 3);
    std::map<std::string, std::string> by_type;
    for (const std::string& command : launches) by_type[argument_of(command, "--instance-type")] = command;
    REQUIRE(by_type.count("'m5.xlarge'") == 1);
    REQUIRE(by_type.count("'p3.2xlarge'") == 1);
    REQUIRE(by_type.count("'g3.8xlarge'") == 1);
    CHECK(argument_of(by_type["'m5.xlarge'"], "--count") == "1");
    CHECK(argument_of(by_type["'p3.2xlarge'"], "--count") == "2");
    CHECK(argument_of(by_type["'g3.8xlarge'"], "--count") == "4");
    CHECK(argument_of(by_type["'p3.2xlarge'"], "--image-id") == "'ami-0fedcba9876543210'");  // image_ids names it
    CHECK(argument_of(by_type["'g3.8xlarge'"], "--image-id") == "'ami-0123456789abcdef0'");
    // Rank bases: the PS 0, then 1 and 1 + 2 in plan order.
    const std::size_t p3 = script.find("--instance-type 'p3.2xlarge'");
    const std::size_t g3 = script.find("--instance-type 'g3.8xlarge'");
    const std::size_t base1 = script.find("  rank_base=1\n");
    const std::size_t base3 = script.find("  rank_base=3\n");
    CHECK(script.find("rank_base=0") < script.find("--instance-type 'm5.xlarge'"));
    CHECK(script.find("--instance-type 'm5.xlarge'") < base1);
    CHECK(base1 < p3);
    CHECK(p3 < base3);
    CHECK(base3 < g3);
    CHECK(g3 != std::string::npos);
    CHECK(contains(script, "readonly world_size=7\n"));

    const std::string spot_market =
        "'{\"MarketType\":\"spot\",\"SpotOptions\":{\"SpotInstanceType\":\"one-time\",\"InstanceInterruptionBehavior\":\"terminate\"}}'";
    CHECK(argument_of(by_type["'p3.2xlarge'"], "--instance-market-options") == spot_market);
    CHECK_FALSE(contains(by_type["'g3.8xlarge'"], "--instance-market-options"));
    CHECK_FALSE(contains(by_type["'m5.xlarge'"], "--instance-market-options"));
    CHECK_FALSE(contains(by_type["'g3.8xlarge'"], "spot-instances-request"));
    CHECK_FALSE(contains(by_type["'m5.xlarge'"], "spot-instances-request"));

    struct Expected {
      std::string type, role, market;
      std::vector<std::string> resources;
    };
    for (const Expected& e : {Expected{"p3.2xlarge", "worker", "spot", {"instance", "spot-instances-request"}},
                              Expected{"g3.8xlarge", "worker", "on-demand", {"instance"}},
                              Expected{"m5.xlarge", "ps", "on-demand", {"instance"}}}) {
      CAPTURE(e.type);
      const json specifications = json::parse(bash_value(dir, argument_of(by_type["'" + e.type + "'"], "--tag-specifications"), values));
      REQUIRE(specifications.size() == e.resources.size());
      for (std::size_t i = 0; i < e.resources.size(); ++i) {
        CHECK(specifications[i]["ResourceType"] == e.resources[i]);
        CHECK(tag_map(specifications[i]) == expected_tags(config, e.role, e.type, e.market, "3"));
      }
    }
  }

  SUBCASE("EC2 Fleet for spot groups only") {
    const std::string script = launcher::launch_script(test::two_type_plan(), config, with_fleet(true));
    CHECK(count_of(script, "aws_ec2 create-fleet") == 1);
    CHECK(count_of(script, "aws_ec2 create-launch-template") == 1);
    const std::vector<std::string> launches = commands(script, "aws_ec2 run-instances");
    REQUIRE(launches.size() == 2);
    CHECK(argument_of(launches[0], "--instance-type") == "'m5.xlarge'");
    CHECK(argument_of(launches[1], "--instance-type") == "'g3.8xlarge'");
    for (const std::string& command : launches) CHECK_FALSE(contains(command, "--instance-market-options"));

    const std::vector<std::string> fleets = commands(script, "aws_ec2 create-fleet");
    REQUIRE(fleets.size() == 1);
    const std::string request_word = argument_of(fleets[0], "--cli-input-json");
    const json request = json::parse(bash_value(dir, request_word.substr(0, request_word.find(" --query")), values));
    CHECK(request["Type"] == "instant");
    CHECK(request["TargetCapacitySpecification"]["TotalTargetCapacity"] == 2);
    CHECK(request["TargetCapacitySpecification"]["DefaultTargetCapacityType"] == "spot");
    CHECK(request["SpotOptions"]["MinTargetCapacity"] == 2);
    CHECK(request["SpotOptions"]["InstanceInterruptionBehavior"] == "terminate");
    CHECK(request["LaunchTemplateConfigs"][0]["Overrides"][0]["InstanceType"] == "p3.2xlarge");
    CHECK(tag_map(request["TagSpecifications"][0]) == expected_tags(config, "worker", "p3.2xlarge", "spot", "3"));

    const std::vector<std::string> templates = commands(script, "aws_ec2 create-launch-template");
    REQUIRE(templates.size() == 1);
    std::string data_word = argument_of(templates[0], "--launch-template-data");
    data_word = data_word.substr(0, data_word.find(" >/dev/null"));
    const json data = json::parse(bash_value(dir, data_word, values, "user_data_base64=Zm9v; "));
    CHECK(data["UserData"] == "Zm9v");
    CHECK(data["ImageId"] == "ami-0fedcba9876543210");
    CHECK(data["MetadataOptions"]["HttpTokens"] == "required");
    REQUIRE(data["TagSpecifications"].size() == 3);
    CHECK(data["TagSpecifications"][2]["ResourceType"] == "spot-instances-request");
    for (const json& specification : data["TagSpecifications"]) {
      CHECK(tag_map(specification) == expected_tags(config, "worker", "p3.2xlarge", "spot", "3"));
    }
    const json template_tags = json::parse(bash_value(dir, argument_of(templates[0], "--tag-specifications"), values));
    CHECK(template_tags[0]["ResourceType"] == "launch-template");

    // The fleet launches from the template the script just created, under the same name.
    const std::size_t at = script.find("  template_name=");
    REQUIRE(at != std::string::npos);
    const std::string name_word = script.substr(at + 16, script.find('\n', at) - at - 16);
    const std::string template_name = bash_value(dir, name_word, values);
    CHECK(request["LaunchTemplateConfigs"][0]["LaunchTemplateSpecification"]["LaunchTemplateName"].get<std::string>() == template_name);
  }

  SUBCASE("a join launches its additions in their markets") {
    const std::string script = launcher::join_script(test::example_replan(), test::kExampleRunId, config);
    const std::vector<std::string> launches = commands(script, "aws_ec2 run-instances");
    REQUIRE(launches.size() == 2);
    CHECK(argument_of(launches[0], "--instance-type") == "'p3.2xlarge'");
    CHECK(contains(launches[0], "--instance-market-options"));
    CHECK(argument_of(launches[1], "--instance-type") == "'g4dn.4xlarge'");
    CHECK_FALSE(contains(launches[1], "--instance-market-options"));
    CHECK(contains(script, "rank_base=$((rank_base + 1))\n"));  // the second group after the first one's 1 instance
    const std::string fleet_join = launcher::join_script(test::example_replan(), test::kExampleRunId, config, with_fleet(true));
    CHECK(count_of(fleet_join, "aws_ec2 create-fleet") == 1);
    CHECK(commands(fleet_join, "aws_ec2 run-instances").size() == 1);
  }
}

TEST_CASE("the user data words of the scripts give exactly user_data() in bash, hostile configuration included") {
  test::TempDir dir;
  for (const AwsConfig& config : {test::example_config(), test::hostile_config()}) {
    const std::string script = launcher::launch_script(test::two_type_plan(), config);
    const launcher::InstanceRole ps{"ps", "m5.xlarge", Market::on_demand};
    const launcher::InstanceRole spot{"worker", "p3.2xlarge", Market::spot};
    const launcher::InstanceRole on_demand{"worker", "g3.8xlarge", Market::on_demand};
    const std::vector<std::pair<launcher::InstanceRole, int>> groups = {{ps, 0}, {spot, 1}, {on_demand, 2}};
    for (const auto& group : groups) {
      CAPTURE(group.first.type);
      const std::string word = launcher::user_data_template(config, group.first, group.second).bash_word();
      CHECK(contains(script, "  user_data=" + word + "\n"));
      const SlotValues values = test::example_values();
      CHECK(bash_value(dir, word, values) == launcher::user_data(config, group.first, group.second, values));
    }
  }
  CHECK(test::pwned_files(dir.path()).empty());
}

TEST_CASE("every emitted script and user data passes bash -n and shellcheck") {
  test::TempDir dir;
  int n = 0;
  for (const AwsConfig& config : {test::example_config(), minimal_config(), test::hostile_config()}) {
    LaunchPlan plan = test::two_type_plan();
    LaunchPlan replan = test::example_replan();
    plan.workers.push_back({"p2.8xlarge", 5, 8, Market::spot});
    launcher::LaunchOptions options;
    options.region_override = true;
    for (bool fleet : {false, true}) {
      options.fleet = fleet;
      const std::string suffix = std::to_string(n) + (fleet ? "-fleet" : "-run") + ".sh";
      check_script(dir, "launch-" + suffix, launcher::launch_script(plan, config, options));
      check_script(dir, "join-" + suffix, launcher::join_script(replan, test::kExampleRunId, config, options));
    }
    check_script(dir, "status-" + std::to_string(n) + ".sh", launcher::status_script(test::kExampleRunId, config));
    check_script(dir, "teardown-" + std::to_string(n) + ".sh", launcher::teardown_script(test::kExampleRunId, config));
    check_script(dir, "worker-" + std::to_string(n) + ".sh", launcher::user_data(config, kWorker, 1, test::example_values()));
    check_script(dir, "worker-od-" + std::to_string(n) + ".sh",
                 launcher::user_data(config, {"worker", "g3.8xlarge", Market::on_demand}, 2, test::example_values()));
    check_script(dir, "ps-" + std::to_string(n) + ".sh", launcher::user_data(config, kParameterServer, 0, test::example_values()));
    ++n;
  }
}

TEST_CASE("user data over 16384 bytes is refused and the limit itself is accepted, counting the longest run values") {
  const SlotValues longest = launcher::longest_slot_values();
  const SlotValues longest_valid = longest_valid_values();
  for (std::size_t i = 0; i < launcher::kSlotCount; ++i) CHECK(longest[i].size() == longest_valid[i].size());
  for (const launcher::InstanceRole& who : {kWorker, kParameterServer}) {
    CAPTURE(who.role);
    const int gpus = who.role == "ps" ? 0 : 1;
    AwsConfig config = test::example_config();
    config.training_command.clear();
    const std::size_t base = launcher::user_data_template(config, who, gpus).filled(longest).size();
    REQUIRE(base < launcher::kUserDataLimitBytes);
    // Plain 'x' characters are inserted unchanged inside the single quotes.
    config.training_command = std::string(launcher::kUserDataLimitBytes - base, 'x');
    CHECK(launcher::user_data_template(config, who, gpus).filled(longest).size() == launcher::kUserDataLimitBytes);
    CHECK(launcher::user_data(config, who, gpus, longest_valid).size() == launcher::kUserDataLimitBytes);
    CHECK(launcher::user_data(config, who, gpus, test::example_values()).size() < launcher::kUserDataLimitBytes);
    config.training_command += 'x';
    const std::string message = test::error_of([&] { (void)launcher::user_data_template(config, who, gpus); });
    CHECK(contains(message, "16385 bytes"));
    CHECK(contains(message, "16384"));
    CHECK(contains(message, "training_command"));
    CHECK(contains(test::error_of([&] { (void)launcher::user_data(config, who, gpus, test::example_values()); }), "16385 bytes"));
  }

  // A launch whose largest user data (the p3.2xlarge spot workers') is exactly at the limit goes
  // through; one byte more is refused by launch and join.
  AwsConfig config = test::example_config();
  config.training_command.clear();
  config.training_command = std::string(launcher::kUserDataLimitBytes - launcher::user_data_template(config, kWorker, 1).filled(longest).size(), 'x');
  LaunchPlan plan = test::two_type_plan();
  plan.workers = {{"p3.2xlarge", 2, 1, Market::spot}};
  LaunchPlan replan = test::example_replan();
  replan.workers = {{"p3.2xlarge", 1, 1, Market::spot}};
  CHECK(test::error_of([&] { (void)launcher::launch_script(plan, config, with_fleet(true)); }) == "(accepted)");
  CHECK(test::error_of([&] { (void)launcher::join_script(replan, test::kExampleRunId, config); }) == "(accepted)");
  config.training_command += 'x';
  CHECK(contains(test::error_of([&] { (void)launcher::launch_script(plan, config); }), "16385 bytes"));
  CHECK(contains(test::error_of([&] { (void)launcher::join_script(replan, test::kExampleRunId, config); }), "16385 bytes"));
  CHECK_THROWS_AS((void)launcher::launch_script(test::two_type_plan(), config), invalid_argument);
}

TEST_CASE("user_data refuses values that are not of their kind") {
  const AwsConfig config = test::example_config();
  const auto with = [&](const launcher::InstanceRole& who, Slot slot, const std::string& value) {
    SlotValues values = test::example_values();
    values[static_cast<std::size_t>(slot)] = value;
    return test::error_of([&] { (void)launcher::user_data(config, who, who.role == "ps" ? 0 : 1, values); });
  };
  CHECK(with(kWorker, Slot::run_id, test::kExampleRunId) == "(accepted)");
  CHECK(contains(with(kWorker, Slot::run_id, "*"), "run id"));
  CHECK(contains(with(kWorker, Slot::ps_address, "10.0.0.256"), "ps_private_ip"));
  CHECK(contains(with(kWorker, Slot::ps_address, "10.0.0.1'"), "ps_private_ip"));
  CHECK(with(kParameterServer, Slot::ps_address, "") == "(accepted)");  // the PS has no PS address to be told
  CHECK(contains(with(kWorker, Slot::world_size, "10000000"), "world_size"));
  CHECK(contains(with(kWorker, Slot::world_size, "-1"), "world_size"));
  CHECK(contains(with(kWorker, Slot::rank_base, ""), "rank_base"));
  CHECK(contains(with(kWorker, Slot::rank_base, "1 2"), "rank_base"));
  CHECK(contains(test::error_of([&] { (void)launcher::user_data(config, {"chief", "m5.xlarge", Market::on_demand}, 0, test::example_values()); }),
                 "role"));
  CHECK(contains(test::error_of([&] { (void)launcher::user_data(config, kWorker, 0, test::example_values()); }), "gpus"));
}

TEST_CASE("the AWS JSON reader refuses credentials, unknown keys and bad IDs with their key path") {
  const auto read = [](const std::string& text) {
    return test::error_of([&] { (void)launcher::aws_config_from_json(io::parse_json(text, "test")); });
  };
  const std::string good = R"("region": "us-east-1", "subnet_id": "subnet-12345678", "security_group_ids": ["sg-12345678"],
      "image_id": "ami-12345678", "checkpoint_s3_uri": "s3://bucket/x")";
  CHECK(read("{" + good + "}") == "(accepted)");
  // The README's list of required keys: these five and no other (subnet_ids may stand for subnet_id).
  for (const char* key : {"region", "subnet_id", "security_group_ids", "image_id", "checkpoint_s3_uri"}) {
    CAPTURE(key);
    io::Json without = io::parse_json("{" + good + "}", "test");
    without.erase(key);
    const std::string error = test::error_of([&] { (void)launcher::aws_config_from_json(without); });
    CHECK(contains(error, std::string("aws.") + key));
  }
  CHECK(read(R"({"region": "us-east-1", "subnet_ids": {"us-east-1a": "subnet-12345678"}, "security_group_ids": ["sg-12345678"],
      "image_id": "ami-12345678", "checkpoint_s3_uri": "s3://bucket/x"})") == "(accepted)");
  CHECK(contains(read("{" + good + R"(, "aws_secret_access_key": "abc"})"), "credentials are never accepted"));
  CHECK_FALSE(contains(read("{" + good + R"(, "aws_secret_access_key": "abc"})"), "abc"));
  CHECK(contains(read("{" + good + R"(, "AccessKeyId": "abc"})"), "aws.AccessKeyId"));
  CHECK(contains(read("{" + good + R"(, "colour": "blue"})"), "aws.colour"));
  CHECK(contains(read("{" + good + R"(, "tags": {"k": 3}})"), "aws.tags[\"k\"]"));
  CHECK(contains(read(R"({"region": "us-east-1", "subnet_id": "subnet-zz", "security_group_ids": ["sg-12345678"],
      "image_id": "ami-12345678", "checkpoint_s3_uri": "s3://bucket/x"})"),
                 "aws.subnet_id = \"subnet-zz\""));
  // Values are scanned too (the value never echoed): an access key ID or a credential variable in a
  // training command, a tag value, a function's environment value.
  const std::string key_id = "AKIA" "IOSFODNN7EXAMPLE";  // the AWS documentation's example key ID
  const std::string in_command = read("{" + good + R"(, "training_command": "AWS_ACCESS_KEY_ID=)" + key_id + R"( python t.py"})");
  CHECK(contains(in_command, "aws.training_command"));
  CHECK(contains(in_command, "credentials are never accepted"));
  CHECK_FALSE(contains(in_command, key_id));
  CHECK(contains(read("{" + good + R"(, "training_command": "export aws_secret_access_key=x; python t.py"})"), "aws.training_command"));
  CHECK(contains(read("{" + good + R"(, "tags": {"owner": "key )" + key_id + R"("}})"), "aws.tags[\"owner\"]"));
  CHECK(contains(read("{" + good + R"(, "tags": {"owner": ")" + std::string("ASIA") + "ABCDEFGHIJ234567" + R"("}})"), "never accepted"));
  // Not a key ID: too short, too long, or inside a longer word; and ordinary values.
  CHECK(read("{" + good + R"(, "tags": {"a": "AKIA1234", "b": "AKIAIOSFODNN7EXAMPLEXYZ", "c": "xAKIAIOSFODNN7EXAMPLE"}})") == "(accepted)");
  CHECK(read("{" + good + R"(, "training_command": "python train.py --lr 0.1"})") == "(accepted)");
  const AwsConfig c = launcher::aws_config_from_json(io::parse_json("{" + good + R"(, "tags": {"a b": "c'd"}, "poll_interval_s": 0.5})", "t"));
  CHECK(c.tags.at("a b") == "c'd");
  CHECK(c.poll_interval_s == 0.5);
}

TEST_CASE("the controller's run-instances arguments: the join's user data and tags filled, the action tag and client token, one argument each") {
  const launcher::AwsConfig config = test::example_config();
  launcher::JoinRequest join;
  join.run_id = test::kExampleRunId;
  join.group = {"p3.2xlarge", 2, 1, Market::spot};
  join.ps_private_ip = "10.0.0.10";
  join.world_size = 7;
  join.rank_base = 5;
  join.client_token = test::kExampleRunId + "-3";
  const std::vector<std::string> a = launcher::run_instances_arguments(config, join);
  const auto value = [&](const std::string& option) {
    const auto at = std::find(a.begin(), a.end(), option);
    REQUIRE(at != a.end());
    REQUIRE(at + 1 != a.end());
    return *(at + 1);
  };
  CHECK(a.front() == "run-instances");
  CHECK(value("--image-id") == "ami-0fedcba9876543210");  // the type's own AMI
  CHECK(value("--count") == "2");
  CHECK(value("--subnet-id") == "subnet-0123456789abcdef0");
  const auto groups = std::find(a.begin(), a.end(), "--security-group-ids");
  REQUIRE(std::distance(groups, a.end()) > 2);
  CHECK(*(groups + 1) == "sg-0123456789abcdef0");
  CHECK(*(groups + 2) == "sg-89abcdef");
  CHECK(value("--client-token") == join.client_token);
  CHECK(value("--query") == "Instances[].InstanceId");
  CHECK(value("--key-name") == "team's \"key\"");  // one argument, no shell: quotes stay as they are
  // The same user data the join script fills in bash, here filled by spotdnn.
  CHECK(value("--user-data") == launcher::user_data(config, {"worker", "p3.2xlarge", Market::spot}, 1,
                                                       {test::kExampleRunId, "10.0.0.10", "7", "5"}));
  const nlohmann::json tags = nlohmann::json::parse(value("--tag-specifications"));
  REQUIRE(tags.size() == 2);  // the instance and its spot request
  std::map<std::string, std::string> instance_tags;
  for (const auto& tag : tags[0]["Tags"]) instance_tags[tag["Key"]] = tag["Value"];
  CHECK(instance_tags.at("spotdnn:run") == test::kExampleRunId);
  CHECK(instance_tags.at("spotdnn:rank-base") == "5");
  CHECK(instance_tags.at("spotdnn:action") == join.client_token);
  CHECK(instance_tags.at("Project") == config.tags.at("Project"));
  CHECK(nlohmann::json::parse(value("--instance-market-options"))["MarketType"] == "spot");
  CHECK(nlohmann::json::parse(value("--metadata-options"))["HttpTokens"] == "required");

  join.group.market = Market::on_demand;
  const std::vector<std::string> on_demand = launcher::run_instances_arguments(config, join);
  CHECK(std::find(on_demand.begin(), on_demand.end(), "--instance-market-options") == on_demand.end());

  // Refusals name the field: a missing PS address, a rank 0, a token longer than EC2 takes.
  launcher::JoinRequest bad = join;
  bad.ps_private_ip = "";
  CHECK(test::error_of([&] { (void)launcher::run_instances_arguments(config, bad); }).find("ps_private_ip") != std::string::npos);
  bad = join;
  bad.rank_base = 0;
  CHECK(test::error_of([&] { (void)launcher::run_instances_arguments(config, bad); }).find("rank_base") != std::string::npos);
  bad = join;
  bad.client_token = std::string(65, 'a');
  CHECK(test::error_of([&] { (void)launcher::run_instances_arguments(config, bad); }).find("client_token") != std::string::npos);
  bad = join;
  bad.world_size = 2;
  CHECK(test::error_of([&] { (void)launcher::run_instances_arguments(config, bad); }).find("world_size") != std::string::npos);
}

TEST_CASE("the next rank base is above every rank EC2 lists for the run, terminated holders included") {
  std::vector<launcher::RunInstance> run(5);
  run[0].rank_base = 0;                        // the PS
  run[1].rank_base = 1;                        // a group of two at 1
  run[2].rank_base = 1;
  run[2].state = "terminated";
  run[3].rank_base = 3;                        // a group of one at 3
  run[4].rank_base.reset();                    // no tag: not counted
  CHECK(launcher::next_rank_base(run) == 4);
  CHECK(launcher::next_rank_base({}) == 1);
  run[3].rank_base = 9;
  CHECK(launcher::next_rank_base(run) == 10);
}
