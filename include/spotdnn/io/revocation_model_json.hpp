#pragma once
// SPDX-License-Identifier: MIT
/// @file io/revocation_model_json.hpp The revocation-model document: kind "spotdnn.revocations",
/// schema_version 1 (docs/revocations.md), written by to_json and read strictly by revocation_model_from_json.
///
///     {"kind": "spotdnn.revocations", "schema_version": 1,
///      "burst_window_s": 180, "confidence_level": 0.95, "age_bin_edges_s": [0, 600, ...],
///      "assumptions": ["..."],
///      "pools": [{"type": "r5.16xlarge", "zone": "us-east-1c", "kind": "lifetimes", "sources": ["..."],
///                 "observed_from": "2023-04-19", "from_s": 0, "to_s": 544000, "tick_s": 34,
///                 "instances": 86, "preemptions": 85, "exposure_s": 233410,
///                 "hazard_by_age": [{"from_age_s": 0, "to_age_s": 600, "events": 9, "exposure_s": 41242,
///                                    "hazard_per_hour": 0.78, "lower_per_hour": 0.36, "upper_per_hour": 1.49},
///                                   ..., {..., "to_age_s": null, ...}],
///                 "trigger_hazard_by_age": [...],
///                 "parametric": {"exponential_hazard_per_hour": ..., "exponential_log_likelihood": ...,
///                                "weibull_shape": ..., "weibull_scale_s": ..., "weibull_log_likelihood": ...,
///                                "piecewise_log_likelihood": ..., "piecewise_parameters": 8,
///                                "best_by_aic": "piecewise"},
///                 "start": {"up_share": 0.43, "age_quantiles_s": [101 numbers], "wait": WAIT},
///                 "replacement_wait": WAIT,
///                 "clustering": {"window_s": 180, "share_with_another": 0.1, "share_by_chance": 0.05,
///                                "bursts": 80, "largest_burst": 2, "co_preemption_probability": 0,
///                                "observed": false, "shocks": 3, "shock_rate_per_hour": 0.02,
///                                "shock_hit_probability": 0.5},
///                 "gang": GANG,
///                 "in_state": []}],          // or 2 (calm, then stormy): {"observed_s": x,
///                                            //   "trigger_hazard_by_age": [] or bins as the pool's, "start": START,
///                                            //   "replacement_wait": WAIT, "gang": GANG, "shock_rate_per_hour": x}
///      "regions": [{"region": "us-east-1", "zones": ["us-east-1b", "us-east-1c"], "window_s": 180,
///                   "preemptions": 120, "share_with_other_zone": 0.05, "share_by_chance": 0.02,
///                   "co_preemption_probability": 0.01, "joint_pools": [...], "joint_up_share": [2^n shares]}],
///      "regimes": [{"region": "us-east-1", "pools": ["p3.2xlarge@us-east-1b", ...], "bin_s": 1800, "bins": 304,
///                   "log_likelihood": -524.7, "one_state_log_likelihood": -562.1,
///                   "states": [{"time_share": 0.78, "hazard_multiplier": 0.82, "arrival_multiplier": 1.9,
///                               "leave_rate_per_hour": 0.08}, {...}],
///                   "joint_up_share_by_state": []}]}   // or [[2^n shares], [2^n shares]]
///
/// START = {"up_share": x, "age_quantiles_s": [101 numbers, or none], "wait": WAIT}.
/// WAIT = {"observed": N, "none_came": N, "none_share": x, "quantiles_s": [101 numbers, or none]}.
/// GANG = null or {"requested": N, "count_share": [N + 1 shares]}.
/// The clustering's shock keys, the regions' joint keys, "in_state" and "regimes" may be left out (documents
/// written before them read as without them); the writer always writes them.
/// Non-finite numbers are written as null; only the ones that may be infinite read back from null (the
/// last bin's to_age_s, an upper_per_hour without exposure, the Weibull scale without preemptions).
/// The reader refuses unknown and missing keys, another kind or schema_version (saying what to do), and
/// out-of-range numbers: counts and hazards below 0, shares outside [0, 1], quantile lists that are
/// neither empty nor 101 non-decreasing numbers from 0, gang shares that do not sum to 1 within 1e-9,
/// age bins that are not the document's edges, and a pool given twice. Market regimes (MarketRegimes): a
/// region given once, non-empty and printable; exactly 2 states, time shares in [0, 1] and not both 0,
/// hazard and arrival multipliers finite and not negative, leave rates from 0 to 3600 per hour; bin_s above
/// 0, bins a whole number from 0, finite log-likelihoods; each of its pools (TYPE@ZONE) a pool of the
/// document in a zone of the region, listed once and with 2 in_state entries; joint_up_share_by_state
/// empty or 2 lists of as many shares as the region's joint_up_share (which must be there), each in [0, 1]
/// and summing to 1 within 1e-9. A pool's in_state has 0 or 2 entries, and 2 only when its region's
/// regimes entry lists it; their observed_s not negative, shock rates from 0 to 3600 per hour, and their
/// hazard bins, start, waits and gang checked as the pool's own. A document read and written again is the same text
/// (doubles round-trip exactly).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/io/json.hpp"
#include "spotdnn/revocation/revocation_model.hpp"
#include "spotdnn/revocation/trace.hpp"

