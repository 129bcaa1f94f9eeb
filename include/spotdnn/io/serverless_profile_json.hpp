#pragma once
// SPDX-License-Identifier: MIT
/// @file io/serverless_profile_json.hpp The serverless profile document: what `spotdnn serverless fit --format
/// json` writes and `spotdnn serverless plan --profile` reads (docs/formats.md, "Serverless profile").
///
///     {"kind": "spotdnn.serverless_profile", "name": "resnet50", "model_size_mb": 97.5,
///      "samples_per_epoch": 50000, "a": 60.1, "b": 7.9, "m": 201.3, "k1": 19.8, "k2": -0.799,
///      "fit": {"status": "converged", "message": "...", "residuals": "absolute",
///              "a": {"estimate": 60.1, "std_error": 0.4, "ci95_low": 59.3, "ci95_high": 60.9, "at_bound": false},
///              "b": {...}, "m": {...}, "k1": {...}, "k2": {...},
///              "train": {"rows": 30, "rmse_s": 0.01, "r_squared": 0.9999, "iterations": 5, "starts": 3,
///                        "starts_at_best": 1, "optimum_may_not_be_global": false, "message": "..."},
///              "transform": {...}, "optimum_may_not_be_global": false, "solve_time_s": 0.004}}
///
/// Reading checks `kind`, the coefficients' types (numbers; a null coefficient, as a fit that could not
/// estimate it writes, is refused) and the profile (ServerlessProfile::validate); `fit` is optional and not
/// read (it must be an object when present); unknown keys are ignored, so later versions may add some.

#include <string>
#include <string_view>

#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/serverless/profile.hpp"
#include "spotdnn/serverless/profile_fit_result.hpp"

namespace spotdnn::io {

/// The `kind` of a serverless profile document.
inline constexpr std::string_view kServerlessProfileDocumentKind = "spotdnn.serverless_profile";

/// The profile document of `profile`, without a "fit" object (non-finite coefficients become null).
[[nodiscard]] inline Json serverless_profile_document(const serverless::ServerlessProfile& profile) {
  Json j = Json::object();
  j["kind"] = std::string(kServerlessProfileDocumentKind);
  j["name"] = profile.name;
  j["model_size_mb"] = number_or_null(profile.model_size_mb);
  j["samples_per_epoch"] = number_or_null(profile.samples_per_epoch);
  j["a"] = number_or_null(profile.a);
  j["b"] = number_or_null(profile.b);
  j["m"] = number_or_null(profile.m);
  j["k1"] = number_or_null(profile.k1);
  j["k2"] = number_or_null(profile.k2);
  return j;
}

}  // namespace spotdnn::io

// Helpers in spotdnn::detail: a spotdnn::io::detail namespace would capture the unqualified detail:: of io
// headers included after this one.
namespace spotdnn::detail {

/// {"estimate", "std_error", "ci95_low", "ci95_high", "at_bound"} of one coefficient.
[[nodiscard]] inline io::Json coefficient_json(const FitParameter& p) {
  using io::number_or_null;
  return {{"estimate", number_or_null(p.value)},
          {"std_error", number_or_null(p.standard_error)},
          {"ci95_low", number_or_null(p.ci95_low)},
          {"ci95_high", number_or_null(p.ci95_high)},
          {"at_bound", p.at_bound}};
}

/// The figures of one part of the fit (train or transform).
[[nodiscard]] inline io::Json part_json(const FitResult& part) {
  using io::number_or_null;
  return {{"status", std::string(to_string(part.status))},
          {"message", part.message},
          {"rows", part.observations},
          {"rmse_s", number_or_null(part.rmse)},
          {"r_squared", number_or_null(part.r_squared)},
          {"iterations", part.iterations},
          {"starts", part.starts},
          {"starts_at_best", part.starts_at_best},
          {"optimum_may_not_be_global", part.optimum_may_not_be_global}};
}

}  // namespace spotdnn::detail

namespace spotdnn::io {

/// The profile document of a fit: the profile (null coefficients where the fit has none) and its "fit" object.
[[nodiscard]] inline Json serverless_profile_document(const serverless::ServerlessFitResult& fit) {
  Json j = serverless_profile_document(fit.profile);
  Json report = Json::object();
  report["status"] = std::string(to_string(fit.status));
  report["message"] = fit.message;
  report["residuals"] = fit.relative_residuals ? "relative" : "absolute";
  for (const FitParameter& p : fit.parameters) report[p.name] = spotdnn::detail::coefficient_json(p);
  report["train"] = spotdnn::detail::part_json(fit.train);
  report["transform"] = spotdnn::detail::part_json(fit.transform);
  report["optimum_may_not_be_global"] = fit.optimum_may_not_be_global;
  report["solve_time_s"] = fit.solve_time_s;
  j["fit"] = report;
  return j;
}

/// Reads a profile document (see the file comment); errors name the key path under `path`.
[[nodiscard]] inline serverless::ServerlessProfile serverless_profile_from_json(
    const Json& json, const std::string& path = "profile", const std::string& function = "serverless_profile_from_json") {
  JsonObjectReader r(json, path, function);
  const std::string kind = r.string("kind");
  if (kind != kServerlessProfileDocumentKind) {
    spotdnn::detail::fail(function, r.key_path("kind"), spotdnn::detail::quoted(kind),
                          "expected \"" + std::string(kServerlessProfileDocumentKind) + "\" (spotdnn serverless fit --format json writes it)");
  }
  serverless::ServerlessProfile p;
  p.name = r.string("name");
  p.model_size_mb = r.positive_number("model_size_mb");
  p.samples_per_epoch = r.positive_number("samples_per_epoch");
  p.a = r.positive_number("a");
  p.b = r.number("b");
  p.m = r.number("m");
  p.k1 = r.non_negative_number("k1");
  p.k2 = r.number("k2");
  if (const Json* fit = r.optional("fit"); fit != nullptr && !fit->is_object()) {
    spotdnn::detail::fail(function, r.key_path("fit"), JsonObjectReader::excerpt(*fit), "expected a JSON object (the fit's report)");
  }
  validate_at_path(function, path, "ServerlessProfile::validate", [&] { p.validate(); });
  return p;
}

/// Reads a profile JSON file; every error names the file and the key path.
[[nodiscard]] inline serverless::ServerlessProfile read_serverless_profile_file(const std::string& path) {
  return serverless_profile_from_json(read_json_file(path), "profile", "read_serverless_profile_file(" + path + ")");
}

}  // namespace spotdnn::io
