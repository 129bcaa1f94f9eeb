// SPDX-License-Identifier: MIT
// AWS vCPU quota groups as linear constraints in every planner: hand-made cases, the binding group of an
// infeasible answer, and the exact planner against brute force on seeded random problems with groups.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/planner.hpp>
#include <spotdnn/revocation.hpp>

#include "support/plan_comparison.hpp"

using namespace spotdnn;

namespace {

constexpr double kCostTolerance = 1e-9;  // relative

const char* const kP = "L-7212CCBC";
const char* const kG = "L-3819A6DF";

/// The ResNet-110 preset with AWS's vCPUs per type and its spot groups: P types in L-7212CCBC, G types in
/// L-3819A6DF (values given by the caller; a value < 0 leaves the group unknown).
Catalog preset_with_groups(int p_vcpus, int g_vcpus) {
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) {
    const bool p = t.name[0] == 'p';
    t.spot_quota_group = p ? kP : kG;
    t.on_demand_quota_group = p ? "L-417A185B" : "L-DB2E81BA";
    if (t.name == "p3.2xlarge") t.vcpus = 8;
    if (t.name == "g4dn.4xlarge") t.vcpus = 16;
    if (t.name == "g3.8xlarge") t.vcpus = 32;
    if (t.name == "g3.16xlarge") t.vcpus = 64;
    if (t.name == "p2.8xlarge") t.vcpus = 32;
  }
  if (p_vcpus >= 0) c.quota_groups.push_back({kP, "All P4, P3 and P2 Spot Instance Requests", p_vcpus, Market::spot});
  if (g_vcpus >= 0) c.quota_groups.push_back({kG, "All G and VT Spot Instance Requests", g_vcpus, Market::spot});
  return c;
}

PerformanceModel model_of(const Catalog& catalog) { return PerformanceModel(presets::resnet110_workload(), catalog); }

/// Σ vcpus·count of the types of `cluster` whose group (in `market`) is `code`.
std::int64_t used_vcpus(const Catalog& catalog, const Cluster& cluster, const std::string& code, Market market = Market::spot) {
  std::int64_t used = 0;
  for (const auto& [name, count] : cluster.counts()) {
    const InstanceType& t = catalog.at(name);
    if (t.quota_group_code(market) == code) used += std::int64_t(count) * t.vcpus;
  }
  return used;
}

void check_same(const PlanResult& exact, const PlanResult& brute) { test::check_same_plan(exact, brute); }

/// One seeded random problem with vCPU quota groups: up to 6 types with quotas up to 6 and 1–16 vCPUs,
/// 1–3 groups per market shared by random types (some codes unknown), values from 0 to above what the
/// quotas can use, random on-demand switches, minimum counts within the groups, a worker cap, a budget.
struct RandomProblem {
  Workload workload;
  Catalog catalog;
  Slo slo;
  PlanOptions options;
};

