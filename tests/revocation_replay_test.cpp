// SPDX-License-Identifier: MIT
// The trace replay against hand-made traces whose every window is worked out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <spotdnn/presets.hpp>
#include <spotdnn/revocation/replay.hpp>

#include "support/series_trace.hpp"

using namespace spotdnn;
using spotdnn::test::series_trace;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

/// An events trace: one node per [start, end).
PoolTrace events_trace(const std::vector<std::pair<double, double>>& nodes, double tick_s, double span_s) {
  PoolTrace trace;
  trace.pool = {"p3.2xlarge", "us-east-1a"};
  trace.kind = TraceKind::events;
  trace.source = "hand-made events";
  trace.tick_s = tick_s;
  trace.span_s = span_s;
  trace.slotted = false;
  trace.slots = int(nodes.size());
  for (const auto& [start, end] : nodes) {
    UpInterval up;
    up.start_s = start;
    up.end_s = end;
    up.preempted = end < span_s;
    up.slot = -1;
    trace.up.push_back(up);
  }
  return trace;
}

/// 1111100011111 11111: up [0, 300), down [300, 480), up [480, 1080) at 60 s ticks.
const char* const kSeries = "111110001111111111";

ReplayOptions work_options(double deadline_s) {
  ReplayOptions o;
  o.deadline_s = deadline_s;
  o.join_delay_s = 0;
  o.spot_price_usd_per_hour = 3.6;  // $0.001 per second
  o.keep_windows = true;
  return o;
}

}  // namespace

TEST_CASE("a work job on a hand-made series finishes each window exactly when worked out by hand") {
  const std::vector<PoolTrace> traces{series_trace(kSeries, 60)};
  const ReplayResult r = replay_work(300, traces, work_options(400));
  REQUIRE(r.outcomes.size() == 18);
  // Window t0 = 60·k: the work done before the preemption at 300, the rest after the return at 480.
  const double expected[] = {300, 480, 480, 480, 480, 480, 420, 360, 300, 300, 300, 300, 300, 300};
  for (std::size_t k = 0; k < 18; ++k) {
    CAPTURE(k);
    const ReplayWindow& w = r.outcomes[k];
    CHECK(w.start_s == doctest::Approx(60.0 * double(k)).epsilon(1e-12));
    if (k < 12) {
      CHECK(w.decided);
      CHECK(w.finished);
      CHECK(w.time_s == doctest::Approx(expected[k]).epsilon(1e-12));
      CHECK(w.met == (expected[k] <= 400));
      CHECK(w.cost_usd == doctest::Approx(0.3).epsilon(1e-12));  // 300 s billed, no boot
      CHECK(w.preemptions == (k >= 1 && k <= 4 ? 1 : 0));
    } else {
      // Deadline after the trace's end (t0 + 400 > 1080): undecided, even for t0 = 720 and 780 whose jobs
      // would finish by 1080 (counting only the quick ones would lean towards success).
      CHECK_FALSE(w.decided);
    }
  }
  CHECK(r.status == Status::feasible);
  CHECK(r.windows == 12);
  CHECK(r.undecided_windows == 6);
  CHECK(r.unfinished_windows == 0);
  CHECK(r.meets_deadline.successes == 6);  // t0 = 0, 420, 480, 540, 600, 660
  CHECK(r.meets_deadline.trials == 12);
  CHECK(r.meets_deadline.estimate == doctest::Approx(0.5).epsilon(1e-12));
  // The interval counts the disjoint 400 s windows the decided starts 0..660 span: floor(660 / 400) + 1 = 2,
  // not the 12 overlapping ones: the Wilson interval of 1 of 2 (z = 1.96: 0.0945 to 0.9055).
  CHECK(r.effective_windows == 2);
  CHECK(r.meets_deadline.lower == doctest::Approx(0.0945).epsilon(1e-3));
  CHECK(r.meets_deadline.upper == doctest::Approx(0.9055).epsilon(1e-3));
  CHECK(r.meets_deadline.lower < wilson_interval(6, 12).lower);
  CHECK(r.finish_time_s.p50 == 360);  // sorted: 300 ×5, 360, 420, 480 ×5
  CHECK(r.finish_time_s.p90 == 480);
  CHECK(r.mean_cost_usd == doctest::Approx(0.3).epsilon(1e-12));
  CHECK(r.mean_preemptions == doctest::Approx(4.0 / 12).epsilon(1e-12));
  CHECK(r.deterministic_time_s == 300);
  CHECK(r.tick_s == 60);
  CHECK(r.end_s == 1080);
}

