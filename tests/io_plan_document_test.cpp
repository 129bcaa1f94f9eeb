// SPDX-License-Identifier: MIT
// Plan documents: what `spotdnn plan`, `frontier` and `replan` write with --format json reads back as
// what to launch, and everything else is refused with one line naming the key path.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/launcher/launch_plan_json.hpp>
#include <spotdnn/planner.hpp>

#include "support/error_of.hpp"
#include "support/run_command.hpp"

using namespace spotdnn;
using io::Json;
using launcher::LaunchPlan;
using launcher::WorkerGroup;
using spotdnn::test::error_of;
using spotdnn::test::run_cli;
using spotdnn::test::write_temp_file;

namespace {

const PerformanceModel& preset_model() {
  static const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  return model;
}

/// The JSON a CLI command prints (it must succeed with `exit_code`).
Json cli_json(const std::string& arguments, int exit_code = 0) {
  const auto r = run_cli(arguments);
  CAPTURE(arguments);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == exit_code);
  return Json::parse(r.out);
}

/// The message the reader refuses `document` with.
std::string refusal(const Json& document) {
  return error_of([&] { (void)launcher::launch_plan_from_json(document); });
}

/// The preset plan's document (p3.2xlarge=2, g3.8xlarge=4 at deadline 2400).
Json preset_plan_document() {
  return io::plan_document(plan_exact(preset_model(), {0.8, 2400}), preset_model());
}

std::vector<std::string> keys_of(const Json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

bool contains(const std::vector<std::string>& keys, const std::string& key) {
  for (const std::string& k : keys) {
    if (k == key) return true;
  }
  return false;
}

constexpr const char* kNoKind =
    "launch_plan_from_json: plan.kind = missing: not a spotdnn plan document (no kind): write one with `spotdnn plan "
    "--format json`";

}  // namespace

TEST_CASE("spotdnn plan --format json writes a plan document that is enough to launch") {
  const Json j = cli_json("plan --target-loss 0.8 --deadline 2400 --format json");
  const std::vector<std::string> keys = keys_of(j);
  REQUIRE(keys.size() > 2);
  CHECK(keys[0] == "kind");
  CHECK(keys[1] == "schema_version");
  CHECK(j.at("kind") == "spotdnn.plan");
  CHECK(j.at("schema_version") == 2);
  // Every key the plan output always had is still there.
  for (const char* key : {"status", "message", "algorithm", "objective", "target_loss", "deadline_s", "budget_usd", "ps_charged",
                          "reason", "cluster", "workers", "training_time_s", "cost_usd", "worker_cost_usd", "ps_cost_usd",
                          "per_type", "deadline_slack_s", "loss_asymptote", "fastest", "cheapest", "search"}) {
    CHECK_MESSAGE(contains(keys, key), key);
  }
  CHECK(j.at("region") == "us-east-1");
  CHECK(j.at("workload_name") == "resnet110-cifar100");
  CHECK(j.at("markets") == Json{{"g3.8xlarge", "spot"}, {"p3.2xlarge", "spot"}});
  CHECK(j.at("gpus") == Json{{"g3.8xlarge", 2}, {"p3.2xlarge", 1}});
  CHECK(j.at("parameter_server") == Json{{"type", "m5.xlarge"}, {"market", "on-demand"}});

  const LaunchPlan plan = launcher::read_launch_plan_file(write_temp_file("plan_document_preset.json", j.dump(2)));
  CHECK(plan.kind == "spotdnn.plan");
  CHECK_FALSE(plan.is_join());
  CHECK(plan.region == "us-east-1");
  CHECK(plan.workload_name == "resnet110-cifar100");
  CHECK(plan.target_loss == 0.8);
  CHECK(plan.deadline_s == 2400);
  CHECK(plan.parameter_server_type == "m5.xlarge");
  CHECK(plan.survivors.empty());
  // One group per cluster type, in the cluster's order (type-name order as the planner writes it).
  const std::vector<WorkerGroup> expected{{"g3.8xlarge", 4, 2, Market::spot}, {"p3.2xlarge", 2, 1, Market::spot}};
  CHECK(plan.workers == expected);
  CHECK(plan.worker_count() == 6);
}

