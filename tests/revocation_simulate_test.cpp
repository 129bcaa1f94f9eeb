// SPDX-License-Identifier: MIT
// The revocation Monte Carlo against the deterministic prediction and closed forms.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include <spotdnn/revocation.hpp>

using namespace spotdnn;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

/// Hazard (per hour) `lambda` for `type`, 0 for the others.
InterruptionModel only(const PerformanceModel& model, const char* type, double lambda, double shape = 1.0) {
  std::vector<double> hazards(model.worker_types().size(), 0.0);
  hazards[*model.worker_type_index(type)] = lambda;
  return InterruptionModel::from_hazards(hazards, shape);
}

/// `expected` lies in the 99.9% Wilson interval of the estimate.
void check_within_interval(const ProbabilityEstimate& p, double expected) {
  const ProbabilityEstimate wide = wilson_interval(p.successes, p.trials, 0.999);
  CAPTURE(p.estimate);
  CAPTURE(expected);
  CHECK(wide.lower <= expected);
  CHECK(expected <= wide.upper);
}

}  // namespace

TEST_CASE("without revocations every scenario equals the deterministic prediction exactly") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};
  const InterruptionModel never = InterruptionModel::from_hazards(std::vector<double>(5, 0.0));
  for (bool charge_ps : {true, false}) {
    for (Replacement policy : {Replacement::none, Replacement::same_type}) {
      CAPTURE(charge_ps);
      SimulateOptions options;
      options.scenarios = 50;
      options.keep_outcomes = true;
      options.predict.charge_parameter_server = charge_ps;
      options.replacement = policy;
      const Prediction p = predict(model, cluster, 0.8, options.predict);
      const SimulationResult r = simulate(model, never, cluster, 0.8, 2600, options);
      REQUIRE(r.status == Status::feasible);
      REQUIRE(r.outcomes.size() == 50);
      for (const ScenarioOutcome& o : r.outcomes) {
        CHECK(o.time_s == p.training_time_s);
        CHECK(o.cost_usd == p.cost_usd);
        CHECK(o.worker_cost_usd == p.worker_cost_usd);
        CHECK(o.ps_cost_usd == p.ps_cost_usd);
        CHECK(o.samples_trained == doctest::Approx(p.samples_to_train).epsilon(1e-12));
        CHECK(o.revocations == 0);
        CHECK(o.met_deadline);
      }
      CHECK(r.meets_deadline.estimate == 1.0);
      CHECK(r.deterministic_time_s == p.training_time_s);
      CHECK(r.time_s.p99 == p.training_time_s);
      CHECK(r.mean_cost_usd == doctest::Approx(p.cost_usd).epsilon(1e-14));
    }
  }
  const SimulationResult late = simulate(model, never, cluster, 0.8, 2000);
  CHECK(late.meets_deadline.estimate == 0.0);
  CHECK_FALSE(late.deterministic_meets_deadline);
}

TEST_CASE("a single worker with exponential lifetime meets the deadline with probability exp(-lambda D)") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 1}};
  const double d = predict(model, cluster, 0.8).training_time_s;
  const double lambda = std::log(2.0) / (d / 3600.0);  // half the runs survive the training time
  SimulateOptions options;
  options.scenarios = 20000;
  options.seed = 7;
  const SimulationResult r = simulate(model, only(model, "p3.2xlarge", lambda), cluster, 0.8, 1.5 * d, options);
  check_within_interval(r.meets_deadline, std::exp(-lambda * d / 3600.0));
  // Every run that loses its only worker never finishes.
  CHECK(r.finished_share == r.meets_deadline.estimate);
  CHECK(r.mean_time_s == doctest::Approx(d).epsilon(1e-12));

  // Weibull lifetimes: the probability is the survival at D.
  const double shape = 0.6, reference_s = 720 * 3600.0;  // H(D) = ln 2 with H(t) = λ·t_ref·(t/t_ref)^k
  const double weibull_lambda = std::log(2.0) / (reference_s * std::pow(d / reference_s, shape)) * 3600.0;
  const InterruptionModel weibull = only(model, "p3.2xlarge", weibull_lambda, shape);
  CHECK(weibull.survival(*model.worker_type_index("p3.2xlarge"), d) == doctest::Approx(0.5).epsilon(1e-12));
  const SimulationResult w = simulate(model, weibull, cluster, 0.8, 1.5 * d, options);
  check_within_interval(w.meets_deadline, weibull.survival(*model.worker_type_index("p3.2xlarge"), d));
}

