// SPDX-License-Identifier: MIT
// How the CLI runs gnuplot for --plot (examples/cli/gnuplot.hpp), with stand-in gnuplot programs first on
// PATH: no shell, the script on stdin, no output path inside it, only three open descriptors, and a plot
// that appears at the requested path only when gnuplot succeeded; every failure is one line on stderr.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/run_command.hpp"

using namespace spotdnn;
using launcher::shell_quote;

namespace {

/// Writes an executable stand-in called gnuplot into DIR/bin.
void fake_gnuplot(const test::TempDir& dir, const std::string& program) {
  std::filesystem::create_directories(dir / "bin");
  test::write_text(dir / "bin/gnuplot", program);
  std::filesystem::permissions(dir / "bin/gnuplot", std::filesystem::perms::owner_all);
}

/// `spotdnn frontier ... --plot PLOT` in DIR with `path` as PATH (DIR/bin first when empty), after the
/// shell commands `setup` and with the extra redirections `redirections`.
test::CommandResult plot_frontier(const test::TempDir& dir, const std::string& plot, const std::string& path = "",
                                  const std::string& setup = "true", const std::string& redirections = "") {
  const std::string search = path.empty() ? shell_quote(dir / "bin") + ":\"$PATH\"" : shell_quote(path);
  return test::run_shell("cd " + shell_quote(dir.path().string()) + " && " + setup + " && PATH=" + search + " '" +
                         SPOTDNN_CLI_PATH + "' frontier --target-loss 0.8 --deadlines 2000:4000 --plot " + shell_quote(plot) +
                         " " + redirections);
}

/// Names in DIR (not recursive), sorted.
std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("gnuplot gets the script on stdin, no output path, argv /dev/stdin and no descriptor but 0, 1 and 2") {
  test::TempDir dir;
  fake_gnuplot(dir, R"(#!/usr/bin/python3
import json, os, sys
fds = []
for fd in range(3, 1024):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:
        pass
record = {"argv": sys.argv[1:], "fds": fds, "script": sys.stdin.read()}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "record.json"), "w") as f:
    json.dump(record, f)
sys.stdout.write("<svg>fake</svg>\n")
)");
  const std::string plot = "p 'q' `touch PWNED` $(touch PWNED).svg";
  // Descriptor 7 is open (not close-on-exec) in the CLI; umask 027 must give the plot mode 0640.
  const auto r = plot_frontier(dir, plot, "", "umask 027", "7</dev/null");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json record = nlohmann::json::parse(test::read_text(dir / "bin/record.json"));
  CHECK(record["argv"] == nlohmann::json::array({"/dev/stdin"}));
  CHECK(record["fds"] == nlohmann::json::array());
  const std::string script = record["script"].get<std::string>();
  CHECK(script.rfind("set terminal svg", 0) == 0);
  CHECK(script.find("\nset output\n") != std::string::npos);
  CHECK(script.find("PWNED") == std::string::npos);  // the path is not in the script
  CHECK(test::read_text(dir / plot) == "<svg>fake</svg>\n");
  namespace fs = std::filesystem;
  CHECK((fs::status(dir / plot).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(names_in(dir.path()) == std::vector<std::string>{"bin", plot});
  CHECK(test::pwned_files(dir.path()).empty());
}

TEST_CASE("a failing gnuplot leaves the old plot and no temporary file, and its error line comes out escaped, exit 1") {
  test::TempDir dir;
  fake_gnuplot(dir, "#!/bin/bash\ncat >/dev/null\nprintf '<svg partial'\n"
                    "printf 'set title x\\n\"/dev/stdin\" line 7: bad \\033[31m thing\\n' >&2\nexit 1\n");
  const std::string plot = "old plot.svg";
  test::write_text(dir / plot, "old plot");
  const auto r = plot_frontier(dir, plot);
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("--plot = \"old plot.svg\": gnuplot failed: script line 7: bad \\x1b[31m thing") != std::string::npos);
  CHECK(test::read_text(dir / plot) == "old plot");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"bin", plot});
}

TEST_CASE("a gnuplot that exits 0 without writing anything is a failure that leaves no file") {
  test::TempDir dir;
  fake_gnuplot(dir, "#!/bin/bash\ncat >/dev/null\n");
  const auto r = plot_frontier(dir, "empty.svg");
  CHECK(r.exit_code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("gnuplot wrote nothing") != std::string::npos);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"bin"});
}

TEST_CASE("without gnuplot on PATH, --plot exits 1 with one line naming the path and writes nothing") {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "empty");
  const auto r = plot_frontier(dir, "a'b.svg", dir / "empty");
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("--plot = \"a'b.svg\": cannot start gnuplot") != std::string::npos);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"empty"});
}

TEST_CASE("a plot path in a missing directory, or naming a directory, exits 2 with one line and writes nothing") {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  for (const std::string plot : {"missing/x.svg", "sub", "sub/", "missing\n$(touch PWNED)/x.svg"}) {
    CAPTURE(plot);
    const auto r = plot_frontier(dir, plot);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("--plot = ") != std::string::npos);
  }
  CHECK(names_in(dir.path()) == std::vector<std::string>{"sub"});
  CHECK(names_in(dir / "sub").empty());
}
