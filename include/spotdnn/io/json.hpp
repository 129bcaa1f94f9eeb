#pragma once
// SPDX-License-Identifier: MIT
/// @file io/json.hpp Strict JSON for workloads, catalogs, clusters and predictions (docs/formats.md contract).
///
/// Readers reject unknown keys, missing required keys, wrong types and non-finite or out-of-range numbers
/// with spotdnn::invalid_argument naming the key path, e.g. `workload.profiles["p3.2xlarge"].batch_per_gpu`.
/// Writers emit SI units in every key; doubles round-trip exactly; non-finite values are written as null.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/status.hpp"
#include "spotdnn/workload.hpp"

namespace spotdnn::io {

/// Key order is kept: outputs read status and message first.
using Json = nlohmann::ordered_json;

/// Reads one JSON object strictly, remembering its key path and which keys were consumed.
/// Call finish() last: it throws for any key that was not read.
class JsonObjectReader {
 public:
  JsonObjectReader(const Json& json, std::string path, std::string function = "read_json")
      : json_(json), path_(std::move(path)), function_(std::move(function)) {
    if (!json_.is_object()) detail::fail(function_, path_, excerpt(json_), "expected a JSON object");
  }

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& function() const { return function_; }
  [[nodiscard]] bool has(std::string_view key) const { return json_.contains(std::string(key)); }

  /// The value at `key` (marked as read); throws when it is missing.
  [[nodiscard]] const Json& required(std::string_view key) {
    const std::string k(key);
    if (!json_.contains(k)) detail::fail(function_, key_path(key), "missing", "this key is required");
    seen_.insert(k);
    return json_.at(k);
  }

  /// The value at `key`, or nullptr when absent (marked as read).
  [[nodiscard]] const Json* optional(std::string_view key) {
    const std::string k(key);
    if (!json_.contains(k)) return nullptr;
    seen_.insert(k);
    return &json_.at(k);
  }

  [[nodiscard]] std::string key_path(std::string_view key) const {
    return path_ + "." + std::string(key);
  }

  /// A finite number; `minimum`/`strictly_positive` add range checks.
  [[nodiscard]] double number(std::string_view key) { return as_number(required(key), key_path(key)); }
  [[nodiscard]] double positive_number(std::string_view key) {
    const double v = number(key);
    if (!(v > 0)) detail::fail(function_, key_path(key), v, "must be greater than zero");
    return v;
  }
  [[nodiscard]] double non_negative_number(std::string_view key) {
    const double v = number(key);
    if (v < 0) detail::fail(function_, key_path(key), v, "must not be negative");
    return v;
  }
  /// The largest whole number a reader accepts unless it names a smaller maximum.
  static constexpr int kMaxWholeNumber = 1000000000;

  /// A whole number from `minimum` to `maximum`.
  [[nodiscard]] int integer(std::string_view key, int minimum, int maximum = kMaxWholeNumber) {
    return as_integer(required(key), key_path(key), minimum, maximum);
  }
  [[nodiscard]] std::string string(std::string_view key) { return as_string(required(key), key_path(key)); }
  [[nodiscard]] bool boolean(std::string_view key) {
    const Json& v = required(key);
    if (!v.is_boolean()) detail::fail(function_, key_path(key), excerpt(v), "expected true or false");
    return v.get<bool>();
  }

  /// Throws for the first key that no accessor read.
  void finish() const {
    for (auto it = json_.begin(); it != json_.end(); ++it) {
      if (seen_.count(it.key()) == 0) {
        detail::fail(function_, key_path(it.key()), excerpt(it.value()), "unknown key" + known_hint());
      }
    }
  }

  /// Declares the keys this object may have, for the "unknown key" message.
  void expect_keys(std::initializer_list<std::string_view> keys) {
    known_.clear();
    for (std::string_view k : keys) known_.append(known_.empty() ? "" : ", ").append(k);
  }

