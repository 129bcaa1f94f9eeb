// SPDX-License-Identifier: MIT
// How the CLI runs gnuplot for --plot (examples/cli/gnuplot.hpp), with stand-in gnuplot programs first on
// PATH: no shell, the script on stdin, no output path inside it, only three open descriptors, and a plot
// that appears at the requested path only when gnuplot succeeded; every failure is one line on stderr.
// Then the plots themselves (examples/cli/plot_script.hpp), with the real gnuplot: every command's --plot
// writes SVG, PNG or PDF as the extension says, long fit traces are thinned for drawing only, and user text
// reaches gnuplot only as quoted text.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/planner.hpp>

#include "../examples/cli/plot_script.hpp"
#include "support/launcher_fixtures.hpp"
#include "support/preset_traces.hpp"
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

/// `spotdnn ARGS` run in DIR, with DIR/bin (a stand-in gnuplot, when there is one) first on PATH.
test::CommandResult run_in(const test::TempDir& dir, const std::string& args) {
  return test::run_shell("cd " + shell_quote(dir.path().string()) + " && PATH=" + shell_quote(dir / "bin") + ":\"$PATH\" '" +
                         SPOTDNN_CLI_PATH + "' " + args);
}

/// What the first bytes of a plot file say it is: "svg", "png", "pdf" or "".
std::string magic_of(const std::filesystem::path& file) {
  const std::string head = test::read_text(file).substr(0, 8);
  if (head.rfind("<svg", 0) == 0 || head.rfind("<?xml", 0) == 0) return "svg";
  if (head.rfind("\x89PNG", 0) == 0) return "png";
  if (head.rfind("%PDF", 0) == 0) return "pdf";
  return "";
}

/// A seed-form loss trace (the preset's γ) of `runs` runs with `points` points each at iterations 0, 2,
/// 4, ..., a deterministic 1% wiggle and a spike every 5,000 points.
std::string loss_trace(int runs, int points) {
  std::ostringstream csv;
  csv.precision(10);
  csv << "run,workers,weighted_batch,iteration,loss\n";
  for (int r = 0; r < runs; ++r) {
    const int workers = 2 + 2 * r;
    const double batch = 256.0 * (r + 1);
    for (int k = 0; k < points; ++k) {
      const double j = 2.0 * k;
      double loss = (-0.2 * batch + 2507.6) * std::sqrt(double(workers)) / (j + 876.5) + 0.5;
      loss *= 1 + 0.01 * std::sin(0.7 * k + r);
      if (k % 5000 == 17) loss *= 1.5;
      csv << 'r' << r << ',' << workers << ',' << batch << ',' << j << ',' << loss << '\n';
    }
  }
  return csv.str();
}

/// Each command with --plot, run in a directory holding loss.csv and tput.csv: the arguments before --plot.
const std::vector<std::string> kPlotCommands = {
    "frontier --target-loss 0.8 --deadlines 30m:2h:6",
    "frontier --target-loss 0.8 --deadlines 30m:2h:4 --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 2000",
    "simulate --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --deadline 45m --fallback-hazard 0.3 --scenarios 500",
    "fit loss --trace loss.csv",
    "fit throughput --trace tput.csv --free alpha1,beta1",
    "compare --target-loss 0.8 --deadline 2h --serverless-profile profile.json --epochs 10 --deadlines 30m:4h",
};

/// The serverless profile the compare command reads (docs/model.md, serverless reference figures).
constexpr const char* kServerlessProfile =
    R"({"kind": "spotdnn.serverless_profile", "name": "reference", "model_size_mb": 44.7, "samples_per_epoch": 50000,
        "a": 60, "b": 8, "m": 200, "k1": 20, "k2": -0.8})";