TEST_CASE("k identical workers at a deadline equal to their training time succeed only if none is revoked") {
  // Any revocation slows the job (g4dn.4xlarge has no PS contention up to 5 workers), so the job meets a
  // deadline of exactly D_k iff the first order statistic of k exponential lifetimes exceeds D_k:
  // P = exp(-k lambda D_k), the zero-revocation term of the binomial.
  const PerformanceModel model = preset_model();
  const int k = 5;
  const Cluster cluster{{"g4dn.4xlarge", k}};
  const double d = predict(model, cluster, 0.8).training_time_s;
  const double lambda = 0.1 / (d / 3600.0);
  SimulateOptions options;
  options.scenarios = 20000;
  const SimulationResult r = simulate(model, only(model, "g4dn.4xlarge", lambda), cluster, 0.8, d, options);
  check_within_interval(r.meets_deadline, std::exp(-k * lambda * d / 3600.0));
  // Expected revocations in [0, D_k] are at most k(1 - exp(-lambda D_k)) (the runs end at or after D_k... or
  // before, if they never finish): every run sees at least the revocations before D_k.
  CHECK(r.mean_revocations >= 0.9 * k * (1 - std::exp(-lambda * d / 3600.0)));
}

TEST_CASE("two identical workers match the order-statistics integral at a looser deadline") {
  // First revocation at s ~ Exp(2 lambda); then the survivor, with residual life ~ Exp(lambda) (memoryless),
  // continues from the loss reached, on the one-worker curve. P = e^{-2 lambda D2}
  // + integral_0^{D2} 2 lambda e^{-2 lambda s} 1[f(s) <= T] e^{-lambda (f(s) - s)} ds with f(s) the finish time.
  const PerformanceModel model = preset_model();
  const Workload& w = model.workload();
  const double a = w.loss_model.gamma[3], g1 = w.loss_model.gamma[0], target = 0.8;
  const Prediction two = predict(model, {{"g4dn.4xlarge", 2}}, target);
  const Prediction one = predict(model, {{"g4dn.4xlarge", 1}}, target);
  const double t2 = two.training_time_s / two.iterations, t1 = one.training_time_s / one.iterations;
  const double a2 = (two.iterations + g1) * (target - a), a1 = (one.iterations + g1) * (target - a);
  auto finish = [&](double s) {
    const double loss = a2 / (s / t2 + g1) + a;                 // loss reached on the 2-worker curve
    const double remaining = a1 / (target - a) - a1 / (loss - a);  // iterations left on the 1-worker curve
    return s + remaining * t1;
  };
  const double deadline = two.training_time_s + 0.4 * (finish(0.0) - two.training_time_s);
  const double lambda_per_s = 0.6 / two.training_time_s;
  double integral = 0;
  const int steps = 400000;
  const double h = two.training_time_s / steps;
  for (int i = 0; i < steps; ++i) {
    const double s = (i + 0.5) * h;
    const double f = finish(s);
    if (f <= deadline) integral += 2 * lambda_per_s * std::exp(-2 * lambda_per_s * s) * std::exp(-lambda_per_s * (f - s)) * h;
  }
  const double expected = std::exp(-2 * lambda_per_s * two.training_time_s) + integral;

  SimulateOptions options;
  options.scenarios = 40000;
  options.seed = 11;
  const SimulationResult r = simulate(model, only(model, "g4dn.4xlarge", lambda_per_s * 3600), {{"g4dn.4xlarge", 2}},
                                      target, deadline, options);
  CHECK(expected > std::exp(-2 * lambda_per_s * two.training_time_s) + 0.05);  // the integral matters
  check_within_interval(r.meets_deadline, expected);
}