namespace spotdnn::io {

/// The most age bins (as RevocationFitOptions allows: kMaxAgeBins of revocation/fit_revocations.hpp), pools,
/// regions and list entries (sources, zones, assumptions) a document may have.
/// The most a market state's leave rate and a pool's shock rate in a state may be (per hour: once a second).
inline constexpr std::size_t kMaxRevocationModelBins = 1000;
inline constexpr std::size_t kMaxRevocationModelPools = 10000;
inline constexpr std::size_t kMaxRevocationModelListEntries = 10000;
inline constexpr double kMaxRevocationModelRatePerHour = 3600;

namespace detail {

inline Json numbers_or_null(const std::vector<double>& values) {
  Json out = Json::array();
  for (double v : values) out.push_back(number_or_null(v));
  return out;
}

inline Json to_json(const HazardBin& b) {
  return {{"from_age_s", b.from_age_s},
          {"to_age_s", number_or_null(b.to_age_s)},
          {"events", b.events},
          {"exposure_s", number_or_null(b.exposure_s)},
          {"hazard_per_hour", number_or_null(b.hazard_per_hour)},
          {"lower_per_hour", number_or_null(b.lower_per_hour)},
          {"upper_per_hour", number_or_null(b.upper_per_hour)}};
}

inline Json to_json(const WaitDistribution& w) {
  return {{"observed", w.observed},
          {"none_came", w.none_came},
          {"none_share", number_or_null(w.none_share)},
          {"quantiles_s", numbers_or_null(w.quantiles_s)}};
}

inline Json to_json(const StartState& s) {
  return {{"up_share", number_or_null(s.up_share)},
          {"age_quantiles_s", numbers_or_null(s.age_quantiles_s)},
          {"wait", to_json(s.wait)}};
}

inline Json to_json(const std::optional<GangObtainability>& gang) {
  if (!gang) return nullptr;
  return {{"requested", gang->requested}, {"count_share", numbers_or_null(gang->count_share)}};
}

inline Json to_json(const PoolInMarketState& s) {
  Json trigger = Json::array();
  for (const HazardBin& b : s.trigger_hazard_by_age) trigger.push_back(to_json(b));
  return {{"observed_s", number_or_null(s.observed_s)},
          {"trigger_hazard_by_age", trigger},
          {"start", to_json(s.start)},
          {"replacement_wait", to_json(s.replacement_wait)},
          {"gang", to_json(s.gang)},
          {"shock_rate_per_hour", number_or_null(s.shock_rate_per_hour)}};
}

inline Json to_json(const MarketRegimes& r) {
  Json states = Json::array();
  for (const MarketState& s : r.states) {
    states.push_back({{"time_share", number_or_null(s.time_share)},
                      {"hazard_multiplier", number_or_null(s.hazard_multiplier)},
                      {"arrival_multiplier", number_or_null(s.arrival_multiplier)},
                      {"leave_rate_per_hour", number_or_null(s.leave_rate_per_hour)}});
  }
  Json joint = Json::array();
  for (const std::vector<double>& shares : r.joint_up_share_by_state) joint.push_back(numbers_or_null(shares));
  return {{"region", r.region},
          {"pools", r.pools},
          {"bin_s", number_or_null(r.bin_s)},
          {"bins", r.bins},
          {"log_likelihood", number_or_null(r.log_likelihood)},
          {"one_state_log_likelihood", number_or_null(r.one_state_log_likelihood)},
          {"states", states},
          {"joint_up_share_by_state", joint}};
}

}  // namespace detail

/// The revocation-model document of `model` (see the file comment).
[[nodiscard]] inline Json to_json(const RevocationModel& model) {
  Json pools = Json::array();
  for (const PoolModel& p : model.pools) {
    Json hazard = Json::array(), trigger = Json::array();
    for (const HazardBin& b : p.hazard_by_age) hazard.push_back(detail::to_json(b));
    for (const HazardBin& b : p.trigger_hazard_by_age) trigger.push_back(detail::to_json(b));
    const ParametricLifetimeFit& f = p.parametric;
    Json in_state = Json::array();
    for (const PoolInMarketState& s : p.in_state) in_state.push_back(detail::to_json(s));
    pools.push_back({{"type", p.pool.type},
                     {"zone", p.pool.zone},
                     {"kind", std::string(spotdnn::to_string(p.kind))},
                     {"sources", p.sources},
                     {"observed_from", p.observed_from},
                     {"from_s", number_or_null(p.from_s)},
                     {"to_s", number_or_null(p.to_s)},
                     {"tick_s", number_or_null(p.tick_s)},
                     {"instances", p.instances},
                     {"preemptions", p.preemptions},
                     {"exposure_s", number_or_null(p.exposure_s)},
                     {"hazard_by_age", hazard},
                     {"trigger_hazard_by_age", trigger},
                     {"parametric",
                      {{"exponential_hazard_per_hour", number_or_null(f.exponential_hazard_per_hour)},
                       {"exponential_log_likelihood", number_or_null(f.exponential_log_likelihood)},
                       {"weibull_shape", number_or_null(f.weibull_shape)},
                       {"weibull_scale_s", number_or_null(f.weibull_scale_s)},
                       {"weibull_log_likelihood", number_or_null(f.weibull_log_likelihood)},
                       {"piecewise_log_likelihood", number_or_null(f.piecewise_log_likelihood)},
                       {"piecewise_parameters", f.piecewise_parameters},
                       {"best_by_aic", f.best_by_aic}}},
                     {"start", detail::to_json(p.start)},
                     {"replacement_wait", detail::to_json(p.replacement_wait)},
                     {"clustering",
                      {{"window_s", number_or_null(p.clustering.window_s)},
                       {"share_with_another", number_or_null(p.clustering.share_with_another)},
                       {"share_by_chance", number_or_null(p.clustering.share_by_chance)},
                       {"bursts", p.clustering.bursts},
                       {"largest_burst", p.clustering.largest_burst},
                       {"co_preemption_probability", number_or_null(p.clustering.co_preemption_probability)},
                       {"observed", p.clustering.observed},
                       {"shocks", p.clustering.shocks},
                       {"shock_rate_per_hour", number_or_null(p.clustering.shock_rate_per_hour)},
                       {"shock_hit_probability", number_or_null(p.clustering.shock_hit_probability)}}},
                     {"gang", detail::to_json(p.gang)},
                     {"in_state", in_state}});
  }
  Json regions = Json::array();
  for (const RegionCorrelation& r : model.regions) {
    regions.push_back({{"region", r.region},
                       {"zones", r.zones},
                       {"window_s", number_or_null(r.window_s)},
                       {"preemptions", r.preemptions},
                       {"share_with_other_zone", number_or_null(r.share_with_other_zone)},
                       {"share_by_chance", number_or_null(r.share_by_chance)},
                       {"co_preemption_probability", number_or_null(r.co_preemption_probability)},
                       {"joint_pools", r.joint_pools},
                       {"joint_up_share", detail::numbers_or_null(r.joint_up_share)}});
  }
  Json regimes = Json::array();
  for (const MarketRegimes& r : model.regimes) regimes.push_back(detail::to_json(r));
  return {{"kind", kRevocationModelKind},
          {"schema_version", kRevocationModelSchemaVersion},
          {"burst_window_s", number_or_null(model.burst_window_s)},
          {"confidence_level", number_or_null(model.confidence_level)},
          {"age_bin_edges_s", detail::numbers_or_null(model.age_bin_edges_s)},
          {"assumptions", model.assumptions},
          {"pools", pools},
          {"regions", regions},
          {"regimes", regimes}};
}

namespace detail {

/// The typed, range-checked reads of one revocation-model object.
class RevocationModelReader {
 public:
  explicit RevocationModelReader(std::string function) : function_(std::move(function)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& value, const std::string& why) const {
    spotdnn::detail::fail(function_, path, value, why);
  }