TEST_CASE("a plan priced on-demand says so in its markets, and the launcher reads it") {
  const Json j = cli_json("plan --target-loss 0.8 --deadline 2400 --on-demand p3.2xlarge --format json");
  CHECK(j.at("markets") == Json{{"g3.8xlarge", "spot"}, {"p3.2xlarge", "on-demand"}});
  const LaunchPlan plan = launcher::launch_plan_from_json(j);
  for (const WorkerGroup& g : plan.workers) {
    CHECK_MESSAGE(g.market == (g.type == "p3.2xlarge" ? Market::on_demand : Market::spot), g.type);
  }

  // The same through the library: the plan options' market override is the market written.
  PlanOptions options;
  options.markets["g3.8xlarge"] = Market::on_demand;
  const PlanResult r = plan_exact(preset_model(), {0.8, 2400}, options);
  REQUIRE(r.has_plan());
  const Json d = io::plan_document(r, preset_model());
  for (const auto& [type, count] : r.cluster.counts()) {
    CHECK(d.at("markets").at(type) == (type == "g3.8xlarge" ? "on-demand" : "spot"));
    CHECK(d.at("gpus").at(type) == preset_model().catalog().at(type).gpus);
  }
}

TEST_CASE("spotdnn plan --confidence writes a plan document with the SLO's deadline") {
  const Json j = cli_json("plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1 --max-scenarios 2000 "
                          "--seed 7 --format json");
  CHECK(keys_of(j)[0] == "kind");
  CHECK(j.at("kind") == "spotdnn.plan");
  CHECK(j.at("status") == "feasible");
  for (const char* key : {"confidence", "max_scenarios", "prediction", "simulation", "deterministic", "candidates", "simulated"}) {
    CHECK_MESSAGE(j.contains(key), key);
  }
  CHECK(j.at("deadline_s") == 2600.0);
  CHECK(j.at("target_loss") == 0.8);
  const LaunchPlan plan = launcher::launch_plan_from_json(j);
  CHECK(plan.deadline_s == 2600);
  CHECK(plan.target_loss == 0.8);
  CHECK(plan.region == "us-east-1");
  Cluster launched;
  for (const WorkerGroup& g : plan.workers) {
    launched.set(g.type, g.count);
    CHECK(g.gpus == preset_model().catalog().at(g.type).gpus);
  }
  CHECK(launched == io::cluster_from_json(j.at("cluster")));
  CHECK(j.at("cluster") == j.at("prediction").at("cluster"));
}

TEST_CASE("every step of spotdnn frontier --format json is a plan document for its deadline") {
  const Json j = cli_json("frontier --target-loss 0.8 --deadlines 2000:4000 --format json");
  CHECK(keys_of(j)[0] == "kind");
  CHECK(keys_of(j)[1] == "schema_version");
  CHECK(j.at("kind") == "spotdnn.frontier");
  CHECK(j.at("schema_version") == 2);
  for (const char* key : {"status", "message", "target_loss", "min_deadline_s", "max_deadline_s", "steps", "samples"}) {
    CHECK_MESSAGE(j.contains(key), key);
  }
  REQUIRE(j.at("steps").size() >= 2);
  int number = 0;
  for (const Json& step : j.at("steps")) {
    for (const char* key : {"step", "from_deadline_s", "to_deadline_s", "cluster", "training_time_s", "cost_usd", "plan"}) {
      CHECK_MESSAGE(step.contains(key), key);
    }
    CHECK(step.at("step") == ++number);  // numbered from 1 by increasing deadline
    CHECK(keys_of(step)[0] == "step");
    const Json& document = step.at("plan");
    CHECK(keys_of(document)[0] == "kind");
    CHECK(document.at("deadline_s") == step.at("to_deadline_s"));
    const LaunchPlan plan = launcher::launch_plan_from_json(document);
    CHECK(plan.deadline_s == step.at("to_deadline_s").get<double>());
    CHECK(plan.deadline_s >= step.at("training_time_s").get<double>());
    CHECK(plan.target_loss == 0.8);
    Json launched = Json::object();
    for (const WorkerGroup& g : plan.workers) launched[g.type] = g.count;
    CHECK(launched == step.at("cluster"));
  }
}