TEST_CASE("a revoked worker is billed per second until it leaves, and the survivor continues from the loss reached") {
  const PerformanceModel model = preset_model();
  const std::size_t p3 = *model.worker_type_index("p3.2xlarge"), g4 = *model.worker_type_index("g4dn.4xlarge");
  std::vector<double> hazards(5, 0.0);
  hazards[p3] = 0.8;  // per hour; the g4dn.4xlarge worker is never revoked
  const InterruptionModel interruption = InterruptionModel::from_hazards(hazards);
  const Cluster cluster{{"p3.2xlarge", 1}, {"g4dn.4xlarge", 1}};
  const double target = 0.8, deadline = 3 * 3600.0;
  SimulateOptions options;
  options.scenarios = 64;
  options.seed = 5;
  options.keep_outcomes = true;
  const SimulationResult r = simulate(model, interruption, cluster, target, deadline, options);

  const Prediction both = predict(model, cluster, target);
  const Prediction alone = predict(model, {{"g4dn.4xlarge", 1}}, target);
  const double a = model.workload().loss_model.gamma[3], g1 = model.workload().loss_model.gamma[0];
  const double t_both = both.training_time_s / both.iterations, t_alone = alone.training_time_s / alone.iterations;
  const double a_both = (both.iterations + g1) * (target - a), a_alone = (alone.iterations + g1) * (target - a);
  const double ps = model.catalog().parameter_server.price_usd_per_hour;
  const double p3_price = model.worker_types()[p3].price_usd_per_hour, g4_price = model.worker_types()[g4].price_usd_per_hour;
  int revoked_runs = 0;
  for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
    // Replay the scenario's draws: instances in worker-type order (p3.2xlarge first), one draw each.
    detail::ScenarioRng rng(detail::scenario_seed(options.seed, i));
    const double life = interruption.lifetime_s(p3, detail::unit_exponential(rng()));
    const ScenarioOutcome& o = r.outcomes[i];
    CAPTURE(i);
    if (life >= both.training_time_s) {
      CHECK(o.time_s == both.training_time_s);
      CHECK(o.revocations == 0);
      continue;
    }
    ++revoked_runs;
    const double loss = a_both / (life / t_both + g1) + a;
    const double expected_finish = life + (a_alone / (target - a) - a_alone / (loss - a)) * t_alone;
    CHECK(o.revocations == 1);
    CHECK(o.time_s == doctest::Approx(expected_finish).epsilon(1e-9));
    const double expected_cost = p3_price * life / 3600 + g4_price * expected_finish / 3600 + ps * expected_finish / 3600;
    CHECK(o.cost_usd == doctest::Approx(expected_cost).epsilon(1e-9));
    CHECK(o.time_s > both.training_time_s);
  }
  CHECK(revoked_runs > 10);
  CHECK(revoked_runs < 64);
}

TEST_CASE("results depend on the seed only, not on the number of threads") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}, {"g4dn.4xlarge", 3}};
  InterruptionOptions io;
  io.fallback_hazard_per_hour = 0.3;
  const InterruptionModel interruption(model, io);
  SimulateOptions options;
  options.scenarios = 3000;
  options.seed = 99;
  options.keep_outcomes = true;
  options.replacement = Replacement::same_type;
  const SimulationResult one = simulate(model, interruption, cluster, 0.8, 2600, options);
  options.threads = 3;
  const SimulationResult three = simulate(model, interruption, cluster, 0.8, 2600, options);
  REQUIRE(one.outcomes.size() == three.outcomes.size());
  for (std::size_t i = 0; i < one.outcomes.size(); ++i) {
    CHECK(one.outcomes[i].time_s == three.outcomes[i].time_s);
    CHECK(one.outcomes[i].cost_usd == three.outcomes[i].cost_usd);
    CHECK(one.outcomes[i].revocations == three.outcomes[i].revocations);
  }
  CHECK(one.meets_deadline.successes == three.meets_deadline.successes);
  options.seed = 100;
  const SimulationResult other = simulate(model, interruption, cluster, 0.8, 2600, options);
  CHECK(other.mean_cost_usd != one.mean_cost_usd);
}

