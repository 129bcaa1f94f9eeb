// SPDX-License-Identifier: MIT
// Errors in the user's words: every refusal of the `spotdnn` tool names the option and the value the user
// typed (or the file and key), says what is allowed, suggests the nearest valid name, and never shows the
// library's C++ names (`options.x`, `Type::member`, `plan_exact:`), whichever option of whichever command
// gets a bad value.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include <spotdnn/detail/validate.hpp>
#include <spotdnn/errors.hpp>

#include "../examples/cli/options.hpp"
#include "../examples/cli/user_words.hpp"
#include "support/run_command.hpp"

using spotdnn::test::CommandResult;
using spotdnn::test::run_cli;

namespace {

const std::string kSource = std::string(SPOTDNN_TEST_SOURCE_DIR);
const std::string kData = kSource + "/tests/hostile/";
const std::string kTrace = kSource + "/tests/fixtures/traces/preemption/1-node/aws-04-19-2023/us-east-1c_intel_64.json";

/// The C++ name in `text` ("options.", "Type::", "plan_exact: ", "read_catalog_file(", "PerformanceModel"),
/// or "" when there is none.
std::string cpp_name_in(const std::string& text) {
  static const std::regex kPatterns[] = {
      std::regex(R"(options\.[a-z_]+)"),
      std::regex(R"([A-Za-z_]+::[A-Za-z_]*)"),
      std::regex(R"((^|: )[a-z][a-z0-9]*(_[a-z0-9]+)+: )"),          // a function's name before its message
      std::regex(R"(\b[a-z][a-z0-9]*(_[a-z0-9]+)+\()"),              // a call: read_catalog_file(
      std::regex(R"(\b[A-Z][a-z]+[A-Z][A-Za-z]*(Model|Options|Result|Estimate)\b)"),  // a library type
      std::regex(R"(\b(Interruption|Performance|Serverless|Plan|Frontier)(Model|Options)\b)"),
  };
  std::smatch m;
  for (const std::regex& pattern : kPatterns) {
    if (std::regex_search(text, m, pattern)) return m.str();
  }
  return {};
}

/// A refusal in the user's words: exit 2, nothing on stdout, one line on stderr that contains every one
/// of `expected` and no C++ name.
void check_words(const CommandResult& r, const std::vector<std::string>& expected) {
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_MESSAGE(r.err_lines() == 1, r.err);
  for (const std::string& e : expected) CHECK_MESSAGE(r.err.find(e) != std::string::npos, "expected \"" << e << "\" in " << r.err);
  CHECK_MESSAGE(cpp_name_in(r.err).empty(), "C++ name \"" << cpp_name_in(r.err) << "\" in " << r.err);
}

/// An option as `spotdnn help COMMAND` lists it.
struct HelpOption {
  std::string name;
  bool takes_value = false;
};

/// The options of `help` (the text `spotdnn help COMMAND` prints), --help aside: a line "  --name TYPE ..."
/// takes a value, "  --name   description" is a switch.
std::vector<HelpOption> options_in_help(const std::string& help) {
  std::vector<HelpOption> options;
  static const std::regex kLine(R"(^  (-h,)?(--[a-z0-9-]+)( [^ ])?)");
  std::size_t start = 0;
  while (start < help.size()) {
    std::size_t end = help.find('\n', start);
    if (end == std::string::npos) end = help.size();
    const std::string line = help.substr(start, end - start);
    std::smatch m;
    if (std::regex_search(line, m, kLine) && m[2].str() != "--help") options.push_back({m[2].str(), m[3].matched});
    start = end + 1;
  }
  return options;
}

/// A command and a command line of it that runs (or, for catalog fetch, gets as far as calling aws).
struct CommandLine {
  std::string command;
  std::string arguments;
};

std::vector<CommandLine> command_lines() {
  const std::string aws = " --aws '" + kData + "aws.json'";
  const std::string trace = " --trace '" + kTrace + "' --kind lifetimes --type p3.2xlarge";
  return {
      {"predict", "--cluster p3.2xlarge=1 --target-loss 0.8"},
      {"plan", "--target-loss 0.8 --deadline 40m"},
      {"frontier", "--target-loss 0.8 --deadlines 40m:1h"},
      {"simulate", "--cluster p3.2xlarge=2 --target-loss 0.8 --deadline 1h --fallback-hazard 0.1 --scenarios 10"},
      {"replan", "--state '" + kData + "state.json'"},
      {"launch", "--plan '" + kData + "plan.json'" + aws},
      {"status", "--run 20240101-000000-abcdef" + aws},
      {"teardown", "--run 20240101-000000-abcdef" + aws},
      {"cost", "--run 20240101-000000-abcdef" + aws + " --aws-cli /nonexistent/aws"},
      {"watch", "--run 20240101-000000-abcdef --plan '" + kData + "plan.json'" + aws + " --aws-cli /nonexistent/aws --once"},
      {"serverless plan", "--profile '" + kData + "serverless_profile.json' --epochs 10 --deadline 3000"},
      {"compare", "--target-loss 0.8 --deadline 20h --serverless-profile '" + kData + "serverless_profile.json'"},
      {"catalog import", "--region us-east-1 --spot-prices '" + kData + "aws_spot_prices.json' --instance-types '" + kData +
                             "aws_instance_types.json'"},
      {"catalog fetch", "--region us-east-1 --types p3.2xlarge --aws-cli /nonexistent/aws"},
      {"catalog show", ""},
      {"revocations fit", trace},
      {"revocations check", trace + " --revocations '" + kData + "revocations_model.json' --cluster p3.2xlarge=1 --target-loss 0.8 --deadline 1h"},
      {"revocations show", "--revocations '" + kData + "revocations_model.json'"},
      {"replay", trace + " --cluster p3.2xlarge=1 --target-loss 0.8 --deadline 1h"},
      {"fit loss", "--trace '" + kData + "loss.csv'"},
      {"fit throughput", "--trace '" + kData + "throughput.csv' --free alpha1,beta1"},
      {"serverless fit", "--trace '" + kData + "serverless_trace.csv' --model-size-mb 44.7 --samples-per-epoch 50000"},
  };
}

/// The directory `command`'s sweep runs in (under the test binary directory), emptied: an output option
/// given a bad value (--output nosuch) writes there and nowhere that matters.
std::string scratch_dir(const std::string& command) {
  std::string name = command;
  for (char& c : name) c = c == ' ' ? '_' : c;
  const std::string dir = std::string(SPOTDNN_TEST_BINARY_DIR) + "/user_words_scratch_" + name;
  REQUIRE(spotdnn::test::run_shell("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").exit_code == 0);
  return dir;
}

/// `spotdnn arguments` run in `dir`.
CommandResult run_in(const std::string& dir, const std::string& arguments) {
  return spotdnn::test::run_shell("cd '" + dir + "' && '" + SPOTDNN_CLI_PATH + "' " + arguments);
}

/// Bad values for an option that takes one: a negative number, a word that names nothing, an empty string.
const std::vector<std::string> kBadValues = {"-1", "nosuch", "''"};

/// `arguments` with the value of `option` replaced by `value` (or, when absent, `option value` added).
std::string with_option(const std::string& arguments, const std::string& option, const std::string& value) {
  const std::regex given("(^| )" + option + " ('[^']*'|[^ ]+)");
  if (std::regex_search(arguments, given)) return std::regex_replace(arguments, given, "$1" + option + " " + value);
  return arguments + " " + option + " " + value;
}

/// Every option of the command of `line` with every bad value (a switch given a value), each on an
/// otherwise working command line: no message shows a C++ name, and a refusal (exit 2) is one line that
/// names the option or the value. Returns the number of command lines run.
int check_every_option(const CommandLine& line) {
  const CommandResult help = run_cli("help " + line.command);
  REQUIRE(help.exit_code == 0);
  const std::vector<HelpOption> options = options_in_help(help.out);
  REQUIRE(options.size() >= 2);
  const std::string dir = scratch_dir(line.command);
  int runs = 0;
  for (const HelpOption& option : options) {
    const std::vector<std::string> values = option.takes_value ? kBadValues : std::vector<std::string>{"=nosuch"};
    for (const std::string& value : values) {
      const std::string arguments =
          option.takes_value ? with_option(line.arguments, option.name, value) : line.arguments + " " + option.name + value;
      CAPTURE(line.command + " " + arguments);
      const CommandResult r = run_in(dir, line.command + " " + arguments);
      ++runs;
      CAPTURE(r.err);
      CHECK_MESSAGE(cpp_name_in(r.err).empty(), "C++ name \"" << cpp_name_in(r.err) << "\"");
      CHECK(r.err.find("Could not convert") == std::string::npos);
      CHECK(r.err.find("not in range") == std::string::npos);
      CHECK(r.err.find(" required but received ") == std::string::npos);
      if (r.exit_code != 2) continue;
      CHECK(r.out.empty());
      CHECK(r.err_lines() == 1);
      const std::string shown = value == "''" ? "\"\"" : value.substr(value.front() == '=' ? 1 : 0);
      CHECK((r.err.find(option.name) != std::string::npos || r.err.find(shown) != std::string::npos));
    }
  }
  return runs;
}

/// check_every_option() on each command of `names`.
void check_commands(const std::vector<std::string>& names) {
  for (const CommandLine& line : command_lines()) {
    bool wanted = false;
    for (const std::string& name : names) wanted = wanted || name == line.command;
    if (!wanted) continue;
    CAPTURE(line.command);
    const CommandResult base = run_cli(line.command + " " + line.arguments);
    CHECK_MESSAGE(cpp_name_in(base.err).empty(), base.err);
    CHECK(check_every_option(line) > 0);
  }
}

}  // namespace