  /// An array of at most `most` entries.
  const Json& array(JsonObjectReader& r, std::string_view key, std::size_t most) const {
    const Json& v = r.required(key);
    if (!v.is_array()) fail(r.key_path(key), JsonObjectReader::excerpt(v), "expected an array");
    if (v.size() > most) fail(r.key_path(key), std::to_string(v.size()) + " entries", "at most " + std::to_string(most) + " allowed");
    return v;
  }

  /// A number from `low` to `high`; `infinite_from_null` reads null as +inf.
  double number_at(JsonObjectReader& r, const Json& v, const std::string& path, double low, double high,
                   bool infinite_from_null = false) const {
    if (infinite_from_null && v.is_null()) return std::numeric_limits<double>::infinity();
    const double d = r.as_number(v, path);
    if (d < low || d > high) {
      fail(path, spotdnn::detail::format_number(d),
           high == std::numeric_limits<double>::max()
               ? (low == 0 ? std::string("must not be negative") : "must be at least " + spotdnn::detail::format_number(low))
               : "must be from " + spotdnn::detail::format_number(low) + " to " + spotdnn::detail::format_number(high));
    }
    return d;
  }
  double number(JsonObjectReader& r, std::string_view key, double low = -std::numeric_limits<double>::max(),
                double high = std::numeric_limits<double>::max(), bool infinite_from_null = false) const {
    return number_at(r, r.required(key), r.key_path(key), low, high, infinite_from_null);
  }
  double share(JsonObjectReader& r, std::string_view key) const { return number(r, key, 0, 1); }
  double non_negative(JsonObjectReader& r, std::string_view key, bool infinite_from_null = false) const {
    return number(r, key, 0, std::numeric_limits<double>::max(), infinite_from_null);
  }
  int count(JsonObjectReader& r, std::string_view key) const { return r.integer(key, 0, std::numeric_limits<int>::max()); }

  std::string name(JsonObjectReader& r, std::string_view key) const {
    const std::string s = r.string(key);
    spotdnn::detail::require_non_empty(function_, r.key_path(key), s);
    spotdnn::detail::require_printable_name(function_, r.key_path(key), s);
    return s;
  }

  std::vector<std::string> strings(JsonObjectReader& r, std::string_view key) const {
    const Json& v = array(r, key, kMaxRevocationModelListEntries);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(r.as_string(v[i], r.key_path(key) + "[" + std::to_string(i) + "]"));
    return out;
  }

