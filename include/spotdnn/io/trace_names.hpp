#pragma once
// SPDX-License-Identifier: MIT
/// @file io/trace_names.hpp What a trace file's path says: the pool from a name `<zone>_<gpu>_<n>.json`
/// through a GPU map, and the date of time 0 from a folder named like `aws-04-19-2023` (docs/traces.md).
///
/// The Can't Be Late traces name each file after its zone and a GPU token (`us-east-1c_intel_64.json`,
/// `us-central1-a_c3-88.json`): the zone is the part before the first '_', the token the rest less `.json`,
/// and the GPU map gives the token's instance type. The default map is default_gpu_map(); a text
/// `TOKEN=TYPE,...` (the CLI's `--gpu-map`) adds entries or replaces them.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/revocation/trace.hpp"

namespace spotdnn::io {

/// GPU token of a trace file name → instance type.
using GpuMap = std::map<std::string, std::string, std::less<>>;

/// The tokens of the Can't Be Late traces: v100_1 → p3.2xlarge, v100_8 → p3.16xlarge, k80_1 → p2.xlarge,
/// k80_8 → p2.8xlarge, intel_64 → r5.16xlarge (AWS) and c3-88 → c3-highcpu-88 (GCP).
[[nodiscard]] inline GpuMap default_gpu_map() {
  return {{"v100_1", "p3.2xlarge"}, {"v100_8", "p3.16xlarge"}, {"k80_1", "p2.xlarge"},
          {"k80_8", "p2.8xlarge"},  {"intel_64", "r5.16xlarge"}, {"c3-88", "c3-highcpu-88"}};
}

/// `base` with the entries of `text` ("TOKEN=TYPE,TOKEN=TYPE", spaces around entries ignored) added or
/// replacing base's. Throws spotdnn::invalid_argument naming the entry when the text is empty, an entry
/// lacks '=' or a side, a token is given twice, or a token or type holds a space, a control character or
/// invalid UTF-8.
[[nodiscard]] inline GpuMap parse_gpu_map(std::string_view text, GpuMap base = default_gpu_map()) {
  constexpr std::string_view fn = "parse_gpu_map";
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  if (trim(text).empty()) spotdnn::detail::fail(fn, "gpu_map", "\"\"", "expected TOKEN=TYPE entries separated by commas, e.g. v100_1=p3.2xlarge");
  GpuMap given;
  std::size_t start = 0;
  for (std::size_t k = 1;; ++k) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view entry = trim(text.substr(start, comma - start));
    const std::string field = "gpu_map entry " + std::to_string(k);
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == entry.size()) {
      spotdnn::detail::fail(fn, field, spotdnn::detail::quoted(entry), "expected TOKEN=TYPE, e.g. v100_1=p3.2xlarge");
    }
    const std::string_view token = trim(entry.substr(0, eq)), type = trim(entry.substr(eq + 1));
    for (const std::string_view part : {token, type}) {
      spotdnn::detail::require_printable_name(fn, field, part);
      if (part.empty() || part.find_first_of(" \t=") != std::string_view::npos) {
        spotdnn::detail::fail(fn, field, spotdnn::detail::quoted(entry), "a token and a type are single words: expected TOKEN=TYPE");
      }
    }
    if (!given.emplace(std::string(token), std::string(type)).second) {
      spotdnn::detail::fail(fn, field, spotdnn::detail::quoted(entry), "the token " + spotdnn::detail::quoted(token) + " is given twice");
    }
    if (comma >= text.size()) break;
    start = comma + 1;
  }
  for (auto& [token, type] : given) base[token] = type;
  return base;
}

