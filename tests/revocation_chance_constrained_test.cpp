// SPDX-License-Identifier: MIT
// Plans with a confidence level, and the simulation's re-planning replacement policy.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <spotdnn/plan/exact.hpp>
#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>
#include <spotdnn/revocation/replan.hpp>

using namespace spotdnn;

namespace {

constexpr double kPi = 3.14159265358979323846;

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

TEST_CASE("the confidence plan is the cheapest candidate the sequential test accepts, after every cheaper one was decided") {
  const PerformanceModel model = preset_model();
  const Slo slo = slo_of(0.8, 2600);
  ConfidencePlanOptions options;  // the README example: level 0.9, tolerance 0 (asked is promised), error rate 0.05
  options.interruption.fallback_hazard_per_hour = 0.1;
  const ConfidencePlanResult r = plan_with_confidence(model, slo, options);
  REQUIRE(r.has_plan());
  CHECK(r.confidence == 0.9);
  CHECK(r.tolerance == 0);
  CHECK(r.error_rate == 0.05);
  CHECK(r.max_scenarios == 200000);
  // Accepted: the exact lower bound exceeds the level itself, with at most the cap of scenarios.
  CHECK(r.probability.lower > 0.9);
  CHECK(r.probability.trials <= 200000);
  CHECK(r.simulated.back().decision == ConfidenceDecision::meets);
  CHECK(r.simulation.meets_deadline.successes == r.probability.successes);
  CHECK(r.simulation.scenarios == r.probability.trials);
  REQUIRE(r.deterministic.has_plan());
  REQUIRE(r.deterministic_probability.has_value());
  CHECK(r.deterministic_probability->upper < 0.9);  // the point of the exercise: shown to fall short
  // The first candidate is the exact planner's plan.
  REQUIRE_FALSE(r.simulated.empty());
  CHECK(r.simulated.front().cluster == r.deterministic.cluster);
  CHECK(r.simulated.front().cost_usd == doctest::Approx(r.deterministic.prediction.cost_usd).epsilon(1e-12));
  // Every cheaper plan meeting the deadline was simulated and shown to fall short (none undecided here).
  CHECK(r.candidates_simulated == cheaper_feasible_clusters(model, slo, r.prediction.cost_usd) + 1);
  CHECK(r.candidates_undecided == 0);
  std::int64_t scenarios = 0;
  for (std::size_t i = 0; i < r.simulated.size(); ++i) {
    scenarios += r.simulated[i].probability.trials;
    CHECK(r.simulated[i].error_budget == doctest::Approx(0.05 * 6 / (kPi * kPi * double((i + 1) * (i + 1)))).epsilon(1e-12));
    if (i + 1 == r.simulated.size()) break;
    CHECK(r.simulated[i].decision == ConfidenceDecision::falls_short);
    CHECK(r.simulated[i].probability.upper < 0.9);
    CHECK(r.simulated[i].cost_usd <= r.simulated[i + 1].cost_usd);
  }
  CHECK(scenarios == r.scenarios_simulated);
  CHECK(r.simulated.back().cluster == r.cluster);
  CHECK(r.prediction.training_time_s <= 2600);
  CHECK(r.message.find("exact interval") != std::string::npos);
  CHECK(r.message.find("with probability >= 0.95") != std::string::npos);
  // Scenario i is the same scenario in the search and in simulate(): the same successes.
  SimulateOptions again_options = options.simulate;
  again_options.scenarios = r.probability.trials;
  const SimulationResult again = simulate(model, InterruptionModel(model, options.interruption), r.cluster, 0.8, 2600, again_options);
  CHECK(again.meets_deadline.successes == r.probability.successes);
}

TEST_CASE("without revocations the confidence plan is the deterministic plan, accepted at the first look") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;
  options.interruption.fallback_hazard_per_hour = 0.0;
  const ConfidencePlanResult r = plan_with_confidence(model, slo_of(0.8, 2400), options);
  REQUIRE(r.has_plan());
  CHECK(r.cluster == r.deterministic.cluster);
  CHECK(r.probability.estimate == 1.0);
  CHECK(r.probability.trials == options.initial_scenarios);
  CHECK(r.simulated.front().looks == 1);
  // All 1000 scenarios succeed: the lower bound is α^(1/n) with α = δ_1 / (number of looks).
  const double alpha = 0.05 * 6 / (kPi * kPi) / 9;  // looks at 1000, 2000, ..., 128000, 200000
  CHECK(r.probability.lower == doctest::Approx(std::pow(alpha, 1.0 / 1000)).epsilon(1e-9));
  CHECK(r.candidates_simulated == 1);
}