/// A fit report without its solve time ("best of 1 starts, 0.002 s)" becomes "best of 1 starts)"): the
/// one figure two runs of the same fit may print differently on a loaded machine.
std::string without_solve_time(const std::string& report) {
  static const std::regex kSolveTime(", [0-9]+\\.[0-9]+ s\\)");
  return std::regex_replace(report, kSolveTime, ")");
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

TEST_CASE("a failing gnuplot leaves the old plot and no temporary file, and its error line comes out escaped, exit 4 with the answer") {
  test::TempDir dir;
  fake_gnuplot(dir, "#!/bin/bash\ncat >/dev/null\nprintf '<svg partial'\n"
                    "printf 'set title x\\n\"/dev/stdin\" line 7: bad \\033[31m thing\\n' >&2\nexit 1\n");
  const std::string plot = "old plot.svg";
  test::write_text(dir / plot, "old plot");
  const auto r = plot_frontier(dir, plot);
  CHECK(r.exit_code == 4);
  CHECK(r.out.find("spotdnn frontier:") == 0);  // the answer, printed whole
  CHECK(r.out.find("plot: not written: --plot = \"old plot.svg\": gnuplot failed") != std::string::npos);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("spotdnn frontier: warning: --plot = ", 0) == 0);
  CHECK(r.err.find("the answer is printed without the plot (exit 4)") != std::string::npos);
  CHECK(r.err.find("--plot = \"old plot.svg\": gnuplot failed: script line 7: bad \\x1b[31m thing") != std::string::npos);
  CHECK(test::read_text(dir / plot) == "old plot");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"bin", plot});
}

TEST_CASE("a gnuplot that exits 0 without writing anything is a failure that leaves no file") {
  test::TempDir dir;
  fake_gnuplot(dir, "#!/bin/bash\ncat >/dev/null\n");
  const auto r = plot_frontier(dir, "empty.svg");
  CHECK(r.exit_code == 4);
  CHECK_FALSE(r.out.empty());
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("gnuplot wrote nothing") != std::string::npos);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"bin"});
}

TEST_CASE("without gnuplot on PATH, frontier --plot prints the table, warns in one line naming the path, writes nothing, exit 4") {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "empty");
  const auto r = plot_frontier(dir, "a'b.svg", dir / "empty");
  CHECK(r.exit_code == 4);
  CHECK(r.out.find("  step  deadline from [s]") != std::string::npos);  // the computed table is not lost
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
    CHECK(r.err.find("--plot") != std::string::npos);
  }
  CHECK(names_in(dir.path()) == std::vector<std::string>{"sub"});
  CHECK(names_in(dir / "sub").empty());
}

TEST_CASE("every command's --plot writes SVG, PNG or PDF as the file's extension says, with the real gnuplot") {
  test::TempDir dir;
  test::write_text(dir / "loss.csv", loss_trace(2, 60));
  test::write_text(dir / "tput.csv", test::preset_throughput_trace());
  test::write_text(dir / "profile.json", kServerlessProfile);
  for (const std::string& command : kPlotCommands) {
    for (const std::string ext : {"svg", "png", "pdf", "SVG"}) {
      const std::string plot = "plot." + ext;
      CAPTURE(command);
      CAPTURE(plot);
      const auto r = run_in(dir, command + " --plot " + plot);
      INFO(r.err);
      CHECK(r.exit_code == 0);
      CHECK(r.err.empty());
      CHECK(magic_of(dir / plot) == (ext == "SVG" ? "svg" : ext));
      std::filesystem::remove(dir / plot);
    }
  }
  // Nothing but the inputs is left: no script, no temporary file.
  CHECK(names_in(dir.path()) == std::vector<std::string>{"loss.csv", "profile.json", "tput.csv"});
}

TEST_CASE("a --plot file name without .svg, .png or .pdf is a usage error naming --plot, before any work") {
  test::TempDir dir;
  test::write_text(dir / "loss.csv", loss_trace(2, 60));
  test::write_text(dir / "tput.csv", test::preset_throughput_trace());
  test::write_text(dir / "profile.json", kServerlessProfile);
  for (const std::string& command : kPlotCommands) {
    for (const std::string plot : {"plot.jpg", "plot", "plot.svg.txt", "svg"}) {
      CAPTURE(command);
      CAPTURE(plot);
      const auto r = run_in(dir, command + " --plot " + plot);
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err_lines() == 1);
      CHECK(r.err.find("--plot") != std::string::npos);
      CHECK(r.err.find(".svg, .png or .pdf") != std::string::npos);
    }
  }
  CHECK(names_in(dir.path()) == std::vector<std::string>{"loss.csv", "profile.json", "tput.csv"});
}

