// SPDX-License-Identifier: MIT
// Plans across regions on the command line: `plan` with --catalog once per region keeps the cheapest
// region, --region pins one, --data-region/--dataset-gb add the cost of reading the dataset from another
// region (and can flip the choice), the plan document, table and CSV say where and what the transfer
// costs, one catalog prints as before, and every other command refuses a second --catalog. frontier and
// compare take --data-region too: the transfer counts before the regions' frontiers merge, and in compare's choice.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

#include "support/cli_refusal.hpp"
#include "support/run_command.hpp"

using namespace spotdnn;
using io::Json;
using spotdnn::test::CommandResult;
using spotdnn::test::run_cli;
using spotdnn::test::check_cli_refused;
using spotdnn::test::write_temp_file;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The preset catalog as region `region` with every spot price times `scale`; written to a file, its path returned.
std::string region_catalog_file(const std::string& region, double scale) {
  Catalog c = presets::resnet110_catalog();
  c.region = region;
  for (InstanceType& t : c.instance_types) t.price_usd_per_hour *= scale;
  return write_temp_file("cli_region_" + region + ".json", io::to_json(c).dump());
}

/// us-east-1 at the preset's prices and us-west-2 at 80% of them.
std::string two_catalogs() {
  return " --catalog '" + region_catalog_file("us-east-1", 1.0) + "' --catalog '" + region_catalog_file("us-west-2", 0.8) + "'";
}

const std::string kPlan = "plan --target-loss 0.8 --deadline 2400";

CommandResult run_ok(const std::string& arguments, int exit_code = 0) {
  const CommandResult r = run_cli(arguments);
  CAPTURE(arguments);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == exit_code);
  return r;
}

Json cli_json(const std::string& arguments) { return Json::parse(run_ok(arguments).out); }

/// `compare` on the reference serverless profile (loss 0.8, deadline 2400 s, 10 epochs); catalogs follow.
std::string compare_command() {
  const std::string profile = write_temp_file("cli_region_serverless_profile.json",
                                              R"({"kind": "spotdnn.serverless_profile", "name": "reference", "model_size_mb": 44.7,
                                                  "samples_per_epoch": 50000, "a": 60, "b": 8, "m": 200, "k1": 20, "k2": -0.8})");
  return "compare --target-loss 0.8 --deadline 2400 --epochs 10 --serverless-profile '" + profile + "'";
}

}  // namespace

TEST_CASE("plan with a catalog per region keeps the cheaper region and says so in every format") {
  const Json east = cli_json(kPlan + " --catalog '" + region_catalog_file("us-east-1", 1.0) + "' --format json");
  const Json plan = cli_json(kPlan + two_catalogs() + " --format json");
  CHECK(plan.at("region") == "us-west-2");
  // Same cluster at 80% of the workers' prices; the parameter server's price is unchanged.
  CHECK(plan.at("cluster") == east.at("cluster"));
  CHECK(plan.at("worker_cost_usd").get<double>() == doctest::Approx(0.8 * east.at("worker_cost_usd").get<double>()).epsilon(1e-9));
  CHECK(contains(plan.at("region_choice").get<std::string>(), "us-west-2, the cheapest of 2 regions (us-west-2 $"));
  CHECK_FALSE(plan.contains("transfer_cost_usd"));
  const CommandResult table = run_ok(kPlan + two_catalogs());
  CHECK(contains(table.out, "on us-west-2, target loss 0.8"));
  CHECK(contains(table.out, "\n  region: us-west-2, the cheapest of 2 regions (us-west-2 $"));
  const CommandResult csv = run_ok(kPlan + two_catalogs() + " --format csv");
  CHECK(contains(csv.out.substr(0, csv.out.find('\n')), ",zone,region"));
  CHECK(contains(csv.out, ",us-west-2\n"));
}