TEST_CASE("a window whose deadline passes inside the trace is decided and missed even when unfinished") {
  const std::vector<PoolTrace> traces{series_trace(kSeries, 60)};
  const ReplayResult r = replay_work(300, traces, work_options(200));
  // t0 = 840: 840 + 200 <= 1080, the job would finish at 1140: unfinished, billed 840..1080.
  const ReplayWindow& w = r.outcomes[14];
  CHECK(w.decided);
  CHECK_FALSE(w.finished);
  CHECK_FALSE(w.met);
  CHECK(w.time_s == kInf);
  CHECK(w.cost_usd == doctest::Approx(0.24).epsilon(1e-12));
  CHECK_FALSE(r.outcomes[15].decided);  // 900 + 200 > 1080
  CHECK(r.windows == 15);
  CHECK(r.undecided_windows == 3);
  CHECK(r.unfinished_windows == 1);
  CHECK(r.meets_deadline.successes == 0);
  CHECK(r.finish_time_s.p99 == kInf);
}

TEST_CASE("join delay and restart overhead both delay a work job's training after every start") {
  const std::vector<PoolTrace> traces{series_trace(kSeries, 60)};
  ReplayOptions o = work_options(600);  // windows t0 <= 480 are decided
  o.join_delay_s = 30;
  o.restart_overhead_s = 15;
  const ReplayResult r = replay_work(300, traces, o);
  // t0 = 0: trains 45..300 (255 s), back at 480, trains from 525: finish 570; billed 300 + 90 s.
  CHECK(r.outcomes[0].time_s == doctest::Approx(570).epsilon(1e-12));
  CHECK(r.outcomes[0].cost_usd == doctest::Approx(0.39).epsilon(1e-12));
  // t0 = 60: trains 105..300 (195 s), then 525..630.
  CHECK(r.outcomes[1].time_s == doctest::Approx(570).epsilon(1e-12));
  CHECK(r.outcomes[1].cost_usd == doctest::Approx(0.39).epsilon(1e-12));
  // t0 = 480: trains 525..825.
  CHECK(r.outcomes[8].time_s == doctest::Approx(345).epsilon(1e-12));
  CHECK(r.outcomes[8].cost_usd == doctest::Approx(0.345).epsilon(1e-12));
  // t0 = 240: 285..300 is 15 s of training; 525..810.
  CHECK(r.outcomes[4].time_s == doctest::Approx(570).epsilon(1e-12));

  // A work job loses both: a 45 s join delay alone gives the same windows.
  ReplayOptions joined = work_options(600);
  joined.join_delay_s = 45;
  const ReplayResult same = replay_work(300, traces, joined);
  REQUIRE(same.outcomes.size() == r.outcomes.size());
  for (std::size_t k = 0; k < r.outcomes.size(); ++k) {
    CAPTURE(k);
    CHECK(same.outcomes[k].time_s == r.outcomes[k].time_s);
  }

  // A boot longer than the 300 s interval: the first lifetime never trains.
  ReplayOptions slow = work_options(600);
  slow.join_delay_s = 300;
  const ReplayResult late = replay_work(300, traces, slow);
  // t0 = 0: up 0..300 (billed, never trained), up again at 480, trains 780..1080: done at the trace's end.
  CHECK(late.outcomes[0].finished);
  CHECK(late.outcomes[0].time_s == doctest::Approx(1080).epsilon(1e-12));
  CHECK(late.outcomes[0].cost_usd == doctest::Approx(0.9).epsilon(1e-12));
  CHECK(late.outcomes[0].preemptions == 1);
  CHECK(late.outcomes[8].time_s == doctest::Approx(600).epsilon(1e-12));  // t0 = 480: same finish
  CHECK_FALSE(late.outcomes[9].decided);  // t0 = 540: its deadline is after the trace's end
}

