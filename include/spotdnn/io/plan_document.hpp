#pragma once
// SPDX-License-Identifier: MIT
/// @file io/plan_document.hpp Plan documents: what `spotdnn plan`, `frontier` and `replan` write with
/// `--format json`, and what `spotdnn launch` reads
/// (launcher/launch_plan_json.hpp). A document is the command's JSON output (every key
/// it always had) with the keys the launcher needs, so that the document alone says what to launch:
///
///     {"kind": "spotdnn.plan", "schema_version": 2,
///      "status": "optimal", "message": "...", ... (the plan's figures),
///      "target_loss": 0.8, "deadline_s": 2400, "cluster": {"g3.8xlarge": 4, "p3.2xlarge": 2},
///      "region": "us-east-1", "workload_name": "resnet110-cifar100",
///      "markets": {"g3.8xlarge": "spot", "p3.2xlarge": "spot"},      // every cluster type
///      "gpus": {"g3.8xlarge": 2, "p3.2xlarge": 1},                   // every cluster type
///      "parameter_server": {"type": "m5.xlarge", "market": "on-demand"},
///      "zone": "us-east-1b",                                         // null: the catalog has no zone prices
///      "estimated_profiles": {"g5.xlarge": "p3.2xlarge"},            // {} when every profile was measured
///      "placement_scores": {"g3.8xlarge": 7, "p3.2xlarge": null}}    // only with scores in the catalog
///
/// `zone` is the Availability Zone the plan was priced in (all of a run lives in one zone: the launcher
/// launches it in that zone's subnet); AZ names differ between AWS accounts. `estimated_profiles` names
/// every cluster type whose workload profile was not measured but estimated from another type's (by GPU
/// peak throughput), with that type. `placement_scores` gives each cluster type's Spot Placement Score in
/// that zone (placement_score.hpp; null: none known), when the catalog holds any.
///
/// A frontier document (`frontier --format json`) has `"kind": "spotdnn.frontier"` and numbered steps,
/// each with a plan document of its own; `launch --plan F --step N` launches step N.
///
/// A replan document has `"kind": "spotdnn.replan"`, `survivors` and `additions` ({TYPE: N}) instead of
/// a cluster to launch, and markets and gpus for every type of survivors and additions; the launcher
/// launches the additions only, joined to the running job.
///
/// The reader takes `kind`, `schema_version`, `status` (and `message` to quote when the status refuses
/// the plan), region, workload_name, target_loss, deadline_s, the counts, markets, gpus,
/// parameter_server{type, market} and zone (absent or null: no zone); it ignores every other key and
/// type-checks the keys it reads strictly.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/document_kind.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/io/plan_json.hpp"
#include "spotdnn/io/revocation_json.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/placement_score.hpp"
#include "spotdnn/plan/frontier.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/revocation/chance_constrained.hpp"
#include "spotdnn/revocation/replan.hpp"
#include "spotdnn/status.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn::io {

namespace detail {

/// One type the document names: its market and GPUs per instance.
struct DocumentType {
  std::string type;
  Market market = Market::spot;
  int gpus = 1;
};

/// `body`'s keys after `kind` and `schema_version` (which come first, so a reader sees them at once).
inline Json with_document_header(std::string_view kind, const Json& body) {
  Json document = Json::object();
  document["kind"] = std::string(kind);
  document["schema_version"] = kPlanDocumentSchemaVersion;
  for (auto it = body.begin(); it != body.end(); ++it) document[it.key()] = it.value();
  return document;
}

/// Adds (or overwrites in place) region, workload_name, target_loss, deadline_s, markets, gpus and
/// parameter_server. `deadline_s` is null when not finite (a budget-mode plan has no deadline).
inline void add_launch_keys(Json& document, std::string_view region, std::string_view workload_name,
                            std::string_view parameter_server_type, double target_loss, double deadline_s,
                            const std::vector<DocumentType>& types) {
  document["region"] = std::string(region);
  document["workload_name"] = std::string(workload_name);
  document["target_loss"] = target_loss;
  document["deadline_s"] = number_or_null(deadline_s);
  Json markets = Json::object();
  Json gpus = Json::object();
  for (const DocumentType& t : types) {
    markets[t.type] = std::string(to_string(t.market));
    gpus[t.type] = t.gpus;
  }
  document["markets"] = std::move(markets);
  document["gpus"] = std::move(gpus);
  document["parameter_server"] = {{"type", std::string(parameter_server_type)},
                                  {"market", std::string(to_string(Market::on_demand))}};
}

/// The launch keys of `model` (region, workload name, PS type) added to `document`.
inline void add_launch_keys(Json& document, const PerformanceModel& model, double target_loss, double deadline_s,
                            const std::vector<DocumentType>& types) {
  add_launch_keys(document, model.catalog().region, model.workload().name, model.catalog().parameter_server.type,
                  target_loss, deadline_s, types);
}

/// Every type of `cluster` (in its order) with the market `prediction` priced it in and its GPUs; a type
/// the prediction does not list (it always lists them) falls back to the catalog.
inline std::vector<DocumentType> priced_types(const Cluster& cluster, const Prediction& prediction,
                                              const PerformanceModel& model) {
  std::vector<DocumentType> types;
  for (const auto& entry : cluster.counts()) {
    const std::string& name = entry.first;
    DocumentType t{name, Market::spot, 1};
    bool found = false;
    for (const WorkerTypeBreakdown& b : prediction.per_type) {
      if (b.type != name) continue;
      t.market = b.market;
      t.gpus = b.gpus;
      found = true;
      break;
    }
    if (!found) {
      const auto k = model.catalog().index_of(name);
      if (!k) continue;  // not in the catalog: the document lacks it and the reader refuses it by name
      t.market = model.catalog().instance_types[*k].market;
      t.gpus = model.catalog().instance_types[*k].gpus;
    }
    types.push_back(std::move(t));
  }
  return types;
}

}  // namespace detail

