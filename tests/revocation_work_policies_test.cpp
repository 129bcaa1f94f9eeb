// SPDX-License-Identifier: MIT
// Deadline policies of a one-instance work job replayed on a trace (revocation/work_policies.hpp): each
// policy against a hand-computed schedule, the omniscient optimum against brute force over every per-tick
// schedule, and the guard's promise (never a missed deadline) on every shared trace.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/io/trace_readers.hpp>
#include <spotdnn/revocation/work_policies.hpp>

using namespace spotdnn;

namespace {

/// A one-slot trace of `tick_s` ticks whose spot capacity is `pattern` ('1' up, '0' not), one tick each.
PoolTrace pattern_trace(const std::string& pattern, double tick_s) {
  PoolTrace t;
  t.pool = {"p3.2xlarge", "us-test-1a"};
  t.kind = TraceKind::availability;
  t.source = "pattern";
  t.tick_s = tick_s;
  t.span_s = double(pattern.size()) * tick_s;
  for (std::size_t j = 0; j < pattern.size(); ++j) {
    if (pattern[j] != '1') continue;
    if (j > 0 && pattern[j - 1] == '1') {
      t.up.back().end_s += tick_s;
    } else {
      UpInterval u;
      u.start_s = double(j) * tick_s;
      u.end_s = u.start_s + tick_s;
      u.preempted = true;
      t.up.push_back(u);
    }
  }
  return t;
}

const WorkPolicyResult& policy(const WorkPolicyReplay& r, WorkPolicy p) {
  for (const WorkPolicyResult& q : r.policies) {
    if (q.policy == p) return q;
  }
  FAIL("policy missing");
  return r.policies.front();
}

/// The cheapest schedule that meets the deadline by trying every per-tick choice (idle, spot where the tick
/// has it, on-demand), with the segment rules of work_policies.hpp; +inf when none meets it.
double brute_force_cost(const std::string& spot, double tick_s, const WorkPolicyOptions& o) {
  const int ticks = int(std::ceil(o.deadline_s / tick_s - 1e-9));
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> choice(std::size_t(ticks), 0);
  const std::function<void(int)> visit = [&](int k) {
    if (k == ticks) {
      double progress = 0, ran = 0, cost = 0;
      int previous = 0;
      for (int j = 0; j < ticks; ++j) {
        const int c = choice[std::size_t(j)];
        const double t = j * tick_s;
        if (c != previous) ran = 0;
        previous = c;
        if (c == 0) continue;
        const double price = (c == 1 ? o.spot_price_usd_per_hour : o.on_demand_price_usd_per_hour) / 3600;
        const double gain = std::max(0.0, ran + tick_s - o.start_overhead_s) - std::max(0.0, ran - o.start_overhead_s);
        if (progress + gain >= o.work_s) {
          const double dt = std::max(0.0, o.start_overhead_s - ran) + (o.work_s - progress);
          if (t + dt <= o.deadline_s + 1e-9) best = std::min(best, cost + dt * price);
          return;
        }
        progress += gain;
        ran += tick_s;
        cost += tick_s * price;
        // A spot segment ends with its capacity.
        if (c == 1 && (j + 1 >= ticks || spot[std::size_t(j) + 1] != '1')) previous = 0, ran = 0;
      }
      return;
    }
    for (int c = 0; c < 3; ++c) {
      if (c == 1 && spot[std::size_t(k)] != '1') continue;
      choice[std::size_t(k)] = c;
      visit(k + 1);
    }
  };
  visit(0);
  return best;
}

}  // namespace

