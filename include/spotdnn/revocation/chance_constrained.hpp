#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation/chance_constrained.hpp Plans with a confidence level: the cheapest cluster whose
/// probability of meeting the deadline under revocations is at least, say, 0.9 — decided by a sequential
/// test with an exact error guarantee, not by a point estimate.
///
/// **Candidates.** Every cluster within the quotas, the vCPU quota groups (docs/model.md, "vCPU quota
/// groups", counted in each type's chosen market) and the plan options (minimum counts, worker cap,
/// markets) whose revocation-free prediction meets the deadline is a candidate (a plan that misses the
/// deadline even without revocations is not offered). Candidates are enumerated exhaustively and sorted by
/// their revocation-free cost, the price the planner quotes (ties: faster, then fewer workers, then
/// catalog order), so the first candidate is the exact planner's plan. The order depends on the model
/// only, never on random draws. Candidate m (m = 1, 2, ... in that order) is simulated only if every
/// cheaper one was, and the search returns the first candidate decided to *meet* the level.
///
/// **One candidate's sequential decision.** Let p_m be candidate m's true probability of meeting the
/// deadline, c the level (`confidence`), ε the indifference margin (`tolerance`) and δ the error rate
/// (`error_rate`). Scenario i is the same scenario for every candidate (its random stream is seeded by
/// (seed, i), see simulate.hpp: common random numbers), so the outcomes X_{m,1}, X_{m,2}, ... of one
/// candidate are i.i.d. Bernoulli(p_m) (for an ideal random stream), while different candidates are
/// dependent — which the union bound below does not mind. The candidate is looked at after
/// n_l = min(N_m, n_0·2^(l−1)) scenarios, l = 1..L_m (n_0 = `initial_scenarios`; N_m = `max_scenarios`,
/// lowered to kMaxSimulatedEvents / workers for a large cluster; L_m the number of distinct n_l). Each look
/// has the error budget
///
///     α_{m,l} = δ_m / L_m,   δ_m = δ · 6 / (π² m²),
///
/// and computes the exact one-sided Clopper–Pearson bounds of S successes in n = n_l scenarios:
///
///     lower = Beta⁻¹(α; S, n − S + 1)  (0 when S = 0),   upper = Beta⁻¹(1 − α; S + 1, n − S)  (1 when S = n),
///
/// for which P(lower > p) ≤ α and P(upper < p) ≤ α for every p (Clopper & Pearson, Biometrika 1934: the
/// bounds invert the binomial tails). Decision at look l: **meets** when lower > c − ε, **falls short**
/// when upper < c, otherwise go on; at N_m, **undecided**.
///
/// **The guarantee, and its proof.** Call a decision wrong when a candidate with p_m < c − ε is decided to
/// meet, or one with p_m ≥ c is decided to fall short (for c − ε ≤ p_m < c either decision is right).
/// Define, for every candidate — simulated or not, its looks are a fixed function of the common streams —
/// the event B_m = {∃ l: lower_{m,l} > p_m} when p_m < c − ε, B_m = {∃ l: upper_{m,l} < p_m} when p_m ≥ c,
/// and B_m = ∅ otherwise. A wrong "meets" needs lower_{m,l} > c − ε > p_m at some look, a wrong "falls
/// short" needs upper_{m,l} < c ≤ p_m: both imply B_m. By the union bound over looks,
/// P(B_m) ≤ Σ_l α_{m,l} = δ_m, and over candidates P(∪_m B_m) ≤ Σ_m δ_m = δ · (6/π²) · Σ_m 1/m² = δ.
/// So **with probability at least 1 − δ no decision is wrong: every candidate decided to meet has
/// p ≥ c − ε, and every one decided to fall short has p < c.** The returned plan (the first that meets)
/// therefore has p ≥ c − ε, and every cheaper candidate decided to fall short was rightly passed over, with
/// probability at least 1 − δ. The same argument on one side alone shows that all lower bounds (or all
/// upper bounds) the search computes hold at once with probability at least 1 − δ.
///
/// **Undecided candidates** (p too close to c for N_m scenarios to tell) are passed over as not meeting
/// the level. The guarantee says nothing about them: one may have p ≥ c and be cheaper than the plan
/// returned. The result counts them (`candidates_undecided`) and the message says so; raise
/// `max_scenarios` or `tolerance` to decide them.
///
/// **Work limit.** A candidate's scenarios may handle at most `max_simulated_events` events (at most
/// limits.hpp's kMaxSimulatedEvents; instances drawn, revocations, joins and re-plans, as simulate()
/// counts them). Before each look the
/// work per scenario so far predicts the look's work; a look that would pass the limit (or passes it all
/// the same) is not taken, and the candidate stays **undecided** at its last look, `work_limited`, and is
/// passed over like any undecided one: the search goes on to the next candidate and finishes. A valid
/// request is never refused late for it. Fewer looks than planned spend less than δ_m, so the guarantee
/// holds; the work counted depends on the scenarios only (not on the threads), so the decision does too.
///
/// **Cost.** Most candidates are far from c and are decided at the first look (n_0 scenarios); only
/// candidates within a few standard errors of the band [c − ε, c] need more, up to N_m. The deterministic
/// plan (candidate 1) is reported with its own decision and interval.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/math/distributions/beta.hpp>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/plan/exact.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/progress.hpp"
#include "spotdnn/revocation/interruption.hpp"
#include "spotdnn/revocation/simulate.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn {

