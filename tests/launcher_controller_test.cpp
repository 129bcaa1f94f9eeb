// SPDX-License-Identifier: MIT
// The decision core of `spotdnn watch` on scripted sequences of events: revocations, bursts, launches that
// never show up, the guard switching (or not), --max-cost, and resuming from the journal.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <spotdnn/launcher/controller.hpp>
#include <spotdnn/planner.hpp>

namespace {

using namespace spotdnn;
using namespace spotdnn::launcher;

constexpr const char* kRun = "20261127-033000-0a1b2c";
constexpr double kStart = 1.8e9;  // training start (s since 1970)

const PerformanceModel& preset_model() {
  static const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  return model;
}

/// The preset's cheapest plan for loss 0.8 by 3600 s is p3.2xlarge=2 (spot): 2710.5 s.
ControllerSettings settings_3600(WatchPolicy policy) {
  ControllerSettings s;
  s.run_id = kRun;
  s.policy = policy;
  s.start_unix_s = kStart;
  s.deadline_s = 3600;
  s.target_loss = 0.8;
  s.planned = {{"p3.2xlarge", 2, 1, Market::spot}};
  s.guard_margin_s = 600;
  return s;
}

/// The preset's cheapest plan for loss 0.8 by 2400 s: g3.8xlarge=4, p3.2xlarge=2 (spot).
ControllerSettings settings_2400(WatchPolicy policy) {
  ControllerSettings s = settings_3600(policy);
  s.deadline_s = 2400;
  s.planned = {{"g3.8xlarge", 4, 2, Market::spot}, {"p3.2xlarge", 2, 1, Market::spot}};
  return s;
}

RunInstance ps() {
  RunInstance i;
  i.instance_id = "i-ps";
  i.type = "m5.xlarge";
  i.market = Market::on_demand;
  i.role = "ps";
  i.state = "running";
  i.launch_time_unix_s = kStart;
  return i;
}

RunInstance worker(const std::string& id, const std::string& type, Market market = Market::spot,
                   const std::string& token = "", const std::string& state = "running") {
  RunInstance i;
  i.instance_id = id;
  i.type = type;
  i.market = market;
  i.role = "worker";
  i.state = state;
  i.action_token = token;
  i.launch_time_unix_s = kStart;
  return i;
}

RunInstance noticed(RunInstance i) {
  i.revocation_notice = "2026-11-27T04:00:00Z";
  return i;
}

RunProgress progress(double loss) {
  RunProgress p;
  p.loss = loss;
  p.run_id = kRun;
  return p;
}

/// The loss the plan's cluster reaches after `t` s of training (the model's curve).
double on_plan_loss(const Cluster& cluster, double t) {
  const PerformanceModel& m = preset_model();
  const Estimate e = m.estimate(m.counts_of(cluster), 0.8);
  return loss_curve(m.workload().loss_model, e).loss_at(t * e.iterations_per_s);
}

std::vector<std::string> events(const ControllerDecision& d) {
  std::vector<std::string> out;
  for (const auto& r : d.journal) out.push_back(r.at("event").get<std::string>());
  return out;
}

int count_launched(const ControllerDecision& d, const std::string& type, Market market) {
  int n = 0;
  for (const LaunchRequest& l : d.launches) {
    if (l.group.type == type && l.group.market == market) n += l.group.count;
  }
  return n;
}

std::vector<nlohmann::json> as_records(const nlohmann::ordered_json& start, const std::vector<nlohmann::ordered_json>& rest) {
  std::vector<nlohmann::json> out{nlohmann::json(start)};
  for (const auto& r : rest) out.emplace_back(r);
  return out;
}

}  // namespace

TEST_CASE("watch policies and outcomes read back from their names") {
  for (WatchPolicy p : {WatchPolicy::same_type, WatchPolicy::replan, WatchPolicy::guard}) {
    CHECK(watch_policy_from_string(to_string(p)) == p);
  }
  CHECK(watch_policy_from_string("same_type") == WatchPolicy::same_type);
  CHECK_FALSE(watch_policy_from_string("greedy"));
  CHECK(watch_outcome_from_string("run-gone") == WatchOutcome::run_gone);
}

