// SPDX-License-Identifier: MIT
// fit_revocations on hand-built traces whose figures are computed by hand in the comments: hazards and
// their Garwood intervals by age bin, triggers and followers across two zones, waits and start state on
// ticks, gangs, the first-in-first-out matching of a spot group, fit windows; a Weibull fit on 5,000
// seeded lifetimes; and the real traces of tests/fixtures/traces against their README's figures.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/io/trace_readers.hpp>
#include <spotdnn/revocation/fit_revocations.hpp>

using namespace spotdnn;

namespace {

constexpr double kTight = 1e-12;  // relative tolerance of figures computed in closed form

UpInterval up(double start_s, double end_s, bool preempted, int slot = 0, bool age_known = true) {
  UpInterval u;
  u.start_s = start_s;
  u.end_s = end_s;
  u.preempted = preempted;
  u.slot = slot;
  u.age_known = age_known;
  return u;
}

PoolTrace trace(std::string type, std::string zone, TraceKind kind, double tick_s, double span_s, int slots,
                std::vector<UpInterval> intervals) {
  PoolTrace t;
  t.pool = {std::move(type), std::move(zone)};
  t.kind = kind;
  t.source = t.pool.name() + ".json";
  t.tick_s = tick_s;
  t.span_s = span_s;
  t.slots = slots;
  t.slotted = kind != TraceKind::events;
  t.up = std::move(intervals);
  return t;
}

/// One slot, tick 60 s, span 30,000 s: lifetimes of 1 h, 2 h and 3 h ended by preemptions, then one of
/// 0.5 h still up when the trace ends. Replacement waits 600, 600 and 4,800 s.
PoolTrace three_lifetimes() {
  return trace("m5.large", "us-east-1a", TraceKind::lifetimes, 60, 30000, 1,
               {up(600, 4200, true), up(4800, 12000, true), up(12600, 23400, true), up(28200, 30000, false)});
}

/// A trace fixture's path (tests/fixtures/traces/README.md names the sources).
std::string fixture(const std::string& relative) {
  return std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/traces/" + relative;
}

/// chi-squared CDFs in closed form: 2 and 4 degrees of freedom.
double chi2_cdf_2(double x) { return 1 - std::exp(-x / 2); }
double chi2_cdf_4(double x) { return 1 - std::exp(-x / 2) * (1 + x / 2); }

}  // namespace