RandomProblem random_problem(std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomProblem p;
  Workload& w = p.workload;
  w.name = "random";
  w.param_bytes = uniform(2e6, 40e6);
  w.required_bandwidth_bytes_per_s = uniform(50e6, 300e6);
  if (integer(0, 1) == 1) w.contention = {uniform(0.2, 1.0), uniform(-2.5, -0.3)};
  const bool cc = integer(0, 1) == 1;
  const double asymptote = uniform(0.2, 0.6);
  if (cc) {
    w.loss_model = {LossForm::cc, {uniform(50, 1500), uniform(-0.3, 0.05), uniform(1500, 3500), uniform(0.02, 1.0), asymptote}};
  } else {
    w.loss_model = {LossForm::seed, {uniform(50, 1500), uniform(-0.3, 0.05), uniform(1500, 3500), asymptote}};
  }
  Catalog& c = p.catalog;
  c.region = "test";
  c.parameter_server = {"ps", uniform(0.05, 0.5), uniform(0.4e9, 2e9)};
  const int types = integer(1, 6);
  const int spot_groups = integer(1, 3);
  const int od_groups = integer(1, 2);
  constexpr int kGpus[] = {1, 2, 4, 8};
  constexpr int kBatch[] = {128, 256, 512, 1024};
  constexpr int kVcpus[] = {1, 2, 4, 8, 16};
  for (int k = 0; k < types; ++k) {
    InstanceType type;
    TypeProfile profile;
    type.name = "t" + std::to_string(k);
    type.gpus = kGpus[integer(0, 3)];
    type.price_usd_per_hour = uniform(0.1, 3.0);
    type.on_demand_price_usd_per_hour = integer(0, 2) == 0 ? 0.0 : type.price_usd_per_hour * uniform(1.2, 3);
    type.quota = integer(0, 6);
    type.vcpus = kVcpus[integer(0, 4)];
    type.spot_quota_group = integer(0, 5) == 0 ? "" : "S" + std::to_string(integer(0, spot_groups));  // S<n>: unknown
    type.on_demand_quota_group = "D" + std::to_string(integer(0, od_groups));
    profile.batch_per_gpu = kBatch[integer(0, 3)];
    profile.compute_time_s = uniform(0.05, 2.0);
    c.instance_types.push_back(type);
    w.profiles.emplace(type.name, profile);
    if (type.on_demand_price_usd_per_hour > 0 && integer(0, 3) == 0) p.options.markets[type.name] = Market::on_demand;
  }
  auto add_groups = [&](const char* prefix, int count, Market market) {
    for (int g = 0; g < count; ++g) {
      const std::string code = prefix + std::to_string(g);
      int most = 0;  // what the quotas could use
      for (const auto& t : c.instance_types) most += t.quota_group_code(market) == code ? t.quota * t.vcpus : 0;
      const int roll = integer(0, 9);
      const int value = roll == 0 ? 0 : roll <= 6 ? integer(0, std::max(1, most * 2 / 3)) : integer(most / 2, most + 8);
      c.quota_groups.push_back({code, "group " + code, value, market});
    }
  };
  add_groups("S", spot_groups, Market::spot);
  add_groups("D", od_groups, Market::on_demand);
  p.slo.target_loss = asymptote + uniform(0.02, 0.6);
  p.options.charge_parameter_server = integer(0, 1) == 1;
  if (integer(0, 3) == 0) {
    for (const auto& type : c.instance_types) {
      if (type.quota > 0 && integer(0, 2) == 0) p.options.minimum_counts[type.name] = integer(0, 1);
    }
  }
  int quota_total = 0;
  for (const auto& type : c.instance_types) quota_total += type.quota;
  if (integer(0, 4) == 0) p.options.max_workers = integer(1, std::max(1, quota_total));

  // A deadline (or budget) on the scale of a random cluster.
  const PerformanceModel model(p.workload, p.catalog);
  std::vector<int> counts(model.worker_types().size(), 0);
  for (std::size_t k = 0; k < counts.size(); ++k) counts[k] = integer(0, model.worker_types()[k].quota);
  if (!counts.empty()) counts[0] = std::max(counts[0], 1);
  const Estimate e = model.estimate(counts, p.slo.target_loss, {p.options.charge_parameter_server});
  const double time_scale = e.reaches_target() && e.training_time_s > 0 ? e.training_time_s : 3600.0;
  const double cost_scale = e.reaches_target() && e.cost_usd > 0 ? e.cost_usd : 5.0;
  p.slo.deadline_s = time_scale * uniform(0.3, 2.5);
  if (integer(0, 4) == 0) {
    p.options.budget_usd = cost_scale * uniform(0.3, 2.0);
    if (integer(0, 1) == 0) p.slo.deadline_s = std::numeric_limits<double>::infinity();
  }
  return p;
}

/// The problem's options are valid: minimum counts within the groups (else the planners refuse them).
bool minimum_counts_fit(const RandomProblem& p) {
  try {
    (void)plan_brute_force(PerformanceModel(p.workload, p.catalog), p.slo, p.options);
  } catch (const invalid_argument&) {
    return false;
  }
  return true;
}

/// Every cluster of `r` (plan, fastest, cheapest) is within the quota groups it reports.
void check_within_groups(const PlanResult& r) {
  for (const QuotaGroupUse& use : r.quota_groups) CHECK(use.used_vcpus <= use.limit_vcpus);
}

int random_seeds() {
  if (const char* text = std::getenv("SPOTDNN_QUOTA_SEEDS")) return std::max(1, std::atoi(text));
  return 600;
}

}  // namespace

