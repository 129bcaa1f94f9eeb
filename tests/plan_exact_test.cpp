// SPDX-License-Identifier: MIT
// The exact planner against exhaustive enumeration, the preset plan, options and every infeasibility reason;
// at large quotas against references that stay exact where brute force cannot go.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/io/plan_json.hpp>
#include <spotdnn/planner.hpp>
#include <spotdnn/revocation.hpp>

#include "support/plan_comparison.hpp"

#include "../bench/planner_problems.hpp"

using namespace spotdnn;

namespace {


PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

/// bench_planner's BM_Exact_NoContention case: the synthetic catalog of `types` × `quota` without PS
/// contention, and its fastest plan (a budget no plan reaches).
struct Uncontended {
  PerformanceModel model;
  PlanResult fastest;
};
Uncontended uncontended_case(int types, int quota, std::uint32_t seed) {
  bench::SyntheticProblem p = bench::synthetic_problem(types, quota, seed);
  p.workload.contention = Contention{0.0, 0.0};
  PerformanceModel model(p.workload, p.catalog);
  PlanOptions fastest_options;
  fastest_options.budget_usd = 1e12;
  PlanResult fastest = plan_exact(model, {0.8}, fastest_options);
  return {std::move(model), std::move(fastest)};
}

/// One seeded random planning problem: up to 6 types with quotas up to 6, contention on or off, either
/// loss form, the PS charged or not, sometimes existing instances, a worker cap, a budget or duplicate types.
struct RandomProblem {
  Workload workload;
  Catalog catalog;
  Slo slo;
  PlanOptions options;
};

/// Sets the deadline of `p` to a factor drawn from [`low`, `high`] times the training time of a random
/// cluster (type k: 0 to max_count(k) workers, at least one of the first type), and, one time in
/// `budget_odds`, a budget of a factor from [`low`, `budget_high`] times that cluster's cost (half of those
/// without a deadline): feasible and infeasible problems both occur, and the coupled constraint often binds.
template <typename MaxCount>
void scale_slo_to_a_random_cluster(RandomProblem& p, std::mt19937& rng, MaxCount max_count, double low, double high,
                                   int budget_odds, double budget_high) {
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const PerformanceModel model(p.workload, p.catalog);
  std::vector<int> counts(model.worker_types().size(), 0);
  for (std::size_t k = 0; k < counts.size(); ++k) counts[k] = integer(0, max_count(model.worker_types()[k]));
  if (!counts.empty()) counts[0] = std::max(counts[0], 1);
  const Estimate e = model.estimate(counts, p.slo.target_loss, {p.options.charge_parameter_server});
  const double time_scale = e.reaches_target() && e.training_time_s > 0 ? e.training_time_s : 3600.0;
  const double cost_scale = e.reaches_target() && e.cost_usd > 0 ? e.cost_usd : 5.0;
  p.slo.deadline_s = time_scale * uniform(low, high);
  if (integer(0, budget_odds - 1) == 0) {
    p.options.budget_usd = cost_scale * uniform(low, budget_high);
    if (integer(0, 1) == 0) p.slo.deadline_s = std::numeric_limits<double>::infinity();
  }
}

RandomProblem random_problem(std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomProblem p;
  Workload& w = p.workload;
  w.name = "random";
  w.param_bytes = uniform(2e6, 40e6);
  w.required_bandwidth_bytes_per_s = uniform(50e6, 300e6);
  if (integer(0, 1) == 1) w.contention = {uniform(0.2, 1.0), uniform(-2.5, -0.3)};  // else none: P = 0
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
  constexpr int kGpus[] = {1, 2, 4, 8};
  constexpr int kBatch[] = {128, 256, 512, 1024};
  for (int k = 0; k < types; ++k) {
    InstanceType type;
    TypeProfile profile;
    if (k > 0 && integer(0, 9) == 0) {  // a duplicate of an earlier type: exact ties
      const int from = integer(0, k - 1);
      type = c.instance_types[from];
      profile = w.profiles.at(type.name);
    } else {
      type.gpus = kGpus[integer(0, 3)];
      type.price_usd_per_hour = uniform(0.1, 3.0);
      type.on_demand_price_usd_per_hour = integer(0, 3) == 0 ? 0.0 : type.price_usd_per_hour * uniform(2, 4);
      profile.batch_per_gpu = kBatch[integer(0, 3)];
      profile.compute_time_s = uniform(0.05, 2.0);
    }
    type.name = "t" + std::to_string(k);
    type.quota = integer(0, 6);
    c.instance_types.push_back(type);
    w.profiles.emplace(type.name, profile);
  }
  p.slo.target_loss = asymptote + uniform(0.02, 0.6);
  p.options.charge_parameter_server = integer(0, 1) == 1;
  if (integer(0, 3) == 0) {
    for (const auto& type : c.instance_types) {
      if (type.quota > 0 && integer(0, 2) == 0) p.options.minimum_counts[type.name] = integer(0, std::min(type.quota, 2));
    }
  }
  int quota_total = 0;
  int minimum_total = 0;
  for (const auto& type : c.instance_types) quota_total += type.quota;
  for (const auto& [name, count] : p.options.minimum_counts) minimum_total += count;
  if (integer(0, 3) == 0) p.options.max_workers = integer(std::max(1, minimum_total), std::max(1, quota_total));

  scale_slo_to_a_random_cluster(p, rng, [](const WorkerType& type) { return type.quota; }, 0.3, 2.5, 5, 2.0);
  return p;
}

/// A random problem whose quotas (6–10, at most 4 types) usually exceed the worker totals of the best
/// plans, so the search meets simplex nodes (every free type can take every remaining worker), with a
/// deadline or budget on the scale of a random cluster so the coupled constraint often binds.
RandomProblem wide_quota_problem(std::uint32_t seed) {
  RandomProblem p = random_problem(seed);
  std::mt19937 rng(seed + 7919);
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  while (p.catalog.instance_types.size() > 4) p.catalog.instance_types.pop_back();
  for (auto& type : p.catalog.instance_types) type.quota = integer(6, 10);
  p.options.minimum_counts.clear();
  p.options.max_workers.reset();
  p.options.budget_usd.reset();
  scale_slo_to_a_random_cluster(p, rng, [](const WorkerType&) { return 4; }, 0.4, 1.5, 4, 1.5);
  return p;
}

/// A random problem with 1–3 types and quotas of 10,000, strong PS contention (so the best plans use a few
/// dozen workers at most), either loss form, the options of random_problem.
RandomProblem large_quota_problem(std::uint32_t seed) {
  RandomProblem p = random_problem(seed);
  std::mt19937 rng(seed + 104729);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  while (p.catalog.instance_types.size() > 3) {
    p.options.minimum_counts.erase(p.catalog.instance_types.back().name);
    p.catalog.instance_types.pop_back();
  }
  for (auto& type : p.catalog.instance_types) type.quota = 10000;
  p.workload.contention = {uniform(0.5, 1.0), uniform(-2.0, -0.5)};
  p.workload.required_bandwidth_bytes_per_s = uniform(150e6, 300e6);
  p.catalog.parameter_server.bandwidth_bytes_per_s = uniform(0.4e9, 1.2e9);
  if (p.options.max_workers) p.options.max_workers = integer(std::max(1, *p.options.max_workers / 4), 30000);
  return p;
}

/// A random problem with 1–6 types and quotas of 50–200, every option of random_problem.
RandomProblem medium_quota_problem(std::uint32_t seed) {
  RandomProblem p = random_problem(seed);
  std::mt19937 rng(seed + 15485863);
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (auto& type : p.catalog.instance_types) type.quota = type.quota == 0 ? 0 : integer(50, 200);
  if (p.options.max_workers) p.options.max_workers = integer(std::max(1, *p.options.max_workers), 1200);
  return p;
}

/// Lower bounds on the training time and cost of every cluster of exactly n workers, from the model's
/// public figures only. With a_k = 1/T_k(n) and ĵ_k = s·(γ2·b_k + γ3) − γ1 (s = sqrt(n)/(L − asymptote);
/// CC form: sqrt(γ4·n)/(L − asymptote) <= s as R >= 0), a cluster x reaching the target has
/// j >= Σ x_k a_k ĵ_k / I with I = Σ x_k a_k (b_w is the a-weighted average batch), so time = j/I >= J/I²
/// with J = Σ x_k a_k ĵ_k. If every ĵ_k > 0, Cauchy–Schwarz gives I² <= n·Σ x_k a_k², so
/// J/I² >= Σ x_k a_k² (ĵ_k/(n a_k)) / Σ x_k a_k² >= min_k ĵ_k T_k(n)/n, and I² <= P·Σ x_k a_k²/p_k
/// (P = Σ x_k p_k) gives P·J/I² >= min_k p_k ĵ_k T_k(n). So 3600·cost = (P_ps + P)·time >= P_ps·time_lb +
/// min_k p_k ĵ_k T_k(n). Independent of the planner's code.
struct TotalLowerBound {
  double time_s = 0;
  double cost_usd = 0;
};

TotalLowerBound total_lower_bound(const PerformanceModel& model, double target_loss, bool charge_ps, int n) {
  const LossModel& loss = model.workload().loss_model;
  const std::vector<double>& g = loss.gamma;
  const double spread = loss.form == LossForm::cc ? std::sqrt(std::max(0.0, g[3])) : 1.0;
  const double s = std::sqrt(double(n)) * spread / (target_loss - loss.asymptote());
  double time = std::numeric_limits<double>::infinity();
  double price_time = time;
  for (std::size_t k = 0; k < model.worker_types().size(); ++k) {
    const WorkerType& w = model.worker_types()[k];
    const double j = s * (g[1] * w.batch + g[2]) - g[0];
    if (!(j > 0)) return {};
    const double t = model.worker_iteration_time_s(k, n);
    time = std::min(time, j * t / n);
    price_time = std::min(price_time, w.price_usd_per_hour * j * t);
  }
  TotalLowerBound b;
  b.time_s = time * (1 - 1e-9);
  const double ps = charge_ps ? model.catalog().parameter_server.price_usd_per_hour : 0.0;
  b.cost_usd = (ps * time + price_time) / 3600 * (1 - 1e-9);
  return b;
}

/// The largest total n <= `most` of any cluster that could meet the deadline and the budget and have a cost
/// (time, for min_time) within a relative 1e-6 of `value`, by total_lower_bound; 0 if none.
int largest_relevant_total(const PerformanceModel& model, double target_loss, bool charge_ps, int most, PlanObjective objective,
                           double value, double deadline_s, double budget_usd) {
  int largest = 0;
  for (int n = 1; n <= most; ++n) {
    const TotalLowerBound b = total_lower_bound(model, target_loss, charge_ps, n);
    const double key = objective == PlanObjective::min_cost ? b.cost_usd : b.time_s;
    if (b.time_s <= deadline_s * (1 + 1e-6) && b.cost_usd <= budget_usd * (1 + 1e-6) && key <= value * (1 + 1e-6)) largest = n;
  }
  return largest;
}

/// The reference for large quotas: brute force on the catalog with every quota cut to `total` and at most
/// `total` workers, where `total` is at least the total of every cluster that could beat or tie the
/// planner's answers (its plan, its fastest plan, its cheapest plan), by total_lower_bound. Any cluster
/// better than an answer lies in that box, so brute force there is exact. `box` returns the box's size.
PlanResult capped_brute_force(const RandomProblem& p, const PlanResult& exact, double& box, double max_box = 2e6) {
  const PerformanceModel model(p.workload, p.catalog);
  const bool ps = p.options.charge_parameter_server;
  const double inf = std::numeric_limits<double>::infinity();
  const double budget = p.options.budget_usd.value_or(inf);
  int most = 0;
  for (const auto& type : p.catalog.instance_types) most += type.quota;
  if (p.options.max_workers) most = std::min(most, *p.options.max_workers);
  int total = 0;
  if (exact.has_plan()) {
    const double value = exact.objective == PlanObjective::min_cost ? exact.prediction.cost_usd : exact.prediction.training_time_s;
    total = std::max(total, largest_relevant_total(model, p.slo.target_loss, ps, most, exact.objective, value, p.slo.deadline_s, budget));
  }
  if (exact.fastest) {
    total = std::max(total, largest_relevant_total(model, p.slo.target_loss, ps, most, PlanObjective::min_time,
                                                   exact.fastest->training_time_s, inf, inf));
  }
  if (exact.cheapest) {
    total = std::max(total, largest_relevant_total(model, p.slo.target_loss, ps, most, PlanObjective::min_cost,
                                                   exact.cheapest->cost_usd, p.slo.deadline_s, inf));
  }
  int minimum_total = 0;
  for (const auto& [name, count] : p.options.minimum_counts) minimum_total += count;
  total = std::max({total, minimum_total, 1});
  Catalog capped = p.catalog;
  box = 1;
  for (auto& type : capped.instance_types) {
    type.quota = std::min(type.quota, total);
    box *= type.quota + 1;
  }
  PlanOptions options = p.options;
  options.max_workers = std::min(options.max_workers.value_or(total), total);
  if (box > max_box) return {};
  return plan_brute_force(PerformanceModel(p.workload, capped), p.slo, options);
}

void check_same(const PlanResult& exact, const PlanResult& brute) { test::check_same_plan(exact, brute); }

/// What a comparison over seeded random problems met, so that a test can check the generator covers the
/// cases it is meant to (and a comparison that passes is not vacuous).
struct Coverage {
  int compared = 0;
  int optimal = 0;
  int infeasible = 0;
  int budget_mode = 0;
  int with_minimum = 0;
  int capped = 0;
  int cc_form = 0;
  int mixed = 0;  ///< plans using two types or more

