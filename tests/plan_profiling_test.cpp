// SPDX-License-Identifier: MIT
// plan_profiling (issue 25): the runs that identify a workload at the least cost within a budget, priced like
// any plan, and the reason when the budget is too small.
#include <string>
#include <vector>

#include <spotdnn/plan/profiling_plan.hpp>
#include <spotdnn/presets.hpp>

#include <doctest/doctest.h>

#include "support/error_of.hpp"

using namespace spotdnn;
using spotdnn::test::error_of;

namespace {

// The preset catalog with quotas of 16: cheapest instance g4dn.4xlarge ($0.3612/h), PS m5.xlarge $0.192/h.
Catalog catalog16() {
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) t.quota = 16;
  return c;
}

double sum_cost(const ProfilingPlan& plan) {
  double total = 0;
  for (const ProfilingRun& r : plan.runs) total += r.cost_usd;
  return total;
}


}  // namespace

TEST_CASE("a profiling plan: three cluster sizes of the cheapest instance, a loss run, every type profiled, a held-out size") {
  ProfilingPlanOptions options;
  options.budget_usd = 100;
  const Catalog catalog = catalog16();
  const ProfilingPlan plan = plan_profiling(catalog, options);
  INFO(plan.message);
  REQUIRE(plan.has_plan());
  CHECK(plan.cluster_type == "g4dn.4xlarge");
  // Sizes 1, 2, 4 first, the loss run, then the five profiles, then size 8 (the held-out check).
  REQUIRE(plan.runs.size() == 3 + 1 + 5 + 1);
  CHECK(plan.runs[0].cluster.to_string() == "g4dn.4xlarge=1");
  CHECK(plan.runs[2].cluster.to_string() == "g4dn.4xlarge=4");
  CHECK(plan.runs[3].kind == "loss");
  CHECK(plan.runs[3].cluster.to_string() == "g4dn.4xlarge=1");
  CHECK(plan.runs[4].kind == "profile");
  CHECK(plan.runs[4].cluster.to_string() == "g4dn.4xlarge=1");
  CHECK(plan.runs[9].kind == "cluster");
  CHECK(plan.runs[9].cluster.to_string() == "g4dn.4xlarge=8");
  CHECK(plan.unprofiled_types.empty());
  // Priced like any plan: (n · $0.3612 + the PS's $0.192) per hour for 15 minutes; a profile 10 minutes alone.
  CHECK(plan.runs[2].cost_usd == doctest::Approx((4 * 0.3612 + 0.192) * 0.25).epsilon(1e-12));
  CHECK(plan.runs[3].cost_usd == doctest::Approx((0.3612 + 0.192) * 0.25).epsilon(1e-12));
  CHECK(plan.runs[4].cost_usd == doctest::Approx(0.3612 / 6).epsilon(1e-12));
  CHECK(plan.cost_usd == doctest::Approx(sum_cost(plan)).epsilon(1e-12));
  CHECK(plan.cost_usd <= options.budget_usd);
  CHECK(plan.least_budget_usd == doctest::Approx(((1 + 2 + 4 + 1) * 0.3612 + 4 * 0.192) * 0.25 + 0.3612 / 6).epsilon(1e-12));
  CHECK(plan.message.find("5 of 5 types profiled, 4 cluster sizes of g4dn.4xlarge (1 to 8 workers)") != std::string::npos);
  CHECK(plan.message.find("contention shows only") == std::string::npos);
  // The preset's quota of 5 allows sizes 1, 2 and 4 only: the plan says contention may not show.
  const ProfilingPlan small = plan_profiling(presets::resnet110_catalog(), options);
  REQUIRE(small.has_plan());
  CHECK(small.message.find("no held-out size to check the fit; contention shows only in contended clusters: with at most 4 "
                           "workers the workload may have to assume none") != std::string::npos);
}

TEST_CASE("a profiling plan within a tight budget names the types it cannot profile, and below the least has none") {
  const Catalog catalog = catalog16();
  ProfilingPlanOptions options;
  options.budget_usd = 1.2;  // the least is about $0.97; the dearer types' profiles do not fit beside it
  ProfilingPlan plan = plan_profiling(catalog, options);
  INFO(plan.message);
  REQUIRE(plan.has_plan());
  CHECK(plan.cost_usd <= 1.2);
  CHECK(plan.unprofiled_types == std::vector<std::string>{"p3.2xlarge", "g3.16xlarge", "p2.8xlarge"});
  CHECK(!plan.unprofiled_types.empty());
  CHECK(plan.message.find("not profiled within the budget (their profiles can only be estimated): ") != std::string::npos);
  for (const std::string& type : plan.unprofiled_types) CHECK(plan.message.find(type) != std::string::npos);
  // Profiles by increasing price: every profiled type is at most as dear as every unprofiled one.
  for (const ProfilingRun& r : plan.runs) {
    if (r.kind != "profile" || r.cluster.count("g4dn.4xlarge") == 1) continue;
    for (const std::string& type : plan.unprofiled_types) {
      CHECK(catalog.at(r.cluster.counts().begin()->first).price_usd_per_hour <= catalog.at(type).price_usd_per_hour);
    }
  }

  options.budget_usd = plan.least_budget_usd * 0.999;
  plan = plan_profiling(catalog, options);
  CHECK(plan.status == Status::infeasible);
  CHECK(plan.runs.empty());
  CHECK(plan.message.find("below the least plan's cost") != std::string::npos);
  options.budget_usd = plan.least_budget_usd;
  CHECK(plan_profiling(catalog, options).has_plan());
}

