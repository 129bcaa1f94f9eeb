// SPDX-License-Identifier: MIT
// Calm and stormy market states (revocation/market_regimes.hpp, MarketRegimes): the EM fit against
// hand-computed figures, the fit of traces built with a known storm, and the simulator against the closed
// form of a two-state Markov-modulated hazard.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/fit_revocations.hpp>
#include <spotdnn/revocation/market_regimes.hpp>
#include <spotdnn/revocation/simulate.hpp>

using namespace spotdnn;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// `count` bins with one expected preemption each and `preemptions` seen in bin i given by `pattern(i)`.
void add_bins(std::vector<RegimeBin>& bins, int count, double (*pattern)(int)) {
  for (int i = 0; i < count; ++i) {
    RegimeBin b;
    b.expected_preemptions = 1;
    b.preemptions = pattern(i);
    bins.push_back(b);
  }
}
double calm_pattern(int i) { return i % 2; }  // 0, 1, 0, 1, ...: mean 0.5
double storm_pattern(int) { return 8; }

/// A lifetimes trace of `zone`, one slot, tick 60 s, over `hours`: in calm hours an instance lives 6 h and
/// is replaced after 2 minutes; the storm's first moment (hour storm_from_h) preempts the instance up then,
/// and an instance that comes in the stormy hours [storm_from_h, storm_to_h) lives `storm_life_s` and is
/// replaced after 30 minutes. `shift_s`: the first instance's start.
PoolTrace storm_trace(const std::string& zone, double hours, double storm_from_h, double storm_to_h, double shift_s,
                      double storm_life_s) {
  PoolTrace t;
  t.pool = {"p3.2xlarge", zone};
  t.kind = TraceKind::lifetimes;
  t.source = zone + ".json";
  t.tick_s = 60;
  t.span_s = hours * 3600;
  double at = shift_s;
  while (at < t.span_s) {
    const bool storm = at >= storm_from_h * 3600 && at < storm_to_h * 3600;
    double life = storm ? storm_life_s : 6 * 3600;
    const double wait = storm ? 1800 : 120;
    if (at < storm_from_h * 3600) life = std::min(life, storm_from_h * 3600 - at);  // the storm opens with a preemption
    UpInterval u;
    u.start_s = at;
    u.end_s = std::min(at + life, t.span_s);
    u.preempted = at + life < t.span_s;
    u.age_known = at > 0;
    t.up.push_back(u);
    at += life + wait;
  }
  return t;
}

/// exp(A t) · 1 for a 2×2 matrix A (rows a), premultiplied by the row vector `pi`: the closed form
/// e^{At} = e^{τt/2} (cosh(δt) I + sinh(δt)/δ (A − τ/2 I)), τ = trace, δ² = ((a00 − a11)/2)² + a01 a10.
double two_state_survival(const double a[2][2], const double pi[2], double t) {
  const double tau = a[0][0] + a[1][1], half_diff = 0.5 * (a[0][0] - a[1][1]);
  const double delta = std::sqrt(half_diff * half_diff + a[0][1] * a[1][0]);
  const double c = std::cosh(delta * t), s = delta > 0 ? std::sinh(delta * t) / delta : t;
  double e[2][2];
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) e[i][j] = std::exp(0.5 * tau * t) * ((i == j ? c : 0.0) + s * (a[i][j] - (i == j ? 0.5 * tau : 0.0)));
  }
  return pi[0] * (e[0][0] + e[0][1]) + pi[1] * (e[1][0] + e[1][1]);
}