namespace {

/// The frontier document of the preset at loss 0.8 over 2000..4000 s (three steps or more).
Json preset_frontier_document() {
  FrontierOptions options;
  options.min_deadline_s = 2000;
  options.max_deadline_s = 4000;
  return io::frontier_document(cost_deadline_frontier(preset_model(), 0.8, options), preset_model());
}

/// The message launch_plan_from_document refuses `document` (with `step`) with.
std::string step_refusal(const Json& document, std::optional<std::int64_t> step) {
  return error_of([&] { (void)launcher::launch_plan_from_document(document, step); });
}

}  // namespace

TEST_CASE("launch_plan_from_document reads step N of a frontier document as the plan document of that step") {
  const Json frontier = preset_frontier_document();
  const std::size_t steps = frontier.at("steps").size();
  REQUIRE(steps >= 2);
  for (std::size_t n = 1; n <= steps; ++n) {
    CAPTURE(n);
    const LaunchPlan plan = launcher::launch_plan_from_document(frontier, std::int64_t(n));
    CHECK(plan == launcher::launch_plan_from_json(frontier.at("steps").at(n - 1).at("plan")));
    CHECK(plan.deadline_s == frontier.at("steps").at(n - 1).at("to_deadline_s").get<double>());
  }
  // A frontier written before frontier documents had a kind (no kind, no schema_version) reads the same.
  Json kindless = frontier;
  kindless.erase("kind");
  kindless.erase("schema_version");
  CHECK(launcher::launch_plan_from_document(kindless, 2) == launcher::launch_plan_from_document(frontier, 2));
  // Plan and replan documents read as launch_plan_from_json reads them.
  CHECK(launcher::launch_plan_from_document(preset_plan_document(), std::nullopt) ==
        launcher::launch_plan_from_json(preset_plan_document()));
}

TEST_CASE("launch_plan_from_document refuses a frontier without a step or with a step out of range, naming the range") {
  const Json frontier = preset_frontier_document();
  const std::string count = std::to_string(frontier.at("steps").size());
  CHECK(step_refusal(frontier, std::nullopt) ==
        "launch_plan_from_document: plan.steps = " + count + " steps: a frontier document holds one plan per step: pick the one to "
        "launch with --step N, N from 1 to " + count + " as the frontier table numbers them");
  for (const std::int64_t bad : {std::int64_t(0), std::int64_t(-1), std::int64_t(frontier.at("steps").size() + 1), INT64_MAX}) {
    CAPTURE(bad);
    CHECK(step_refusal(frontier, bad) ==
          "launch_plan_from_document: step = " + std::to_string(bad) + ": the frontier has steps 1 to " + count);
  }
  // A step given with a plan document; a frontier without steps; a confidence frontier.
  CHECK(step_refusal(preset_plan_document(), 1) ==
        "launch_plan_from_document: step = 1: only a frontier document (spotdnn frontier --format json) has steps; launch this "
        "document without --step");
  FrontierOptions options;
  options.min_deadline_s = 600;
  options.max_deadline_s = 700;  // faster than any cluster trains
  const Json empty = io::frontier_document(cost_deadline_frontier(preset_model(), 0.8, options), preset_model());
  REQUIRE(empty.at("steps").empty());
  CHECK(step_refusal(empty, 1).find("launch_plan_from_document: step = 1: the frontier has no steps, so nothing to launch (the "
                                    "document says: ") == 0);
  Json confidence = Json::object();
  confidence["kind"] = "spotdnn.confidence_frontier";
  CHECK(step_refusal(confidence, 1).find("a confidence frontier's samples are not plan documents") != std::string::npos);
  // A frontier document of another schema_version; a step whose plan was removed.
  Json newer = frontier;
  newer["schema_version"] = 3;
  CHECK(step_refusal(newer, 1).find("plan.schema_version = 3: this spotdnn reads frontier documents of schema_version 2") !=
        std::string::npos);
  Json planless = frontier;
  planless["steps"][0].erase("plan");
  CHECK(step_refusal(planless, 1) ==
        "launch_plan_from_document: plan.steps[0].plan = missing: every frontier step carries its plan document: write the "
        "frontier again with this spotdnn");
  // The step's own plan document is checked as any plan document, at its key path.
  Json broken = frontier;
  broken["steps"][1]["plan"]["schema_version"] = 1;
  CHECK(step_refusal(broken, 2).find("launch_plan_from_document: plan.steps[1].plan.schema_version = 1: this spotdnn reads "
                                     "schema_version 2") == 0);
}