TEST_CASE("bad settings are refused naming the setting") {
  ControllerSettings s = settings_3600(WatchPolicy::replan);
  s.run_id = "run-*";
  CHECK_THROWS_WITH_AS(Controller(preset_model(), s), doctest::Contains("settings.run_id"), invalid_argument);
  s = settings_3600(WatchPolicy::replan);
  s.planned = {{"x9.huge", 1, 1, Market::spot}};
  CHECK_THROWS_WITH_AS(Controller(preset_model(), s), doctest::Contains("settings.planned[0].type"), invalid_argument);
  s = settings_3600(WatchPolicy::replan);
  s.planned = {{"p3.2xlarge", 2, 4, Market::spot}};
  CHECK_THROWS_WITH_AS(Controller(preset_model(), s), doctest::Contains("settings.planned[0].gpus"), invalid_argument);
  s = settings_3600(WatchPolicy::replan);
  s.deadline_s = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(Controller(preset_model(), s), invalid_argument);
}

TEST_CASE("a run without a live parameter server is gone, and two live ones are refused") {
  Controller c(preset_model(), settings_3600(WatchPolicy::same_type));
  RunInstance dead_ps = ps();
  dead_ps.state = "terminated";
  const ControllerDecision d = c.decide(kStart + 60, {dead_ps, worker("i-1", "p3.2xlarge")}, std::nullopt, 0);
  CHECK(d.outcome == WatchOutcome::run_gone);
  CHECK(d.launches.empty());
  REQUIRE(d.journal.size() == 1);
  CHECK(d.journal[0]["event"] == "stop");
  CHECK(d.journal[0]["outcome"] == "run-gone");
  CHECK(d.journal[0]["seq"] == 1);

  Controller c2(preset_model(), settings_3600(WatchPolicy::same_type));
  RunInstance ps2 = ps();
  ps2.instance_id = "i-ps2";
  CHECK_THROWS_WITH_AS((void)c2.decide(kStart + 60, {ps(), ps2}, std::nullopt, 0), doctest::Contains("2 live parameter servers"),
                       invalid_argument);
}

TEST_CASE("the target loss reached or the deadline passed ends the watch without launching") {
  Controller c(preset_model(), settings_3600(WatchPolicy::replan));
  const ControllerDecision met = c.decide(kStart + 2000, {ps()}, progress(0.79), 0);
  CHECK(met.outcome == WatchOutcome::target_reached);
  CHECK(met.launches.empty());
  Controller late(preset_model(), settings_3600(WatchPolicy::replan));
  const ControllerDecision d = late.decide(kStart + 3600, {ps()}, progress(1.5), 0);
  CHECK(d.outcome == WatchOutcome::deadline_passed);
  CHECK(d.launches.empty());
  CHECK(d.journal.back()["outcome"] == "deadline-passed");
}

TEST_CASE("another run's progress or a worker of an unknown type stops the controller with a clear error") {
  Controller c(preset_model(), settings_3600(WatchPolicy::replan));
  RunProgress other = progress(2.0);
  other.run_id = "20261127-033000-ffffff";
  CHECK_THROWS_WITH_AS((void)c.decide(kStart + 60, {ps()}, other, 0), doctest::Contains("progress.run_id"), invalid_argument);
  CHECK_THROWS_WITH_AS((void)c.decide(kStart + 60, {ps(), worker("i-9", "z1.metal")}, std::nullopt, 0),
                       doctest::Contains("instances[1].type"), invalid_argument);
}

TEST_CASE("same-type relaunches several workers revoked at once as one launch of their type and market") {
  Controller c(preset_model(), settings_2400(WatchPolicy::same_type));
  const std::vector<RunInstance> all = {ps(), worker("i-g1", "g3.8xlarge"), worker("i-g2", "g3.8xlarge"),
                                        worker("i-g3", "g3.8xlarge"), worker("i-g4", "g3.8xlarge"),
                                        worker("i-p1", "p3.2xlarge"), worker("i-p2", "p3.2xlarge")};
  const ControllerDecision calm = c.decide(kStart + 60, all, std::nullopt, 0.1);
  CHECK(calm.launches.empty());
  CHECK(calm.journal.empty());

  // Three g3.8xlarge go at once: two terminated by EC2, one with a notice (it counts as lost already).
  std::vector<RunInstance> burst = all;
  burst[1].state = "terminated";
  burst[1].state_reason_code = "Server.SpotInstanceTermination";
  burst[2].state = "shutting-down";
  burst[3] = noticed(burst[3]);
  const ControllerDecision d = c.decide(kStart + 120, burst, progress(3.0), 0.2);
  CHECK(d.outcome == WatchOutcome::watching);
  REQUIRE(d.launches.size() == 1);
  CHECK(d.launches[0].group == WorkerGroup{"g3.8xlarge", 3, 2, Market::spot});
  CHECK(d.launches[0].token == std::string(kRun) + "-1");
  CHECK(d.launches[0].token.size() <= 64);
  CHECK(events(d) == std::vector<std::string>{"launch"});
  CHECK(d.journal[0]["count"] == 3);
  CHECK(d.journal[0]["market"] == "spot");
  CHECK(c.unfinished_launches().size() == 1);
}

