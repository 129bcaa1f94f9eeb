#pragma once
// SPDX-License-Identifier: MIT
/// @file io/plan_document.hpp Plan documents: what `spotdnn plan`, `frontier` and `replan` write with
/// `--format json`, and what `spotdnn launch` reads. A document is the command's JSON output (every key
/// it always had) with the keys the launcher needs, so that the document alone says what to launch:
///
///     {"kind": "spotdnn.plan", "schema_version": 2,
///      "status": "optimal", "message": "...", ... (the plan's figures),
///      "target_loss": 0.8, "deadline_s": 2400, "cluster": {"g3.8xlarge": 4, "p3.2xlarge": 2},
///      "region": "us-east-1", "workload_name": "resnet110-cifar100",
///      "markets": {"g3.8xlarge": "spot", "p3.2xlarge": "spot"},      // every cluster type
///      "gpus": {"g3.8xlarge": 2, "p3.2xlarge": 1},                   // every cluster type
///      "parameter_server": {"type": "m5.xlarge", "market": "on-demand"}}
///
/// A replan document has `"kind": "spotdnn.replan"`, `survivors` and `additions` ({TYPE: N}) instead of
/// a cluster to launch, and markets and gpus for every type of survivors and additions; the launcher
/// launches the additions only, joined to the running job.
///
/// The reader takes `kind`, `schema_version`, `status` (and `message` to quote when the status refuses
/// the plan), region, workload_name, target_loss, deadline_s, the counts, markets, gpus and
/// parameter_server{type, market}; it ignores every other key and type-checks the keys it reads strictly.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/io/plan_json.hpp"
#include "spotdnn/io/revocation_json.hpp"
#include "spotdnn/launcher/launch_plan.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/plan/frontier.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/revocation/chance_constrained.hpp"
#include "spotdnn/revocation/replan.hpp"
#include "spotdnn/status.hpp"

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
  document["schema_version"] = launcher::kPlanDocumentSchemaVersion;
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

/// The plan document of a plan (`spotdnn plan --format json`): kind "spotdnn.plan", schema_version 2,
/// every key of to_json(r), and the launch keys, with the catalog's region and parameter-server type and
/// the workload's name from `model`, the market each cluster type was priced in (after the plan
/// options' market overrides) and its GPUs. Infeasible plans get the same keys (empty markets and gpus).
[[nodiscard]] inline Json plan_document(const PlanResult& r, const PerformanceModel& model) {
  Json document = detail::with_document_header(launcher::kPlanDocumentKind, to_json(r));
  detail::add_launch_keys(document, model, r.target_loss, r.deadline_s, detail::priced_types(r.cluster, r.prediction, model));
  return document;
}

/// The plan document of a plan with a confidence level (`spotdnn plan --confidence P --format json`):
/// every key of to_json(r) and the launch keys; target_loss and deadline_s are the plan's SLO.
[[nodiscard]] inline Json plan_document(const ConfidencePlanResult& r, const PerformanceModel& model) {
  Json document = detail::with_document_header(launcher::kPlanDocumentKind, to_json(r));
  detail::add_launch_keys(document, model, r.deterministic.target_loss, r.deterministic.deadline_s,
                          detail::priced_types(r.cluster, r.prediction, model));
  return document;
}

/// The plan document of one frontier step: the step's prediction (to_json(step.plan)) and the launch
/// keys; its deadline_s is the step's to_deadline_s, the deadline the step's plan was found for (it is
/// the cheapest plan for every deadline from from_deadline_s to there).
[[nodiscard]] inline Json frontier_step_document(const FrontierStep& step, const PerformanceModel& model) {
  Json document = detail::with_document_header(launcher::kPlanDocumentKind, to_json(step.plan));
  detail::add_launch_keys(document, model, step.plan.target_loss, step.to_deadline_s,
                          detail::priced_types(step.plan.cluster, step.plan, model));
  return document;
}