TEST_CASE("plan with one catalog prints as before: no region line, keys or column") {
  const CommandResult table = run_ok(kPlan + " --catalog '" + region_catalog_file("us-east-1", 1.0) + "'");
  CHECK(table.out == run_ok(kPlan).out);
  CHECK_FALSE(contains(table.out, "region:"));
  const Json plan = cli_json(kPlan + " --format json");
  CHECK(plan.at("region") == "us-east-1");
  CHECK_FALSE(plan.contains("region_choice"));
  CHECK_FALSE(plan.contains("data_region"));
  CHECK(run_ok(kPlan + " --format csv").out.find(",region") == std::string::npos);
}

TEST_CASE("--region pins a region, and an unknown one is refused naming the regions") {
  const Json plan = cli_json(kPlan + two_catalogs() + " --region us-east-1 --format json");
  CHECK(plan.at("region") == "us-east-1");
  CHECK(plan.at("region_choice") == "us-east-1 (pinned region)");
  check_cli_refused(kPlan + two_catalogs() + " --region eu-west-1", {"\"eu-west-1\"", "us-east-1, us-west-2"});
  check_cli_refused(kPlan + two_catalogs() + " --region ''", {"--region"});
  check_cli_refused(kPlan + two_catalogs() + " --zone us-east-1a", {"\"us-east-1a\"", "us-east-1: none; us-west-2: none"});
}

TEST_CASE("reading the dataset from another region adds its transfer cost and can flip the choice") {
  // 1000 GB at the default 0.02 USD/GB: 20 USD outside us-east-1, more than us-west-2 saves.
  const Json plan = cli_json(kPlan + two_catalogs() + " --data-region us-east-1 --dataset-gb 1000 --format json");
  CHECK(plan.at("region") == "us-east-1");
  CHECK(plan.at("data_region") == "us-east-1");
  CHECK(plan.at("dataset_gb") == 1000.0);
  CHECK(plan.at("transfer_usd_per_gb") == 0.02);
  CHECK(plan.at("transfer_cost_usd") == 0.0);
  CHECK(plan.at("total_cost_usd").get<double>() == doctest::Approx(plan.at("cost_usd").get<double>()).epsilon(1e-12));
  CHECK(contains(plan.at("region_choice").get<std::string>(), "us-west-2 $"));
  CHECK(contains(plan.at("region_choice").get<std::string>(), " + $20.00"));
  // A small dataset leaves us-west-2 cheaper: it wins and pays the transfer.
  const Json small = cli_json(kPlan + two_catalogs() + " --data-region us-east-1 --dataset-gb 1 --transfer-usd-per-gb 0.09 --format json");
  CHECK(small.at("region") == "us-west-2");
  CHECK(small.at("transfer_cost_usd").get<double>() == doctest::Approx(0.09).epsilon(1e-12));
  CHECK(small.at("total_cost_usd").get<double>() ==
        doctest::Approx(small.at("cost_usd").get<double>() + 0.09).epsilon(1e-12));
  // The table and CSV show the transfer and the total; one catalog with a data region too.
  const CommandResult table = run_ok(kPlan + two_catalogs() + " --data-region us-east-1 --dataset-gb 1 --transfer-usd-per-gb 0.09");
  CHECK(contains(table.out, "data transfer"));
  CHECK(contains(table.out, "$0.0900 (1 GB read once from us-east-1 at $0.0900/GB)"));
  CHECK(contains(table.out, "(cost + data transfer)"));
  const CommandResult csv = run_ok(kPlan + " --data-region us-west-2 --dataset-gb 100 --format csv");
  CHECK(contains(csv.out, ",region,data_region,dataset_gb,transfer_cost_usd,total_cost_usd\n"));
  CHECK(contains(csv.out, ",us-east-1,us-west-2,100,2,"));
}

TEST_CASE("a budget plan leaves the transfer out of the cluster's budget") {
  // A budget the transfer eats whole outside us-east-1: us-west-2 is infeasible, us-east-1 is planned.
  const Json plan = cli_json("plan --target-loss 0.8 --budget 3" + two_catalogs() + " --data-region us-east-1 --dataset-gb 200 --format json");
  CHECK(plan.at("region") == "us-east-1");
  CHECK(plan.at("transfer_cost_usd") == 0.0);
  const CommandResult r = run_cli("plan --target-loss 0.8 --budget 3" + two_catalogs() + " --data-region us-east-1 --dataset-gb 200 --region us-west-2");
  CHECK(r.exit_code == 3);
  CHECK(contains(r.out, "reading the dataset in us-west-2 costs $4.0000 (data transfer), the whole budget of $3.0000"));
}