/// One pool of p3.2xlarge in us-east-1a with one hazard bin of `hazard_per_hour`, up at once at age 0, and a
/// region with two market states.
RevocationModel regime_model(double hazard_per_hour, double calm_multiplier, double stormy_multiplier, double calm_leave_per_hour,
                             double stormy_leave_per_hour, double calm_share) {
  RevocationModel m;
  PoolModel p;
  p.pool = {"p3.2xlarge", "us-east-1a"};
  HazardBin b;
  b.from_age_s = 0;
  b.to_age_s = kInf;
  b.hazard_per_hour = hazard_per_hour;
  b.exposure_s = 3600;
  p.trigger_hazard_by_age = {b};
  p.hazard_by_age = p.trigger_hazard_by_age;
  p.start.up_share = 1;
  PoolInMarketState calm_in, stormy_in;
  calm_in.observed_s = stormy_in.observed_s = 3600;
  calm_in.start.up_share = stormy_in.start.up_share = 1;
  calm_in.trigger_hazard_by_age = stormy_in.trigger_hazard_by_age = {b};
  calm_in.trigger_hazard_by_age[0].hazard_per_hour = calm_multiplier * hazard_per_hour;
  stormy_in.trigger_hazard_by_age[0].hazard_per_hour = stormy_multiplier * hazard_per_hour;
  p.in_state = {calm_in, stormy_in};
  m.pools = {p};
  MarketRegimes r;
  r.region = "us-east-1";
  r.pools = {p.pool.name()};
  MarketState calm, stormy;
  calm.time_share = calm_share;
  calm.hazard_multiplier = calm_multiplier;
  calm.leave_rate_per_hour = calm_leave_per_hour;
  stormy.time_share = 1 - calm_share;
  stormy.hazard_multiplier = stormy_multiplier;
  stormy.leave_rate_per_hour = stormy_leave_per_hour;
  r.states = {calm, stormy};
  m.regimes = {r};
  return m;
}

}  // namespace

TEST_CASE("EM finds a calm and a stormy state in counts built with a known storm, with hand-computed rates") {
  // 50 calm bins (0, 1, 0, 1, ...: rate 0.5), 50 stormy (8 each), 50 calm, each with one expected preemption.
  std::vector<RegimeBin> bins;
  add_bins(bins, 50, calm_pattern);
  add_bins(bins, 50, storm_pattern);
  add_bins(bins, 50, calm_pattern);
  const RegimeFit fit = fit_market_regimes(bins, 1800);
  CHECK(fit.two_states_better);
  CHECK(fit.observed_bins == 150);
  // The posteriors are all but certain (a calm bin of 1 is 16 e^-7.5 < 0.01 times as likely stormy), so the
  // M-step gives each state its bins' mean rate and the leave
  // probabilities are the switches over the transitions from the state: 1 of 99 from calm (the last bin
  // has none), 1 of 50 from stormy.
  CHECK(fit.hazard_multiplier[0] == doctest::Approx(0.5).epsilon(1e-3));
  CHECK(fit.hazard_multiplier[1] == doctest::Approx(8.0).epsilon(1e-3));
  CHECK(fit.leave_probability[0] == doctest::Approx(1.0 / 99).epsilon(1e-2));
  CHECK(fit.leave_probability[1] == doctest::Approx(1.0 / 50).epsilon(1e-2));
  for (std::size_t b = 0; b < bins.size(); ++b) {
    CAPTURE(b);
    CHECK(fit.state_of(b) == (b >= 50 && b < 100 ? 1 : 0));
  }
  // Rates from the per-bin probabilities (file comment of market_regimes.hpp).
  const double p0 = fit.leave_probability[0], p1 = fit.leave_probability[1];
  const double total = -std::log(1 - p0 - p1) / 1800;
  CHECK(fit.leave_rate_per_s[0] == doctest::Approx(p0 * total / (p0 + p1)).epsilon(1e-12));
  CHECK(fit.leave_rate_per_s[1] == doctest::Approx(p1 * total / (p0 + p1)).epsilon(1e-12));
  // The log-likelihoods without the constant: one state at m = (25 + 400 + 25) / 150.
  const double m1 = 450.0 / 150;
  const double one_state = 450 * std::log(m1) - 150 * m1;
  CHECK(fit.one_state_log_likelihood == doctest::Approx(one_state).epsilon(1e-12));
  CHECK(fit.log_likelihood > one_state + 2 * std::log(150.0));
}

TEST_CASE("counts at one steady rate keep one state") {
  std::vector<RegimeBin> bins;
  add_bins(bins, 150, calm_pattern);
  CHECK_FALSE(fit_market_regimes(bins, 1800).two_states_better);
  std::vector<RegimeBin> nothing(20);
  const RegimeFit none = fit_market_regimes(nothing, 1800);
  CHECK_FALSE(none.two_states_better);
  CHECK(none.observed_bins == 0);
}

