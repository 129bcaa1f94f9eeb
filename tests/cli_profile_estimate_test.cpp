// SPDX-License-Identifier: MIT
// A catalog with types the workload has no profile for: every command warns naming them, and
// --estimate-profiles-from TYPE fills them by GPU peak throughput (docs/model.md eq. (10)), marked estimated in
// predict's and compare's outputs, usable by plan, replaced by `spotdnn fit throughput`.
#include <doctest/doctest.h>

#include <string>

#include <spotdnn/io/json.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/presets.hpp>

#include "support/run_command.hpp"

using spotdnn::io::Json;
using spotdnn::test::run_cli;
using spotdnn::test::write_temp_file;

namespace {

spotdnn::InstanceType fresh_type(const std::string& name, const std::string& gpu_model, double price_usd_per_hour) {
  spotdnn::InstanceType type;
  type.name = name;
  type.gpus = 1;
  type.price_usd_per_hour = price_usd_per_hour;
  type.quota = 4;
  type.vcpus = 4;
  type.gpu_model = gpu_model;
  return type;
}

/// The preset catalog plus g5.xlarge (A10G, cheap) and g6.xlarge (L4), which the preset workload does not profile.
spotdnn::Catalog fresh_catalog() {
  spotdnn::Catalog catalog = spotdnn::presets::resnet110_catalog();
  catalog.instance_types.push_back(fresh_type("g5.xlarge", "A10G", 0.30));
  catalog.instance_types.push_back(fresh_type("g6.xlarge", "L4", 0.35));
  return catalog;
}

std::string fresh_catalog_file() {
  return write_temp_file("cli_profile_estimate_catalog.json", spotdnn::io::to_json(fresh_catalog()).dump());
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

}  // namespace

TEST_CASE("a catalog with unprofiled types makes predict warn once naming them and how to get a profile") {
  const auto r = run_cli("predict --cluster p3.2xlarge=2 --target-loss 0.8 --catalog " + quoted(fresh_catalog_file()));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("spotdnn predict: warning: no profile for g5.xlarge, g6.xlarge in workload resnet110-cifar100: not planned;") == 0);
  CHECK(r.err.find("spotdnn fit throughput") != std::string::npos);
  CHECK(r.err.find("--estimate-profiles-from TYPE for a GPU-peak estimate") != std::string::npos);
  // The preset alone has a profile for every type: no warning.
  CHECK(run_cli("predict --cluster p3.2xlarge=2 --target-loss 0.8").err.empty());
}

TEST_CASE("--estimate-profiles-from makes predict mark estimated types in its warning table and JSON") {
  const std::string catalog = fresh_catalog_file();
  const std::string common = "predict --cluster p3.2xlarge=1,g5.xlarge=2 --target-loss 0.8 --estimate-profiles-from p3.2xlarge --catalog " +
                             quoted(catalog);
  const auto table = run_cli(common);
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.err_lines() == 1);
  CHECK(table.err.find("warning: estimated profiles (GPU peak, not measured): g5.xlarge from p3.2xlarge, g6.xlarge from p3.2xlarge") !=
        std::string::npos);
  CHECK(table.out.find("estimated: g5.xlarge from p3.2xlarge (GPU peak), not measured") != std::string::npos);
  CHECK(table.out.find("estimated: g6.xlarge") == std::string::npos);  // not in the cluster

  const auto json = run_cli(common + " --format json");
  REQUIRE(json.exit_code == 0);
  const Json per_type = Json::parse(json.out).at("per_type");
  REQUIRE(per_type.size() == 2);
  CHECK(per_type[0].at("type") == "p3.2xlarge");
  CHECK(per_type[0].at("profile_estimated_from").is_null());
  CHECK(per_type[1].at("type") == "g5.xlarge");
  CHECK(per_type[1].at("profile_estimated_from") == "p3.2xlarge");
  // 3 workers, uncontended: T = T_comp,p3·15.7/31.2 + 2·S/B_req + 2·S/B_pcie (docs/model.md eqs. (3), (10)).
  const double transfers_s = 23.0 / 142.0 + 0.0023;
  CHECK(per_type[1].at("iteration_time_s").get<double>() ==
        doctest::Approx((1024.0 / 1885.0 - transfers_s) * 15.7 / 31.2 + transfers_s).epsilon(1e-9));
}

TEST_CASE("--estimate-profiles-from lets plan choose an estimated type and its plan JSON carries it") {
  const std::string catalog = fresh_catalog_file();
  const auto without = run_cli("plan --target-loss 0.8 --deadline 3h --format json --catalog " + quoted(catalog));
  REQUIRE(without.exit_code == 0);
  CHECK(Json::parse(without.out).at("cluster").dump().find("g5.xlarge") == std::string::npos);

  const auto with = run_cli("plan --target-loss 0.8 --deadline 3h --format json --estimate-profiles-from p3.2xlarge --catalog " +
                            quoted(catalog));
  INFO(with.err);
  REQUIRE(with.exit_code == 0);
  const Json plan = Json::parse(with.out);
  CHECK(plan.at("status") == "optimal");
  CHECK(plan.at("cluster").contains("g5.xlarge"));
  CHECK(plan.at("cost_usd").get<double>() < Json::parse(without.out).at("cost_usd").get<double>());
}