TEST_CASE("a library refusal names the option the user typed and the value they gave") {
  check_words(run_cli("plan --target-loss 0.8 --deadline 40m --keep p3.2xlarge=5"), {"--keep \"p3.2xlarge=5\"", "quota (2)"});
  check_words(run_cli("plan --target-loss 0.8 --deadline 40m --keep g3.16xlarge=1,p3.2xlarge=5"), {"--keep \"p3.2xlarge=5\""});
  check_words(run_cli("frontier --target-loss 0.8 --deadlines 2h:40m"), {"--deadlines \"2h:40m\"", "longest", "shortest"});
  check_words(run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 1h --fallback-hazard -1"),
              {"--fallback-hazard \"-1\": must not be negative"});
  check_words(run_cli("serverless plan --profile '" + kData + "serverless_profile.json' --epochs 0 --deadline 1h"),
              {"--epochs \"0\": must be greater than zero"});
  check_words(run_cli("plan --target-loss 0.8 --deadline 1h --budget -1"), {"--budget \"-1\""});
  check_words(run_cli("plan --target-loss 0.8 --deadline 1h --confidence 1"), {"--confidence \"1\""});
  check_words(run_cli("predict --cluster p3.2xlarge=-1 --target-loss 0.8"), {"--cluster \"p3.2xlarge=-1\"", "must not be negative"});
}

