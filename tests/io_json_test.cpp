// SPDX-License-Identifier: MIT
// Strict JSON readers and writers (docs/formats.md): lossless round trips and errors that name the key path.
#include <doctest/doctest.h>

#include <string>

#include <spotdnn/io/json.hpp>
#include <spotdnn/planner.hpp>

#include "support/run_command.hpp"

using namespace spotdnn;
using io::Json;

namespace {
std::string workload_error(const Json& j) {
  try {
    (void)io::workload_from_json(j);
  } catch (const spotdnn::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}
std::string catalog_error(const Json& j) {
  try {
    (void)io::catalog_from_json(j);
  } catch (const spotdnn::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("the preset workload and catalog round-trip through JSON without loss") {
  const Workload w = presets::resnet110_workload();
  const Json wj = io::to_json(w);
  const Workload w2 = io::workload_from_json(Json::parse(wj.dump()));
  CHECK(io::to_json(w2) == wj);
  for (const auto& [type, profile] : w.profiles) {
    CHECK(*w2.profiles.at(type).iteration_time_s == *profile.iteration_time_s);  // bit-exact
  }
  const Catalog c = presets::resnet110_catalog();
  const Json cj = io::to_json(c);
  const Catalog c2 = io::catalog_from_json(Json::parse(cj.dump()));
  CHECK(io::to_json(c2) == cj);
  CHECK(c2.instance_types.at(1).price_usd_per_hour == 0.3612);
  CHECK(c2.instance_types.at(4).on_demand_price_usd_per_hour == 7.2);

  const PerformanceModel a(w, c), b(w2, c2);
  CHECK(predict(a, {{"p3.2xlarge", 2}, {"g3.8xlarge", 4}}, 0.8).cost_usd ==
        predict(b, {{"p3.2xlarge", 2}, {"g3.8xlarge", 4}}, 0.8).cost_usd);
}

TEST_CASE("files written and read back give the same model") {
  const std::string wpath = test::write_temp_file("roundtrip_workload.json", io::to_json(presets::resnet110_workload()).dump(2));
  const std::string cpath = test::write_temp_file("roundtrip_catalog.json", io::to_json(presets::resnet110_catalog()).dump(2));
  CHECK(io::to_json(io::read_workload_file(wpath)) == io::to_json(presets::resnet110_workload()));
  CHECK(io::to_json(io::read_catalog_file(cpath)) == io::to_json(presets::resnet110_catalog()));
}

TEST_CASE("workload JSON errors name the key path and the value") {
  const Json good = io::to_json(presets::resnet110_workload());
  Json j = good;
  j["param_bytes"] = -5;
  CHECK(contains(workload_error(j), "workload.param_bytes = -5: must be greater than zero"));
  j = good;
  j["param_bytes"] = "11.5 MB";
  CHECK(contains(workload_error(j), "workload.param_bytes = \"11.5 MB\": expected a number"));
  j = good;
  j.erase("required_bandwidth_bytes_per_s");
  CHECK(contains(workload_error(j), "workload.required_bandwidth_bytes_per_s = missing"));
  j = good;
  j["learning_rate"] = 0.1;
  CHECK(contains(workload_error(j), "workload.learning_rate = 0.1: unknown key"));
  j = good;
  j["contention"]["gamma"] = 1;
  CHECK(contains(workload_error(j), "workload.contention.gamma = 1: unknown key"));
  j = good;
  j["loss_model"]["form"] = "exp";
  CHECK(contains(workload_error(j), "workload.loss_model.form = \"exp\""));
  j = good;
  j["loss_model"]["gamma"] = Json::array({1, 2, 3});
  CHECK(contains(workload_error(j), "workload.loss_model.gamma = [1,2,3]: the seed form needs an array of exactly 4"));
  j = good;
  j["loss_model"]["gamma"][2] = nullptr;
  CHECK(contains(workload_error(j), "workload.loss_model.gamma[2] = null: expected a number"));
  j = good;
  j["profiles"]["p3.2xlarge"]["batch_per_gpu"] = 10.5;
  CHECK(contains(workload_error(j), "workload.profiles[\"p3.2xlarge\"].batch_per_gpu = 10.5: expected a whole number"));
  j = good;
  j["profiles"]["p3.2xlarge"].erase("iteration_time_s");
  CHECK(contains(workload_error(j), "workload.profiles[\"p3.2xlarge\"]"));
  CHECK(contains(workload_error(j), "exactly one of iteration_time_s and compute_time_s"));
  j = good;
  j["profiles"]["g3.8xlarge"]["iteration_time_s"] = 0;
  CHECK(contains(workload_error(j), "workload.profiles[\"g3.8xlarge\"].iteration_time_s = 0"));
  CHECK(contains(workload_error(Json::array()), "workload = []: expected a JSON object"));
}

TEST_CASE("catalog JSON errors name the key path and the value") {
  const Json good = io::to_json(presets::resnet110_catalog());
  Json j = good;
  j["instance_types"][2]["quota"] = -1;
  CHECK(contains(catalog_error(j), "catalog.instance_types[2].quota = -1"));
  j = good;
  j["instance_types"][0]["market"] = "reserved";
  CHECK(contains(catalog_error(j), "catalog.instance_types[0].market = \"reserved\""));
  j = good;
  j["instance_types"][1]["gpu"] = 1;
  CHECK(contains(catalog_error(j), "catalog.instance_types[1].gpu = 1: unknown key"));
  j = good;
  j["parameter_server"]["bandwidth_bytes_per_s"] = 0;
  CHECK(contains(catalog_error(j), "catalog.parameter_server.bandwidth_bytes_per_s = 0"));
  j = good;
  j["instance_types"] = Json::object();
  CHECK(contains(catalog_error(j), "catalog.instance_types = {}: expected an array"));
  j = good;
  j["instance_types"][3]["name"] = "p3.2xlarge";
  CHECK(contains(catalog_error(j), "catalog_from_json: catalog.instance_types[3].name = \"p3.2xlarge\": listed twice"));
  j = good;
  j["instance_types"][0]["revocation_hazard_per_hour"] = 0.002;
  j["instance_types"][0]["interruption_band"] = "5-10%";
  const Catalog with_revocation = io::catalog_from_json(j);
  CHECK(*with_revocation.instance_types[0].revocation_hazard_per_hour == 0.002);
  CHECK(*with_revocation.instance_types[0].interruption_band == "5-10%");
  // Compared as unordered objects: the writer's key order is its own.
  CHECK(nlohmann::json::parse(io::to_json(with_revocation).dump()) == nlohmann::json::parse(j.dump()));
}

TEST_CASE("malformed JSON text names the file and the position") {
  const std::string path = test::write_temp_file("malformed.json", "{\"name\": \"x\",\n \"param_bytes\": }");
  try {
    (void)io::read_workload_file(path);
    FAIL("malformed JSON was accepted");
  } catch (const spotdnn::invalid_argument& e) {
    CHECK(contains(e.what(), "malformed.json = byte"));
    CHECK(contains(e.what(), "malformed JSON"));
  }
  CHECK_THROWS_AS((void)io::parse_json("{\"a\": 1e999}", "big.json"), spotdnn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)io::read_catalog_file("/nonexistent/catalog.json"),
                       doctest::Contains("cannot open the file"), spotdnn::invalid_argument);
}

TEST_CASE("a prediction is written with every docs/formats.md field, and null for non-finite values") {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const Json j = io::to_json(predict(model, {{"p3.2xlarge", 2}, {"g3.8xlarge", 4}}, 0.8));
  for (const char* key : {"status", "message", "cluster", "workers", "training_time_s", "cost_usd", "worker_cost_usd",
                          "ps_cost_usd", "iterations", "weighted_batch", "samples_per_s", "iterations_per_s",
                          "samples_to_train", "convergence_coefficient", "worker_bandwidth_bytes_per_s",
                          "contention_probability"}) {
    CHECK_MESSAGE(j.contains(key), key);
  }
  CHECK(j.begin().key() == "status");
  CHECK(j["status"] == "feasible");
  CHECK(io::cluster_from_json(j["cluster"]) == Cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}});
  const Json infeasible = io::to_json(predict(model, {{"p3.2xlarge", 1}}, 0.3));
  CHECK(infeasible["status"] == "infeasible");
  CHECK(infeasible["training_time_s"].is_null());
  const Json met = io::to_json(predict(model, {{"p2.8xlarge", 1}}, 1.6));
  CHECK(met["status"] == "target_met_at_start");
  CHECK(met["outcome"] == "met_at_start");
  CHECK(met["iterations"] == 0.0);
}

TEST_CASE("the target_met_at_start status has its own spelling and reads back") {
  CHECK(to_string(Status::target_met_at_start) == "target_met_at_start");
  CHECK(status_from_string("target_met_at_start") == Status::target_met_at_start);
  for (Status s : {Status::optimal, Status::feasible, Status::infeasible, Status::invalid_input, Status::target_met_at_start}) {
    CHECK(status_from_string(to_string(s)) == s);
  }
}