/// Every type of `cluster` whose profile in `workload` is estimated rather than measured, with the type
/// it was estimated from (TypeProfile::estimated_from), in type-name order.
[[nodiscard]] inline std::map<std::string, std::string> estimated_profiles(const Cluster& cluster, const Workload& workload) {
  std::map<std::string, std::string> estimated;
  for (const auto& entry : cluster.counts()) {
    const auto profile = workload.profiles.find(entry.first);
    if (profile != workload.profiles.end() && !profile->second.estimated_from.empty()) {
      estimated.emplace(entry.first, profile->second.estimated_from);
    }
  }
  return estimated;
}

namespace detail {

/// Adds `zone` (null when empty) and `estimated_profiles` for the types of `cluster` under `workload`.
inline void add_zone_and_estimates(Json& document, std::string_view zone, const Cluster& cluster, const Workload& workload) {
  document["zone"] = zone.empty() ? Json(nullptr) : Json(std::string(zone));
  Json estimated = Json::object();
  for (const auto& [type, from] : estimated_profiles(cluster, workload)) estimated[type] = from;
  document["estimated_profiles"] = std::move(estimated);
}

/// `placement_scores`: {TYPE: score or null} for the cluster's types in `zone` (placement_score.hpp), only
/// when the catalog holds Spot Placement Scores.
inline void add_placement_scores(Json& document, const Catalog& catalog, std::string_view zone, const Cluster& cluster) {
  if (catalog.placement_scores.empty()) return;
  Json scores = Json::object();
  for (const auto& entry : cluster.counts()) {
    const std::optional<int> score = placement_score(catalog, entry.first, zone);
    scores[entry.first] = score ? Json(*score) : Json(nullptr);
  }
  document["placement_scores"] = std::move(scores);
}

}  // namespace detail

/// The plan document of a plan (`spotdnn plan --format json`): kind "spotdnn.plan", schema_version 2,
/// every key of to_json(r), and the launch keys, with the catalog's region and parameter-server type and
/// the workload's name from `model`, the market each cluster type was priced in (after the plan
/// options' market overrides) and its GPUs, the Availability Zone `zone` it was priced in (empty: none,
/// written null) and the cluster's estimated profiles. Infeasible plans get the same keys (empty markets
/// and gpus).
[[nodiscard]] inline Json plan_document(const PlanResult& r, const PerformanceModel& model, std::string_view zone = {}) {
  Json document = detail::with_document_header(kPlanDocumentKind, to_json(r));
  detail::add_launch_keys(document, model, r.target_loss, r.deadline_s, detail::priced_types(r.cluster, r.prediction, model));
  detail::add_zone_and_estimates(document, zone, r.cluster, model.workload());
  detail::add_placement_scores(document, model.catalog(), zone, r.cluster);
  return document;
}

