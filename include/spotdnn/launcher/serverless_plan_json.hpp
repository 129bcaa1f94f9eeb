#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/serverless_plan_json.hpp Reads a serverless plan document (`spotdnn serverless plan
/// --format json`) into the ServerlessLaunchPlan the serverless launcher launches, strictly: only the keys
/// it needs, each type-checked; other keys (algorithm, lambda_cost_usd, extrapolated, ...) are ignored.
///
/// Read: kind ("spotdnn.serverless_plan"), schema_version (2), status (optimal or feasible; otherwise
/// refused quoting the document's message), profile_name, epochs, deadline_s, workers (1 to 1024),
/// memory_mb (128 to 10240), aggregators (1 to workers), batch, non_aggregator_batch, iterations,
/// iteration_time_s (at most 900), training_time_s and cost_usd. A spot plan or replan document is refused
/// with a message saying to launch it without --serverless.

#include <cstdint>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/document_kind.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/launcher/serverless_launch_plan.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn::launcher {

/// The smallest document that reads back as `plan` (for tests and the fuzzer): kind, schema_version,
/// status "optimal" and the keys serverless_launch_plan_from_json reads.
[[nodiscard]] inline io::Json serverless_launch_plan_document(const ServerlessLaunchPlan& plan) {
  io::Json document = io::Json::object();
  document["kind"] = std::string(kServerlessPlanDocumentKind);
  document["schema_version"] = io::kPlanDocumentSchemaVersion;
  document["status"] = std::string(to_string(Status::optimal));
  document["profile_name"] = plan.profile_name;
  document["epochs"] = plan.epochs;
  document["deadline_s"] = plan.deadline_s;
  document["workers"] = plan.workers;
  document["memory_mb"] = plan.memory_mb;
  document["aggregators"] = plan.aggregators;
  document["batch"] = plan.batch;
  document["non_aggregator_batch"] = plan.non_aggregator_batch;
  document["iterations"] = plan.iterations;
  document["iteration_time_s"] = plan.iteration_time_s;
  document["training_time_s"] = plan.training_time_s;
  document["cost_usd"] = plan.cost_usd;
  return document;
}

namespace detail {

/// `text` cut to at most `max_bytes` bytes at a UTF-8 character boundary, with "..." when cut.
inline std::string serverless_message_excerpt(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

}  // namespace detail

/// Reads a serverless plan document (see the file comment) and validates it
/// (ServerlessLaunchPlan::validate). Errors throw spotdnn::invalid_argument with one line naming the key
/// path under `path` and the value.
[[nodiscard]] inline ServerlessLaunchPlan serverless_launch_plan_from_json(const io::Json& json, const std::string& path = "plan",
                                                                           const std::string& function = "serverless_launch_plan_from_json") {
  constexpr std::string_view write_one = "write one with `spotdnn serverless plan --format json`";
  if (!json.is_object()) {
    spotdnn::detail::fail(function, path, io::JsonObjectReader::excerpt(json),
                          "not a spotdnn serverless plan document (no kind): " + std::string(write_one));
  }
  io::JsonObjectReader r(json, path, function);
  if (!r.has("kind")) {
    spotdnn::detail::fail(function, r.key_path("kind"), "missing",
                          "not a spotdnn serverless plan document (no kind): " + std::string(write_one));
  }
  const std::string kind = r.string("kind");
  if (kind == io::kPlanDocumentKind || kind == io::kReplanDocumentKind) {
    spotdnn::detail::fail(function, r.key_path("kind"), spotdnn::detail::quoted(kind),
                          "a spot plan document launches EC2 instances: drop --serverless");
  }
  if (kind != kServerlessPlanDocumentKind) {
    spotdnn::detail::fail(function, r.key_path("kind"), io::JsonObjectReader::excerpt(json.at("kind")),
                          "not a document spotdnn launches on Lambda: expected \"spotdnn.serverless_plan\" (" + std::string(write_one) + ")");
  }
  {
    const std::string version_path = r.key_path("schema_version");
    const std::string reads = "this spotdnn reads schema_version " + std::to_string(io::kPlanDocumentSchemaVersion);
    const io::Json* version = r.optional("schema_version");
    if (version == nullptr) spotdnn::detail::fail(function, version_path, "missing", reads + ": write the document again with this spotdnn");
    if (!version->is_number_integer()) {
      spotdnn::detail::fail(function, version_path, io::JsonObjectReader::excerpt(*version),
                            "expected the whole number " + std::to_string(io::kPlanDocumentSchemaVersion) + ": " + reads);
    }
    if (*version != io::kPlanDocumentSchemaVersion) {
      const bool newer = version->is_number_unsigned() ? version->get<std::uint64_t>() > std::uint64_t(io::kPlanDocumentSchemaVersion)
                                                       : version->get<std::int64_t>() > io::kPlanDocumentSchemaVersion;
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
                            "expected optimal, feasible, infeasible or invalid_input");
    }
    if (*status != Status::optimal && *status != Status::feasible) {
      std::string why = "only an optimal or feasible plan can be launched";
      if (const io::Json* message = r.optional("message"); message != nullptr && message->is_string()) {
        why += " (the document says: " + detail::serverless_message_excerpt(message->get<std::string>(), 300) + ")";
      }
      spotdnn::detail::fail(function, r.key_path("status"), spotdnn::detail::quoted(status_text),
                            why + "; plan again with a later deadline, fewer epochs or more memory");
    }
  }
  ServerlessLaunchPlan plan;
  plan.profile_name = r.string("profile_name");
  plan.epochs = r.positive_number("epochs");
  plan.deadline_s = r.positive_number("deadline_s");
  plan.workers = r.integer("workers", 1, kMaxServerlessFunctions);
  plan.memory_mb = r.integer("memory_mb", kLambdaMinMemorySizeMb, kLambdaMaxMemorySizeMb);
  plan.aggregators = r.integer("aggregators", 1, plan.workers);
  plan.batch = r.integer("batch", 1);
  plan.non_aggregator_batch = r.integer("non_aggregator_batch", 1);
  plan.iterations = r.integer("iterations", 1);
  plan.iteration_time_s = r.positive_number("iteration_time_s");
  plan.training_time_s = r.positive_number("training_time_s");
  plan.cost_usd = r.non_negative_number("cost_usd");
  io::validate_at_path(function, path, "ServerlessLaunchPlan::validate", [&] { plan.validate(); });
  return plan;
}

/// Reads a serverless plan document file (io::read_json_file's size, depth and encoding limits, then
/// serverless_launch_plan_from_json); every error names the file and the key path.
[[nodiscard]] inline ServerlessLaunchPlan read_serverless_launch_plan_file(const std::string& file) {
  return serverless_launch_plan_from_json(io::read_json_file(file), "plan", "read_serverless_launch_plan_file(" + file + ")");
}

}  // namespace spotdnn::launcher