TEST_CASE("a gnuplot that writes something other than the extension promises fails and leaves no file") {
  test::TempDir dir;
  fake_gnuplot(dir, "#!/bin/bash\ncat >/dev/null\nprintf '<svg>not a png</svg>'\n");
  const auto r = plot_frontier(dir, "wrong.png");
  CHECK(r.exit_code == 4);  // the answer printed, the plot refused
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("--plot = \"wrong.png\": gnuplot did not write a PNG file") != std::string::npos);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"bin"});
}

TEST_CASE("PNG is drawn by pngcairo, or by libgd's png when gnuplot has no cairo, and PDF by pdfcairo") {
  test::TempDir dir;
  fake_gnuplot(dir, "#!/bin/bash\ncat > \"$(dirname \"$0\")/script.gp\"\nprintf '\\x89PNG fake'\n");
  REQUIRE(plot_frontier(dir, "f.png").exit_code == 0);
  std::string script = test::read_text(dir / "bin/script.gp");
  CHECK(script.rfind("if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n  set terminal pngcairo ", 0) == 0);
  CHECK(script.find("} else {\n  set terminal png ") != std::string::npos);
  // The fallback branch through the real gnuplot, as if pngcairo were missing: still a PNG.
  script.replace(script.find("'pngcairo'"), 10, "'no-such-terminal'");
  test::write_text(dir / "fallback.gp", script);
  REQUIRE(test::run_bash("cd " + shell_quote(dir.path().string()) + " && gnuplot /dev/stdin <fallback.gp >fallback.png 2>/dev/null") == 0);
  CHECK(magic_of(dir / "fallback.png") == "png");
  fake_gnuplot(dir, "#!/bin/bash\ncat > \"$(dirname \"$0\")/script.gp\"\nprintf '%%PDF fake'\n");
  REQUIRE(plot_frontier(dir, "f.pdf").exit_code == 0);
  CHECK(test::read_text(dir / "bin/script.gp").rfind("set terminal pdfcairo size 10in,6.4in ", 0) == 0);
}

TEST_CASE("a failing gnuplot leaves no partial plot for simulate, fit and compare either, and every command keeps its answer (exit 4)") {
  test::TempDir dir;
  test::write_text(dir / "loss.csv", loss_trace(2, 60));
  test::write_text(dir / "tput.csv", test::preset_throughput_trace());
  test::write_text(dir / "profile.json", kServerlessProfile);
  fake_gnuplot(dir, "#!/bin/bash\ncat >/dev/null\nprintf '<svg partial'\necho 'boom' >&2\nexit 1\n");
  for (const std::string& command : kPlotCommands) {
    CAPTURE(command);
    const auto r = run_in(dir, command + " --plot p.svg");
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("--plot = \"p.svg\": gnuplot failed: boom") != std::string::npos);
    // Every command keeps its answer, whole, as without --plot; the failure a warning and exit 4.
    CHECK(r.exit_code == 4);
    CHECK(r.err.find(": warning: --plot") != std::string::npos);
    const auto plain = run_in(dir, command);
    REQUIRE(plain.exit_code == 0);
    CHECK(without_solve_time(r.out).rfind(without_solve_time(plain.out), 0) == 0);
    const bool says_plot = command.rfind("fit", 0) != 0;  // the fits' reports have no plot line or key
    if (says_plot) {
      CHECK(r.out.find("plot: not written: --plot = \"p.svg\": gnuplot failed: boom") != std::string::npos);
      const auto json = run_in(dir, command + " --plot p.svg --format json");
      CHECK(json.exit_code == 4);
      const auto document = nlohmann::json::parse(json.out);
      CHECK(document.at("plot").is_null());
      CHECK(document.at("plot_error").get<std::string>().find("gnuplot failed: boom") != std::string::npos);
    }
  }
  CHECK(names_in(dir.path()) == std::vector<std::string>{"bin", "loss.csv", "profile.json", "tput.csv"});
}