TEST_CASE("a profiling plan needs a type with a quota of four, and refuses bad options") {
  Catalog small = presets::resnet110_catalog();  // quotas 2 to 5: g4dn.4xlarge and g3 types allow 4
  for (InstanceType& t : small.instance_types) t.quota = 3;
  ProfilingPlanOptions options;
  options.budget_usd = 100;
  const ProfilingPlan none = plan_profiling(small, options);
  CHECK(none.status == Status::infeasible);
  CHECK(none.message.find("no type has a quota of 4 or more") != std::string::npos);

  const Catalog catalog = catalog16();
  auto error = [&](ProfilingPlanOptions o) { return error_of([&] { (void)plan_profiling(catalog, o); }); };
  ProfilingPlanOptions o = options;
  o.budget_usd = 0;
  CHECK(error(o).find("options.budget_usd") != std::string::npos);
  o.budget_usd = 2e9;
  CHECK(error(o).find("options.budget_usd = 2e+09: must be at most 1e9 USD") != std::string::npos);
  o = options;
  o.profile_minutes = 0.5;
  CHECK(error(o).find("options.profile_minutes = 0.5") != std::string::npos);
  o = options;
  o.cluster_sizes = 2;
  CHECK(error(o).find("options.cluster_sizes = 2") != std::string::npos);
  o = options;
  o.types = {"p3.2xlarge", "x9.huge"};
  CHECK(error(o).find("options.types = \"x9.huge\": not in the catalog") != std::string::npos);
  o.types = {"p3.2xlarge", "p3.2xlarge"};
  CHECK(error(o).find("given twice") != std::string::npos);
  o.types = {"p3.2xlarge"};  // quota 16: the only type considered runs the clusters too
  const ProfilingPlan only = plan_profiling(catalog, o);
  REQUIRE(only.has_plan());
  CHECK(only.cluster_type == "p3.2xlarge");
}

TEST_CASE("a profiling plan for --fit-ps-bandwidth: sizes 1, 2, 4 and 8 identify B_ps too, a fifth checks the fit") {
  ProfilingPlanOptions options;
  options.budget_usd = 100;
  options.fit_ps_bandwidth = true;
  options.cluster_sizes = 5;
  const ProfilingPlan plan = plan_profiling(catalog16(), options);
  INFO(plan.message);
  REQUIRE(plan.has_plan());
  // Sizes 1, 2, 4, 8 first, the loss run, the five profiles, then size 16 (the held-out check).
  REQUIRE(plan.runs.size() == 4 + 1 + 5 + 1);
  CHECK(plan.runs[3].cluster.to_string() == "g4dn.4xlarge=8");
  CHECK(plan.runs[3].purpose.find("alpha1, beta1, B_req and B_ps") != std::string::npos);
  CHECK(plan.runs[4].kind == "loss");
  CHECK(plan.runs[10].cluster.to_string() == "g4dn.4xlarge=16");
  CHECK(plan.runs[10].purpose.find("held-out") != std::string::npos);
  CHECK(plan.least_budget_usd == doctest::Approx(((1 + 2 + 4 + 8 + 1) * 0.3612 + 5 * 0.192) * 0.25 + 0.3612 / 6).epsilon(1e-12));
  CHECK(plan.message.find("no held-out size") == std::string::npos);
  // Four sizes only: the fit is identified, nothing is left to check it.
  options.cluster_sizes = 4;
  const ProfilingPlan four = plan_profiling(catalog16(), options);
  REQUIRE(four.has_plan());
  CHECK(four.message.find("no held-out size to check the fit") != std::string::npos);
  // Quotas of 7 allow no cluster of 8.
  Catalog seven = catalog16();
  for (InstanceType& t : seven.instance_types) t.quota = 7;
  const ProfilingPlan none = plan_profiling(seven, options);
  CHECK(none.status == Status::infeasible);
  CHECK(none.message.find("no type has a quota of 8 or more instances: alpha1, beta1, B_req and B_ps need clusters of at least "
                            "4 sizes (1, 2, 4 and 8 workers)") != std::string::npos);
  // The cheapest type with a quota of 8 runs the clusters: g4dn.4xlarge at 7 gives way to g3.8xlarge.
  Catalog mixed = seven;
  for (InstanceType& t : mixed.instance_types) {
    if (t.name == "g3.8xlarge") t.quota = 8;
  }
  const ProfilingPlan moved = plan_profiling(mixed, options);
  REQUIRE(moved.has_plan());
  CHECK(moved.cluster_type == "g3.8xlarge");
  // Below the least budget, the message names the four sizes.
  options.budget_usd = moved.least_budget_usd * 0.999;
  const ProfilingPlan poor = plan_profiling(mixed, options);
  CHECK(poor.status == Status::infeasible);
  CHECK(poor.message.find("(clusters of 1, 2, 4 and 8 g3.8xlarge, one loss run and its profile") != std::string::npos);
  options.budget_usd = 100;
  options.cluster_sizes = 3;
  CHECK(error_of([&] { (void)plan_profiling(catalog16(), options); })
            .find("options.cluster_sizes = 3: must be from 4 to 20 (4 identify alpha1, beta1, B_req and B_ps)") != std::string::npos);
  options.cluster_sizes = 4;
  options.max_workers = 4;
  CHECK(error_of([&] { (void)plan_profiling(catalog16(), options); }).find("options.max_workers = 4: must be from 8") != std::string::npos);
}