  void count(const RandomProblem& p, const PlanResult& exact) {
    ++compared;
    optimal += exact.status == Status::optimal;
    infeasible += exact.status == Status::infeasible;
    budget_mode += p.options.budget_usd.has_value();
    with_minimum += !p.options.minimum_counts.empty();
    capped += p.options.max_workers.has_value();
    cc_form += p.workload.loss_model.form == LossForm::cc;
    int used = 0;
    for (int c : exact.counts) used += c > 0;
    mixed += used >= 2;
  }
};

/// For seeds 1 to `seeds`: plans make(seed) with plan_exact and checks it against reference(p, model,
/// exact) (check_same); a reference that returns nothing skips the problem. Returns what was compared.
template <typename Make, typename Reference>
Coverage compare_exact_on_random_problems(std::uint32_t seeds, Make make, Reference reference) {
  Coverage seen;
  for (std::uint32_t seed = 1; seed <= seeds; ++seed) {
    const RandomProblem p = make(seed);
    const PerformanceModel model(p.workload, p.catalog);
    CAPTURE(seed);
    const PlanResult exact = plan_exact(model, p.slo, p.options);
    const std::optional<PlanResult> expected = reference(p, model, exact);
    if (!expected) continue;
    check_same(exact, *expected);
    seen.count(p, exact);
  }
  return seen;
}

/// The brute-force reference of compare_exact_on_random_problems.
std::optional<PlanResult> brute_force_reference(const RandomProblem& p, const PerformanceModel& model, const PlanResult&) {
  return plan_brute_force(model, p.slo, p.options);
}

}  // namespace

