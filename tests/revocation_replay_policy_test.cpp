// SPDX-License-Identifier: MIT
// Replacement policies of a replayed cluster job (none, same-type, replan, guard) against hand-made traces
// whose windows are worked out by hand or by the re-planner they must agree with.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <spotdnn/presets.hpp>
#include <spotdnn/revocation/replan.hpp>
#include <spotdnn/revocation/replay.hpp>

#include "support/series_trace.hpp"

using namespace spotdnn;
using spotdnn::test::series_trace;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

/// The hand arithmetic of docs/model.md eq. (6): on cluster c, u = 1/(loss − a) = (j + γ1)/A_c grows by
/// iterations_per_s / A_c per second (numerator(): A_c; rate(): du/dt).
struct HandCurve {
  const PerformanceModel& model;
  double target_loss;
  [[nodiscard]] double numerator(const std::vector<int>& counts) const {
    const std::vector<double>& g = model.workload().loss_model.gamma;
    const Estimate e = model.estimate(counts, target_loss);
    return (g[1] * e.weighted_batch + g[2]) * std::sqrt(double(e.workers));
  }
  [[nodiscard]] double rate(const std::vector<int>& counts) const {
    return model.estimate(counts, target_loss).iterations_per_s / numerator(counts);
  }
};

ReplayOptions cluster_options(double deadline_s, ReplayPolicy policy) {
  ReplayOptions o;
  o.deadline_s = deadline_s;
  o.join_delay_s = 120;
  o.keep_windows = true;
  o.stride_ticks = 1000000;  // the first window only
  o.policy = policy;
  return o;
}

}  // namespace

TEST_CASE("policy none leaves a lost worker unreplaced while same-type waits for its slot's next interval") {
  const PerformanceModel model = preset_model();
  const std::vector<int> two = model.counts_of(Cluster{{"p3.2xlarge", 2}});
  const std::vector<int> one = model.counts_of(Cluster{{"p3.2xlarge", 1}});
  const std::string always(600, '1');
  std::string b = always;
  for (std::size_t i = 20; i < 50; ++i) b[i] = '0';  // B: up [0, 1200), back at 3000
  const std::vector<PoolTrace> traces{series_trace(always, 60), series_trace(b, 60)};
  const HandCurve hand{model, 0.8};
  const double a = model.workload().loss_model.asymptote();
  const double u_target = 1 / (0.8 - a);
  const double gamma1 = model.workload().loss_model.gamma[0];

  // none: both join at 120, two train until 1200, then A alone to the end.
  double u = gamma1 / hand.numerator(two) + (1200 - 120) * hand.rate(two);
  const double finish_none = 1200 + (u_target - u) / hand.rate(one);
  const ReplayResult none = replay(model, two, 0.8, traces, cluster_options(20000, ReplayPolicy::none));
  REQUIRE(none.outcomes.size() >= 1);
  CHECK(none.policy == ReplayPolicy::none);
  CHECK(none.outcomes[0].finished);
  CHECK(none.outcomes[0].time_s == doctest::Approx(finish_none).epsilon(1e-9));
  CHECK(none.outcomes[0].preemptions == 1);
  CHECK(none.outcomes[0].replans == 0);
  const double price = model.worker_types()[*model.worker_type_index("p3.2xlarge")].price_usd_per_hour;
  const double ps = model.catalog().parameter_server.price_usd_per_hour;
  CHECK(none.outcomes[0].cost_usd == doctest::Approx(price * (finish_none + 1200) / 3600 + ps * finish_none / 3600).epsilon(1e-9));

  // same-type, given explicitly, is replay()'s default: B is back at 3000 and joins at 3120.
  ReplayOptions defaults = cluster_options(20000, ReplayPolicy::same_type);
  const ReplayResult same = replay(model, two, 0.8, traces, defaults);
  u = gamma1 / hand.numerator(two) + (1200 - 120) * hand.rate(two) + (3120 - 1200) * hand.rate(one);
  CHECK(same.outcomes[0].time_s == doctest::Approx(3120 + (u_target - u) / hand.rate(two)).epsilon(1e-9));
  CHECK(same.outcomes[0].time_s < none.outcomes[0].time_s);
}

