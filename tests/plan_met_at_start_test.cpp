// SPDX-License-Identifier: MIT
// A target the loss model meets before training starts: the target_met_at_start status in the plan and
// frontier JSON, and the exit code and the one line of every `spotdnn` command that meets it.
#include <doctest/doctest.h>

#include <string>

#include <spotdnn/io/plan_json.hpp>
#include <spotdnn/planner.hpp>

#include "support/run_command.hpp"

using namespace spotdnn;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

}  // namespace

TEST_CASE("a plan whose target the loss model meets before training is written with status target_met_at_start") {
  const PlanResult r = plan_exact(preset_model(), {1.6, 3600});
  const io::Json j = io::to_json(r);
  CHECK(j.at("status") == "target_met_at_start");
  CHECK(j.at("message") == r.message);
  CHECK(j.at("cluster") == io::Json::object());
  CHECK(j.at("cost_usd").is_null());
  CHECK(j.at("fastest").at("status") == "target_met_at_start");
  const Frontier f = cost_deadline_frontier(preset_model(), 1.6);
  CHECK(io::to_json(f).at("status") == "target_met_at_start");
}

TEST_CASE("spotdnn plan, frontier and predict exit 3 with one line saying the target is met before training starts") {
  const std::string why = "the target loss 1.6 is met before training starts: the loss model gives ";
  for (const char* args : {"plan --target-loss 1.6 --deadline 1h", "plan --target-loss 1.6 --deadline 3600 --algorithm sliding-window",
                           "plan --target-loss 1.6 --deadline 3600 --algorithm brute-force", "plan --target-loss 1.6 --budget 5",
                           "frontier --target-loss 1.6 --deadlines 600:7200"}) {
    const auto table = test::run_cli(args);
    CHECK_MESSAGE(table.exit_code == 3, args);
    CHECK_MESSAGE(table.err.empty(), args);
    const std::size_t at = table.out.find(why);
    REQUIRE_MESSAGE(at != std::string::npos, args);
    CHECK(table.out.find(why, at + 1) == std::string::npos);  // said once
    CHECK(table.out.find("p2.8xlarge=1, a cluster within the quotas; nothing to train\n") != std::string::npos);
    CHECK_MESSAGE(table.out.find("(none)") == std::string::npos, args);  // no reason to show beside the status
  }
  const auto json = test::run_cli("plan --target-loss 1.6 --deadline 1h --format json");
  CHECK(json.exit_code == 3);
  CHECK(json.err.empty());
  CHECK(io::Json::parse(json.out).at("status") == "target_met_at_start");
  // predict: a valid question with no training to answer it, so exit 3 like an infeasible plan, with the message.
  const auto predicted = test::run_cli("predict --cluster p2.8xlarge=1 --target-loss 1.6");
  CHECK(predicted.exit_code == 3);
  CHECK(predicted.err.empty());
  CHECK((predicted.out + predicted.err).find(why) != std::string::npos);
  CHECK((predicted.out + predicted.err).find(" at iteration 0 for this cluster; nothing to train") != std::string::npos);
}