TEST_CASE("hazard by age counts each preemption in the bin its exposure ended in, and censoring adds exposure only") {
  const RevocationModel m = fit_revocations({three_lifetimes()});
  REQUIRE(m.pools.size() == 1);
  const PoolModel& p = m.pools[0];
  CHECK(p.instances == 4);
  CHECK(p.preemptions == 3);
  CHECK(p.exposure_s == 23400);
  REQUIRE(p.hazard_by_age.size() == 8);
  // Exposure per bin [0,600) [600,1800) [1800,3600) [3600,7200) [7200,14400) ...: every interval spends
  // 600 s in the first, 1,200 s in the second (the censored 0.5 h ends exactly at 1,800); the 1 h, 2 h
  // and 3 h ones 1,800 s in the third, the 2 h and 3 h ones 3,600 s in the fourth, the 3 h one 3,600 s in
  // the fifth. The 1 h preemption (age 3,600) counts in [1800, 3600), the 2 h in [3600, 7200), the 3 h in
  // [7200, 14400).
  const double exposure[8] = {2400, 4800, 5400, 7200, 3600, 0, 0, 0};
  const int events[8] = {0, 0, 1, 1, 1, 0, 0, 0};
  for (int b = 0; b < 8; ++b) {
    CAPTURE(b);
    CHECK(p.hazard_by_age[std::size_t(b)].exposure_s == doctest::Approx(exposure[b]).epsilon(kTight));
    CHECK(p.hazard_by_age[std::size_t(b)].events == events[b]);
  }
  CHECK(p.hazard_by_age[2].hazard_per_hour == doctest::Approx(3600.0 / 5400).epsilon(kTight));
  CHECK(p.hazard_by_age[3].hazard_per_hour == doctest::Approx(0.5).epsilon(kTight));
  CHECK(p.hazard_by_age[4].hazard_per_hour == doctest::Approx(1.0).epsilon(kTight));
  CHECK(p.hazard_by_age[0].hazard_per_hour == 0);
  CHECK(p.hazard_by_age[0].lower_per_hour == 0);
  CHECK(p.hazard_by_age[7].from_age_s == 57600);
  CHECK(std::isinf(p.hazard_by_age[7].to_age_s));
  CHECK(std::isinf(p.hazard_by_age[5].upper_per_hour));  // no exposure: no upper bound

  // Garwood at 95%: lower = chi2_{0.025}(2)/(2E), upper = chi2_{0.975}(4)/(2E), E = 1.5 h in bin 2.
  const HazardBin& b2 = p.hazard_by_age[2];
  CHECK(b2.lower_per_hour == doctest::Approx(-2 * std::log(0.975) / 3).epsilon(1e-10));
  CHECK(chi2_cdf_4(b2.upper_per_hour * 3) == doctest::Approx(0.975).epsilon(1e-10));
  // An empty bin with exposure: lower 0, upper chi2_{0.975}(2)/(2E) = -2 ln(0.025)/(2E), E = 2400 s.
  CHECK(p.hazard_by_age[0].upper_per_hour == doctest::Approx(-2 * std::log(0.025) / (2 * 2400.0 / 3600)).epsilon(1e-10));
  CHECK(chi2_cdf_2(2 * (2400.0 / 3600) * p.hazard_by_age[0].upper_per_hour) == doctest::Approx(0.975).epsilon(1e-10));

  // No preemption comes within 180 s of another: every one is a trigger.
  for (std::size_t b = 0; b < 8; ++b) CHECK(p.trigger_hazard_by_age[b].events == p.hazard_by_age[b].events);
  CHECK(p.clustering.bursts == 3);
  CHECK(p.clustering.largest_burst == 1);
  CHECK(p.clustering.share_with_another == 0);
  CHECK(p.clustering.share_by_chance == doctest::Approx(1 - std::exp(-2 * 180.0 * 3 / 30000)).epsilon(kTight));
  CHECK_FALSE(p.clustering.observed);
  CHECK(p.clustering.co_preemption_probability == 0);
  CHECK(m.assumptions.empty());
}

TEST_CASE("the exponential and piecewise log-likelihoods are the closed forms, and the best law has the lowest AIC") {
  const RevocationModel m = fit_revocations({three_lifetimes()});
  const ParametricLifetimeFit& f = m.pools[0].parametric;
  // d = 3 over E = 23,400 s: lambda = 3/23400 per s; ln L = d ln(lambda) - d.
  const double lambda = 3.0 / 23400;
  CHECK(f.exponential_hazard_per_hour == doctest::Approx(lambda * 3600).epsilon(kTight));
  CHECK(f.exponential_log_likelihood == doctest::Approx(3 * std::log(lambda) - 3).epsilon(kTight));
  // Piecewise: bins 2, 3 and 4 have one event each: sum of ln(1/E_b) - 1; 5 bins have exposure.
  CHECK(f.piecewise_log_likelihood ==
        doctest::Approx(std::log(1 / 5400.0) + std::log(1 / 7200.0) + std::log(1 / 3600.0) - 3).epsilon(kTight));
  CHECK(f.piecewise_parameters == 5);
  // The Weibull optimum is at least as likely as the exponential (k = 1 is one of its laws).
  CHECK(f.weibull_log_likelihood >= f.exponential_log_likelihood - 1e-9);
  const double aic_exponential = 2 - 2 * f.exponential_log_likelihood;
  const double aic_weibull = 4 - 2 * f.weibull_log_likelihood;
  const double aic_piecewise = 2 * 5 - 2 * f.piecewise_log_likelihood;
  const double best = std::min({aic_exponential, aic_weibull, aic_piecewise});
  CHECK(f.best_by_aic == (best == aic_exponential ? "exponential" : best == aic_weibull ? "weibull" : "piecewise"));
}