/// Options of plan_with_confidence(). Plain fields, all defaulted.
struct ConfidencePlanOptions {
  double confidence = 0.9;   ///< c: the probability of meeting the deadline the plan must reach, in (0, 1)
  /// ε: a plan is accepted when its probability is shown to exceed c − ε; in [0, c). 0 by default: a plan
  /// accepted is shown to reach the level asked for; a margin is opt-in.
  double tolerance = 0;
  double error_rate = 0.05;  ///< δ: the probability that any decision of the search is wrong, in (0, 0.5]
  int max_scenarios = 200000;     ///< N: at most this many scenarios per candidate (1 to kMaxScenarios)
  int initial_scenarios = 1000;   ///< n_0: scenarios at the first look; each look doubles (1 to max_scenarios)
  /// Seed, threads, replacement policy and delays of every candidate's simulation. The search decides the
  /// scenario counts itself: `simulate.scenarios`, `keep_outcomes`, `confidence_level` and `progress` are
  /// not used. `simulate.predict` is replaced by the plan options' PS charging.
  SimulateOptions simulate;
  PlanOptions plan;                  ///< PS charging, minimum counts, worker cap, markets
  InterruptionOptions interruption;  ///< hazards (on-demand types are never revoked)
  std::size_t max_candidates_simulated = 5000;  ///< give up (infeasible) after this many candidates
  /// The work limit of one candidate's scenarios, in simulated events (see "Work limit" in the file
  /// comment); 1 to kMaxSimulatedEvents.
  std::int64_t max_simulated_events = kMaxSimulatedEvents;
  /// Refuse (invalid_argument, before any work) a count box larger than this: Π_k (quota_k, capped by
  /// plan.max_workers, − minimum_k + 1).
  double max_enumerated_clusters = 5e7;
  /// Called with ("confidence search", "candidates", m, candidates) on the calling thread: before the
  /// first candidate, after each candidate simulated, and (candidates, candidates) when the search ends.
  ProgressCallback progress;
};

/// What the sequential test decided for one candidate.
enum class ConfidenceDecision {
  meets,        ///< the lower bound exceeded c − ε
  falls_short,  ///< the upper bound fell below c
  undecided,    ///< neither after the candidate's scenario cap: passed over, with no guarantee
};

constexpr std::string_view to_string(ConfidenceDecision decision) {
  switch (decision) {
    case ConfidenceDecision::meets: return "meets";
    case ConfidenceDecision::falls_short: return "falls_short";
    case ConfidenceDecision::undecided: return "undecided";
  }
  return "undecided";
}

