// SPDX-License-Identifier: MIT
// Spot Placement Scores: which score a pool gets (placement_score.hpp), the catalog without pools below a
// minimum and the zone a plan then chooses, the catalog JSON that carries them, the plan document that
// shows them, and the reader of `aws ec2 get-spot-placement-scores` outputs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <spotdnn/availability_zone.hpp>
#include <spotdnn/io/aws/spot_placement_scores.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/placement_score.hpp>
#include <spotdnn/plan/exact.hpp>
#include <spotdnn/presets.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;
using io::Json;

namespace {

/// The preset catalog with p3.2xlarge priced in us-east-1a (1.2), 1b (0.918) and 1c (1.5), and scores:
/// p3.2xlarge 3 in 1b and 8 in 1a (and 9 in 1a for a second request), the region 6; g4dn.4xlarge 2 in the region.
Catalog scored_catalog() {
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) {
    if (t.name == "p3.2xlarge") t.zone_prices_usd_per_hour = {{"us-east-1a", 1.2}, {"us-east-1b", 0.918}, {"us-east-1c", 1.5}};
  }
  c.placement_scores = {{"us-east-1b", 3, 2, "units", {"p3.2xlarge"}, ""},
                        {"us-east-1a", 8, 2, "units", {"p3.2xlarge", "g3.8xlarge"}, ""},
                        {"us-east-1a", 9, 1, "units", {"p3.2xlarge"}, ""},
                        {"", 6, 2, "units", {"p3.2xlarge"}, "2026-11-27T07:00:00Z"},
                        {"", 2, 4, "units", {"g4dn.4xlarge"}, ""}};
  c.validate();
  return c;
}

const InstanceType& type_of(const Catalog& c, const std::string& name) { return c.at(name); }

}  // namespace

TEST_CASE("a pool's placement score is the lowest for its zone, else the lowest for its region, else unknown") {
  const Catalog c = scored_catalog();
  CHECK(placement_score(c, "p3.2xlarge", "us-east-1a") == 8);  // two requests scored 1a: the lower counts
  CHECK(placement_score(c, "p3.2xlarge", "us-east-1b") == 3);
  CHECK(placement_score(c, "p3.2xlarge", "us-east-1c") == 6);  // no zone score: the region's
  CHECK(placement_score(c, "p3.2xlarge", "") == 6);
  CHECK(placement_score(c, "g3.8xlarge", "us-east-1a") == 8);  // named by a request of several types
  CHECK(!placement_score(c, "g3.8xlarge", "us-east-1b"));
  CHECK(!placement_score(c, "g4dn.xlarge", ""));
}

TEST_CASE("a minimum placement score leaves out the pools below it and the plan moves to the best zone left") {
  const Catalog c = scored_catalog();
  std::vector<std::string> left_out;
  const Catalog kept = catalog_with_min_placement_score(c, 5, &left_out);
  const InstanceType& p3 = type_of(kept, "p3.2xlarge");
  CHECK(p3.zone_prices_usd_per_hour.count("us-east-1b") == 0);
  CHECK(p3.zone_prices_usd_per_hour.size() == 2);
  CHECK(p3.price_usd_per_hour == doctest::Approx(1.2));  // the lowest price left
  CHECK(type_of(kept, "g4dn.4xlarge").quota == 0);         // regional price, region scored 2
  CHECK(type_of(kept, "g3.8xlarge").quota == type_of(c, "g3.8xlarge").quota);  // unknown is not low
  REQUIRE(left_out.size() == 2);
  CHECK(left_out[0] == "p3.2xlarge in us-east-1b (score 3)");  // in the catalog's type order
  CHECK(left_out[1] == "g4dn.4xlarge (score 2 in the region)");

  // Planned in every zone: without the minimum the cheap us-east-1b wins; with it, the cheapest zone left.
  const Workload w = presets::resnet110_workload();
  const Slo slo{0.8, 2400};
  auto plan_in = [&](const Catalog& catalog, const std::string&) {
    ZoneCandidate<PlanResult> candidate;
    candidate.result = plan_exact(PerformanceModel(w, catalog), slo);
    candidate.feasible = candidate.result.has_plan();
    if (candidate.feasible) candidate.cost_usd = candidate.result.prediction.cost_usd;
    return candidate;
  };
  const auto free_choice = choose_zone(c, plan_in);
  const auto scored_choice = choose_zone(kept, plan_in);
  CHECK(free_choice.zone == "us-east-1b");
  REQUIRE(scored_choice.feasible);
  CHECK(scored_choice.zone != "us-east-1b");
  CHECK(scored_choice.result.cluster.count("g4dn.4xlarge") == 0);
  CHECK(scored_choice.result.prediction.cost_usd >= free_choice.result.prediction.cost_usd);

  // Every pool is kept exactly when placement_score() does not put it below the minimum, at every minimum.
  for (int minimum = 1; minimum <= 10; ++minimum) {
    const Catalog at = catalog_with_min_placement_score(c, minimum);
    for (const InstanceType& type : c.instance_types) {
      if (type.market != Market::spot) continue;
      CAPTURE(minimum);
      CAPTURE(type.name);
      const InstanceType& after = type_of(at, type.name);
      if (type.zone_prices_usd_per_hour.empty()) {
        const std::optional<int> score = placement_score(c, type.name, "");
        CHECK((after.quota == 0) == (type.quota == 0 || (score && *score < minimum)));
        continue;
      }
      for (const auto& entry : type.zone_prices_usd_per_hour) {
        const std::optional<int> score = placement_score(c, type.name, entry.first);
        CHECK((after.zone_prices_usd_per_hour.count(entry.first) == 1) == !(score && *score < minimum));
      }
    }
  }

  // A type whose every zone is below the minimum cannot be bought anywhere.
  const Catalog strict = catalog_with_min_placement_score(c, 9);
  CHECK(type_of(strict, "p3.2xlarge").quota == 0);
}