TEST_CASE("the exact planner returns brute force's plan on 2000 seeded random problems") {
  const Coverage seen = compare_exact_on_random_problems(2000, random_problem, brute_force_reference);
  CHECK(seen.optimal > 800);
  CHECK(seen.infeasible > 200);
  CHECK(seen.budget_mode > 200);
  CHECK(seen.with_minimum > 200);
  CHECK(seen.capped > 200);
  CHECK(seen.cc_form > 800);
}

TEST_CASE("the exact planner returns brute force's plan on 600 problems whose quotas exceed the worker totals") {
  // Targets the simplex bound (exact.hpp, header (f)): the minimum over the feasible vertices and the
  // crossings of the deadline (budget) on edges. Dropping the crossings makes this test fail.
  const Coverage seen = compare_exact_on_random_problems(600, wide_quota_problem, brute_force_reference);
  CHECK(seen.optimal > 300);
  CHECK(seen.budget_mode > 100);
  CHECK(seen.mixed > 50);  // plans mixing types: the deadline binds between a cheap and a fast type
}

TEST_CASE("the exact planner finds {p3.2xlarge: 2, g3.8xlarge: 4} on the preset at loss 0.8 and 2400 s") {
  const PerformanceModel model = preset_model();
  for (bool charge_ps : {true, false}) {
    PlanOptions options;
    options.charge_parameter_server = charge_ps;
    const PlanResult r = plan_exact(model, {0.8, 2400}, options);
    REQUIRE(r.status == Status::optimal);
    CHECK(r.cluster == Cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}});
    CHECK(r.prediction.training_time_s == doctest::Approx(2340.729669).epsilon(1e-9));
    CHECK(r.prediction.cost_usd == doctest::Approx(charge_ps ? 3.097565595 : 2.97272668).epsilon(1e-8));
    CHECK(r.deadline_slack_s == doctest::Approx(2400 - 2340.729669).epsilon(1e-9));
    CHECK(r.counts == std::vector<int>{2, 0, 4, 0, 0});
  }
}

TEST_CASE("ties break towards the faster, then the smaller, then the earlier-listed plan") {
  // Two identical types: every plan has a twin of equal cost and time; the earlier type must win.
  Workload w = presets::resnet110_workload();
  Catalog c = presets::resnet110_catalog();
  c.instance_types.resize(1);
  InstanceType twin = c.instance_types[0];
  twin.name = "p3.2xlarge-twin";
  c.instance_types.push_back(twin);
  w.profiles.emplace(twin.name, w.profiles.at("p3.2xlarge"));
  const PerformanceModel model(w, c);
  const PlanResult exact = plan_exact(model, {0.8, 3000});
  const PlanResult brute = plan_brute_force(model, {0.8, 3000});
  REQUIRE(exact.status == Status::optimal);
  CHECK(exact.counts == brute.counts);
  CHECK(exact.counts[0] >= exact.counts[1]);
}

TEST_CASE("a target at or below the loss asymptote is infeasible and reports the asymptote") {
  const PlanResult r = plan_exact(preset_model(), {0.5, 2400});
  CHECK(r.status == Status::infeasible);
  CHECK(r.reason == InfeasibleReason::below_asymptote);
  CHECK(r.loss_asymptote == 0.5);
  CHECK(r.message.find("asymptote 0.5") != std::string::npos);
}

TEST_CASE("a deadline shorter than the fastest achievable time reports that time and its plan") {
  const PerformanceModel model = preset_model();
  const PlanResult r = plan_exact(model, {0.8, 600});
  REQUIRE(r.status == Status::infeasible);
  CHECK(r.reason == InfeasibleReason::deadline_too_short);
  REQUIRE(r.fastest.has_value());
  CHECK(r.fastest->training_time_s > 600);
  // It is the fastest: brute force over every cluster agrees, and no cluster is faster.
  PlanOptions fastest;
  fastest.budget_usd = 1e9;
  const PlanResult brute = plan_brute_force(model, {0.8}, fastest);
  REQUIRE(brute.status == Status::optimal);
  CHECK(r.fastest->cluster == brute.cluster);
  CHECK(r.fastest->training_time_s == doctest::Approx(brute.prediction.training_time_s).epsilon(1e-12));
  // Just above that time the deadline is feasible.
  CHECK(plan_exact(model, {0.8, r.fastest->training_time_s * (1 + 1e-9)}).status == Status::optimal);
}

TEST_CASE("an empty catalog, unprofiled types or all quotas zero are infeasible with the reason") {
  Catalog empty = presets::resnet110_catalog();
  empty.instance_types.clear();
  const PlanResult none = plan_exact(PerformanceModel(presets::resnet110_workload(), empty), {0.8, 2400});
  CHECK(none.status == Status::infeasible);
  CHECK(none.reason == InfeasibleReason::no_instances);
  CHECK(none.message.find("no instance types") != std::string::npos);

  Catalog zero = presets::resnet110_catalog();
  for (auto& type : zero.instance_types) type.quota = 0;
  const PlanResult zero_quota = plan_exact(PerformanceModel(presets::resnet110_workload(), zero), {0.8, 2400});
  CHECK(zero_quota.reason == InfeasibleReason::no_instances);
  CHECK(zero_quota.message.find("quota of zero") != std::string::npos);

  Workload unprofiled = presets::resnet110_workload();
  unprofiled.profiles.clear();
  const PlanResult no_profile = plan_exact(PerformanceModel(unprofiled, presets::resnet110_catalog()), {0.8, 2400});
  CHECK(no_profile.reason == InfeasibleReason::no_instances);
  CHECK(no_profile.message.find("profiles none") != std::string::npos);
}