TEST_CASE("a region's traces with an 8-hour storm give a stormy state that covers it, with its own waits and up shares") {
  // Two zones of us-test-1 over 48 h, stormy together in hours 20 to 28.
  // Storm instances live 20 and 25 minutes: apart by more than the burst window after the first, so that
  // zone b's preemptions are not zone a's followers.
  const std::vector<PoolTrace> traces = {storm_trace("us-test-1a", 48, 20, 28, 0, 1200), storm_trace("us-test-1b", 48, 20, 28, 900, 1500)};
  const RevocationModel m = fit_revocations(traces);
  REQUIRE(m.regimes.size() == 1);
  const MarketRegimes& r = m.regimes.front();
  CHECK(r.region == "us-test-1");
  CHECK(r.pools == std::vector<std::string>{"p3.2xlarge@us-test-1a", "p3.2xlarge@us-test-1b"});
  // Observed bins: those with an instance at an age of positive hazard or a slot down (no preemption
  // came at ages [0, 600) s, so a bin holding only such ages carries no evidence).
  CHECK(r.bins > 16);
  CHECK(r.bins <= 96);
  REQUIRE(r.states.size() == 2);
  // The storm holds 16 half-hour bins (every one observed: a slot is down 30 of every 50 minutes); its
  // opening preemption falls in the bin before, and its last instances and waits run up to 55 minutes past
  // hour 28: 16 to 21 bins.
  const double stormy_bins = r.states[1].time_share * r.bins;
  CHECK(stormy_bins >= 16 - 1e-9);
  CHECK(stormy_bins <= 21 + 1e-9);
  CHECK(r.states[1].hazard_multiplier > 5 * r.states[0].hazard_multiplier);
  CHECK(r.states[1].arrival_multiplier < r.states[0].arrival_multiplier);
  for (const PoolModel& p : m.pools) {
    CAPTURE(p.pool.name());
    REQUIRE(p.in_state.size() == 2);
    // Replacements wait 2 minutes when calm and 30 when stormy (the median of each state's waits).
    REQUIRE(p.in_state[0].replacement_wait.quantiles_s.size() == 101);
    REQUIRE(p.in_state[1].replacement_wait.quantiles_s.size() == 101);
    CHECK(p.in_state[0].replacement_wait.quantiles_s[50] == doctest::Approx(120));
    CHECK(p.in_state[1].replacement_wait.quantiles_s[50] == doctest::Approx(1800));
    // Up 20 of every 50 minutes in the storm; all but 2 minutes in 6 h when calm.
    CHECK(p.in_state[1].start.up_share == doctest::Approx(0.4).epsilon(0.15));
    CHECK(p.in_state[0].start.up_share > 0.98);
    CHECK(p.in_state[0].observed_s + p.in_state[1].observed_s == doctest::Approx(48 * 3600.0));
    CHECK(p.in_state[1].observed_s == doctest::Approx(stormy_bins * 1800));  // every bin of the span observed in the storm
    // The stormy hazard at ages [600, 1800) s, where storm instances die: the multiplier times the baseline.
    CHECK(p.in_state[1].trigger_hazard_by_age[1].hazard_per_hour > 10 * p.in_state[0].trigger_hazard_by_age[1].hazard_per_hour);
    CHECK(p.in_state[1].trigger_hazard_by_age[1].hazard_per_hour /
              (p.in_state[0].trigger_hazard_by_age[1].hazard_per_hour) == doctest::Approx(r.states[1].hazard_multiplier / r.states[0].hazard_multiplier));
  }
  // Off: no regimes.
  RevocationFitOptions off;
  off.market_regimes = false;
  CHECK(fit_revocations(traces, off).regimes.empty());
  CHECK(fit_revocations(traces, off).pools.front().in_state.empty());
}