  /// Empty, or 101 non-decreasing numbers from 0.
  std::vector<double> quantiles(JsonObjectReader& r, std::string_view key) const {
    const Json& v = array(r, key, 101);
    const std::string path = r.key_path(key);
    if (!v.empty() && v.size() != 101) fail(path, std::to_string(v.size()) + " numbers", "expected 101 quantiles (0%, 1%, ..., 100%) or none");
    std::vector<double> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      const double q = number_at(r, v[i], at, 0.0, std::numeric_limits<double>::max());
      if (i > 0 && q < out.back()) {
        fail(at, spotdnn::detail::format_number(q),
             "quantiles must not decrease (the one before is " + spotdnn::detail::format_number(out.back()) + ")");
      }
      out.push_back(q);
    }
    return out;
  }

  WaitDistribution wait(const Json& json, const std::string& path) const {
    JsonObjectReader r(json, path, function_);
    r.expect_keys({"observed", "none_came", "none_share", "quantiles_s"});
    WaitDistribution w;
    w.observed = count(r, "observed");
    w.none_came = count(r, "none_came");
    if (w.none_came > w.observed) {
      fail(r.key_path("none_came"), std::to_string(w.none_came), "must not exceed observed = " + std::to_string(w.observed));
    }
    w.none_share = share(r, "none_share");
    w.quantiles_s = quantiles(r, "quantiles_s");
    r.finish();
    return w;
  }

  std::vector<HazardBin> bins(JsonObjectReader& r, std::string_view key, const std::vector<double>& edges) const {
    const Json& v = array(r, key, kMaxRevocationModelBins);
    const std::string path = r.key_path(key);
    if (v.size() != edges.size()) {
      fail(path, std::to_string(v.size()) + " bins", "expected one bin per age_bin_edges_s entry (" + std::to_string(edges.size()) + ")");
    }
    std::vector<HazardBin> out;
    for (std::size_t b = 0; b < v.size(); ++b) {
      JsonObjectReader br(v[b], path + "[" + std::to_string(b) + "]", function_);
      br.expect_keys({"from_age_s", "to_age_s", "events", "exposure_s", "hazard_per_hour", "lower_per_hour", "upper_per_hour"});
      HazardBin bin;
      bin.from_age_s = non_negative(br, "from_age_s");
      if (bin.from_age_s != edges[b]) {
        fail(br.key_path("from_age_s"), spotdnn::detail::format_number(bin.from_age_s),
             "must be age_bin_edges_s[" + std::to_string(b) + "] = " + spotdnn::detail::format_number(edges[b]));
      }
      const double to = b + 1 < edges.size() ? edges[b + 1] : std::numeric_limits<double>::infinity();
      const Json& to_json = br.required("to_age_s");
      bin.to_age_s = to_json.is_null() ? std::numeric_limits<double>::infinity() : br.as_number(to_json, br.key_path("to_age_s"));
      if (bin.to_age_s != to) {
        fail(br.key_path("to_age_s"), JsonObjectReader::excerpt(to_json),
             std::isinf(to) ? "the last bin is open above: expected null" : "must be the next edge, " + spotdnn::detail::format_number(to));
      }
      bin.events = count(br, "events");
      bin.exposure_s = non_negative(br, "exposure_s");
      bin.hazard_per_hour = non_negative(br, "hazard_per_hour");
      bin.lower_per_hour = non_negative(br, "lower_per_hour");
      bin.upper_per_hour = non_negative(br, "upper_per_hour", /*infinite_from_null=*/true);
      if (bin.lower_per_hour > bin.upper_per_hour) {
        fail(br.key_path("lower_per_hour"), spotdnn::detail::format_number(bin.lower_per_hour),
             "must not exceed upper_per_hour = " + spotdnn::detail::format_number(bin.upper_per_hour));
      }
      br.finish();
      out.push_back(bin);
    }
    return out;
  }

  StartState start(const Json& json, const std::string& path) const {
    JsonObjectReader s(json, path, function_);
    s.expect_keys({"up_share", "age_quantiles_s", "wait"});
    StartState out;
    out.up_share = share(s, "up_share");
    out.age_quantiles_s = quantiles(s, "age_quantiles_s");
    out.wait = wait(s.required("wait"), s.key_path("wait"));
    s.finish();
    return out;
  }

  /// Shares in [0, 1] summing to 1 within 1e-9, `expected` of them (`expected_why` says why).
  std::vector<double> shares_summing_to_1(JsonObjectReader& r, const Json& v, const std::string& path, std::size_t expected,
                                          const std::string& expected_why) const {
    if (!v.is_array()) fail(path, JsonObjectReader::excerpt(v), "expected an array");
    if (v.size() != expected) fail(path, std::to_string(v.size()) + " shares", "expected " + expected_why);
    std::vector<double> out;
    double sum = 0;
    for (std::size_t k = 0; k < v.size(); ++k) {
      out.push_back(number_at(r, v[k], path + "[" + std::to_string(k) + "]", 0, 1));
      sum += out.back();
    }
    if (!(std::abs(sum - 1) <= 1e-9)) fail(path, "sum " + spotdnn::detail::format_number(sum), "the shares must sum to 1 (within 1e-9)");
    return out;
  }