TEST_CASE("budget mode returns the fastest plan within the budget, or the cheapest cost when the budget is too small") {
  const PerformanceModel model = preset_model();
  PlanOptions options;
  options.budget_usd = 4.0;
  const PlanResult r = plan_exact(model, {0.8}, options);
  REQUIRE(r.status == Status::optimal);
  CHECK(r.objective == PlanObjective::min_time);
  CHECK(r.prediction.cost_usd <= 4.0);
  const PlanResult brute = plan_brute_force(model, {0.8}, options);
  CHECK(r.counts == brute.counts);

  const PlanResult cheapest = plan_exact(model, {0.8, 2400});
  options.budget_usd = cheapest.prediction.cost_usd * 0.99;
  const PlanResult poor = plan_exact(model, {0.8, 2400}, options);
  REQUIRE(poor.status == Status::infeasible);
  CHECK(poor.reason == InfeasibleReason::over_budget);
  REQUIRE(poor.cheapest.has_value());
  CHECK(poor.cheapest->cost_usd == doctest::Approx(cheapest.prediction.cost_usd).epsilon(1e-12));
  CHECK(poor.cheapest->cluster == cheapest.cluster);
}

TEST_CASE("existing instances stay in the plan and the worker cap holds") {
  const PerformanceModel model = preset_model();
  PlanOptions options;
  options.minimum_counts["p2.8xlarge"] = 1;
  const PlanResult kept = plan_exact(model, {0.8, 2400}, options);
  REQUIRE(kept.status == Status::optimal);
  CHECK(kept.cluster.count("p2.8xlarge") >= 1);
  CHECK(kept.counts == plan_brute_force(model, {0.8, 2400}, options).counts);

  PlanOptions capped;
  capped.max_workers = 4;
  const PlanResult small = plan_exact(model, {0.8, 3000}, capped);
  REQUIRE(small.status == Status::optimal);
  CHECK(small.prediction.workers <= 4);
  CHECK(small.counts == plan_brute_force(model, {0.8, 3000}, capped).counts);
}

TEST_CASE("per-type markets price a type on-demand and reject an unknown on-demand price") {
  const PerformanceModel model = preset_model();
  PlanOptions options;
  options.markets["p3.2xlarge"] = Market::on_demand;
  options.markets["g3.8xlarge"] = Market::on_demand;
  const PlanResult r = plan_exact(model, {0.8, 2400}, options);
  REQUIRE(r.status == Status::optimal);
  const PlanResult spot = plan_exact(model, {0.8, 2400});
  CHECK(r.prediction.cost_usd > spot.prediction.cost_usd);
  for (const auto& part : r.prediction.per_type) {
    if (part.type == "p3.2xlarge") {
      CHECK(part.market == Market::on_demand);
      CHECK(part.price_usd_per_hour == 3.06);
    }
  }
  CHECK(r.counts == plan_brute_force(model, {0.8, 2400}, options).counts);

  Catalog catalog = presets::resnet110_catalog();
  catalog.instance_types[0].on_demand_price_usd_per_hour = 0;
  const PerformanceModel unknown(presets::resnet110_workload(), catalog);
  CHECK_THROWS_WITH_AS((void)plan_exact(unknown, {0.8, 2400}, options),
                       doctest::Contains("options.markets[\"p3.2xlarge\"] = on-demand"), invalid_argument);
}

TEST_CASE("bad planner input throws naming the field") {
  const PerformanceModel model = preset_model();
  CHECK_THROWS_WITH_AS((void)plan_exact(model, {0.8, -1}), doctest::Contains("slo.deadline_s = -1"), invalid_argument);
  CHECK_THROWS_WITH_AS((void)plan_exact(model, {std::nan(""), 100}), doctest::Contains("slo.target_loss"), invalid_argument);
  CHECK_THROWS_WITH_AS((void)plan_exact(model, {0.8}), doctest::Contains("slo.deadline_s = inf"), invalid_argument);
  PlanOptions options;
  options.minimum_counts["p3.2xlarge"] = 3;
  CHECK_THROWS_WITH_AS((void)plan_exact(model, {0.8, 2400}, options), doctest::Contains("between 0 and the type's quota (2)"),
                       invalid_argument);
  options.minimum_counts = {{"x1.large", 1}};
  CHECK_THROWS_WITH_AS((void)plan_exact(model, {0.8, 2400}, options), doctest::Contains("unknown instance type"), invalid_argument);
  options.minimum_counts = {{"p2.8xlarge", 2}};
  options.max_workers = 1;
  CHECK_THROWS_WITH_AS((void)plan_exact(model, {0.8, 2400}, options), doctest::Contains("options.max_workers = 1"), invalid_argument);
  PlanOptions budget;
  budget.budget_usd = 0;
  CHECK_THROWS_WITH_AS((void)plan_exact(model, {0.8, 2400}, budget), doctest::Contains("options.budget_usd = 0"), invalid_argument);
}

TEST_CASE("brute force refuses problems above its size limit") {
  BruteForceOptions limits;
  limits.max_clusters = 1000;
  CHECK_THROWS_WITH_AS((void)plan_brute_force(preset_model(), {0.8, 2400}, {}, limits), doctest::Contains("use plan_exact"),
                       invalid_argument);
}

TEST_CASE("with quotas of 10,000 the exact planner returns the plan of brute force over the totals that can matter") {
  // Brute force over 10,000^types clusters is impossible; total_lower_bound (independent of the planner)
  // shows that every cluster able to beat the planner's answers has few workers, and brute force over
  // those is exact. This checks the search over ranges of totals (exact.hpp, header (g)).
  const Coverage seen = compare_exact_on_random_problems(
      240, large_quota_problem,
      [](const RandomProblem& p, const PerformanceModel&, const PlanResult& exact) -> std::optional<PlanResult> {
        double box = 0;
        PlanResult brute = capped_brute_force(p, exact, box);
        if (box > 2e6) return std::nullopt;  // contention too weak to keep the relevant totals small
        return brute;
      });
  CHECK(seen.compared > 200);
  CHECK(seen.optimal > 80);
  CHECK(seen.infeasible > 20);
  CHECK(seen.budget_mode > 20);
}

TEST_CASE("with quotas of 50-200 the search over ranges of totals returns the every-total reference's plan") {
  // The reference visits every total with its own root bound and every count of a type one by one (the
  // search before ranges of totals and halved count ranges), with the same bounds (a)-(f) and leaves.
  const Coverage seen = compare_exact_on_random_problems(
      150, medium_quota_problem, [](const RandomProblem& p, const PerformanceModel& model, const PlanResult&) {
        return std::optional<PlanResult>(
            detail::plan_exact_in_order(model, p.slo, p.options, detail::ExactSearchOrder::every_total));
      });
  CHECK(seen.optimal > 50);
  CHECK(seen.budget_mode > 15);
  CHECK(seen.cc_form > 50);
}