TEST_CASE("spotdnn replan --format json writes a replan document: the launcher adds the additions only") {
  const std::string state = write_temp_file(
      "plan_document_state.json",
      R"({"survivors": {"p3.2xlarge": 2}, "elapsed_s": 1276.5, "deadline_s": 2600, "target_loss": 0.8, "loss_reached": 1.0676})");
  const Json j = cli_json("replan --state '" + state + "' --format json");
  CHECK(keys_of(j)[0] == "kind");
  CHECK(keys_of(j)[1] == "schema_version");
  CHECK(j.at("kind") == "spotdnn.replan");
  for (const char* key : {"status", "message", "loss_reached", "remaining_time_s", "survivors", "additions", "cluster",
                          "finish_time_s", "completion_time_s", "cost_usd", "worker_cost_usd", "ps_cost_usd",
                          "fastest_finish_time_s", "fastest_additions"}) {
    CHECK_MESSAGE(j.contains(key), key);
  }
  CHECK(j.at("deadline_s") == 2600.0);
  CHECK(j.at("target_loss") == 0.8);
  // markets and gpus for survivors and additions alike.
  for (const Json* counts : {&j.at("survivors"), &j.at("additions")}) {
    for (auto it = counts->begin(); it != counts->end(); ++it) {
      CHECK(j.at("markets").at(it.key()) == "spot");
      CHECK(j.at("gpus").at(it.key()) == preset_model().catalog().at(it.key()).gpus);
    }
  }
  const LaunchPlan plan = launcher::launch_plan_from_json(j);
  CHECK(plan.is_join());
  CHECK(plan.survivors == Cluster{{"p3.2xlarge", 2}});
  CHECK(plan.deadline_s == 2600);
  REQUIRE_FALSE(plan.workers.empty());
  Json added = Json::object();
  for (const WorkerGroup& g : plan.workers) added[g.type] = g.count;
  CHECK(added == j.at("additions"));

  // Survivors that finish alone: nothing to add, so nothing to launch.
  const std::string idle = write_temp_file(
      "plan_document_idle_state.json",
      R"({"survivors": {"p3.2xlarge": 2, "g3.8xlarge": 4}, "elapsed_s": 100, "deadline_s": 100000, "target_loss": 0.8, "loss_reached": 1.5})");
  const Json nothing = cli_json("replan --state '" + idle + "' --format json");
  CHECK(nothing.at("status") == "optimal");
  CHECK(nothing.at("additions") == Json::object());
  CHECK(nothing.at("kind") == "spotdnn.replan");
  CHECK(refusal(nothing) ==
        "launch_plan_from_json: plan.additions = {}: the replan adds no instances: there is nothing to launch");
}