  /// null (none) or {"requested": N, "count_share": [N + 1 shares]}.
  std::optional<GangObtainability> gang(const Json& g, const std::string& path) const {
    if (g.is_null()) return std::nullopt;
    JsonObjectReader gr(g, path, function_);
    gr.expect_keys({"requested", "count_share"});
    GangObtainability out;
    out.requested = gr.integer("requested", 1, 100000);
    const Json& shares = array(gr, "count_share", std::size_t(out.requested) + 1);
    out.count_share = shares_summing_to_1(gr, shares, gr.key_path("count_share"), std::size_t(out.requested) + 1,
                                          "requested + 1 = " + std::to_string(out.requested + 1) + " (k = 0..requested)");
    gr.finish();
    return out;
  }

  PoolInMarketState in_state(const Json& json, const std::string& path, const std::vector<double>& edges) const {
    JsonObjectReader r(json, path, function_);
    r.expect_keys({"observed_s", "trigger_hazard_by_age", "start", "replacement_wait", "gang", "shock_rate_per_hour"});
    PoolInMarketState s;
    s.observed_s = non_negative(r, "observed_s");
    // [] (the pool's own hazard in this state too) or one bin per edge.
    if (!array(r, "trigger_hazard_by_age", kMaxRevocationModelBins).empty()) s.trigger_hazard_by_age = bins(r, "trigger_hazard_by_age", edges);
    s.start = start(r.required("start"), r.key_path("start"));
    s.replacement_wait = wait(r.required("replacement_wait"), r.key_path("replacement_wait"));
    s.gang = gang(r.required("gang"), r.key_path("gang"));
    s.shock_rate_per_hour = number(r, "shock_rate_per_hour", 0, kMaxRevocationModelRatePerHour);
    r.finish();
    return s;
  }

  /// One regimes entry, checked by itself (revocation_model_from_json checks it against the pools and
  /// regions).
  MarketRegimes regimes(const Json& json, const std::string& path) const {
    JsonObjectReader r(json, path, function_);
    r.expect_keys({"region", "pools", "bin_s", "bins", "log_likelihood", "one_state_log_likelihood", "states",
                   "joint_up_share_by_state"});
    MarketRegimes m;
    m.region = name(r, "region");
    m.pools = strings(r, "pools");
    m.bin_s = r.positive_number("bin_s");
    m.bins = count(r, "bins");
    m.log_likelihood = r.number("log_likelihood");
    m.one_state_log_likelihood = r.number("one_state_log_likelihood");
    {
      const Json& states = array(r, "states", kMaxRevocationModelListEntries);
      const std::string states_path = r.key_path("states");
      if (states.size() != 2) fail(states_path, std::to_string(states.size()) + " states", "expected 2 (calm, then stormy)");
      for (std::size_t k = 0; k < states.size(); ++k) {
        JsonObjectReader sr(states[k], states_path + "[" + std::to_string(k) + "]", function_);
        sr.expect_keys({"time_share", "hazard_multiplier", "arrival_multiplier", "leave_rate_per_hour"});
        MarketState s;
        s.time_share = share(sr, "time_share");
        s.hazard_multiplier = non_negative(sr, "hazard_multiplier");
        s.arrival_multiplier = non_negative(sr, "arrival_multiplier");
        s.leave_rate_per_hour = number(sr, "leave_rate_per_hour", 0, kMaxRevocationModelRatePerHour);
        sr.finish();
        m.states.push_back(s);
      }
      if (!(m.states[0].time_share + m.states[1].time_share > 0)) {
        fail(states_path + "[1].time_share", spotdnn::detail::format_number(m.states[1].time_share),
             "the two states' time shares must not both be 0");
      }
    }
    {
      const Json& lists = array(r, "joint_up_share_by_state", kMaxRevocationModelListEntries);
      const std::string lists_path = r.key_path("joint_up_share_by_state");
      if (!lists.empty() && lists.size() != 2) {
        fail(lists_path, std::to_string(lists.size()) + " lists", "expected one per state (2) or none");
      }
      for (std::size_t k = 0; k < lists.size(); ++k) {
        const std::string at = lists_path + "[" + std::to_string(k) + "]";
        if (!lists[k].is_array()) fail(at, JsonObjectReader::excerpt(lists[k]), "expected an array");
        const std::size_t most = std::size_t(1) << kMaxJointPools;
        if (lists[k].size() > most) fail(at, std::to_string(lists[k].size()) + " entries", "at most " + std::to_string(most) + " allowed");
        // The count is checked against the region's joint_up_share by revocation_model_from_json.
        m.joint_up_share_by_state.push_back(shares_summing_to_1(r, lists[k], at, lists[k].size(), ""));
      }
    }
    r.finish();
    return m;
  }