TEST_CASE("a mistyped name gets the nearest valid one") {
  check_words(run_cli("predict --cluster P3.2xlarge=1 --target-loss 0.8"), {"--cluster \"P3.2xlarge=1\"", "did you mean p3.2xlarge?"});
  check_words(run_cli("plan --target-loss 0.8 --deadline 40m --on-demand p3.8xlarge"),
              {"--on-demand \"p3.8xlarge\"", "unknown instance type", "did you mean p3.2xlarge?"});
  check_words(run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --format jsn"), {"--format \"jsn\"", "did you mean json?"});
  check_words(run_cli("plan --target-loss 0.8 --deadline 1h --algorithm exat"), {"--algorithm \"exat\"", "did you mean exact?"});
  check_words(run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --estimate-profiles-from p3.2xlarg"),
              {"--estimate-profiles-from \"p3.2xlarg\"", "did you mean p3.2xlarge?"});
  // Nothing close: no suggestion.
  const CommandResult far = run_cli("plan --target-loss 0.8 --deadline 1h --algorithm zzzzzzzz");
  check_words(far, {"--algorithm \"zzzzzzzz\""});
  CHECK(far.err.find("did you mean") == std::string::npos);
}

TEST_CASE("a missing hazard says which options give one and nothing of the library") {
  const CommandResult r = run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 1h");
  check_words(r, {"p3.2xlarge", "--hazard p3.2xlarge=RATE", "--fallback-hazard"});
  CHECK(r.err.find("in the library") == std::string::npos);
}