TEST_CASE("plan --confidence chooses across regions too") {
  const Json plan = cli_json(kPlan + two_catalogs() + " --confidence 0.9 --fallback-hazard 0.05 --max-scenarios 4000 --no-progress --format json");
  CHECK(plan.at("region") == "us-west-2");
  CHECK(contains(plan.at("region_choice").get<std::string>(), "2 regions"));
}

TEST_CASE("bad transfer options, duplicate regions and a second catalog elsewhere are one-line usage errors") {
  check_cli_refused(kPlan + " --data-region us-east-1", {"--dataset-gb"});
  check_cli_refused(kPlan + " --dataset-gb 10", {"--data-region"});
  check_cli_refused(kPlan + " --transfer-usd-per-gb 0.01", {"--transfer-usd-per-gb"});
  check_cli_refused(kPlan + " --data-region us-east-1 --dataset-gb 0", {"--dataset-gb"});
  check_cli_refused(kPlan + " --data-region us-east-1 --dataset-gb inf", {"--dataset-gb"});
  check_cli_refused(kPlan + " --data-region us-east-1 --dataset-gb 10 --transfer-usd-per-gb -1", {"--transfer-usd-per-gb"});
  const std::string east = region_catalog_file("us-east-1", 1.0);
  check_cli_refused(kPlan + " --catalog '" + east + "' --catalog '" + east + "'", {"\"us-east-1\"", "one catalog per region"});
  check_cli_refused("predict --cluster p3.2xlarge=1 --target-loss 0.8 --catalog '" + east + "' --catalog '" + east + "'",
                {"--catalog given 2 times: only plan, frontier and compare plan across regions"});
}

namespace {

/// The preset catalog as region `region`, p3.2xlarge's spot price times `p3_scale` and every other type's
/// times `other_scale`; written to a file, its path returned (so that each region is cheaper at some deadlines).
std::string mixed_catalog_file(const std::string& region, double p3_scale, double other_scale) {
  Catalog c = presets::resnet110_catalog();
  c.region = region;
  for (InstanceType& t : c.instance_types) t.price_usd_per_hour *= t.name == "p3.2xlarge" ? p3_scale : other_scale;
  return write_temp_file("cli_region_mixed_" + region + ".json", io::to_json(c).dump());
}

const std::string kFrontier = "frontier --target-loss 0.8 --deadlines 600:7200:40";

/// Per sampled deadline: the cost of the frontier's plan there (-1: none).
std::vector<double> sample_costs(const Json& frontier) {
  std::vector<double> costs;
  for (const Json& s : frontier.at("samples")) costs.push_back(s.at("cost_usd").is_null() ? -1.0 : s.at("cost_usd").get<double>());
  return costs;
}

}  // namespace