TEST_CASE("a Weibull fit on 5,000 seeded Weibull lifetimes with censoring recovers the shape within 0.05") {
  // Shape 0.7, scale 3,600 s; each lifetime also censored at an exponential time of mean 20,000 s. Drawn by
  // inversion from a fixed 64-bit Mersenne Twister (seed 20240520), so the numbers are the same everywhere.
  std::mt19937_64 rng(20240520);
  const auto uniform = [&] { return (double(rng() >> 11) + 0.5) * 0x1.0p-53; };
  std::vector<UpInterval> intervals;
  double t = 1;
  for (int i = 0; i < 5000; ++i) {
    const double lifetime = 3600 * std::pow(-std::log(uniform()), 1 / 0.7);
    const double censor = -20000 * std::log(uniform());
    const double length = std::min(lifetime, censor);
    intervals.push_back(up(t, t + length, lifetime <= censor));
    t += length + 1;
  }
  // One slot, back to back; a censored interval ends before the trace does, which the fit reads as censoring
  // like any other.
  const PoolTrace tr = trace("p3.2xlarge", "us-west-2a", TraceKind::lifetimes, 1, t + 1, 1, intervals);
  const RevocationModel m = fit_revocations({tr});
  const ParametricLifetimeFit& f = m.pools[0].parametric;
  CHECK(std::abs(f.weibull_shape - 0.7) < 0.05);
  CHECK(f.weibull_scale_s == doctest::Approx(3600).epsilon(0.1));
  CHECK(f.best_by_aic != "exponential");
  CHECK(f.weibull_log_likelihood > f.exponential_log_likelihood);
}

TEST_CASE("quantiles of tick ranges equal the quantiles of every member listed") {
  // 300 random multisets (seed 11) of 1-12 ranges of whole numbers, some repeated, against the list.
  std::mt19937_64 rng(11);
  const auto pick = [&](int low, int high) { return low + int(rng() % std::uint64_t(high - low + 1)); };
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    TickRangeMultiset ranges;
    std::vector<double> members;
    for (int k = pick(1, 12); k > 0; --k) {
      const int first = pick(0, 60), last = first + pick(-1, 40);
      if (pick(0, 3) == 0) {
        const int times = pick(1, 5);
        ranges.add_copies(first, times);
        for (int i = 0; i < times; ++i) members.push_back(first * 34.0);
      } else {
        ranges.add(first, last);
        for (int v = first; v <= last; ++v) members.push_back(v * 34.0);
      }
    }
    CHECK(ranges.count() == std::int64_t(members.size()));
    const std::vector<double> expected = quantiles_101(members);
    const std::vector<double> got = ranges.quantiles_101(34.0);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(kTight));
  }
}

TEST_CASE("waits and the start state count every tick of each slot, and replacement waits end at the next interval") {
  const RevocationModel m = fit_revocations({three_lifetimes()});
  const PoolModel& p = m.pools[0];
  // Replacement waits 600, 600, 4800: quantile p at h = 2p between order statistics.
  CHECK(p.replacement_wait.observed == 3);
  CHECK(p.replacement_wait.none_came == 0);
  CHECK(p.replacement_wait.none_share == 0);
  REQUIRE(p.replacement_wait.quantiles_s.size() == 101);
  CHECK(p.replacement_wait.quantiles_s[0] == 600);
  CHECK(p.replacement_wait.quantiles_s[50] == 600);
  CHECK(p.replacement_wait.quantiles_s[75] == doctest::Approx(2700).epsilon(kTight));
  CHECK(p.replacement_wait.quantiles_s[100] == 4800);

  // 500 ticks of 60 s; up at ticks [10,70), [80,200), [210,390), [470,500): 390 up ticks, 23,400 s of 30,000.
  CHECK(p.start.up_share == doctest::Approx(0.78).epsilon(kTight));
  // Down ticks: [0,10), [70,80), [200,210) wait 10..1 ticks each, [390,470) waits 80..1: 110 waits, all
  // ended. Sorted: 1..10 four times each (ranks 0..39), then 11..80: median (h = 54.5) = 25.5 ticks.
  CHECK(p.start.wait.observed == 110);
  CHECK(p.start.wait.none_came == 0);
  REQUIRE(p.start.wait.quantiles_s.size() == 101);
  CHECK(p.start.wait.quantiles_s[0] == 60);
  CHECK(p.start.wait.quantiles_s[50] == doctest::Approx(25.5 * 60).epsilon(kTight));
  CHECK(p.start.wait.quantiles_s[100] == 80 * 60);
  // Ages in ticks: 0..59, 0..119, 0..179, 0..29 (390 values). Ranks 0..119 are 0..29 four times, then
  // 30..59 three times: median h = 194.5 between rank 194 (54) and 195 (55).
  REQUIRE(p.start.age_quantiles_s.size() == 101);
  CHECK(p.start.age_quantiles_s[0] == 0);
  CHECK(p.start.age_quantiles_s[50] == doctest::Approx(54.5 * 60).epsilon(kTight));
  CHECK(p.start.age_quantiles_s[100] == 179 * 60);
  CHECK_FALSE(p.gang.has_value());
}