TEST_CASE("a launch not yet listed is waited for, and one never listed is failed after the launch timeout") {
  ControllerSettings s = settings_3600(WatchPolicy::same_type);
  s.launch_timeout_s = 300;
  Controller c(preset_model(), s);
  const std::vector<RunInstance> one_left = {ps(), worker("i-p1", "p3.2xlarge")};
  const ControllerDecision first = c.decide(kStart + 100, one_left, std::nullopt, 0);
  REQUIRE(first.launches.size() == 1);
  const std::string token = first.launches[0].token;
  (void)c.launch_succeeded(token, {"i-new"}, kStart + 101);
  CHECK(c.unfinished_launches().empty());

  // Not listed yet, 200 s old: wait, launch nothing.
  const ControllerDecision wait = c.decide(kStart + 300, one_left, std::nullopt, 0);
  CHECK(wait.launches.empty());
  CHECK(wait.journal.empty());
  REQUIRE(wait.notes.size() == 1);
  CHECK(wait.notes[0].find("waiting for launch " + token) == 0);

  // 400 s old and still not listed: failed (recorded), and the missing worker is asked for again.
  const ControllerDecision again = c.decide(kStart + 500, one_left, std::nullopt, 0);
  CHECK(events(again) == std::vector<std::string>{"launch_failed", "launch"});
  CHECK(again.journal[0]["token"] == token);
  REQUIRE(again.launches.size() == 1);
  CHECK(again.launches[0].group == WorkerGroup{"p3.2xlarge", 1, 1, Market::spot});

  // This one shows up (by its tag): listed, and nothing is missing.
  const std::string token2 = again.launches[0].token;
  const ControllerDecision listed =
      c.decide(kStart + 560, {ps(), worker("i-p1", "p3.2xlarge"), worker("i-p3", "p3.2xlarge", Market::spot, token2, "pending")},
               std::nullopt, 0);
  CHECK(events(listed) == std::vector<std::string>{"listed"});
  CHECK(listed.journal[0]["instance_ids"].get<std::vector<std::string>>() == std::vector<std::string>{"i-p3"});
  CHECK(listed.launches.empty());
}

TEST_CASE("a burst after the replacements joined is replaced again") {
  Controller c(preset_model(), settings_2400(WatchPolicy::same_type));
  std::vector<RunInstance> w = {ps(), worker("i-g1", "g3.8xlarge"), worker("i-g2", "g3.8xlarge"), worker("i-p1", "p3.2xlarge")};
  const ControllerDecision d1 = c.decide(kStart + 60, w, std::nullopt, 0);
  CHECK(count_launched(d1, "g3.8xlarge", Market::spot) == 2);
  CHECK(count_launched(d1, "p3.2xlarge", Market::spot) == 1);
  for (const LaunchRequest& l : d1.launches) (void)c.launch_succeeded(l.token, {}, kStart + 61);
  w.push_back(worker("i-g5", "g3.8xlarge", Market::spot, d1.launches[0].token));
  w.push_back(worker("i-g6", "g3.8xlarge", Market::spot, d1.launches[0].token));
  w.push_back(worker("i-p7", "p3.2xlarge", Market::spot, d1.launches[1].token));
  const ControllerDecision d2 = c.decide(kStart + 200, w, std::nullopt, 0);
  CHECK(d2.launches.empty());
  CHECK(events(d2) == std::vector<std::string>{"listed", "listed"});
  // A second burst takes both p3.2xlarge and one g3.8xlarge.
  w[3].state = "terminated";
  w[6].state = "terminated";
  w[4] = noticed(w[4]);
  const ControllerDecision d3 = c.decide(kStart + 400, w, std::nullopt, 0);
  CHECK(count_launched(d3, "p3.2xlarge", Market::spot) == 2);
  CHECK(count_launched(d3, "g3.8xlarge", Market::spot) == 1);
}

