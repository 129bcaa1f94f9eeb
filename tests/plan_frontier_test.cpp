// SPDX-License-Identifier: MIT
// The sliding-window baseline, the cost–deadline frontier and the `plan` / `frontier` commands (the gnuplot
// quoting that keeps plan labels from ever running as commands is tested in cli_gnuplot_test.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <spotdnn/io/plan_json.hpp>
#include <spotdnn/planner.hpp>

#include "support/launcher_fixtures.hpp"
#include "support/run_command.hpp"

using namespace spotdnn;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

}  // namespace

TEST_CASE("the sliding window never beats the exact planner over a grid of SLOs") {
  const PerformanceModel model = preset_model();
  int compared = 0;
  for (double loss : {0.7, 0.8, 0.9, 1.0}) {
    for (double deadline = 1500; deadline <= 6000; deadline += 250) {
      const PlanResult exact = plan_exact(model, {loss, deadline});
      const PlanResult window = plan_sliding_window(model, {loss, deadline});
      if (window.has_plan()) {
        REQUIRE(exact.status == Status::optimal);
        CHECK(window.status == Status::feasible);
        CHECK(window.prediction.training_time_s <= deadline);
        CHECK(window.prediction.cost_usd >= exact.prediction.cost_usd * (1 - 1e-12));
        ++compared;
      }
    }
  }
  CHECK(compared > 40);
}

TEST_CASE("the sliding window finds the preset's plan at (0.8, 2400) and scans only its bounds") {
  const PerformanceModel model = preset_model();
  const PlanResult r = plan_sliding_window(model, {0.8, 2400});
  REQUIRE(r.status == Status::feasible);
  CHECK(r.cluster == Cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}});
  const SlidingWindowBounds b = sliding_window_bounds(model, {0.8, 2400});
  CHECK(b.lower_workers >= 1);
  CHECK(b.upper_workers >= r.prediction.workers);
  CHECK(b.lower_workers <= r.prediction.workers);
  // A deadline below every window's reach: no window, and the exact planner explains why.
  const PlanResult none = plan_sliding_window(model, {0.8, 600});
  CHECK(none.status == Status::infeasible);
  CHECK(none.reason == InfeasibleReason::deadline_too_short);
}

TEST_CASE("the sliding window refuses options the paper's heuristic does not have") {
  PlanOptions options;
  options.minimum_counts["p3.2xlarge"] = 1;
  CHECK_THROWS_AS((void)plan_sliding_window(preset_model(), {0.8, 2400}, options), invalid_argument);
  PlanOptions budget;
  budget.budget_usd = 3;
  CHECK_THROWS_AS((void)plan_sliding_window(preset_model(), {0.8, 2400}, budget), invalid_argument);
}

TEST_CASE("frontier costs fall as deadlines grow and each step is the exact optimum for its deadlines") {
  const PerformanceModel model = preset_model();
  FrontierOptions options;
  options.min_deadline_s = 1500;
  options.max_deadline_s = 5000;
  const Frontier f = cost_deadline_frontier(model, 0.8, options);
  REQUIRE(f.status == Status::optimal);
  REQUIRE(f.steps.size() > 5);
  for (std::size_t i = 1; i < f.steps.size(); ++i) {
    CHECK(f.steps[i].plan.cost_usd < f.steps[i - 1].plan.cost_usd);
    CHECK(f.steps[i].plan.training_time_s > f.steps[i - 1].plan.training_time_s);
  }
  for (const FrontierStep& s : f.steps) {
    for (double d : {s.plan.training_time_s, 0.5 * (s.plan.training_time_s + s.to_deadline_s), s.to_deadline_s}) {
      const PlanResult r = plan_exact(model, {0.8, d});
      REQUIRE(r.status == Status::optimal);
      CHECK(r.counts == s.counts);
    }
  }
  // Below the first step nothing is feasible.
  CHECK(plan_exact(model, {0.8, f.steps.front().plan.training_time_s * (1 - 1e-9)}).status == Status::infeasible);
}

TEST_CASE("the frontier CSV and JSON hold every step") {
  FrontierOptions options;
  options.min_deadline_s = 2000;
  options.max_deadline_s = 4000;
  const Frontier f = cost_deadline_frontier(preset_model(), 0.8, options);
  const std::string csv = io::frontier_csv(f);
  std::istringstream lines(csv);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) ++rows;
  CHECK(rows == static_cast<int>(f.steps.size()) + 1);
  CHECK(csv.rfind("from_deadline_s,to_deadline_s,training_time_s,cost_usd", 0) == 0);
  const io::Json j = io::to_json(f);
  CHECK(j.at("steps").size() == f.steps.size());
  CHECK(j.at("status") == "optimal");
}