TEST_CASE("a vCPU quota group on the P types forces a different, dearer mix than the per-type quotas allow") {
  const Slo slo{0.8, 2400};
  const PlanResult free = plan_exact(model_of(preset_with_groups(-1, -1)), slo);
  REQUIRE(free.has_plan());
  CHECK(free.cluster == Cluster{{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}}});  // 16 vCPUs of P
  CHECK(free.quota_groups.empty());
  const Catalog catalog = preset_with_groups(8, -1);  // one p3.2xlarge at most
  const PerformanceModel model = model_of(catalog);
  const PlanResult exact = plan_exact(model, slo);
  REQUIRE(exact.has_plan());
  CHECK(exact.cluster == Cluster{{{"p3.2xlarge", 1}, {"g4dn.4xlarge", 2}, {"g3.8xlarge", 5}, {"g3.16xlarge", 1}}});
  CHECK(exact.prediction.cost_usd > free.prediction.cost_usd);
  REQUIRE(exact.quota_groups.size() == 1);
  CHECK(exact.quota_groups[0].code == kP);
  CHECK(exact.quota_groups[0].market == Market::spot);
  CHECK(exact.quota_groups[0].used_vcpus == 8);
  CHECK(exact.quota_groups[0].limit_vcpus == 8);
  check_same(exact, plan_brute_force(model, slo));
}

TEST_CASE("a group shared by two types limits their vCPUs together") {
  const Catalog catalog = preset_with_groups(40, -1);  // p3.2xlarge (8) and p2.8xlarge (32) share 40 vCPUs
  const PerformanceModel model = model_of(catalog);
  for (double deadline : {1500.0, 2000.0, 2400.0, 3600.0}) {
    CAPTURE(deadline);
    const PlanResult exact = plan_exact(model, {0.8, deadline});
    const PlanResult brute = plan_brute_force(model, {0.8, deadline});
    check_same(exact, brute);
    if (exact.has_plan()) CHECK(used_vcpus(catalog, exact.cluster, kP) <= 40);
  }
  // The fastest cluster within the groups: p3.2xlarge alone may take 2 (its quota), p2.8xlarge then at most 0.
  PlanOptions fastest;
  fastest.budget_usd = 1e12;
  const PlanResult f = plan_exact(model, {0.8}, fastest);
  REQUIRE(f.has_plan());
  CHECK(used_vcpus(catalog, f.cluster, kP) <= 40);
  check_same(f, plan_brute_force(model, {0.8}, fastest));
}

TEST_CASE("a type switched to on-demand is counted by its on-demand group, not its spot group") {
  Catalog catalog = preset_with_groups(0, 0);  // no spot P or G instance at all
  catalog.quota_groups.push_back({"L-417A185B", "Running On-Demand P instances", 16, Market::on_demand});
  for (InstanceType& t : catalog.instance_types) t.on_demand_price_usd_per_hour = 3 * t.price_usd_per_hour;
  const PerformanceModel model = model_of(catalog);
  const PlanResult spot = plan_exact(model, {0.8, 1e6});
  CHECK(spot.status == Status::infeasible);
  CHECK(spot.reason == InfeasibleReason::no_instances);
  CHECK(spot.binding_quota_group == kP);
  CHECK(spot.message.find("quota group L-7212CCBC (All P4, P3 and P2 Spot Instance Requests) allows 0 vCPUs") != std::string::npos);
  PlanOptions options;
  options.markets["p3.2xlarge"] = Market::on_demand;
  const PlanResult od = plan_exact(model, {0.8, 1e6}, options);
  REQUIRE(od.has_plan());
  CHECK(od.cluster.count("p3.2xlarge") >= 1);
  CHECK(od.cluster.count("p3.2xlarge") * 8 <= 16);
  CHECK(od.cluster.counts().size() == 1);
  bool listed = false;
  for (const QuotaGroupUse& use : od.quota_groups) {
    if (use.code != "L-417A185B") continue;
    listed = true;
    CHECK(use.market == Market::on_demand);
    CHECK(use.used_vcpus == 8 * od.cluster.count("p3.2xlarge"));
  }
  CHECK(listed);
  check_same(od, plan_brute_force(model, {0.8, 1e6}, options));
}

