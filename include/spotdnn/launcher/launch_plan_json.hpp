#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/launch_plan_json.hpp Reads a plan or replan document (io/plan_document.hpp writes them),
/// or one step of a frontier document, into the LaunchPlan the launcher launches, strictly: only the keys
/// the launcher needs, each type-checked.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/document_kind.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/io/plan_document.hpp"
#include "spotdnn/launcher/launch_plan.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn::launcher {

/// The smallest document that reads back as `plan` (for tests and the fuzzer): kind, schema_version,
/// status "optimal", the launch keys, `cluster` (a plan) or `survivors` and `additions` (a replan), the
/// worker types in `plan.workers` order, and `zone` (null when the plan has none). launch_plan_from_json(launch_plan_document(p)) == p for
/// every p it accepts.
[[nodiscard]] inline io::Json launch_plan_document(const LaunchPlan& plan) {
  io::Json document = io::Json::object();
  document["kind"] = plan.kind;
  document["schema_version"] = kPlanDocumentSchemaVersion;
  document["status"] = std::string(to_string(Status::optimal));
  io::Json workers = io::Json::object();
  std::vector<io::detail::DocumentType> types;
  for (const WorkerGroup& g : plan.workers) {
    workers[g.type] = g.count;
    types.push_back({g.type, g.market, g.gpus});
  }
  if (plan.is_join()) {
    document["survivors"] = io::to_json(plan.survivors);
    document["additions"] = std::move(workers);
  } else {
    document["cluster"] = std::move(workers);
  }
  io::detail::add_launch_keys(document, plan.region, plan.workload_name, plan.parameter_server_type, plan.target_loss,
                          plan.deadline_s, types);
  document["zone"] = plan.zone.empty() ? io::Json(nullptr) : io::Json(plan.zone);
  return document;
}

