// SPDX-License-Identifier: MIT
// Frontier steps are launchable: the frontier table numbers its steps, `frontier --step N --format json`
// prints step N as a plan document, and `launch --plan FRONTIER.json --step N` launches it from the whole
// frontier document (refused, naming --step or the valid range, otherwise). `plan` and `frontier` warn
// about stale prices with the rule and words of `catalog show`.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/io/json.hpp>

#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::CommandResult;
using spotdnn::test::run_cli;
using spotdnn::test::write_temp_file;

namespace {

const std::string kAws = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/examples/aws.json";
const std::string kFrontier = "frontier --target-loss 0.8 --deadlines 2000:4000";

/// `spotdnn ARGS`, which must exit `exit_code`.
CommandResult cli(const std::string& arguments, int exit_code = 0) {
  const CommandResult r = run_cli(arguments);
  CAPTURE(arguments);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == exit_code);
  return r;
}

/// The preset's frontier document over 2000..4000 s, written to a file; its path.
std::string frontier_file(Json* document = nullptr) {
  const CommandResult r = cli(kFrontier + " --format json");
  if (document != nullptr) *document = Json::parse(r.out);
  return write_temp_file("cli_frontier_step_frontier.json", r.out);
}

/// A refusal: exit 2, nothing on stdout, one line on stderr containing `named`.
void check_refused(const CommandResult& r, const std::string& named) {
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(named) != std::string::npos);
}

}  // namespace

TEST_CASE("the frontier table numbers its steps from 1 by increasing deadline, as the JSON does") {
  Json document;
  (void)frontier_file(&document);
  const std::size_t steps = document.at("steps").size();
  REQUIRE(steps >= 2);
  const CommandResult table = cli(kFrontier);
  CHECK(table.out.find("  step  deadline from [s]") != std::string::npos);
  for (std::size_t n = 1; n <= steps; ++n) {
    const Json& step = document.at("steps").at(n - 1);
    CHECK(step.at("step") == n);
    // The row of step n starts with n, then the step's deadline range to one decimal.
    char from[64];
    std::snprintf(from, sizeof from, "%.1f", step.at("from_deadline_s").get<double>());
    CHECK_MESSAGE(table.out.find("\n  " + std::string(n < 10 ? 3 : 2, ' ') + std::to_string(n) + "  ") != std::string::npos, n);
    CHECK(table.out.find(from) != std::string::npos);
  }
  CHECK(table.out.find("spotdnn launch --plan F.json --step N") != std::string::npos);
}

TEST_CASE("frontier --step N --format json prints step N's plan document, the one the frontier document holds") {
  Json document;
  (void)frontier_file(&document);
  const std::size_t steps = document.at("steps").size();
  for (std::size_t n = 1; n <= steps; ++n) {
    CAPTURE(n);
    const Json step = Json::parse(cli(kFrontier + " --step " + std::to_string(n) + " --format json").out);
    CHECK(step.at("kind") == "spotdnn.plan");
    CHECK(step == document.at("steps").at(n - 1).at("plan"));
  }
  // Out of range: the valid range; without --format json, with --plot or --confidence: what to do instead.
  check_refused(run_cli(kFrontier + " --step 0 --format json"), "--step \"0\": the frontier has steps 1 to " + std::to_string(steps));
  check_refused(run_cli(kFrontier + " --step " + std::to_string(steps + 1) + " --format json"),
                "the frontier has steps 1 to " + std::to_string(steps));
  check_refused(run_cli(kFrontier + " --step 1"), "--step prints a step's plan document: add --format json");
  check_refused(run_cli(kFrontier + " --step 1 --format csv"), "add --format json");
  check_refused(run_cli(kFrontier + " --step 1 --format json --plot f.svg"), "draw the frontier without --step");
  check_refused(run_cli("frontier --target-loss 0.8 --deadlines 30m:2h:4 --confidence 0.9 --fallback-hazard 0.1 --step 1 --format json"),
                "spotdnn plan --confidence C --deadline D --format json");
  // A frontier without steps has no step to print: its document says why, exit 3.
  const CommandResult none = cli("frontier --target-loss 0.8 --deadlines 600:700 --step 1 --format json", 3);
  const Json empty = Json::parse(none.out);
  CHECK(empty.at("kind") == "spotdnn.frontier");
  CHECK(empty.at("steps").empty());
  CHECK_FALSE(empty.at("message").get<std::string>().empty());
}

TEST_CASE("launch --plan FRONTIER.json --step N launches step N, the same script as that step's plan document") {
  Json document;
  const std::string frontier = frontier_file(&document);
  const std::size_t steps = document.at("steps").size();
  REQUIRE(steps >= 2);
  const CommandResult launched = cli("launch --plan '" + frontier + "' --step 2 --aws '" + kAws + "'");
  const std::string step_plan =
      write_temp_file("cli_frontier_step_plan.json", cli(kFrontier + " --step 2 --format json").out);
  const CommandResult from_step = cli("launch --plan '" + step_plan + "' --aws '" + kAws + "'");
  CHECK(launched.out == from_step.out);
  CHECK_FALSE(launched.out.empty());
  // The script's header gives the step's deadline for people (6 significant digits), not 16 digits.
  const double deadline_s = document.at("steps").at(1).at("plan").at("deadline_s").get<double>();
  CHECK(launched.out.find("within " + spotdnn::detail::format_readable(deadline_s) + " s") != std::string::npos);
  CHECK(spotdnn::detail::format_readable(deadline_s).size() <= 7);
  // The step's cluster is what the script launches.
  const Json& cluster = document.at("steps").at(1).at("cluster");
  for (auto it = cluster.begin(); it != cluster.end(); ++it) CHECK(launched.out.find(it.key()) != std::string::npos);
  // Standard input works too.
  const CommandResult piped = spotdnn::test::run_shell("'" + std::string(SPOTDNN_CLI_PATH) + "' launch --plan - --step 2 --aws '" + kAws +
                                                       "' < '" + frontier + "'");
  CHECK(piped.exit_code == 0);
  CHECK(piped.out == launched.out);
}

