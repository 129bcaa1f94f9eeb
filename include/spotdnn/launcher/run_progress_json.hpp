#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/run_progress_json.hpp The progress file of a run (`progress.json`, written by the
/// training program next to its checkpoints and read by `spotdnn watch` from S3): the PS's global
/// iteration and the loss it last measured.
///
/// Format (docs/watch.md, "The progress file"), one JSON object, every key required, no other key:
///   {"kind": "spotdnn.progress", "schema_version": 1, "run_id": "20261127-033000-0a1b2c",
///    "iteration": 1200, "loss": 2.31, "time_unix_s": 1795750000.5}
/// `loss` is null before the first measurement (nothing trained yet: the controller plans from the start).

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/launcher/run_id.hpp"

namespace spotdnn::launcher {

/// The `kind` of a progress file.
inline constexpr std::string_view kRunProgressKind = "spotdnn.progress";
/// Its `schema_version`.
inline constexpr int kRunProgressSchemaVersion = 1;
/// Largest progress file read: 64 KiB (a real one has about 150 bytes).
inline constexpr std::size_t kMaxRunProgressBytes = std::size_t(64) << 10;

/// Where training stands, as the PS last published it.
struct RunProgress {
  double iteration = 0;  ///< PS updates so far (global iteration)
  /// The loss last measured; +inf before the first measurement (nothing trained yet).
  double loss = std::numeric_limits<double>::infinity();
  double time_unix_s = 0;  ///< when the PS wrote the file (s since 1970-01-01 UTC)
  std::string run_id;      ///< the run that wrote it (the controller refuses another run's progress)
};

/// Reads a progress object (see the file comment). Throws spotdnn::invalid_argument naming `function`,
/// the key and the value for a wrong kind or version, a missing or unknown key, a run id that is not one,
/// a negative or non-finite number.
[[nodiscard]] inline RunProgress run_progress_from_json(const nlohmann::json& json, std::string_view function) {
  const io::Json copy = json;  // the strict reader works on ordered JSON
  io::JsonObjectReader r(copy, "progress", std::string(function));
  r.expect_keys({"kind", "schema_version", "run_id", "iteration", "loss", "time_unix_s"});
  const std::string kind = r.string("kind");
  if (kind != kRunProgressKind) {
    spotdnn::detail::fail(function, r.key_path("kind"), spotdnn::detail::quoted(kind), "expected \"" + std::string(kRunProgressKind) + "\"");
  }
  (void)r.integer("schema_version", kRunProgressSchemaVersion, kRunProgressSchemaVersion);
  RunProgress p;
  p.run_id = r.string("run_id");
  require_run_id(function, r.key_path("run_id"), p.run_id);
  p.iteration = r.non_negative_number("iteration");
  const io::Json& loss = r.required("loss");
  if (!loss.is_null()) {
    p.loss = r.as_number(loss, r.key_path("loss"));
    if (p.loss < 0) spotdnn::detail::fail(function, r.key_path("loss"), p.loss, "must not be negative (null: nothing measured yet)");
  }
  p.time_unix_s = r.non_negative_number("time_unix_s");
  r.finish();
  return p;
}

/// Parses the text of a progress file (at most kMaxRunProgressBytes, under the JSON reader limits) and
/// reads it; `source` names it in errors (e.g. the S3 URI).
[[nodiscard]] inline RunProgress parse_run_progress(std::string_view text, std::string_view source) {
  const std::string function = "read_run_progress(" + spotdnn::detail::escape_for_message(source) + ")";
  if (text.size() > kMaxRunProgressBytes) {
    spotdnn::detail::fail(function, "size", std::to_string(text.size()) + " bytes",
                 "a progress file has at most " + std::to_string(kMaxRunProgressBytes) + " bytes");
  }
  const nlohmann::json json = io::parse_json(text, source);
  return run_progress_from_json(json, function);
}

/// The progress object of `p` (what the training program writes; used by tests and examples).
[[nodiscard]] inline nlohmann::ordered_json to_json(const RunProgress& p) {
  nlohmann::ordered_json j;
  j["kind"] = kRunProgressKind;
  j["schema_version"] = kRunProgressSchemaVersion;
  j["run_id"] = p.run_id;
  j["iteration"] = p.iteration;
  j["loss"] = io::number_or_null(p.loss);
  j["time_unix_s"] = p.time_unix_s;
  return j;
}

}  // namespace spotdnn::launcher
