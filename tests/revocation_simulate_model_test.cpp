// SPDX-License-Identifier: MIT
// The Monte Carlo simulator drawing from a fitted revocation model (pool_law.hpp, simulate.hpp), against
// hand-computed values, closed forms and the constant-rate simulation.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>
#include <spotdnn/revocation/pool_law.hpp>
#include <spotdnn/revocation/simulate.hpp>

using namespace spotdnn;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

HazardBin bin(double from_age_s, double to_age_s, double hazard_per_hour) {
  HazardBin b;
  b.from_age_s = from_age_s;
  b.to_age_s = to_age_s;
  b.hazard_per_hour = hazard_per_hour;
  b.exposure_s = 3600;  // observed (a bin never observed takes the previous bin's hazard: tested below)
  return b;
}

/// A pool of `type` in `zone` with one hazard bin of `hazard_per_hour`, every instance up at once at age 0,
/// no waits, no clustering.
PoolModel constant_pool(const std::string& type, const std::string& zone, double hazard_per_hour) {
  PoolModel p;
  p.pool = {type, zone};
  p.trigger_hazard_by_age = {bin(0, kInf, hazard_per_hour)};
  p.hazard_by_age = p.trigger_hazard_by_age;
  p.start.up_share = 1;
  return p;
}

/// 101 quantiles, all `value_s`.
std::vector<double> fixed_quantiles(double value_s) { return std::vector<double>(101, value_s); }

/// Simulation options drawing worker type `type` from `pools` of `model` (the other types: constant rate).
SimulateOptions fitted_options(const PerformanceModel& perf, const RevocationModel& model, const char* type,
                               std::vector<int> pools) {
  SimulateOptions o;
  o.revocations.model = std::make_shared<const RevocationModel>(model);
  o.revocations.type_pools.assign(perf.worker_types().size(), {});
  o.revocations.type_pools[*perf.worker_type_index(type)] = std::move(pools);
  return o;
}

/// No hazard for any type: only fitted types may run.
InterruptionModel no_hazards(const PerformanceModel& model) { return InterruptionModel(model, InterruptionOptions{}); }

InterruptionModel only(const PerformanceModel& model, const char* type, double lambda) {
  std::vector<double> hazards(model.worker_types().size(), 0.0);
  hazards[*model.worker_type_index(type)] = lambda;
  return InterruptionModel::from_hazards(hazards);
}

int odd_revocation_scenarios(const SimulationResult& r) {
  int odd = 0;
  for (const ScenarioOutcome& o : r.outcomes) odd += o.revocations % 2;
  return odd;
}

