// SPDX-License-Identifier: MIT
// The option language every `spotdnn` command speaks, end to end: suggestions for mistyped commands and
// options, `spotdnn help COMMAND`, `-` for standard input, durations with units, --format, cluster
// separators, and progress on a terminal.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::CommandResult;
using spotdnn::test::run_cli;
using spotdnn::test::run_shell;

namespace {

const std::string kData = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/hostile/";
const std::string kCli = std::string("'") + SPOTDNN_CLI_PATH + "'";

/// `file` (under tests/hostile) on the standard input of `spotdnn arguments`.
CommandResult run_cli_reading(const std::string& file, const std::string& arguments) {
  return run_shell(kCli + " " + arguments + " < '" + kData + file + "'");
}

/// A refusal: exit 2, nothing on stdout, one line on stderr that contains every one of `expected`.
void check_refused(const CommandResult& r, const std::vector<std::string>& expected) {
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_MESSAGE(r.err_lines() == 1, r.err);
  for (const std::string& e : expected) CHECK_MESSAGE(r.err.find(e) != std::string::npos, "expected \"" << e << "\" in " << r.err);
}

/// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

/// The fields of one CSV line (RFC 4180 quotes).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

/// The one data row of a header-and-one-row CSV output, by column name ("" for a missing column).
struct CsvRow {
  std::vector<std::string> header, row;
  [[nodiscard]] std::string operator[](const std::string& name) const {
    for (std::size_t i = 0; i < header.size() && i < row.size(); ++i) {
      if (header[i] == name) return row[i];
    }
    return {};
  }
};

CsvRow one_csv_row(const std::string& text) {
  const std::vector<std::string> lines = lines_of(text);
  REQUIRE(lines.size() == 2);
  CsvRow r{csv_fields(lines[0]), csv_fields(lines[1])};
  CHECK(r.header.size() == r.row.size());
  return r;
}

const std::string kSimulate =
    "simulate --cluster p3.2xlarge=2,g3.8xlarge=2 --target-loss 0.8 --deadline 2600 --fallback-hazard 0.1 --scenarios 200000 "
    "--format json";

}  // namespace

TEST_CASE("a mistyped command gets the closest command name on its one error line") {
  check_refused(run_cli("plna"), {"unknown command \"plna\"", "did you mean `plan`?"});
  check_refused(run_cli("predcit --cluster p3.2xlarge=1 --target-loss 0.8"), {"did you mean `predict`?"});
  check_refused(run_cli("simulat"), {"did you mean `simulate`?"});
  check_refused(run_cli("tardown --run x"), {"did you mean `teardown`?"});
  check_refused(run_cli("fti loss"), {"did you mean `fit`?"});
  check_refused(run_cli("pred"), {"did you mean `predict`?"});
  const CommandResult far = run_cli("xyzzy");
  check_refused(far, {"unknown command \"xyzzy\"", "commands: predict"});
  CHECK(far.err.find("did you mean") == std::string::npos);
}

TEST_CASE("a mistyped option gets the closest option of the chosen command") {
  check_refused(run_cli("plan --dedline 1h --target-loss 0.8"), {"spotdnn plan: error: unknown option --dedline", "did you mean --deadline?"});
  check_refused(run_cli("plan --target-loss 0.8 --dedline=1h"), {"did you mean --deadline?"});
  check_refused(run_cli("predict --cluster p3.2xlarge=1 --targt-loss 0.8"), {"did you mean --target-loss?"});
  check_refused(run_cli("replan --stat s.json"), {"did you mean --state?"});
  check_refused(run_cli("launch --plna p.json --aws a.json"), {"did you mean --plan?"});
  check_refused(run_cli("simulate --cluster p3.2xlarge=1 --scenarois 10"), {"did you mean --scenarios?"});
  check_refused(run_cli("status --rnu x --aws a.json"), {"did you mean --run?"});
  // An option of another command is not suggested: predict has no --deadline.
  const CommandResult other = run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --dedline 1h");
  check_refused(other, {"unknown option --dedline"});
  CHECK(other.err.find("--deadline") == std::string::npos);
  const CommandResult far = run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --frobnicate");
  check_refused(far, {"unknown option --frobnicate", "spotdnn help predict"});
  CHECK(far.err.find("did you mean") == std::string::npos);
  check_refused(run_cli("--target-loss 0.8 predict --cluster p3.2xlarge=1"), {"--target-loss comes before the command"});
}