TEST_CASE("placement scores survive the catalog JSON and the plan document shows the chosen types' scores") {
  const Catalog c = scored_catalog();
  const Catalog back = io::catalog_from_json(io::to_json(c));
  REQUIRE(back.placement_scores.size() == c.placement_scores.size());
  CHECK(back.placement_scores[3].zone.empty());
  CHECK(back.placement_scores[3].observed_at == "2026-11-27T07:00:00Z");
  CHECK(back.placement_scores[1].instance_types == std::vector<std::string>{"p3.2xlarge", "g3.8xlarge"});

  Json bad = io::to_json(c);
  bad["placement_scores"][0]["score"] = 11;
  CHECK(spotdnn::test::error_of([&] { (void)io::catalog_from_json(bad); }).find("placement_scores[0].score") != std::string::npos);
  bad = io::to_json(c);
  bad["placement_scores"][0]["instance_types"] = Json::array();
  CHECK(spotdnn::test::error_of([&] { (void)io::catalog_from_json(bad); }).find("instance_types") != std::string::npos);
  bad = io::to_json(c);
  bad["placement_scores"][0]["target_capacity_unit"] = "gpus";
  CHECK(spotdnn::test::error_of([&] { (void)io::catalog_from_json(bad); }).find("target_capacity_unit") != std::string::npos);

  const PerformanceModel model(presets::resnet110_workload(), catalog_in_zone(c, "us-east-1a"));
  const PlanResult plan = plan_exact(model, Slo{0.8, 2400});
  REQUIRE(plan.has_plan());
  const Json document = io::plan_document(plan, model, "us-east-1a");
  REQUIRE(document.contains("placement_scores"));
  for (const auto& entry : plan.cluster.counts()) {
    const std::string& type = entry.first;
    CAPTURE(type);
    const std::optional<int> score = placement_score(c, type, "us-east-1a");
    if (score) {
      CHECK(document["placement_scores"][type] == *score);
    } else {
      CHECK(document["placement_scores"][type].is_null());
    }
  }
  // Without scores in the catalog the key is absent.
  const PerformanceModel plain(presets::resnet110_workload(), presets::resnet110_catalog());
  CHECK(!io::plan_document(plan_exact(plain, Slo{0.8, 2400}), plain).contains("placement_scores"));
}

TEST_CASE("get-spot-placement-scores outputs are read per zone or per region, with zone IDs named where known") {
  io::aws::PlacementScoreRequest request;
  request.instance_types = {"p3.2xlarge", "g4dn.xlarge"};
  request.target_capacity = 4;
  const Json zones = Json::parse(R"({"SpotPlacementScores": [
      {"Region": "us-east-1", "AvailabilityZoneId": "use1-az1", "Score": 9},
      {"Region": "us-east-1", "AvailabilityZoneId": "use1-az2", "Score": 3},
      {"Region": "us-west-2", "AvailabilityZoneId": "usw2-az1", "Score": 7}], "NextToken": null})");
  const auto read = io::aws::read_spot_placement_scores(zones, "scores.json", "us-east-1", request, {{"use1-az1", "us-east-1b"}});
  REQUIRE(read.scores.size() == 2);
  CHECK(read.scores[0].zone == "us-east-1b");
  CHECK(read.scores[0].score == 9);
  CHECK(read.scores[0].target_capacity == 4);
  CHECK(read.scores[0].instance_types == request.instance_types);
  CHECK(read.scores[1].zone == "use1-az2");  // no name known: kept as the ID
  REQUIRE(read.warnings.size() == 2);
  CHECK(read.warnings[0].find("us-west-2") != std::string::npos);
  CHECK(read.warnings[1].find("use1-az2") != std::string::npos);

  // The bare array of --query SpotPlacementScores, scored for the region.
  const auto region = io::aws::read_spot_placement_scores(Json::parse(R"([{"Region": "us-east-1", "Score": 5}])"), "s.json",
                                                          "us-east-1", request);
  REQUIRE(region.scores.size() == 1);
  CHECK(region.scores[0].zone.empty());
  CHECK(region.warnings.empty());

  auto error = [&](const std::string& text, const io::aws::PlacementScoreRequest& q) {
    return spotdnn::test::error_of([&] { (void)io::aws::read_spot_placement_scores(Json::parse(text), "s.json", "us-east-1", q); });
  };
  CHECK(error(R"({"SpotPlacementScores": [{"Region": "us-east-1", "Score": 11}]})", request).find("SpotPlacementScores[0].Score") !=
        std::string::npos);
  CHECK(error(R"({"SpotPlacementScores": [{"Region": "us-east-1", "Score": null}]})", request).find("null") != std::string::npos);
  CHECK(error(R"([{"Region": "us-east-1", "Score": 4}, {"Region": "us-east-1", "Score": 5}])", request).find("twice") !=
        std::string::npos);
  CHECK(error(R"({"SpotPriceHistory": []})", request).find("SpotPlacementScores") != std::string::npos);
  CHECK(error(R"("scores")", request).find("get-spot-placement-scores") != std::string::npos);
  io::aws::PlacementScoreRequest no_types = request;
  no_types.instance_types.clear();
  CHECK(error("[]", no_types).find("request.instance_types") != std::string::npos);
  io::aws::PlacementScoreRequest bad_unit = request;
  bad_unit.target_capacity_unit = "gpus";
  CHECK(error("[]", bad_unit).find("target_capacity_unit") != std::string::npos);
}