/// The last component of a path ("a/b/c.json" → "c.json").
[[nodiscard]] inline std::string_view trace_file_basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// The zone and GPU token a file name `<zone>_<gpu>_<n>.json` gives, or false when the name has another
/// form. The zone must look like one (lower-case letters, digits and '-', with a digit: "us-east-1c",
/// "us-central1-a"); the token is non-empty letters, digits, '_', '-' and '.'.
[[nodiscard]] inline bool split_trace_file_name(std::string_view path, std::string& zone, std::string& token) {
  std::string_view name = trace_file_basename(path);
  constexpr std::string_view suffix = ".json";
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) return false;
  name.remove_suffix(suffix.size());
  const std::size_t underscore = name.find('_');
  if (underscore == std::string_view::npos || underscore == 0 || underscore + 1 == name.size()) return false;
  const std::string_view z = name.substr(0, underscore), t = name.substr(underscore + 1);
  if (z.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string_view::npos) return false;
  if (z.find_first_of("0123456789") == std::string_view::npos || z.front() == '-' || z.back() == '-') return false;
  if (t.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != std::string_view::npos) {
    return false;
  }
  zone.assign(z);
  token.assign(t);
  return true;
}

/// The pool a trace file's name gives: `<zone>_<gpu>_<n>.json` with the token mapped by `gpu_map`
/// ("us-east-1c_intel_64.json" → r5.16xlarge@us-east-1c). Throws spotdnn::invalid_argument naming the path
/// when the name has another form (give --type and --zone) or the token is not in the map (give --type or
/// --gpu-map TOKEN=TYPE).
[[nodiscard]] inline PoolId pool_from_trace_file_name(std::string_view path, const GpuMap& gpu_map = default_gpu_map()) {
  constexpr std::string_view fn = "pool_from_trace_file_name";
  std::string zone, token;
  if (!split_trace_file_name(path, zone, token)) {
    spotdnn::detail::fail(fn, "path", spotdnn::detail::quoted(path),
                 "the file name does not say the pool (expected <zone>_<gpu>_<n>.json, e.g. us-east-1c_v100_1.json): "
                 "give --type and --zone");
  }
  const auto found = gpu_map.find(token);
  if (found == gpu_map.end()) {
    std::string known;
    for (const auto& [t, type] : gpu_map) known.append(known.empty() ? "" : ", ").append(t);
    spotdnn::detail::fail(fn, "path", spotdnn::detail::quoted(path),
                 "the GPU token " + spotdnn::detail::quoted(token) + " is not in the GPU map (" + known + "): give --type, or --gpu-map " +
                     token + "=TYPE");
  }
  return PoolId{found->second, zone};
}

/// The date of time 0 from the folder holding a trace file, named `<provider>-MM-DD-YYYY` as the Can't Be
/// Late traces are ("…/aws-04-19-2023/us-east-1b_intel_64.json" → "2023-04-19", "gcp-04-30-2023" →
/// "2023-04-30"); empty when the folder is named otherwise or the date does not exist.
[[nodiscard]] inline std::string observed_from_trace_path(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  const std::string_view folder = trace_file_basename(path.substr(0, slash));
  // <letters>-MM-DD-YYYY
  const std::size_t dash = folder.find('-');
  if (dash == std::string_view::npos || dash == 0 || folder.size() != dash + 11) return "";
  for (std::size_t i = 0; i < dash; ++i) {
    const char c = folder[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return "";
  }
  const std::string_view date = folder.substr(dash + 1);  // MM-DD-YYYY
  for (std::size_t i = 0; i < date.size(); ++i) {
    const bool separator = i == 2 || i == 5;
    if (separator ? date[i] != '-' : (date[i] < '0' || date[i] > '9')) return "";
  }
  const auto number = [&](std::size_t from, std::size_t count) {
    int value = 0;
    for (std::size_t i = from; i < from + count; ++i) value = value * 10 + (date[i] - '0');
    return value;
  };
  const int month = number(0, 2), day = number(3, 2), year = number(6, 4);
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return "";
  return std::string(date.substr(6, 4)) + "-" + std::string(date.substr(0, 2)) + "-" + std::string(date.substr(3, 2));
}

}  // namespace spotdnn::io