  PoolModel pool(const Json& json, const std::string& path, const std::vector<double>& edges) const {
    JsonObjectReader r(json, path, function_);
    r.expect_keys({"type", "zone", "kind", "sources", "observed_from", "from_s", "to_s", "tick_s", "instances", "preemptions",
                   "exposure_s", "hazard_by_age", "trigger_hazard_by_age", "parametric", "start", "replacement_wait",
                   "clustering", "gang", "in_state"});
    PoolModel p;
    p.pool.type = name(r, "type");
    p.pool.zone = name(r, "zone");
    {
      const std::string kind = r.string("kind");
      const auto parsed = trace_kind_from_string(kind);
      if (!parsed) fail(r.key_path("kind"), spotdnn::detail::quoted(kind), "expected lifetimes, availability, counts or events");
      p.kind = *parsed;
    }
    p.sources = strings(r, "sources");
    p.observed_from = r.string("observed_from");
    p.from_s = number(r, "from_s");
    p.to_s = number(r, "to_s");
    if (p.to_s < p.from_s) fail(r.key_path("to_s"), spotdnn::detail::format_number(p.to_s), "must not come before from_s = " + spotdnn::detail::format_number(p.from_s));
    p.tick_s = r.positive_number("tick_s");
    p.instances = count(r, "instances");
    p.preemptions = count(r, "preemptions");
    p.exposure_s = non_negative(r, "exposure_s");
    p.hazard_by_age = bins(r, "hazard_by_age", edges);
    p.trigger_hazard_by_age = bins(r, "trigger_hazard_by_age", edges);
    {
      JsonObjectReader f(r.required("parametric"), r.key_path("parametric"), function_);
      f.expect_keys({"exponential_hazard_per_hour", "exponential_log_likelihood", "weibull_shape", "weibull_scale_s",
                     "weibull_log_likelihood", "piecewise_log_likelihood", "piecewise_parameters", "best_by_aic"});
      ParametricLifetimeFit& fit = p.parametric;
      fit.exponential_hazard_per_hour = non_negative(f, "exponential_hazard_per_hour");
      fit.exponential_log_likelihood = f.number("exponential_log_likelihood");
      fit.weibull_shape = f.positive_number("weibull_shape");
      fit.weibull_scale_s = f.required("weibull_scale_s").is_null() ? std::numeric_limits<double>::infinity()
                                                                     : f.positive_number("weibull_scale_s");
      fit.weibull_log_likelihood = f.number("weibull_log_likelihood");
      fit.piecewise_log_likelihood = f.number("piecewise_log_likelihood");
      fit.piecewise_parameters = f.integer("piecewise_parameters", 0, int(edges.size()));
      fit.best_by_aic = f.string("best_by_aic");
      if (fit.best_by_aic != "exponential" && fit.best_by_aic != "weibull" && fit.best_by_aic != "piecewise") {
        fail(f.key_path("best_by_aic"), spotdnn::detail::quoted(fit.best_by_aic), "expected exponential, weibull or piecewise");
      }
      f.finish();
    }
    p.start = start(r.required("start"), r.key_path("start"));
    p.replacement_wait = wait(r.required("replacement_wait"), r.key_path("replacement_wait"));
    {
      JsonObjectReader c(r.required("clustering"), r.key_path("clustering"), function_);
      c.expect_keys({"window_s", "share_with_another", "share_by_chance", "bursts", "largest_burst",
                     "co_preemption_probability", "observed", "shocks", "shock_rate_per_hour", "shock_hit_probability"});
      PoolClustering& k = p.clustering;
      k.window_s = c.positive_number("window_s");
      k.share_with_another = share(c, "share_with_another");
      k.share_by_chance = share(c, "share_by_chance");
      k.bursts = count(c, "bursts");
      k.largest_burst = count(c, "largest_burst");
      k.co_preemption_probability = share(c, "co_preemption_probability");
      k.observed = c.boolean("observed");
      // Optional (a model without them has no shocks: bursts only as co-preemption).
      if (c.has("shocks") || c.has("shock_rate_per_hour") || c.has("shock_hit_probability")) {
        k.shocks = count(c, "shocks");
        k.shock_rate_per_hour = non_negative(c, "shock_rate_per_hour");
        k.shock_hit_probability = share(c, "shock_hit_probability");
      }
      c.finish();
    }
    p.gang = gang(r.required("gang"), r.key_path("gang"));
    // Optional (a model without it has no market states).
    if (r.has("in_state")) {
      const Json& states = array(r, "in_state", kMaxRevocationModelListEntries);
      const std::string states_path = r.key_path("in_state");
      if (!states.empty() && states.size() != 2) {
        fail(states_path, std::to_string(states.size()) + " entries", "expected 2 (calm, then stormy) or none");
      }
      for (std::size_t k = 0; k < states.size(); ++k) p.in_state.push_back(in_state(states[k], states_path + "[" + std::to_string(k) + "]", edges));
    }
    r.finish();
    return p;
  }