TEST_CASE("same-type re-plans without a type whose launches keep failing for the wait") {
  ControllerSettings s = settings_3600(WatchPolicy::same_type);
  s.same_type_wait_s = 300;
  Controller c(preset_model(), s);
  const std::vector<RunInstance> one_left = {ps(), worker("i-p1", "p3.2xlarge")};
  double t = kStart + 100;
  const ControllerDecision d1 = c.decide(t, one_left, progress(2.0), 0);
  REQUIRE(d1.launches.size() == 1);
  (void)c.launch_failed(d1.launches[0].token, "InsufficientInstanceCapacity", t + 1);
  // Still within the wait: the same type again.
  const ControllerDecision d2 = c.decide(t + 200, one_left, progress(2.0), 0);
  REQUIRE(d2.launches.size() == 1);
  CHECK(d2.launches[0].group.type == "p3.2xlarge");
  (void)c.launch_failed(d2.launches[0].token, "InsufficientInstanceCapacity", t + 201);
  // 300 s after the first failed request: re-plan without p3.2xlarge.
  const ControllerDecision d3 = c.decide(t + 300, one_left, progress(2.0), 0);
  CHECK(count_launched(d3, "p3.2xlarge", Market::spot) == 0);
  CHECK_FALSE(d3.launches.empty());
  REQUIRE(events(d3).front() == "desired");
  // The re-plan is the Replanner's own answer for the survivor, without the failing type.
  ReplanRequest q;
  q.survivors = Cluster{{"p3.2xlarge", 1}};
  q.elapsed_s = 400;
  q.deadline_s = 3600;
  q.target_loss = 0.8;
  q.loss_reached = 2.0;
  ReplanOptions o;
  o.plan.markets = {{"p3.2xlarge", Market::spot}};
  o.exclude_types = {"p3.2xlarge"};
  const ReplanResult r = replan(preset_model(), q, o);
  REQUIRE(r.status == Status::optimal);
  for (const auto& [type, count] : r.additions.counts()) CHECK(count_launched(d3, type, Market::spot) == count);
  std::vector<WorkerGroup> want;
  for (const auto& [type, count] : r.cluster.counts()) want.push_back({type, count, preset_model().catalog().at(type).gpus, Market::spot});
  CHECK(c.desired() == want);
}

TEST_CASE("replan adds the re-planner's additions and aims for its cluster") {
  Controller c(preset_model(), settings_2400(WatchPolicy::replan));
  const std::vector<RunInstance> w = {ps(), worker("i-g1", "g3.8xlarge"), worker("i-g2", "g3.8xlarge"),
                                      worker("i-g3", "g3.8xlarge"), worker("i-g4", "g3.8xlarge"), worker("i-p1", "p3.2xlarge")};
  const double loss = on_plan_loss(Cluster{{"g3.8xlarge", 4}, {"p3.2xlarge", 2}}, 600);
  const ControllerDecision d = c.decide(kStart + 600, w, progress(loss), 0.5);
  ReplanRequest q;
  q.survivors = Cluster{{"g3.8xlarge", 4}, {"p3.2xlarge", 1}};
  q.elapsed_s = 600;
  q.deadline_s = 2400;
  q.target_loss = 0.8;
  q.loss_reached = loss;
  ReplanOptions o;
  o.plan.markets = {{"g3.8xlarge", Market::spot}, {"p3.2xlarge", Market::spot}};
  const ReplanResult r = replan(preset_model(), q, o);
  REQUIRE(r.status == Status::optimal);
  REQUIRE_FALSE(r.additions.empty());
  int added = 0;
  for (const auto& [type, count] : r.additions.counts()) {
    CHECK(count_launched(d, type, Market::spot) == count);
    added += count;
  }
  int launched = 0;
  for (const LaunchRequest& l : d.launches) launched += l.group.count;
  CHECK(launched == added);
  std::vector<WorkerGroup> want;
  for (const auto& [type, count] : r.cluster.counts()) want.push_back({type, count, preset_model().catalog().at(type).gpus, Market::spot});
  CHECK(c.desired() == want);
}