TEST_CASE("a 100,000-point loss trace is thinned for drawing only: a small plot, the same fit") {
  test::TempDir dir;
  test::write_text(dir / "loss.csv", loss_trace(2, 50000));
  const auto plain = run_in(dir, "fit loss --trace loss.csv --format csv");
  REQUIRE(plain.exit_code == 0);
  const auto drawn = run_in(dir, "fit loss --trace loss.csv --format csv --plot big.svg");
  INFO(drawn.err);
  REQUIRE(drawn.exit_code == 0);
  CHECK(drawn.out == plain.out);  // the coefficient table to the last digit: the fit saw every point
  CHECK(drawn.out.rfind("parameter,estimate,standard_error,ci95_low,ci95_high,free,at_bound,uncertain\ngamma1,", 0) == 0);
  const std::uintmax_t bytes = std::filesystem::file_size(dir / "big.svg");
  MESSAGE("SVG of a 100,000-point trace: " << bytes << " bytes");
  CHECK(bytes < 1000000);  // with every point drawn: about 10 MB
  const std::string svg = test::xml_unescape(test::read_text(dir / "big.svg"));
  CHECK(svg.find("run r0 (2000 of 50000 points drawn)") != std::string::npos);  // the key says so, per run
  CHECK(svg.find("points: 4000 of 100000 drawn") != std::string::npos);         // and the title in all
  // A short trace is drawn whole, and the key says how many points.
  test::write_text(dir / "short.csv", loss_trace(2, 60));
  REQUIRE(run_in(dir, "fit loss --trace short.csv --plot short.svg").exit_code == 0);
  CHECK(test::xml_unescape(test::read_text(dir / "short.svg")).find("run r1 (60 points)") != std::string::npos);
}

TEST_CASE("thin_for_drawing keeps a short series whole, and of a long one the ends and each bucket's extremes") {
  using spotdnn::cli::thin_for_drawing;
  std::vector<double> y(10);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = double(i);
  CHECK(thin_for_drawing(y.size(), 10, [&](std::size_t i) { return y[i]; }).size() == 10);
  std::vector<double> series(100000, 1.0);
  series[31337] = 9.0;   // a spike
  series[77777] = -3.0;  // a dip
  const auto value = [&](std::size_t i) { return series[i]; };
  const std::vector<std::size_t> kept = thin_for_drawing(series.size(), 2000, value);
  CHECK(kept.size() <= 2000);
  CHECK(kept.front() == 0);
  CHECK(kept.back() == series.size() - 1);
  CHECK(std::is_sorted(kept.begin(), kept.end()));
  CHECK(std::adjacent_find(kept.begin(), kept.end()) == kept.end());
  CHECK(std::find(kept.begin(), kept.end(), std::size_t(31337)) != kept.end());
  CHECK(std::find(kept.begin(), kept.end(), std::size_t(77777)) != kept.end());
  CHECK(kept == thin_for_drawing(series.size(), 2000, value));  // deterministic
}

TEST_CASE("the simulate histogram marks the deadline and counts the scenarios that never finish in the key") {
  test::TempDir dir;
  fake_gnuplot(dir, "#!/bin/bash\ncat > \"$(dirname \"$0\")/script.gp\"\nprintf '<svg>fake</svg>'\n");
  // Half an hour of lifetime per instance: many scenarios lose every worker.
  const auto r = run_in(dir, "simulate --cluster p3.2xlarge=1 --target-loss 0.8 --deadline 2h --fallback-hazard 2 "
                             "--scenarios 400 --format json --plot h.svg");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const std::string script = test::read_text(dir / "bin/script.gp");
  CHECK(script.find("set xlabel 'time to reach the target loss [") != std::string::npos);
  CHECK(script.find("set label 1 'deadline 2 h' at ") != std::string::npos);
  CHECK(script.find("title 'deadline (2 h)'") != std::string::npos);
  CHECK(script.find("set xtics add ('never' ") != std::string::npos);
  const double finished = j["finished_share"].get<double>();
  REQUIRE(finished < 1.0);
  const long never = std::lround((1 - finished) * 400);
  CHECK(script.find("title 'never finished: " + std::to_string(never) + " (") != std::string::npos);
  CHECK(script.find("title 'finished by the deadline: ") != std::string::npos);
  CHECK(script.find("title 'finished after the deadline: ") != std::string::npos);
}