TEST_CASE("the simulator meets a two-state modulated hazard's closed-form survival, switching or not") {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const Cluster cluster{{"p3.2xlarge", 1}};
  const double t1 = predict(model, cluster, 0.8).training_time_s;
  const double hazard_per_hour = 0.5, calm = 0.2, stormy = 4;
  struct Case {
    double calm_leave_per_hour, stormy_leave_per_hour;
  };
  for (const Case c : {Case{0.0, 0.0}, Case{0.3, 1.5}}) {
    CAPTURE(c.calm_leave_per_hour);
    // The initial state from time_share: the chain's stationary law when it switches, 0.7 calm when not.
    const double total = c.calm_leave_per_hour + c.stormy_leave_per_hour;
    const double calm_share = total > 0 ? c.stormy_leave_per_hour / total : 0.7;
    const RevocationModel m = regime_model(hazard_per_hour, calm, stormy, c.calm_leave_per_hour, c.stormy_leave_per_hour, calm_share);
    SimulateOptions o;
    o.revocations.model = std::make_shared<const RevocationModel>(m);
    o.revocations.type_pools.assign(model.worker_types().size(), {});
    o.revocations.type_pools[*model.worker_type_index("p3.2xlarge")] = {0};
    o.scenarios = 20000;
    o.join_delay_s = 0;
    o.notice_s = 0;
    o.replacement = Replacement::none;  // the job meets the deadline exactly when its one worker outlives t1
    const SimulationResult r = simulate(model, InterruptionModel(model, InterruptionOptions{}), cluster, 0.8, 1.5 * t1, o);
    // S(t) = π e^{(Q − Λ) t} 1, per hour: Q the chain's generator, Λ the hazards in each state.
    const double a[2][2] = {{-c.calm_leave_per_hour - calm * hazard_per_hour, c.calm_leave_per_hour},
                            {c.stormy_leave_per_hour, -c.stormy_leave_per_hour - stormy * hazard_per_hour}};
    const double pi[2] = {calm_share, 1 - calm_share};
    const double expected = two_state_survival(a, pi, t1 / 3600);
    CAPTURE(expected);
    CAPTURE(r.meets_deadline.estimate);
    CHECK(expected > 0.2);
    CHECK(expected < 0.9);
    // A binomial estimate of 20,000: SE <= 0.0036; allow 4 SE.
    CHECK(std::abs(r.meets_deadline.estimate - expected) < 4 * std::sqrt(expected * (1 - expected) / 20000));
  }
}

TEST_CASE("the simulator refuses market states it cannot draw from, naming the field") {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const Cluster cluster{{"p3.2xlarge", 1}};
  const auto refusal = [&](const RevocationModel& m) {
    SimulateOptions o;
    o.revocations.model = std::make_shared<const RevocationModel>(m);
    o.revocations.type_pools.assign(model.worker_types().size(), {});
    o.revocations.type_pools[*model.worker_type_index("p3.2xlarge")] = {0};
    o.scenarios = 10;
    try {
      (void)simulate(model, InterruptionModel(model, InterruptionOptions{}), cluster, 0.8, 7200, o);
    } catch (const invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  RevocationModel one_state = regime_model(0.5, 0.2, 4, 0.3, 1.5, 0.8);
  one_state.regimes[0].states.pop_back();
  CHECK(refusal(one_state).find("options.revocations.model->regimes[0].states.size()") != std::string::npos);
  RevocationModel share = regime_model(0.5, 0.2, 4, 0.3, 1.5, 0.8);
  share.regimes[0].states[0].time_share = 2;
  CHECK(refusal(share).find("regimes[0].states[0].time_share") != std::string::npos);
  RevocationModel rate = regime_model(0.5, 0.2, 4, 0.3, 1.5, 0.8);
  rate.regimes[0].states[1].leave_rate_per_hour = kInf;
  CHECK(refusal(rate).find("regimes[0].states[1].leave_rate_per_hour") != std::string::npos);
  RevocationModel shock = regime_model(0.5, 0.2, 4, 0.3, 1.5, 0.8);
  shock.pools[0].in_state[1].shock_rate_per_hour = -1;
  CHECK(refusal(shock).find("pools[0].in_state[1].shock_rate_per_hour") != std::string::npos);
  RevocationModel hazard = regime_model(0.5, 0.2, 4, 0.3, 1.5, 0.8);
  hazard.pools[0].in_state[0].trigger_hazard_by_age[0].hazard_per_hour = -1;
  CHECK(refusal(hazard).find("pools[0].in_state[0].trigger_hazard_by_age[0].hazard_per_hour") != std::string::npos);
  RevocationModel three = regime_model(0.5, 0.2, 4, 0.3, 1.5, 0.8);
  three.pools[0].in_state.push_back(three.pools[0].in_state[0]);
  CHECK(refusal(three).find("pools[0].in_state.size()") != std::string::npos);
  CHECK(refusal(regime_model(0.5, 0.2, 4, 0.3, 1.5, 0.8)) == "accepted");
}