TEST_CASE("infeasible results are documents too, refused by their status with their message") {
  const Json plan = cli_json("plan --target-loss 0.8 --deadline 600 --format json", 3);
  CHECK(plan.at("kind") == "spotdnn.plan");
  CHECK(plan.at("schema_version") == 2);
  CHECK(plan.at("region") == "us-east-1");
  CHECK(plan.at("workload_name") == "resnet110-cifar100");
  CHECK(plan.at("markets") == Json::object());
  CHECK(refusal(plan) == "launch_plan_from_json: plan.status = \"infeasible\": only an optimal or feasible plan can be "
                         "launched (the document says: " +
                             plan.at("message").get<std::string>() +
                             "); plan again with a later deadline, a higher target loss or larger quotas");

  // A long message or kind is shortened in the one line.
  Json chatty = preset_plan_document();
  chatty["status"] = "infeasible";
  chatty["message"] = std::string(100000, 'x') + "\xC3\xA9";
  const std::string shortened = refusal(chatty);
  CHECK(shortened.size() < 600);
  CHECK(shortened.find("(the document says: xxx") != std::string::npos);
  CHECK(shortened.find("x...); plan again") != std::string::npos);
  chatty = preset_plan_document();
  chatty["kind"] = std::string(100000, 'k');
  CHECK(refusal(chatty).size() < 400);

  const std::string state = write_temp_file(
      "plan_document_late_state.json",
      R"({"survivors": {"p3.2xlarge": 2}, "elapsed_s": 1276.5, "deadline_s": 2600, "target_loss": 0.8, "loss_reached": 1.0676, "join_delay_s": 1200})");
  const Json replan = cli_json("replan --state '" + state + "' --format json", 3);
  CHECK(replan.at("kind") == "spotdnn.replan");
  CHECK(replan.at("parameter_server").at("type") == "m5.xlarge");
  CHECK(refusal(replan).find("plan.status = \"infeasible\": only an optimal or feasible plan can be launched (the document says: "
                             "no set of additions meets the deadline") != std::string::npos);
}

TEST_CASE("anything that is not a plan document is refused: predict output, a hand-made plan, other kinds") {
  const Json predicted = cli_json("predict --cluster p3.2xlarge=2,g3.8xlarge=4 --target-loss 0.8 --format json");
  CHECK(refusal(predicted) == kNoKind);
  CHECK(refusal(Json::parse(R"({"status": "optimal", "cluster": {"p3.2xlarge": 2}})")) == kNoKind);
  CHECK(refusal(Json::parse("[1, 2, 3]")) ==
        "launch_plan_from_json: plan = [1,2,3]: not a spotdnn plan document (no kind): write one with `spotdnn plan --format json`");
  CHECK(refusal(Json("spotdnn.plan")).find("plan = \"spotdnn.plan\": not a spotdnn plan document (no kind)") != std::string::npos);

  Json other = preset_plan_document();
  other["kind"] = "spotdnn.prediction";
  CHECK(refusal(other) == "launch_plan_from_json: plan.kind = \"spotdnn.prediction\": not a document spotdnn launches: expected "
                          "\"spotdnn.plan\" (write one with `spotdnn plan --format json`) or \"spotdnn.replan\" (spotdnn replan "
                          "--format json)");
  other["kind"] = 1;
  CHECK(refusal(other) == "launch_plan_from_json: plan.kind = 1: expected a string");

  // The file reader names the file.
  const std::string path = write_temp_file("plan_document_predicted.json", predicted.dump());
  CHECK(error_of([&] { (void)launcher::read_launch_plan_file(path); }) ==
        "read_launch_plan_file(" + path + "): plan.kind = missing: not a spotdnn plan document (no kind): write one with "
        "`spotdnn plan --format json`");
}

TEST_CASE("a schema_version other than 2 is refused") {
  Json d = preset_plan_document();
  d["schema_version"] = 1;
  CHECK(refusal(d) == "launch_plan_from_json: plan.schema_version = 1: this spotdnn reads schema_version 2: write the document "
                      "again with this spotdnn");
  d["schema_version"] = 3;
  CHECK(refusal(d) == "launch_plan_from_json: plan.schema_version = 3: this spotdnn reads schema_version 2: the document was "
                      "written by a newer spotdnn; launch it with that version");
  CHECK(refusal(io::parse_json(d.dump(), "text")).find("plan.schema_version = 3: this spotdnn reads schema_version 2: the "
                                                       "document was written by a newer spotdnn") != std::string::npos);
  d["schema_version"] = "2";
  CHECK(refusal(d) == "launch_plan_from_json: plan.schema_version = \"2\": expected the whole number 2: this spotdnn reads "
                      "schema_version 2; write the document again with this spotdnn");
  d["schema_version"] = 2.0;
  CHECK(refusal(d).find("plan.schema_version = 2.0: expected the whole number 2") != std::string::npos);
  d["schema_version"] = -1;
  CHECK(refusal(d).find("plan.schema_version = -1: this spotdnn reads schema_version 2: write the document again") != std::string::npos);
  d.erase("schema_version");
  CHECK(refusal(d) == "launch_plan_from_json: plan.schema_version = missing: this spotdnn reads schema_version 2: write the "
                      "document again with this spotdnn");
}