TEST_CASE("the stride starts a window every stride ticks") {
  const std::vector<PoolTrace> traces{series_trace(kSeries, 60)};
  ReplayOptions o = work_options(400);
  o.stride_ticks = 2;
  const ReplayResult r = replay_work(300, traces, o);
  REQUIRE(r.outcomes.size() == 9);  // 0, 120, ..., 960
  for (std::size_t k = 0; k < 9; ++k) CHECK(r.outcomes[k].start_s == doctest::Approx(120.0 * double(k)).epsilon(1e-12));
  CHECK(r.windows == 6);  // 0 .. 600: their deadlines are by 1080
  CHECK(r.undecided_windows == 3);
  CHECK(r.meets_deadline.successes == 3);  // 0, 480, 600
}

TEST_CASE("a two-worker cluster that loses a worker finishes when the hand-integrated loss curve says") {
  const PerformanceModel model = preset_model();
  const std::vector<int> counts = model.counts_of(Cluster{{"p3.2xlarge", 2}});
  // Worker 0 on trace A (always up), worker 1 on trace B: up [0, 1200), preempted, back at 3000.
  const std::string always(400, '1');
  std::string b = always;
  for (std::size_t i = 20; i < 50; ++i) b[i] = '0';
  const std::vector<PoolTrace> traces{series_trace(always, 60), series_trace(b, 60)};
  ReplayOptions o;
  o.deadline_s = 4000;
  o.join_delay_s = 120;
  o.keep_windows = true;
  const ReplayResult r = replay(model, counts, 0.8, traces, o);
  REQUIRE(!r.outcomes.empty());

  // By hand, in u = 1/(loss − a) = (j + γ1)/A_c with A_c = (γ2·b_w + γ3)·√n (docs/model.md eq. (6), seed form):
  // training on cluster c for Δ seconds adds Δ·(iterations per second)/A_c to u.
  const std::vector<double>& g = model.workload().loss_model.gamma;
  const Estimate two = model.estimate(counts, 0.8);
  const Estimate one = model.estimate(model.counts_of(Cluster{{"p3.2xlarge", 1}}), 0.8);
  const double a2 = (g[1] * two.weighted_batch + g[2]) * std::sqrt(2.0);
  const double a1 = (g[1] * one.weighted_batch + g[2]) * std::sqrt(1.0);
  double u = g[0] / a2;                               // both join at 120
  u += (1200 - 120) * two.iterations_per_s / a2;      // two workers until 1200
  u += (3000 + 120 - 1200) * one.iterations_per_s / a1;  // one until B's replacement joins at 3120
  const double u_target = 1 / (0.8 - g[3]);
  REQUIRE(u < u_target);
  const double finish = 3120 + (u_target - u) * a2 / two.iterations_per_s;

  const ReplayWindow& w = r.outcomes[0];
  CHECK(w.finished);
  CHECK(w.time_s == doctest::Approx(finish).epsilon(1e-9));
  CHECK(w.preemptions == 1);
  const double price = model.worker_types()[*model.worker_type_index("p3.2xlarge")].price_usd_per_hour;
  const double ps = model.catalog().parameter_server.price_usd_per_hour;
  const double billed_s = finish + 1200 + (finish - 3000);
  CHECK(w.cost_usd == doctest::Approx(price * billed_s / 3600 + ps * finish / 3600).epsilon(1e-9));
  CHECK(r.deterministic_time_s == doctest::Approx(two.training_time_s).epsilon(1e-12));

  // Without the PS charged, only the workers are paid.
  o.predict.charge_parameter_server = false;
  const ReplayResult no_ps = replay(model, counts, 0.8, traces, o);
  CHECK(no_ps.outcomes[0].cost_usd == doctest::Approx(price * billed_s / 3600).epsilon(1e-9));
}