TEST_CASE("a group with value 0 keeps its types out of every plan") {
  const Catalog catalog = preset_with_groups(-1, 0);
  const PerformanceModel model = model_of(catalog);
  for (double deadline : {2400.0, 3600.0, 7200.0}) {
    const PlanResult exact = plan_exact(model, {0.8, deadline});
    check_same(exact, plan_brute_force(model, {0.8, deadline}));
    if (exact.has_plan()) CHECK(used_vcpus(catalog, exact.cluster, kG) == 0);
    const PlanResult window = plan_sliding_window(model, {0.8, deadline});
    if (window.has_plan()) CHECK(used_vcpus(catalog, window.cluster, kG) == 0);
  }
}

TEST_CASE("a group code the catalog gives no value for does not limit the plan") {
  Catalog catalog = preset_with_groups(-1, -1);  // codes set on every type, no values
  const PlanResult exact = plan_exact(model_of(catalog), {0.8, 2400});
  const PlanResult plain = plan_exact(model_of(presets::resnet110_catalog()), {0.8, 2400});
  REQUIRE(exact.has_plan());
  CHECK(exact.counts == plain.counts);
  CHECK(exact.prediction.cost_usd == plain.prediction.cost_usd);
  CHECK(exact.message == plain.message);
  CHECK(exact.quota_groups.empty());
  CHECK(exact.binding_quota_group.empty());
}

TEST_CASE("minimum counts above a group are refused naming the group") {
  const PerformanceModel model = model_of(preset_with_groups(16, -1));
  PlanOptions options;
  options.minimum_counts["p2.8xlarge"] = 1;  // 32 vCPUs > 16
  CHECK_THROWS_WITH_AS((void)plan_exact(model, {0.8, 2400}, options),
                       doctest::Contains("these instances use 32 vCPUs of quota group L-7212CCBC (All P4, P3 and P2 Spot Instance "
                                         "Requests), above its limit of 16 vCPUs"),
                       invalid_argument);
  CHECK_THROWS_AS((void)plan_brute_force(model, {0.8, 2400}, options), invalid_argument);
  options.minimum_counts["p2.8xlarge"] = 0;
  options.minimum_counts["p3.2xlarge"] = 2;  // 16 vCPUs: fits exactly, nothing more of P
  const PlanResult r = plan_exact(model, {0.8, 2400}, options);
  if (r.has_plan()) {
    CHECK(r.cluster.count("p3.2xlarge") == 2);
    CHECK(r.cluster.count("p2.8xlarge") == 0);
  }
  check_same(r, plan_brute_force(model, {0.8, 2400}, options));
}

TEST_CASE("an infeasible deadline names the quota group the fastest cluster fills") {
  const Catalog catalog = preset_with_groups(8, -1);  // one p3.2xlarge at most
  const PerformanceModel model = model_of(catalog);
  const PlanResult r = plan_exact(model, {0.8, 2000});  // the fastest: 2021 s with the group, 1921 s without
  REQUIRE(r.status == Status::infeasible);
  CHECK(r.reason == InfeasibleReason::deadline_too_short);
  CHECK(r.binding_quota_group == kP);
  CHECK(r.message.find("; the fastest cluster within the quotas uses all 8 vCPUs of quota group L-7212CCBC (All P4, P3 and "
                       "P2 Spot Instance Requests), the limit that binds: without it a plan exists") != std::string::npos);
  REQUIRE(r.fastest);
  CHECK(r.fastest->cluster.count("p3.2xlarge") == 1);
  REQUIRE(r.quota_groups.size() == 1);
  CHECK(r.quota_groups[0].used_vcpus == 8);
  check_same(r, plan_brute_force(model, {0.8, 2000}));
  // Without the groups the same deadline has a plan: the group is what binds.
  CHECK(plan_exact(model_of(preset_with_groups(-1, -1)), {0.8, 2000}).has_plan());
  // A group of value 0 that binds says it allows no vCPUs.
  const PlanResult none = plan_exact(model_of(preset_with_groups(16, 0)), {0.8, 2000});
  CHECK(none.binding_quota_group == kG);
  CHECK(none.message.find("; quota group L-3819A6DF (All G and VT Spot Instance Requests) allows no vCPUs, the limit that binds") !=
        std::string::npos);
  // A deadline no cluster meets even without groups names no group.
  const PlanResult never = plan_exact(model, {0.8, 10});
  CHECK(never.reason == InfeasibleReason::deadline_too_short);
  CHECK(never.binding_quota_group.empty());
}