  RegionCorrelation region(const Json& json, const std::string& path) const {
    JsonObjectReader r(json, path, function_);
    r.expect_keys({"region", "zones", "window_s", "preemptions", "share_with_other_zone", "share_by_chance",
                   "co_preemption_probability", "joint_pools", "joint_up_share"});
    RegionCorrelation c;
    c.region = name(r, "region");
    const Json& zones = array(r, "zones", kMaxRevocationModelListEntries);
    std::set<std::string> seen;
    for (std::size_t z = 0; z < zones.size(); ++z) {
      const std::string at = r.key_path("zones") + "[" + std::to_string(z) + "]";
      const std::string zone = r.as_string(zones[z], at);
      spotdnn::detail::require_non_empty(function_, at, zone);
      spotdnn::detail::require_printable_name(function_, at, zone);
      if (!seen.insert(zone).second) fail(at, spotdnn::detail::quoted(zone), "a zone may be listed once");
      c.zones.push_back(zone);
    }
    if (c.zones.size() < 2) fail(r.key_path("zones"), std::to_string(c.zones.size()) + " zones", "a region correlation needs at least two zones");
    c.window_s = r.positive_number("window_s");
    c.preemptions = count(r, "preemptions");
    c.share_with_other_zone = share(r, "share_with_other_zone");
    c.share_by_chance = share(r, "share_by_chance");
    c.co_preemption_probability = share(r, "co_preemption_probability");
    // Optional (a model without them draws the zones' start states independently).
    if (r.has("joint_pools") || r.has("joint_up_share")) {
      const Json& pools = array(r, "joint_pools", std::size_t(kMaxJointPools));
      std::set<std::string> named;
      for (std::size_t i = 0; i < pools.size(); ++i) {
        const std::string at = r.key_path("joint_pools") + "[" + std::to_string(i) + "]";
        const std::string pool = r.as_string(pools[i], at);
        spotdnn::detail::require_non_empty(function_, at, pool);
        spotdnn::detail::require_printable_name(function_, at, pool);
        if (!named.insert(pool).second) fail(at, spotdnn::detail::quoted(pool), "a pool may be listed once");
        c.joint_pools.push_back(pool);
      }
      const std::size_t patterns = c.joint_pools.empty() ? 0 : std::size_t(1) << c.joint_pools.size();
      const Json& shares = array(r, "joint_up_share", std::size_t(1) << kMaxJointPools);
      const std::string shares_path = r.key_path("joint_up_share");
      if (c.joint_pools.size() == 1 || shares.size() != patterns) {
        fail(shares_path, std::to_string(shares.size()) + " shares",
             "expected 2^n for the n >= 2 joint_pools (" + std::to_string(c.joint_pools.size()) + " given), or both empty");
      }
      double sum = 0;
      for (std::size_t k = 0; k < shares.size(); ++k) {
        c.joint_up_share.push_back(number_at(r, shares[k], shares_path + "[" + std::to_string(k) + "]", 0, 1));
        sum += c.joint_up_share.back();
      }
      if (!shares.empty() && !(std::abs(sum - 1) <= 1e-9)) {
        fail(shares_path, "sum " + spotdnn::detail::format_number(sum), "the shares must sum to 1 (within 1e-9)");
      }
    }
    r.finish();
    return c;
  }

 private:
  std::string function_;
};

}  // namespace detail