TEST_CASE("the preset with quotas of 10,000 plans, budgets and diagnoses like brute force over the totals that can matter") {
  const bench::SyntheticProblem preset = bench::preset_problem(10000);
  RandomProblem p{preset.workload, preset.catalog, {0.8, 2400}, {}};
  const PerformanceModel model(p.workload, p.catalog);
  struct Mode {
    Slo slo;
    std::optional<double> budget_usd;
    Status status;
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (const Mode& mode : {Mode{{0.8, 2400}, std::nullopt, Status::optimal}, Mode{{0.8, inf}, 5.0, Status::optimal},
                           Mode{{0.8, 600}, std::nullopt, Status::infeasible}, Mode{{0.8, 2400}, 1.0, Status::infeasible}}) {
    p.slo = mode.slo;
    p.options.budget_usd = mode.budget_usd;
    CAPTURE(mode.slo.deadline_s);
    const PlanResult exact = plan_exact(model, p.slo, p.options);
    CHECK(exact.status == mode.status);
    // Few totals and nodes: the thousands of totals the quotas allow are bounded as ranges.
    CHECK(exact.stats.worker_totals <= 4);
    CHECK(exact.stats.nodes <= 20);
    double box = 0;
    const PlanResult brute = capped_brute_force(p, exact, box, 2e7);
    CAPTURE(box);
    REQUIRE(box <= 2e7);
    check_same(exact, brute);
  }
  // The cheapest plan is p3.2xlarge×3 (the preset's quota of 2 forced a mix).
  const PlanResult r = plan_exact(model, {0.8, 2400});
  CHECK(r.cluster == Cluster{{"p3.2xlarge", 3}});
}

TEST_CASE("100 types with quotas of 1,000 plan, budget and diagnose like the every-total reference") {
  const bench::SyntheticProblem synthetic = bench::synthetic_problem(100, 1000, 1);
  const PerformanceModel model(synthetic.workload, synthetic.catalog);
  PlanOptions fastest_options;
  fastest_options.budget_usd = 1e12;
  const PlanResult fastest = plan_exact(model, {0.8}, fastest_options);
  REQUIRE(fastest.status == Status::optimal);
  const double t = fastest.prediction.training_time_s;
  const PlanResult cheapest = plan_exact(model, {0.8, 1.5 * t});
  REQUIRE(cheapest.status == Status::optimal);
  PlanOptions budget;
  budget.budget_usd = 1.2 * cheapest.prediction.cost_usd;
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& slo_options : {std::pair{Slo{0.8, 1.5 * t}, PlanOptions{}}, std::pair{Slo{0.8, inf}, budget},
                                  std::pair{Slo{0.8, 0.9 * t}, PlanOptions{}}}) {
    const Slo& slo = slo_options.first;
    const PlanOptions& options = slo_options.second;
    CAPTURE(slo.deadline_s);
    const PlanResult exact = plan_exact(model, slo, options);
    CHECK(exact.stats.worker_totals <= 10);
    const PlanResult reference = detail::plan_exact_in_order(model, slo, options, detail::ExactSearchOrder::every_total);
    check_same(exact, reference);
  }
}

TEST_CASE("quotas at the documented maximum of 100,000 give the plans of quotas of 10,000") {
  // Every plan that matters has a few dozen workers, so the extra 450,000 totals change nothing.
  const bench::SyntheticProblem largest = bench::preset_problem(kMaxQuota);
  const bench::SyntheticProblem large = bench::preset_problem(10000);
  const PerformanceModel largest_model(largest.workload, largest.catalog);
  const PerformanceModel large_model(large.workload, large.catalog);
  const double inf = std::numeric_limits<double>::infinity();
  PlanOptions budget;
  budget.budget_usd = 5;
  for (const auto& slo_options : {std::pair{Slo{0.8, 600}, PlanOptions{}}, std::pair{Slo{0.8, 2400}, PlanOptions{}},
                                  std::pair{Slo{0.8, 1e9}, PlanOptions{}}, std::pair{Slo{0.8, inf}, budget}}) {
    const Slo& slo = slo_options.first;
    const PlanOptions& options = slo_options.second;
    CAPTURE(slo.deadline_s);
    const PlanResult a = plan_exact(largest_model, slo, options);
    const PlanResult b = plan_exact(large_model, slo, options);
    check_same(a, b);
    CHECK(a.stats.worker_totals <= 4);
  }
}

TEST_CASE("with quotas of 10,000 the sliding window, brute force and the frontier answer at once") {
  const bench::SyntheticProblem preset = bench::preset_problem(10000);
  const PerformanceModel model(preset.workload, preset.catalog);
  // The window walks the sorted instances run by run: a window inside one run is offered once.
  const PlanResult window = plan_sliding_window(model, {0.8, 2400});
  REQUIRE(window.status == Status::feasible);
  CHECK(window.prediction.cost_usd >= plan_exact(model, {0.8, 2400}).prediction.cost_usd * (1 - 1e-12));
  CHECK(window.stats.nodes < 1000);
  const SlidingWindowBounds bounds = sliding_window_bounds(model, {0.8, 2400});
  CHECK(bounds.lower_workers >= 1);
  CHECK(bounds.upper_workers < 50000);
  // Brute force refuses before enumerating anything.
  CHECK_THROWS_WITH_AS((void)plan_brute_force(model, {0.8, 2400}), doctest::Contains("use plan_exact"), invalid_argument);
  // The frontier over deadlines from 1 s to 1e9 s: each step is the exact optimum at its deadline.
  FrontierOptions options;
  options.min_deadline_s = 1;
  options.max_deadline_s = 1e9;
  const Frontier f = cost_deadline_frontier(model, 0.8, options);
  REQUIRE(f.status == Status::optimal);
  CHECK(f.steps.size() > 5);
  CHECK(f.steps.size() < 100);
  for (const FrontierStep& step : f.steps) {
    const PlanResult at = plan_exact(model, {0.8, step.to_deadline_s});
    CHECK(at.counts == step.counts);
  }
}