/// One candidate the search simulated.
struct ConfidenceCandidate {
  Cluster cluster;
  double cost_usd = 0;         ///< revocation-free
  double training_time_s = 0;  ///< revocation-free
  /// At the last look: the estimate, the exact (Clopper–Pearson) interval whose ends are the one-sided
  /// bounds at that look's α (confidence_level = 1 − 2α), and `trials` = scenarios used.
  ProbabilityEstimate probability;
  ConfidenceDecision decision = ConfidenceDecision::undecided;
  double error_budget = 0;  ///< δ_m, spent equally over this candidate's looks
  int looks = 0;            ///< looks taken
  /// undecided because its next look would have passed the simulation work limit (kMaxSimulatedEvents
  /// events for the candidate's scenarios, re-plans included): its looks stopped before max_scenarios.
  bool work_limited = false;
};

/// The answer of plan_with_confidence().
struct ConfidencePlanResult {
  Status status = Status::invalid_input;  ///< feasible (a plan meets the confidence), infeasible or target_met_at_start
  std::string message;
  double confidence = 0;  ///< c
  double tolerance = 0;   ///< ε
  double error_rate = 0;  ///< δ
  int max_scenarios = 0;  ///< N
  PlanResult deterministic;  ///< the exact planner's plan (revocations ignored)
  /// The deterministic plan's estimate and interval (from its own decision, see ConfidenceCandidate).
  std::optional<ProbabilityEstimate> deterministic_probability;
  Cluster cluster;         ///< the plan (empty when there is none)
  std::vector<int> counts;
  Prediction prediction;   ///< its revocation-free figures
  /// The plan's estimate, exact interval and scenarios used (as ConfidenceCandidate::probability).
  ProbabilityEstimate probability;
  /// Its simulation over the scenarios used (expected cost, percentiles); `simulation.meets_deadline` is
  /// `probability`.
  SimulationResult simulation;
  std::size_t candidates = 0;            ///< clusters meeting the deadline without revocations
  std::size_t candidates_simulated = 0;  ///< how many the search simulated
  std::size_t candidates_undecided = 0;  ///< of those, how many stayed undecided (passed over)
  /// Of the undecided, how many stopped at the simulation work limit before max_scenarios (work_limited).
  std::size_t candidates_work_limited = 0;
  std::int64_t scenarios_simulated = 0;  ///< over all candidates
  std::vector<ConfidenceCandidate> simulated;  ///< every simulated candidate, in cost order

  [[nodiscard]] bool has_plan() const { return status == Status::feasible; }
};

/// The one-sided Clopper–Pearson bounds of `successes` in `trials` at error α each, as a
/// ProbabilityEstimate with confidence_level = 1 − 2α: P(lower > p) ≤ α and P(upper < p) ≤ α.
/// @note C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case of
/// the binomial", Biometrika 1934.
[[nodiscard]] inline ProbabilityEstimate clopper_pearson_bounds(int successes, int trials, double alpha) {
  constexpr std::string_view fn = "clopper_pearson_bounds";
  if (trials < 1) detail::fail(fn, "trials", trials, "must be at least 1");
  if (successes < 0 || successes > trials) detail::fail(fn, "successes", successes, "must be in [0, trials]");
  if (!(alpha > 0 && alpha < 0.5)) detail::fail(fn, "alpha", alpha, "must be in (0, 0.5)");
  using boost::math::beta_distribution;
  ProbabilityEstimate e;
  e.successes = successes;
  e.trials = trials;
  e.estimate = double(successes) / trials;
  e.lower = successes == 0 ? 0.0 : boost::math::quantile(beta_distribution<double>(successes, trials - successes + 1), alpha);
  e.upper = successes == trials
                ? 1.0
                : boost::math::quantile(boost::math::complement(beta_distribution<double>(successes + 1, trials - successes), alpha));
  e.confidence_level = 1 - 2 * alpha;
  return e;
}