TEST_CASE("Clopper-Pearson bounds match the exact binomial tails") {
  // 5 of 10 at 95%: [0.187086, 0.812914] (Clopper & Pearson's tables).
  const ProbabilityEstimate mid = clopper_pearson_interval(5, 10, 0.95);
  CHECK(mid.lower == doctest::Approx(0.187086).epsilon(1e-5));
  CHECK(mid.upper == doctest::Approx(0.812914).epsilon(1e-5));
  CHECK(mid.confidence_level == doctest::Approx(0.95));
  // The ends in closed form: x = 0 gives upper 1 - α^(1/n), x = n gives lower α^(1/n).
  const ProbabilityEstimate none = clopper_pearson_bounds(0, 20, 0.01);
  CHECK(none.lower == 0.0);
  CHECK(none.upper == doctest::Approx(1 - std::pow(0.01, 1.0 / 20)).epsilon(1e-12));
  const ProbabilityEstimate all = clopper_pearson_bounds(20, 20, 0.01);
  CHECK(all.upper == 1.0);
  CHECK(all.lower == doctest::Approx(std::pow(0.01, 1.0 / 20)).epsilon(1e-12));
  // One-sided exactness: P(X >= x | p = lower) = α for the lower bound of x successes.
  const ProbabilityEstimate b = clopper_pearson_bounds(900, 1000, 0.001);
  double tail = 0;  // P(X >= 900 | n = 1000, p = b.lower), summed in logs
  for (int k = 900; k <= 1000; ++k) {
    tail += std::exp(std::lgamma(1001.0) - std::lgamma(k + 1.0) - std::lgamma(1001.0 - k) + k * std::log(b.lower) +
                     (1000 - k) * std::log1p(-b.lower));
  }
  CHECK(tail == doctest::Approx(0.001).epsilon(1e-6));
  CHECK_THROWS_AS((void)clopper_pearson_bounds(3, 2, 0.05), spotdnn::invalid_argument);
  CHECK_THROWS_AS((void)clopper_pearson_bounds(1, 2, 0.5), spotdnn::invalid_argument);
}

TEST_CASE("the error budgets of all candidates and looks sum to the error rate") {
  const std::vector<int> looks = detail::look_sizes(1000, 200000);
  CHECK(looks == std::vector<int>{1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 200000});
  CHECK(detail::look_sizes(500, 500) == std::vector<int>{500});
  CHECK(detail::look_sizes(1000, 300) == std::vector<int>{300});
  double sum = 0;
  for (std::size_t m = 1; m <= 1000000; ++m) sum += detail::candidate_error_budget(0.05, m);
  CHECK(sum < 0.05);
  CHECK(sum > 0.05 * (1 - 1e-6) - 0.05 * 6 / (kPi * kPi) / 1000000);  // the tail beyond 10^6 is below 6δ/(π²·10^6)
}

TEST_CASE("candidates the scenario cap cannot decide are passed over, counted and reported") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;
  options.interruption.fallback_hazard_per_hour = 0.1;
  options.max_scenarios = 2000;  // the third candidate (P about 0.899) needs far more to tell from 0.9
  const ConfidencePlanResult r = plan_with_confidence(model, slo_of(0.8, 2600), options);
  REQUIRE(r.has_plan());
  CHECK(r.candidates_undecided >= 1);
  std::size_t undecided = 0;
  for (const ConfidenceCandidate& c : r.simulated) {
    CHECK(c.probability.trials <= 2000);
    if (c.decision == ConfidenceDecision::undecided) {
      ++undecided;
      CHECK(c.probability.trials == 2000);
      CHECK(c.probability.lower <= 0.895);
      CHECK(c.probability.upper >= 0.9);
    }
  }
  CHECK(undecided == r.candidates_undecided);
  CHECK(r.simulated.back().decision == ConfidenceDecision::meets);
  CHECK(r.message.find("stayed undecided") != std::string::npos);
}

TEST_CASE("an unreachable confidence is infeasible and names the best probability found") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;
  options.confidence = 0.99;
  options.interruption.fallback_hazard_per_hour = 5.0;
  options.max_scenarios = 2000;
  options.max_candidates_simulated = 50;
  const ConfidencePlanResult r = plan_with_confidence(model, slo_of(0.8, 2600), options);
  CHECK(r.status == Status::infeasible);
  CHECK(r.candidates_simulated == 50);
  CHECK(r.message.find("reaches probability 0.99") != std::string::npos);
  CHECK(r.message.find("the best") != std::string::npos);
}

