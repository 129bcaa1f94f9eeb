#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/zone_option.hpp `--zone AZ` (plan, frontier, replan, simulate: price one Availability Zone) and
/// the lines plans and replans print about their zone and their estimated profiles.

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/availability_zone.hpp>
#include <spotdnn/placement_score.hpp>
#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/plan/plan_options.hpp>
#include <spotdnn/plan/plan_result.hpp>
#include <spotdnn/plan/slo.hpp>

#include "command.hpp"

namespace spotdnn::cli {

/// Adds `--zone AZ` to `app`, with `what` saying what pinning does for this command.
inline CLI::Option* add_zone_option(CLI::App& app, std::string& zone, const std::string& what) {
  return app.add_option("--zone", zone,
                        what + " (AZ names differ between AWS accounts: a fetched catalog belongs to the account that "
                               "fetched it)");
}

/// Throws usage_error (exit 2) when `--zone` was given an empty name (which would otherwise mean "no zone").
inline void require_zone_not_empty(const CLI::App& app, const std::string& zone) {
  if (app.count("--zone") > 0 && zone.empty()) throw usage_error("--zone = \"\": give an Availability Zone name, e.g. us-east-1a");
}

/// The model as seen from `zone` (the model itself when `zone` is empty). Throws usage_error (exit 2)
/// naming the known zones when the catalog does not price `zone`.
[[nodiscard]] inline PerformanceModel model_in_zone(const PerformanceModel& model, const std::string& zone) {
  if (zone.empty()) return model;
  const std::vector<std::string> zones = catalog_zones(model.catalog());
  bool known = false;
  for (const std::string& z : zones) known = known || z == zone;
  if (!known) {
    throw usage_error("--zone = " + detail::quoted(zone) + ": " +
                      (zones.empty() ? std::string("the catalog has no per-zone prices (zone_prices_usd_per_hour), so there is "
                                                   "no zone to pin; leave --zone out")
                                     : "the catalog prices no such Availability Zone (known: " + catalog_zone_names(model.catalog()) +
                                           "; AZ names differ between AWS accounts)"));
  }
  return PerformanceModel(model.workload(), catalog_in_zone(model.catalog(), zone));
}

/// The warning of a command that prices a catalog with zone prices without --zone: each type at its
/// lowest price over the zones, which may be in different zones. Empty when there is nothing to say.
[[nodiscard]] inline std::string unpinned_zone_warning(const Catalog& catalog, const std::string& zone, const std::string& advice) {
  if (!zone.empty()) return {};
  const std::vector<std::string> zones = catalog_zones(catalog);
  if (zones.empty()) return {};
  return "the catalog prices " + std::to_string(zones.size()) + " Availability Zones (" + catalog_zone_names(catalog) +
         ") and no --zone was given: each type is priced at its lowest price over them, which may be in different zones; " +
         advice;
}

/// The infeasible plan of a zone where a type `options` keeps (--keep) is not sold as spot (its quota is 0
/// in `zone_catalog` but not in `catalog`), or nothing: the zone search then passes over that zone rather
/// than stopping at the planner's refusal of a kept count above the quota.
[[nodiscard]] inline std::optional<PlanResult> kept_type_missing(const Catalog& catalog, const Catalog& zone_catalog,
                                                                 const std::string& zone, const Slo& slo, const PlanOptions& options) {
  for (const auto& [type, count] : options.minimum_counts) {
    const auto k = zone_catalog.index_of(type);
    if (!k || count <= zone_catalog.instance_types[*k].quota || catalog.instance_types[*k].quota < count) continue;
    PlanResult r;
    r.status = Status::infeasible;
    r.reason = InfeasibleReason::no_instances;
    r.target_loss = slo.target_loss;
    r.deadline_s = slo.deadline_s;
    r.budget_usd = options.budget_usd;
    r.objective = options.budget_usd ? PlanObjective::min_time : PlanObjective::min_cost;
    r.parameter_server_charged = options.charge_parameter_server;
    r.message = "--keep " + type + "=" + std::to_string(count) + ": the catalog gives " + type + " no spot price in zone " + zone +
                ", so it cannot be bought there";
    return r;
  }
  return std::nullopt;
}

/// How far an infeasible plan is from a plan: its fastest time minus the deadline (s), or its cheapest
/// cost minus the budget (USD); +inf when neither applies.
[[nodiscard]] inline double plan_shortfall(const PlanResult& r) {
  if (r.fastest && std::isfinite(r.deadline_s)) return r.fastest->training_time_s - r.deadline_s;
  if (r.cheapest && r.budget_usd) return r.cheapest->cost_usd - *r.budget_usd;
  return std::numeric_limits<double>::infinity();
}

/// A plan as the zone search compares it: the cost (or, for a budget plan, the training time) when it
/// has a plan, else its shortfall.
[[nodiscard]] inline ZoneCandidate<PlanResult> plan_candidate(PlanResult r) {
  ZoneCandidate<PlanResult> c;
  c.feasible = r.has_plan();
  if (c.feasible) {
    c.cost_usd = r.prediction.cost_usd;
    if (r.objective == PlanObjective::min_time) c.objective = r.prediction.training_time_s;
  } else {
    c.shortfall = plan_shortfall(r);
  }
  c.result = std::move(r);
  return c;
}

/// Records in `unproven` (the first only) the zone (or region) of a plan whose exact search stopped at its
/// step limit, with its message; returns the plan as plan_candidate does.
[[nodiscard]] inline ZoneCandidate<PlanResult> noted_plan_candidate(PlanResult r, const std::string& where, std::string& unproven) {
  if (r.stats.stopped && unproven.empty()) unproven = where + ": " + r.message;
  return plan_candidate(std::move(r));
}

/// After a choice (RegionChoice<PlanResult>) over several zones (regions) of which one's search stopped
/// (`unproven` not empty): the plan kept is not proven the best of all (optimal -> feasible), nor
/// "infeasible everywhere" proven (-> undecided; the notes say "no plan proven in any zone"); the message says
/// where the search stopped.
template <class Choice>
void mark_unproven_choice(Choice& choice, const std::string& unproven) {
  if (unproven.empty() || choice.tried.size() <= 1) return;
  PlanResult& kept = choice.result;
  if (kept.status == Status::optimal) kept.status = Status::feasible;
  if (kept.status == Status::infeasible) kept.status = Status::undecided;
  kept.message += "; not proven across the zones: in " + unproven;
  for (std::string* note : {&choice.note, &choice.zone_note}) {
    if (note->rfind("infeasible in every ", 0) == 0) note->replace(0, 20, "no plan proven in any ");
  }
}

/// "  zone: NOTE" for a table, when the catalog has zone prices.
template <class Result>
void print_zone_line(std::ostream& out, const ZoneChoice<Result>& choice) {
  if (!choice.zone.empty()) out << "  zone: " << choice.note << "\n\n";
}

/// "  estimated: TYPE from FROM (GPU peak), not measured: fit throughput replaces it" per estimated type of
/// `cluster` (after a blank line), nothing when every profile was measured.
inline void print_estimated_lines(std::ostream& out, const Cluster& cluster, const Workload& workload) {
  const std::map<std::string, std::string> estimated = io::estimated_profiles(cluster, workload);
  if (estimated.empty()) return;
  out << '\n';
  for (const auto& [type, from] : estimated) {
    out << "  estimated: " << type << " from " << from << " (GPU peak), not measured: fit throughput replaces it\n";
  }
}

/// "p3.2xlarge=9;g4dn.xlarge=" (empty: unknown): the cluster types' Spot Placement Scores in `zone`, for CSV.
[[nodiscard]] inline std::string placement_scores_csv_text(const Catalog& catalog, const std::string& zone, const Cluster& cluster) {
  std::string text;
  for (const auto& entry : cluster.counts()) {
    const std::optional<int> score = placement_score(catalog, entry.first, zone);
    text += (text.empty() ? "" : ";") + entry.first + "=" + (score ? std::to_string(*score) : std::string());
  }
  return text;
}

/// "  placement score: p3.2xlarge 9, g4dn.xlarge unknown (AWS Spot Placement Scores, 1 to 10, in us-east-1a)"
/// for the types of `cluster` (after a blank line); nothing when the catalog holds no scores.
inline void print_placement_score_line(std::ostream& out, const Catalog& catalog, const std::string& zone, const Cluster& cluster) {
  if (catalog.placement_scores.empty() || cluster.empty()) return;
  std::string scores;
  for (const auto& entry : cluster.counts()) {
    const std::optional<int> score = placement_score(catalog, entry.first, zone);
    scores += (scores.empty() ? "" : ", ") + entry.first + " " + (score ? std::to_string(*score) : std::string("unknown"));
  }
  out << "\n  placement score: " << scores << " (AWS Spot Placement Scores, 1 to 10, "
      << (zone.empty() ? std::string("for the region") : "in " + zone) << ")\n";
}

/// Applies `--min-placement-score S` to a loaded model: the pools scoring below S are left out
/// (placement_score.hpp), each named in one warning. Throws usage_error when the catalog holds no scores
/// (the option would leave nothing out without saying so).
[[nodiscard]] inline PerformanceModel with_min_placement_score(const PerformanceModel& model, const std::optional<int>& min_score,
                                                               const std::function<void(const std::string&)>& warn) {
  if (!min_score) return model;
  if (model.catalog().placement_scores.empty()) {
    throw usage_error("--min-placement-score " + std::to_string(*min_score) +
                      ": the catalog holds no Spot Placement Scores (import them with catalog import --placement-scores)");
  }
  std::vector<std::string> left_out;
  Catalog kept = catalog_with_min_placement_score(model.catalog(), *min_score, &left_out);
  if (!left_out.empty()) {
    std::string pools;
    for (const std::string& p : left_out) pools += (pools.empty() ? "" : ", ") + p;
    warn("--min-placement-score " + std::to_string(*min_score) + " leaves out " + pools);
  }
  return PerformanceModel(model.workload(), std::move(kept));
}

}  // namespace spotdnn::cli