/// The frontier object of `spotdnn frontier --format json`: to_json(f) with every step's `plan` a plan
/// document (frontier_step_document), so any step can be launched as it is.
[[nodiscard]] inline Json frontier_document(const Frontier& f, const PerformanceModel& model) {
  Json j = to_json(f);
  Json& steps = j["steps"];
  for (std::size_t i = 0; i < f.steps.size() && i < steps.size(); ++i) steps[i]["plan"] = frontier_step_document(f.steps[i], model);
  return j;
}

/// The replan document (`spotdnn replan --format json`): kind "spotdnn.replan", schema_version 2, every
/// key of to_json(r), the request's target_loss and deadline_s (s since training started), and markets
/// and gpus for every type of the survivors and the additions (the market is the plan options' override
/// for the type, else the catalog's).
[[nodiscard]] inline Json replan_document(const ReplanResult& r, const ReplanRequest& request, const ReplanOptions& options,
                                          const PerformanceModel& model) {
  Json document = detail::with_document_header(launcher::kReplanDocumentKind, to_json(r));
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
  return document;
}

/// The smallest document that reads back as `plan` (for tests and the fuzzer): kind, schema_version,
/// status "optimal", the launch keys, and `cluster` (a plan) or `survivors` and `additions` (a replan),
/// the worker types in `plan.workers` order. launch_plan_from_json(launch_plan_document(p)) == p for
/// every p it accepts.
[[nodiscard]] inline Json launch_plan_document(const launcher::LaunchPlan& plan) {
  Json document = Json::object();
  document["kind"] = plan.kind;
  document["schema_version"] = launcher::kPlanDocumentSchemaVersion;
  document["status"] = std::string(to_string(Status::optimal));
  Json workers = Json::object();
  std::vector<detail::DocumentType> types;
  for (const launcher::WorkerGroup& g : plan.workers) {
    workers[g.type] = g.count;
    types.push_back({g.type, g.market, g.gpus});
  }
  if (plan.is_join()) {
    document["survivors"] = to_json(plan.survivors);
    document["additions"] = std::move(workers);
  } else {
    document["cluster"] = std::move(workers);
  }
  detail::add_launch_keys(document, plan.region, plan.workload_name, plan.parameter_server_type, plan.target_loss,
                          plan.deadline_s, types);
  return document;
}

namespace detail {

/// Reads {TYPE: N} at `key` in document order: each TYPE as AWS spells instance types, each N a whole
/// number from 1, at most kMaxClusterWorkers in total. Errors name the key path, e.g. plan.cluster["x"].
inline std::vector<std::pair<std::string, int>> read_type_counts(JsonObjectReader& r, std::string_view key) {
  const std::string path = r.key_path(key);
  const Json& value = r.required(key);
  const JsonObjectReader counts(value, path, r.function());
  std::vector<std::pair<std::string, int>> out;
  std::int64_t total = 0;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string at = path + "[" + spotdnn::detail::quoted(it.key()) + "]";
    launcher::require_instance_type(r.function(), at, it.key());
    const int count = counts.as_integer(it.value(), at, 1, int(kMaxClusterWorkers));
    total += count;
    if (total > kMaxClusterWorkers) {
      spotdnn::detail::fail(r.function(), at, count,
                            "more than " + std::to_string(kMaxClusterWorkers) + " workers in " + std::string(key) + " in total");
    }
    out.emplace_back(it.key(), count);
  }
  return out;
}

/// Reads `markets` ({TYPE: "spot" | "on-demand"}): every entry is checked, launched or not.
inline std::map<std::string, Market, std::less<>> read_markets(JsonObjectReader& r) {
  const std::string path = r.key_path("markets");
  const Json& value = r.required("markets");
  const JsonObjectReader markets(value, path, r.function());
  std::map<std::string, Market, std::less<>> out;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string at = path + "[" + spotdnn::detail::quoted(it.key()) + "]";
    const std::string text = markets.as_string(it.value(), at);
    if (text != to_string(Market::spot) && text != to_string(Market::on_demand)) {
      spotdnn::detail::fail(r.function(), at, JsonObjectReader::excerpt(it.value()), "expected \"spot\" or \"on-demand\"");
    }
    out.emplace(it.key(), *market_from_string(text));
  }
  return out;
}