TEST_CASE("simulate --histogram and frontier --csv are gone: usage errors that name their replacements") {
  const auto histogram = test::run_cli("simulate --cluster p3.2xlarge=2 --target-loss 0.8 --deadline 2600 "
                                       "--fallback-hazard 0.1 --histogram h.svg");
  CHECK(histogram.exit_code == 2);
  CHECK(histogram.out.empty());
  CHECK(histogram.err_lines() == 1);
  CHECK(histogram.err.find("--histogram") != std::string::npos);
  CHECK(histogram.err.find("is now --plot FILE") != std::string::npos);
  const auto csv = test::run_cli("frontier --target-loss 0.8 --csv");
  CHECK(csv.exit_code == 2);
  CHECK(csv.out.empty());
  CHECK(csv.err_lines() == 1);
  CHECK(csv.err.find("--csv: is now --format csv") != std::string::npos);
}

TEST_CASE("frontier labels only steps whose labels do not overlap, and says how many in the title") {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  FrontierOptions options;
  options.min_deadline_s = 1200;
  options.max_deadline_s = 3 * 3600;
  const Frontier f = cost_deadline_frontier(model, 0.8, options);
  REQUIRE(f.steps.size() > 20);  // a steep staircase: most steps are close together
  const std::string script = spotdnn::cli::frontier_gnuplot_script(f, spotdnn::cli::PlotFormat::png);
  std::size_t labels = 0;
  for (std::size_t at = script.find("\nset label "); at != std::string::npos; at = script.find("\nset label ", at + 1)) ++labels;
  CHECK(labels >= 5);
  CHECK(labels < f.steps.size());
  CHECK(script.find(std::to_string(f.steps.size()) + " steps, " + std::to_string(labels) + " labelled") != std::string::npos);
  CHECK(script.find("set xlabel 'deadline [h]'") != std::string::npos);
  CHECK(script.find("set ylabel 'cost [USD]'") != std::string::npos);
  // A few steps far apart: every one labelled, deadlines in minutes.
  options.min_deadline_s = 2400;
  options.max_deadline_s = 4000;
  const Frontier wide = cost_deadline_frontier(model, 0.8, options);
  const std::string few = spotdnn::cli::frontier_gnuplot_script(wide);
  CHECK(few.find(" labelled") == std::string::npos);
  CHECK(few.find("'g3.8xlarge=4,p3.2xlarge=2' at 40,") != std::string::npos);
  CHECK(few.find("set xlabel 'deadline [min]'") != std::string::npos);
}