TEST_CASE("a trace that is always up meets every decided deadline at the deterministic time plus the join delay") {
  const PerformanceModel model = preset_model();
  for (int workers : {1, 3}) {
    CAPTURE(workers);
    const std::vector<int> counts = model.counts_of(Cluster{{"p3.2xlarge", workers}});
    // One counts trace: `workers` slots, all up for ten days.
    PoolTrace trace = series_trace(std::string(14400, '1'), 60);
    trace.kind = TraceKind::counts;
    trace.slots = workers;
    for (int s = 1; s < workers; ++s) {
      UpInterval up = trace.up[0];
      up.slot = s;
      trace.up.push_back(up);
    }
    const Estimate e = model.estimate(counts, 0.8);
    ReplayOptions o;
    o.deadline_s = e.training_time_s + 180;
    o.join_delay_s = 120;
    o.restart_overhead_s = 1000;  // a work job's; a cluster job ignores it
    const ReplayResult r = replay(model, counts, 0.8, {trace}, o);
    CHECK(r.status == Status::feasible);
    CHECK(r.meets_deadline.estimate == 1.0);
    CHECK(r.meets_deadline.upper == 1.0);
    CHECK(r.unfinished_windows == 0);
    CHECK(r.windows + r.undecided_windows == 14400);
    CHECK(r.windows == int(std::floor((864000 - o.deadline_s) / 60)) + 1);  // deadlines by the trace's end
    CHECK(r.finish_time_s.p10 == doctest::Approx(e.training_time_s + 120).epsilon(1e-9));
    CHECK(r.finish_time_s.p99 == doctest::Approx(e.training_time_s + 120).epsilon(1e-9));
    const double hours = (e.training_time_s + 120) / 3600;
    CHECK(r.mean_cost_usd ==
          doctest::Approx(hours * (e.worker_price_usd_per_hour + model.catalog().parameter_server.price_usd_per_hour)).epsilon(1e-9));
    CHECK(r.mean_preemptions == 0);
  }
}

TEST_CASE("on an events trace a worker takes an up node at the start, then only nodes added after it lost one") {
  // n0 [0, 100), n1 [50, 400), n2 [150, 500), n3 [200, 600).
  const std::vector<PoolTrace> traces{events_trace({{0, 100}, {50, 400}, {150, 500}, {200, 600}}, 50, 600)};
  const ReplayResult r = replay_work(300, traces, work_options(400));
  REQUIRE(r.outcomes.size() == 12);
  // t0 = 0: n0 (the only node up) 0..100, then n2 (added at 150, after the loss; n1 was added before it):
  // 150..350.
  CHECK(r.outcomes[0].time_s == doctest::Approx(350).epsilon(1e-12));
  CHECK(r.outcomes[0].cost_usd == doctest::Approx(0.3).epsilon(1e-12));
  // t0 = 50: n0 and n1 are up and one is drawn: n0 (50..100, then n2 150..400: 350 s) or n1 (50..350: 300 s).
  CHECK((r.outcomes[1].time_s == doctest::Approx(350).epsilon(1e-12) || r.outcomes[1].time_s == doctest::Approx(300).epsilon(1e-12)));
  // t0 = 100: n1 (n0 has just been removed) 100..400.
  CHECK(r.outcomes[2].time_s == doctest::Approx(300).epsilon(1e-12));

  // A node added at the moment another is removed replaces it.
  const std::vector<PoolTrace> tie{events_trace({{0, 100}, {100, 400}}, 50, 600)};
  CHECK(replay_work(300, tie, work_options(400)).outcomes[0].time_s == doctest::Approx(300).epsilon(1e-12));
}