TEST_CASE("every launched type needs its market and GPUs, and the parameter server is on-demand") {
  Json d = preset_plan_document();
  d["markets"].erase("g3.8xlarge");
  CHECK(refusal(d) == "launch_plan_from_json: plan.markets[\"g3.8xlarge\"] = missing: every cluster type needs its market "
                      "(\"spot\" or \"on-demand\"): write the document with `spotdnn plan --format json`");
  d = preset_plan_document();
  d["gpus"].erase("p3.2xlarge");
  CHECK(refusal(d) == "launch_plan_from_json: plan.gpus[\"p3.2xlarge\"] = missing: every cluster type needs its GPUs per "
                      "instance (a whole number from 1): write the document with `spotdnn plan --format json`");
  d = preset_plan_document();
  d["parameter_server"]["market"] = "spot";
  CHECK(refusal(d) == "launch_plan_from_json: plan.parameter_server.market = \"spot\": the launcher always launches the "
                      "parameter server on-demand (a revoked PS would lose the training): write \"on-demand\"");
  d = preset_plan_document();
  d.erase("markets");
  CHECK(refusal(d) == "launch_plan_from_json: plan.markets = missing: this key is required");
}

TEST_CASE("the keys the reader reads are type-checked strictly, and the others are ignored") {
  struct Case {
    const char* pointer;
    Json value;
    const char* message;
  };
  const std::vector<Case> cases{
      {"/markets/g3.8xlarge", "spot-ish", "plan.markets[\"g3.8xlarge\"] = \"spot-ish\": expected \"spot\" or \"on-demand\""},
      {"/markets/g3.8xlarge", "on_demand", "plan.markets[\"g3.8xlarge\"] = \"on_demand\": expected \"spot\" or \"on-demand\""},
      {"/markets/m9.unused", 3, "plan.markets[\"m9.unused\"] = 3: expected a string"},
      {"/gpus/g3.8xlarge", 0, "plan.gpus[\"g3.8xlarge\"] = 0: must be a whole number from 1 to 1000000000"},
      {"/gpus/g3.8xlarge", 1.5, "plan.gpus[\"g3.8xlarge\"] = 1.5: expected a whole number"},
      {"/cluster/g3.8xlarge", 0, "plan.cluster[\"g3.8xlarge\"] = 0: must be a whole number from 1 to 1000000"},
      {"/cluster/g3.8xlarge", "4", "plan.cluster[\"g3.8xlarge\"] = \"4\": expected a whole number"},
      {"/cluster/g3.8xlarge", 2147483647, "plan.cluster[\"g3.8xlarge\"] = 2147483647: must be a whole number from 1 to 1000000"},
      {"/cluster/G3 8xlarge", 1, "plan.cluster[\"G3 8xlarge\"] = \"G3 8xlarge\": expected an instance type like p3.2xlarge"},
      {"/cluster", Json::array(), "plan.cluster = []: expected a JSON object"},
      {"/cluster", Json::object(), "plan.cluster = {}: the plan has no workers"},
      {"/region", "US East", "plan.region = \"US East\": expected a region like"},
      {"/region", nullptr, "plan.region = null: expected a string"},
      {"/workload_name", 7, "plan.workload_name = 7: expected a string"},
      {"/target_loss", -1, "plan.target_loss = -1: must be greater than zero"},
      {"/deadline_s", "2400", "plan.deadline_s = \"2400\": expected a number"},
      {"/deadline_s", nullptr,
       "plan.deadline_s = null: the plan has no deadline (a --budget plan without --deadline): plan with --deadline to launch it"},
      {"/parameter_server/type", "m5 xlarge", "plan.parameter_server.type = \"m5 xlarge\": expected an instance type like p3.2xlarge"},
      {"/parameter_server", "m5.xlarge", "plan.parameter_server = \"m5.xlarge\": expected a JSON object"},
      {"/status", "optimal-ish", "plan.status = \"optimal-ish\": expected optimal, feasible, infeasible, invalid_input or target_met_at_start"},
  };
  for (const Case& c : cases) {
    Json d = preset_plan_document();
    d[Json::json_pointer(c.pointer)] = c.value;
    const std::string message = refusal(d);
    CAPTURE(c.pointer);
    CHECK_MESSAGE(message.find(c.message) != std::string::npos, message);
    CHECK(message.find('\n') == std::string::npos);
  }
  // Keys the reader does not need may hold anything.
  Json d = preset_plan_document();
  d["cost_usd"] = "not a number";
  d["per_type"] = nullptr;
  d["future_key"] = Json::array({1, 2});
  d["parameter_server"]["price_usd_per_hour"] = 0.192;
  CHECK(launcher::launch_plan_from_json(d) == launcher::launch_plan_from_json(preset_plan_document()));
}