TEST_CASE("an unreachable budget names the binding group of the cheapest cluster meeting the deadline") {
  const Catalog catalog = preset_with_groups(-1, 32);
  const PerformanceModel model = model_of(catalog);
  PlanOptions options;
  const PlanResult open = plan_exact(model_of(preset_with_groups(-1, -1)), {0.8, 3000});
  REQUIRE(open.has_plan());
  options.budget_usd = open.prediction.cost_usd * 1.0001;
  const PlanResult r = plan_exact(model, {0.8, 3000}, options);
  check_same(r, plan_brute_force(model, {0.8, 3000}, options));
  if (r.status == Status::infeasible && r.reason == InfeasibleReason::over_budget) {
    CHECK(r.binding_quota_group == kG);
    CHECK(r.message.find("vCPUs of quota group L-3819A6DF") != std::string::npos);
  }
}

TEST_CASE("the exact planner returns brute force's plan on seeded random problems with quota groups") {
  int compared = 0, optimal = 0, infeasible = 0, binding = 0, tight = 0, budget = 0, refused = 0, every_total = 0;
  const int seeds = random_seeds();
  for (int seed = 1; seed <= seeds; ++seed) {
    const RandomProblem p = random_problem(std::uint32_t(seed));
    CAPTURE(seed);
    if (!minimum_counts_fit(p)) {
      ++refused;
      CHECK_THROWS_AS((void)plan_exact(PerformanceModel(p.workload, p.catalog), p.slo, p.options), invalid_argument);
      continue;
    }
    const PerformanceModel model(p.workload, p.catalog);
    const PlanResult exact = plan_exact(model, p.slo, p.options);
    const PlanResult brute = plan_brute_force(model, p.slo, p.options);
    check_same(exact, brute);
    check_within_groups(exact);
    if (seed % 4 == 0) {
      check_same(detail::plan_exact_in_order(model, p.slo, p.options, detail::ExactSearchOrder::every_total), brute);
      ++every_total;
    }
    ++compared;
    optimal += exact.status == Status::optimal;
    infeasible += exact.status == Status::infeasible;
    binding += !exact.binding_quota_group.empty();
    budget += p.options.budget_usd.has_value();
    bool saturated = false;
    for (const QuotaGroupUse& use : exact.quota_groups) saturated = saturated || (use.limit_vcpus > 0 && use.used_vcpus == use.limit_vcpus);
    tight += saturated;
  }
  MESSAGE("random problems compared: " << compared << " (optimal " << optimal << ", infeasible " << infeasible << ", binding group "
                                       << binding << ", a group used to its limit " << tight << ", budget " << budget
                                       << ", refused minimum counts " << refused << ")");
  CHECK(compared >= seeds * 8 / 10);
  CHECK(optimal > compared / 4);
  CHECK(infeasible > compared / 10);
  CHECK(binding > 10);
  CHECK(tight > 20);
  CHECK(budget > 30);
  CHECK(every_total > 0);
}

TEST_CASE("the sliding window never returns a cluster outside the quota groups") {
  int plans = 0;
  for (std::uint32_t seed = 1; seed <= 400; ++seed) {
    RandomProblem p = random_problem(seed);
    p.options.minimum_counts.clear();
    p.options.budget_usd.reset();
    if (!std::isfinite(p.slo.deadline_s)) p.slo.deadline_s = 3600;
    CAPTURE(seed);
    const PerformanceModel model(p.workload, p.catalog);
    const PlanResult window = plan_sliding_window(model, p.slo, p.options);
    check_within_groups(window);
    if (!window.has_plan()) continue;
    ++plans;
    const PlanResult exact = plan_exact(model, p.slo, p.options);
    REQUIRE(exact.has_plan());
    CHECK(exact.prediction.cost_usd <= window.prediction.cost_usd * (1 + kCostTolerance));
    // Recount the groups from the catalog, in the chosen markets.
    for (const QuotaGroup& group : p.catalog.quota_groups) {
      std::int64_t used = 0;
      for (const auto& [name, count] : window.cluster.counts()) {
        const InstanceType& t = p.catalog.at(name);
        const auto chosen = p.options.markets.find(name);
        const Market market = chosen != p.options.markets.end() ? chosen->second : t.market;
        if (t.quota_group_code(market) == group.code) used += std::int64_t(count) * t.vcpus;
      }
      CHECK(used <= group.vcpus);
    }
  }
  CHECK(plans > 50);
}