TEST_CASE("frontier with a catalog per region is the lower envelope of the regions' frontiers and names each step's region") {
  const std::string east = mixed_catalog_file("us-east-1", 1.0, 1.0), west = mixed_catalog_file("us-west-2", 2.0, 0.8);
  const std::string both = " --catalog '" + east + "' --catalog '" + west + "'";
  const Json merged = cli_json(kFrontier + both + " --format json");
  const std::vector<double> east_costs = sample_costs(cli_json(kFrontier + " --catalog '" + east + "' --format json"));
  const std::vector<double> west_costs = sample_costs(cli_json(kFrontier + " --catalog '" + west + "' --format json"));
  const std::vector<double> costs = sample_costs(merged);
  REQUIRE(costs.size() == 40);
  // Never above either region's own frontier, and equal to the cheaper one (relative 1e-12: the same plans).
  for (std::size_t i = 0; i < costs.size(); ++i) {
    CAPTURE(i);
    double best = -1;
    for (double c : {east_costs[i], west_costs[i]}) {
      if (c >= 0 && (best < 0 || c < best)) best = c;
    }
    if (best < 0) {
      CHECK(costs[i] < 0);
      continue;
    }
    CHECK(costs[i] <= best * (1 + 1e-12));
    CHECK(costs[i] == doctest::Approx(best).epsilon(1e-12));
  }
  // Both regions own steps here, each step names its region and its plan document is that region's.
  bool saw_east = false, saw_west = false;
  for (const Json& step : merged.at("steps")) {
    const std::string region = step.at("region").get<std::string>();
    saw_east = saw_east || region == "us-east-1";
    saw_west = saw_west || region == "us-west-2";
    CHECK(step.at("plan").at("region") == region);
  }
  CHECK(saw_east);
  CHECK(saw_west);
  CHECK(merged.at("regions") == Json::array({"us-east-1", "us-west-2"}));
  // --step N prints that step's plan document, in its region.
  const std::size_t last = merged.at("steps").size();
  const Json step = cli_json("frontier --target-loss 0.8" + both + " --format json --step " + std::to_string(last));
  CHECK(step.at("region") == merged.at("steps").back().at("region"));
  CHECK(step.at("cluster") == merged.at("steps").back().at("plan").at("cluster"));
  // The table has a region column and says how the regions were searched; the CSV a region column.
  const CommandResult table = run_ok("frontier --target-loss 0.8" + both);
  CHECK(contains(table.out, "on us-east-1, us-west-2, target loss 0.8"));
  CHECK(contains(table.out, "  region: each step is the cheapest of 2 regions (us-east-1, us-west-2); a run stays in one region"));
  CHECK(contains(table.out, "  region  "));
  const CommandResult csv = run_ok("frontier --target-loss 0.8" + both + " --format csv");
  CHECK(contains(csv.out.substr(0, csv.out.find('\n')), ",cluster,region"));
  CHECK(contains(csv.out, ",us-west-2\n"));
}

TEST_CASE("frontier --region pins one region, one catalog prints as before, and --confidence names each deadline's region") {
  const std::string east = mixed_catalog_file("us-east-1", 1.0, 1.0), west = mixed_catalog_file("us-west-2", 2.0, 0.8);
  const std::string both = " --catalog '" + east + "' --catalog '" + west + "'";
  const Json pinned = cli_json(kFrontier + both + " --region us-east-1 --format json");
  const Json alone = cli_json(kFrontier + " --catalog '" + east + "' --format json");
  CHECK(sample_costs(pinned) == sample_costs(alone));
  for (const Json& step : pinned.at("steps")) CHECK(step.at("region") == "us-east-1");
  CHECK(pinned.at("region_choice") == "us-east-1 (pinned region)");
  // One catalog: no region key, column or line.
  CHECK_FALSE(alone.contains("regions"));
  CHECK_FALSE(alone.at("steps").front().contains("region"));
  const CommandResult table = run_ok("frontier --target-loss 0.8 --catalog '" + east + "'");
  CHECK(table.out == run_ok("frontier --target-loss 0.8").out);
  CHECK_FALSE(contains(table.out, "region"));
  check_cli_refused(kFrontier + both + " --region eu-west-1", {"\"eu-west-1\"", "us-east-1, us-west-2"});
  check_cli_refused(kFrontier + both + " --zone us-east-1a", {"\"us-east-1a\""});
  // --confidence plans each deadline in the cheapest region too, naming it.
  const Json confident = cli_json("frontier --target-loss 0.8 --deadlines 40m:2h:2 --confidence 0.9 --fallback-hazard 0.05 "
                                  "--max-scenarios 4000 --no-progress --format json" + both);
  CHECK(confident.at("regions") == Json::array({"us-east-1", "us-west-2"}));
  for (const Json& s : confident.at("samples")) CHECK((s.at("region") == "us-east-1" || s.at("region") == "us-west-2"));
  check_cli_refused("frontier --target-loss 0.8 --catalog '" + east + "' --catalog '" + east + "'", {"\"us-east-1\"", "one catalog per region"});
}