TEST_CASE("launch_plan_document writes what launch_plan_from_json reads back unchanged, in the workers' order") {
  LaunchPlan plan;
  plan.region = "eu-central-1";
  plan.workload_name = "bert \xC3\xA9";
  plan.target_loss = 0.1 + 0.2;
  plan.deadline_s = 1234.5678901234567;
  plan.parameter_server_type = "m5.2xlarge";
  plan.workers = {{"p3.2xlarge", 3, 1, Market::on_demand}, {"g4dn.4xlarge", 2, 1, Market::spot}, {"g3.16xlarge", 1, 4, Market::spot}};
  const Json d = launcher::launch_plan_document(plan);
  CHECK(keys_of(d)[0] == "kind");
  CHECK(keys_of(d.at("cluster")) == std::vector<std::string>{"p3.2xlarge", "g4dn.4xlarge", "g3.16xlarge"});
  CHECK(launcher::launch_plan_from_json(io::parse_json(d.dump(), "written")) == plan);

  LaunchPlan join = plan;
  join.kind = std::string(launcher::kReplanDocumentKind);
  join.survivors = Cluster{{"p3.2xlarge", 1}, {"g3.8xlarge", 2}};
  join.workers.resize(1);
  const Json r = launcher::launch_plan_document(join);
  CHECK(r.at("kind") == "spotdnn.replan");
  CHECK_FALSE(r.contains("cluster"));
  const LaunchPlan back = launcher::launch_plan_from_json(io::parse_json(r.dump(), "written"));
  CHECK(back == join);
  CHECK(back.is_join());

  // A replan needs markets and GPUs for its additions only, not for its survivors.
  Json survivors_unpriced = r;
  survivors_unpriced["markets"] = {{"p3.2xlarge", "on-demand"}};
  survivors_unpriced["gpus"] = {{"p3.2xlarge", 1}};
  CHECK(launcher::launch_plan_from_json(survivors_unpriced) == join);
  survivors_unpriced["additions"] = {{"g3.8xlarge", 1}};
  CHECK(refusal(survivors_unpriced) ==
        "launch_plan_from_json: plan.markets[\"g3.8xlarge\"] = missing: every added type needs its market (\"spot\" or "
        "\"on-demand\"): write the document with `spotdnn replan --format json`");
  Json bad_survivor = r;
  bad_survivor["survivors"] = {{"p3.2xlarge", -1}};
  CHECK(refusal(bad_survivor).find("plan.survivors[\"p3.2xlarge\"] = -1: must be a whole number from 1") != std::string::npos);
  Json no_survivors = r;
  no_survivors.erase("survivors");
  CHECK(refusal(no_survivors) == "launch_plan_from_json: plan.survivors = missing: this key is required");
}

TEST_CASE("a budget-mode plan without a deadline has no deadline to launch with") {
  PlanOptions options;
  options.budget_usd = 10;
  const PlanResult r = plan_exact(preset_model(), {0.8}, options);
  REQUIRE(r.has_plan());
  const Json d = io::plan_document(r, preset_model());
  CHECK(d.at("deadline_s").is_null());
  CHECK(refusal(d) == "launch_plan_from_json: plan.deadline_s = null: the plan has no deadline (a --budget plan without "
                      "--deadline): plan with --deadline to launch it");
}