namespace {

/// The model's loss at iteration 0 for `cluster` (docs/model.md eq. (6) at j = 0), computed here.
double loss_at_iteration_zero(const PerformanceModel& model, const Cluster& cluster, double target_loss) {
  const Estimate e = model.estimate(model.counts_of(cluster), target_loss);
  const LossModel& loss = model.workload().loss_model;
  const double n = e.workers;
  return loss.form == LossForm::seed ? loss_seed_form<double>(0.0, n, e.weighted_batch, loss.gamma.data())
                                     : loss_cc_form<double>(0.0, n, e.weighted_batch, e.convergence_coefficient, loss.gamma.data());
}

/// Checks a planner's answer when some cluster meets the target at start: no plan, and a message naming
/// the cluster in `fastest` with the model's loss at iteration 0.
void check_met_at_start(const PerformanceModel& model, const PlanResult& r, double target_loss) {
  REQUIRE(r.status == Status::target_met_at_start);
  CHECK_FALSE(r.has_plan());
  CHECK(r.cluster.empty());
  CHECK(r.counts.empty());
  CHECK(r.reason == InfeasibleReason::none);
  REQUIRE(r.fastest.has_value());
  CHECK(r.fastest->status == Status::target_met_at_start);
  CHECK(r.fastest->training_time_s == 0.0);
  const double at_start = loss_at_iteration_zero(model, r.fastest->cluster, target_loss);
  CHECK(at_start <= target_loss);
  std::string named;
  for (const auto& type : model.worker_types()) {
    if (const int count = r.fastest->cluster.count(type.name); count > 0) {
      named += (named.empty() ? "" : ",") + type.name + "=" + std::to_string(count);
    }
  }
  CHECK(r.message == "the target loss " + detail::format_number(target_loss) +
                         " is met before training starts: the loss model gives " + detail::format_readable(at_start) +
                         " at iteration 0 for " + named + ", a cluster within the quotas; nothing to train");
}

}  // namespace

TEST_CASE("a target the loss model meets before training is target_met_at_start for every planner, never a $0 plan") {
  // The issue: `spotdnn plan --target-loss 1.6 --deadline 3600` returned p2.8xlarge=1 at $0 as optimal.
  const PerformanceModel model = preset_model();
  const Slo slo{1.6, 3600};
  const PlanResult exact = plan_exact(model, slo);
  check_met_at_start(model, exact, 1.6);
  CHECK(exact.fastest->cluster == Cluster{{"p2.8xlarge", 1}});
  const PlanResult brute = plan_brute_force(model, slo);
  check_met_at_start(model, brute, 1.6);
  CHECK(brute.message == exact.message);
  const PlanResult window = plan_sliding_window(model, slo);
  check_met_at_start(model, window, 1.6);
  CHECK(window.message == exact.message);

  PlanOptions budget;  // budget mode, no deadline: the same answer
  budget.budget_usd = 5.0;
  const PlanResult fastest = plan_exact(model, {1.6}, budget);
  check_met_at_start(model, fastest, 1.6);
  CHECK(fastest.message == exact.message);
  CHECK(plan_brute_force(model, {1.6}, budget).message == exact.message);

  // A cluster that must stay still leaves p2.8xlarge=1 out of reach: the named cluster includes it.
  PlanOptions keep;
  keep.minimum_counts["p3.2xlarge"] = 1;
  const PlanResult kept = plan_exact(model, slo, keep);
  const PlanResult kept_brute = plan_brute_force(model, slo, keep);
  CHECK(kept.status == kept_brute.status);
  CHECK(kept.message == kept_brute.message);
  if (kept.status == Status::target_met_at_start) CHECK(kept.fastest->cluster.count("p3.2xlarge") >= 1);

  // The frontier and the confidence search through plan_exact say the same.
  FrontierOptions frontier_options;
  frontier_options.min_deadline_s = 600;
  frontier_options.max_deadline_s = 7200;
  const Frontier frontier = cost_deadline_frontier(model, 1.6, frontier_options);
  CHECK(frontier.status == Status::target_met_at_start);
  CHECK(frontier.steps.empty());
  CHECK(frontier.message == exact.message);
  ConfidencePlanOptions confidence;
  confidence.confidence = 0.9;
  confidence.interruption.fallback_hazard_per_hour = 0.1;
  const ConfidencePlanResult chance = plan_with_confidence(model, slo, confidence);
  CHECK(chance.status == Status::target_met_at_start);
  CHECK_FALSE(chance.has_plan());
  CHECK(chance.message == exact.message);
  CHECK(chance.candidates_simulated == 0);

  // Just below every cluster's loss at iteration 0 there is training to plan again.
  const PlanResult trains = plan_exact(model, {0.8, 3600});
  CHECK(trains.status == Status::optimal);
}

TEST_CASE("on 1500 seeded random problems with targets near the loss at iteration 0 every planner finds a cluster meeting it at start iff one exists") {
  // Ground truth by enumerating every cluster here; exact and brute force must name the same cluster
  // (the tie-break winner), and the sliding window (which may skip it in its windows) must agree too.
  int met = 0;
  int not_met = 0;
  int window_compared = 0;
  for (std::uint32_t seed = 1; seed <= 1500; ++seed) {
    RandomProblem p = random_problem(seed);
    std::mt19937 rng(seed + 31337);
    const PerformanceModel model(p.workload, p.catalog);
    CAPTURE(seed);
    if (model.worker_types().empty()) continue;
    // The target: a random cluster's loss at iteration 0, scaled a little, so some problems have clusters
    // meeting it at start and some do not.
    std::vector<int> counts(model.worker_types().size(), 0);
    for (std::size_t k = 0; k < counts.size(); ++k) counts[k] = std::uniform_int_distribution<int>(0, 3)(rng);
    counts[0] = std::max(counts[0], 1);
    const Estimate probe = model.estimate(counts, 1e9);
    const LossModel& loss = p.workload.loss_model;
    const double start = loss_at_start(loss, probe);
    if (!(std::isfinite(start) && start > loss.asymptote())) continue;
    p.slo.target_loss = loss.asymptote() + (start - loss.asymptote()) * std::uniform_real_distribution<double>(0.2, 1.0)(rng);
    // Enumerate: does any cluster the options allow meet the target at start?
    const detail::PlanProblem problem(model, p.slo, p.options, "test");
    bool exists = false;
    std::vector<int> c = problem.min_count;
    for (;;) {
      int workers = 0;
      for (int v : c) workers += v;
      if (workers >= problem.min_workers && workers <= problem.max_workers &&
          problem.model().estimate(c.data(), p.slo.target_loss, problem.predict).outcome == TargetOutcome::met_at_start) {
        exists = true;
      }
      std::size_t k = 0;
      while (k < c.size() && ++c[k] > problem.max_count[k]) c[k] = problem.min_count[k], ++k;
      if (k == c.size()) break;
    }
    const PlanResult exact = plan_exact(model, p.slo, p.options);
    const PlanResult brute = plan_brute_force(model, p.slo, p.options);
    CHECK((exact.status == Status::target_met_at_start) == exists);
    check_same(exact, brute);
    CHECK(exact.message == brute.message);
    if (exists) {
      check_met_at_start(model, exact, p.slo.target_loss);
      ++met;
    } else {
      ++not_met;
    }
    if (p.options.minimum_counts.empty() && !p.options.budget_usd) {
      const PlanResult window = plan_sliding_window(model, p.slo, p.options);
      CHECK((window.status == Status::target_met_at_start) == exists);
      if (exists) CHECK(window.message == exact.message);
      ++window_compared;
    }
  }
  CHECK(met > 300);
  CHECK(not_met > 300);
  CHECK(window_compared > 400);
}

