// SPDX-License-Identifier: MIT
// The `spotdnn` executable over a table of bad, hostile and huge inputs (tests/hostile/cases.tsv): every
// command answers with the documented exit code, prints nothing on stdout and one clean line on stderr when
// it refuses, finishes in time, and creates no file outside the directory it runs in.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>
#include <map>
#include <string>
#include <vector>

#include "support/hostile_runner.hpp"

namespace {

namespace hostile = spotdnn::test::hostile;

/// Per case, generous for AddressSanitizer builds; a case over it is killed and fails.
constexpr double kTimeLimitS = 20;

const std::string kSourceDir = SPOTDNN_TEST_SOURCE_DIR;
const std::string kTable = kSourceDir + "/tests/hostile/cases.tsv";

/// The table, read once; a malformed table is reported by the test that checks it, and reads as empty here.
const std::vector<hostile::Case>& table() {
  static const std::vector<hostile::Case> cases = [] {
    try {
      return hostile::read_table(kTable);
    } catch (const std::exception&) {
      return std::vector<hostile::Case>();
    }
  }();
  return cases;
}

/// The executable under test: SPOTDNN_HOSTILE_CLI when set (to try another build), else the one built here.
std::string cli_path() {
  const char* path = std::getenv("SPOTDNN_HOSTILE_CLI");
  return path != nullptr && *path != '\0' ? std::string(path) : std::string(SPOTDNN_CLI_PATH);
}

/// Parallel runs (SPOTDNN_HOSTILE_JOBS, default 2).
int jobs() {
  const char* text = std::getenv("SPOTDNN_HOSTILE_JOBS");
  const int n = text != nullptr ? std::atoi(text) : 2;
  return n >= 1 && n <= 64 ? n : 2;
}

/// Where a run must not leave anything. The source tree's and the build tree's top levels are watched
/// strictly; directories that other tests (or other programs) write to concurrently only for names that
/// can come from these cases: "PWNED", "hostile" (every output path of the table says it) and ".gp".
std::vector<hostile::Canary> canaries() {
  namespace fs = std::filesystem;
  const std::vector<std::string> ours = {"PWNED", "hostile", ".gp"};
  std::vector<hostile::Canary> list;
  list.push_back({kSourceDir, true, {}, {}});
  const fs::path tests_binary_dir = SPOTDNN_TEST_BINARY_DIR;
  list.push_back({tests_binary_dir.parent_path(), true, {}, {}});
  list.push_back({tests_binary_dir, false, ours, {}});
  list.push_back({fs::path(cli_path()).parent_path(), false, ours, {}});
  list.push_back({fs::temp_directory_path(), false, ours, {"spotdnn-hostile-"}});
  if (const char* home = std::getenv("HOME"); home != nullptr && fs::is_directory(home)) {
    list.push_back({home, false, ours, {}});
  }
  return list;
}

/// "exit 2, 0.01 s, stdout "...", stderr "..."".
std::string observed(const hostile::Outcome& o) {
  std::string text;
  if (o.timed_out) {
    text = "killed after the time limit";
  } else if (o.memory_exceeded) {
    text = "killed over the memory limit";
  } else if (o.signal != 0) {
    text = "signal " + std::to_string(o.signal);
  } else {
    text = "exit " + std::to_string(o.exit_code);
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f s", o.seconds);
  return text + ", " + seconds + ", stdout \"" + hostile::printable(o.out, 160) + "\", stderr \"" +
         hostile::printable(o.err, 400) + "\"";
}

/// Runs every case of `group` and checks each one, reporting every failing case by name.
void run_group(const std::string& group) {
  std::vector<hostile::Case> cases;
  for (const hostile::Case& c : table()) {
    if (c.group == group) cases.push_back(c);
  }
  REQUIRE_MESSAGE(!cases.empty(), "no case of group " << group << " in " << kTable);
  const auto start = std::chrono::steady_clock::now();
  std::vector<hostile::Result> results;
  {
    hostile::Matrix matrix(cli_path(), kSourceDir + "/tests/hostile", canaries(), kTimeLimitS);
    results = hostile::run_all(matrix, cases, jobs());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool verbose = std::getenv("SPOTDNN_HOSTILE_VERBOSE") != nullptr;
  std::string failing;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const hostile::Case& c = cases[k];
    const hostile::Result& r = results[k];
    if (verbose) MESSAGE(c.name << ": " << observed(r.outcome));
    std::string problems;
    for (const std::string& p : r.problems) problems += "\n    - " + p;
    if (!r.problems.empty()) failing += " " + c.name;
    CHECK_MESSAGE(r.problems.empty(), c.name << " (cases.tsv:" << c.line << ", expected exit " << c.expected_text()
                                             << "): " << observed(r.outcome) << problems);
  }
  MESSAGE(group << ": " << cases.size() << " cases in " << seconds << " s; failing:" << (failing.empty() ? " none" : failing));
}

}  // namespace

TEST_CASE("the hostile-input table is well formed, has at least 200 cases, and each belongs to a command") {
  std::vector<hostile::Case> cases;
  try {
    cases = hostile::read_table(kTable);
  } catch (const std::exception& e) {
    FAIL(e.what());
  }
  CHECK(cases.size() >= 200);
  const std::vector<std::string> groups = {"general", "predict",  "plan",           "frontier", "simulate",
                                           "replan",  "fit-loss", "fit-throughput", "launch",   "status",
                                           "teardown", "serverless", "compare", "catalog", "revocations", "replay",
                                           "cost",     "watch", "workload-build", "profile-plan"};
  std::map<std::string, int> per_group;
  for (const hostile::Case& c : cases) {
    INFO(c.name);
    CHECK(std::find(groups.begin(), groups.end(), c.group) != groups.end());
    ++per_group[c.group];
  }
  for (const std::string& g : groups) {
    INFO(g);
    CHECK(per_group[g] >= 10);
  }
}

TEST_CASE("the runner catches a program that breaks the contract, and passes one that keeps it") {
  namespace fs = std::filesystem;
  // A scratch directory (a Matrix never run) holds the fake CLI and a canary directory it must not touch.
  hostile::Matrix scratch("/bin/true", kSourceDir + "/tests/hostile", {}, 1);
  const fs::path canary = scratch.root() / "canary";
  fs::create_directory(canary);
  const std::string program = (scratch.root() / "fake-cli").string();
  {
    std::ofstream script(program);
    script << "#!/bin/sh\n"
              "case \"$1\" in\n"
              "  keeps) [ \"$HOME\" = \"$PWD\" ] && [ \"$TMPDIR\" = \"$PWD\" ] && [ -f in.json ] || exit 9\n"
              "         read line; [ \"$line\" = hello ] || exit 8; echo 'fine: a value' >&2; exit 2;;\n"
              "  escape) printf 'bad \\033[2J value\\n' >&2; exit 2;;\n"
              "  two-lines) printf 'one\\ntwo\\n' >&2; exit 2;;\n"
              "  no-newline) printf 'one' >&2; exit 2;;\n"
              "  stdout) echo partial; echo 'bad' >&2; exit 2;;\n"
              "  hangs) sleep 30; exit 0;;\n"
              "  pwned) mkdir -p a/b && touch a/b/PWNED; exit 0;;\n"
              "  writes-canary) touch \"$2/x\"; exit 0;;\n"
              "  crashes) kill -SEGV $$;;\n"
              "  exit-3) exit 3;;\n"
              "esac\n";
  }
  fs::permissions(program, fs::perms::owner_all);
  hostile::Matrix matrix(program, kSourceDir + "/tests/hostile", {{canary, true, {}, {}}}, 1);
  auto make = [](const std::string& what, int code, const std::vector<std::string>& arguments) {
    hostile::Case c;
    c.name = "self/" + what;
    c.group = "self";
    c.exit_codes = {code};
    c.arguments = arguments;
    c.stdin_spec = "-";
    return c;
  };
  hostile::Case keeps = make("keeps", 2, {"keeps"});
  keeps.stdin_spec = "text:hello\\n";
  keeps.files = {{"in.json", "base:workload.json|set:/name=\"x\""}};
  keeps.stderr_contains = {"a\\svalue"};
  const std::vector<std::pair<hostile::Case, std::string>> breaking = {
      {make("escape", 2, {"escape"}), "raw control byte 0x1b"},
      {make("two-lines", 2, {"two-lines"}), "not exactly one line"},
      {make("no-newline", 2, {"no-newline"}), "not exactly one line"},
      {make("stdout", 2, {"stdout"}), "stdout is not empty"},
      {make("hangs", 0, {"hangs"}), "did not finish within 1 s"},
      {make("pwned", 0, {"pwned"}), "a file named PWNED appeared"},
      {make("writes-canary", 0, {"writes-canary", canary.string()}), "\"x\" appeared in"},
      {make("crashes", 2, {"crashes"}), "killed by signal 11"},
      {make("wrong-code", 2, {"exit-3"}), "exit code 3, expected 2"},
  };
  hostile::Outcome outcome;
  const std::vector<std::string> none = matrix.run(keeps, 0, outcome);
  CHECK_MESSAGE(none.empty(), observed(outcome) << (none.empty() ? "" : " " + none.front()));
  int index = 1;
  for (const auto& entry : breaking) {
    const std::vector<std::string> problems = matrix.run(entry.first, index++, outcome);
    std::string all;
    for (const std::string& p : problems) all += p + "; ";
    CHECK_MESSAGE(all.find(entry.second) != std::string::npos, entry.first.name << ": " << all);
  }
}

TEST_CASE("spotdnn without a valid command or with bad global options exits 2 with one clean line") { run_group("general"); }

TEST_CASE("spotdnn predict refuses hostile flags, workloads and catalogs with exit 2 and one clean line") {
  run_group("predict");
}

TEST_CASE("spotdnn plan refuses hostile input, answers huge valid catalogs in time, and exits 3 when infeasible") {
  run_group("plan");
}

TEST_CASE("spotdnn frontier refuses hostile deadline ranges and plot paths without running a shell") {
  run_group("frontier");
}

TEST_CASE("spotdnn simulate refuses hostile counts, hazards and histogram paths") { run_group("simulate"); }

TEST_CASE("spotdnn replan refuses hostile state files and options") { run_group("replan"); }

TEST_CASE("spotdnn fit loss refuses hostile traces, options and output paths") { run_group("fit-loss"); }

TEST_CASE("spotdnn fit throughput refuses hostile traces, options and output paths") { run_group("fit-throughput"); }

TEST_CASE("spotdnn launch refuses hostile plan documents, AWS files and run ids") { run_group("launch"); }

TEST_CASE("spotdnn status refuses hostile run ids and AWS files, and its script selects by the exact run tag") { run_group("status"); }

TEST_CASE("spotdnn teardown refuses hostile run ids and AWS files") { run_group("teardown"); }

TEST_CASE("spotdnn serverless plan and fit refuse hostile profiles, traces, transfer tables and options") { run_group("serverless"); }

TEST_CASE("spotdnn compare refuses hostile profiles and options, and shows one side when the other has no plan") { run_group("compare"); }

TEST_CASE("spotdnn catalog import, fetch and show refuse hostile AWS outputs, catalogs and options") { run_group("catalog"); }

TEST_CASE("spotdnn revocations fit, show and check refuse hostile traces, models and options") { run_group("revocations"); }

TEST_CASE("spotdnn replay refuses hostile traces, jobs and replay windows") { run_group("replay"); }

TEST_CASE("spotdnn cost refuses hostile describe-instances and spot price outputs, run ids and options") { run_group("cost"); }

TEST_CASE("spotdnn watch refuses hostile listings, progress files, journals and options, and launches nothing it should not") {
  run_group("watch");
}

TEST_CASE("spotdnn workload build refuses hostile training profiles, traces and options") { run_group("workload-build"); }

TEST_CASE("spotdnn profile plan refuses hostile budgets, types, catalogs and options") { run_group("profile-plan"); }