/// The plan document of a plan with a confidence level (`spotdnn plan --confidence P --format json`):
/// every key of to_json(r), the launch keys, `zone` and `estimated_profiles`; target_loss and deadline_s
/// are the plan's SLO.
[[nodiscard]] inline Json plan_document(const ConfidencePlanResult& r, const PerformanceModel& model, std::string_view zone = {}) {
  Json document = detail::with_document_header(kPlanDocumentKind, to_json(r));
  detail::add_launch_keys(document, model, r.deterministic.target_loss, r.deterministic.deadline_s,
                          detail::priced_types(r.cluster, r.prediction, model));
  detail::add_zone_and_estimates(document, zone, r.cluster, model.workload());
  detail::add_placement_scores(document, model.catalog(), zone, r.cluster);
  return document;
}

/// The plan document of one frontier step: the step's prediction (to_json(step.plan)), the launch keys,
/// `zone` and `estimated_profiles` as for a plan; its deadline_s is the step's to_deadline_s, the deadline
/// the step's plan was found for (it is the cheapest plan for every deadline from from_deadline_s to there).
[[nodiscard]] inline Json frontier_step_document(const FrontierStep& step, const PerformanceModel& model, std::string_view zone = {}) {
  Json document = detail::with_document_header(kPlanDocumentKind, to_json(step.plan));
  detail::add_launch_keys(document, model, step.plan.target_loss, step.to_deadline_s,
                          detail::priced_types(step.plan.cluster, step.plan, model));
  detail::add_zone_and_estimates(document, zone, step.plan.cluster, model.workload());
  detail::add_placement_scores(document, model.catalog(), zone, step.plan.cluster);
  return document;
}

/// The `kind` of a frontier document (`spotdnn frontier --format json`): one plan document per step.
inline constexpr std::string_view kFrontierDocumentKind = "spotdnn.frontier";

/// The frontier document of `spotdnn frontier --format json`: kind "spotdnn.frontier", schema_version 2
/// (that of the plan documents it holds), then to_json(f) with every step numbered (`step`, from 1 by
/// increasing deadline, as the frontier table numbers them) and its `plan` a plan document
/// (frontier_step_document), so that any step can be launched (`spotdnn launch --plan F --step N`), and
/// `zone` (null: none).
[[nodiscard]] inline Json frontier_document(const Frontier& f, const PerformanceModel& model, std::string_view zone = {}) {
  Json j = detail::with_document_header(kFrontierDocumentKind, to_json(f));
  Json& steps = j["steps"];
  for (std::size_t i = 0; i < f.steps.size() && i < steps.size(); ++i) {
    Json numbered = Json::object();
    numbered["step"] = i + 1;
    for (auto it = steps[i].begin(); it != steps[i].end(); ++it) numbered[it.key()] = it.value();
    numbered["plan"] = frontier_step_document(f.steps[i], model, zone);
    steps[i] = std::move(numbered);
  }
  j["zone"] = zone.empty() ? Json(nullptr) : Json(std::string(zone));
  return j;
}

/// The replan document (`spotdnn replan --format json`): kind "spotdnn.replan", schema_version 2, every
/// key of to_json(r), the request's target_loss and deadline_s (s since training started), and markets
/// and gpus for every type of the survivors and the additions (the market is the plan options' override
/// for the type, else the catalog's), `zone` (the running job's Availability Zone, where the additions
/// go; null: none) and `estimated_profiles` of the cluster that finishes the job (survivors + additions).
[[nodiscard]] inline Json replan_document(const ReplanResult& r, const ReplanRequest& request, const ReplanOptions& options,
                                          const PerformanceModel& model, std::string_view zone = {}) {
  Json document = detail::with_document_header(kReplanDocumentKind, to_json(r));
  std::set<std::string> names;  // survivors ∪ additions, in type-name order
  for (const auto& entry : r.survivors.counts()) names.insert(entry.first);
  for (const auto& entry : r.additions.counts()) names.insert(entry.first);
  std::vector<detail::DocumentType> types;
  for (const std::string& name : names) {
    const auto k = model.catalog().index_of(name);
    if (!k) continue;  // not in the catalog: the document lacks it and the reader refuses it by name
    const InstanceType& t = model.catalog().instance_types[*k];
    const auto override_market = options.plan.markets.find(name);
    types.push_back({name, override_market != options.plan.markets.end() ? override_market->second : t.market, t.gpus});
  }
  detail::add_launch_keys(document, model, request.target_loss, request.deadline_s, types);
  Cluster all = r.survivors;
  for (const auto& [type, count] : r.additions.counts()) all.set(type, all.count(type) + count);
  detail::add_zone_and_estimates(document, zone, all, model.workload());
  return document;
}

}  // namespace spotdnn::io