TEST_CASE("frontier --deadlines takes durations with units, and --format csv prints the steps") {
  const auto units = test::run_cli("frontier --target-loss 0.8 --deadlines 40m:2h:10 --format json");
  const auto seconds = test::run_cli("frontier --target-loss 0.8 --deadlines 2400:7200:10 --format json");
  REQUIRE(units.exit_code == 0);
  CHECK(units.out == seconds.out);
  const auto csv = test::run_cli("frontier --target-loss 0.8 --deadlines 40m:1h --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("from_deadline_s,to_deadline_s,training_time_s,cost_usd,worker_cost_usd,ps_cost_usd,workers,cluster\n2400,", 0) == 0);
  for (const std::string bad : {"40x:2h", "40m", "40m:2h:1", "40m:2h:x", "-1h:2h", "2h:40m"}) {
    CAPTURE(bad);
    const auto r = test::run_cli("frontier --target-loss 0.8 --deadlines '" + bad + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
  }
}

TEST_CASE("gnuplot_string writes text as single-quoted pieces joined by \"\\047\", control characters and bad UTF-8 escaped") {
  using spotdnn::cli::gnuplot_string;
  CHECK(gnuplot_string("") == "''");
  CHECK(gnuplot_string("plain") == "'plain'");
  CHECK(gnuplot_string("it's") == R"('it'."\047".'s')");
  CHECK(gnuplot_string("'") == R"("\047")");
  CHECK(gnuplot_string("''a'") == R"("\047"."\047".'a'."\047")");
  CHECK(gnuplot_string("a\nb\rc\td\x1b[2J\x7f") == R"('a\nb\rc\td\x1b[2J\x7f')");
  CHECK(gnuplot_string("bad \xff byte") == R"('bad \xff byte')");
  CHECK(gnuplot_string("`x` $(y) @m \"q\" \\ {z}^_ \xc3\xa9") == "'`x` $(y) @m \"q\" \\ {z}^_ \xc3\xa9'");
}

TEST_CASE("gnuplot prints every gnuplot_string back as its text and runs none of them") {
  test::TempDir dir;
  const std::vector<std::string> texts = {test::kHostileLine,
                                          "x'\n!touch PWNED\n'",
                                          "x' . system('touch PWNED') . '",
                                          "`touch PWNED`",
                                          "@macro",
                                          "'; system(\"touch PWNED\"); print '",
                                          "'",
                                          "''",
                                          "'''a'' . system(\"touch PWNED\") . ''",
                                          "\" @macro \" ' @macro '",
                                          "\\\" @macro \\' @macro",
                                          "end with a backslash \\",
                                          "tab\there, escape \x1b and \xff",
                                          test::kHostileTypeName};
  // An expanded @macro would run something.
  std::string script = "macro = 'system(\"touch PWNED\")'\n";
  std::string expected;
  for (const std::string& text : texts) {
    script += "print " + spotdnn::cli::gnuplot_string(text) + "\n";
    expected += spotdnn::detail::escape_for_message(text) + "\n";
  }
  test::write_text(dir / "script.gp", script);
  const int rc = test::run_bash("cd " + shell_quote(dir.path().string()) + " && gnuplot /dev/stdin <script.gp >out.txt 2>printed.txt");
  INFO(test::read_text(dir / "printed.txt"));
  REQUIRE(rc == 0);
  CHECK(test::read_text(dir / "printed.txt") == expected);
  CHECK(test::pwned_files(dir.path()).empty());
}

TEST_CASE("frontier_gnuplot_script names no output file and puts each plan label in a single-quoted noenhanced label") {
  // The type name reaches the labels: the preset with p3.2xlarge renamed to a hostile name.
  Workload workload = presets::resnet110_workload();
  Catalog catalog = presets::resnet110_catalog();
  auto profile = workload.profiles.extract("p3.2xlarge");
  profile.key() = test::kHostileTypeName;
  workload.profiles.insert(std::move(profile));
  for (InstanceType& type : catalog.instance_types) {
    if (type.name == "p3.2xlarge") type.name = test::kHostileTypeName;
  }
  FrontierOptions options;
  options.min_deadline_s = 2000;
  options.max_deadline_s = 4000;
  const Frontier f = cost_deadline_frontier(PerformanceModel(workload, catalog), 0.8, options);
  REQUIRE(!f.steps.empty());
  for (const auto format : {spotdnn::cli::PlotFormat::svg, spotdnn::cli::PlotFormat::png, spotdnn::cli::PlotFormat::pdf}) {
    const std::string script = spotdnn::cli::frontier_gnuplot_script(f, format, {{2500, 3.0}});
    CHECK(script.find(test::kHostileTypeName) == std::string::npos);  // its ' is always cut out
    CHECK(script.find("\nset output\n") != std::string::npos);
    CHECK(script.find("set output ") == std::string::npos);
    // Outside single-quoted pieces the only strings are "\047" and "\n": backquotes would run in any other.
    int quotes = 0;
    for (std::size_t at = 0; at < script.size(); ++at) {
      if (script[at] == '\'') {
        at = script.find('\'', at + 1);  // a piece: no ' inside
        REQUIRE(at != std::string::npos);
      } else if (script[at] == '"') {
        const bool quote = script.compare(at, 6, R"("\047")") == 0;
        CHECK((quote || script.compare(at, 4, R"("\n")") == 0));
        at += quote ? 5 : 3;
        ++quotes;
      }
    }
    CHECK(quotes > 0);
    std::istringstream lines(script);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("set label", 0) == 0 || line.rfind("set title", 0) == 0) CHECK(line.find(" noenhanced") != std::string::npos);
    }
  }
  // The labels drawn are the plans' labels, quoted.
  const std::string script = spotdnn::cli::frontier_gnuplot_script(f);
  std::size_t quoted_labels = 0;
  for (const FrontierStep& s : f.steps) {
    if (script.find(" " + spotdnn::cli::gnuplot_string(io::plan_label(s.plan, ',')) + " at ") != std::string::npos) ++quoted_labels;
  }
  CHECK(quoted_labels >= 1);
}
