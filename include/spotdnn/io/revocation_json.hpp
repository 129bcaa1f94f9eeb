#pragma once
// SPDX-License-Identifier: MIT
/// @file io/revocation_json.hpp JSON for revocation handling: the re-planning state file, and the
/// results of simulate(), replan(), plan_with_confidence() and checkpoint_plan().
///
/// The state file of `spotdnn replan --state STATE.json` (strict: unknown keys are errors):
///
///     {"survivors": {"p3.2xlarge": 2},      // instances that stay (may be {})
///      "elapsed_s": 1276.5,                 // since training started
///      "deadline_s": 2600, "target_loss": 0.8,
///      "loss_reached": 1.0676,              // or "samples_trained": N with "trained_on": {TYPE: N}
///      "join_delay_s": 120,                 // optional, default 120
///      "exclude_types": ["g3.8xlarge"],     // optional: types not to add
///      "charge_parameter_server": true}     // optional, default true

#include <string>
#include <vector>

#include "spotdnn/io/json.hpp"
#include "spotdnn/revocation/chance_constrained.hpp"
#include "spotdnn/revocation/checkpoint.hpp"
#include "spotdnn/revocation/interruption.hpp"
#include "spotdnn/revocation/replan.hpp"
#include "spotdnn/revocation/simulate.hpp"

