#pragma once
// SPDX-License-Identifier: MIT
/// @file io/serverless_plan_json.hpp The serverless plan document: what `spotdnn serverless plan --format
/// json` writes and `spotdnn launch --serverless` reads (docs/formats.md, "Serverless plan document").
///
///     {"kind": "spotdnn.serverless_plan", "schema_version": 2, "status": "optimal", "message": "...",
///      "algorithm": "exact", "profile_name": "...", "epochs": 10, "deadline_s": 3000,
///      "workers": 9, "memory_mb": 1536, "aggregators": 2, "batch": 32, "non_aggregator_batch": 130,
///      "iterations": 514, "iteration_time_s": 5.676, "training_time_s": 2917.5, "cost_usd": 0.7093,
///      "lambda_cost_usd": 0.6564, "s3_cost_usd": 0.0528, "samples_trained": 500636, "samples_asked": 500000,
///      "extrapolated": false, "samples_to_train": 500000, "iteration_rounding": "up", "pricing": "aws",
///      "fastest": {...} | null}
///
/// `samples_trained` is I × the global batch, `samples_asked` (= `samples_to_train`) is D·E; with
/// `"iteration_rounding": "up"` (the default) samples_trained ≥ samples_asked, with "fasdl_floor"
/// (`--fasdl-rounding`) it may be less. Without a plan the configuration's keys are null (samples_asked,
/// samples_to_train and batch excepted) and `fastest` (when some configuration can run) holds the fastest
/// configuration's figures, which explain why the deadline cannot be met.

#include <string_view>

#include "spotdnn/io/document_kind.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/serverless/serverless_plan.hpp"

namespace spotdnn::io {

/// The figures of one configuration (the keys of a plan, without status and message).
[[nodiscard]] inline Json to_json(const serverless::ServerlessEstimate& e) {
  Json j = Json::object();
  j["workers"] = e.configuration.workers;
  j["memory_mb"] = e.configuration.memory_mb;
  j["aggregators"] = e.configuration.aggregators;
  j["batch"] = e.batch;
  j["non_aggregator_batch"] = e.non_aggregator_batch;
  j["iterations"] = e.iterations;
  j["iteration_time_s"] = number_or_null(e.iteration_time_s);
  j["training_time_s"] = number_or_null(e.training_time_s);
  j["cost_usd"] = number_or_null(e.cost.total_usd);
  j["lambda_cost_usd"] = number_or_null(e.cost.lambda_usd);
  j["s3_cost_usd"] = number_or_null(e.cost.s3_usd);
  j["samples_trained"] = number_or_null(e.samples_trained);
  j["samples_asked"] = number_or_null(e.samples_asked);
  j["extrapolated"] = e.extrapolated;
  return j;
}

/// The serverless plan document of a planner's answer for `model`.
[[nodiscard]] inline Json serverless_plan_document(const serverless::ServerlessPlanResult& r, const serverless::ServerlessModel& model) {
  Json j = Json::object();
  j["kind"] = std::string(kServerlessPlanDocumentKind);
  j["schema_version"] = kPlanDocumentSchemaVersion;
  j["status"] = std::string(to_string(r.status));
  j["message"] = r.message;
  j["algorithm"] = std::string(to_string(r.algorithm));
  j["profile_name"] = model.profile().name;
  j["epochs"] = model.work().epochs;
  j["deadline_s"] = number_or_null(r.deadline_s);
  const Json figures = to_json(r.plan);
  for (auto it = figures.begin(); it != figures.end(); ++it) j[it.key()] = r.has_plan() ? it.value() : Json(nullptr);
  if (!r.has_plan()) j["batch"] = model.batch();
  j["samples_asked"] = model.samples_to_train();
  j["samples_to_train"] = model.samples_to_train();
  j["iteration_rounding"] = std::string(to_string(model.work().iteration_rounding));
  j["pricing"] = model.work().pricing.fasdl ? "fasdl" : "aws";
  j["fastest"] = r.fastest ? to_json(*r.fastest) : Json(nullptr);
  return j;
}

}  // namespace spotdnn::io
