// SPDX-License-Identifier: MIT
// The catalog's market-data keys (docs/formats.md): vCPUs, per-zone prices, observation time, quota groups
// by code and the sources a catalog lacks; lossless round trip and errors that name the key path.
#include <doctest/doctest.h>

#include <string>

#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

using namespace spotdnn;
using io::Json;

namespace {

Json market_catalog() {
  Json j = io::to_json(presets::resnet110_catalog());
  Json& p3 = j["instance_types"][0];
  p3["vcpus"] = 8;
  p3["memory_mib"] = 62464;
  p3["network_performance"] = "Up to 10 Gigabit";
  p3["gpu_model"] = "V100";
  p3["zone_prices_usd_per_hour"] = {{"us-east-1a", 0.95}, {"us-east-1b", 0.918}};
  p3["price_observed_at"] = "2026-11-24T08:00:00Z";
  p3["quota_groups"] = {{"spot", "L-7212CCBC"}, {"on-demand", "L-417A185B"}};
  j["instance_types"][1]["vcpus"] = 16;
  j["instance_types"][1]["quota_groups"] = {{"spot", "L-3819A6DF"}};
  j["quota_groups"] = {{"L-7212CCBC", {{"name", "All P4, P3 and P2 Spot Instance Requests"}, {"vcpus", 64}, {"market", "spot"}}},
                       {"L-417A185B", {{"name", "Running On-Demand P instances"}, {"vcpus", 0}, {"market", "on-demand"}}}};
  j["missing_sources"] = {"advisor: not given"};
  return j;
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

TEST_CASE("a catalog's market keys are read and written back without loss") {
  const Json j = market_catalog();
  const Catalog c = io::catalog_from_json(j);
  const InstanceType& p3 = c.instance_types[0];
  CHECK(p3.vcpus == 8);
  CHECK(p3.memory_mib == 62464);
  CHECK(p3.gpu_model == "V100");
  CHECK(p3.zone_prices_usd_per_hour.at("us-east-1b") == 0.918);
  CHECK(p3.price_observed_at == "2026-11-24T08:00:00Z");
  CHECK(p3.quota_group_code(Market::spot) == "L-7212CCBC");
  CHECK(p3.quota_group_code(Market::on_demand) == "L-417A185B");
  CHECK(c.instance_types[1].quota_group_code(Market::on_demand).empty());
  REQUIRE(c.quota_group("L-7212CCBC") != nullptr);
  CHECK(c.quota_group("L-7212CCBC")->vcpus == 64);
  CHECK(c.quota_group("L-417A185B")->market == Market::on_demand);
  // Referenced without a value: the group is known by code only (the planner warns and goes without it).
  CHECK(c.quota_group("L-3819A6DF") == nullptr);
  CHECK(c.missing_sources == std::vector<std::string>{"advisor: not given"});
  // Compared as unordered objects: the writer's key order is its own.
  CHECK(nlohmann::json::parse(io::to_json(c).dump()) == nlohmann::json::parse(j.dump()));
}

TEST_CASE("bad market keys are refused naming the key path and the value") {
  const Json good = market_catalog();
  Json j = good;
  j["instance_types"][0]["vcpus"] = -8;
  CHECK(contains(catalog_error(j), "catalog.instance_types[0].vcpus = -8"));
  j = good;
  j["instance_types"][0]["zone_prices_usd_per_hour"]["us-east-1a"] = "0.9";
  CHECK(contains(catalog_error(j), "catalog.instance_types[0].zone_prices_usd_per_hour.us-east-1a = \"0.9\": expected a number"));
  j = good;
  j["instance_types"][0]["zone_prices_usd_per_hour"]["us-east-1a"] = 0;
  CHECK(contains(catalog_error(j), "zone_prices_usd_per_hour.us-east-1a = 0: must be greater than zero"));
  j = good;
  j["instance_types"][0]["zone_prices_usd_per_hour"] = Json::array();
  CHECK(contains(catalog_error(j), "catalog.instance_types[0].zone_prices_usd_per_hour = []: expected an object"));
  j = good;
  j["instance_types"][0]["quota_groups"]["reserved"] = "L-1";
  CHECK(contains(catalog_error(j), "catalog.instance_types[0].quota_groups.reserved = \"L-1\": unknown key"));
  j = good;
  j["quota_groups"]["L-7212CCBC"]["vcpus"] = 1.5;
  CHECK(contains(catalog_error(j), "catalog.quota_groups.L-7212CCBC.vcpus = 1.5: expected a whole number"));
  j = good;
  j["quota_groups"]["L-7212CCBC"]["market"] = "reserved";
  CHECK(contains(catalog_error(j), "catalog.quota_groups.L-7212CCBC.market = \"reserved\""));
  j = good;
  j["quota_groups"]["L-7212CCBC"]["market"] = "on-demand";
  CHECK(contains(catalog_error(j), "instance_types[0].quota_groups.spot = \"L-7212CCBC\": that quota group counts on-demand instances"));
  j = good;
  j["instance_types"][0].erase("vcpus");
  CHECK(contains(catalog_error(j), "instance_types[0].vcpus = 0: is needed: the type is counted by vCPU quota group L-7212CCBC"));
  j = good;
  j["instance_types"][0]["zone_prices_usd_per_hour"]["us-east-1\x1b[2J"] = 1.0;
  CHECK(contains(catalog_error(j), "must not contain control characters"));
  j = good;
  j["missing_sources"] = "quotas";
  CHECK(contains(catalog_error(j), "catalog.missing_sources = \"quotas\": expected an array"));
}
