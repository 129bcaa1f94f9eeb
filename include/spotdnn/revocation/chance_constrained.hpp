#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/chance_constrained.hpp Plans with a confidence level: the cheapest cluster whose
/// simulated probability of meeting the deadline under revocations is at least, say, 0.9.
///
/// The search and what it guarantees. Every cluster within the quotas and the plan options (minimum
/// counts, worker cap, markets) whose revocation-free prediction meets the deadline is a candidate
/// (a plan that misses the deadline even without revocations is not offered). Candidates are enumerated
/// exhaustively and sorted by their revocation-free cost, the price the planner quotes (ties: faster,
/// then fewer workers, then catalog order), so the first candidate is the exact planner's plan. They are
/// simulated in that order, each with the same K scenarios (same seed: common random numbers), and the
/// first whose estimate p̂ = (scenarios meeting the deadline)/K is ≥ the confidence is returned. So:
///  - every cheaper candidate was simulated and had p̂ below the confidence;
///  - the returned p̂ is a Monte Carlo estimate, not a bound: its Wilson interval (`probability.lower`,
///    `probability.upper`) says how far the true probability may be. With `require_lower_bound` the test
///    is the interval's lower end ≥ confidence instead, i.e. the true probability is at least the
///    confidence with the interval's confidence level (per candidate).
/// The deterministic plan's probability is simulated with the same scenarios and reported next to it.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/plan/exact.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/revocation/interruption.hpp"
#include "spotdnn/revocation/simulate.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn {

/// Options of plan_with_confidence(). Plain fields, all defaulted.
struct ConfidencePlanOptions {
  double confidence = 0.9;  ///< the probability of meeting the deadline the plan must reach, in (0, 1)
  /// Scenarios, seed, threads, replacement policy and delays of every candidate's simulation.
  /// `simulate.predict` is replaced by the plan options' PS charging.
  SimulateOptions simulate = default_simulate_options();
  PlanOptions plan;               ///< PS charging, minimum counts, worker cap, markets
  InterruptionOptions interruption;  ///< hazards (on-demand types are never revoked)
  bool require_lower_bound = false;  ///< test the Wilson interval's lower end instead of the estimate
  std::size_t max_candidates_simulated = 5000;  ///< give up (infeasible) after this many simulations
  /// Refuse (invalid_argument, before any work) a count box larger than this: Π_k (quota_k, capped by
  /// plan.max_workers, − minimum_k + 1).
  double max_enumerated_clusters = 5e7;

  static SimulateOptions default_simulate_options() {
    SimulateOptions o;
    o.scenarios = 2000;
    return o;
  }
};

/// One candidate the search simulated.
struct ConfidenceCandidate {
  Cluster cluster;
  double cost_usd = 0;        ///< revocation-free
  double training_time_s = 0;  ///< revocation-free
  ProbabilityEstimate probability;
};

/// The answer of plan_with_confidence().
struct ConfidencePlanResult {
  Status status = Status::invalid_input;  ///< feasible (a plan meets the confidence) or infeasible
  std::string message;
  double confidence = 0;
  int scenarios = 0;  ///< K per candidate
  PlanResult deterministic;  ///< the exact planner's plan (revocations ignored)
  std::optional<ProbabilityEstimate> deterministic_probability;  ///< of the deterministic plan, same scenarios
  Cluster cluster;                 ///< the plan (empty when infeasible)
  std::vector<int> counts;
  Prediction prediction;           ///< its revocation-free figures
  SimulationResult simulation;     ///< its simulation (P, expected cost, percentiles)
  std::size_t candidates = 0;            ///< clusters meeting the deadline without revocations
  std::size_t candidates_simulated = 0;  ///< how many the search simulated
  std::vector<ConfidenceCandidate> simulated;  ///< every simulated candidate, in cost order

  [[nodiscard]] bool has_plan() const { return status == Status::feasible; }
};