TEST_CASE("replan launches nothing and says so when no addition meets the deadline") {
  Controller c(preset_model(), settings_3600(WatchPolicy::replan));
  const ControllerDecision d = c.decide(kStart + 3300, {ps(), worker("i-p1", "p3.2xlarge")}, progress(3.0), 0);
  CHECK(d.outcome == WatchOutcome::watching);
  CHECK(d.launches.empty());
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].find("no set of additions meets the deadline") != std::string::npos);
  CHECK(events(d) == std::vector<std::string>{"note"});
  // The same refusal at the next poll is not journaled again.
  const ControllerDecision again = c.decide(kStart + 3330, {ps(), worker("i-p1", "p3.2xlarge")}, progress(3.0), 0);
  CHECK(again.notes.size() == 1);
  CHECK(again.journal.empty());
}

TEST_CASE("the guard does not switch while the progress keeps up with the plan") {
  Controller c(preset_model(), settings_3600(WatchPolicy::guard));
  const std::vector<RunInstance> w = {ps(), worker("i-p1", "p3.2xlarge"), worker("i-p2", "p3.2xlarge")};
  for (double t = 0; t <= 2700; t += 60) {
    const double loss = on_plan_loss(Cluster{{"p3.2xlarge", 2}}, t);
    const ControllerDecision d = c.decide(kStart + t, w, t == 0 ? std::nullopt : std::optional<RunProgress>(progress(loss)), 0);
    CHECK(d.outcome == WatchOutcome::watching);
    CHECK(d.launches.empty());
    CHECK(d.journal.empty());
  }
  CHECK_FALSE(c.switched());
}

TEST_CASE("the guard switches to on-demand when the progress falls behind, and never launches spot after") {
  Controller c(preset_model(), settings_3600(WatchPolicy::guard));
  std::vector<RunInstance> w = {ps(), worker("i-p1", "p3.2xlarge"), worker("i-p2", "p3.2xlarge")};
  // Training stalls at the loss of t = 300 s. T_od(l) is the on-demand-only replan's fastest finish.
  const double stalled = on_plan_loss(Cluster{{"p3.2xlarge", 2}}, 300);
  ReplanRequest q;
  q.deadline_s = 1;  // no time left: the answer is infeasible and gives the fastest finish
  q.target_loss = 0.8;
  q.loss_reached = stalled;
  ReplanOptions od;
  for (const WorkerType& t : preset_model().worker_types()) od.plan.markets[t.name] = Market::on_demand;
  const double t_od = replan(preset_model(), q, od).fastest_finish_time_s;  // from now, the join delay included
  REQUIRE(t_od > 120);
  const double switch_after = 3600 - 600 - t_od;  // T_od > (T - t) - m
  double switched_at = -1;
  ControllerDecision at_switch;
  for (double t = 300; t < 3000; t += 30) {
    const ControllerDecision d = c.decide(kStart + t, w, progress(stalled), 0);
    if (!d.journal.empty()) {
      switched_at = t;
      at_switch = d;
      break;
    }
  }
  REQUIRE(switched_at > 0);
  CHECK(switched_at > switch_after);
  CHECK(switched_at <= switch_after + 30);
  CHECK(c.switched());
  REQUIRE(events(at_switch).size() >= 3);
  CHECK(events(at_switch)[0] == "switch");
  CHECK(events(at_switch)[1] == "desired");
  CHECK_FALSE(at_switch.launches.empty());
  for (const LaunchRequest& l : at_switch.launches) CHECK(l.group.market == Market::on_demand);
  for (const WorkerGroup& g : c.desired()) CHECK(g.market == Market::on_demand);
  CHECK(at_switch.journal[0]["t_od_s"].get<double>() > at_switch.journal[0]["time_left_s"].get<double>() - 600);

  // The on-demand workers join; then both spot survivors are revoked: nothing is launched on spot.
  for (const LaunchRequest& l : at_switch.launches) (void)c.launch_succeeded(l.token, {}, kStart + switched_at + 1);
  int k = 0;
  for (const LaunchRequest& l : at_switch.launches) {
    for (int i = 0; i < l.group.count; ++i) w.push_back(worker("i-od" + std::to_string(k++), l.group.type, Market::on_demand, l.token));
  }
  w[1].state = "terminated";
  w[2] = noticed(w[2]);
  for (double t = switched_at + 60; t < 3600; t += 60) {
    const ControllerDecision d = c.decide(kStart + t, w, progress(stalled), 0);
    CHECK(count_launched(d, "p3.2xlarge", Market::spot) == 0);
    for (const LaunchRequest& l : d.launches) CHECK(l.group.market == Market::on_demand);
  }
}