TEST_CASE("bad confidence options are refused before any work") {
  const PerformanceModel model = preset_model();
  auto error = [&](auto change) {
    ConfidencePlanOptions bad;
    bad.interruption.fallback_hazard_per_hour = 0.1;
    change(bad);
    try {
      (void)plan_with_confidence(model, slo_of(0.8, 2600), bad);
    } catch (const spotdnn::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error([](ConfidencePlanOptions& o) { o.confidence = 1.0; }).find("options.confidence = 1") != std::string::npos);
  CHECK(error([](ConfidencePlanOptions& o) { o.tolerance = -0.1; }).find("options.tolerance") != std::string::npos);
  CHECK(error([](ConfidencePlanOptions& o) { o.tolerance = 0.9; }).find("options.tolerance") != std::string::npos);
  CHECK(error([](ConfidencePlanOptions& o) { o.error_rate = 0; }).find("options.error_rate") != std::string::npos);
  CHECK(error([](ConfidencePlanOptions& o) { o.error_rate = 0.6; }).find("options.error_rate") != std::string::npos);
  CHECK(error([](ConfidencePlanOptions& o) { o.max_scenarios = 0; }).find("options.max_scenarios") != std::string::npos);
  CHECK(error([](ConfidencePlanOptions& o) { o.initial_scenarios = 300000; }).find("options.initial_scenarios") != std::string::npos);
  CHECK(error([](ConfidencePlanOptions& o) { o.max_candidates_simulated = 0; }).find("max_candidates_simulated") != std::string::npos);
}

TEST_CASE("the confidence search needs hazards only for the types its candidates use") {
  Catalog catalog = presets::resnet110_catalog();
  for (InstanceType& type : catalog.instance_types) {
    if (type.name == "g3.16xlarge" || type.name == "p2.8xlarge") type.quota = 0;  // no candidate uses them
  }
  const PerformanceModel model(presets::resnet110_workload(), catalog);
  ConfidencePlanOptions options;
  options.max_scenarios = 2000;
  options.interruption.hazard_overrides = {{"p3.2xlarge", 0.1}, {"g4dn.4xlarge", 0.1}, {"g3.8xlarge", 0.1}};
  const ConfidencePlanResult r = plan_with_confidence(model, slo_of(0.8, 2600), options);
  CHECK(r.has_plan());
  // Without g4dn.4xlarge's hazard, the candidates that use it make the search refuse, naming it.
  options.interruption.hazard_overrides = {{"p3.2xlarge", 0.1}, {"g3.8xlarge", 0.1}};
  CHECK_THROWS_WITH_AS((void)plan_with_confidence(model, slo_of(0.8, 2600), options),
                       doctest::Contains("plan_with_confidence: hazard of \"g4dn.4xlarge\" = missing: a candidate plan uses it"),
                       spotdnn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)plan_with_confidence(model, slo_of(0.8, 2600), options),
                       doctest::Contains("--hazard g4dn.4xlarge=RATE"), spotdnn::invalid_argument);
}

TEST_CASE("the confidence search reports progress per candidate without changing its answer") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;
  options.interruption.fallback_hazard_per_hour = 0.1;
  options.max_scenarios = 8000;
  const ConfidencePlanResult quiet = plan_with_confidence(model, slo_of(0.8, 2600), options);
  std::vector<double> done;
  double total = -1;
  options.progress = [&](const Progress& p) {
    CHECK(p.task == "confidence search");
    CHECK(p.unit == "candidates");
    done.push_back(p.done);
    total = p.total;
  };
  const ConfidencePlanResult reported = plan_with_confidence(model, slo_of(0.8, 2600), options);
  REQUIRE(done.size() == reported.candidates_simulated + 2);  // the start, one per candidate, the end
  CHECK(done.front() == 0);
  for (std::size_t i = 1; i < done.size(); ++i) CHECK(done[i] >= done[i - 1]);
  CHECK(done[1] == 1);
  CHECK(done.back() == total);
  CHECK(total == double(reported.candidates));
  CHECK(reported.cluster == quiet.cluster);
  CHECK(reported.probability.successes == quiet.probability.successes);
  CHECK(reported.probability.trials == quiet.probability.trials);
  CHECK(reported.scenarios_simulated == quiet.scenarios_simulated);
  CHECK(reported.message == quiet.message);
  // Threads change nothing either.
  options.simulate.threads = 2;
  const ConfidencePlanResult threaded = plan_with_confidence(model, slo_of(0.8, 2600), options);
  CHECK(threaded.message == quiet.message);
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
  options.max_scenarios = 2000;
  const ConfidencePlanResult r = plan_with_confidence(model, slo_of(0.8, 2600), options);
  REQUIRE(r.deterministic.has_plan());
  REQUIRE_FALSE(r.simulated.empty());
  CHECK(r.simulated.front().cluster == r.deterministic.cluster);
  for (const ConfidenceCandidate& c : r.simulated) CHECK(c.cluster.total_workers() <= 6);
}