TEST_CASE("two zones with simultaneous preemptions give the followers, triggers and co-preemption figures by hand") {
  // Region us-east-1, zones a and b, two slots each, span 10,000 s on one clock.
  //  a/0: [100,1000) preempted, [1500,10000) up;  a/1: [100,1000) preempted, [2000,5000) preempted, [6000,10000) up
  //  b/0: [100,1000) preempted, [1200,5100) preempted, [5500,10000) up;  b/1: [100,10000) up
  // In order: a/0@1000 trigger; a/1@1000 pool follower (same time, later slot); b/0@1000 zone follower;
  // a/1@5000 trigger (a/0's preemption is 4,000 s before); b/0@5100 zone follower (up since 1,200).
  const PoolTrace a = trace("r5.16xlarge", "us-east-1a", TraceKind::lifetimes, 10, 10000, 2,
                            {up(100, 1000, true, 0), up(100, 1000, true, 1), up(1500, 10000, false, 0),
                             up(2000, 5000, true, 1), up(6000, 10000, false, 1)});
  const PoolTrace b = trace("r5.16xlarge", "us-east-1b", TraceKind::lifetimes, 10, 10000, 2,
                            {up(100, 1000, true, 0), up(100, 10000, false, 1), up(1200, 5100, true, 0),
                             up(5500, 10000, false, 0)});
  const RevocationModel m = fit_revocations({a, b});
  REQUIRE(m.pools.size() == 2);
  const PoolModel& pa = m.pools[0];
  const PoolModel& pb = m.pools[1];
  CHECK(pa.pool.zone == "us-east-1a");

  // Pool a: preemptions 1000, 1000, 5000. Triggers of the pool: a/0@1000 (a/1 up: 1 other) and a/1@5000
  // (a/0 up: 1 other): 2 opportunities, 1 follower.
  CHECK(pa.clustering.share_with_another == doctest::Approx(2.0 / 3).epsilon(kTight));
  CHECK(pa.clustering.share_by_chance == doctest::Approx(1 - std::exp(-2 * 180.0 * 3 / 10000)).epsilon(kTight));
  CHECK(pa.clustering.bursts == 2);
  CHECK(pa.clustering.largest_burst == 2);
  CHECK(pa.clustering.observed);
  CHECK(pa.clustering.co_preemption_probability == doctest::Approx(0.5).epsilon(kTight));
  // Pool b: preemptions 1000 and 5100, no pool follower, 2 opportunities (b/1 is up at both).
  CHECK(pb.clustering.share_with_another == 0);
  CHECK(pb.clustering.observed);
  CHECK(pb.clustering.co_preemption_probability == 0);

  // Shocks: pool a's burst at 1000 (a/0 and a/1, both up just before it: hit 2 of 2) is its one shock,
  // 1 in 10,000 s = 0.36 per hour; pool b's preemptions are 4,100 s apart: none.
  CHECK(pa.clustering.shocks == 1);
  CHECK(pa.clustering.shock_hit_probability == doctest::Approx(1.0).epsilon(kTight));
  CHECK(pa.clustering.shock_rate_per_hour == doctest::Approx(0.36).epsilon(kTight));
  CHECK(pb.clustering.shocks == 0);
  CHECK(pb.clustering.shock_rate_per_hour == 0);
  // The lifetime ("trigger") hazard counts the preemptions that came alone: a keeps a/1@5000 (age 3000, bin
  // [1800,3600)); a/0@1000 is its burst's (the shock's); b keeps none. Every hazard keeps its exposure.
  CHECK(pa.hazard_by_age[1].events == 2);
  CHECK(pa.trigger_hazard_by_age[1].events == 0);
  CHECK(pa.trigger_hazard_by_age[2].events == 1);
  CHECK(pb.hazard_by_age[1].events == 1);
  CHECK(pb.hazard_by_age[3].events == 1);  // age 3900
  int b_triggers = 0;
  for (std::size_t k = 0; k < pb.trigger_hazard_by_age.size(); ++k) {
    b_triggers += pb.trigger_hazard_by_age[k].events;
    CHECK(pb.trigger_hazard_by_age[k].exposure_s == pb.hazard_by_age[k].exposure_s);
  }
  CHECK(b_triggers == 0);

  // Region: all 5 preemptions while the other zone is observed, all with one of the other zone within 180 s.
  // By chance: a's 3 see b's rate 2/10000, b's 2 see a's 3/10000. Zone followers 2, over the instances of
  // the other zone up at the triggers a@1000 (b/0 and b/1) and a@5000 (b/0 and b/1): 4.
  REQUIRE(m.regions.size() == 1);
  const RegionCorrelation& r = m.regions[0];
  CHECK(r.region == "us-east-1");
  CHECK(r.zones == std::vector<std::string>{"us-east-1a", "us-east-1b"});
  CHECK(r.preemptions == 5);
  CHECK(r.share_with_other_zone == 1);
  CHECK(r.share_by_chance ==
        doctest::Approx((3 * (1 - std::exp(-2 * 180.0 * 2 / 10000)) + 2 * (1 - std::exp(-2 * 180.0 * 3 / 10000))) / 5).epsilon(kTight));
  CHECK(r.co_preemption_probability == doctest::Approx(0.5).epsilon(kTight));
}