TEST_CASE("on an events trace the node a worker takes at the start is drawn without favouring the oldest") {
  // A [0, 60000) is removed at 60000, B [1000, 120000) is not; C is added at 61000. A 100 s job started in
  // [59000, 59900) finishes at once on B but waits for C on A: about half the windows must draw A.
  const std::vector<PoolTrace> traces{events_trace({{0, 60000}, {1000, 120000}, {61000, 120000}}, 1, 120000)};
  ReplayOptions o = work_options(2000);
  const ReplayResult r = replay_work(1000, traces, o);
  int on_a = 0, windows = 0;
  for (const ReplayWindow& w : r.outcomes) {
    if (w.start_s < 59000 || w.start_s >= 59900) continue;
    ++windows;
    if (w.time_s > 1000.5) ++on_a;
  }
  REQUIRE(windows == 900);
  CHECK(on_a > 900 * 0.4);  // binomial(900, 0.5): 450 +- 15 (one standard deviation)
  CHECK(on_a < 900 * 0.6);
}

TEST_CASE("two workers on one events trace take nodes first come first served") {
  const PerformanceModel model = preset_model();
  const std::vector<int> counts = model.counts_of(Cluster{{"p3.2xlarge", 2}});
  const std::vector<PoolTrace> traces{events_trace({{0, 100}, {50, 400}, {150, 500}, {200, 600}}, 50, 600)};
  ReplayOptions o;
  o.deadline_s = 600;
  o.join_delay_s = 0;
  o.predict.charge_parameter_server = false;
  o.keep_windows = true;
  const ReplayResult r = replay(model, counts, 0.8, traces, o);  // 2710 s of training: never finishes here
  const double per_s = model.worker_types()[*model.worker_type_index("p3.2xlarge")].price_usd_per_hour / 3600;
  // t0 = 0: w0 takes n0 (0..100), w1 waits and takes n1 (50..400); w0 then takes n2 (150..500); n3 (added
  // at 200 while nobody waited) is never taken.
  CHECK(r.outcomes[0].decided);
  CHECK_FALSE(r.outcomes[0].finished);
  CHECK(r.outcomes[0].preemptions == 3);
  CHECK(r.outcomes[0].cost_usd == doctest::Approx(per_s * (100 + 350 + 350)).epsilon(1e-12));
  // t0 = 100: its deadline (700) is after the trace's end: undecided and not run.
  CHECK_FALSE(r.outcomes[2].decided);
  CHECK(r.outcomes[2].cost_usd == 0);
  CHECK(r.windows == 1);
  CHECK(r.unfinished_windows == 1);
}

TEST_CASE("traces on one clock are replayed over the period they observe together") {
  const PerformanceModel model = preset_model();
  PoolTrace late = series_trace(std::string(200, '1'), 60);
  late.clock_offset_s = 600;
  PoolTrace early = series_trace(std::string(200, '1'), 30);
  const ReplayResult r = replay(model, model.counts_of(Cluster{{"p3.2xlarge", 2}}), 0.8, {early, late},
                                [] {
                                  ReplayOptions o;
                                  o.deadline_s = 100;
                                  o.keep_windows = true;
                                  return o;
                                }());
  CHECK(r.tick_s == 60);    // the larger tick
  CHECK(r.start_s == 600);  // the later start
  CHECK(r.end_s == 6000);   // the earlier end
  REQUIRE(r.outcomes.size() == 90);
  CHECK(r.outcomes[1].start_s == 660);
}

TEST_CASE("progress is reported from zero to every window") {
  const std::vector<PoolTrace> traces{series_trace(std::string(10000, '1'), 60)};
  ReplayOptions o = work_options(1000);
  std::vector<double> done;
  o.progress = [&](const Progress& p) {
    CHECK(p.task == "replay");
    CHECK(p.unit == "windows");
    CHECK(p.total == 10000);
    done.push_back(p.done);
  };
  (void)replay_work(300, traces, o);
  REQUIRE(done.size() == 4);  // 0, 4096, 8192, 10000
  CHECK(done.front() == 0);
  CHECK(done[1] == 4096);
  CHECK(done.back() == 10000);
}

TEST_CASE("a replay no window of which is decided says so instead of a probability") {
  const std::vector<PoolTrace> traces{series_trace("0000011111", 60)};
  const ReplayResult r = replay_work(1000, traces, work_options(1000));
  CHECK(r.status == Status::infeasible);
  CHECK(r.windows == 0);
  CHECK(r.undecided_windows == 10);
  CHECK(r.meets_deadline.trials == 0);
  CHECK(r.message.find("no window is decided") != std::string::npos);
}