TEST_CASE("a bad --estimate-profiles-from TYPE exits 2 with one line naming it") {
  const std::string catalog = fresh_catalog_file();
  struct Case {
    std::string type;
    std::string expected;
  };
  for (const Case& c : {Case{"x9.huge", "\"x9.huge\": not in the catalog"}, Case{"g5.xlarge", "\"g5.xlarge\": workload"},
                        Case{"''", "give a profiled instance type"}}) {
    const auto r = run_cli("predict --cluster p3.2xlarge=1 --target-loss 0.8 --estimate-profiles-from " + c.type + " --catalog " +
                           quoted(catalog));
    INFO(c.type, " ", r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(c.expected) != std::string::npos);
  }
  // A catalog type whose GPU spotdnn does not know: the others are estimated and planned, that one is not,
  // and a warning names it and its GPU.
  spotdnn::Catalog amd = fresh_catalog();
  amd.instance_types.push_back(fresh_type("g4ad.xlarge", "Radeon Pro V520", 0.2));
  const std::string amd_path = write_temp_file("cli_profile_estimate_amd.json", spotdnn::io::to_json(amd).dump());
  const auto r = run_cli("plan --target-loss 0.8 --deadline 3h --estimate-profiles-from p3.2xlarge --catalog " + quoted(amd_path));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("not estimated by GPU peak, so not planned: g4ad.xlarge: no published peak throughput known for its GPU \"Radeon Pro V520\"") !=
        std::string::npos);
  CHECK(r.out.find("g4ad.xlarge") == std::string::npos);
}

TEST_CASE("spotdnn fit throughput turns an estimated profile into a measured one") {
  // The truth: g5.xlarge profiled at 0.45 s per iteration. The trace is what that truth predicts.
  spotdnn::Workload truth = spotdnn::presets::resnet110_workload();
  truth.profiles["g5.xlarge"] = spotdnn::TypeProfile{1024, 0.45, std::nullopt, ""};
  truth.profiles["g6.xlarge"] = spotdnn::TypeProfile{1024, 0.5, std::nullopt, ""};
  const spotdnn::PerformanceModel model(truth, fresh_catalog());
  std::string csv = "cluster,iterations_per_s\n";
  for (const char* cluster : {"g5.xlarge=1", "g5.xlarge=3", "g5.xlarge=2;p3.2xlarge=1"}) {
    char line[128];
    std::snprintf(line, sizeof line, "\"%s\",%.17g\n", cluster,
                  model.estimate(model.counts_of(spotdnn::Cluster::parse(cluster, ';')), 0.8).iterations_per_s);
    csv += line;
  }
  const std::string trace = write_temp_file("cli_profile_estimate_trace.csv", csv);
  const auto r = run_cli("fit throughput --trace " + quoted(trace) + " --catalog " + quoted(fresh_catalog_file()) +
                         " --estimate-profiles-from p3.2xlarge --free 'iteration_time_s[g5.xlarge]' --workload-only");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("estimated profiles (GPU peak, not measured): g5.xlarge from p3.2xlarge, g6.xlarge from p3.2xlarge") !=
        std::string::npos);
  const spotdnn::Workload fitted = spotdnn::io::workload_from_json(Json::parse(r.out));
  CHECK(fitted.profiles.at("g5.xlarge").estimated_from.empty());
  CHECK(*fitted.profiles.at("g5.xlarge").iteration_time_s == doctest::Approx(0.45).epsilon(1e-6));
  CHECK(fitted.profiles.at("g6.xlarge").estimated_from == "p3.2xlarge");  // not in the trace: still an estimate
  CHECK(fitted.profiles.at("p3.2xlarge").estimated_from.empty());

  // Without a profile or an estimate, fit throughput cannot fit the type: the error says the workload lacks it.
  const auto refused = run_cli("fit throughput --trace " + quoted(trace) + " --catalog " + quoted(fresh_catalog_file()) +
                               " --free 'iteration_time_s[g5.xlarge]' --workload-only");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("no profile for this instance type") != std::string::npos);
}

TEST_CASE("spotdnn compare marks the estimated types of its spot plan in the table and the JSON") {
  const std::string profile = write_temp_file(
      "cli_profile_estimate_serverless.json",
      R"({"kind": "spotdnn.serverless_profile", "name": "reference", "model_size_mb": 44.7, "samples_per_epoch": 50000,
          "a": 60, "b": 8, "m": 200, "k1": 20, "k2": -0.8})");
  const std::string common = "compare --target-loss 0.8 --deadline 3h --serverless-profile " + quoted(profile) +
                             " --estimate-profiles-from p3.2xlarge --catalog " + quoted(fresh_catalog_file());
  const auto table = run_cli(common);
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.err.find("spotdnn compare: warning: estimated profiles (GPU peak, not measured): g5.xlarge from p3.2xlarge") == 0);
  CHECK(table.out.find("estimated: g5.xlarge from p3.2xlarge (GPU peak), not measured") != std::string::npos);

  const auto json = run_cli(common + " --format json");
  REQUIRE(json.exit_code == 0);
  const Json spot = Json::parse(json.out).at("spot");
  CHECK(spot.at("estimated_profiles") == Json{{"g5.xlarge", "p3.2xlarge"}});
  REQUIRE(spot.at("per_type").size() == 1);
  CHECK(spot.at("per_type")[0].at("type") == "g5.xlarge");
  CHECK(spot.at("per_type")[0].at("profile_estimated_from") == "p3.2xlarge");
}