/// Reads a revocation-model document (see the file comment); every error names the key path under `path`.
[[nodiscard]] inline RevocationModel revocation_model_from_json(const Json& json, const std::string& path = "revocations",
                                                               const std::string& function = "revocation_model_from_json") {
  const std::string write_one = "write one with `spotdnn revocations fit`";
  if (!json.is_object()) {
    spotdnn::detail::fail(function, path, JsonObjectReader::excerpt(json), "not a spotdnn revocation model (expected a JSON object): " + write_one);
  }
  JsonObjectReader r(json, path, function);
  r.expect_keys({"kind", "schema_version", "burst_window_s", "confidence_level", "age_bin_edges_s", "assumptions", "pools", "regions",
                 "regimes"});
  if (!r.has("kind")) {
    spotdnn::detail::fail(function, r.key_path("kind"), "missing", "not a spotdnn revocation model (no kind): " + write_one);
  }
  {
    const Json& kind = r.required("kind");
    if (!kind.is_string() || kind.get<std::string>() != kRevocationModelKind) {
      spotdnn::detail::fail(function, r.key_path("kind"), JsonObjectReader::excerpt(kind),
                            std::string("not a revocation model: expected \"") + kRevocationModelKind + "\" (" + write_one + ")");
    }
  }
  {
    const std::string version_path = r.key_path("schema_version");
    const std::string reads = "this spotdnn reads schema_version " + std::to_string(kRevocationModelSchemaVersion);
    const Json* version = r.optional("schema_version");
    if (version == nullptr) spotdnn::detail::fail(function, version_path, "missing", reads + ": fit the model again with this spotdnn");
    if (!version->is_number_integer()) {
      spotdnn::detail::fail(function, version_path, JsonObjectReader::excerpt(*version),
                            "expected the whole number " + std::to_string(kRevocationModelSchemaVersion) + ": " + reads);
    }
    if (*version != kRevocationModelSchemaVersion) {
      const bool newer = version->is_number_unsigned() ? version->get<std::uint64_t>() > std::uint64_t(kRevocationModelSchemaVersion)
                                                       : version->get<std::int64_t>() > kRevocationModelSchemaVersion;
      spotdnn::detail::fail(function, version_path, version->dump(),
                            reads + (newer ? ": the model was written by a newer spotdnn; read it with that version"
                                           : ": fit the model again with this spotdnn"));
    }
  }
  const detail::RevocationModelReader read(function);
  RevocationModel m;
  m.burst_window_s = r.positive_number("burst_window_s");
  m.confidence_level = r.number("confidence_level");
  if (!(m.confidence_level > 0 && m.confidence_level < 1)) {
    spotdnn::detail::fail(function, r.key_path("confidence_level"), m.confidence_level, "must lie strictly between 0 and 1");
  }
  {
    const Json& edges = read.array(r, "age_bin_edges_s", kMaxRevocationModelBins);
    const std::string edges_path = r.key_path("age_bin_edges_s");
    if (edges.empty()) spotdnn::detail::fail(function, edges_path, "[]", "needs at least one edge, 0");
    for (std::size_t b = 0; b < edges.size(); ++b) {
      const std::string at = edges_path + "[" + std::to_string(b) + "]";
      const double e = r.as_number(edges[b], at);
      if (b == 0 && e != 0) spotdnn::detail::fail(function, at, e, "the first age bin must start at 0");
      if (b > 0 && !(e > m.age_bin_edges_s.back())) spotdnn::detail::fail(function, at, e, "age bin edges must increase");
      m.age_bin_edges_s.push_back(e);
    }
  }
  m.assumptions = read.strings(r, "assumptions");
  {
    const Json& pools = read.array(r, "pools", kMaxRevocationModelPools);
    std::set<PoolId> seen;
    for (std::size_t k = 0; k < pools.size(); ++k) {
      const std::string at = r.key_path("pools") + "[" + std::to_string(k) + "]";
      PoolModel p = read.pool(pools[k], at, m.age_bin_edges_s);
      if (!seen.insert(p.pool).second) read.fail(at, spotdnn::detail::quoted(p.pool.name()), "a pool (type and zone) may be given once");
      m.pools.push_back(std::move(p));
    }
  }
  {
    const Json& regions = read.array(r, "regions", kMaxRevocationModelPools);
    std::set<std::string> seen;
    for (std::size_t k = 0; k < regions.size(); ++k) {
      const std::string at = r.key_path("regions") + "[" + std::to_string(k) + "]";
      RegionCorrelation c = read.region(regions[k], at);
      if (!seen.insert(c.region).second) read.fail(at, spotdnn::detail::quoted(c.region), "a region may be given once");
      m.regions.push_back(std::move(c));
    }
  }
  // Optional (a model without it has no market states).
  std::map<std::string, std::size_t> listed_by;  // pool name → the regimes entry listing it
  if (r.has("regimes")) {
    const Json& regimes = read.array(r, "regimes", kMaxRevocationModelPools);
    std::map<std::string, const PoolModel*> pool_named;
    for (const PoolModel& p : m.pools) pool_named.emplace(p.pool.name(), &p);
    std::set<std::string> seen;
    for (std::size_t k = 0; k < regimes.size(); ++k) {
      const std::string at = r.key_path("regimes") + "[" + std::to_string(k) + "]";
      MarketRegimes g = read.regimes(regimes[k], at);
      if (!seen.insert(g.region).second) read.fail(at + ".region", spotdnn::detail::quoted(g.region), "a region may be given once");
      for (std::size_t i = 0; i < g.pools.size(); ++i) {
        const std::string pool_at = at + ".pools[" + std::to_string(i) + "]";
        const auto named = pool_named.find(g.pools[i]);
        if (named == pool_named.end()) {
          read.fail(pool_at, spotdnn::detail::quoted(g.pools[i]), "not a pool of the document (expected TYPE@ZONE of one of its pools)");
        }
        if (region_of_zone(named->second->pool.zone) != g.region) {
          read.fail(pool_at, spotdnn::detail::quoted(g.pools[i]),
                    "its zone is in region " + spotdnn::detail::quoted(region_of_zone(named->second->pool.zone)) + ", not " +
                        spotdnn::detail::quoted(g.region));
        }
        if (!listed_by.emplace(g.pools[i], k).second) read.fail(pool_at, spotdnn::detail::quoted(g.pools[i]), "a pool may be listed once");
        if (named->second->in_state.size() != 2) {
          read.fail(pool_at, spotdnn::detail::quoted(g.pools[i]),
                    "a pool of a region's market states needs its in_state (2 entries, calm then stormy; it has " +
                        std::to_string(named->second->in_state.size()) + ")");
        }
      }
      if (!g.joint_up_share_by_state.empty()) {
        std::size_t patterns = 0;
        for (const RegionCorrelation& c : m.regions) {
          if (c.region == g.region) patterns = c.joint_up_share.size();
        }
        if (patterns == 0) {
          read.fail(at + ".joint_up_share_by_state", std::to_string(g.joint_up_share_by_state.size()) + " lists",
                    "the region has no joint up pattern (joint_up_share of its regions entry): expected none");
        }
        for (std::size_t s = 0; s < g.joint_up_share_by_state.size(); ++s) {
          if (g.joint_up_share_by_state[s].size() != patterns) {
            read.fail(at + ".joint_up_share_by_state[" + std::to_string(s) + "]",
                      std::to_string(g.joint_up_share_by_state[s].size()) + " shares",
                      "expected as many as the region's joint_up_share (" + std::to_string(patterns) + ")");
          }
        }
      }
      m.regimes.push_back(std::move(g));
    }
  }
  for (std::size_t k = 0; k < m.pools.size(); ++k) {
    if (!m.pools[k].in_state.empty() && listed_by.count(m.pools[k].pool.name()) == 0) {
      read.fail(r.key_path("pools") + "[" + std::to_string(k) + "].in_state", std::to_string(m.pools[k].in_state.size()) + " entries",
                "the pool is not listed in the regimes entry of its region " +
                    spotdnn::detail::quoted(region_of_zone(m.pools[k].pool.zone)) + ": expected none");
    }
  }
  r.finish();
  return m;
}

/// Reads a revocation-model file; every error names the file and the key path.
[[nodiscard]] inline RevocationModel read_revocation_model_file(const std::string& path) {
  return revocation_model_from_json(read_json_file(path), "revocations", "read_revocation_model_file(" + path + ")");
}

}  // namespace spotdnn::io