TEST_CASE("replan adds the exact re-plan's choice on a free slot of its type and finishes when the re-plan predicts") {
  const PerformanceModel model = preset_model();
  const std::vector<int> two = model.counts_of(Cluster{{"p3.2xlarge", 2}});
  const std::string always(600, '1');
  std::string b = always;
  for (std::size_t i = 20; i < 600; ++i) b[i] = '0';  // B: up [0, 1200), never again
  // Spare capacity of the same type: a counts trace of four slots, always up.
  PoolTrace spare = series_trace(always, 60);
  spare.kind = TraceKind::counts;
  spare.slots = 4;
  for (int s = 1; s < 4; ++s) {
    UpInterval up = spare.up[0];
    up.slot = s;
    spare.up.push_back(up);
  }
  const std::vector<PoolTrace> traces{series_trace(always, 60), series_trace(b, 60), spare};
  const double deadline_s = 3000;
  const ReplayResult r = replay(model, two, 0.8, traces, cluster_options(deadline_s, ReplayPolicy::replan));
  REQUIRE(r.outcomes.size() >= 1);
  const ReplayWindow& w = r.outcomes[0];
  CHECK(w.replans == 1);

  // The re-plan at 1200 from the loss reached then, excluding the types without a trace.
  const HandCurve hand{model, 0.8};
  const double a = model.workload().loss_model.asymptote();
  const double gamma1 = model.workload().loss_model.gamma[0];
  const double u = gamma1 / hand.numerator(two) + (1200 - 120) * hand.rate(two);
  ReplanRequest q;
  q.survivors = Cluster{{"p3.2xlarge", 1}};
  q.elapsed_s = 1200;
  q.deadline_s = deadline_s;
  q.target_loss = 0.8;
  q.loss_reached = a + 1 / u;
  ReplanOptions ro;
  ro.join_delay_s = 120;
  for (const WorkerType& t : model.worker_types()) {
    if (t.name != "p3.2xlarge") ro.exclude_types.push_back(t.name);
  }
  const ReplanResult expected = replan(model, q, ro);
  REQUIRE(expected.status == Status::optimal);
  REQUIRE(!expected.additions.empty());  // the survivor alone is too slow: the test needs an addition
  CHECK(w.finished);
  CHECK(w.met);
  CHECK(w.time_s == doctest::Approx(expected.completion_time_s).epsilon(1e-9));

  // Without spare slots the addition finds no capacity: the survivor finishes alone, later.
  const ReplayResult starved = replay(model, two, 0.8, {traces[0], traces[1]}, cluster_options(deadline_s, ReplayPolicy::replan));
  CHECK(starved.outcomes[0].replans == 1);
  CHECK(starved.outcomes[0].time_s > w.time_s);
}

TEST_CASE("the guard switches to on-demand at the moment T_od equals the time left less the margin and then meets the deadline") {
  const PerformanceModel model = preset_model();
  const std::vector<int> one = model.counts_of(Cluster{{"p3.2xlarge", 1}});
  std::string bits(800, '0');
  for (std::size_t i = 0; i < 10; ++i) bits[i] = '1';  // up [0, 600), then no spot capacity at all
  const std::vector<PoolTrace> traces{series_trace(bits, 60)};
  const double deadline_s = 30000, margin_s = 1800;
  ReplayOptions o = cluster_options(deadline_s, ReplayPolicy::guard);
  o.guard_margin_s = margin_s;
  const ReplayResult r = replay(model, one, 0.8, traces, o);
  REQUIRE(r.outcomes.size() >= 1);
  const ReplayWindow& w = r.outcomes[0];
  CHECK(w.switched);
  CHECK(r.switched_windows == 1);
  CHECK(w.replans == 1);  // at 600, on spot: the addition finds no capacity
  CHECK(w.met);
  CHECK(w.on_demand_cost_usd > 0);

  // After 600 the loss stays where one worker left it (trained 120 .. 600); the fastest on-demand cluster
  // from there takes T_od = d + K·h, and the guard switches when (T − t) − m = T_od.
  const HandCurve hand{model, 0.8};
  const double a = model.workload().loss_model.asymptote();
  const double gamma1 = model.workload().loss_model.gamma[0];
  const double u = gamma1 / hand.numerator(one) + (600 - 120) * hand.rate(one);
  ReplanRequest q;
  q.elapsed_s = 0;
  q.deadline_s = 1;  // no time after the join delay: the re-plan reports its fastest cluster
  q.target_loss = 0.8;
  q.loss_reached = a + 1 / u;
  ReplanOptions ro;
  ro.join_delay_s = 120;
  for (const WorkerType& t : model.worker_types()) ro.plan.markets[t.name] = Market::on_demand;
  const ReplanResult fastest = replan(model, q, ro);
  REQUIRE(std::isfinite(fastest.fastest_finish_time_s));
  CHECK(w.switch_s == doctest::Approx(deadline_s - margin_s - fastest.fastest_finish_time_s).epsilon(1e-9));

  // same-type waits for capacity that never comes: unfinished, missed.
  const ReplayResult same = replay(model, one, 0.8, traces, cluster_options(deadline_s, ReplayPolicy::same_type));
  CHECK(!same.outcomes[0].met);
  CHECK(!same.outcomes[0].finished);
  // With no worker left and no capacity to come, the job is abandoned at 600: billed until then, not to
  // the traces' end.
  const double price = model.worker_types()[*model.worker_type_index("p3.2xlarge")].price_usd_per_hour;
  const double ps = model.catalog().parameter_server.price_usd_per_hour;
  CHECK(same.outcomes[0].cost_usd == doctest::Approx((price + ps) * 600 / 3600).epsilon(1e-9));
}