namespace detail {

/// Reads {TYPE: N} at `key` in document order: each TYPE as AWS spells instance types, each N a whole
/// number from 1, at most kMaxClusterWorkers in total. Errors name the key path, e.g. plan.cluster["x"].
inline std::vector<std::pair<std::string, int>> read_type_counts(io::JsonObjectReader& r, std::string_view key) {
  const std::string path = r.key_path(key);
  const io::Json& value = r.required(key);
  const io::JsonObjectReader counts(value, path, r.function());
  std::vector<std::pair<std::string, int>> out;
  std::int64_t total = 0;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string at = path + "[" + spotdnn::detail::quoted(it.key()) + "]";
    require_instance_type(r.function(), at, it.key());
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
inline std::map<std::string, Market, std::less<>> read_markets(io::JsonObjectReader& r) {
  const std::string path = r.key_path("markets");
  const io::Json& value = r.required("markets");
  const io::JsonObjectReader markets(value, path, r.function());
  std::map<std::string, Market, std::less<>> out;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string at = path + "[" + spotdnn::detail::quoted(it.key()) + "]";
    const std::string text = markets.as_string(it.value(), at);
    if (text != to_string(Market::spot) && text != to_string(Market::on_demand)) {
      spotdnn::detail::fail(r.function(), at, io::JsonObjectReader::excerpt(it.value()), "expected \"spot\" or \"on-demand\"");
    }
    out.emplace(it.key(), *market_from_string(text));
  }
  return out;
}

/// Reads `gpus` ({TYPE: N}, N a whole number from 1): every entry is checked, launched or not.
inline std::map<std::string, int, std::less<>> read_gpus(io::JsonObjectReader& r) {
  const std::string path = r.key_path("gpus");
  const io::Json& value = r.required("gpus");
  const io::JsonObjectReader gpus(value, path, r.function());
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
/// anything without `kind` (not a plan document: e.g. a `predict` output), a serverless plan document
/// (saying to add --serverless: launcher/serverless_plan_json.hpp reads those), an unknown kind, a
/// schema_version other than 2, a status other than optimal or feasible (quoting the document's message),
/// a missing or mistyped key the launcher needs, a launched type without its market or GPUs, and a
/// parameter server that is not on-demand, and a `zone` that is neither null nor an Availability Zone name
/// (absent or null: the plan has no zone). A plan launches one worker group per cluster type in the
/// cluster's order; a replan launches its additions (in their order) and carries its survivors.
[[nodiscard]] inline LaunchPlan launch_plan_from_json(const io::Json& json, const std::string& path = "plan",
                                                                const std::string& function = "launch_plan_from_json") {
  constexpr std::string_view write_one = "write one with `spotdnn plan --format json`";
  if (!json.is_object()) {
    spotdnn::detail::fail(function, path, io::JsonObjectReader::excerpt(json),
                          "not a spotdnn plan document (no kind): " + std::string(write_one));
  }
  io::JsonObjectReader r(json, path, function);
  if (!r.has("kind")) {
    spotdnn::detail::fail(function, r.key_path("kind"), "missing", "not a spotdnn plan document (no kind): " + std::string(write_one));
  }
  LaunchPlan plan;
  plan.kind = r.string("kind");
  if (plan.kind == io::kServerlessPlanDocumentKind) {
    spotdnn::detail::fail(function, r.key_path("kind"), io::JsonObjectReader::excerpt(json.at("kind")),
                          "a serverless plan launches AWS Lambda functions, not EC2 instances: add --serverless "
                          "(spotdnn launch --serverless)");
  }
  if (plan.kind != kPlanDocumentKind && plan.kind != kReplanDocumentKind) {
    spotdnn::detail::fail(function, r.key_path("kind"), io::JsonObjectReader::excerpt(json.at("kind")),
                          "not a document spotdnn launches: expected \"spotdnn.plan\" (" + std::string(write_one) +
                              ") or \"spotdnn.replan\" (spotdnn replan --format json)");
  }
  {
    const std::string version_path = r.key_path("schema_version");
    const std::string reads = "this spotdnn reads schema_version " + std::to_string(kPlanDocumentSchemaVersion);
    const io::Json* version = r.optional("schema_version");
    if (version == nullptr) {
      spotdnn::detail::fail(function, version_path, "missing", reads + ": write the document again with this spotdnn");
    }
    if (!version->is_number_integer()) {
      spotdnn::detail::fail(function, version_path, io::JsonObjectReader::excerpt(*version),
                            "expected the whole number " + std::to_string(kPlanDocumentSchemaVersion) + ": " +
                                reads + "; write the document again with this spotdnn");
    }
    if (*version != kPlanDocumentSchemaVersion) {
      const bool newer = version->is_number_unsigned() ? version->get<std::uint64_t>() > std::uint64_t(kPlanDocumentSchemaVersion)
                                                       : version->get<std::int64_t>() > kPlanDocumentSchemaVersion;
      spotdnn::detail::fail(function, version_path, version->dump(),
                            reads + (newer ? ": the document was written by a newer spotdnn; launch it with that version"
                                           : ": write the document again with this spotdnn"));
    }
  }
  {
    const std::string status_text = r.string("status");
    const auto status = status_from_string(status_text);
    if (!status) {
      spotdnn::detail::fail(function, r.key_path("status"), io::JsonObjectReader::excerpt(json.at("status")),
                            "expected optimal, feasible, infeasible, invalid_input or target_met_at_start");
    }
    if (*status != Status::optimal && *status != Status::feasible) {
      std::string why = "only an optimal or feasible plan can be launched";
      if (const io::Json* message = r.optional("message"); message != nullptr && message->is_string()) {
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
    const io::Json& deadline = r.required("deadline_s");
    if (deadline.is_null()) {
      spotdnn::detail::fail(function, r.key_path("deadline_s"), "null",
                            "the plan has no deadline (a --budget plan without --deadline): plan with --deadline to launch it");
    }
    plan.deadline_s = r.positive_number("deadline_s");
  }
  {
    io::JsonObjectReader ps(r.required("parameter_server"), r.key_path("parameter_server"), function);
    plan.parameter_server_type = ps.string("type");
    require_instance_type(function, ps.key_path("type"), plan.parameter_server_type);
    const std::string market = ps.string("market");
    if (market != to_string(Market::on_demand)) {
      spotdnn::detail::fail(function, ps.key_path("market"), io::JsonObjectReader::excerpt(json.at("parameter_server").at("market")),
                            "the launcher always launches the parameter server on-demand (a revoked PS would lose the "
                            "training): write \"on-demand\"");
    }
  }
  if (const io::Json* zone = r.optional("zone"); zone != nullptr && !zone->is_null()) {
    plan.zone = r.string("zone");
    require_zone_name(function, r.key_path("zone"), plan.zone);
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
    WorkerGroup g;
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
  io::validate_at_path(function, path, "LaunchPlan::validate", [&] { plan.validate(); });
  return plan;
}

/// True when `json` is a frontier document (`spotdnn frontier --format json`): kind "spotdnn.frontier",
/// or, as frontier wrote it before it had a kind, an object without `kind` whose `steps` is an array and
/// that has min_deadline_s and max_deadline_s.
[[nodiscard]] inline bool is_frontier_document(const io::Json& json) {
  if (!json.is_object()) return false;
  const auto kind = json.find("kind");
  if (kind != json.end()) return kind->is_string() && kind->get<std::string>() == io::kFrontierDocumentKind;
  const auto steps = json.find("steps");
  return steps != json.end() && steps->is_array() && json.contains("min_deadline_s") && json.contains("max_deadline_s");
}

/// Reads what `spotdnn launch --plan` takes: a plan or replan document (launch_plan_from_json), or one
/// step of a frontier document. `step` numbers a frontier's steps from 1 by increasing deadline, as the
/// frontier table numbers them; that step's `plan` (itself a plan document) is read at
/// `path`.steps[N-1].plan. Refused, with one line: a frontier document without `step` (naming how many
/// steps it has), a step outside 1..number of steps (naming that range; a frontier without steps says
/// why it has none), a `step` with any other document, and a confidence frontier (its samples are not
/// plan documents: plan that deadline with `spotdnn plan --confidence`).
[[nodiscard]] inline LaunchPlan launch_plan_from_document(const io::Json& json, std::optional<std::int64_t> step,
                                                          const std::string& path = "plan",
                                                          const std::string& function = "launch_plan_from_document") {
  if (json.is_object() && json.contains("kind") && json["kind"] == "spotdnn.confidence_frontier") {
    spotdnn::detail::fail(function, path + ".kind", "\"spotdnn.confidence_frontier\"",
                          "a confidence frontier's samples are not plan documents: write the one to launch with "
                          "`spotdnn plan --confidence C --deadline D --format json`");
  }
  if (!is_frontier_document(json)) {
    if (step) {
      spotdnn::detail::fail(function, "step", std::to_string(*step),
                            "only a frontier document (spotdnn frontier --format json) has steps; launch this document "
                            "without --step");
    }
    return launch_plan_from_json(json, path, function);
  }
  io::JsonObjectReader r(json, path, function);
  if (r.has("kind")) {
    const io::Json* version = r.optional("schema_version");
    if (version == nullptr || !version->is_number_integer() || *version != kPlanDocumentSchemaVersion) {
      spotdnn::detail::fail(function, r.key_path("schema_version"),
                            version == nullptr ? std::string("missing") : io::JsonObjectReader::excerpt(*version),
                            "this spotdnn reads frontier documents of schema_version " +
                                std::to_string(kPlanDocumentSchemaVersion) + ": write the document again with this spotdnn");
    }
  }
  const io::Json& steps = json.at("steps");
  const std::size_t count = steps.size();
  const std::string range = count == 1 ? std::string("1 (it has one step)") : "1 to " + std::to_string(count);
  if (count == 0) {
    std::string why = "the frontier has no steps, so nothing to launch";
    if (const io::Json* message = r.optional("message"); message != nullptr && message->is_string()) {
      why += " (the document says: " + detail::shortened(message->get<std::string>(), 300) + ")";
    }
    spotdnn::detail::fail(function, step ? std::string("step") : r.key_path("steps"), step ? std::to_string(*step) : "[]", why);
  }
  if (!step) {
    spotdnn::detail::fail(function, r.key_path("steps"), std::to_string(count) + (count == 1 ? " step" : " steps"),
                          "a frontier document holds one plan per step: pick the one to launch with --step N, N from " +
                              range + " as the frontier table numbers them");
  }
  if (*step < 1 || std::uint64_t(*step) > count) {
    spotdnn::detail::fail(function, "step", std::to_string(*step), "the frontier has steps " + range);
  }
  const std::string step_path = r.key_path("steps") + "[" + std::to_string(*step - 1) + "]";
  const io::Json& entry = steps.at(std::size_t(*step - 1));
  if (!entry.is_object() || !entry.contains("plan")) {
    spotdnn::detail::fail(function, step_path + ".plan", "missing",
                          "every frontier step carries its plan document: write the frontier again with this spotdnn");
  }
  return launch_plan_from_json(entry.at("plan"), step_path + ".plan", function);
}

/// Reads a plan or replan document file for the launcher (io::read_json_file's size, depth and encoding
/// limits, then launch_plan_from_json); every error names the file and the key path.
[[nodiscard]] inline LaunchPlan read_launch_plan_file(const std::string& file) {
  return launch_plan_from_json(io::read_json_file(file), "plan", "read_launch_plan_file(" + file + ")");
}

/// Reads a plan, replan or frontier document file (launch_plan_from_document, `step` picking a frontier's
/// step); every error names the file and the key path.
[[nodiscard]] inline LaunchPlan read_launch_plan_file(const std::string& file, std::optional<std::int64_t> step) {
  return launch_plan_from_document(io::read_json_file(file), step, "plan", "read_launch_plan_file(" + file + ")");
}

}  // namespace spotdnn::launcher