int scenarios_with_revocations(const SimulationResult& r) {
  int n = 0;
  for (const ScenarioOutcome& o : r.outcomes) n += o.revocations > 0 ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("the residual lifetime inverts the integrated piecewise hazard at hand-computed ages") {
  // Hazard 1/h on [0, 1 h), 0 on [1 h, 2 h), 2/h from 2 h on: H(a) = a/3600 up to 1, flat to 7200 s, then
  // 1 + 2·(a − 7200)/3600.
  PoolModel pool = constant_pool("p3.2xlarge", "us-east-1a", 0);
  pool.trigger_hazard_by_age = {bin(0, 3600, 1), bin(3600, 7200, 0), bin(7200, kInf, 2)};
  const PoolLaw law(pool);
  CHECK(law.cumulative_hazard(0) == 0);
  CHECK(law.cumulative_hazard(1800) == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(law.cumulative_hazard(5000) == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(law.cumulative_hazard(9000) == doctest::Approx(2.0).epsilon(1e-15));
  const double tol = 1e-12;  // relative: a few roundings
  CHECK(law.residual_lifetime_s(0, 0.5) == doctest::Approx(1800).epsilon(tol));
  CHECK(law.residual_lifetime_s(0, 1.0) == doctest::Approx(3600).epsilon(tol));      // exactly at the bin's end
  CHECK(law.residual_lifetime_s(0, 1.5) == doctest::Approx(8100).epsilon(tol));      // 7200 + 0.5/(2/h)
  CHECK(law.residual_lifetime_s(1800, 1.5) == doctest::Approx(7200).epsilon(tol));   // 0.5 left in bin 0, 1 in bin 2
  CHECK(law.residual_lifetime_s(5000, 1.0) == doctest::Approx(4000).epsilon(tol));   // from the hazard-free bin
  CHECK(law.residual_lifetime_s(10000, 2.0) == doctest::Approx(3600).epsilon(tol));  // in the open last bin
  CHECK(law.residual_lifetime_s(600, 0.0) == 0);
  // The inversion: H(a + t) − H(a) = E for every age and draw.
  for (double a : {0.0, 100.0, 3599.0, 3600.0, 4000.0, 7200.0, 20000.0}) {
    for (double e : {1e-6, 0.3, 0.999, 1.0, 2.5, 9.0}) {
      const double t = law.residual_lifetime_s(a, e);
      CAPTURE(a);
      CAPTURE(e);
      CHECK(law.cumulative_hazard(a + t) - law.cumulative_hazard(a) == doctest::Approx(e).epsilon(1e-12));
    }
  }
  // A last bin without hazard: an instance that outlives the hazardous ages is never preempted.
  pool.trigger_hazard_by_age = {bin(0, 3600, 1), bin(3600, kInf, 0)};
  const PoolLaw ends(pool);
  CHECK(ends.residual_lifetime_s(0, 0.5) == doctest::Approx(1800).epsilon(tol));
  CHECK(ends.residual_lifetime_s(0, 2.0) == kInf);
  CHECK(ends.residual_lifetime_s(4000, 0.1) == kInf);
  // ... but ages the trace never reached (no exposure) keep the hazard of the oldest ages seen: 1/h here.
  pool.trigger_hazard_by_age[1].exposure_s = 0;
  const PoolLaw unseen(pool);
  CHECK(unseen.residual_lifetime_s(0, 2.0) == doctest::Approx(7200).epsilon(tol));
  CHECK(unseen.residual_lifetime_s(4000, 0.1) == doctest::Approx(360).epsilon(tol));
  // One bin of hazard λ: E/λ, the constant-rate lifetime to the last bit.
  const PoolLaw one(constant_pool("p3.2xlarge", "us-east-1a", 0.37));
  const InterruptionModel constant = InterruptionModel::from_hazards({0.37});
  for (double e : {0.01, 0.7, 3.3}) CHECK(one.residual_lifetime_s(0, e) == constant.lifetime_s(0, e));
  CHECK(one.residual_lifetime_s(1e6, 0.7) == constant.lifetime_s(0, 0.7));  // memoryless
}

TEST_CASE("quantiles interpolate linearly, waits come never with their none share, and gangs draw their shares") {
  std::vector<double> q(101);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = 10.0 * double(i) * double(i);
  CHECK(detail::interpolate_quantile(q, 0.0) == 0);
  CHECK(detail::interpolate_quantile(q, 0.5) == doctest::Approx(25000).epsilon(1e-12));
  CHECK(detail::interpolate_quantile(q, 0.505) == doctest::Approx(0.5 * (25000 + 26010)).epsilon(1e-12));
  CHECK(detail::interpolate_quantile(q, 1.0) == 100000);
  CHECK(detail::interpolate_quantile({}, 0.3) == 0);
  CHECK(detail::interpolate_quantile({42}, 0.3) == 42);

  detail::ScenarioRng rng(5);
  WaitDistribution never;
  never.none_share = 1;
  never.quantiles_s = fixed_quantiles(10);
  CHECK(WaitLaw(never, "test", "wait").draw_s(rng) == kInf);
  WaitDistribution unknown;  // nothing observed: a wait of 0
  CHECK(WaitLaw(unknown, "test", "wait").draw_s(rng) == 0);

  // Shares by counting 20,000 draws: within 4 binomial standard errors (sqrt(p(1-p)/n) <= 0.0036).
  const int n = 20000;
  WaitDistribution some = never;
  some.none_share = 0.3;
  const WaitLaw wait(some, "test", "wait");
  PoolModel pool = constant_pool("p3.2xlarge", "us-east-1a", 0);
  pool.start.up_share = 0.6;
  pool.gang = GangObtainability{3, {0.1, 0.0, 0.2, 0.7}};
  const PoolLaw law(pool);
  int none = 0, up = 0;
  std::vector<int> gang(4, 0);
  for (int i = 0; i < n; ++i) {
    none += std::isinf(wait.draw_s(rng)) ? 1 : 0;
    up += law.draw_start(rng).found_up ? 1 : 0;
    ++gang[std::size_t(law.draw_gang_count(rng))];
  }
  const double se = 4 * std::sqrt(0.25 / n);
  CHECK(std::abs(none / double(n) - 0.3) < se);
  CHECK(std::abs(up / double(n) - 0.6) < se);
  CHECK(gang[1] == 0);
  CHECK(std::abs(gang[0] / double(n) - 0.1) < se);
  CHECK(std::abs(gang[3] / double(n) - 0.7) < se);
}

TEST_CASE("one bin of hazard h with every instance up at once meets the deadline as the constant rate h does") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 4}};
  const double t4 = predict(model, cluster, 0.8).training_time_s;
  const double h = 0.4;  // per hour
  RevocationModel fitted;
  fitted.pools = {constant_pool("p3.2xlarge", "us-east-1a", h)};
  for (Replacement policy : {Replacement::none, Replacement::same_type}) {
    CAPTURE(to_string(policy));
    SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0});
    o.scenarios = policy == Replacement::none ? 20000 : 5000;  // the statistical check is for none
    o.join_delay_s = 0;
    o.notice_s = 0;  // a same-type replacement is then requested at the revocation on both paths
    o.replacement = policy;
    o.keep_outcomes = true;
    SimulateOptions c = o;
    c.revocations = {};
    c.seed = 2;  // independent of the fitted run's seed 1
    const SimulationResult rf = simulate(model, no_hazards(model), cluster, 0.8, 1.1 * t4, o);
    const SimulationResult rc = simulate(model, only(model, "p3.2xlarge", h), cluster, 0.8, 1.1 * t4, c);
    CAPTURE(rf.meets_deadline.estimate);
    CAPTURE(rc.meets_deadline.estimate);
    if (policy == Replacement::none) {
      // Two independent binomial estimates: their difference has SE sqrt(2 p (1 - p) / 20000) <= 0.005;
      // allow 4 SE. (An instant same-type replacement loses nothing: P = 1 on both paths.)
      const double p = 0.5 * (rf.meets_deadline.estimate + rc.meets_deadline.estimate);
      CHECK(p > 0.2);
      CHECK(p < 0.9);  // a test that can fail: both far from 0 and 1
      CHECK(std::abs(rf.meets_deadline.estimate - rc.meets_deadline.estimate) < 4 * std::sqrt(2 * p * (1 - p) / 20000));
    }
    // With the same seed the draws are the same ones (one Exp(1) per instance, in the same order), so the
    // scenarios are too, up to rounding (the constant path re-estimates after the revocation and again after
    // the join at the same moment; the fitted one once) and billing summed per instance.
    c.seed = o.seed;
    const SimulationResult same = simulate(model, only(model, "p3.2xlarge", h), cluster, 0.8, 1.1 * t4, c);
    REQUIRE(same.outcomes.size() == rf.outcomes.size());
    int differing = 0;
    for (std::size_t i = 0; i < same.outcomes.size(); ++i) {
      const ScenarioOutcome& a = rf.outcomes[i];
      const ScenarioOutcome& b = same.outcomes[i];
      const bool equal = (a.time_s == b.time_s || std::abs(a.time_s - b.time_s) <= 1e-12 * b.time_s) && a.revocations == b.revocations &&
                         a.replacements == b.replacements && a.met_deadline == b.met_deadline &&
                         std::abs(a.worker_cost_usd - b.worker_cost_usd) <= 1e-9 * b.worker_cost_usd;
      differing += equal ? 0 : 1;
    }
    CHECK(differing == 0);
    CHECK(rf.mean_revocations > 0.3);
  }
}