TEST_CASE("the guard meets every window on-demand alone could meet with its margin on a trace of frequent preemptions") {
  const PerformanceModel model = preset_model();
  const std::vector<int> counts = model.counts_of(Cluster{{"p3.2xlarge", 2}});
  // Two slots, 60 s ticks, 3 days: up for a pseudo-random 5–60 min, down for 2–120 min (fixed LCG).
  std::vector<PoolTrace> traces;
  std::uint64_t state = 12345;
  auto next = [&](int lo, int hi) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + int((state >> 33) % std::uint64_t(hi - lo + 1));
  };
  for (int s = 0; s < 2; ++s) {
    std::string bits;
    while (bits.size() < 4320) {
      bits += std::string(std::size_t(next(5, 60)), '1');
      bits += std::string(std::size_t(next(2, 120)), '0');
    }
    bits.resize(4320);
    traces.push_back(series_trace(bits, 60));
  }
  const Estimate e = model.estimate(counts, 0.8);
  ReplayOptions o = cluster_options(e.training_time_s * 1.6, ReplayPolicy::guard);
  o.stride_ticks = 7;
  o.guard_margin_s = 600;
  const ReplayResult guard = replay(model, counts, 0.8, traces, o);
  o.policy = ReplayPolicy::same_type;
  const ReplayResult same = replay(model, counts, 0.8, traces, o);
  REQUIRE(guard.windows > 50);
  CHECK(same.meets_deadline.estimate < 1.0);  // the market alone misses some: the guard has work to do
  int checked = 0;
  for (const ReplayWindow& w : guard.outcomes) {
    if (!w.decided) continue;
    ++checked;
    CHECK(w.met);
  }
  CHECK(checked == guard.windows);
  CHECK(guard.switched_windows > 0);
  CHECK(guard.switched_windows < guard.windows);  // and it does not simply buy on-demand everywhere
}

TEST_CASE("replay refuses a guard without on-demand prices, a policy for a work job and a negative margin, naming each") {
  const PerformanceModel model = preset_model();
  const std::vector<int> one = model.counts_of(Cluster{{"p3.2xlarge", 1}});
  const std::vector<PoolTrace> traces{series_trace(std::string(600, '1'), 60)};
  ReplayOptions o = cluster_options(20000, ReplayPolicy::guard);
  o.guard_margin_s = -1;
  CHECK_THROWS_WITH_AS((void)replay(model, one, 0.8, traces, o), doctest::Contains("options.guard_margin_s"), invalid_argument);

  Catalog no_on_demand = presets::resnet110_catalog();
  for (InstanceType& t : no_on_demand.instance_types) t.on_demand_price_usd_per_hour = 0;
  const PerformanceModel spot_only(presets::resnet110_workload(), no_on_demand);
  o.guard_margin_s = 0;
  CHECK_THROWS_WITH_AS((void)replay(spot_only, one, 0.8, traces, o), doctest::Contains("no worker type on demand"), invalid_argument);

  ReplayOptions work;
  work.deadline_s = 1000;
  work.policy = ReplayPolicy::replan;
  CHECK_THROWS_WITH_AS((void)replay_work(500, traces, work), doctest::Contains("options.policy"), invalid_argument);
  // A starting cluster above its type's quota (2) fails before any window, as the re-plan would.
  ReplayOptions replanning = cluster_options(20000, ReplayPolicy::replan);
  std::vector<int> over(model.worker_types().size(), 0);
  over[*model.worker_type_index("p3.2xlarge")] = 3;
  const std::vector<PoolTrace> three_slots{traces[0], traces[0], traces[0]};
  CHECK(replay(model, over, 0.8, three_slots, cluster_options(20000, ReplayPolicy::same_type)).status == Status::feasible);
  CHECK_THROWS_WITH_AS((void)replay(model, over, 0.8, three_slots, replanning), doctest::Contains("quota"), invalid_argument);
  CHECK(parse_replay_policy("same_type") == ReplayPolicy::same_type);
  CHECK(!parse_replay_policy("greedy"));
}