TEST_CASE("a replay refuses too few slots, a type without a trace and bad options, naming what is wrong") {
  const PerformanceModel model = preset_model();
  const std::vector<PoolTrace> one{series_trace(kSeries, 60)};
  ReplayOptions o;
  o.deadline_s = 1000;
  auto message = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const invalid_argument& e) {
      return e.what();
    }
    return "(no exception)";
  };
  const std::string slots = message([&] { (void)replay(model, model.counts_of(Cluster{{"p3.2xlarge", 2}}), 0.8, one, o); });
  CHECK(slots.find("replaying 2 workers of p3.2xlarge needs 2 slots; the traces of p3.2xlarge hold 1") != std::string::npos);
  CHECK(slots.find("give one trace per worker or a counts/events trace") != std::string::npos);

  // Enough slots in all, but round-robin puts two workers on the one-slot trace.
  PoolTrace three = series_trace(kSeries, 60);
  three.kind = TraceKind::counts;
  three.slots = 3;
  const std::string rr = message([&] {
    (void)replay(model, model.counts_of(Cluster{{"p3.2xlarge", 4}}), 0.8, {three, series_trace(kSeries, 60)}, o);
  });
  CHECK(rr.find("hold 4, but round-robin gives trace") != std::string::npos);

  const std::string missing = message([&] { (void)replay(model, model.counts_of(Cluster{{"g3.8xlarge", 1}}), 0.8, one, o); });
  CHECK(missing.find("no trace of \"g3.8xlarge\"") != std::string::npos);
  CHECK(missing.find("p3.2xlarge") != std::string::npos);

  const std::vector<int> single = model.counts_of(Cluster{{"p3.2xlarge", 1}});
  CHECK(message([&] { (void)replay(model, single, 0.8, {}, o); }).find("traces = []") != std::string::npos);
  CHECK(message([&] { (void)replay(model, single, 0.4, one, o); }).find("target_loss") != std::string::npos);
  CHECK(message([&] { (void)replay_work(300, {one[0], one[0]}, o); }).find("traces.size()") != std::string::npos);
  CHECK(message([&] { (void)replay_work(0, one, o); }).find("work_s") != std::string::npos);

  auto with = [&](auto change) {
    ReplayOptions bad = o;
    change(bad);
    return message([&] { (void)replay_work(300, one, bad); });
  };
  CHECK(with([](ReplayOptions& b) { b.deadline_s = 0; }).find("options.deadline_s = 0") != std::string::npos);
  CHECK(with([](ReplayOptions& b) { b.deadline_s = -5; }).find("options.deadline_s") != std::string::npos);
  CHECK(with([](ReplayOptions& b) { b.join_delay_s = -1; }).find("options.join_delay_s") != std::string::npos);
  CHECK(with([](ReplayOptions& b) { b.restart_overhead_s = -1; }).find("options.restart_overhead_s") != std::string::npos);
  CHECK(with([](ReplayOptions& b) { b.stride_ticks = 0; }).find("options.stride_ticks") != std::string::npos);
  CHECK(with([](ReplayOptions& b) { b.confidence_level = 1; }).find("options.confidence_level") != std::string::npos);

  PoolTrace short_trace = series_trace("1", 60);
  short_trace.span_s = 30;
  CHECK(message([&] { (void)replay_work(300, {short_trace}, o); }).find("shorter than one tick") != std::string::npos);
  PoolTrace apart = series_trace(kSeries, 60);
  apart.clock_offset_s = 1050;  // overlaps the other for 30 s
  CHECK(message([&] { (void)replay(model, model.counts_of(Cluster{{"p3.2xlarge", 2}}), 0.8, {one[0], apart}, o); })
            .find("less than one tick") != std::string::npos);
  PoolTrace bad_slot = series_trace(kSeries, 60);
  bad_slot.up[0].slot = 1;
  CHECK(message([&] { (void)replay_work(300, {bad_slot}, o); }).find(".slot") != std::string::npos);
}