TEST_CASE("the sliding window reports target_met_at_start when only a non-contiguous mix of types meets the target at start") {
  // Seed form with γ2 < 0: the weighted batch of the fastest (A) and the slowest (C) type lands where
  // γ2·b_w + γ3 is barely positive, so {A, C} meets L = 0.501 at start (j = √2·0.036/0.001 − 100 < 0),
  // while every contiguous window ([A], [B], [C], [A,B], [B,C], [A,B,C]) needs j > 0 or never gets there.
  Workload w;
  w.name = "mix";
  w.param_bytes = 1e3;  // network time ~2e-5 s: the rates are the compute times'
  w.required_bandwidth_bytes_per_s = 1e8;
  w.loss_model = {LossForm::seed, {100.0, -0.001, 1.0, 0.5}};
  Catalog c;
  c.region = "test";
  c.parameter_server = {"ps", 0.1, 1e10};
  const std::vector<std::pair<std::string, std::pair<int, double>>> types = {
      {"A", {100, 1.0}}, {"B", {100, 1.1}}, {"C", {2000, 1.2}}};
  for (const auto& [name, profile] : types) {
    InstanceType type;
    type.name = name;
    type.price_usd_per_hour = 1.0;
    type.quota = 1;
    c.instance_types.push_back(type);
    TypeProfile p;
    p.batch_per_gpu = profile.first;
    p.compute_time_s = profile.second;
    w.profiles.emplace(name, p);
  }
  const PerformanceModel model(w, c);
  const Slo slo{0.501, 1e6};
  // The premise: {A, C} meets it at start and no window does.
  CHECK(model.estimate(std::vector<int>{1, 0, 1}, slo.target_loss).outcome == TargetOutcome::met_at_start);
  for (const std::vector<int>& window : {std::vector<int>{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {0, 1, 1}, {1, 1, 1}}) {
    CHECK(model.estimate(window, slo.target_loss).outcome != TargetOutcome::met_at_start);
  }
  const PlanResult exact = plan_exact(model, slo);
  check_met_at_start(model, exact, slo.target_loss);
  CHECK(exact.fastest->cluster == Cluster{{"A", 1}, {"C", 1}});
  CHECK(plan_brute_force(model, slo).message == exact.message);
  const PlanResult window = plan_sliding_window(model, slo);
  check_met_at_start(model, window, slo.target_loss);
  CHECK(window.message == exact.message);
}

TEST_CASE("without PS contention the exact search stays small: nearest completions, first-visit μ, ranges' relaxation") {
  // bench_planner's BM_Exact_NoContention at 30 types × quota 32 (exact.hpp, Search and (d), (g')). Node
  // counts are the search's own, deterministic: the fastest plan took 186 nodes before a total's root
  // offered its nearest completion, and the cheapest plan 57,498 nodes over 121 totals while the
  // first-visit keys ignored the deadline. (The plans themselves are checked against brute force at small
  // scale in the next case.)
  const auto [model, fastest] = uncontended_case(30, 32, 1);
  REQUIRE(fastest.has_plan());
  CHECK(fastest.stats.nodes <= 60);
  const PlanResult cheapest = plan_exact(model, {0.8, fastest.prediction.training_time_s * 1.5});
  REQUIRE(cheapest.has_plan());
  CHECK(cheapest.stats.nodes <= 300);
  CHECK(cheapest.stats.total_ranges > 0);  // no contention: every range the quotas bind gets (g')
}

TEST_CASE("a search that reaches its step limit answers with the best plan and a proven bound, or undecided") {
  // No PS contention, 30 types × quota 32 (bench_planner's BM_Exact_NoContention): the cheapest plan for
  // 1.5× the fastest time (seeds 1–2) and the fastest plan within 1.2× its cost (seed 1; seed 2's is not
  // proven within 53 million steps), searched again under step limits from 100 to 5.9 million (the proven
  // answers take 0.5, 3.5 and 14 million steps). Each answer must be
  // undecided (no plan, nothing claimed), feasible with a bound at most the optimum and a plan within the
  // SLO no better than the optimum, or the optimum itself; every kind must occur.
  int undecided = 0, bounded = 0, proven = 0;
  for (std::uint32_t seed : {1u, 2u}) {
    const auto [model, fastest] = uncontended_case(30, 32, seed);
    REQUIRE(fastest.status == Status::optimal);
    const Slo deadline{0.8, fastest.prediction.training_time_s * 1.5};
    const PlanResult cheapest = plan_exact(model, deadline);
    REQUIRE(cheapest.status == Status::optimal);
    CHECK_FALSE(cheapest.stats.stopped);
    CHECK_FALSE(cheapest.objective_lower_bound);
    PlanOptions budget;
    budget.budget_usd = 1.2 * cheapest.prediction.cost_usd;
    budget.max_search_steps = 30000000;
    const PlanResult quickest = seed == 1 ? plan_exact(model, {0.8}, budget) : cheapest;
    REQUIRE(quickest.status == Status::optimal);
    for (std::int64_t limit = 100; limit < 6000000; limit *= 3) {
      CAPTURE(seed);
      CAPTURE(limit);
      PlanOptions cost_limited;
      cost_limited.max_search_steps = limit;
      PlanOptions time_limited = budget;
      time_limited.max_search_steps = limit;
      std::vector<std::pair<PlanResult, PlanResult>> answers = {{plan_exact(model, deadline, cost_limited), cheapest}};
      if (seed == 1) answers.emplace_back(plan_exact(model, {0.8}, time_limited), quickest);
      for (const auto& [r, optimum] : answers) {
        const bool cost = r.objective == PlanObjective::min_cost;
        const double best = cost ? optimum.prediction.cost_usd : optimum.prediction.training_time_s;
        if (r.status == Status::undecided) {
          ++undecided;
          CHECK(r.stats.stopped);
          CHECK(r.stats.search_steps >= limit);  // a search stops only once it has used its steps
          CHECK(r.counts.empty());
          CHECK_FALSE(r.has_plan());
          CHECK(r.message.find("step limit of " + std::to_string(limit) + " steps") != std::string::npos);
        } else if (r.status == Status::feasible) {
          ++bounded;
          CHECK(r.stats.stopped);
          CHECK(r.stats.search_steps >= limit);  // a search stops only once it has used its steps
          REQUIRE(r.objective_lower_bound);
          const double value = cost ? r.prediction.cost_usd : r.prediction.training_time_s;
          CHECK(*r.objective_lower_bound > 0);  // these searches stop past their first ranges' positive keys
          CHECK(*r.objective_lower_bound <= best * (1 + 1e-9));
          CHECK(value >= best * (1 - 1e-9));
          CHECK(r.prediction.training_time_s <= r.deadline_s * (1 + 1e-9));
          if (!cost) CHECK(r.prediction.cost_usd <= *budget.budget_usd * (1 + 1e-9));
          CHECK(r.message.find("best plan found") == 0);
          CHECK(r.message.find("% above it") != std::string::npos);
          const io::Json j = io::to_json(r);
          CHECK(j.at("objective_lower_bound").get<double>() == *r.objective_lower_bound);
          CHECK(j.at("search").at("stopped").get<bool>());
        } else {
          ++proven;
          REQUIRE(r.status == Status::optimal);
          CHECK(r.counts == optimum.counts);
          CHECK_FALSE(r.stats.stopped);
          CHECK(io::to_json(r).at("objective_lower_bound").is_null());
        }
      }
    }
  }
  CHECK(undecided > 0);
  CHECK(bounded > 0);
  CHECK(proven > 0);
  PlanOptions none;
  none.max_search_steps = 0;
  CHECK_THROWS_WITH_AS((void)plan_exact(preset_model(), {0.8, 2400}, none), doctest::Contains("options.max_search_steps = 0"),
                       invalid_argument);
  none.max_search_steps = kMaxPlanSearchSteps + 1;
  CHECK_THROWS_WITH_AS((void)plan_exact(preset_model(), {0.8, 2400}, none), doctest::Contains("options.max_search_steps"),
                       invalid_argument);
}

TEST_CASE("a frontier whose search stops at the step limit claims nothing below its last proven step") {
  // The uncontended 30 × 32 case of the test above: the frontier from 1.05× to 1.5× the fastest time,
  // first without a limit (at most 40 steps), each step's own search measured. The limit is then set to
  // the most steps the first three searches took; the frontier must keep every step before the first
  // search that needs more, each the exact cheapest plan, and below them say "not known", never "no plan
  // is feasible".
  const auto [model, fastest] = uncontended_case(30, 32, 1);
  const double fastest_s = fastest.prediction.training_time_s;
  FrontierOptions options;
  options.min_deadline_s = 1.05 * fastest_s;
  options.max_deadline_s = 1.5 * fastest_s;
  options.max_steps = 40;
  const Frontier full = cost_deadline_frontier(model, 0.8, options);
  REQUIRE(full.status == Status::optimal);
  REQUIRE(full.steps.size() > 3);
  std::vector<std::int64_t> needed;  // from the longest deadline down, the frontier's own order
  for (auto step = full.steps.rbegin(); step != full.steps.rend(); ++step) {
    const PlanResult exact = plan_exact(model, {0.8, step->to_deadline_s});
    REQUIRE(exact.status == Status::optimal);
    needed.push_back(exact.stats.search_steps);
  }
  const std::int64_t limit = *std::max_element(needed.begin(), needed.begin() + 3);
  const auto first_over = std::find_if(needed.begin(), needed.end(), [&](std::int64_t n) { return n > limit; });
  REQUIRE(first_over != needed.end());  // else pick a case whose searches grow down the frontier
  const std::size_t kept = static_cast<std::size_t>(first_over - needed.begin());
  CAPTURE(limit);
  options.plan.max_search_steps = limit;
  const Frontier f = cost_deadline_frontier(model, 0.8, options);
  CAPTURE(f.message);
  REQUIRE(f.status == Status::feasible);
  REQUIRE(f.steps.size() == kept);
  for (std::size_t k = 0; k < kept; ++k) CHECK(f.steps[f.steps.size() - 1 - k].counts == full.steps[full.steps.size() - 1 - k].counts);
  CHECK(f.message.find("not known") != std::string::npos);
  CHECK(f.message.find("step limit") != std::string::npos);
  CHECK(f.message.find("no plan is feasible") == std::string::npos);
  options.plan.max_search_steps = 1000;
  const Frontier none = cost_deadline_frontier(model, 0.8, options);
  CHECK(none.status == Status::undecided);
  CHECK(none.steps.empty());
  CHECK(none.message.find("no proven plan") == 0);
  // Cut at max_steps rather than stopped: the plans below were not searched, which must not read as
  // "no plan is feasible below".
  options.plan.max_search_steps = kDefaultPlanSearchSteps;
  options.max_steps = 2;
  const Frontier cut = cost_deadline_frontier(model, 0.8, options);
  CHECK(cut.status == Status::optimal);
  CHECK(cut.message.find("not searched") != std::string::npos);
  CHECK(cut.message.find("no plan is feasible") == std::string::npos);
}

TEST_CASE("the corner benchmark families at small scale plan, budget and diagnose as brute force does") {
  // bench_planner's BM_Exact_NoContention (no PS contention: every iteration time is the same at every
  // total, and near-ties abound), BM_Exact_LargeCatalog (many types, small quotas: most types take 0) and
  // BM_Exact_QuotaGroups (vCPU quota groups that bind), scaled down until brute force can enumerate them.
  // The SLOs are the benchmarks': the cheapest plan for 1.5× the fastest time, the fastest within 1.2×
  // that plan's cost, and a deadline at 0.9× the fastest (the diagnosis).
  int compared = 0, optimal = 0, infeasible = 0;
  auto compare = [&](const PerformanceModel& model) {
    PlanOptions fastest_options;
    fastest_options.budget_usd = 1e12;
    const PlanResult fastest = plan_exact(model, {0.8}, fastest_options);
    REQUIRE(fastest.has_plan());
    const Slo slo{0.8, fastest.prediction.training_time_s * 1.5};
    const PlanResult cheapest = plan_exact(model, slo);
    check_same(cheapest, plan_brute_force(model, slo));
    PlanOptions budget;
    budget.budget_usd = 1.2 * cheapest.prediction.cost_usd;
    const Slo open{0.8};
    check_same(plan_exact(model, open, budget), plan_brute_force(model, open, budget));
    const Slo tight{0.8, fastest.prediction.training_time_s * 0.9};
    const PlanResult diagnosed = plan_exact(model, tight);
    check_same(diagnosed, plan_brute_force(model, tight));
    compared += 3;
    optimal += cheapest.has_plan();
    infeasible += diagnosed.status == Status::infeasible;
  };
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    bench::SyntheticProblem uncontended = bench::synthetic_problem(7, 3, seed);
    uncontended.workload.contention = Contention{0.0, 0.0};
    compare(PerformanceModel(uncontended.workload, uncontended.catalog));
    const bench::SyntheticProblem wide = bench::synthetic_problem(13, 1, seed);
    compare(PerformanceModel(wide.workload, wide.catalog));
    bench::SyntheticProblem grouped = bench::synthetic_problem(7, 3, seed);
    for (std::size_t k = 0; k < grouped.catalog.instance_types.size(); ++k) {
      InstanceType& t = grouped.catalog.instance_types[k];
      t.vcpus = 4 * t.gpus;
      t.spot_quota_group = "G" + std::to_string(k % 2);
    }
    for (int g = 0; g < 2; ++g) grouped.catalog.quota_groups.push_back({"G" + std::to_string(g), "group", 24, Market::spot});
    compare(PerformanceModel(grouped.workload, grouped.catalog));
  }
  CHECK(compared == 36);
  CHECK(optimal == 12);
  CHECK(infeasible == 12);
}