TEST_CASE("a pool that never has an instance never trains and costs nothing") {
  const PerformanceModel model = preset_model();
  RevocationModel fitted;
  PoolModel pool = constant_pool("p3.2xlarge", "us-east-1a", 0.1);
  pool.start.up_share = 0;
  pool.start.wait.none_share = 1;
  pool.start.wait.observed = pool.start.wait.none_came = 3;
  fitted.pools = {pool};
  SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0});
  o.scenarios = 2000;
  const SimulationResult r = simulate(model, no_hazards(model), Cluster{{"p3.2xlarge", 3}}, 0.8, 1e5, o);
  REQUIRE(r.status == Status::feasible);
  CHECK(r.meets_deadline.estimate == 0.0);
  CHECK(r.meets_deadline.successes == 0);
  CHECK(r.finished_share == 0.0);
  CHECK(r.mean_cost_usd == 0.0);
  CHECK(r.mean_revocations == 0.0);
}

TEST_CASE("a fixed start wait delays the finish by exactly the wait and the join delay") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}};
  const Prediction p = predict(model, cluster, 0.8);
  const double price = model.worker_types()[*model.worker_type_index("p3.2xlarge")].price_usd_per_hour;
  const double ps_price = model.catalog().parameter_server.price_usd_per_hour;
  RevocationModel fitted;
  PoolModel pool = constant_pool("p3.2xlarge", "us-east-1a", 0);  // never preempted
  pool.start.up_share = 0;
  pool.start.wait.quantiles_s = fixed_quantiles(600);
  fitted.pools = {pool};
  SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0});
  o.scenarios = 20;
  o.join_delay_s = 120;
  o.keep_outcomes = true;
  const SimulationResult r = simulate(model, no_hazards(model), cluster, 0.8, 1e5, o);
  REQUIRE(r.outcomes.size() == 20);
  for (const ScenarioOutcome& s : r.outcomes) {
    CHECK(s.finished);
    CHECK(s.revocations == 0);
    CHECK(s.time_s == doctest::Approx(p.training_time_s + 600 + 120).epsilon(1e-12));
    // Billed from up (600 s): booting included.
    CHECK(s.worker_cost_usd == doctest::Approx(2 * price * (p.training_time_s + 120) / 3600).epsilon(1e-12));
    CHECK(s.ps_cost_usd == doctest::Approx(ps_price * (p.training_time_s + 720) / 3600).epsilon(1e-12));
  }
  // Found up at once, the initial instances still boot for the join delay before they train.
  fitted.pools[0].start.up_share = 1;
  const SimulationResult up = simulate(model, no_hazards(model), cluster, 0.8, 1e5, fitted_options(model, fitted, "p3.2xlarge", {0}));
  CHECK(up.time_s.p10 == doctest::Approx(p.training_time_s + 120).epsilon(1e-12));
  CHECK(up.time_s.p99 == doctest::Approx(p.training_time_s + 120).epsilon(1e-12));
}