namespace detail {

/// The model with the plan options' markets applied (types priced in the chosen market).
inline std::unique_ptr<PerformanceModel> with_markets(const PerformanceModel& model, const PlanOptions& options,
                                                      std::string_view fn) {
  if (options.markets.empty()) return nullptr;
  Catalog catalog = model.catalog();
  for (const auto& [name, market] : options.markets) {
    const auto k = catalog.index_of(name);
    if (!k) fail(fn, "options.plan.markets", detail::quoted(name), "unknown instance type (the catalog has: " + catalog.type_names() + ")");
    InstanceType& type = catalog.instance_types[*k];
    if (type.market == market) continue;
    type.price_usd_per_hour = type.price_in_usd_per_hour(market);
    type.market = market;
  }
  return std::make_unique<PerformanceModel>(model.workload(), std::move(catalog));
}

}  // namespace detail

/// The cheapest plan (revocation-free cost) whose simulated probability of meeting `slo.deadline_s` is at
/// least `options.confidence`; see the file comment for the exact guarantee. Throws
/// spotdnn::invalid_argument for bad input (bad SLO, confidence outside (0, 1), a type without a hazard,
/// a count box larger than max_enumerated_clusters: refused at once, before any planning or simulation).
[[nodiscard]] inline ConfidencePlanResult plan_with_confidence(const PerformanceModel& model, const Slo& slo,
                                                               const ConfidencePlanOptions& options = {}) {
  constexpr std::string_view fn = "plan_with_confidence";
  slo.validate(fn);
  if (!std::isfinite(slo.deadline_s)) detail::fail(fn, "slo.deadline_s", slo.deadline_s, "give a finite deadline");
  if (!(options.confidence > 0 && options.confidence < 1)) {
    detail::fail(fn, "options.confidence", options.confidence, "must be in (0, 1)");
  }
  if (options.plan.budget_usd) {
    detail::fail(fn, "options.plan.budget_usd", *options.plan.budget_usd, "budget mode has no confidence variant");
  }
  const std::unique_ptr<PerformanceModel> priced = detail::with_markets(model, options.plan, fn);
  const PerformanceModel& m = priced ? *priced : model;
  const InterruptionModel interruption(m, options.interruption);
  SimulateOptions sim = options.simulate;
  sim.predict.charge_parameter_server = options.plan.charge_parameter_server;
  sim.keep_outcomes = false;

  // The count box: per type from the minimum count to the quota (capped by max_workers), as the planner
  // sees them. Refused before any planning or simulating when it is too large to enumerate.
  const detail::PlanProblem problem(model, slo, options.plan, fn);  // validates the plan options
  const auto& types = m.worker_types();
  const std::size_t n = types.size();
  const std::vector<int>& lo = problem.min_count;
  const std::vector<int>& hi = problem.max_count;
  double box = 1;
  for (std::size_t k = 0; k < n; ++k) box *= double(hi[k] - lo[k] + 1);
  if (box > options.max_enumerated_clusters) {
    detail::fail(fn, "count box", box,
                 "more clusters than options.max_enumerated_clusters (" + detail::format_number(options.max_enumerated_clusters) +
                     "): the confidence search lists every cluster within the quotas (the product over types of quota - "
                     "minimum + 1) to simulate them in cost order; lower the quotas or cap the workers (options.plan.max_workers)");
  }

  ConfidencePlanResult r;
  r.confidence = options.confidence;
  r.scenarios = sim.scenarios;
  r.deterministic = plan_exact(model, slo, options.plan);
  struct Entry {
    double cost, time;
    int workers;
    std::vector<int> counts;
  };
  std::vector<Entry> entries;
  std::vector<int> c = lo;
  for (;;) {
    int workers = 0;
    for (int v : c) workers += v;
    if (workers >= problem.min_workers && workers <= problem.max_workers) {
      const Estimate e = m.estimate(c.data(), slo.target_loss, sim.predict);
      if (e.reaches_target() && e.training_time_s <= slo.deadline_s) entries.push_back({e.cost_usd, e.training_time_s, workers, c});
    }
    std::size_t k = 0;
    while (k < n && ++c[k] > hi[k]) c[k] = lo[k], ++k;
    if (k == n) break;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.time != b.time) return a.time < b.time;
    if (a.workers != b.workers) return a.workers < b.workers;
    return std::lexicographical_compare(b.counts.begin(), b.counts.end(), a.counts.begin(), a.counts.end());
  });
  r.candidates = entries.size();

  auto to_cluster = [&](const std::vector<int>& counts) {
    Cluster cl;
    for (std::size_t k = 0; k < n; ++k) {
      if (counts[k] > 0) cl.set(types[k].name, counts[k]);
    }
    return cl;
  };
  auto passes = [&](const ProbabilityEstimate& p) {
    return (options.require_lower_bound ? p.lower : p.estimate) >= options.confidence;
  };
  std::optional<SimulationResult> deterministic_simulation;
  if (r.deterministic.has_plan()) {
    deterministic_simulation = simulate(m, interruption, r.deterministic.cluster, slo.target_loss, slo.deadline_s, sim);
    r.deterministic_probability = deterministic_simulation->meets_deadline;
  }

  const std::string level = detail::format_number(options.confidence);
  std::optional<ConfidenceCandidate> best_seen;
  for (const Entry& entry : entries) {
    if (r.candidates_simulated >= options.max_candidates_simulated) break;
    ++r.candidates_simulated;
    const Cluster cluster = to_cluster(entry.counts);
    SimulationResult s = deterministic_simulation && cluster == r.deterministic.cluster
                             ? *deterministic_simulation  // the same scenarios: no need to run them again
                             : simulate(m, interruption, cluster, slo.target_loss, slo.deadline_s, sim);
    r.simulated.push_back({cluster, entry.cost, entry.time, s.meets_deadline});
    if (!best_seen || s.meets_deadline.estimate > best_seen->probability.estimate) best_seen = r.simulated.back();
    if (!passes(s.meets_deadline)) continue;
    r.status = Status::feasible;
    r.cluster = cluster;
    r.counts = entry.counts;
    r.prediction = predict(m, cluster, slo.target_loss, sim.predict);
    r.simulation = std::move(s);
    const ProbabilityEstimate& p = r.simulation.meets_deadline;
    r.message = cluster.to_string() + " meets the deadline with probability " + detail::format_fixed(p.estimate, 3) + " (" +
                detail::format_fixed(100 * p.confidence_level, 0) + "% interval " + detail::format_fixed(p.lower, 3) + "-" +
                detail::format_fixed(p.upper, 3) + ", " + std::to_string(p.trials) + " scenarios) >= " + level + ", at $" +
                detail::format_fixed(entry.cost, 4) + " without revocations; the " + std::to_string(r.candidates_simulated - 1) +
                " cheaper plans fall short";
    if (r.deterministic_probability) {
      r.message += "; the deterministic plan (" + r.deterministic.cluster.to_string() + ", $" +
                   detail::format_fixed(r.deterministic.prediction.cost_usd, 4) + ") has probability " +
                   detail::format_fixed(r.deterministic_probability->estimate, 3);
    }
    return r;
  }
  r.status = Status::infeasible;
  if (entries.empty()) {
    r.message = r.deterministic.has_plan() ? "no cluster meets the deadline" : r.deterministic.message;
  } else {
    r.message = "none of the " + std::to_string(r.candidates_simulated) + " cheapest of " + std::to_string(entries.size()) +
                " plans meeting the deadline reaches probability " + level;
    if (best_seen) {
      r.message += " (the best, " + best_seen->cluster.to_string() + ", has " + detail::format_fixed(best_seen->probability.estimate, 3) + ")";
    }
  }
  return r;
}

}  // namespace spotdnn