/// The two-sided Clopper–Pearson interval at `confidence_level` (each tail (1 − level)/2).
[[nodiscard]] inline ProbabilityEstimate clopper_pearson_interval(int successes, int trials, double confidence_level = 0.95) {
  if (!(confidence_level > 0 && confidence_level < 1)) {
    detail::fail("clopper_pearson_interval", "confidence_level", confidence_level, "must be in (0, 1)");
  }
  return clopper_pearson_bounds(successes, trials, (1 - confidence_level) / 2);
}

namespace detail {

/// δ_m = δ·6/(π² m²): the error budget of the m-th candidate (m ≥ 1); Σ_m δ_m = δ.
[[nodiscard]] inline double candidate_error_budget(double error_rate, std::size_t m) {
  constexpr double kPi = 3.14159265358979323846;
  const double md = double(m);
  return error_rate * 6.0 / (kPi * kPi * md * md);
}

/// The look sizes n_l = min(cap, n_0·2^(l−1)), l = 1.., ending at cap.
[[nodiscard]] inline std::vector<int> look_sizes(int initial, int cap) {
  std::vector<int> sizes;
  for (std::int64_t n = std::min(initial, cap);; n *= 2) {
    sizes.push_back(int(std::min<std::int64_t>(n, cap)));
    if (sizes.back() >= cap) break;
  }
  return sizes;
}

/// The sequential decision of one candidate (see the file comment). Runs scenarios [0, n_l) as the looks
/// need them and keeps their outcomes for the caller.
struct SequentialDecision {
  ConfidenceCandidate candidate;
  std::vector<ScenarioOutcome> outcomes;
};

[[nodiscard]] inline SequentialDecision decide_candidate(const PerformanceModel& model, const InterruptionModel& interruption,
                                                         const std::vector<int>& counts, double target_loss, double deadline_s,
                                                         const SimulateOptions& sim, const ConfidencePlanOptions& options,
                                                         double error_budget, std::vector<ScenarioOutcome> scratch = {}) {
  std::int64_t workers = 0;
  for (int v : counts) workers += v;
  const int cap = int(std::min<std::int64_t>(options.max_scenarios, std::max<std::int64_t>(1, kMaxSimulatedEvents / std::max<std::int64_t>(1, workers))));
  const std::vector<int> looks = look_sizes(options.initial_scenarios, cap);
  const double alpha = error_budget / double(looks.size());
  SimulateOptions checked = sim;
  checked.scenarios = cap;
  validate_simulation("plan_with_confidence", model, interruption, counts, target_loss, deadline_s, checked, cap);

  SequentialDecision d;
  d.outcomes = std::move(scratch);  // a buffer of an earlier candidate: its pages are mapped already
  d.outcomes.clear();
  d.candidate.error_budget = error_budget;
  d.candidate.probability.upper = 1;
  d.outcomes.reserve(std::size_t(looks.front()));
  WorkMeter::Shared work;
  work.quiet = true;  // at the work limit the candidate stays undecided (below), the search goes on
  work.limit = options.max_simulated_events;
  int successes = 0;
  for (int n : looks) {
    const std::size_t done = d.outcomes.size();
    // The next look would pass the work limit at the work per scenario so far: stop before running it.
    if (done > 0 && double(work.total.load()) / double(done) * double(n) > double(work.limit)) {
      d.candidate.work_limited = true;
      break;
    }
    d.outcomes.resize(std::size_t(n));
    try {
      run_scenarios(model, interruption, counts, target_loss, deadline_s, sim, done, d.outcomes.data() + done,
                    std::size_t(n) - done, work);
    } catch (const WorkMeter::WorkLimitReached&) {  // it passed the limit all the same: that look does not count
      d.outcomes.resize(done);
      d.candidate.work_limited = true;
      break;
    }
    for (std::size_t i = done; i < d.outcomes.size(); ++i) successes += d.outcomes[i].met_deadline ? 1 : 0;
    ++d.candidate.looks;
    d.candidate.probability = clopper_pearson_bounds(successes, n, alpha);
    if (d.candidate.probability.lower > options.confidence - options.tolerance) {
      d.candidate.decision = ConfidenceDecision::meets;
      return d;
    }
    if (d.candidate.probability.upper < options.confidence) {
      d.candidate.decision = ConfidenceDecision::falls_short;
      return d;
    }
  }
  d.candidate.decision = ConfidenceDecision::undecided;
  return d;
}

/// "0.8977 [0.8954, 0.8999] after 200000 scenarios".
[[nodiscard]] inline std::string describe_probability(const ProbabilityEstimate& p) {
  return format_fixed(p.estimate, 4) + " [" + format_fixed(p.lower, 4) + ", " + format_fixed(p.upper, 4) + "] after " +
         std::to_string(p.trials) + " scenarios";
}

}  // namespace detail