  // Typed conversions of any JSON value, with a path for the message.
  [[nodiscard]] double as_number(const Json& v, const std::string& path) const {
    if (!v.is_number()) detail::fail(function_, path, excerpt(v), "expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) detail::fail(function_, path, d, "must be a finite number");
    return d;
  }
  [[nodiscard]] int as_integer(const Json& v, const std::string& path, int minimum, int maximum = kMaxWholeNumber) const {
    if (!v.is_number_integer()) detail::fail(function_, path, excerpt(v), "expected a whole number");
    const bool is_unsigned = v.is_number_unsigned();
    const auto i = is_unsigned ? static_cast<long long>(std::min<std::uint64_t>(v.get<std::uint64_t>(), std::uint64_t(1) << 62))
                               : v.get<long long>();
    if (i < minimum || i > maximum) {
      detail::fail(function_, path, is_unsigned ? std::to_string(v.get<std::uint64_t>()) : std::to_string(i),
                   "must be a whole number from " + std::to_string(minimum) + " to " + std::to_string(maximum));
    }
    return int(i);
  }
  [[nodiscard]] std::string as_string(const Json& v, const std::string& path) const {
    if (!v.is_string()) detail::fail(function_, path, excerpt(v), "expected a string");
    return v.get<std::string>();
  }

  /// Compact text of a value for a message (shortened when long).
  static std::string excerpt(const Json& v) {
    std::string text = v.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
  }

 private:
  std::string known_hint() const { return known_.empty() ? "" : " (expected: " + known_ + ")"; }

  const Json& json_;
  std::string path_;
  std::string function_;
  std::set<std::string> seen_;
  std::string known_;
};

/// Runs `validate()`, a struct's own check that throws "Validator: field = value: why", and re-raises its
/// error under the JSON key path: "function: path.field = value: why".
template <typename Validate>
void validate_at_path(const std::string& function, const std::string& path, std::string_view validator,
                      Validate&& validate) {
  try {
    validate();
  } catch (const invalid_argument& e) {
    std::string message = e.what();
    const std::string prefix = std::string(validator) + ": ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    throw invalid_argument(function + ": " + path + "." + message);
  }
}

}  // namespace spotdnn::io

namespace spotdnn::detail {

/// A SAX pass over JSON text that enforces the reader limits before any document is built: nesting depth
/// at most kMaxJsonDepth (checked as each object or array opens, so nothing recurses deeper) and no key
/// twice in one object (JSON leaves duplicates undefined; nlohmann keeps the last one silently). Violations
/// throw spotdnn::invalid_argument naming the key path.
class JsonLimitsCheck {
 public:
  using number_integer_t = io::Json::number_integer_t;
  using number_unsigned_t = io::Json::number_unsigned_t;
  using number_float_t = io::Json::number_float_t;
  using string_t = io::Json::string_t;
  using binary_t = io::Json::binary_t;

