#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/interruption_options.hpp --hazard, --fallback-band, --fallback-hazard, --weibull-shape: the
/// revocation options shared by `simulate`, `plan --confidence` and `frontier --confidence`.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/revocation/interruption.hpp>

#include "command.hpp"

namespace spotdnn::cli {

/// --hazard, --fallback-band, --fallback-hazard, --weibull-shape: how often each type is revoked.
/// Shared by `simulate`, `plan --confidence` and `frontier --confidence`.
struct InterruptionCliOptions {
  std::string hazards_text;
  std::string fallback_band;
  std::optional<double> fallback_hazard_per_hour;
  double weibull_shape = 1.0;

  void add_to(CLI::App& app) {
    app.add_option("--hazard", hazards_text,
                   "revocations per hour per instance, overriding the catalog: TYPE=RATE[,TYPE=RATE...] (or ; between)");
    app.add_option("--fallback-band", fallback_band,
                   "Spot Advisor band for types the catalog gives no hazard or band: <5%, 5-10%, 10-15%, 15-20%, >20%");
    app.add_option("--fallback-hazard", fallback_hazard_per_hour,
                   "revocations per hour for types the catalog gives no hazard or band");
    app.add_option("--weibull-shape", weibull_shape, "Weibull shape of lifetimes (1 = exponential)")->default_str("1");
  }

  [[nodiscard]] InterruptionOptions options() const {
    InterruptionOptions o;
    o.weibull_shape = weibull_shape;
    if (!fallback_band.empty() && fallback_hazard_per_hour) {
      throw usage_error("give --fallback-band or --fallback-hazard, not both");
    }
    if (!fallback_band.empty()) o.fallback_hazard_per_hour = hazard_per_hour_from_band(fallback_band);
    if (fallback_hazard_per_hour) o.fallback_hazard_per_hour = *fallback_hazard_per_hour;
    o.hazard_overrides = parse_hazards(hazards_text);
    return o;
  }

  /// The interruption model of `model`. Types without a hazard are allowed here: the library refuses them
  /// (naming the type and these flags) only where a simulation or search would use them.
  [[nodiscard]] InterruptionModel build(const PerformanceModel& model) const { return InterruptionModel(model, options()); }

  /// "TYPE=RATE,TYPE=RATE" (or ';' between entries, as in a cluster) → overrides; throws naming the bad entry.
  static std::vector<HazardOverride> parse_hazards(std::string_view text) {
    std::vector<HazardOverride> out;
    if (text.empty()) return out;
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find_first_of(",;", start), text.size());
      const std::string entry(text.substr(start, end - start));
      const std::size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0) throw usage_error("--hazard: expected TYPE=RATE, got \"" + entry + "\"");
      const std::string rate_text = entry.substr(eq + 1);
      double rate = 0;
      const auto parsed = std::from_chars(rate_text.data(), rate_text.data() + rate_text.size(), rate);
      if (rate_text.empty() || parsed.ec != std::errc() || parsed.ptr != rate_text.data() + rate_text.size() ||
          !std::isfinite(rate) || rate < 0) {
        throw usage_error("--hazard: " + entry.substr(0, eq) + " = \"" + rate_text +
                          "\": expected a number of revocations per hour >= 0");
      }
      out.push_back({entry.substr(0, eq), rate});
      start = end + 1;
    }
    return out;
  }
};

}  // namespace spotdnn::cli