TEST_CASE("replacing revoked workers raises the probability of meeting the deadline") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"g4dn.4xlarge", 4}};
  const double d = predict(model, cluster, 0.8).training_time_s;
  const InterruptionModel interruption = only(model, "g4dn.4xlarge", 0.5 / (d / 3600.0));
  SimulateOptions options;
  options.scenarios = 5000;
  const SimulationResult none = simulate(model, interruption, cluster, 0.8, 1.3 * d, options);
  options.replacement = Replacement::same_type;
  const SimulationResult replaced = simulate(model, interruption, cluster, 0.8, 1.3 * d, options);
  CHECK(replaced.meets_deadline.lower > none.meets_deadline.upper);
  CHECK(replaced.mean_replacements > 0.5);
  CHECK(none.mean_replacements == 0.0);
  CHECK(replaced.finished_share == 1.0);
}

TEST_CASE("simulate rejects bad inputs and reports an unreachable target") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 1}};
  const InterruptionModel m = InterruptionModel::from_hazards(std::vector<double>(5, 0.1));
  CHECK_THROWS_AS((void)simulate(model, m, cluster, 0.8, 0.0), spotdnn::invalid_argument);
  CHECK_THROWS_AS((void)simulate(model, m, Cluster{}, 0.8, 100.0), spotdnn::invalid_argument);
  CHECK_THROWS_AS((void)simulate(model, InterruptionModel::from_hazards({0.1}), cluster, 0.8, 100.0),
                  spotdnn::invalid_argument);
  SimulateOptions bad;
  bad.scenarios = 0;
  CHECK_THROWS_AS((void)simulate(model, m, cluster, 0.8, 100.0, bad), spotdnn::invalid_argument);
  SimulateOptions no_planner;
  no_planner.replacement = Replacement::replan;
  CHECK_THROWS_AS((void)simulate(model, m, cluster, 0.8, 100.0, no_planner), spotdnn::invalid_argument);
  const SimulationResult unreachable = simulate(model, m, cluster, 0.4, 100.0);
  CHECK(unreachable.status == Status::infeasible);
  CHECK(unreachable.message.find("at or below the loss model's asymptote") != std::string::npos);
}

TEST_CASE("the Wilson interval brackets the estimate and narrows with more trials") {
  const ProbabilityEstimate small = wilson_interval(9, 10);
  const ProbabilityEstimate large = wilson_interval(900, 1000);
  CHECK(small.lower < 0.9);
  CHECK(small.upper > 0.9);
  CHECK(large.upper - large.lower < small.upper - small.lower);
  CHECK(wilson_interval(10, 10).upper == 1.0);
  CHECK(wilson_interval(0, 10).lower == 0.0);
  // Reference: 95% Wilson interval of 9/10 is [0.5958, 0.9821].
  CHECK(small.lower == doctest::Approx(0.5958).epsilon(1e-3));
  CHECK(small.upper == doctest::Approx(0.9821).epsilon(1e-3));
}