TEST_CASE("--max-cost refuses a launch that would take the run past it, and says how much") {
  ControllerSettings s = settings_3600(WatchPolicy::same_type);
  s.max_cost_usd = 2.0;
  Controller c(preset_model(), s);
  const std::vector<RunInstance> one_left = {ps(), worker("i-p1", "p3.2xlarge")};
  // The desired cluster (2 × p3.2xlarge spot at $0.918/h + the PS at $0.192/h) for the 3000 s left: $1.69.
  const ControllerDecision fine = c.decide(kStart + 600, one_left, std::nullopt, 0.25);
  CHECK(fine.launches.size() == 1);
  Controller tight(preset_model(), s);
  const ControllerDecision d = tight.decide(kStart + 600, one_left, std::nullopt, 0.5);
  CHECK(d.launches.empty());
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0] == "--max-cost = $2.00: not adding p3.2xlarge=1 (spot) (spent $0.50 so far, $1.69 more to finish)");
  CHECK(events(d) == std::vector<std::string>{"note"});
  CHECK(d.journal[0]["topic"] == "max_cost");
  const ControllerDecision again = tight.decide(kStart + 630, one_left, std::nullopt, 0.5);
  CHECK(again.launches.empty());
  CHECK(again.journal.empty());  // written once
}

TEST_CASE("a controller resumed from a journal cut mid-launch decides as the one that wrote it") {
  for (WatchPolicy policy : {WatchPolicy::same_type, WatchPolicy::replan, WatchPolicy::guard}) {
    CAPTURE(to_string(policy));
    ControllerSettings s = settings_2400(policy);
    s.guard_margin_s = 300;
    Controller a(preset_model(), s);
    std::vector<nlohmann::ordered_json> journal;
    const std::vector<RunInstance> w = {ps(), worker("i-g1", "g3.8xlarge"), worker("i-g2", "g3.8xlarge"), worker("i-p1", "p3.2xlarge")};
    const ControllerDecision d1 = a.decide(kStart + 300, w, progress(on_plan_loss(Cluster{{"g3.8xlarge", 4}, {"p3.2xlarge", 2}}, 300)), 0.3);
    REQUIRE_FALSE(d1.launches.empty());
    journal.insert(journal.end(), d1.journal.begin(), d1.journal.end());
    // The writer stops here: its launches are in the journal, with no outcome.
    Controller b(preset_model(), s);
    b.resume(as_records(a.start_record(kStart), journal));
    const std::vector<LaunchRequest> unfinished = b.unfinished_launches();
    REQUIRE(unfinished.size() == d1.launches.size());
    for (std::size_t i = 0; i < unfinished.size(); ++i) {
      CHECK(unfinished[i].token == d1.launches[i].token);
      CHECK(unfinished[i].group == d1.launches[i].group);
    }
    CHECK(b.next_seq() == a.next_seq());
    CHECK(b.desired() == a.desired());
    // Both learn the same outcomes (the resumed one re-issued the same tokens), then see the same listing.
    const nlohmann::ordered_json fa = a.launch_failed(d1.launches[0].token, "InsufficientInstanceCapacity", kStart + 301);
    const nlohmann::ordered_json fb = b.launch_failed(d1.launches[0].token, "InsufficientInstanceCapacity", kStart + 301);
    CHECK(fa == fb);
    for (std::size_t i = 1; i < d1.launches.size(); ++i) {
      CHECK(a.launch_succeeded(d1.launches[i].token, {"i-x" + std::to_string(i)}, kStart + 302) ==
            b.launch_succeeded(d1.launches[i].token, {"i-x" + std::to_string(i)}, kStart + 302));
    }
    for (double t : {420.0, 960.0}) {
      const auto p = progress(on_plan_loss(Cluster{{"g3.8xlarge", 4}, {"p3.2xlarge", 2}}, 280));
      const ControllerDecision da = a.decide(kStart + t, w, p, 0.6);
      const ControllerDecision db = b.decide(kStart + t, w, p, 0.6);
      CHECK(da.journal == db.journal);
      CHECK(da.notes == db.notes);
      REQUIRE(da.launches.size() == db.launches.size());
      for (std::size_t i = 0; i < da.launches.size(); ++i) {
        CHECK(da.launches[i].token == db.launches[i].token);
        CHECK(da.launches[i].group == db.launches[i].group);
      }
      CHECK(a.switched() == b.switched());
    }
  }
}