/// Reads `gpus` ({TYPE: N}, N a whole number from 1): every entry is checked, launched or not.
inline std::map<std::string, int, std::less<>> read_gpus(JsonObjectReader& r) {
  const std::string path = r.key_path("gpus");
  const Json& value = r.required("gpus");
  const JsonObjectReader gpus(value, path, r.function());
  std::map<std::string, int, std::less<>> out;
  for (auto it = value.begin(); it != value.end(); ++it) {
    out.emplace(it.key(), gpus.as_integer(it.value(), path + "[" + spotdnn::detail::quoted(it.key()) + "]", 1));
  }
  return out;
}

/// `text` cut to at most `max_bytes` bytes at a UTF-8 character boundary, with "..." when cut.
inline std::string shortened(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a character
  return text.substr(0, end) + "...";
}

}  // namespace detail

/// Reads a plan or replan document (see the file comment) into what the launcher launches, and validates
/// it (LaunchPlan::validate). Refused, with one line naming the key path under `path` and the value:
/// anything without `kind` (not a plan document: e.g. a `predict` output), an unknown kind, a
/// schema_version other than 2, a status other than optimal or feasible (quoting the document's message),
/// a missing or mistyped key the launcher needs, a launched type without its market or GPUs, and a
/// parameter server that is not on-demand. A plan launches one worker group per cluster type in the
/// cluster's order; a replan launches its additions (in their order) and carries its survivors.
[[nodiscard]] inline launcher::LaunchPlan launch_plan_from_json(const Json& json, const std::string& path = "plan",
                                                                const std::string& function = "launch_plan_from_json") {
  constexpr std::string_view write_one = "write one with `spotdnn plan --format json`";
  if (!json.is_object()) {
    spotdnn::detail::fail(function, path, JsonObjectReader::excerpt(json),
                          "not a spotdnn plan document (no kind): " + std::string(write_one));
  }
  JsonObjectReader r(json, path, function);
  if (!r.has("kind")) {
    spotdnn::detail::fail(function, r.key_path("kind"), "missing", "not a spotdnn plan document (no kind): " + std::string(write_one));
  }
  launcher::LaunchPlan plan;
  plan.kind = r.string("kind");
  if (plan.kind != launcher::kPlanDocumentKind && plan.kind != launcher::kReplanDocumentKind) {
    spotdnn::detail::fail(function, r.key_path("kind"), JsonObjectReader::excerpt(json.at("kind")),
                          "not a document spotdnn launches: expected \"spotdnn.plan\" (" + std::string(write_one) +
                              ") or \"spotdnn.replan\" (spotdnn replan --format json)");
  }
  {
    const std::string version_path = r.key_path("schema_version");
    const std::string reads = "this spotdnn reads schema_version " + std::to_string(launcher::kPlanDocumentSchemaVersion);
    const Json* version = r.optional("schema_version");
    if (version == nullptr) {
      spotdnn::detail::fail(function, version_path, "missing", reads + ": write the document again with this spotdnn");
    }
    if (!version->is_number_integer()) {
      spotdnn::detail::fail(function, version_path, JsonObjectReader::excerpt(*version),
                            "expected the whole number " + std::to_string(launcher::kPlanDocumentSchemaVersion) + ": " +
                                reads + "; write the document again with this spotdnn");
    }
    if (*version != launcher::kPlanDocumentSchemaVersion) {
      const bool newer = version->is_number_unsigned() ? version->get<std::uint64_t>() > std::uint64_t(launcher::kPlanDocumentSchemaVersion)
                                                       : version->get<std::int64_t>() > launcher::kPlanDocumentSchemaVersion;
      spotdnn::detail::fail(function, version_path, version->dump(),
                            reads + (newer ? ": the document was written by a newer spotdnn; launch it with that version"
                                           : ": write the document again with this spotdnn"));
    }
  }
  {
    const std::string status_text = r.string("status");
    const auto status = status_from_string(status_text);
    if (!status) {
      spotdnn::detail::fail(function, r.key_path("status"), JsonObjectReader::excerpt(json.at("status")),
                            "expected optimal, feasible, infeasible or invalid_input");
    }
    if (*status != Status::optimal && *status != Status::feasible) {
      std::string why = "only an optimal or feasible plan can be launched";
      if (const Json* message = r.optional("message"); message != nullptr && message->is_string()) {
        why += " (the document says: " + detail::shortened(message->get<std::string>(), 300) + ")";
      }
      spotdnn::detail::fail(function, r.key_path("status"), spotdnn::detail::quoted(status_text),
                            why + "; plan again with a later deadline, a higher target loss or larger quotas");
    }
  }
  plan.region = r.string("region");
  plan.workload_name = r.string("workload_name");
  plan.target_loss = r.positive_number("target_loss");
  {
    const Json& deadline = r.required("deadline_s");
    if (deadline.is_null()) {
      spotdnn::detail::fail(function, r.key_path("deadline_s"), "null",
                            "the plan has no deadline (a --budget plan without --deadline): plan with --deadline to launch it");
    }
    plan.deadline_s = r.positive_number("deadline_s");
  }
  {
    JsonObjectReader ps(r.required("parameter_server"), r.key_path("parameter_server"), function);
    plan.parameter_server_type = ps.string("type");
    launcher::require_instance_type(function, ps.key_path("type"), plan.parameter_server_type);
    const std::string market = ps.string("market");
    if (market != to_string(Market::on_demand)) {
      spotdnn::detail::fail(function, ps.key_path("market"), JsonObjectReader::excerpt(json.at("parameter_server").at("market")),
                            "the launcher always launches the parameter server on-demand (a revoked PS would lose the "
                            "training): write \"on-demand\"");
    }
  }
  const bool join = plan.is_join();
  const std::string_view workers_key = join ? "additions" : "cluster";
  const auto counts = detail::read_type_counts(r, workers_key);
  if (join) {
    for (const auto& [type, count] : detail::read_type_counts(r, "survivors")) plan.survivors.set(type, count);
  }
  const auto markets = detail::read_markets(r);
  const auto gpus = detail::read_gpus(r);
  const std::string kinds = join ? "every added type" : "every cluster type";
  const std::string rewrite = join ? "write the document with `spotdnn replan --format json`"
                                   : "write the document with `spotdnn plan --format json`";
  for (const auto& [type, count] : counts) {
    launcher::WorkerGroup g;
    g.type = type;
    g.count = count;
    const auto market = markets.find(type);
    if (market == markets.end()) {
      spotdnn::detail::fail(function, r.key_path("markets") + "[" + spotdnn::detail::quoted(type) + "]", "missing",
                            kinds + " needs its market (\"spot\" or \"on-demand\"): " + rewrite);
    }
    g.market = market->second;
    const auto gpu = gpus.find(type);
    if (gpu == gpus.end()) {
      spotdnn::detail::fail(function, r.key_path("gpus") + "[" + spotdnn::detail::quoted(type) + "]", "missing",
                            kinds + " needs its GPUs per instance (a whole number from 1): " + rewrite);
    }
    g.gpus = gpu->second;
    plan.workers.push_back(std::move(g));
  }
  validate_at_path(function, path, "LaunchPlan::validate", [&] { plan.validate(); });
  return plan;
}

/// Reads a plan or replan document file for the launcher (read_json_file's size, depth and encoding
/// limits, then launch_plan_from_json); every error names the file and the key path.
[[nodiscard]] inline launcher::LaunchPlan read_launch_plan_file(const std::string& file) {
  return launch_plan_from_json(read_json_file(file), "plan", "read_launch_plan_file(" + file + ")");
}

}  // namespace spotdnn::io