TEST_CASE("only the types a simulation may run need a hazard, and a missing one is named with how to give it") {
  Catalog catalog = presets::resnet110_catalog();
  catalog.instance_types[0].revocation_hazard_per_hour = 0.1;  // p3.2xlarge
  catalog.instance_types[2].interruption_band = "5-10%";       // g3.8xlarge
  const PerformanceModel model(presets::resnet110_workload(), catalog);
  const InterruptionModel interruption(model);  // g4dn.4xlarge, g3.16xlarge, p2.8xlarge: no hazard
  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};
  SimulateOptions options;
  options.scenarios = 500;
  const SimulationResult none = simulate(model, interruption, cluster, 0.8, 2600, options);
  CHECK(none.status == Status::feasible);
  options.replacement = Replacement::same_type;  // adds only the cluster's own types
  CHECK(simulate(model, interruption, cluster, 0.8, 2600, options).status == Status::feasible);

  const Cluster uses_g4dn{{"p3.2xlarge", 2}, {"g4dn.4xlarge", 1}};
  CHECK_THROWS_WITH_AS((void)simulate(model, interruption, uses_g4dn, 0.8, 2600, options),
                       doctest::Contains("simulate: hazard of \"g4dn.4xlarge\" = missing: the cluster uses it"),
                       spotdnn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)simulate(model, interruption, uses_g4dn, 0.8, 2600, options),
                       doctest::Contains("--hazard g4dn.4xlarge=RATE"), spotdnn::invalid_argument);

  // Re-planning may add any type with a quota: those need a hazard too, unless their quota is 0.
  const Replanner replanner(model);
  options.replacement = Replacement::replan;
  options.replacement_planner = replanner.policy();
  CHECK_THROWS_WITH_AS((void)simulate(model, interruption, cluster, 0.8, 2600, options),
                       doctest::Contains("the replan replacement policy may add it"), spotdnn::invalid_argument);
  for (std::size_t k : {std::size_t(1), std::size_t(3), std::size_t(4)}) catalog.instance_types[k].quota = 0;
  const PerformanceModel capped(presets::resnet110_workload(), catalog);
  const InterruptionModel capped_interruption(capped);
  const Replanner capped_replanner(capped);
  options.replacement_planner = capped_replanner.policy();
  CHECK(simulate(capped, capped_interruption, cluster, 0.8, 2600, options).status == Status::feasible);
}

TEST_CASE("simulate reports progress from the calling thread, monotone up to the total, without changing results") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};
  InterruptionOptions io;
  io.fallback_hazard_per_hour = 0.3;
  const InterruptionModel interruption(model, io);
  SimulateOptions options;
  options.scenarios = 30000;  // several chunks of at least 2048 per thread
  options.seed = 5;
  options.threads = 2;
  options.keep_outcomes = true;
  const SimulationResult quiet = simulate(model, interruption, cluster, 0.8, 2600, options);

  struct Report {
    double done, total;
  };
  std::vector<Report> reports;
  const std::thread::id caller = std::this_thread::get_id();
  bool on_caller_thread = true;
  options.progress = [&](const Progress& p) {
    on_caller_thread = on_caller_thread && std::this_thread::get_id() == caller;
    reports.push_back({p.done, p.total});
    CHECK(p.task == "simulate");
    CHECK(p.unit == "scenarios");
  };
  const SimulationResult reported = simulate(model, interruption, cluster, 0.8, 2600, options);
  CHECK(on_caller_thread);
  REQUIRE(reports.size() >= 3);
  CHECK(reports.front().done == 0);
  for (std::size_t i = 1; i < reports.size(); ++i) CHECK(reports[i].done >= reports[i - 1].done);
  CHECK(reports.back().done == 30000);
  CHECK(reports.back().total == 30000);
  // The same scenarios, whatever the chunks and threads.
  REQUIRE(quiet.outcomes.size() == reported.outcomes.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < quiet.outcomes.size(); ++i) {
    differ += quiet.outcomes[i].time_s != reported.outcomes[i].time_s || quiet.outcomes[i].cost_usd != reported.outcomes[i].cost_usd;
  }
  CHECK(differ == 0);
  CHECK(quiet.meets_deadline.successes == reported.meets_deadline.successes);
  CHECK(quiet.mean_cost_usd == reported.mean_cost_usd);
  options.threads = 1;
  const SimulationResult single = simulate(model, interruption, cluster, 0.8, 2600, options);
  CHECK(single.mean_cost_usd == quiet.mean_cost_usd);
}