TEST_CASE("compare plans its spot side in the cheaper region, or the one --region pins, and names it") {
  const std::string compare = compare_command();
  const Json both = cli_json(compare + two_catalogs() + " --format json");
  const Json east = cli_json(compare + " --catalog '" + region_catalog_file("us-east-1", 1.0) + "' --format json");
  CHECK(both.at("spot").at("region") == "us-west-2");
  CHECK(both.at("spot").at("cost_usd").get<double>() < east.at("spot").at("cost_usd").get<double>());
  CHECK(contains(both.at("spot").at("region_choice").get<std::string>(), "us-west-2, the cheapest of 2 regions"));
  CHECK_FALSE(east.at("spot").contains("region_choice"));
  const Json pinned = cli_json(compare + two_catalogs() + " --region us-east-1 --format json");
  CHECK(pinned.at("spot").at("region") == "us-east-1");
  CHECK(pinned.at("spot").at("cost_usd").get<double>() == doctest::Approx(east.at("spot").at("cost_usd").get<double>()).epsilon(1e-12));
  const CommandResult table = run_ok(compare + two_catalogs());
  CHECK(contains(table.out, "spot region: us-west-2, the cheapest of 2 regions"));
  const CommandResult csv = run_ok(compare + two_catalogs() + " --format csv");
  CHECK(contains(csv.out.substr(0, csv.out.find('\n')), ",region"));
  CHECK(contains(csv.out, ",us-west-2\n"));
  check_cli_refused(compare + two_catalogs() + " --region eu-west-1", {"\"eu-west-1\"", "us-east-1, us-west-2"});
}

TEST_CASE("frontier with --data-region counts the transfer before the merge and flips the steps where it outweighs the price gap") {
  // us-west-2 at 80% of us-east-1's worker prices: cheaper at every deadline, by a gap that shrinks as the deadline grows.
  const std::string east = region_catalog_file("us-east-1", 1.0), west = region_catalog_file("us-west-2", 0.8);
  const std::string both = " --catalog '" + east + "' --catalog '" + west + "'";
  const std::vector<double> east_costs = sample_costs(cli_json(kFrontier + " --catalog '" + east + "' --format json"));
  const std::vector<double> west_costs = sample_costs(cli_json(kFrontier + " --catalog '" + west + "' --format json"));
  REQUIRE(east_costs.size() == 40);
  // The deadlines where us-west-2 is cheaper, and by how much: a transfer halfway between two distinct
  // gaps flips the smaller gaps to us-east-1 (where the data is) and leaves the larger in us-west-2.
  std::vector<double> gaps;
  for (std::size_t i = 0; i < east_costs.size(); ++i) {
    if (east_costs[i] >= 0 && west_costs[i] >= 0 && west_costs[i] < east_costs[i]) gaps.push_back(east_costs[i] - west_costs[i]);
  }
  std::sort(gaps.begin(), gaps.end());
  gaps.erase(std::unique(gaps.begin(), gaps.end(), [](double a, double b) { return b - a < 1e-6; }), gaps.end());
  REQUIRE(gaps.size() >= 2);
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", (gaps.front() + gaps.back()) / 2);
  const double transfer = std::stod(text);
  const std::string data = std::string(" --data-region us-east-1 --dataset-gb ") + text + " --transfer-usd-per-gb 1";
  const Json merged = cli_json(kFrontier + both + data + " --format json");
  CHECK(merged.at("data_region") == "us-east-1");
  CHECK(merged.at("transfer_usd_per_gb") == 1.0);
  bool flipped = false, stayed = false;
  for (std::size_t i = 0; i < east_costs.size(); ++i) {
    CAPTURE(i);
    const Json& s = merged.at("samples").at(i);
    if (east_costs[i] < 0 && west_costs[i] < 0) {
      CHECK(s.at("cost_usd").is_null());
      continue;
    }
    const double east_total = east_costs[i] < 0 ? 1e300 : east_costs[i], west_total = west_costs[i] < 0 ? 1e300 : west_costs[i] + transfer;
    const bool in_east = east_total <= west_total;
    CHECK(s.at("region") == (in_east ? "us-east-1" : "us-west-2"));
    // total = the cheaper region's cost + its transfer (relative 1e-12: the same plans).
    CHECK(s.at("total_cost_usd").get<double>() == doctest::Approx(std::min(east_total, west_total)).epsilon(1e-12));
    CHECK(s.at("transfer_cost_usd").get<double>() == doctest::Approx(in_east ? 0.0 : transfer).epsilon(1e-12));
    if (west_costs[i] >= 0 && west_costs[i] < east_costs[i]) (in_east ? flipped : stayed) = true;
  }
  CHECK(flipped);
  CHECK(stayed);
  // Every step shows its transfer and total; the table and the CSV have their columns.
  for (const Json& step : merged.at("steps")) {
    const double expected = step.at("region") == "us-east-1" ? 0.0 : transfer;
    CHECK(step.at("transfer_cost_usd").get<double>() == doctest::Approx(expected).epsilon(1e-12));
    CHECK(step.at("total_cost_usd").get<double>() == doctest::Approx(step.at("cost_usd").get<double>() + expected).epsilon(1e-12));
  }
  const CommandResult table = run_ok(kFrontier + both + data);
  CHECK(contains(table.out, "  data transfer: "));
  CHECK(contains(table.out, "  transfer  "));
  const CommandResult csv = run_ok(kFrontier + both + data + " --format csv");
  CHECK(contains(csv.out.substr(0, csv.out.find('\n')), ",region,data_region,dataset_gb,transfer_cost_usd,total_cost_usd"));
  // --step N's plan document carries its transfer, as plan's does.
  const Json step = cli_json("frontier --target-loss 0.8" + both + data + " --format json --step 1");
  CHECK(step.at("data_region") == "us-east-1");
  CHECK(step.contains("total_cost_usd"));
  // Without --data-region nothing changes: no transfer keys.
  CHECK_FALSE(cli_json(kFrontier + both + " --format json").at("steps").front().contains("transfer_cost_usd"));
}