TEST_CASE("spotdnn help COMMAND prints what COMMAND --help prints and exits 0") {
  for (const std::string command : {"predict", "plan", "simulate", "replan", "launch", "status", "fit", "fit loss", "fit throughput"}) {
    CAPTURE(command);
    const CommandResult help = run_cli("help " + command);
    const CommandResult direct = run_cli(command + " --help");
    CHECK(help.exit_code == 0);
    CHECK(help.err.empty());
    CHECK(help.out.find("Usage: spotdnn " + command) != std::string::npos);
    CHECK(help.out == direct.out);
  }
  const CommandResult all = run_cli("help");
  CHECK(all.exit_code == 0);
  CHECK(all.out == run_cli("--help").out);
  CHECK(all.out.find("spotdnn help COMMAND") != std::string::npos);
  check_refused(run_cli("help plna"), {"spotdnn help: error: unknown command \"plna\"", "did you mean `plan`?"});
  check_refused(run_cli("help fit lose"), {"spotdnn fit has no subcommand \"lose\"", "did you mean `loss`?"});
  check_refused(run_cli("help predict extra"), {"no subcommand \"extra\""});
}

TEST_CASE("every JSON file option reads standard input when given -") {
  const std::string predict = "predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --format json";
  const CommandResult from_files = run_cli(predict + " --workload '" + kData + "workload.json' --catalog '" + kData + "catalog.json'");
  REQUIRE(from_files.exit_code == 0);
  for (const CommandResult& r : {run_cli_reading("workload.json", predict + " --workload - --catalog '" + kData + "catalog.json'"),
                                 run_cli_reading("catalog.json", predict + " --workload '" + kData + "workload.json' --catalog -")}) {
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(r.out == from_files.out);
  }

  const CommandResult replan_file = run_cli("replan --state '" + kData + "state.json' --format json");
  REQUIRE(replan_file.exit_code == 0);
  const CommandResult replan_stdin = run_cli_reading("state.json", "replan --state - --format json");
  CHECK(replan_stdin.exit_code == 0);
  CHECK(replan_stdin.out == replan_file.out);

  const std::string plan = "'" + kData + "plan.json'", aws = "'" + kData + "aws.json'";
  const CommandResult launch_file = run_cli("launch --plan " + plan + " --aws " + aws + " --format json");
  REQUIRE(launch_file.exit_code == 0);
  // What the script launches and where come from the document read on stdin.
  const Json expected = Json::parse(launch_file.out);
  const CommandResult plan_stdin = run_cli_reading("plan.json", "launch --plan - --aws " + aws + " --format json");
  const CommandResult aws_stdin = run_cli_reading("aws.json", "launch --plan " + plan + " --aws - --format json");
  REQUIRE(plan_stdin.exit_code == 0);
  REQUIRE(aws_stdin.exit_code == 0);
  CHECK(Json::parse(plan_stdin.out)["workers"] == expected["workers"]);
  CHECK(Json::parse(aws_stdin.out)["region"] == expected["region"]);

  const std::string run_id = "20240101-000000-abcdef";
  const CommandResult status_file = run_cli("status --run " + run_id + " --aws " + aws);
  const CommandResult status_stdin = run_cli_reading("aws.json", "teardown --run " + run_id + " --aws -");
  const CommandResult status_stdin_same = run_cli_reading("aws.json", "status --run " + run_id + " --aws -");
  CHECK(status_stdin.exit_code == 0);
  CHECK(status_stdin_same.exit_code == 0);
  CHECK(status_stdin_same.out == status_file.out);
}