TEST_CASE("a quick second preemption of a replacement is a trigger, not a follower") {
  // One slot: preempted at 1000, replaced at 1040, preempted again at 1100 (60 s later, within the window):
  // the replacement was not up at 1000, so the simulator could not have preempted it with the first.
  const PoolTrace t = trace("p3.2xlarge", "us-west-2a", TraceKind::lifetimes, 10, 5000, 1,
                            {up(100, 1000, true), up(1040, 1100, true), up(2000, 5000, false)});
  const PoolModel p = fit_revocations({t}).pools[0];
  CHECK(p.hazard_by_age[0].events == 1);  // the 60 s lifetime
  CHECK(p.trigger_hazard_by_age[0].events == 1);
  CHECK(p.clustering.share_with_another == 1);
  CHECK(p.clustering.bursts == 1);
  CHECK(p.clustering.largest_burst == 2);
}

TEST_CASE("a counts trace gives the gang shares, the waits with none came, and the availability assumption") {
  // 2 slots, 10 ticks of 10 s. Slot 0 up [0,60) (preempted, age unknown) and [80,100); slot 1 up [20,50).
  // Slots up per tick: 1 1 2 2 2 1 0 0 1 1 -> k=0: 2 ticks, k=1: 5, k=2: 3.
  const PoolTrace t = trace("p3.2xlarge", "us-east-2b", TraceKind::counts, 10, 100, 2,
                            {up(0, 60, true, 0, /*age_known=*/false), up(20, 50, true, 1), up(80, 100, false, 0)});
  const RevocationModel m = fit_revocations({t});
  const PoolModel& p = m.pools[0];
  REQUIRE(p.gang.has_value());
  CHECK(p.gang->requested == 2);
  REQUIRE(p.gang->count_share.size() == 3);
  CHECK(p.gang->count_share[0] == doctest::Approx(0.2).epsilon(kTight));
  CHECK(p.gang->count_share[1] == doctest::Approx(0.5).epsilon(kTight));
  CHECK(p.gang->count_share[2] == doctest::Approx(0.3).epsilon(kTight));
  // Down ticks: slot 0 at 6, 7 (waits 2, 1 ticks); slot 1 at 0, 1 (waits 2, 1) and 5..9 (none came).
  CHECK(p.start.wait.observed == 9);
  CHECK(p.start.wait.none_came == 5);
  CHECK(p.start.wait.none_share == doctest::Approx(5.0 / 9).epsilon(kTight));
  CHECK(p.start.wait.quantiles_s[50] == doctest::Approx(15).epsilon(kTight));
  CHECK(p.start.up_share == doctest::Approx(110.0 / 200).epsilon(kTight));
  // Replacements: slot 0 waits 20 s; slot 1 has none.
  CHECK(p.replacement_wait.observed == 2);
  CHECK(p.replacement_wait.none_came == 1);
  CHECK(p.replacement_wait.none_share == 0.5);
  CHECK(p.replacement_wait.quantiles_s[0] == 20);
  CHECK(p.replacement_wait.quantiles_s[100] == 20);
  // Ages: slot 0's first interval is aged from the trace's start (0..5 ticks), slot 1's 0..2, the last 0..1.
  CHECK(p.start.age_quantiles_s[100] == 50);
  // The interval of unknown age stays out of the hazard: exposure is 30 + 20 s.
  double exposure = 0;
  for (const HazardBin& b : p.hazard_by_age) exposure += b.exposure_s;
  CHECK(exposure == 50);
  CHECK(p.preemptions == 2);
  REQUIRE(m.assumptions.size() == 2);
  CHECK(m.assumptions[0] == kAvailabilityWindowAssumption);
  CHECK(m.assumptions[1].find("p3.2xlarge@us-east-2b: 1 instance already up") == 0);
}