TEST_CASE("co-preemption probability 1 makes the workers of one pool leave together") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}};
  RevocationModel fitted;
  fitted.pools = {constant_pool("p3.2xlarge", "us-east-1a", 0.5)};
  for (Replacement policy : {Replacement::none, Replacement::same_type}) {
    CAPTURE(to_string(policy));
    for (double co : {1.0, 0.0}) {
      CAPTURE(co);
      fitted.pools[0].clustering.co_preemption_probability = co;
      SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0});
      o.scenarios = 4000;
      o.keep_outcomes = true;
      o.replacement = policy;
      const SimulationResult r = simulate(model, no_hazards(model), cluster, 0.8, 1e4, o);
      CHECK(scenarios_with_revocations(r) > 500);
      if (co == 1.0) {
        CHECK(odd_revocation_scenarios(r) == 0);  // revocations come in pairs
      } else {
        CHECK(odd_revocation_scenarios(r) > 100);  // the control: independent ones do not
      }
    }
  }
}

TEST_CASE("a region correlation takes instances of the other zone of the region along, not of another region") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}};  // one worker per pool
  RegionCorrelation east;
  east.region = "us-east-1";
  east.zones = {"us-east-1a", "us-east-1b"};
  east.co_preemption_probability = 1;
  for (const char* second_zone : {"us-east-1b", "us-west-2a"}) {
    CAPTURE(second_zone);
    RevocationModel fitted;
    fitted.pools = {constant_pool("p3.2xlarge", "us-east-1a", 0.5), constant_pool("p3.2xlarge", second_zone, 0.5)};
    fitted.regions = {east};
    SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0, 1});
    o.scenarios = 4000;
    o.keep_outcomes = true;
    const SimulationResult r = simulate(model, no_hazards(model), cluster, 0.8, 1e4, o);
    CHECK(scenarios_with_revocations(r) > 500);
    if (std::string(second_zone) == "us-east-1b") {
      CHECK(odd_revocation_scenarios(r) == 0);
    } else {
      CHECK(odd_revocation_scenarios(r) > 100);
    }
  }
}

