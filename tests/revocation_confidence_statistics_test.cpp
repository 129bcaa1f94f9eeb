// SPDX-License-Identifier: MIT
// The confidence search's guarantee, checked statistically: over many independent seeds, a plan whose true
// probability is below the level minus the tolerance comes back no more often than the error rate allows
// (a binomial tail test), while the old rule (the first plan whose 2,000-scenario estimate reaches the
// level) fails the same test; and the README example's plan holds up on 200,000 fresh scenarios.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>

using namespace spotdnn;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

Slo readme_slo() {
  Slo slo;
  slo.target_loss = 0.8;
  slo.deadline_s = 2600;
  return slo;
}

/// P(X >= k) for X ~ Binomial(n, p), summed term by term in logarithms.
double binomial_upper_tail(int n, double p, int k) {
  double tail = 0;
  for (int i = std::max(k, 0); i <= n; ++i) {
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * std::log(p) +
                     (n - i) * std::log1p(-p));
  }
  return std::min(1.0, tail);
}

/// A cluster's probability of meeting the deadline, from 400,000 scenarios of a seed no search uses, as a
/// 99.99% Clopper–Pearson interval: the "truth" the searches are judged against.
class Truth {
 public:
  Truth(const PerformanceModel& model, const InterruptionModel& interruption) : model_(model), interruption_(interruption) {}

  const ProbabilityEstimate& of(const Cluster& cluster) {
    const std::string key = cluster.to_string();
    auto found = known_.find(key);
    if (found != known_.end()) return found->second;
    SimulateOptions options;
    options.scenarios = 400000;
    options.seed = 0x7e57ed;
    options.threads = 2;
    const SimulationResult s = simulate(model_, interruption_, cluster, 0.8, 2600, options);
    return known_[key] = clopper_pearson_interval(s.meets_deadline.successes, s.meets_deadline.trials, 0.9999);
  }

 private:
  const PerformanceModel& model_;
  const InterruptionModel& interruption_;
  std::map<std::string, ProbabilityEstimate> known_;
};

}  // namespace

TEST_CASE("over independent seeds, plans below the level minus the tolerance come back no more often than the error rate") {
  // Level 0.91 with no tolerance on the preset at 0.1 revocations per hour: in cost order the candidates'
  // probabilities are about 0.801, 0.804, 0.899, 0.833, 0.763, 0.907, 0.833, 0.878, then 0.936 — two
  // cheap plans sit just below the level, so a rule that trusts a point estimate returns them often.
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;
  options.confidence = 0.91;
  options.tolerance = 0.0;
  options.error_rate = 0.05;
  options.max_scenarios = 8000;  // the plan at 0.907 stays undecided: passed over, as documented
  options.interruption.fallback_hazard_per_hour = 0.1;
  const InterruptionModel interruption(model, options.interruption);
  Truth truth(model, interruption);
  const double threshold = options.confidence - options.tolerance;
  auto below_threshold = [&](const Cluster& cluster) {
    const ProbabilityEstimate& p = truth.of(cluster);
    CAPTURE(cluster.to_string());
    CAPTURE(p.estimate);
    REQUIRE((p.upper < threshold || p.lower >= threshold));  // the truth is clear on which side it lies
    return p.upper < threshold;
  };

  constexpr int kRuns = 40;
  int failures = 0, naive_failures = 0, undecided = 0;
  std::vector<Cluster> order;  // the candidates in cost order, as far as the searches went
  for (int run = 0; run < kRuns; ++run) {
    options.simulate.seed = 1000 + std::uint64_t(run);
    const ConfidencePlanResult r = plan_with_confidence(model, readme_slo(), options);
    REQUIRE(r.has_plan());
    if (below_threshold(r.cluster)) ++failures;
    undecided += int(r.candidates_undecided);
    if (r.simulated.size() > order.size()) {
      order.clear();
      for (const ConfidenceCandidate& c : r.simulated) order.push_back(c.cluster);
    }
  }
  // The old rule on the same seeds: the first candidate whose 2,000-scenario estimate reaches the level.
  for (int run = 0; run < kRuns; ++run) {
    SimulateOptions fixed;
    fixed.scenarios = 2000;
    fixed.seed = 1000 + std::uint64_t(run);
    for (const Cluster& cluster : order) {
      if (simulate(model, interruption, cluster, 0.8, 2600, fixed).meets_deadline.estimate >= options.confidence) {
        if (below_threshold(cluster)) ++naive_failures;
        break;
      }
    }
  }
  CAPTURE(failures);
  CAPTURE(naive_failures);
  CAPTURE(undecided);
  // If every run fails with probability at most δ, failures is at most Binomial(kRuns, δ): seeing this
  // many or more has probability binomial_upper_tail(...). Refuse the guarantee only below 1e-3.
  CHECK(binomial_upper_tail(kRuns, options.error_rate, failures) >= 1e-3);
  // The test has teeth: the old rule fails it (it returns the 0.907 plan in about a third of the runs).
  CHECK(binomial_upper_tail(kRuns, options.error_rate, naive_failures) < 1e-3);
  CHECK(undecided > 0);  // the hard case was met, and passed over rather than accepted
}

TEST_CASE("the README example's plan meets the level minus the tolerance on 200,000 fresh scenarios") {
  const PerformanceModel model = preset_model();
  ConfidencePlanOptions options;  // spotdnn plan --target-loss 0.8 --deadline 2600 --confidence 0.9 --fallback-hazard 0.1
  options.interruption.fallback_hazard_per_hour = 0.1;
  options.simulate.threads = 2;
  const ConfidencePlanResult r = plan_with_confidence(model, readme_slo(), options);
  REQUIRE(r.has_plan());
  SimulateOptions fresh;
  fresh.scenarios = 200000;
  fresh.seed = 20240611;  // not the search's seed (1)
  fresh.threads = 2;
  const SimulationResult check = simulate(model, InterruptionModel(model, options.interruption), r.cluster, 0.8, 2600, fresh);
  CAPTURE(r.cluster.to_string());
  CAPTURE(check.meets_deadline.estimate);
  CHECK(check.meets_deadline.estimate >= options.confidence - options.tolerance);
}