TEST_CASE("launch refuses a frontier document without --step, a step out of range, and --step with a plan document") {
  Json document;
  const std::string frontier = frontier_file(&document);
  const std::string count = std::to_string(document.at("steps").size());
  check_refused(run_cli("launch --plan '" + frontier + "' --aws '" + kAws + "'"),
                "a frontier document holds one plan per step: pick the one to launch with --step N, N from 1 to " + count);
  check_refused(run_cli("launch --plan '" + frontier + "' --step 0 --aws '" + kAws + "'"), "--step \"0\": the frontier has steps 1 to " + count);
  check_refused(run_cli("launch --plan '" + frontier + "' --step 99 --aws '" + kAws + "'"), "--step \"99\": the frontier has steps 1 to " + count);
  const std::string plan = write_temp_file("cli_frontier_step_one_plan.json", cli("plan --target-loss 0.8 --deadline 2400 --format json").out);
  check_refused(run_cli("launch --plan '" + plan + "' --step 1 --aws '" + kAws + "'"), "launch this document without --step");
  check_refused(run_cli("launch --serverless --plan '" + plan + "' --step 1 --aws '" + kAws + "'"), "--step is for EC2 launches");
}

TEST_CASE("launch --help says --plan takes a frontier document with --step") {
  const CommandResult help = cli("launch --help");
  CHECK(help.out.find("spotdnn frontier --format json with --step N") != std::string::npos);
  CHECK(help.out.find("--step") != std::string::npos);
  CHECK(cli("frontier --help").out.find("--step") != std::string::npos);
}

TEST_CASE("plan and frontier warn about 20-year-old prices with catalog show's words, and not about undated ones") {
  Json catalog = Json::parse(cli("catalog show --format json").out);
  for (Json& type : catalog.at("instance_types")) {
    if (type.at("name") == "g3.8xlarge") type["price_observed_at"] = "2006-11-24T08:00:00Z";
  }
  const std::string path = write_temp_file("cli_frontier_step_old_catalog.json", catalog.dump());
  const std::string as_of = " --as-of 2026-11-24T10:42:00Z";
  const std::string words =
      "warning: g3.8xlarge: its price ($0.684/h, observed 2006-11-24T08:00:00Z) is 7305 d 2 h old: fetch a fresh catalog (spotdnn "
      "catalog fetch) before planning\n";
  const CommandResult shown = cli("catalog show --catalog '" + path + "'" + as_of);
  CHECK(shown.err == "spotdnn catalog show: " + words);
  const CommandResult planned = cli("plan --target-loss 0.8 --deadline 2400 --catalog '" + path + "'" + as_of);
  CHECK(planned.err == "spotdnn plan: " + words);
  CHECK_FALSE(planned.out.empty());
  const CommandResult json = cli("plan --target-loss 0.8 --deadline 2400 --format json --catalog '" + path + "'" + as_of);
  CHECK(json.err == "spotdnn plan: " + words);
  const CommandResult frontier = cli(kFrontier + " --catalog '" + path + "'" + as_of);
  CHECK(frontier.err == "spotdnn frontier: " + words);
  // Without --as-of, "now" is the clock: still stale. --max-price-age silences it; the preset is undated.
  CHECK(cli("plan --target-loss 0.8 --deadline 2400 --catalog '" + path + "'").err.find("g3.8xlarge: its price") != std::string::npos);
  CHECK(cli("plan --target-loss 0.8 --deadline 2400 --catalog '" + path + "' --max-price-age 8000d" + as_of).err.empty());
  CHECK(cli("plan --target-loss 0.8 --deadline 2400").err.empty());
  CHECK(cli(kFrontier).err.empty());
  // Bad input is still one line on stderr: the warning comes only with an answer.
  check_refused(run_cli("plan --target-loss 0.8 --deadline 2400 --algorithm bogus --catalog '" + path + "'" + as_of), "--algorithm");
  check_refused(run_cli("plan --target-loss 0.8 --deadline 2400 --max-workers -1 --catalog '" + path + "'" + as_of), "--max-workers");
  check_refused(run_cli("plan --target-loss 0.8 --deadline 2400 --keep p3.2xlarge=99 --catalog '" + path + "'" + as_of), "--keep");
  check_refused(run_cli(kFrontier + " --step 99 --format json --catalog '" + path + "'" + as_of), "--step \"99\"");
  check_refused(run_cli("frontier --target-loss 0.8 --deadlines 4000:2000 --catalog '" + path + "'" + as_of), "4000");
}