/// The cheapest plan (revocation-free cost) shown to meet `slo.deadline_s` with probability at least
/// `options.confidence` − `options.tolerance`, where every decision of the search is right with
/// probability at least 1 − `options.error_rate`; see the file comment for the exact guarantee.
/// Throws spotdnn::invalid_argument for bad input (bad SLO or options, a type some candidate uses without a
/// hazard, a count box larger than max_enumerated_clusters: refused at once, before any simulation).
[[nodiscard]] inline ConfidencePlanResult plan_with_confidence(const PerformanceModel& model, const Slo& slo,
                                                               const ConfidencePlanOptions& options = {}) {
  constexpr std::string_view fn = "plan_with_confidence";
  slo.validate(fn);
  if (!std::isfinite(slo.deadline_s)) detail::fail(fn, "slo.deadline_s", slo.deadline_s, "give a finite deadline");
  if (!(options.confidence > 0 && options.confidence < 1)) {
    detail::fail(fn, "options.confidence", options.confidence, "must be in (0, 1)");
  }
  if (!(options.tolerance >= 0 && options.tolerance < options.confidence)) {
    detail::fail(fn, "options.tolerance", options.tolerance, "must be in [0, confidence)");
  }
  if (!(options.error_rate > 0 && options.error_rate <= 0.5)) {
    detail::fail(fn, "options.error_rate", options.error_rate, "must be in (0, 0.5]");
  }
  if (options.max_scenarios < 1 || options.max_scenarios > kMaxScenarios) {
    detail::fail(fn, "options.max_scenarios", options.max_scenarios, "must be from 1 to " + std::to_string(kMaxScenarios));
  }
  if (options.initial_scenarios < 1 || options.initial_scenarios > options.max_scenarios) {
    detail::fail(fn, "options.initial_scenarios", options.initial_scenarios, "must be from 1 to options.max_scenarios");
  }
  if (options.max_candidates_simulated < 1) {
    detail::fail(fn, "options.max_candidates_simulated", 0.0, "must be at least 1");
  }
  if (options.max_simulated_events < 1 || options.max_simulated_events > kMaxSimulatedEvents) {
    detail::fail(fn, "options.max_simulated_events", double(options.max_simulated_events),
                 "must be from 1 to " + std::to_string(kMaxSimulatedEvents));
  }
  if (options.plan.budget_usd) {
    detail::fail(fn, "options.plan.budget_usd", *options.plan.budget_usd, "budget mode has no confidence variant");
  }
  // Validates the plan options and prices every type in its chosen market (the planner's own rebinding).
  const detail::PlanProblem problem(model, slo, options.plan, fn);
  const PerformanceModel& m = problem.model();
  const InterruptionModel interruption(m, options.interruption);
  SimulateOptions sim = options.simulate;
  sim.predict.charge_parameter_server = options.plan.charge_parameter_server;
  sim.keep_outcomes = false;
  sim.progress = nullptr;
  detail::validate_simulate_options(fn, sim);
  detail::validate_fitted_revocations(fn, m, sim);

  // The count box: per type from the minimum count to the quota (capped by max_workers and by what the
  // type's quota group allows), as the planner sees them. Refused before any planning or simulating when it is too large to enumerate.
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
  r.tolerance = options.tolerance;
  r.error_rate = options.error_rate;
  r.max_scenarios = options.max_scenarios;
  r.deterministic = plan_exact(model, slo, options.plan);
  if (r.deterministic.status == Status::target_met_at_start) {  // nothing to train: no plan to simulate
    r.status = r.deterministic.status;
    r.message = r.deterministic.message;
    return r;
  }
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
    if (workers >= problem.min_workers && workers <= problem.max_workers && problem.within_quota_groups(c.data())) {
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

  // Hazards: only the types some candidate uses (and, with replan replacement, the types it may add).
  std::vector<bool> used(n, false);
  for (const Entry& entry : entries) {
    const std::vector<bool> u = detail::types_in_use(m, entry.counts, sim.replacement);
    for (std::size_t k = 0; k < n; ++k) used[k] = used[k] || u[k];
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (used[k] && !detail::draws_from_pools(sim, k)) interruption.require_hazard(k, fn, "a candidate plan uses it");
  }

  auto to_cluster = [&](const std::vector<int>& counts) {
    Cluster cl;
    for (std::size_t k = 0; k < n; ++k) {
      if (counts[k] > 0) cl.set(types[k].name, counts[k]);
    }
    return cl;
  };
  const std::string level = detail::format_number(options.confidence);
  const double total = double(entries.size());
  detail::report(options.progress, "confidence search", "candidates", 0, total);
  std::optional<std::size_t> best_seen;
  std::optional<detail::SequentialDecision> accepted;
  std::size_t accepted_index = 0;
  std::vector<ScenarioOutcome> buffer;  // the scenario outcomes of one candidate after another
  for (std::size_t i = 0; i < entries.size() && r.candidates_simulated < options.max_candidates_simulated; ++i) {
    const Entry& entry = entries[i];
    ++r.candidates_simulated;
    detail::SequentialDecision d = detail::decide_candidate(m, interruption, entry.counts, slo.target_loss, slo.deadline_s, sim,
                                                            options, detail::candidate_error_budget(options.error_rate, i + 1),
                                                            std::move(buffer));
    d.candidate.cluster = to_cluster(entry.counts);
    d.candidate.cost_usd = entry.cost;
    d.candidate.training_time_s = entry.time;
    r.scenarios_simulated += d.candidate.probability.trials;
    if (d.candidate.decision == ConfidenceDecision::undecided) ++r.candidates_undecided;
    if (d.candidate.work_limited) ++r.candidates_work_limited;
    r.simulated.push_back(d.candidate);
    if (!best_seen || d.candidate.probability.estimate > r.simulated[*best_seen].probability.estimate) best_seen = i;
    detail::report(options.progress, "confidence search", "candidates", double(r.candidates_simulated), total);
    if (d.candidate.decision == ConfidenceDecision::meets) {
      accepted = std::move(d);
      accepted_index = i;
      break;
    }
    buffer = std::move(d.outcomes);
  }
  detail::report(options.progress, "confidence search", "candidates", total, total);

  // The deterministic plan is candidate 1 (the same cost order); its decision is its report.
  if (r.deterministic.has_plan()) {
    for (const ConfidenceCandidate& candidate : r.simulated) {
      if (candidate.cluster == r.deterministic.cluster) r.deterministic_probability = candidate.probability;
    }
  }
  auto deterministic_note = [&] {
    if (!r.deterministic_probability || (accepted && r.deterministic.cluster == accepted->candidate.cluster)) return std::string();
    return "; the deterministic plan (" + r.deterministic.cluster.to_string() + ", $" +
           detail::format_fixed(r.deterministic.prediction.cost_usd, 4) + ") has probability " +
           detail::describe_probability(*r.deterministic_probability);
  };
  const std::string guarantee = "with probability >= " + detail::format_number(1 - options.error_rate) +
                                " every plan accepted has P >= " + detail::format_number(options.confidence - options.tolerance) +
                                " and every plan passed over as falling short has P < " + level;
  auto undecided_note = [&](std::size_t undecided) {
    if (undecided == 0) return std::string();
    const std::size_t limited = r.candidates_work_limited;
    const std::string plans = std::to_string(undecided) + (undecided == 1 ? " plan" : " plans");
    const std::string passed = std::string(" and ") + (undecided == 1 ? "was" : "were") + " passed over (its probability may reach " + level + "; ";
    if (limited == 0) return "; " + plans + " stayed undecided at the scenario cap" + passed + "raise the scenario cap or the tolerance to decide)";
    const std::string limit = "the simulation work limit of " + std::to_string(options.max_simulated_events) + " events per candidate";
    const std::string raise = options.max_simulated_events < kMaxSimulatedEvents
                                  ? "the work limit (at most " + std::to_string(kMaxSimulatedEvents) + " events) or the tolerance"
                                  : std::string("the tolerance");
    if (limited == undecided) {
      return "; " + plans + " stayed undecided at " + limit + ", before " + std::to_string(options.max_scenarios) + " scenarios," + passed +
             "raise " + raise + " to decide)";
    }
    return "; " + plans + " stayed undecided (" + std::to_string(limited) + " at " + limit + ", the others at the scenario cap)" + passed +
           "raise the scenario cap, " + raise + " to decide)";
  };

  if (accepted) {
    const Entry& entry = entries[accepted_index];
    r.status = Status::feasible;
    r.cluster = accepted->candidate.cluster;
    r.counts = entry.counts;
    r.prediction = predict(m, r.cluster, slo.target_loss, sim.predict);
    r.probability = accepted->candidate.probability;
    SimulationResult& s = r.simulation;
    s.cluster = r.cluster;
    s.target_loss = slo.target_loss;
    s.deadline_s = slo.deadline_s;
    s.seed = sim.seed;
    s.replacement = sim.replacement;
    s.parameter_server_charged = sim.predict.charge_parameter_server;
    s.deterministic_time_s = entry.time;
    s.deterministic_cost_usd = entry.cost;
    s.deterministic_meets_deadline = true;
    detail::summarize(s, std::move(accepted->outcomes), sim);
    s.meets_deadline = r.probability;
    const std::size_t cheaper = r.candidates_simulated - 1;
    const std::size_t undecided = r.candidates_undecided;
    const std::string passed_over =
        cheaper == 0 ? std::string("it is the cheapest plan meeting the deadline")
                     : (undecided == 0 ? std::string(cheaper == 1 ? "the cheaper plan falls" : "the " + std::to_string(cheaper) + " cheaper plans fall")
                                       : std::to_string(cheaper - undecided) + " of the " + std::to_string(cheaper) + " cheaper plans fall") +
                           " short of " + level;
    r.message = r.cluster.to_string() + " meets the deadline with probability " + detail::describe_probability(r.probability) +
                " (exact interval; accepted as its lower bound exceeds " + level + " - " + detail::format_number(options.tolerance) +
                "), at $" + detail::format_fixed(entry.cost, 4) + " without revocations; " + passed_over + undecided_note(undecided) +
                deterministic_note() + "; " + guarantee;
    return r;
  }
  r.status = Status::infeasible;
  if (entries.empty()) {
    r.message = r.deterministic.has_plan() ? "no cluster meets the deadline" : r.deterministic.message;
  } else {
    r.message = "none of the " + std::to_string(r.candidates_simulated) + " cheapest of " + std::to_string(entries.size()) +
                " plans meeting the deadline reaches probability " + level;
    if (best_seen) {
      const ConfidenceCandidate& best = r.simulated[*best_seen];
      r.message += " (the best, " + best.cluster.to_string() + ", has " + detail::describe_probability(best.probability) + ")";
    }
    r.message += undecided_note(r.candidates_undecided);
  }
  return r;
}

}  // namespace spotdnn