TEST_CASE("a bad document on standard input is refused naming the option that read stdin and the key path") {
  check_refused(run_shell("echo '{\"survivors\": 3}' | " + kCli + " replan --state -"),
                {"--state - (standard input)", "state.survivors = 3"});
  check_refused(run_shell("echo '{' | " + kCli + " predict --cluster p3.2xlarge=1 --target-loss 0.8 --workload -"),
                {"--workload - (standard input)", "malformed JSON"});
  check_refused(run_shell("echo '{\"region\": 5}' | " + kCli + " status --run 20240101-000000-abcdef --aws -"),
                {"--aws - (standard input)", "aws.region = 5"});
  check_refused(run_shell("echo '[]' | " + kCli + " launch --plan - --aws '" + kData + "aws.json'"), {"--plan - (standard input)"});
  check_refused(run_shell("printf '' | " + kCli + " predict --cluster p3.2xlarge=1 --target-loss 0.8 --catalog -"),
                {"--catalog - (standard input)"});
}

TEST_CASE("standard input can be given to one option only") {
  check_refused(run_cli_reading("workload.json", "predict --cluster p3.2xlarge=1 --target-loss 0.8 --workload - --catalog -"),
                {"--catalog", "already read by --workload"});
  check_refused(run_cli_reading("state.json", "replan --state - --catalog -"), {"already read by --catalog"});
  check_refused(run_cli_reading("plan.json", "launch --plan - --aws -"), {"--aws", "already read by --plan"});
}

TEST_CASE("durations take units on every command that takes seconds") {
  // replan --join-delay: the value is in the CSV output.
  const std::string state = "replan --state '" + kData + "state.json' --format csv --join-delay ";
  CHECK(one_csv_row(run_cli(state + "40m").out)["join_delay_s"] == "2400");
  CHECK(one_csv_row(run_cli(state + "2h").out)["join_delay_s"] == "7200");
  CHECK(one_csv_row(run_cli(state + "1h30m").out)["join_delay_s"] == "5400");
  CHECK(one_csv_row(run_cli(state + "3600").out)["join_delay_s"] == "3600");
  CHECK(one_csv_row(run_cli(state + "90s").out)["join_delay_s"] == "90");
  CHECK(one_csv_row(run_cli(state + "0").out)["join_delay_s"] == "0");  // joining at once is a join delay

  // plan --deadline and simulate --deadline give the same answer for 40m and 2400.
  const CommandResult plan_units = run_cli("plan --target-loss 0.8 --deadline 40m --format json");
  const CommandResult plan_seconds = run_cli("plan --target-loss 0.8 --deadline 2400 --format json");
  CHECK(plan_units.exit_code == 0);
  CHECK(plan_units.out == plan_seconds.out);
  const std::string simulate = "simulate --cluster p3.2xlarge=2,g3.8xlarge=2 --target-loss 0.8 --fallback-hazard 0.1 --scenarios 200 "
                               "--format json --deadline ";
  const CommandResult simulate_units = run_cli(simulate + "43m20s");
  CHECK(simulate_units.exit_code == 0);
  CHECK(simulate_units.out == run_cli(simulate + "2600").out);

  for (const std::string bad : {"40x", "-5", "1h1h", "1m1h", "nan", "1e999", "h"}) {
    CAPTURE(bad);
    check_refused(run_cli("replan --state '" + kData + "state.json' --join-delay " + bad), {"--join-delay", "\"" + bad + "\""});
    check_refused(run_cli("plan --target-loss 0.8 --deadline " + bad), {"--deadline", "\"" + bad + "\""});
    check_refused(run_cli(simulate + bad), {"--deadline", "\"" + bad + "\""});
  }
  check_refused(run_cli("plan --target-loss 0.8 --deadline 0"), {"--deadline", "\"0\"", "longer than zero"});
  check_refused(run_cli(simulate + "0s"), {"--deadline", "longer than zero"});
}

