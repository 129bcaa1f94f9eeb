// SPDX-License-Identifier: MIT
// The confidence search at its simulation work limit: the candidate that needs more work than the limit
// allows stays undecided (work_limited) and the search goes on and finishes; it never throws late.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>

using namespace spotdnn;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

/// Close to the request of the CLI's `plan --confidence 0.95 --fallback-hazard 1 --target-loss 0.7 --deadline
/// 5000 --tolerance 0` that stopped late (exit 2), at level 0.25, where the second and third cheapest plans
/// (P about 0.259 and 0.255) need more scenarios than `max_events` allows; no tolerance.
ConfidencePlanOptions demanding(std::int64_t max_events, int max_scenarios) {
  ConfidencePlanOptions options;
  options.confidence = 0.25;
  options.tolerance = 0;
  options.max_scenarios = max_scenarios;
  options.max_simulated_events = max_events;
  options.interruption.fallback_hazard_per_hour = 1;
  return options;
}

Slo slo_07_5000() {
  Slo slo;
  slo.target_loss = 0.7;
  slo.deadline_s = 5000;
  return slo;
}

}  // namespace

TEST_CASE("a candidate that would pass the work limit stays undecided and the confidence search still finishes") {
  const PerformanceModel model = preset_model();
  const std::int64_t limit = 200000;
  ConfidencePlanResult r;
  REQUIRE_NOTHROW(r = plan_with_confidence(model, slo_07_5000(), demanding(limit, 1000000)));
  CHECK((r.status == Status::feasible || r.status == Status::infeasible));
  REQUIRE(r.candidates_work_limited >= 1);
  CHECK(r.candidates_work_limited <= r.candidates_undecided);
  std::size_t limited = 0;
  for (const ConfidenceCandidate& c : r.simulated) {
    if (!c.work_limited) continue;
    ++limited;
    CHECK(c.decision == ConfidenceDecision::undecided);
    CHECK(c.probability.trials < 1000000);  // its looks stopped before the scenario cap
    CHECK(c.looks >= 1);
  }
  CHECK(limited == r.candidates_work_limited);
  CHECK(r.message.find("stayed undecided at the simulation work limit of 200000 events per candidate, before 1000000 scenarios") != std::string::npos);
  CHECK(r.message.find("raise the work limit (at most 10000000 events) or the tolerance to decide") != std::string::npos);

  // The work counted depends on the scenarios only: two threads decide the same.
  ConfidencePlanOptions threaded = demanding(limit, 1000000);
  threaded.simulate.threads = 2;
  const ConfidencePlanResult t = plan_with_confidence(model, slo_07_5000(), threaded);
  CHECK(t.status == r.status);
  CHECK(t.cluster == r.cluster);
  CHECK(t.candidates_work_limited == r.candidates_work_limited);
  CHECK(t.scenarios_simulated == r.scenarios_simulated);
}

TEST_CASE("a work limit the first look passes leaves the candidate undecided with no look, and bad limits are refused") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options = demanding(2000, 1000000);  // fewer events than the first look's 1000 scenarios
  options.max_candidates_simulated = 3;
  const ConfidencePlanResult r = plan_with_confidence(model, slo_07_5000(), options);
  CHECK(r.status == Status::infeasible);
  CHECK(r.candidates_simulated == 3);
  CHECK(r.candidates_work_limited == 3);
  for (const ConfidenceCandidate& c : r.simulated) {
    CHECK(c.looks == 0);
    CHECK(c.probability.trials == 0);
  }
  CHECK(r.scenarios_simulated == 0);

  options.max_simulated_events = 0;
  CHECK_THROWS_WITH_AS((void)plan_with_confidence(model, slo_07_5000(), options),
                       doctest::Contains("options.max_simulated_events"), spotdnn::invalid_argument);
  options.max_simulated_events = kMaxSimulatedEvents + 1;
  CHECK_THROWS_AS((void)plan_with_confidence(model, slo_07_5000(), options), spotdnn::invalid_argument);
}