TEST_CASE("a file's refusal names the option, the file and the key") {
  check_words(run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --catalog '" + kData + "workload.json'"),
              {"--catalog \"" + kData + "workload.json\"", "catalog.region is missing"});
  check_words(run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --workload nosuch.json"),
              {"--workload \"nosuch.json\"", "cannot open the file"});
}

TEST_CASE("the command-line parser's complaints are told in the house's words") {
  check_words(run_cli("predict --cluster p3.2xlarge=1 --cluster p3.2xlarge=2 --target-loss 0.8"),
              {"--cluster is given 2 times (\"p3.2xlarge=1\" and \"p3.2xlarge=2\"): give it once"});
  check_words(run_cli("predict --cluster p3.2xlarge=1 --target-loss 0,8"), {"--target-loss \"0,8\"", "a decimal point, not a comma"});
  check_words(run_cli("plan --target-loss 0.8 --deadline 1h --confidence 1.5"), {"--confidence \"1.5\": give a number greater than 0 and less than 1"});
  check_words(run_cli("predict --cluster p3.2xlarge=1 --target-loss"), {"--target-loss needs a value", "a number"});
  check_words(run_cli("predict --cluster p3.2xlarge=1"), {"--target-loss is required: training loss to reach"});
  check_words(run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 extra"), {"unexpected argument \"extra\""});
  check_words(run_cli("catalog"), {"spotdnn catalog: error: give a subcommand: import, fetch or show"});
  check_words(run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --no-ps-cost=nosuch"),
              {"--no-ps-cost \"nosuch\": --no-ps-cost is a switch and takes no value"});
  check_words(run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 1h --fallback-hazard 1 --progress --no-progress"),
              {"--no-progress", "--progress", "not both"});
  for (const CommandResult& r : {run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --format jsn"),
                                 run_cli("predict --cluster p3.2xlarge=1 --target-loss x")}) {
    CHECK(r.err.find("Could not convert") == std::string::npos);
    CHECK(r.err.find("not in range") == std::string::npos);
    CHECK(r.err.find("At Most") == std::string::npos);
  }
}

TEST_CASE("spotdnn alone prints the overview of its commands and exits 0") {
  const CommandResult r = run_cli("");
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out == run_cli("--help").out);
  CHECK(r.out.find("spotdnn help COMMAND") != std::string::npos);
  CHECK(r.out.find("predict") != std::string::npos);
}

TEST_CASE("every option of predict, plan and frontier refuses a bad value in the user's words") {
  check_commands({"predict", "plan", "frontier"});
}

TEST_CASE("every option of simulate, replan and compare refuses a bad value in the user's words") {
  check_commands({"simulate", "replan", "compare"});
}

TEST_CASE("every option of launch, status, teardown and serverless plan refuses a bad value in the user's words") {
  check_commands({"launch", "status", "teardown", "serverless plan"});
}

TEST_CASE("every option of cost and watch refuses a bad value in the user's words") { check_commands({"cost", "watch"}); }

TEST_CASE("every option of the catalog commands refuses a bad value in the user's words") {
  check_commands({"catalog import", "catalog fetch", "catalog show"});
}

TEST_CASE("every option of revocations fit and revocations check refuses a bad value in the user's words") {
  check_commands({"revocations fit", "revocations check"});
}

TEST_CASE("every option of revocations show and replay refuses a bad value in the user's words") {
  check_commands({"revocations show", "replay"});
}

TEST_CASE("every option of the fit commands refuses a bad value in the user's words") {
  check_commands({"fit loss", "fit throughput", "serverless fit"});
}

TEST_CASE("the fit commands name the option of the subcommand that ran") {
  check_words(run_cli("fit throughput --trace '" + kData + "throughput.csv' --free alpha2"),
              {"--free \"alpha2\"", "unknown parameter", "did you mean alpha1?"});
  check_words(run_cli("fit loss --trace '" + kData + "throughput.csv'"), {"--trace \"" + kData + "throughput.csv\": line 1"});
  check_words(run_cli("fit loss --trace '" + kData + "loss.csv' --starts ''"), {"--starts \"\": give a number, not an empty string"});
}