TEST_CASE("a spot group's waits are until the group adds its next node, as a job taking any new node meets them") {
  // 3 slots (most nodes up at once), ticks of 60 s, span 6,000 s. Nodes: n1 [0,1200) removed, n2 [0,6000),
  // n5 [0,1300) removed, n3 [1500,2400) removed, n4 [3000,6000) (n1, n2, n5 up at the trace's start). After
  // n1's removal the next node comes at 1500 (300 s), after n5's at 1500 (200 s), after n3's at 3000 (600 s).
  PoolTrace t = trace("p3.2xlarge", "us-east-1a", TraceKind::events, 60, 6000, 3,
                      {up(0, 1200, true, -1, false), up(0, 6000, false, -1, false), up(0, 1300, true, -1, false),
                       up(1500, 2400, true, -1), up(3000, 6000, false, -1)});
  const RevocationModel m = fit_revocations({t});
  const PoolModel& p = m.pools[0];
  CHECK(p.replacement_wait.observed == 3);
  CHECK(p.replacement_wait.none_came == 0);
  CHECK(p.replacement_wait.quantiles_s[0] == 200);
  CHECK(p.replacement_wait.quantiles_s[100] == 600);
  CHECK(p.replacement_wait.quantiles_s[50] == 300);
  // Up share over the first-in-first-out slots: 12,400 node-seconds of 3 x 6,000.
  CHECK(p.start.up_share == doctest::Approx(12400.0 / 18000).epsilon(kTight));
  // From every tick, the wait for the group's next node: ticks 0..25 wait 25..0 ticks (n3 at tick 25),
  // ticks 26..50 wait 24..0 (n4 at tick 50), ticks 51..99 see none come.
  CHECK(p.start.wait.observed == 26 + 25 + 49);
  CHECK(p.start.wait.none_came == 49);
  CHECK(p.start.wait.quantiles_s[0] == 0);
  CHECK(p.start.wait.quantiles_s[100] == 25 * 60);
  // The group's gang law: k nodes up at each tick (k = 0..3).
  REQUIRE(p.gang.has_value());
  CHECK(p.gang->requested == 3);
  REQUIRE(m.assumptions.size() == 2);
  CHECK(m.assumptions[0] == kSpotGroupAssumption);
}