TEST_CASE("a same-type replacement comes after the pool's replacement wait, counted from the revocation") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 1}};
  const Prediction p = predict(model, cluster, 0.8);
  const double price = model.worker_types()[*model.worker_type_index("p3.2xlarge")].price_usd_per_hour;
  const double wait_s = 900;
  RevocationModel fitted;
  PoolModel pool = constant_pool("p3.2xlarge", "us-east-1a", 1.0);
  pool.replacement_wait.quantiles_s = fixed_quantiles(wait_s);
  fitted.pools = {pool};
  SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0});
  o.scenarios = 2000;
  o.join_delay_s = 0;
  o.notice_s = 120;  // the wait counts from the revocation, not from the notice
  o.replacement = Replacement::same_type;
  o.keep_outcomes = true;
  const SimulationResult r = simulate(model, no_hazards(model), cluster, 0.8, 1e5, o);
  int revoked = 0;
  for (const ScenarioOutcome& s : r.outcomes) {
    REQUIRE(s.finished);
    // One worker, no progress lost: each revocation costs the wait, and only the up time is billed.
    CHECK(s.time_s == doctest::Approx(p.training_time_s + s.revocations * wait_s).epsilon(1e-9));
    CHECK(s.worker_cost_usd == doctest::Approx(price * p.training_time_s / 3600).epsilon(1e-9));
    CHECK(s.replacements == s.revocations);
    revoked += s.revocations > 0 ? 1 : 0;
  }
  CHECK(revoked > 1000);
  // None comes: the job stops at its first revocation.
  fitted.pools[0].replacement_wait.none_share = 1;
  o = fitted_options(model, fitted, "p3.2xlarge", {0});
  o.scenarios = 2000;
  o.replacement = Replacement::same_type;
  o.keep_outcomes = true;
  const SimulationResult stalled = simulate(model, no_hazards(model), cluster, 0.8, 1e5, o);
  for (const ScenarioOutcome& s : stalled.outcomes) {
    CHECK(s.revocations <= 1);
    CHECK(s.finished == (s.revocations == 0));
  }
}

TEST_CASE("replan additions go to the type's pools round-robin and come after the wait from the notice") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 1}};
  const Prediction p = predict(model, cluster, 0.8);
  RevocationModel fitted;
  // Pool 0 holds the first worker and never gives a replacement; pool 1 gives one 300 s after the notice.
  PoolModel zone_a = constant_pool("p3.2xlarge", "us-east-1a", 1.0);
  zone_a.replacement_wait.none_share = 1;
  PoolModel zone_b = constant_pool("p3.2xlarge", "us-east-1b", 1.0);
  zone_b.replacement_wait.quantiles_s = fixed_quantiles(300);
  fitted.pools = {zone_a, zone_b};
  SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0, 1});
  o.scenarios = 3000;
  o.join_delay_s = 0;
  o.notice_s = 120;
  o.keep_outcomes = true;
  o.replacement = Replacement::replan;
  const std::size_t k = *model.worker_type_index("p3.2xlarge");
  o.replacement_planner = [k](const RevocationNotice& notice) {
    std::vector<int> add(notice.survivors.size(), 0);
    add[k] = 1;
    return add;
  };
  // No InterruptionModel hazard for p3.2xlarge: the fitted type needs none, even when the planner adds it
  // (the replan policy needs one for every other type with a quota).
  InterruptionOptions others;
  for (const WorkerType& w : model.worker_types()) {
    if (w.name != "p3.2xlarge") others.hazard_overrides.push_back({w.name, 0.0});
  }
  const SimulationResult r = simulate(model, InterruptionModel(model, others), cluster, 0.8, 1e5, o);
  int two = 0, gap_180 = 0;
  for (const ScenarioOutcome& s : r.outcomes) {
    // The first addition (pool 1) comes; the second (pool 0 again) never does, so the job stops there.
    CHECK(s.revocations <= 2);
    CHECK(s.replacements <= 2);
    if (s.revocations == 2) {
      ++two;
      CHECK_FALSE(s.finished);
    }
    // One revocation, replaced at notice + 300 s: the old worker trains until notice + 120 s, so the job
    // loses 180 s (up to 300 s when it lived less than the notice, which then came when it was up).
    if (s.revocations == 1 && s.finished) {
      const double lost_s = s.time_s - p.training_time_s;
      CHECK(lost_s >= 180 - 1e-6);
      CHECK(lost_s <= 300 + 1e-6);
      gap_180 += std::abs(lost_s - 180) < 1e-6 ? 1 : 0;
    }
  }
  CHECK(two > 300);
  CHECK(gap_180 > 300);
}