TEST_CASE("each policy's schedule and cost on a hand-built trace match the hand-computed ones") {
  // Ticks of 10 minutes: spot for the first hour, none for an hour, spot for the last hour. Work 2 h, due in
  // 3 h, 10 minutes lost at each segment's start; spot $1/h, on-demand $3/h.
  const PoolTrace trace = pattern_trace("111111000000111111", 600);
  WorkPolicyOptions o;
  o.work_s = 7200;
  o.deadline_s = 10800;
  o.start_overhead_s = 600;
  o.guard_margin_s = 600;
  o.spot_price_usd_per_hour = 1;
  o.on_demand_price_usd_per_hour = 3;
  const WorkPolicyReplay r = replay_work_policies(trace, o);
  REQUIRE(r.windows == 1);
  CHECK(r.undecided_windows == 17);
  // On-demand: 10 minutes of overhead and 2 hours of work.
  CHECK(policy(r, WorkPolicy::on_demand).meets_deadline.estimate == 1);
  CHECK(policy(r, WorkPolicy::on_demand).mean_cost_usd == doctest::Approx(7800.0 / 3600 * 3));
  CHECK(policy(r, WorkPolicy::on_demand).finish_time_s.p50 == doctest::Approx(7800));
  // Spot alone: 50 minutes of progress in the first hour, 50 in the last: short by 20 minutes; billed 2 h.
  CHECK(policy(r, WorkPolicy::spot).meets_deadline.estimate == 0);
  CHECK(policy(r, WorkPolicy::spot).mean_cost_usd == doctest::Approx(2.0));
  CHECK(std::isinf(policy(r, WorkPolicy::spot).finish_time_s.p50));
  // Greedy: the first hour on spot (50 min of progress), idle while the slack lasts, then on-demand at
  // 1h40m: 10 + 70 minutes, done at 3 h exactly. $1 + 80 min at $3.
  CHECK(policy(r, WorkPolicy::greedy).meets_deadline.estimate == 1);
  CHECK(policy(r, WorkPolicy::greedy).mean_cost_usd == doctest::Approx(1.0 + 4.0));
  CHECK(policy(r, WorkPolicy::greedy).finish_time_s.p50 == doctest::Approx(10800));
  CHECK(policy(r, WorkPolicy::greedy).mean_on_demand_hours == doctest::Approx(80.0 / 60));
  // Guard with a 10-minute margin: on-demand one tick earlier, done at 2h50m for the same cost.
  CHECK(policy(r, WorkPolicy::guard).meets_deadline.estimate == 1);
  CHECK(policy(r, WorkPolicy::guard).mean_cost_usd == doctest::Approx(5.0));
  CHECK(policy(r, WorkPolicy::guard).finish_time_s.p50 == doctest::Approx(10200));
  // Omniscient: both spot hours (50 + 50 min of progress) and 30 minutes on demand in the gap (10 of
  // overhead, 20 of work): $2 + $1.50, done at 3 h.
  CHECK(policy(r, WorkPolicy::omniscient).meets_deadline.estimate == 1);
  CHECK(policy(r, WorkPolicy::omniscient).mean_cost_usd == doctest::Approx(3.5));
  CHECK(policy(r, WorkPolicy::omniscient).mean_spot_hours == doctest::Approx(2.0));
  CHECK(policy(r, WorkPolicy::omniscient).mean_on_demand_hours == doctest::Approx(0.5));
  CHECK(policy(r, WorkPolicy::omniscient).finish_time_s.p50 == doctest::Approx(10800));
}

TEST_CASE("the omniscient optimum equals brute force over every per-tick schedule on random short traces") {
  std::mt19937 rng(20261127);
  int feasible = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int ticks = 7;
    std::string spot;
    for (int j = 0; j < ticks; ++j) spot += (rng() % 3 == 0) ? '0' : '1';
    const double tick_s = 600;
    WorkPolicyOptions o;
    o.deadline_s = ticks * tick_s;
    // Overheads that are not whole ticks, and work that leaves a little slack or a lot.
    o.start_overhead_s = std::vector<double>{0, 240, 600, 780}[std::size_t(trial % 4)];
    o.work_s = o.deadline_s - o.start_overhead_s - double(rng() % 2400);
    o.spot_price_usd_per_hour = 0.9;
    o.on_demand_price_usd_per_hour = 3.06;
    o.policies = {WorkPolicy::omniscient};
    const WorkPolicyReplay r = replay_work_policies(pattern_trace(spot, tick_s), o);
    REQUIRE(r.windows == 1);
    const double expected = brute_force_cost(spot, tick_s, o);
    CAPTURE(spot);
    CAPTURE(o.work_s);
    CAPTURE(o.start_overhead_s);
    const WorkPolicyResult& omniscient = r.policies.front();
    if (std::isinf(expected)) {
      CHECK(omniscient.infeasible_windows == 1);
    } else {
      CHECK(omniscient.infeasible_windows == 0);
      CHECK(omniscient.mean_cost_usd == doctest::Approx(expected).epsilon(1e-9));
      ++feasible;
    }
  }
  CHECK(feasible > 30);  // most random cases have a schedule to compare
}