  JsonLimitsCheck(std::string_view source, std::string_view function) : source_(source), function_(function) {}

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(number_integer_t) { return value(); }
  bool number_unsigned(number_unsigned_t) { return value(); }
  bool number_float(number_float_t, const string_t&) { return value(); }
  bool string(string_t&) { return value(); }
  bool binary(binary_t&) { return value(); }
  bool start_object(std::size_t) { return open(true); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(false); }
  bool end_array() { return close(); }
  bool key(string_t& key) {
    Level& level = levels_.back();
    level.key = key;
    if (!level.keys.insert(key).second) {
      fail(function_, path(), "(given twice)",
           "duplicate key in " + std::string(source_) + ": each key may appear once per object");
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  struct Level {
    bool object = false;
    std::size_t index = 0;  ///< next array element
    std::string key;        ///< current object key
    std::set<std::string> keys;
  };

  bool value() {
    if (!levels_.empty() && !levels_.back().object) ++levels_.back().index;
    return true;
  }
  bool open(bool object) {
    if (int(levels_.size()) >= kMaxJsonDepth) {
      fail(function_, path(), "(nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels)",
                            "JSON documents may nest objects and arrays at most " + std::to_string(kMaxJsonDepth) +
                                " deep in " + std::string(source_));
    }
    levels_.push_back(Level{object, 0, {}, {}});
    return true;
  }
  bool close() {
    levels_.pop_back();
    return value();
  }
  /// The key path to the current position, e.g. $["profiles"]["p3.2xlarge"][2].
  std::string path() const {
    std::string p = "$";
    for (std::size_t depth = 0; depth < levels_.size(); ++depth) {
      if (levels_.size() > 12 && depth == 6) {  // a path 64 levels deep would drown the message
        p += "[...]";
        depth = levels_.size() - 4;
      }
      const Level& level = levels_[depth];
      if (level.object) {
        if (!level.key.empty()) p += "[\"" + level.key + "\"]";
      } else {
        p += "[" + std::to_string(level.index) + "]";
      }
    }
    return p;
  }

  std::string_view source_;
  std::string_view function_;
  std::vector<Level> levels_;
};

/// A SAX handler that builds the document in one pass, in time linear in its size, under the reader limits
/// (it forwards every event to detail::JsonLimitsCheck first: depth and duplicate keys). nlohmann's own
/// builder inserts each key of an ordered_json object after a linear search for it, quadratic in the keys
/// of one object: 200,000 keys take half a minute. The limits check already refuses a key given twice, so
/// members are appended directly. A syntax error is kept (byte, message) for the caller to report.
class LinearJsonBuilder {
 public:
  using number_integer_t = io::Json::number_integer_t;
  using number_unsigned_t = io::Json::number_unsigned_t;
  using number_float_t = io::Json::number_float_t;
  using string_t = io::Json::string_t;
  using binary_t = io::Json::binary_t;

  LinearJsonBuilder(io::Json& root, std::string_view source, std::string_view function) : root_(root), limits_(source, function) {}

  bool null() { return limits_.null() && put(io::Json(nullptr)); }
  bool boolean(bool v) { return limits_.boolean(v) && put(io::Json(v)); }
  bool number_integer(number_integer_t v) { return limits_.number_integer(v) && put(io::Json(v)); }
  bool number_unsigned(number_unsigned_t v) { return limits_.number_unsigned(v) && put(io::Json(v)); }
  bool number_float(number_float_t v, const string_t& text) { return limits_.number_float(v, text) && put(io::Json(v)); }
  bool string(string_t& v) { return limits_.string(v) && put(io::Json(std::move(v))); }
  bool binary(binary_t& v) { return limits_.binary(v) && put(io::Json::binary(std::move(v))); }
  bool start_object(std::size_t n) {
    if (!limits_.start_object(n) || !put(io::Json::object())) return false;
    open_.push_back(last_);
    return true;
  }
  bool end_object() {
    open_.pop_back();
    return limits_.end_object();
  }
  bool start_array(std::size_t n) {
    if (!limits_.start_array(n) || !put(io::Json::array())) return false;
    open_.push_back(last_);
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return limits_.end_array();
  }
  bool key(string_t& k) {
    if (!limits_.key(k)) return false;
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error_byte_ = position;
    error_ = e.what();
    syntax_error_ = e.id / 100 == 1;  // parse_error ids are 101..; a number out of range is 406
    return false;
  }

  [[nodiscard]] std::size_t error_byte() const { return error_byte_; }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] bool syntax_error() const { return syntax_error_; }

 private:
  bool put(io::Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      last_ = &root_;
      return true;
    }
    io::Json& parent = *open_.back();
    if (parent.is_array()) {
      auto& array = parent.get_ref<io::Json::array_t&>();
      array.push_back(std::move(value));
      last_ = &array.back();
      return true;
    }
    // Append without ordered_map's linear search for the key (the limits check refused duplicates).
    auto& members = static_cast<io::Json::object_t::Container&>(parent.get_ref<io::Json::object_t&>());
    members.emplace_back(key_, std::move(value));
    last_ = &members.back().second;
    return true;
  }