TEST_CASE("gang shares decide how many of the requested instances are there at the start") {
  const PerformanceModel model = preset_model();
  const double price = model.worker_types()[*model.worker_type_index("p3.2xlarge")].price_usd_per_hour;
  RevocationModel fitted;
  PoolModel pool = constant_pool("p3.2xlarge", "us-east-1a", 0);
  pool.kind = TraceKind::counts;
  pool.start.up_share = 1;           // ignored where the gang applies
  pool.start.wait.none_share = 1;    // the missing ones never come
  pool.gang = GangObtainability{4, {0, 0, 1, 0, 0}};  // always 2 of 4
  fitted.pools = {pool};
  SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0});
  o.scenarios = 200;
  o.join_delay_s = 0;
  o.keep_outcomes = true;
  const double t2 = predict(model, Cluster{{"p3.2xlarge", 2}}, 0.8).training_time_s;
  const SimulationResult two = simulate(model, no_hazards(model), Cluster{{"p3.2xlarge", 4}}, 0.8, 1e5, o);
  for (const ScenarioOutcome& s : two.outcomes) {
    CHECK(s.time_s == doctest::Approx(t2).epsilon(1e-12));
    CHECK(s.worker_cost_usd == doctest::Approx(2 * price * t2 / 3600).epsilon(1e-12));
  }
  // More instances than the gang was asked for: each independently with up_share (1 here).
  const double t5 = predict(model, Cluster{{"p3.2xlarge", 5}}, 0.8).training_time_s;
  const SimulationResult five = simulate(model, no_hazards(model), Cluster{{"p3.2xlarge", 5}}, 0.8, 1e5, o);
  CHECK(five.time_s.p10 == doctest::Approx(t5).epsilon(1e-12));
  CHECK(five.time_s.p99 == doctest::Approx(t5).epsilon(1e-12));
  // Nothing (share 0.25) or all four (0.75): P(finish) within 4 binomial SE (sqrt(.75·.25/20000) = 0.0031).
  fitted.pools[0].gang = GangObtainability{4, {0.25, 0, 0, 0, 0.75}};
  o = fitted_options(model, fitted, "p3.2xlarge", {0});
  o.scenarios = 20000;
  o.join_delay_s = 0;
  const double t4 = predict(model, Cluster{{"p3.2xlarge", 4}}, 0.8).training_time_s;
  const SimulationResult all_or_none = simulate(model, no_hazards(model), Cluster{{"p3.2xlarge", 4}}, 0.8, 1e5, o);
  CHECK(std::abs(all_or_none.finished_share - 0.75) < 4 * std::sqrt(0.75 * 0.25 / 20000));
  CHECK(all_or_none.time_s.p10 == doctest::Approx(t4).epsilon(1e-12));
}

TEST_CASE("a type without pools keeps the constant rate, and a model without pools changes nothing") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};
  const InterruptionModel constant = only(model, "g3.8xlarge", 0.5);
  SimulateOptions plain;
  plain.scenarios = 3000;
  plain.keep_outcomes = true;
  plain.replacement = Replacement::same_type;
  const SimulationResult base = simulate(model, constant, cluster, 0.8, 2600, plain);
  CHECK(base.mean_revocations > 0.5);

  // A model that gives no type a pool: the constant-rate simulation to the last bit.
  RevocationModel fitted;
  fitted.pools = {constant_pool("p3.2xlarge", "us-east-1a", 0)};
  SimulateOptions empty = plain;
  empty.revocations.model = std::make_shared<const RevocationModel>(fitted);
  empty.revocations.type_pools.assign(model.worker_types().size(), {});
  const SimulationResult same = simulate(model, constant, cluster, 0.8, 2600, empty);
  REQUIRE(same.outcomes.size() == base.outcomes.size());
  for (std::size_t i = 0; i < base.outcomes.size(); ++i) {
    CHECK(same.outcomes[i].time_s == base.outcomes[i].time_s);
    CHECK(same.outcomes[i].cost_usd == base.outcomes[i].cost_usd);
    CHECK(same.outcomes[i].revocations == base.outcomes[i].revocations);
  }

  // p3.2xlarge from a pool that never preempts, up at once, no join delay; g3.8xlarge at the constant rate:
  // the same scenarios as the constant simulation with p3.2xlarge never revoked (the same draws), up to
  // rounding. (Without a notice, no replacement is requested, and joins, at time 0, where the fitted path
  // starts the curve of the cluster joined at 0 and the constant one carries the loss across.)
  SimulateOptions mixed = fitted_options(model, fitted, "p3.2xlarge", {0});
  mixed.scenarios = plain.scenarios;
  mixed.keep_outcomes = true;
  mixed.replacement = Replacement::same_type;
  mixed.join_delay_s = 0;
  mixed.notice_s = 0;
  SimulateOptions plain_now = plain;
  plain_now.join_delay_s = 0;
  plain_now.notice_s = 0;
  const SimulationResult a = simulate(model, constant, cluster, 0.8, 2600, mixed);
  const SimulationResult b = simulate(model, constant, cluster, 0.8, 2600, plain_now);
  int differing = 0;
  for (std::size_t i = 0; i < a.outcomes.size(); ++i) {
    const bool equal = (a.outcomes[i].time_s == b.outcomes[i].time_s ||
                        std::abs(a.outcomes[i].time_s - b.outcomes[i].time_s) <= 1e-12 * b.outcomes[i].time_s) &&
                       a.outcomes[i].revocations == b.outcomes[i].revocations;
    differing += equal ? 0 : 1;
  }
  CHECK(differing == 0);
  CHECK(a.mean_revocations == b.mean_revocations);
  CHECK(a.mean_revocations > 0.5);
  // ... and the constant-rate type still needs its hazard.
  CHECK_THROWS_WITH_AS((void)simulate(model, no_hazards(model), cluster, 0.8, 2600, mixed),
                       doctest::Contains("hazard of \"g3.8xlarge\" = missing"), spotdnn::invalid_argument);
}