TEST_CASE("re-planning counts the survivors against their group and adds only what fits") {
  int compared = 0;
  for (std::uint32_t seed = 1; seed <= 600; ++seed) {
    RandomProblem p = random_problem(seed);
    p.options.budget_usd.reset();
    p.options.max_workers.reset();
    if (!std::isfinite(p.slo.deadline_s)) p.slo.deadline_s = 3600;
    const PerformanceModel model(p.workload, p.catalog);
    // Survivors: the minimum counts (if they fit the groups).
    Cluster survivors;
    for (const auto& [name, count] : p.options.minimum_counts) {
      if (count > 0 && model.worker_type_index(name)) survivors.set(name, count);
    }
    p.options.minimum_counts.clear();
    ReplanRequest request;
    request.survivors = survivors;
    request.elapsed_s = 0;
    request.deadline_s = p.slo.deadline_s;
    request.target_loss = p.slo.target_loss;
    request.loss_reached = std::numeric_limits<double>::infinity();  // nothing trained yet
    ReplanOptions options;
    options.plan = p.options;
    options.join_delay_s = 0;
    PlanOptions reference_options = p.options;
    for (const auto& [name, count] : survivors.counts()) reference_options.minimum_counts[name] = count;
    CAPTURE(seed);
    bool fits = true;
    try {
      (void)plan_brute_force(model, p.slo, reference_options);
    } catch (const invalid_argument&) {
      fits = false;
    }
    if (!fits) {
      CHECK_THROWS_WITH_AS((void)replan(model, request, options), doctest::Contains("replan: survivors"), invalid_argument);
      continue;
    }
    const ReplanResult r = replan(model, request, options);
    if (r.status == Status::target_met_at_start || survivors.empty()) continue;
    ++compared;
    const PlanResult brute = plan_brute_force(model, p.slo, reference_options);
    check_same(r.residual_plan, brute);
    check_within_groups(r.residual_plan);
    if (r.has_plan()) {  // the finishing cluster keeps the survivors
      for (const auto& [name, count] : survivors.counts()) CHECK(r.cluster.count(name) >= count);
    }
  }
  CHECK(compared > 20);
}

TEST_CASE("replanning refuses survivors that already exceed their group") {
  const PerformanceModel model = model_of(preset_with_groups(16, -1));
  ReplanRequest request;
  request.survivors.set("p2.8xlarge", 1);
  request.elapsed_s = 600;
  request.deadline_s = 2400;
  request.target_loss = 0.8;
  request.loss_reached = 1.5;
  CHECK_THROWS_WITH_AS((void)replan(model, request), doctest::Contains("quota group L-7212CCBC"), invalid_argument);
}

TEST_CASE("the confidence search lists only clusters within the quota groups as candidates") {
  const Catalog catalog = preset_with_groups(16, 64);
  const PerformanceModel model = model_of(catalog);
  ConfidencePlanOptions options;
  options.interruption.fallback_hazard_per_hour = 0.0;
  const Slo slo{0.8, 3000};
  const ConfidencePlanResult r = plan_with_confidence(model, slo, options);
  // The reference: every cluster within the quotas and groups meeting the deadline.
  std::size_t expected = 0;
  std::vector<int> c(model.worker_types().size(), 0);
  for (;;) {
    const Cluster cluster = [&] {
      Cluster cl;
      for (std::size_t k = 0; k < c.size(); ++k) {
        if (c[k] > 0) cl.set(model.worker_types()[k].name, c[k]);
      }
      return cl;
    }();
    const Estimate e = model.estimate(c, slo.target_loss);
    if (e.workers > 0 && e.reaches_target() && e.training_time_s <= slo.deadline_s && used_vcpus(catalog, cluster, kP) <= 16 &&
        used_vcpus(catalog, cluster, kG) <= 64) {
      ++expected;
    }
    std::size_t k = 0;
    while (k < c.size() && ++c[k] > model.worker_types()[k].quota) c[k++] = 0;
    if (k == c.size()) break;
  }
  CHECK(r.candidates == expected);
  CHECK(expected > 0);
  REQUIRE(r.has_plan());
  CHECK(r.cluster == r.deterministic.cluster);
  CHECK(used_vcpus(catalog, r.cluster, kP) <= 16);
  CHECK(used_vcpus(catalog, r.cluster, kG) <= 64);
}

