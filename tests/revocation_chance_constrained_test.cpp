// SPDX-License-Identifier: MIT
// Plans with a confidence level, and the simulation's re-planning replacement policy.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <spotdnn/plan/exact.hpp>
#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>
#include <spotdnn/revocation/replan.hpp>

using namespace spotdnn;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

Slo slo_of(double target_loss, double deadline_s) {
  Slo slo;
  slo.target_loss = target_loss;
  slo.deadline_s = deadline_s;
  return slo;
}

/// Clusters within the quotas that meet the deadline without revocations and cost less than `cost_usd`.
std::size_t cheaper_feasible_clusters(const PerformanceModel& model, const Slo& slo, double cost_usd) {
  std::size_t found = 0;
  std::vector<int> c(model.worker_types().size(), 0);
  for (;;) {
    const Estimate e = model.estimate(c, slo.target_loss);
    if (e.workers > 0 && e.reaches_target() && e.training_time_s <= slo.deadline_s && e.cost_usd < cost_usd) ++found;
    std::size_t k = 0;
    while (k < c.size() && ++c[k] > model.worker_types()[k].quota) c[k++] = 0;
    if (k == c.size()) break;
  }
  return found;
}

}  // namespace

TEST_CASE("the confidence plan is the cheapest plan whose simulated probability reaches the confidence") {
  const PerformanceModel model = preset_model();
  const Slo slo = slo_of(0.8, 2600);
  ConfidencePlanOptions options;
  options.confidence = 0.9;
  options.interruption.fallback_hazard_per_hour = 0.1;
  const ConfidencePlanResult r = plan_with_confidence(model, slo, options);
  REQUIRE(r.has_plan());
  CHECK(r.simulation.meets_deadline.estimate >= 0.9);
  CHECK(r.simulation.meets_deadline.trials == 2000);
  REQUIRE(r.deterministic.has_plan());
  REQUIRE(r.deterministic_probability.has_value());
  CHECK(r.deterministic_probability->estimate < 0.9);  // the point of the exercise
  // The first candidate is the exact planner's plan.
  REQUIRE_FALSE(r.simulated.empty());
  CHECK(r.simulated.front().cluster == r.deterministic.cluster);
  CHECK(r.simulated.front().cost_usd == doctest::Approx(r.deterministic.prediction.cost_usd).epsilon(1e-12));
  // Every cheaper plan meeting the deadline was simulated and fell short.
  CHECK(r.candidates_simulated == cheaper_feasible_clusters(model, slo, r.prediction.cost_usd) + 1);
  for (std::size_t i = 0; i + 1 < r.simulated.size(); ++i) {
    CHECK(r.simulated[i].probability.estimate < 0.9);
    CHECK(r.simulated[i].cost_usd <= r.simulated[i + 1].cost_usd);
  }
  CHECK(r.simulated.back().cluster == r.cluster);
  CHECK(r.prediction.training_time_s <= 2600);
  // Simulating the returned plan again with the same options reproduces its probability.
  const SimulationResult again =
      simulate(model, InterruptionModel(model, options.interruption), r.cluster, 0.8, 2600, options.simulate);
  CHECK(again.meets_deadline.successes == r.simulation.meets_deadline.successes);
}

TEST_CASE("without revocations the confidence plan is the deterministic plan with probability 1") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;
  options.interruption.fallback_hazard_per_hour = 0.0;
  options.simulate.scenarios = 100;
  const ConfidencePlanResult r = plan_with_confidence(model, slo_of(0.8, 2400), options);
  REQUIRE(r.has_plan());
  CHECK(r.cluster == r.deterministic.cluster);
  CHECK(r.simulation.meets_deadline.estimate == 1.0);
  CHECK(r.candidates_simulated == 1);
}