  io::Json& root_;
  JsonLimitsCheck limits_;
  std::vector<io::Json*> open_;  ///< the objects and arrays being filled, outermost first
  io::Json* last_ = nullptr;     ///< the value put last
  std::string key_;
  std::size_t error_byte_ = 0;
  std::string error_;
  bool syntax_error_ = true;
};

}  // namespace spotdnn::detail

namespace spotdnn::io {

/// Parses JSON text under the reader limits: at most kMaxJsonDepth levels of nesting (checked before any
/// recursion), no duplicate keys, valid UTF-8 in strings, a leading UTF-8 byte-order mark accepted.
/// A violation or a syntax error becomes spotdnn::invalid_argument naming `source` and the key path or byte
/// offset (control characters and invalid bytes escaped).
[[nodiscard]] inline Json parse_json(std::string_view text, std::string_view source) {
  if (text.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) text.remove_prefix(kUtf8ByteOrderMark.size());
  // nlohmann would skip a second mark too, and stop quietly at a NUL byte: neither belongs in JSON text.
  if (text.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
    spotdnn::detail::fail("parse_json", std::string(source), "byte 3", "malformed JSON: a second byte-order mark");
  }
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    spotdnn::detail::fail("parse_json", std::string(source), "byte " + std::to_string(nul),
                          "malformed JSON: a NUL byte (JSON text cannot contain one)");
  }
  // One pass under the limits, in time linear in the text (detail::LinearJsonBuilder).
  Json root;
  detail::LinearJsonBuilder builder(root, source, "parse_json");
  if (Json::sax_parse(text.begin(), text.end(), &builder)) return root;
  if (!builder.syntax_error()) {  // e.g. a number too large for a double
    spotdnn::detail::fail("parse_json", std::string(source), "text", "unusable JSON: " + builder.error());
  }
  spotdnn::detail::fail("parse_json", std::string(source), "byte " + std::to_string(builder.error_byte()),
                        "malformed JSON: " + builder.error());
}

/// Reads and parses a JSON file: a regular file of at most kMaxJsonFileBytes, under parse_json's limits;
/// errors name the path.
[[nodiscard]] inline Json read_json_file(const std::string& path) {
  return parse_json(read_checked_file(path, kMaxJsonFileBytes, "read_json_file"), path);
}

/// A JSON number, or null when `value` is not finite (JSON has no NaN or infinity).
[[nodiscard]] inline Json number_or_null(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

// ---- Cluster ---------------------------------------------------------------------------------------------

/// {"TYPE": N, ...}
[[nodiscard]] inline Json to_json(const Cluster& cluster) {
  Json j = Json::object();
  for (const auto& [type, count] : cluster.counts()) j[type] = count;
  return j;
}

[[nodiscard]] inline Cluster cluster_from_json(const Json& json, const std::string& path = "cluster",
                                               const std::string& function = "cluster_from_json") {
  JsonObjectReader r(json, path, function);
  Cluster cluster;
  for (auto it = json.begin(); it != json.end(); ++it) {
    const std::string key_path = path + "[\"" + it.key() + "\"]";
    if (it.key().empty()) detail::fail(function, key_path, "\"\"", "instance type names must not be empty");
    cluster.set(it.key(), r.as_integer(it.value(), key_path, 0, int(kMaxClusterWorkers)));
  }
  return cluster;
}

// ---- Workload --------------------------------------------------------------------------------------------

[[nodiscard]] inline Json to_json(const Workload& w) {
  Json profiles = Json::object();
  for (const auto& [type, p] : w.profiles) {
    Json entry = {{"batch_per_gpu", p.batch_per_gpu}};
    if (p.iteration_time_s) entry["iteration_time_s"] = *p.iteration_time_s;
    if (p.compute_time_s) entry["compute_time_s"] = *p.compute_time_s;
    if (!p.estimated_from.empty()) entry["estimated_from"] = p.estimated_from;
    profiles[type] = entry;
  }
  return {{"name", w.name},
          {"param_bytes", w.param_bytes},
          {"required_bandwidth_bytes_per_s", w.required_bandwidth_bytes_per_s},
          {"contention", {{"alpha1", w.contention.alpha1}, {"beta1", w.contention.beta1}}},
          {"loss_model", {{"form", std::string(to_string(w.loss_model.form))}, {"gamma", w.loss_model.gamma}}},
          {"profiles", profiles}};
}

/// Reads a workload object (docs/formats.md) and validates it; errors name the key path under `path`.
[[nodiscard]] inline Workload workload_from_json(const Json& json, const std::string& path = "workload",
                                                 const std::string& function = "workload_from_json") {
  JsonObjectReader r(json, path, function);
  r.expect_keys({"name", "param_bytes", "required_bandwidth_bytes_per_s", "contention", "loss_model", "profiles"});
  Workload w;
  w.name = r.string("name");
  w.param_bytes = r.positive_number("param_bytes");
  w.required_bandwidth_bytes_per_s = r.positive_number("required_bandwidth_bytes_per_s");
  {
    JsonObjectReader c(r.required("contention"), r.key_path("contention"), function);
    c.expect_keys({"alpha1", "beta1"});
    w.contention.alpha1 = c.number("alpha1");
    w.contention.beta1 = c.number("beta1");
    c.finish();
  }
  {
    JsonObjectReader m(r.required("loss_model"), r.key_path("loss_model"), function);
    m.expect_keys({"form", "gamma"});
    const std::string form = m.string("form");
    const auto parsed_form = loss_form_from_string(form);
    if (!parsed_form) detail::fail(function, m.key_path("form"), detail::quoted(form), "expected \"seed\" or \"cc\"");
    w.loss_model.form = *parsed_form;
    const Json& gamma = m.required("gamma");
    const std::size_t want = gamma_count(*parsed_form);
    if (!gamma.is_array() || gamma.size() != want) {
      detail::fail(function, m.key_path("gamma"), JsonObjectReader::excerpt(gamma),
                   "the " + form + " form needs an array of exactly " + std::to_string(want) + " numbers");
    }
    for (std::size_t i = 0; i < want; ++i) {
      w.loss_model.gamma.push_back(m.as_number(gamma[i], m.key_path("gamma") + "[" + std::to_string(i) + "]"));
    }
    m.finish();
  }
  const Json& profiles = r.required("profiles");
  JsonObjectReader all(profiles, r.key_path("profiles"), function);
  for (auto it = profiles.begin(); it != profiles.end(); ++it) {
    const std::string ppath = r.key_path("profiles") + "[\"" + it.key() + "\"]";
    if (it.key().empty()) detail::fail(function, ppath, "\"\"", "instance type names must not be empty");
    JsonObjectReader p(it.value(), ppath, function);
    p.expect_keys({"batch_per_gpu", "iteration_time_s", "compute_time_s", "estimated_from"});
    TypeProfile profile;
    profile.batch_per_gpu = p.integer("batch_per_gpu", 1);
    if (p.has("iteration_time_s")) profile.iteration_time_s = p.positive_number("iteration_time_s");
    if (p.has("compute_time_s")) profile.compute_time_s = p.positive_number("compute_time_s");
    if (p.has("estimated_from")) profile.estimated_from = p.string("estimated_from");
    if (profile.iteration_time_s.has_value() == profile.compute_time_s.has_value()) {
      detail::fail(function, ppath, JsonObjectReader::excerpt(it.value()),
                   "give exactly one of iteration_time_s and compute_time_s");
    }
    p.finish();
    w.profiles.emplace(it.key(), profile);
  }
  r.finish();
  validate_at_path(function, path, "Workload::validate", [&] { w.validate(); });
  return w;
}

// ---- Catalog ---------------------------------------------------------------------------------------------

[[nodiscard]] inline Json to_json(const InstanceType& t) {
  Json j = {{"name", t.name},
            {"gpus", t.gpus},
            {"price_usd_per_hour", t.price_usd_per_hour},
            {"quota", t.quota},
            {"pcie_bandwidth_bytes_per_s", t.pcie_bandwidth_bytes_per_s},
            {"market", std::string(to_string(t.market))}};
  if (t.on_demand_price_usd_per_hour > 0) j["on_demand_price_usd_per_hour"] = t.on_demand_price_usd_per_hour;
  if (t.revocation_hazard_per_hour) j["revocation_hazard_per_hour"] = *t.revocation_hazard_per_hour;
  if (t.interruption_band) j["interruption_band"] = *t.interruption_band;
  if (t.vcpus > 0) j["vcpus"] = t.vcpus;
  if (t.memory_mib > 0) j["memory_mib"] = t.memory_mib;
  if (!t.network_performance.empty()) j["network_performance"] = t.network_performance;
  if (!t.gpu_model.empty()) j["gpu_model"] = t.gpu_model;
  if (!t.zone_prices_usd_per_hour.empty()) {
    Json zones = Json::object();
    for (const auto& [zone, price] : t.zone_prices_usd_per_hour) zones[zone] = price;
    j["zone_prices_usd_per_hour"] = zones;
  }
  if (!t.price_observed_at.empty()) j["price_observed_at"] = t.price_observed_at;
  if (!t.spot_quota_group.empty() || !t.on_demand_quota_group.empty()) {
    Json groups = Json::object();
    if (!t.spot_quota_group.empty()) groups["spot"] = t.spot_quota_group;
    if (!t.on_demand_quota_group.empty()) groups["on-demand"] = t.on_demand_quota_group;
    j["quota_groups"] = groups;
  }
  return j;
}

[[nodiscard]] inline Json to_json(const Catalog& c) {
  Json types = Json::array();
  for (const InstanceType& t : c.instance_types) types.push_back(to_json(t));
  Json j = {{"region", c.region},
            {"parameter_server",
             {{"type", c.parameter_server.type},
              {"price_usd_per_hour", c.parameter_server.price_usd_per_hour},
              {"bandwidth_bytes_per_s", c.parameter_server.bandwidth_bytes_per_s}}},
            {"instance_types", types}};
  if (c.parameter_server.vcpus > 0) j["parameter_server"]["vcpus"] = c.parameter_server.vcpus;
  if (!c.parameter_server.quota_group.empty()) j["parameter_server"]["quota_group"] = c.parameter_server.quota_group;
  if (!c.quota_groups.empty()) {
    Json groups = Json::object();
    for (const QuotaGroup& g : c.quota_groups) {
      groups[g.code] = {{"name", g.name}, {"vcpus", g.vcpus}, {"market", std::string(to_string(g.market))}};
    }
    j["quota_groups"] = groups;
  }
  if (!c.missing_sources.empty()) j["missing_sources"] = c.missing_sources;
  if (!c.placement_scores.empty()) {
    Json scores = Json::array();
    for (const PlacementScore& p : c.placement_scores) {
      Json s = Json::object();
      if (!p.zone.empty()) s["zone"] = p.zone;
      s["score"] = p.score;
      s["target_capacity"] = p.target_capacity;
      s["target_capacity_unit"] = p.target_capacity_unit;
      s["instance_types"] = p.instance_types;
      if (!p.observed_at.empty()) s["observed_at"] = p.observed_at;
      scores.push_back(std::move(s));
    }
    j["placement_scores"] = std::move(scores);
  }
  return j;
}

/// Reads a catalog object (docs/formats.md) and validates it; errors name the key path under `path`.
[[nodiscard]] inline Catalog catalog_from_json(const Json& json, const std::string& path = "catalog",
                                               const std::string& function = "catalog_from_json") {
  JsonObjectReader r(json, path, function);
  r.expect_keys({"region", "parameter_server", "instance_types", "quota_groups", "missing_sources", "placement_scores"});
  Catalog c;
  c.region = r.string("region");
  {
    JsonObjectReader ps(r.required("parameter_server"), r.key_path("parameter_server"), function);
    ps.expect_keys({"type", "price_usd_per_hour", "bandwidth_bytes_per_s", "vcpus", "quota_group"});
    c.parameter_server.type = ps.string("type");
    c.parameter_server.price_usd_per_hour = ps.positive_number("price_usd_per_hour");
    c.parameter_server.bandwidth_bytes_per_s = ps.positive_number("bandwidth_bytes_per_s");
    if (ps.has("vcpus")) c.parameter_server.vcpus = ps.integer("vcpus", 0, kMaxInstanceVcpus);
    if (ps.has("quota_group")) c.parameter_server.quota_group = ps.string("quota_group");
    ps.finish();
  }
  const Json& types = r.required("instance_types");
  if (!types.is_array()) {
    detail::fail(function, r.key_path("instance_types"), JsonObjectReader::excerpt(types), "expected an array");
  }
  if (types.size() > std::size_t(kMaxInstanceTypes)) {
    detail::fail(function, r.key_path("instance_types"), std::to_string(types.size()) + " types",
                 "a catalog may list at most " + std::to_string(kMaxInstanceTypes) + " instance types");
  }
  for (std::size_t k = 0; k < types.size(); ++k) {
    JsonObjectReader t(types[k], r.key_path("instance_types") + "[" + std::to_string(k) + "]", function);
    t.expect_keys({"name", "gpus", "price_usd_per_hour", "quota", "pcie_bandwidth_bytes_per_s", "market",
                   "on_demand_price_usd_per_hour", "revocation_hazard_per_hour", "interruption_band", "vcpus",
                   "memory_mib", "network_performance", "gpu_model", "zone_prices_usd_per_hour", "price_observed_at",
                   "quota_groups"});
    InstanceType type;
    type.name = t.string("name");
    if (type.name.empty()) detail::fail(function, t.key_path("name"), "\"\"", "must not be empty");
    type.gpus = t.integer("gpus", 1);
    type.price_usd_per_hour = t.positive_number("price_usd_per_hour");
    type.quota = t.integer("quota", 0, kMaxQuota);
    if (t.has("pcie_bandwidth_bytes_per_s")) type.pcie_bandwidth_bytes_per_s = t.positive_number("pcie_bandwidth_bytes_per_s");
    if (t.has("market")) {
      const std::string market = t.string("market");
      const auto parsed = market_from_string(market);
      if (!parsed) detail::fail(function, t.key_path("market"), detail::quoted(market), "expected \"spot\" or \"on-demand\"");
      type.market = *parsed;
    }
    if (t.has("on_demand_price_usd_per_hour")) {
      type.on_demand_price_usd_per_hour = t.positive_number("on_demand_price_usd_per_hour");
    }
    if (t.has("revocation_hazard_per_hour")) type.revocation_hazard_per_hour = t.non_negative_number("revocation_hazard_per_hour");
    if (t.has("interruption_band")) type.interruption_band = t.string("interruption_band");
    if (t.has("vcpus")) type.vcpus = t.integer("vcpus", 0, kMaxInstanceVcpus);
    if (t.has("memory_mib")) type.memory_mib = t.integer("memory_mib", 0);
    if (t.has("network_performance")) type.network_performance = t.string("network_performance");
    if (t.has("gpu_model")) type.gpu_model = t.string("gpu_model");
    if (const Json* zones = t.optional("zone_prices_usd_per_hour")) {
      const std::string zones_path = t.key_path("zone_prices_usd_per_hour");
      if (!zones->is_object()) detail::fail(function, zones_path, JsonObjectReader::excerpt(*zones), "expected an object {AZ: price}");
      if (zones->size() > kMaxZonesPerType) {
        detail::fail(function, zones_path, std::to_string(zones->size()) + " zones",
                     "at most " + std::to_string(kMaxZonesPerType) + " Availability Zones per type");
      }
      for (auto it = zones->begin(); it != zones->end(); ++it) {
        const double price = t.as_number(it.value(), zones_path + "." + it.key());
        if (!(price > 0)) detail::fail(function, zones_path + "." + it.key(), price, "must be greater than zero");
        type.zone_prices_usd_per_hour[it.key()] = price;
      }
    }
    if (t.has("price_observed_at")) type.price_observed_at = t.string("price_observed_at");
    if (const Json* groups = t.optional("quota_groups")) {
      JsonObjectReader g(*groups, t.key_path("quota_groups"), function);
      g.expect_keys({"spot", "on-demand"});
      if (g.has("spot")) type.spot_quota_group = g.string("spot");
      if (g.has("on-demand")) type.on_demand_quota_group = g.string("on-demand");
      g.finish();
    }
    t.finish();
    c.instance_types.push_back(type);
  }
  if (const Json* groups = r.optional("quota_groups")) {
    const std::string groups_path = r.key_path("quota_groups");
    if (!groups->is_object()) detail::fail(function, groups_path, JsonObjectReader::excerpt(*groups), "expected an object {CODE: {name, vcpus, market}}");
    if (groups->size() > kMaxQuotaGroups) {
      detail::fail(function, groups_path, std::to_string(groups->size()) + " groups",
                   "a catalog may give at most " + std::to_string(kMaxQuotaGroups) + " quota groups");
    }
    for (auto it = groups->begin(); it != groups->end(); ++it) {
      JsonObjectReader g(it.value(), groups_path + "." + it.key(), function);
      g.expect_keys({"name", "vcpus", "market"});
      QuotaGroup group;
      group.code = it.key();
      group.name = g.has("name") ? g.string("name") : std::string();
      group.vcpus = g.integer("vcpus", 0, kMaxQuotaGroupVcpus);
      const std::string market = g.string("market");
      const auto parsed = market_from_string(market);
      if (!parsed) detail::fail(function, g.key_path("market"), detail::quoted(market), "expected \"spot\" or \"on-demand\"");
      group.market = *parsed;
      g.finish();
      c.quota_groups.push_back(group);
    }
  }
  if (const Json* missing = r.optional("missing_sources")) {
    const std::string missing_path = r.key_path("missing_sources");
    if (!missing->is_array() || missing->size() > 100) {
      detail::fail(function, missing_path, JsonObjectReader::excerpt(*missing), "expected an array of at most 100 strings");
    }
    for (std::size_t i = 0; i < missing->size(); ++i) {
      c.missing_sources.push_back(r.as_string((*missing)[i], missing_path + "[" + std::to_string(i) + "]"));
    }
  }
  if (const Json* scores = r.optional("placement_scores")) {
    const std::string scores_path = r.key_path("placement_scores");
    if (!scores->is_array() || scores->size() > kMaxPlacementScores) {
      detail::fail(function, scores_path, JsonObjectReader::excerpt(*scores),
                   "expected an array of at most " + std::to_string(kMaxPlacementScores) + " placement scores");
    }
    for (std::size_t i = 0; i < scores->size(); ++i) {
      JsonObjectReader q((*scores)[i], scores_path + "[" + std::to_string(i) + "]", function);
      q.expect_keys({"zone", "score", "target_capacity", "target_capacity_unit", "instance_types", "observed_at"});
      PlacementScore p;
      if (q.has("zone")) p.zone = q.string("zone");
      p.score = q.integer("score", 1, 10);
      p.target_capacity = q.integer("target_capacity", 1, kMaxQuotaGroupVcpus);
      if (q.has("target_capacity_unit")) p.target_capacity_unit = q.string("target_capacity_unit");
      const Json& types = q.required("instance_types");
      if (!types.is_array() || types.empty() || types.size() > kMaxPlacementScoreTypes) {
        detail::fail(function, q.key_path("instance_types"), JsonObjectReader::excerpt(types),
                     "expected an array of 1 to " + std::to_string(kMaxPlacementScoreTypes) + " instance type names");
      }
      for (std::size_t t = 0; t < types.size(); ++t) {
        p.instance_types.push_back(q.as_string(types[t], q.key_path("instance_types") + "[" + std::to_string(t) + "]"));
      }
      if (q.has("observed_at")) p.observed_at = q.string("observed_at");
      q.finish();
      c.placement_scores.push_back(std::move(p));
    }
  }
  r.finish();
  validate_at_path(function, path, "Catalog::validate", [&] { c.validate(); });
  return c;
}

// ---- Files -----------------------------------------------------------------------------------------------

/// Reads a workload JSON file; every error names the file and the key path.
[[nodiscard]] inline Workload read_workload_file(const std::string& path) {
  return workload_from_json(read_json_file(path), "workload", "read_workload_file(" + path + ")");
}

/// Reads a catalog JSON file; every error names the file and the key path.
[[nodiscard]] inline Catalog read_catalog_file(const std::string& path) {
  return catalog_from_json(read_json_file(path), "catalog", "read_catalog_file(" + path + ")");
}

// ---- Prediction ------------------------------------------------------------------------------------------

/// The docs/formats.md prediction object, plus target_loss, outcome, ps_charged and a per_type array.
/// Given the `workload` the prediction used, every per_type entry also says `profile_estimated_from`: the
/// type its profile was estimated from by GPU peak throughput (docs/model.md eq. (10)), or null when measured.
[[nodiscard]] inline Json to_json(const Prediction& p, const Workload* workload = nullptr) {
  Json per_type = Json::array();
  for (const WorkerTypeBreakdown& t : p.per_type) {
    Json entry = {{"type", t.type},
                  {"count", t.count},
                  {"gpus", t.gpus},
                  {"batch", t.batch},
                  {"iteration_time_s", t.iteration_time_s},
                  {"samples_per_s", t.samples_per_s},
                  {"price_usd_per_hour", t.price_usd_per_hour},
                  {"market", std::string(to_string(t.market))}};
    if (workload != nullptr) {
      const auto profile = workload->profiles.find(t.type);
      const bool estimated = profile != workload->profiles.end() && !profile->second.estimated_from.empty();
      entry["profile_estimated_from"] = estimated ? Json(profile->second.estimated_from) : Json(nullptr);
    }
    per_type.push_back(std::move(entry));
  }
  return {{"status", std::string(to_string(p.status))},
          {"message", p.message},
          {"outcome", std::string(to_string(p.outcome))},
          {"target_loss", p.target_loss},
          {"ps_charged", p.parameter_server_charged},
          {"cluster", to_json(p.cluster)},
          {"workers", p.workers},
          {"training_time_s", number_or_null(p.training_time_s)},
          {"cost_usd", number_or_null(p.cost_usd)},
          {"worker_cost_usd", number_or_null(p.worker_cost_usd)},
          {"ps_cost_usd", number_or_null(p.ps_cost_usd)},
          {"iterations", number_or_null(p.iterations)},
          {"weighted_batch", number_or_null(p.weighted_batch)},
          {"samples_per_s", number_or_null(p.samples_per_s)},
          {"iterations_per_s", number_or_null(p.iterations_per_s)},
          {"samples_to_train", number_or_null(p.samples_to_train)},
          {"convergence_coefficient", number_or_null(p.convergence_coefficient)},
          {"worker_bandwidth_bytes_per_s", number_or_null(p.worker_bandwidth_bytes_per_s)},
          {"contention_probability", number_or_null(p.contention_probability)},
          {"per_type", per_type}};
}

}  // namespace spotdnn::io