TEST_CASE("a fit window cuts intervals: the end censored, the start observed from the age it had") {
  const PoolTrace t = trace("m5.large", "us-east-1a", TraceKind::lifetimes, 10, 10000, 1, {up(1000, 5000, true), up(6000, 10000, false)});
  RevocationFitOptions early;
  early.to_s = 3000;
  const PoolModel p1 = fit_revocations({t}, early).pools[0];
  CHECK(p1.from_s == 0);
  CHECK(p1.to_s == 3000);
  CHECK(p1.preemptions == 0);
  CHECK(p1.exposure_s == 2000);
  CHECK(p1.replacement_wait.observed == 0);
  CHECK(p1.start.up_share == doctest::Approx(2000.0 / 3000).epsilon(kTight));

  RevocationFitOptions late;
  late.from_s = 2000;
  const PoolModel p2 = fit_revocations({t}, late).pools[0];
  CHECK(p2.from_s == 2000);
  CHECK(p2.to_s == 10000);
  CHECK(p2.preemptions == 1);
  // The first interval is observed from age 1000 to 4000: [1000,1800) 800 s, [1800,3600) 1,800 s,
  // [3600,7200) 400 s, and its preemption at age 4000 counts in [3600, 7200); the second (censored) from
  // age 0 to 4000.
  CHECK(p2.hazard_by_age[0].exposure_s == 600);  // only the second interval is seen young
  CHECK(p2.hazard_by_age[1].exposure_s == 800 + 1200);
  CHECK(p2.hazard_by_age[2].exposure_s == 1800 + 1800);
  CHECK(p2.hazard_by_age[3].exposure_s == 400 + 400);
  CHECK(p2.hazard_by_age[3].events == 1);
  CHECK(p2.replacement_wait.quantiles_s[0] == 1000);
  // Ages at ticks: the first interval is 1,000 s old at the window's first tick.
  CHECK(p2.start.age_quantiles_s[100] == 3990);
}

TEST_CASE("traces of one pool are pooled, and bad options, traces and windows are refused") {
  PoolTrace first = three_lifetimes();
  PoolTrace second = three_lifetimes();
  second.source = "again.json";
  const RevocationModel pooled = fit_revocations({first, second});
  REQUIRE(pooled.pools.size() == 1);
  CHECK(pooled.pools[0].instances == 8);
  CHECK(pooled.pools[0].sources.size() == 2);
  CHECK(pooled.pools[0].hazard_by_age[2].exposure_s == 10800);

  const auto refused = [](const std::vector<PoolTrace>& traces, const RevocationFitOptions& o) {
    CHECK_THROWS_AS((void)fit_revocations(traces, o), spotdnn::invalid_argument);
  };
  RevocationFitOptions o;
  refused({}, o);
  o.age_bin_edges_s = {0, 600, 600};
  refused({first}, o);
  o.age_bin_edges_s = {10, 600};
  refused({first}, o);
  o = {};
  o.burst_window_s = 0;
  refused({first}, o);
  o = {};
  o.confidence_level = 1;
  refused({first}, o);
  o = {};
  o.from_s = 100;
  o.to_s = 100;
  refused({first}, o);
  o = {};
  o.from_s = 40000;  // past every trace's end
  refused({first}, o);
  PoolTrace overlapping = three_lifetimes();
  overlapping.up[1].start_s = 4000;
  refused({overlapping}, {});
  PoolTrace counts = three_lifetimes();
  counts.kind = TraceKind::counts;
  refused({first, counts}, {});
  PoolTrace beyond = three_lifetimes();
  beyond.up.back().end_s = 30001;
  refused({beyond}, {});
}

TEST_CASE("the r5.16xlarge us-east-1c preemption trace shows a hazard falling with age and replacements of minutes") {
  // Fixture copied from skypilot-org/spot-traces (tests/fixtures/traces/README.md), read as `lifetimes`.
  io::TraceFileOptions options;
  options.kind = TraceKind::lifetimes;
  const std::vector<PoolTrace> traces = io::read_trace_files({fixture("preemption/1-node/aws-04-19-2023/us-east-1c_intel_64.json")}, options);
  REQUIRE(traces.size() == 1);
  const PoolModel p = fit_revocations(traces).pools[0];
  CHECK(p.pool.type == "r5.16xlarge");
  // The README's "what they show": 1.32 preemptions per instance-hour in us-east-1c overall (within 5%);
  // the hazard falls with age (first 30 minutes against 2-4 h); the median replacement wait 7-9 minutes
  // (loosely: 5-15).
  CHECK(p.preemptions / (p.exposure_s / 3600) == doctest::Approx(1.32).epsilon(0.05));
  const auto rate = [&](std::size_t from, std::size_t to) {
    double d = 0, e = 0;
    for (std::size_t b = from; b < to; ++b) {
      d += p.hazard_by_age[b].events;
      e += p.hazard_by_age[b].exposure_s;
    }
    return d / e * 3600;
  };
  CHECK(rate(0, 2) > 2 * rate(4, 5));
  CHECK(p.parametric.weibull_shape < 1);
  CHECK(p.parametric.best_by_aic != "exponential");
  REQUIRE(p.replacement_wait.quantiles_s.size() == 101);
  CHECK(p.replacement_wait.quantiles_s[50] > 300);
  CHECK(p.replacement_wait.quantiles_s[50] < 900);
  CHECK_FALSE(p.clustering.observed);
}