TEST_CASE("requiring the interval's lower end never gives a cheaper plan") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;
  options.interruption.fallback_hazard_per_hour = 0.1;
  options.simulate.scenarios = 1000;
  const ConfidencePlanResult estimate = plan_with_confidence(model, slo_of(0.8, 2600), options);
  options.require_lower_bound = true;
  const ConfidencePlanResult bound = plan_with_confidence(model, slo_of(0.8, 2600), options);
  REQUIRE(estimate.has_plan());
  REQUIRE(bound.has_plan());
  CHECK(bound.simulation.meets_deadline.lower >= 0.9);
  CHECK(bound.prediction.cost_usd >= estimate.prediction.cost_usd);
}

TEST_CASE("an unreachable confidence is infeasible and names the best probability found") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;
  options.confidence = 0.99;
  options.interruption.fallback_hazard_per_hour = 5.0;
  options.simulate.scenarios = 200;
  options.max_candidates_simulated = 50;
  const ConfidencePlanResult r = plan_with_confidence(model, slo_of(0.8, 2600), options);
  CHECK(r.status == Status::infeasible);
  CHECK(r.candidates_simulated == 50);
  CHECK(r.message.find("reaches probability 0.99") != std::string::npos);
  CHECK(r.message.find("the best") != std::string::npos);
  ConfidencePlanOptions bad;
  bad.confidence = 1.0;
  bad.interruption.fallback_hazard_per_hour = 0.1;
  CHECK_THROWS_AS((void)plan_with_confidence(model, slo_of(0.8, 2600), bad), spotdnn::invalid_argument);
}

TEST_CASE("re-planning at each notice meets the deadline more often than letting the survivors finish") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};  // 2340.7 s without revocations
  InterruptionOptions io;
  io.fallback_hazard_per_hour = 0.4;
  const InterruptionModel interruption(model, io);
  const Replanner replanner(model);
  SimulateOptions options;
  options.scenarios = 1000;
  options.seed = 3;
  const SimulationResult none = simulate(model, interruption, cluster, 0.8, 2600, options);
  options.replacement = Replacement::replan;
  options.replacement_planner = replanner.policy();
  const SimulationResult replanned = simulate(model, interruption, cluster, 0.8, 2600, options);
  CHECK(replanned.meets_deadline.lower > none.meets_deadline.upper);
  CHECK(replanned.mean_replacements > 0.0);
  // Deterministic across threads with the re-planning policy too.
  options.threads = 2;
  const SimulationResult threaded = simulate(model, interruption, cluster, 0.8, 2600, options);
  CHECK(threaded.meets_deadline.successes == replanned.meets_deadline.successes);
  CHECK(threaded.mean_cost_usd == replanned.mean_cost_usd);
}

TEST_CASE("a count box above the limit is refused before any planning or simulation, saying how to shrink it") {
  Catalog catalog = presets::resnet110_catalog();
  for (auto& type : catalog.instance_types) type.quota = 10000;  // 10,001^5 clusters
  const PerformanceModel model(presets::resnet110_workload(), catalog);
  ConfidencePlanOptions options;
  options.interruption.fallback_hazard_per_hour = 0.1;
  CHECK_THROWS_WITH_AS((void)plan_with_confidence(model, slo_of(0.8, 2600), options),
                       doctest::Contains("more clusters than options.max_enumerated_clusters (5e+07)"),
                       spotdnn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)plan_with_confidence(model, slo_of(0.8, 2600), options),
                       doctest::Contains("cap the workers (options.plan.max_workers)"), spotdnn::invalid_argument);
  // A worker cap caps every type's count too: 7^5 clusters, searched as usual.
  options.plan.max_workers = 6;
  options.simulate.scenarios = 200;
  const ConfidencePlanResult r = plan_with_confidence(model, slo_of(0.8, 2600), options);
  REQUIRE(r.deterministic.has_plan());
  REQUIRE_FALSE(r.simulated.empty());
  CHECK(r.simulated.front().cluster == r.deterministic.cluster);
  for (const ConfidenceCandidate& c : r.simulated) CHECK(c.cluster.total_workers() <= 6);
}