// ---- the parameter server in its on-demand quota group ----

namespace {

const char* const kStandard = "L-1216C47A";
const char* const kPOnDemand = "L-417A185B";

/// preset_with_groups(0, 0) (no spot P or G) with every type on offer on demand at 3 × its spot price and
/// the on-demand P group at `p_on_demand_vcpus`.
Catalog on_demand_p_catalog(int p_on_demand_vcpus) {
  Catalog catalog = preset_with_groups(0, 0);
  catalog.quota_groups.push_back({kPOnDemand, "Running On-Demand P instances", p_on_demand_vcpus, Market::on_demand});
  for (InstanceType& t : catalog.instance_types) t.on_demand_price_usd_per_hour = 3 * t.price_usd_per_hour;
  return catalog;
}

}  // namespace

TEST_CASE("the parameter server's vCPUs come off its on-demand group before on-demand workers are sized") {
  PlanOptions options;
  options.markets["p3.2xlarge"] = Market::on_demand;
  const Slo slo{0.8, 1e6};
  // 24 vCPUs, 8 of them the PS's (as if it were a P type): at most 2 on-demand p3.2xlarge (8 each) beside it.
  Catalog with_ps = on_demand_p_catalog(24);
  with_ps.parameter_server.vcpus = 8;
  with_ps.parameter_server.quota_group = kPOnDemand;
  REQUIRE_NOTHROW(with_ps.validate());
  const PerformanceModel model = model_of(with_ps);
  // The same problem as a group of 16 vCPUs without the PS: the same plan.
  const PlanResult reference = plan_exact(model_of(on_demand_p_catalog(16)), slo, options);
  for (double deadline : {1e6, 3000.0, 2400.0}) {
    CAPTURE(deadline);
    const PlanResult r = plan_exact(model, {0.8, deadline}, options);
    const PlanResult expected = plan_exact(model_of(on_demand_p_catalog(16)), {0.8, deadline}, options);
    CHECK(r.status == expected.status);
    CHECK(r.counts == expected.counts);
    check_same(r, plan_brute_force(model, {0.8, deadline}, options));
    if (r.has_plan()) CHECK(8 * r.cluster.count("p3.2xlarge") + 8 <= 24);
  }
  const PlanResult r = plan_exact(model, slo, options);
  REQUIRE(r.has_plan());
  REQUIRE(reference.has_plan());
  CHECK(r.cluster == reference.cluster);
  bool listed = false;
  for (const QuotaGroupUse& use : r.quota_groups) {
    if (use.code != kPOnDemand) continue;
    listed = true;
    CHECK(use.used_vcpus == 8 * r.cluster.count("p3.2xlarge") + 8);  // the PS is counted in the use
    CHECK(use.limit_vcpus == 24);                                     // and the limit is the group's value
  }
  CHECK(listed);
  // Without the PS in the group, 3 on-demand p3.2xlarge fit where 2 did.
  Catalog without_ps = on_demand_p_catalog(24);
  for (InstanceType& t : without_ps.instance_types) {
    if (t.name == "p3.2xlarge") t.quota = 3;
  }
  with_ps.instance_types = without_ps.instance_types;
  PlanOptions fastest = options;
  fastest.budget_usd = 1e12;
  CHECK(plan_exact(model_of(without_ps), {0.8}, fastest).cluster.count("p3.2xlarge") == 3);
  CHECK(plan_exact(model_of(with_ps), {0.8}, fastest).cluster.count("p3.2xlarge") == 2);
}