TEST_CASE("the guard and greedy policies never miss a deadline on any shared trace, and the omniscient optimum costs no more than any policy") {
  const std::string traces = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/traces/";
  struct Folder {
    std::string path;
    TraceKind kind;
    std::vector<std::string> files;
  };
  const std::vector<Folder> folders = {
      {"availability/1-node/aws-10-26-2022/", TraceKind::availability,
       {"us-west-2a_k80_1.json", "us-west-2a_k80_8.json", "us-west-2a_v100_1.json", "us-west-2a_v100_8.json", "us-west-2b_k80_1.json",
        "us-west-2b_k80_8.json", "us-west-2b_v100_1.json", "us-west-2b_v100_8.json"}},
      {"availability/1-node/aws-02-15-2023/", TraceKind::availability,
       {"us-east-1a_v100_1.json", "us-east-1c_v100_1.json", "us-east-1d_v100_1.json", "us-east-1f_v100_1.json", "us-east-2a_v100_1.json",
        "us-east-2b_v100_1.json", "us-west-2a_v100_1.json", "us-west-2b_v100_1.json", "us-west-2c_v100_1.json"}},
      {"preemption/1-node/aws-04-19-2023/", TraceKind::lifetimes,
       {"us-east-1b_intel_64.json", "us-east-1c_intel_64.json", "us-east-1d_intel_64.json"}},
      {"preemption/1-node/gcp-04-30-2023/", TraceKind::lifetimes, {"us-east1-b_c3-88.json"}}};
  int traces_checked = 0;
  for (const Folder& folder : folders) {
    for (const std::string& file : folder.files) {
      io::TraceFileOptions read;
      read.kind = folder.kind;
      read.type = "p3.2xlarge";
      const PoolTrace trace = io::read_trace_files({traces + folder.path + file}, read).front();
      WorkPolicyOptions o;
      o.work_s = 4 * 3600.0;
      o.deadline_s = 6 * 3600.0;
      o.start_overhead_s = 720;
      o.spot_price_usd_per_hour = 0.918;
      o.on_demand_price_usd_per_hour = 3.06;
      CAPTURE(file);
      // The guard and greedy at every start tick.
      o.policies = {WorkPolicy::guard, WorkPolicy::greedy};
      const WorkPolicyReplay every = replay_work_policies(trace, o);
      REQUIRE(every.windows > 100);
      CHECK(every.policies[0].meets_deadline.estimate == 1.0);
      CHECK(every.policies[1].meets_deadline.estimate == 1.0);
      ++traces_checked;
      // The omniscient optimum, on the 10-minute traces, at one window every 6 hours (quick here).
      if (trace.tick_s < 600) continue;
      o.policies = {WorkPolicy::on_demand, WorkPolicy::greedy, WorkPolicy::guard, WorkPolicy::omniscient};
      o.stride_ticks = 36;
      const WorkPolicyReplay r = replay_work_policies(trace, o);
      REQUIRE(r.windows > 50);
      for (const WorkPolicyResult& p : r.policies) CHECK(p.meets_deadline.estimate == 1.0);
      CHECK(policy(r, WorkPolicy::omniscient).mean_cost_usd <= policy(r, WorkPolicy::greedy).mean_cost_usd + 1e-9);
      CHECK(policy(r, WorkPolicy::omniscient).mean_cost_usd <= policy(r, WorkPolicy::guard).mean_cost_usd + 1e-9);
      CHECK(policy(r, WorkPolicy::omniscient).mean_cost_usd <= policy(r, WorkPolicy::on_demand).mean_cost_usd + 1e-9);
      CHECK(policy(r, WorkPolicy::omniscient).mean_cost_usd < policy(r, WorkPolicy::on_demand).mean_cost_usd);
    }
  }
  CHECK(traces_checked == 21);
}

TEST_CASE("replay_work_policies refuses bad options, naming the field") {
  const PoolTrace trace = pattern_trace("1111", 600);
  const auto refusal = [&](WorkPolicyOptions o) {
    try {
      (void)replay_work_policies(trace, o);
    } catch (const invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  WorkPolicyOptions good;
  good.work_s = 600;
  good.deadline_s = 1800;
  CHECK(refusal(good) == "accepted");
  WorkPolicyOptions o = good;
  o.work_s = 0;
  CHECK(refusal(o).find("options.work_s") != std::string::npos);
  o = good;
  o.deadline_s = -1;
  CHECK(refusal(o).find("options.deadline_s") != std::string::npos);
  o = good;
  o.start_overhead_s = std::nan("");
  CHECK(refusal(o).find("options.start_overhead_s") != std::string::npos);
  o = good;
  o.stride_ticks = 0;
  CHECK(refusal(o).find("options.stride_ticks") != std::string::npos);
  o = good;
  o.policies.clear();
  CHECK(refusal(o).find("options.policies") != std::string::npos);
  o = good;
  o.deadline_s = 1e9;  // more than kMaxWorkPolicyTicks ticks of 600 s
  CHECK(refusal(o).find("options.deadline_s") != std::string::npos);
}