TEST_CASE("the three us-east-1 r5.16xlarge pools give the README's hazards by age when pooled") {
  io::TraceFileOptions options;
  options.kind = TraceKind::lifetimes;
  const std::string folder = "preemption/1-node/aws-04-19-2023/";
  const RevocationModel m = fit_revocations(io::read_trace_files(
      {fixture(folder + "us-east-1b_intel_64.json"), fixture(folder + "us-east-1c_intel_64.json"), fixture(folder + "us-east-1d_intel_64.json")},
      options));
  REQUIRE(m.pools.size() == 3);
  // Pooled over the zones: 1.79 per instance-hour in the first 30 minutes, 0.35/h at 2-4 h, 0.16/h at
  // 4-8 h (the README's figures, to their two digits).
  const auto pooled = [&](std::size_t from, std::size_t to) {
    double d = 0, e = 0;
    for (const PoolModel& p : m.pools) {
      for (std::size_t b = from; b < to; ++b) {
        d += p.hazard_by_age[b].events;
        e += p.hazard_by_age[b].exposure_s;
      }
    }
    return d / e * 3600;
  };
  CHECK(pooled(0, 2) == doctest::Approx(1.79).epsilon(0.005));
  CHECK(pooled(4, 5) == doctest::Approx(0.35).epsilon(0.02));
  CHECK(pooled(5, 6) == doctest::Approx(0.16).epsilon(0.04));
  // Pools differ by 7x inside the region: 0.19/h in us-east-1d, 1.32/h in us-east-1c.
  const PoolModel* d = m.find("r5.16xlarge", "us-east-1d");
  REQUIRE(d != nullptr);
  CHECK(d->parametric.exponential_hazard_per_hour == doctest::Approx(0.19).epsilon(0.03));
  REQUIRE(m.regions.size() == 1);
  CHECK(m.regions[0].zones.size() == 3);
  CHECK(m.regions[0].share_with_other_zone > m.regions[0].share_by_chance);
}

TEST_CASE("the Bamboo p3 spot group's removals come in bursts far beyond chance") {
  // Fixture copied from uclasystem/bamboo (MIT). README: 92% of removals have another within 3 minutes
  // (77% would by chance at the same rate); bursts of up to 17 nodes.
  io::TraceFileOptions options;
  options.kind = TraceKind::events;
  options.type = "p3.2xlarge";
  options.zone = "us-east-1a";
  const RevocationModel m = fit_revocations(io::read_trace_files({fixture("events/p3-trace.csv")}, options));
  const PoolModel& p = m.pools[0];
  CHECK(p.clustering.share_with_another == doctest::Approx(0.92).epsilon(0.01));
  CHECK(p.clustering.share_by_chance == doctest::Approx(0.77).epsilon(0.01));
  CHECK(p.clustering.largest_burst == 17);
  CHECK(p.clustering.observed);
  CHECK(p.clustering.co_preemption_probability > 0);
  // Followers are taken out of the trigger hazard: fewer triggers than preemptions.
  int triggers = 0;
  for (const HazardBin& b : p.trigger_hazard_by_age) triggers += b.events;
  CHECK(triggers < p.preemptions / 2);
  REQUIRE(m.assumptions.size() == 1);
  CHECK(m.assumptions[0] == kSpotGroupAssumption);
}

TEST_CASE("a 16-node counts trace gives all 16 of 16 in 42-46% of ticks in us-east-2b") {
  io::TraceFileOptions options;
  options.kind = TraceKind::counts;
  options.requested = 16;
  const RevocationModel m = fit_revocations(io::read_trace_files({fixture("availability/16-node/aws-08-27-2023/us-east-2b_v100_1.json")}, options));
  const PoolModel& p = m.pools[0];
  REQUIRE(p.gang.has_value());
  CHECK(p.gang->requested == 16);
  CHECK(p.gang->count_share[16] > 0.42);
  CHECK(p.gang->count_share[16] < 0.46);
  CHECK(m.assumptions[0] == kAvailabilityWindowAssumption);
}