TEST_CASE("a fitted simulation depends on the seed and the inputs only, not on the threads") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 4}, {"g4dn.4xlarge", 3}};
  RevocationModel fitted;
  PoolModel a = constant_pool("p3.2xlarge", "us-east-1a", 0);
  a.trigger_hazard_by_age = {bin(0, 1800, 1.5), bin(1800, 7200, 0.4), bin(7200, kInf, 0.1)};
  a.start.up_share = 0.8;
  for (int i = 0; i <= 100; ++i) a.start.age_quantiles_s.push_back(100.0 * i);
  for (int i = 0; i <= 100; ++i) a.start.wait.quantiles_s.push_back(5.0 * i);
  a.replacement_wait = a.start.wait;
  a.replacement_wait.none_share = 0.1;
  a.clustering.co_preemption_probability = 0.4;
  PoolModel b = a;
  b.pool.zone = "us-east-1b";
  b.gang = GangObtainability{2, {0.1, 0.3, 0.6}};
  RegionCorrelation east;
  east.region = "us-east-1";
  east.co_preemption_probability = 0.2;
  fitted.pools = {a, b};
  fitted.regions = {east};
  for (Replacement policy : {Replacement::none, Replacement::same_type}) {
    SimulateOptions o = fitted_options(model, fitted, "p3.2xlarge", {0, 1});
    o.scenarios = 3000;
    o.keep_outcomes = true;
    o.replacement = policy;
    const InterruptionModel constant = only(model, "g4dn.4xlarge", 0.3);
    const SimulationResult one = simulate(model, constant, cluster, 0.8, 2600, o);
    o.threads = 3;
    const SimulationResult three = simulate(model, constant, cluster, 0.8, 2600, o);
    REQUIRE(one.outcomes.size() == three.outcomes.size());
    int differing = 0;
    for (std::size_t i = 0; i < one.outcomes.size(); ++i) {
      differing += one.outcomes[i].time_s == three.outcomes[i].time_s && one.outcomes[i].cost_usd == three.outcomes[i].cost_usd &&
                           one.outcomes[i].revocations == three.outcomes[i].revocations
                       ? 0
                       : 1;
    }
    CHECK(differing == 0);
    CHECK(one.mean_revocations > 0.5);
    CHECK(one.meets_deadline.estimate > 0);
  }
}

TEST_CASE("the confidence search takes the fitted model through its simulate options") {
  Catalog catalog = presets::resnet110_catalog();
  for (InstanceType& type : catalog.instance_types) {
    if (type.name != "p3.2xlarge") type.quota = 0;
  }
  const PerformanceModel model(presets::resnet110_workload(), catalog);
  RevocationModel fitted;
  fitted.pools = {constant_pool("p3.2xlarge", "us-east-1a", 0.05)};
  ConfidencePlanOptions options;
  options.max_scenarios = 4000;
  Slo slo;
  slo.target_loss = 0.8;
  slo.deadline_s = 3000;  // p3.2xlarge=2 takes 2710 s
  // The catalog gives p3.2xlarge no hazard: without the model the search refuses, with it the pool decides.
  CHECK_THROWS_WITH_AS((void)plan_with_confidence(model, slo, options), doctest::Contains("hazard of \"p3.2xlarge\" = missing"),
                       spotdnn::invalid_argument);
  options.simulate = fitted_options(model, fitted, "p3.2xlarge", {0});
  const ConfidencePlanResult r = plan_with_confidence(model, slo, options);
  CHECK(r.has_plan());
  options.simulate.revocations.type_pools.pop_back();
  CHECK_THROWS_WITH_AS((void)plan_with_confidence(model, slo, options), doctest::Contains("options.revocations.type_pools.size()"),
                       spotdnn::invalid_argument);
}