TEST_CASE("compare with --data-region picks the data's region when the transfer outweighs the price gap") {
  const std::string compare = compare_command();
  // 1000 GB at 0.02 USD/GB: 20 USD outside us-east-1, more than us-west-2 saves.
  const Json big = cli_json(compare + two_catalogs() + " --data-region us-east-1 --dataset-gb 1000 --format json");
  CHECK(big.at("spot").at("region") == "us-east-1");
  CHECK(big.at("spot").at("data_region") == "us-east-1");
  CHECK(big.at("spot").at("transfer_cost_usd") == 0.0);
  CHECK(big.at("spot").at("total_cost_usd").get<double>() == doctest::Approx(big.at("spot").at("cost_usd").get<double>()).epsilon(1e-12));
  CHECK(contains(big.at("spot").at("region_choice").get<std::string>(), " + $20.00"));
  // A small dataset leaves us-west-2 cheaper: it wins and pays the transfer.
  const std::string small = " --data-region us-east-1 --dataset-gb 1 --transfer-usd-per-gb 0.09";
  const Json cheap = cli_json(compare + two_catalogs() + small + " --format json");
  CHECK(cheap.at("spot").at("region") == "us-west-2");
  CHECK(cheap.at("spot").at("transfer_cost_usd").get<double>() == doctest::Approx(0.09).epsilon(1e-12));
  CHECK(cheap.at("spot").at("total_cost_usd").get<double>() ==
        doctest::Approx(cheap.at("spot").at("cost_usd").get<double>() + 0.09).epsilon(1e-12));
  const CommandResult table = run_ok(compare + two_catalogs() + small);
  CHECK(contains(table.out, "data transfer"));
  CHECK(contains(table.out, "$0.0900 (1 GB read once from us-east-1 at $0.0900/GB)"));
  const CommandResult csv = run_ok(compare + two_catalogs() + small + " --format csv");
  CHECK(contains(csv.out.substr(0, csv.out.find('\n')), ",region,data_region,dataset_gb,transfer_cost_usd,total_cost_usd"));
  check_cli_refused(compare + two_catalogs() + " --data-region us-east-1", {"--dataset-gb"});
}