TEST_CASE("a quota group below the parameter server's vCPUs makes every plan infeasible, naming the group") {
  Catalog catalog = presets::resnet110_catalog();
  catalog.quota_groups.push_back({kStandard, "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", 2, Market::on_demand});
  catalog.parameter_server.vcpus = 4;
  catalog.parameter_server.quota_group = kStandard;
  REQUIRE_NOTHROW(catalog.validate());
  const PerformanceModel model = model_of(catalog);
  PlanOptions minimum;
  minimum.minimum_counts["p3.2xlarge"] = 1;  // no throw: the PS's group, not the minimum, is what fails
  for (const PlanResult& r : {plan_exact(model, {0.8, 1e6}), plan_brute_force(model, {0.8, 1e6}), plan_sliding_window(model, {0.8, 1e6}),
                              plan_exact(model, {0.8, 1e6}, minimum), plan_brute_force(model, {0.8, 1e6}, minimum)}) {
    {
      CHECK(r.status == Status::infeasible);
      CHECK(r.reason == InfeasibleReason::no_instances);
      CHECK(r.binding_quota_group == kStandard);
      CHECK(r.message ==
            "no cluster can be formed: the parameter server (m5.xlarge, 4 vCPUs, on demand) does not fit in its quota group "
            "L-1216C47A (Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances), which allows 2 vCPUs: raise that "
            "quota or pick another parameter-server type");
    }
  }
  // The same with a budget (min-time mode) and in a frontier.
  PlanOptions budget;
  budget.budget_usd = 1e9;
  CHECK(plan_exact(model, {0.8}, budget).reason == InfeasibleReason::no_instances);
  CHECK(cost_deadline_frontier(model, 0.8).steps.empty());
  // Exactly the PS's vCPUs: it fits, and the plan is the one without the group (no worker is a standard type).
  catalog.quota_groups.back().vcpus = 4;
  const PlanResult fits = plan_exact(model_of(catalog), {0.8, 2400});
  const PlanResult plain = plan_exact(model_of(presets::resnet110_catalog()), {0.8, 2400});
  REQUIRE(fits.has_plan());
  CHECK(fits.counts == plain.counts);
  CHECK(fits.message == plain.message);
  CHECK(fits.quota_groups.empty());  // a group only the PS uses is not a constraint of the workers
}

TEST_CASE("a parameter server without known vCPUs or group is not counted") {
  Catalog catalog = presets::resnet110_catalog();
  catalog.quota_groups.push_back({kStandard, "Running On-Demand Standard instances", 0, Market::on_demand});
  const PlanResult plain = plan_exact(model_of(catalog), {0.8, 2400});
  REQUIRE(plain.has_plan());  // the PS names no group: the group of 0 vCPUs does not count it
  catalog.parameter_server.vcpus = 4;
  catalog.parameter_server.quota_group = kStandard;
  CHECK(plan_exact(model_of(catalog), {0.8, 2400}).reason == InfeasibleReason::no_instances);
}

TEST_CASE("the catalog refuses a parameter-server quota group it cannot apply, naming it") {
  Catalog catalog = presets::resnet110_catalog();
  const auto error_of = [&] {
    try {
      catalog.validate();
    } catch (const invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  catalog.parameter_server.vcpus = 4;
  CHECK(error_of() == "(accepted)");  // vCPUs without a group: informative
  catalog.parameter_server.quota_group = kStandard;
  CHECK(error_of() == "Catalog::validate: parameter_server.quota_group = \"L-1216C47A\": names no group of quota_groups (give its "
                      "value there, or leave quota_group out)");
  catalog.quota_groups.push_back({kStandard, "Standard", 64, Market::spot});
  CHECK(error_of() == "Catalog::validate: parameter_server.quota_group = \"L-1216C47A\": that quota group counts spot instances; the "
                      "parameter server runs on demand");
  catalog.quota_groups.back().market = Market::on_demand;
  CHECK(error_of() == "(accepted)");
  catalog.parameter_server.vcpus = 0;
  CHECK(error_of() == "Catalog::validate: parameter_server.vcpus = 0: is needed: the parameter server is counted by vCPU quota "
                      "group L-1216C47A");
  catalog.parameter_server.vcpus = -1;
  CHECK(error_of().find("parameter_server.vcpus = -1: must be between 0 and 100000") != std::string::npos);
  catalog.parameter_server.vcpus = 4;
  catalog.parameter_server.quota_group = "L-1216C47A\n";
  CHECK(error_of().find("parameter_server.quota_group") != std::string::npos);
}