TEST_CASE("spotdnn plan prints the preset's plan, as a table and as JSON") {
  const auto table = test::run_cli("plan --target-loss 0.8 --deadline 2400");
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("p3.2xlarge") != std::string::npos);
  CHECK(table.out.find("under the deadline by") != std::string::npos);
  const auto json = test::run_cli("plan --target-loss 0.8 --deadline 2400 --format json --no-ps-cost");
  REQUIRE(json.exit_code == 0);
  const io::Json j = io::Json::parse(json.out);
  CHECK(j.at("status") == "optimal");
  CHECK(j.at("cluster") == io::Json{{"g3.8xlarge", 4}, {"p3.2xlarge", 2}});
  CHECK(j.at("cost_usd").get<double>() == doctest::Approx(2.97272668).epsilon(1e-8));
  CHECK(j.at("ps_cost_usd").get<double>() == 0.0);
  for (const char* key : {"training_time_s", "worker_cost_usd", "iterations", "weighted_batch", "samples_per_s",
                          "iterations_per_s", "samples_to_train", "convergence_coefficient",
                          "worker_bandwidth_bytes_per_s", "contention_probability", "workers", "deadline_slack_s"}) {
    CHECK_MESSAGE(j.contains(key), key);
  }
  const auto window = test::run_cli("plan --target-loss 0.8 --deadline 2400 --algorithm sliding-window --format json");
  CHECK(window.exit_code == 0);
  CHECK(io::Json::parse(window.out).at("status") == "feasible");
}

TEST_CASE("spotdnn plan reports infeasibility with exit code 3 and bad input with exit code 2") {
  const auto infeasible = test::run_cli("plan --target-loss 0.8 --deadline 600 --format json");
  CHECK(infeasible.exit_code == 3);
  const io::Json j = io::Json::parse(infeasible.out);
  CHECK(j.at("reason") == "deadline_too_short");
  CHECK(j.at("fastest").at("training_time_s").get<double>() > 600);
  for (const char* args : {"plan --target-loss 0.8 --deadline 2400 --algorithm greedy", "plan --target-loss 0.8",
                           "plan --target-loss 0.8 --deadline -5", "plan --target-loss 0.8 --deadline 2400 --keep x=1"}) {
    const auto bad = test::run_cli(args);
    CHECK_MESSAGE(bad.exit_code == 2, args);
    CHECK(bad.out.empty());
    CHECK(bad.err_lines() == 1);
  }
}

TEST_CASE("spotdnn frontier --plot writes an SVG holding the series and the plan labels") {
  const std::string svg = std::string(SPOTDNN_TEST_BINARY_DIR) + "/frontier_test.svg";
  std::remove(svg.c_str());
  const auto r = test::run_cli("frontier --target-loss 0.8 --deadlines 2000:4000:5 --plot '" + svg + "'");
  REQUIRE(r.exit_code == 0);
  std::ifstream in(svg);
  REQUIRE(in.good());
  std::stringstream content;
  content << in.rdbuf();
  const std::string text = content.str();
  CHECK(text.find("<svg") != std::string::npos);
  CHECK(text.find("optimal cost [USD]") != std::string::npos);
  CHECK(text.find("deadline [min]") != std::string::npos);
  CHECK(text.find("cost [USD]") != std::string::npos);
  CHECK(text.find("g3.8xlarge=4,p3.2xlarge=2") != std::string::npos);  // clusters in type-name order
  CHECK_FALSE(std::ifstream(svg + ".gp").good());  // no script is left next to the plot
  const auto bad = test::run_cli("frontier --target-loss 0.8 --deadlines 4000:2000");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err_lines() == 1);
}

TEST_CASE("spotdnn frontier --plot draws a hostile type name verbatim to a hostile path and runs nothing") {
  test::TempDir dir;
  test::write_renamed_preset(dir, "p3.2xlarge", test::kHostileTypeName);
  const std::string plot = "frontier 'q' \"d\" `touch PWNED` $(touch PWNED) ;&| @x.svg";
  const auto r = test::run_shell("cd " + launcher::shell_quote(dir.path().string()) + " && '" + SPOTDNN_CLI_PATH +
                                 "' frontier --workload workload.json --catalog catalog.json --target-loss 0.8 "
                                 "--deadlines 2000:4000 --plot " + launcher::shell_quote(plot));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string svg = test::xml_unescape(test::read_text(dir / plot));
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find(test::kHostileTypeName + "=2") != std::string::npos);
  CHECK(test::pwned_files(dir.path()).empty());
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  CHECK(files == std::vector<std::string>{"catalog.json", plot, "workload.json"});
}