TEST_CASE("an empty value for a number is refused, not read as zero") {
  check_words(run_cli("simulate --cluster p3.2xlarge=2 --target-loss '' --deadline 1h --fallback-hazard 0.1"),
              {"--target-loss \"\": give a number, not an empty string"});
  check_words(run_cli("plan --target-loss 0.8 --deadline 1h --max-workers ''"), {"--max-workers \"\""});
}

TEST_CASE("a library error keeps its message and carries its parts for the CLI to retell") {
  CLI::App app{"test", "spotdnn"};
  std::string keep;
  std::optional<double> hazard;
  app.add_option("--keep", keep);
  app.add_option("--fallback-hazard", hazard);
  app.parse("--keep g3.8xlarge=1,p3.2xlarge=5 --fallback-hazard -1", false);
  try {
    spotdnn::detail::fail("plan_exact", "options.minimum_counts[\"p3.2xlarge\"]", 5.0, "must be at most the quota (2)");
    FAIL("fail() returned");
  } catch (const spotdnn::invalid_argument& e) {
    CHECK(std::string(e.what()) == "plan_exact: options.minimum_counts[\"p3.2xlarge\"] = 5: must be at most the quota (2)");
    CHECK(e.function() == "plan_exact");
    CHECK(e.field() == "options.minimum_counts[\"p3.2xlarge\"]");
    CHECK(e.value() == "5");
    CHECK(e.why() == "must be at most the quota (2)");
    CHECK(spotdnn::cli::user_words(e, &app) == "--keep \"p3.2xlarge=5\": must be at most the quota (2)");
  }
  try {
    spotdnn::detail::require_non_negative("InterruptionModel", "fallback_hazard_per_hour", -1.0);
    FAIL("require_non_negative returned");
  } catch (const spotdnn::invalid_argument& e) {
    CHECK(spotdnn::cli::user_words(e, &app) == "--fallback-hazard \"-1\": must not be negative");
  }
  // A message without parts (built by hand) is read by its shape; a name no option gave stays a name.
  const spotdnn::invalid_argument plain("Cluster::parse: x1.huge = -1: the count must not be negative");
  CHECK(plain.function().empty());
  CHECK(spotdnn::cli::user_words(plain, &app) == "x1.huge = -1: the count must not be negative");
}

TEST_CASE("scrub_identifiers turns the library's names into the options that set them") {
  CLI::App app{"test", "spotdnn"};
  std::string deadlines;
  app.add_option("--deadlines", deadlines);
  CHECK(spotdnn::cli::scrub_identifiers("must be greater than options.min_deadline_s (7200)", &app) ==
        "must be greater than the shortest deadline of --deadlines (7200)");
  CHECK(spotdnn::cli::scrub_identifiers("PerformanceModel::counts_of: unknown", &app) == "unknown");
  CHECK(spotdnn::cli::scrub_identifiers("give one (--hazard T=RATE; in the library InterruptionOptions::hazard_overrides)", &app) ==
        "give one (--hazard T=RATE)");
}

TEST_CASE("open_range refuses both ends and says so in help and in the message") {
  CLI::App app{"test", "spotdnn"};
  double confidence = 0;
  app.add_option("--confidence", confidence)->check(spotdnn::cli::open_range(0, 1));
  CHECK(app.help().find("in (0, 1)") != std::string::npos);
  CHECK_NOTHROW(app.parse("--confidence 0.9", false));
  CHECK(confidence == 0.9);
  for (const std::string bad : {"0", "1", "1.5", "-0.1", "x"}) {
    CAPTURE(bad);
    CLI::App other{"test", "spotdnn"};
    other.add_option("--confidence", confidence)->check(spotdnn::cli::open_range(0, 1));
    try {
      other.parse("--confidence " + bad, false);
      FAIL("accepted");
    } catch (const CLI::ParseError& e) {
      CHECK(spotdnn::cli::parse_error_words(e, &other) ==
            "--confidence \"" + bad + "\": give a number greater than 0 and less than 1");
    }
  }
}
