#pragma once
// SPDX-License-Identifier: MIT
/// @file io/training_profile_json.hpp The training profile document: what the training example's
/// `ps_train.py --profile` writes on one instance type and `spotdnn workload build --profile` reads
/// (docs/formats.md, "Training profiles").
///
///     {"kind": "spotdnn.profile", "version": 1, "instance_type": "g4dn.xlarge", "model": "resnet20",
///      "param_bytes": 1078888, "device": "cuda", "gpu_name": "Tesla T4", "gpu_count": 1,
///      "torch_version": "2.11.0+cu128",
///      "measurements": [{"batch_per_gpu": 128, "precision": "fp32", "iterations": 20, "compute_time_s": 0.0412}, ...]}
///
/// A document spotdnn's own tools write for later use: the keys above are read and checked (types, ranges,
/// TrainingProfile::validate); other keys (the example also writes gradient_bytes, samples_per_s, the
/// minimum and maximum times, skipped precisions, versions) are ignored, so later versions may add some.

#include <string>

#include "spotdnn/fit/training_profile.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/limits.hpp"

namespace spotdnn::io {

/// The `kind` and `version` of a training profile document.
inline constexpr std::string_view kTrainingProfileDocumentKind = "spotdnn.profile";
inline constexpr int kTrainingProfileVersion = 1;

/// Reads a training profile document (see the file comment); errors name the key path under `path`.
[[nodiscard]] inline TrainingProfile training_profile_from_json(const Json& json, const std::string& path = "profile",
                                                                const std::string& function = "training_profile_from_json") {
  JsonObjectReader r(json, path, function);
  const std::string kind = r.string("kind");
  if (kind != kTrainingProfileDocumentKind) {
    spotdnn::detail::fail(function, r.key_path("kind"), spotdnn::detail::quoted(kind),
                          "expected \"" + std::string(kTrainingProfileDocumentKind) +
                              "\" (the training example's ps_train.py --profile writes it)");
  }
  const int version = r.integer("version", 0);
  if (version != kTrainingProfileVersion) {
    spotdnn::detail::fail(function, r.key_path("version"), std::to_string(version),
                          "this spotdnn reads version " + std::to_string(kTrainingProfileVersion));
  }
  TrainingProfile p;
  p.instance_type = r.string("instance_type");
  p.model = r.string("model");
  p.param_bytes = r.positive_number("param_bytes");
  p.device = r.string("device");
  if (p.device != "cpu" && p.device != "cuda") {
    spotdnn::detail::fail(function, r.key_path("device"), spotdnn::detail::quoted(p.device), "expected \"cpu\" or \"cuda\"");
  }
  if (const Json* name = r.optional("gpu_name"); name != nullptr && !name->is_null()) {
    p.gpu_name = r.as_string(*name, r.key_path("gpu_name"));
    spotdnn::detail::require_printable_name(function, r.key_path("gpu_name"), p.gpu_name);
  }
  p.gpu_count = r.integer("gpu_count", 0, 64);
  if (const Json* torch = r.optional("torch_version"); torch != nullptr && !torch->is_null()) {
    p.framework = "torch " + r.as_string(*torch, r.key_path("torch_version"));
    spotdnn::detail::require_printable_name(function, r.key_path("torch_version"), p.framework);
  }
  const Json& list = r.required("measurements");
  const std::string list_path = r.key_path("measurements");
  if (!list.is_array()) spotdnn::detail::fail(function, list_path, JsonObjectReader::excerpt(list), "expected a JSON array");
  if (list.size() > std::size_t(kMaxProfileMeasurements)) {
    spotdnn::detail::fail(function, list_path, "[" + std::to_string(list.size()) + " measurements]",
                          "at most " + std::to_string(kMaxProfileMeasurements));
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    JsonObjectReader m(list[i], list_path + "[" + std::to_string(i) + "]", function);
    ComputeMeasurement measurement;
    measurement.batch_per_gpu = m.integer("batch_per_gpu", 1, kMaxBatchPerGpu);
    measurement.precision = m.string("precision");
    measurement.iterations = m.integer("iterations", 1);
    measurement.compute_time_s = m.positive_number("compute_time_s");
    p.measurements.push_back(std::move(measurement));
  }
  validate_at_path(function, path, "TrainingProfile::validate", [&] { p.validate(); });
  return p;
}

/// Reads a training profile JSON file; every error names the file and the key path.
[[nodiscard]] inline TrainingProfile read_training_profile_file(const std::string& path) {
  return training_profile_from_json(read_json_file(path), "profile", "read_training_profile_file(" + path + ")");
}

}  // namespace spotdnn::io
