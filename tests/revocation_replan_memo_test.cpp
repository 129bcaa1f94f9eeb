// SPDX-License-Identifier: MIT
// The re-plan policy's memo of residual plans (replan.hpp): it answers repeated survivor sets, and every
// answer, and so every simulated scenario, is exactly what the policy without the memo gives.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/replan.hpp>
#include <spotdnn/revocation/simulate.hpp>

using namespace spotdnn;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

/// 13 workers within the preset quotas; 2191.6 s to loss 0.8 without revocations.
const Cluster kThirteen{{"p3.2xlarge", 2}, {"g4dn.4xlarge", 5}, {"g3.8xlarge", 5}, {"g3.16xlarge", 1}};

/// Every field of two outcomes, compared exactly (bit for bit, no tolerance).
void check_same(const std::vector<ScenarioOutcome>& a, const std::vector<ScenarioOutcome>& b) {
  REQUIRE(a.size() == b.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = a[i].finished == b[i].finished && a[i].met_deadline == b[i].met_deadline && a[i].time_s == b[i].time_s &&
                      a[i].cost_usd == b[i].cost_usd && a[i].worker_cost_usd == b[i].worker_cost_usd &&
                      a[i].ps_cost_usd == b[i].ps_cost_usd && a[i].revocations == b[i].revocations &&
                      a[i].replacements == b[i].replacements && a[i].samples_trained == b[i].samples_trained &&
                      a[i].final_loss == b[i].final_loss;
    if (!same) ++differing;
  }
  CHECK(differing == 0);
}

/// A xorshift stream for the notice grid (fixed seed).
struct Stream {
  std::uint64_t x = 0x2545F4914F6CDD1DULL;
  std::uint64_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

}  // namespace

TEST_CASE("the memoised re-plan policy gives every scenario exactly the outcome of the policy without the memo") {
  const PerformanceModel model = preset_model();
  const Replanner replanner(model);
  for (const double hazard_per_hour : {1.0, 0.3}) {
    for (const bool charge_ps : {true, false}) {
      CAPTURE(hazard_per_hour);
      CAPTURE(charge_ps);
      InterruptionOptions io;
      io.fallback_hazard_per_hour = hazard_per_hour;
      const InterruptionModel interruption(model, io);
      SimulateOptions options;
      options.scenarios = 600;
      options.seed = 7;
      options.predict.charge_parameter_server = charge_ps;
      options.replacement = Replacement::replan;
      ReplanOptions plain;
      plain.plan.charge_parameter_server = charge_ps;
      plain.policy_memo_max_bytes = 0;  // every notice runs replan()
      ReplanOptions memoised = plain;
      memoised.policy_memo_max_bytes = std::size_t(1) << 20;
      auto memo = std::make_shared<detail::ResidualPlanMemo>(memoised.policy_memo_max_bytes);

      options.replacement_planner = replanner.policy(plain);
      const std::vector<int> counts = model.counts_of(kThirteen);
      const std::vector<ScenarioOutcome> reference = simulate_scenarios(model, interruption, counts, 0.8, 2600, options);
      options.replacement_planner = replanner.policy(memoised, memo);
      check_same(reference, simulate_scenarios(model, interruption, counts, 0.8, 2600, options));
      // Most notices repeat a survivor set seen before: the memo answered them.
      CHECK(memo->answers() > 100);
      CHECK(memo->bytes() <= memoised.policy_memo_max_bytes);
      // Two threads share the (now warm) memo: still the same outcomes.
      options.threads = 2;
      check_same(reference, simulate_scenarios(model, interruption, counts, 0.8, 2600, options));
    }
  }
}

TEST_CASE("memoised re-plan answers equal replan()'s at notices in random order, infeasible and excluded types included") {
  const PerformanceModel model = preset_model();
  const Replanner replanner(model);
  const std::size_t types = model.worker_types().size();
  const std::vector<int> full = model.counts_of(kThirteen);
  for (const bool exclude : {false, true}) {
    CAPTURE(exclude);
    ReplanOptions plain;
    plain.policy_memo_max_bytes = 0;
    if (exclude) plain.exclude_types = {"g3.8xlarge"};
    ReplanOptions memoised = plain;
    memoised.policy_memo_max_bytes = std::size_t(1) << 20;
    auto memo = std::make_shared<detail::ResidualPlanMemo>(memoised.policy_memo_max_bytes);
    const ReplacementPlanner reference = replanner.policy(plain);
    const ReplacementPlanner fast = replanner.policy(memoised, memo);
    Stream stream;
    int differing = 0, added = 0, nothing = 0;
    for (int i = 0; i < 3000; ++i) {
      RevocationNotice notice;
      notice.survivors.assign(types, 0);
      // Survivors: a few of the 13 workers gone (few distinct sets, so they repeat).
      for (std::size_t k = 0; k < types; ++k) {
        notice.survivors[k] = full[k] > 0 ? full[k] - int(stream.next() % std::uint64_t(std::min(full[k], 2) + 1)) : 0;
      }
      notice.time_s = 2600 * stream.uniform();  // late notices leave no plan meeting the deadline
      notice.deadline_s = 2600;
      notice.target_loss = 0.8;
      notice.loss_reached = 0.8 + 1.5 * stream.uniform() * (1 - notice.time_s / 2600) + 1e-6;
      notice.leaving_type = 0;
      const std::vector<int> want = reference(notice);
      const std::vector<int> got = fast(notice);
      if (got != want) ++differing;
      bool adds = false;
      for (int v : want) adds = adds || v > 0;
      (adds ? added : nothing) += 1;
    }
    CHECK(differing == 0);
    CHECK(memo->answers() > 1000);
    CHECK(added > 100);    // the grid covers notices that add instances ...
    CHECK(nothing > 100);  // ... and notices that add none (survivors in time, or nothing meets the deadline)
  }
}

TEST_CASE("the residual plan memo stays within its byte bound and keeps the largest ratio per answer") {
  detail::ResidualPlanMemo memo(400);
  std::vector<detail::ResidualPlanMemo::Answer> out;
  const std::vector<int> survivors{1, 0, 2};
  memo.record(survivors, 10.0, true, {1, 1, 2});
  CHECK(memo.find(survivors, 9.0, out));
  CHECK_FALSE(memo.find(survivors, 10.0, out));  // only strictly below r0·(1 − 1e-9)
  memo.record(survivors, 20.0, true, {1, 1, 2});
  REQUIRE(memo.find(survivors, 15.0, out));
  CHECK(out.size() == 1);
  CHECK(out[0].ratio == 20.0);
  CHECK_FALSE(memo.find({1, 0, 3}, 1.0, out));
  for (int i = 0; i < 100; ++i) memo.record({i, 0, 0}, 5.0, false, {i, 1, 0});
  CHECK(memo.bytes() <= 400);
  CHECK_FALSE(memo.find({99, 0, 0}, 1.0, out));  // no room was left for it
}