namespace spotdnn::io {

/// A re-planning state file: the request and the options it carries.
struct ReplanState {
  ReplanRequest request;
  ReplanOptions options;
};

/// Reads a state object (see the file comment); errors name the key path under `path`.
[[nodiscard]] inline ReplanState replan_state_from_json(const Json& json, const std::string& path = "state",
                                                        const std::string& function = "replan_state_from_json") {
  JsonObjectReader r(json, path, function);
  r.expect_keys({"survivors", "elapsed_s", "deadline_s", "target_loss", "loss_reached", "samples_trained", "trained_on",
                 "join_delay_s", "exclude_types", "charge_parameter_server"});
  ReplanState s;
  s.request.survivors = cluster_from_json(r.required("survivors"), r.key_path("survivors"), function);
  s.request.elapsed_s = r.non_negative_number("elapsed_s");
  s.request.deadline_s = r.positive_number("deadline_s");
  s.request.target_loss = r.number("target_loss");
  if (r.has("loss_reached")) s.request.loss_reached = r.positive_number("loss_reached");
  if (r.has("samples_trained")) s.request.samples_trained = r.non_negative_number("samples_trained");
  if (r.has("trained_on")) s.request.trained_on = cluster_from_json(r.required("trained_on"), r.key_path("trained_on"), function);
  if (r.has("join_delay_s")) s.options.join_delay_s = r.non_negative_number("join_delay_s");
  if (const Json* exclude = r.optional("exclude_types")) {
    if (!exclude->is_array()) spotdnn::detail::fail(function, r.key_path("exclude_types"), JsonObjectReader::excerpt(*exclude), "expected an array of type names");
    for (std::size_t i = 0; i < exclude->size(); ++i) {
      s.options.exclude_types.push_back(r.as_string((*exclude)[i], r.key_path("exclude_types") + "[" + std::to_string(i) + "]"));
    }
  }
  if (r.has("charge_parameter_server")) s.options.plan.charge_parameter_server = r.boolean("charge_parameter_server");
  r.finish();
  if (s.request.loss_reached.has_value() == s.request.samples_trained.has_value()) {
    spotdnn::detail::fail(function, r.key_path("loss_reached"), s.request.loss_reached ? "both" : "missing",
                 "give exactly one of loss_reached and samples_trained (with trained_on)");
  }
  if (s.request.samples_trained && s.request.trained_on.empty()) {
    spotdnn::detail::fail(function, r.key_path("trained_on"), "missing", "samples_trained needs the cluster that trained them");
  }
  return s;
}

/// Reads a state JSON file; every error names the file and the key path.
[[nodiscard]] inline ReplanState read_replan_state_file(const std::string& path) {
  return replan_state_from_json(read_json_file(path), "state", "read_replan_state_file(" + path + ")");
}

/// The state object of `s` (replan_state_from_json(to_json(s)) gives `s` back).
[[nodiscard]] inline Json to_json(const ReplanState& s) {
  Json j = {{"survivors", to_json(s.request.survivors)},
            {"elapsed_s", s.request.elapsed_s},
            {"deadline_s", s.request.deadline_s},
            {"target_loss", s.request.target_loss}};
  if (s.request.loss_reached) j["loss_reached"] = *s.request.loss_reached;
  if (s.request.samples_trained) {
    j["samples_trained"] = *s.request.samples_trained;
    j["trained_on"] = to_json(s.request.trained_on);
  }
  j["join_delay_s"] = s.options.join_delay_s;
  j["exclude_types"] = s.options.exclude_types;
  j["charge_parameter_server"] = s.options.plan.charge_parameter_server;
  return j;
}

[[nodiscard]] inline Json to_json(const ProbabilityEstimate& p) {
  return {{"estimate", p.estimate},
          {"lower", p.lower},
          {"upper", p.upper},
          {"confidence_level", p.confidence_level},
          {"successes", p.successes},
          {"trials", p.trials}};
}

/// Nearest-rank percentiles; null for +inf (scenarios that never finish).
[[nodiscard]] inline Json to_json(const Percentiles& p) {
  return {{"p10", number_or_null(p.p10)},
          {"p50", number_or_null(p.p50)},
          {"p90", number_or_null(p.p90)},
          {"p95", number_or_null(p.p95)},
          {"p99", number_or_null(p.p99)}};
}

[[nodiscard]] inline Json to_json(const InterruptionModel& m) {
  Json types = Json::array();
  for (std::size_t k = 0; k < m.types().size(); ++k) {
    const TypeInterruption& t = m.types()[k];
    // A type without a hazard (source "missing", never simulated) has null hazard and lifetime.
    types.push_back({{"type", t.type},
                     {"hazard_per_hour", t.has_hazard() ? Json(t.hazard_per_hour) : Json(nullptr)},
                     {"source", std::string(to_string(t.source))},
                     {"mean_lifetime_s", t.has_hazard() ? number_or_null(m.mean_lifetime_s(k)) : Json(nullptr)}});
  }
  return {{"weibull_shape", m.weibull_shape()}, {"reference_horizon_s", m.reference_horizon_s()}, {"types", types}};
}

[[nodiscard]] inline Json to_json(const SimulationResult& r) {
  return {{"status", std::string(to_string(r.status))},
          {"message", r.message},
          {"cluster", to_json(r.cluster)},
          {"target_loss", r.target_loss},
          {"deadline_s", r.deadline_s},
          {"scenarios", r.scenarios},
          {"seed", r.seed},
          {"replacement", std::string(to_string(r.replacement))},
          {"ps_charged", r.parameter_server_charged},
          {"deterministic_time_s", number_or_null(r.deterministic_time_s)},
          {"deterministic_cost_usd", number_or_null(r.deterministic_cost_usd)},
          {"deterministic_meets_deadline", r.deterministic_meets_deadline},
          {"probability_meets_deadline", to_json(r.meets_deadline)},
          {"finished_share", r.finished_share},
          {"mean_time_s", number_or_null(r.mean_time_s)},
          {"mean_cost_usd", r.mean_cost_usd},
          {"mean_revocations", r.mean_revocations},
          {"mean_replacements", r.mean_replacements},
          {"time_s", to_json(r.time_s)},
          {"cost_usd", to_json(r.cost_usd)}};
}

[[nodiscard]] inline Json to_json(const ReplanResult& r) {
  Json j = {{"status", std::string(to_string(r.status))},
            {"message", r.message},
            {"loss_reached", number_or_null(r.loss_reached)},
            {"remaining_time_s", r.remaining_time_s},
            {"survivors", to_json(r.survivors)},
            {"additions", to_json(r.additions)},
            {"cluster", to_json(r.cluster)},
            {"finish_time_s", number_or_null(r.finish_time_s)},
            {"completion_time_s", number_or_null(r.completion_time_s)},
            {"cost_usd", r.cost_usd},
            {"worker_cost_usd", r.worker_cost_usd},
            {"ps_cost_usd", r.ps_cost_usd},
            {"fastest_finish_time_s", number_or_null(r.fastest_finish_time_s)}};
  j["fastest_additions"] = r.fastest_additions ? to_json(*r.fastest_additions) : Json(nullptr);
  return j;
}

/// The confidence search: `confidence` (c), `tolerance` (ε), `error_rate` (δ), `max_scenarios` (N) and,
/// for the plan (null without one), `probability_meets_deadline` {estimate, lower, upper (the exact
/// interval), confidence_level, successes, trials (= scenarios used)}; every simulated candidate with its
/// decision ("meets", "falls_short", "undecided"), interval, scenarios and whether it stopped undecided at
/// the simulation work limit (`work_limited`; `candidates_work_limited` counts those).
[[nodiscard]] inline Json to_json(const ConfidencePlanResult& r) {
  Json simulated = Json::array();
  for (const ConfidenceCandidate& c : r.simulated) {
    simulated.push_back({{"cluster", to_json(c.cluster)},
                         {"cost_usd", c.cost_usd},
                         {"training_time_s", c.training_time_s},
                         {"decision", std::string(to_string(c.decision))},
                         {"probability", c.probability.estimate},
                         {"lower", c.probability.lower},
                         {"upper", c.probability.upper},
                         {"scenarios", c.probability.trials},
                         {"work_limited", c.work_limited},
                         {"error_budget", c.error_budget}});
  }
  Json j = {{"status", std::string(to_string(r.status))},
            {"message", r.message},
            {"confidence", r.confidence},
            {"tolerance", r.tolerance},
            {"error_rate", r.error_rate},
            {"max_scenarios", r.max_scenarios},
            {"cluster", to_json(r.cluster)}};
  j["probability_meets_deadline"] = r.has_plan() ? to_json(r.probability) : Json(nullptr);
  j["prediction"] = r.has_plan() ? to_json(r.prediction) : Json(nullptr);
  j["simulation"] = r.has_plan() ? to_json(r.simulation) : Json(nullptr);
  Json deterministic = {{"status", std::string(to_string(r.deterministic.status))},
                        {"message", r.deterministic.message},
                        {"cluster", to_json(r.deterministic.cluster)}};
  deterministic["cost_usd"] = r.deterministic.has_plan() ? Json(r.deterministic.prediction.cost_usd) : Json(nullptr);
  deterministic["training_time_s"] = r.deterministic.has_plan() ? Json(r.deterministic.prediction.training_time_s) : Json(nullptr);
  deterministic["probability_meets_deadline"] =
      r.deterministic_probability ? to_json(*r.deterministic_probability) : Json(nullptr);
  j["deterministic"] = deterministic;
  j["candidates"] = r.candidates;
  j["candidates_simulated"] = r.candidates_simulated;
  j["candidates_undecided"] = r.candidates_undecided;
  j["candidates_work_limited"] = r.candidates_work_limited;
  j["scenarios_simulated"] = r.scenarios_simulated;
  j["simulated"] = simulated;
  return j;
}

[[nodiscard]] inline Json to_json(const CheckpointPlan& p) {
  return {{"write_time_s", p.write_time_s},
          {"mean_time_to_interruption_s", number_or_null(p.mean_time_to_interruption_s)},
          {"young_interval_s", number_or_null(p.young_interval_s)},
          {"daly_interval_s", number_or_null(p.daly_interval_s)},
          {"overhead_fraction_at_daly", p.overhead_fraction_at_daly}};
}

}  // namespace spotdnn::io