TEST_CASE("--format csv writes one header and one row on predict and replan") {
  const CommandResult predict = run_cli("predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --format csv");
  REQUIRE(predict.exit_code == 0);
  const CsvRow p = one_csv_row(predict.out);
  CHECK(p["status"] == "feasible");
  CHECK(p["cluster"] == "g3.8xlarge=4;p3.2xlarge=2");
  CHECK(p["workers"] == "6");
  CHECK(std::stod(p["training_time_s"]) == doctest::Approx(2340.729669).epsilon(1e-9));
  CHECK(std::stod(p["cost_usd"]) == doctest::Approx(3.097565595).epsilon(1e-9));
  CHECK(p["message"].find("2340.73 s") != std::string::npos);
  // The CSV has the JSON document's figures, not fewer digits.
  const Json j = Json::parse(run_cli("predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --format json").out);
  CHECK(std::stod(p["iterations"]) == j["iterations"].get<double>());
  CHECK(std::stod(p["contention_probability"]) == j["contention_probability"].get<double>());

  const CommandResult replan = run_cli("replan --state '" + kData + "state.json' --format csv");
  REQUIRE(replan.exit_code == 0);
  const CsvRow r = one_csv_row(replan.out);
  CHECK(r["status"] == "optimal");
  CHECK(r["survivors"] == "p3.2xlarge=2");
  CHECK(r["additions"] == "g3.8xlarge=2");
  CHECK(r["cluster"] == "g3.8xlarge=2;p3.2xlarge=2");
  CHECK(std::stod(r["finish_time_s"]) == doctest::Approx(1286.337051636777).epsilon(1e-9));
  CHECK(r["join_delay_s"] == "120");
  CHECK(r["message"].find("add g3.8xlarge=2") == 0);  // a message with commas survives the quoting

  // With no answer (exit 3) the row says so, and the times never reached are empty.
  const CommandResult none = run_shell("sed 's/\"elapsed_s\": 1276.5/\"elapsed_s\": 2590/' '" + kData + "state.json' | " + kCli +
                                       " replan --state - --format csv");
  CHECK(none.exit_code == 3);
  const CsvRow n = one_csv_row(none.out);
  CHECK(n["status"] == "infeasible");
  CHECK(n["finish_time_s"].empty());
  CHECK(n["additions"].empty());
}

TEST_CASE("a format a command does not write is refused with the ones it does") {
  const std::string predict = "predict --cluster p3.2xlarge=2 --target-loss 0.8 --format ";
  check_refused(run_cli(predict + "script"), {"--format", "\"script\"", "this command writes table, json or csv"});
  check_refused(run_cli(predict + "xml"), {"\"xml\"", "table, json or csv"});
  check_refused(run_cli("replan --state '" + kData + "state.json' --format yaml"), {"table, json or csv"});
  const std::string aws = " --aws '" + kData + "aws.json'";
  check_refused(run_cli("launch --plan '" + kData + "plan.json'" + aws + " --format csv"), {"\"csv\"", "this command writes script or json"});
  check_refused(run_cli("status --run 20240101-000000-abcdef" + aws + " --format table"), {"\"table\"", "script or json"});
  check_refused(run_cli("teardown --run 20240101-000000-abcdef" + aws + " --format csv"), {"script or json"});
  // The default formats still work.
  CHECK(run_cli("status --run 20240101-000000-abcdef" + aws + " --format script").out.rfind("#!/usr/bin/env bash", 0) == 0);
  CHECK(run_cli(predict + "table").exit_code == 0);
}