TEST_CASE("a journal of another run, policy or plan is refused naming the line and field") {
  Controller writer(preset_model(), settings_3600(WatchPolicy::replan));
  const nlohmann::ordered_json start = writer.start_record(kStart);

  ControllerSettings other_run = settings_3600(WatchPolicy::replan);
  other_run.run_id = "20261127-033000-ffffff";
  Controller c1(preset_model(), other_run);
  CHECK_THROWS_WITH_AS(c1.resume(as_records(start, {})), doctest::Contains("journal line 1.run_id"), invalid_argument);

  Controller c2(preset_model(), settings_3600(WatchPolicy::guard));
  CHECK_THROWS_WITH_AS(c2.resume(as_records(start, {})), doctest::Contains("journal line 1.policy"), invalid_argument);

  ControllerSettings other_plan = settings_3600(WatchPolicy::replan);
  other_plan.planned = {{"p3.2xlarge", 1, 1, Market::spot}};
  Controller c3(preset_model(), other_plan);
  CHECK_THROWS_WITH_AS(c3.resume(as_records(start, {})), doctest::Contains("journal line 1.plan.workers"), invalid_argument);

  ControllerSettings other_deadline = settings_3600(WatchPolicy::replan);
  other_deadline.deadline_s = 7200;
  Controller c4(preset_model(), other_deadline);
  CHECK_THROWS_WITH_AS(c4.resume(as_records(start, {})), doctest::Contains("journal line 1.plan.deadline_s"), invalid_argument);

  Controller ok(preset_model(), settings_3600(WatchPolicy::replan));
  ok.resume(as_records(start, {}));
  CHECK(ok.next_seq() == 1);
}

TEST_CASE("an inconsistent journal is refused naming the line and field") {
  Controller writer(preset_model(), settings_3600(WatchPolicy::same_type));
  const nlohmann::ordered_json start = writer.start_record(kStart);
  const ControllerDecision d = writer.decide(kStart + 60, {ps(), worker("i-p1", "p3.2xlarge")}, std::nullopt, 0);
  REQUIRE(d.journal.size() == 1);
  const auto refused = [&](nlohmann::ordered_json record, const std::string& where) {
    Controller c(preset_model(), settings_3600(WatchPolicy::same_type));
    CHECK_THROWS_WITH_AS(c.resume(as_records(start, {record})), doctest::Contains(where.c_str()), invalid_argument);
  };
  nlohmann::ordered_json r = d.journal[0];
  r["token"] = "20261127-033000-0a1b2c-7";
  refused(r, "journal line 2.token");
  r = d.journal[0];
  r["count"] = -1;
  refused(r, "journal line 2.count");
  r = d.journal[0];
  r["surprise"] = true;
  refused(r, "journal line 2.surprise");
  r = d.journal[0];
  r["seq"] = 5;
  refused(r, "journal line 2.seq");
  r = d.journal[0];
  r["event"] = "launched";
  r.erase("type");
  refused(r, "journal line 2");
  nlohmann::ordered_json orphan = d.journal[0];
  orphan = {{"kind", "spotdnn.watch_journal"}, {"schema_version", 1}, {"seq", 1}, {"time_unix_s", kStart},
            {"event", "launched"}, {"token", "20261127-033000-0a1b2c-1"}, {"instance_ids", nlohmann::json::array()}};
  refused(orphan, "journal line 2.token");
  Controller empty(preset_model(), settings_3600(WatchPolicy::same_type));
  CHECK_THROWS_AS(empty.resume({}), invalid_argument);
}