TEST_CASE("a fitted model that does not fit the worker types or cannot be drawn from is refused, naming the field") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}};
  RevocationModel good;
  good.pools = {constant_pool("p3.2xlarge", "us-east-1a", 0.1), constant_pool("g3.8xlarge", "us-east-1a", 0.1)};
  auto error = [&](auto change_model, auto change_options) -> std::string {
    RevocationModel m = good;
    change_model(m);
    SimulateOptions o = fitted_options(model, m, "p3.2xlarge", {0});
    o.scenarios = 10;
    change_options(o);
    try {
      (void)simulate(model, no_hazards(model), cluster, 0.8, 2600, o);
    } catch (const spotdnn::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  auto same_model = [](RevocationModel&) {};
  auto same_options = [](SimulateOptions&) {};
  CHECK(error(same_model, same_options) == "no error");
  const std::size_t p3 = *model.worker_type_index("p3.2xlarge");
  CHECK(error(same_model, [](SimulateOptions& o) { o.revocations.model.reset(); })
            .find("options.revocations.type_pools.size() = 5: must be 0 without a revocation model") != std::string::npos);
  CHECK(error(same_model, [](SimulateOptions& o) { o.revocations.type_pools.resize(3); })
            .find("options.revocations.type_pools.size() = 3: must equal the number of worker types (5)") != std::string::npos);
  CHECK(error(same_model, [&](SimulateOptions& o) { o.revocations.type_pools[p3] = {2}; })
            .find("type_pools[" + std::to_string(p3) + "][0] = 2: must index a pool of the model") != std::string::npos);
  CHECK(error(same_model, [&](SimulateOptions& o) { o.revocations.type_pools[p3] = {-1}; }).find("must index a pool") != std::string::npos);
  CHECK(error(same_model, [&](SimulateOptions& o) { o.revocations.type_pools[p3] = {0, 0}; }).find("twice") != std::string::npos);
  CHECK(error(same_model, [&](SimulateOptions& o) { o.revocations.type_pools[p3] = {1}; })
            .find("pool \"g3.8xlarge@us-east-1a\" is of type \"g3.8xlarge\", not the worker type \"p3.2xlarge\"") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].trigger_hazard_by_age.clear(); }, same_options)
            .find("options.revocations.model->pools[0].trigger_hazard_by_age.size() = 0") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].trigger_hazard_by_age = {bin(0, 100, 1), bin(200, kInf, 1)}; }, same_options)
            .find("trigger_hazard_by_age[1].from_age_s = 200: must equal the previous bin's to_age_s (100)") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].trigger_hazard_by_age = {bin(10, kInf, 1)}; }, same_options)
            .find("must start at age 0") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].trigger_hazard_by_age[0].hazard_per_hour = -1; }, same_options)
            .find("trigger_hazard_by_age[0].hazard_per_hour = -1") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].trigger_hazard_by_age[0].hazard_per_hour = std::nan(""); }, same_options)
            .find("hazard_per_hour") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].start.up_share = 1.5; }, same_options)
            .find("pools[0].start.up_share = 1.5: must be a probability") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].start.wait.quantiles_s = {5, 4}; }, same_options)
            .find("pools[0].start.wait.quantiles_s[1] = 4: quantiles must not decrease") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].replacement_wait.none_share = -0.1; }, same_options)
            .find("pools[0].replacement_wait.none_share") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].start.age_quantiles_s = {0, kInf}; }, same_options)
            .find("pools[0].start.age_quantiles_s[1]") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].clustering.co_preemption_probability = 2; }, same_options)
            .find("clustering.co_preemption_probability = 2") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].gang = GangObtainability{2, {0.5, 0.5}}; }, same_options)
            .find("pools[0].gang.count_share.size() = 2: must be requested + 1 (3)") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.pools[0].gang = GangObtainability{1, {0, 0}}; }, same_options)
            .find("positive finite sum") != std::string::npos);
  CHECK(error([](RevocationModel& m) { m.regions = {RegionCorrelation{}}; m.regions[0].co_preemption_probability = -1; }, same_options)
            .find("options.revocations.model->regions[0].co_preemption_probability = -1") != std::string::npos);
  // A bad pool that no type uses is not looked at.
  CHECK(error([](RevocationModel& m) { m.pools[1].start.up_share = 7; }, same_options) == "no error");
}