TEST_CASE("a cluster takes a comma or a semicolon between entries so one copied from a trace works") {
  const std::string predict = "predict --target-loss 0.8 --format json --cluster ";
  const CommandResult comma = run_cli(predict + "p3.2xlarge=2,g3.8xlarge=4");
  REQUIRE(comma.exit_code == 0);
  CHECK(run_cli(predict + "'p3.2xlarge=2;g3.8xlarge=4'").out == comma.out);
  CHECK(run_cli(predict + "'p3.2xlarge=2; g3.8xlarge=4'").out == comma.out);
  check_refused(run_cli(predict + "'p3.2xlarge=2;;g3.8xlarge=4'"), {"expected TYPE=N"});
  check_refused(run_cli(predict + "'p3.2xlarge=2;p3.2xlarge=1'"), {"given twice"});

  // The same on simulate --cluster and plan --keep (the shared parser), and on replan --exclude.
  const std::string simulate = "simulate --target-loss 0.8 --deadline 2600 --fallback-hazard 0.1 --scenarios 100 --format json --cluster ";
  CHECK(run_cli(simulate + "'p3.2xlarge=2;g3.8xlarge=2'").out == run_cli(simulate + "p3.2xlarge=2,g3.8xlarge=2").out);
  const std::string plan = "plan --target-loss 0.8 --deadline 2400 --format json --keep ";
  const CommandResult keep = run_cli(plan + "'g3.16xlarge=1;p3.2xlarge=1'");
  CHECK(keep.exit_code == 0);
  CHECK(keep.out == run_cli(plan + "g3.16xlarge=1,p3.2xlarge=1").out);
  const std::string replan = "replan --state '" + kData + "state.json' --format csv --exclude ";
  const CommandResult excluded = run_cli(replan + "'g3.8xlarge;g3.16xlarge'");
  CHECK(excluded.out == run_cli(replan + "g3.8xlarge,g3.16xlarge").out);
  CHECK(one_csv_row(excluded.out)["additions"].find("g3.8xlarge") == std::string::npos);
  // --hazard takes the same separators.
  const std::string hazard = "simulate --cluster p3.2xlarge=2,g3.8xlarge=2 --target-loss 0.8 --deadline 2600 --scenarios 100 --format json --hazard ";
  CHECK(run_cli(hazard + "'p3.2xlarge=0.1;g3.8xlarge=0.2'").out == run_cli(hazard + "p3.2xlarge=0.1,g3.8xlarge=0.2").out);
}

TEST_CASE("simulate shows its progress on a terminal") {
  // SPOTDNN_PROGRESS_DELAY_S=0: show progress at once (by default a terminal shows it after a second,
  // and this simulation may finish sooner).
  const CommandResult r = run_shell("SPOTDNN_PROGRESS_DELAY_S=0 /usr/bin/python3 '" SPOTDNN_TEST_SOURCE_DIR
                                    "/tests/support/run_in_pty.py' " + kCli + " " + kSimulate);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(Json::parse(r.out)["scenarios"] == 200000);
  INFO("stderr on the terminal: " << r.err);
  CHECK(r.err.find("simulate: ") != std::string::npos);
  CHECK(r.err.find("200000 of 200000 scenarios (100%)") != std::string::npos);
  CHECK(r.err.find("\r\033[K") != std::string::npos);  // one line, rewritten in place

  const CommandResult quiet = run_shell("SPOTDNN_PROGRESS_DELAY_S=0 /usr/bin/python3 '" SPOTDNN_TEST_SOURCE_DIR
                                        "/tests/support/run_in_pty.py' " + kCli + " " + kSimulate + " --no-progress");
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.err.empty());
}

TEST_CASE("simulate prints no progress when stderr is a pipe unless --progress asks for it") {
  const CommandResult piped = run_shell("SPOTDNN_PROGRESS_DELAY_S=0 " + kCli + " " + kSimulate);
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.err.empty());

  const CommandResult asked = run_shell(kCli + " " + kSimulate + " --progress");
  REQUIRE(asked.exit_code == 0);
  INFO("stderr: " << asked.err);
  const std::vector<std::string> lines = lines_of(asked.err);
  REQUIRE(lines.size() >= 2);
  CHECK(asked.err.find('\r') == std::string::npos);  // lines, not a line rewritten in place
  CHECK(lines.front().rfind("simulate: ", 0) == 0);
  CHECK(lines.back() == "simulate: 200000 of 200000 scenarios (100%)");
  CHECK(Json::parse(asked.out) == Json::parse(piped.out));
}
