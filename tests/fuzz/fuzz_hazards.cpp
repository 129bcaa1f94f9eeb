// SPDX-License-Identifier: MIT
// Fuzzes the revocation options of `spotdnn simulate` and `plan --confidence`. The whole input is read
// as --hazard TYPE=RATE,... (parse_hazards) and as a Spot Advisor band (hazard_per_hour_from_band); then
// its first four lines are --hazard, --fallback-band, --fallback-hazard and --weibull-shape, and build the
// preset's interruption model as the CLI does: every hazard, lifetime and MTTI it gives must be a number.
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <spotdnn/presets.hpp>
#include <spotdnn/revocation/interruption.hpp>

#include "fuzz_check.hpp"
#include "interruption_options.hpp"

using namespace spotdnn;

namespace {

/// The CLI refuses options with spotdnn::invalid_argument (one line) or cli::usage_error (exit code 2).
/// A usage_error quotes the option's text as given: main() escapes it to one line when printing it.
template <typename Read>
auto read_or_refuse(Read&& read) -> std::optional<decltype(read())> {
  try {
    return fuzz::read_or_reject(read);
  } catch (const cli::usage_error&) {
    return std::nullopt;
  }
}

std::optional<double> number(std::string_view text) {
  double value = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  if (const auto hazards = read_or_refuse([&] { return cli::InterruptionCliOptions::parse_hazards(text); })) {
    for (const HazardOverride& h : *hazards) {
      fuzz::check(!h.type.empty() && std::isfinite(h.hazard_per_hour) && h.hazard_per_hour >= 0, "parse_hazards accepted a bad entry");
    }
  }
  if (const auto band = read_or_refuse([&] { return hazard_per_hour_from_band(text); })) {
    fuzz::check(std::isfinite(*band) && *band > 0, "hazard_per_hour_from_band gave a bad hazard");
  }

  std::vector<std::string_view> lines;
  std::string_view rest = text;
  while (lines.size() < 3 && rest.find('\n') != std::string_view::npos) {
    lines.push_back(rest.substr(0, rest.find('\n')));
    rest.remove_prefix(lines.back().size() + 1);
  }
  lines.push_back(rest);
  lines.resize(4);

  cli::InterruptionCliOptions options;
  options.hazards_text = std::string(lines[0]);
  options.fallback_band = std::string(lines[1]);
  options.fallback_hazard_per_hour = number(lines[2]);
  if (const auto shape = number(lines[3])) options.weibull_shape = *shape;

  static const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const auto interruption = read_or_refuse([&] { return options.build(model); });
  if (!interruption) return 0;
  for (std::size_t k = 0; k < interruption->types().size(); ++k) {
    if (!interruption->has_hazard(k)) continue;  // refused where a simulation would use the type
    const double hazard = interruption->hazard_per_hour(k);
    fuzz::check(std::isfinite(hazard) && hazard >= 0, "a type's hazard is not a rate");
    const double mean = interruption->mean_lifetime_s(k);
    fuzz::check(!std::isnan(mean) && mean >= 0, "mean_lifetime_s is not a duration: " + std::to_string(mean));
    const double survival = interruption->survival(k, 3600);
    fuzz::check(survival >= 0 && survival <= 1, "survival is not a probability: " + std::to_string(survival));
    const double lifetime = interruption->lifetime_s(k, 1.0);
    fuzz::check(!std::isnan(lifetime) && lifetime >= 0, "lifetime_s is not a duration: " + std::to_string(lifetime));
  }
  // One of each type that has a hazard (a count of a type without one is refused, as in simulate).
  std::vector<int> one_each(interruption->types().size(), 0);
  for (std::size_t k = 0; k < one_each.size(); ++k) one_each[k] = interruption->has_hazard(k) ? 1 : 0;
  const double mtti = interruption->mean_time_to_interruption_s(one_each);
  fuzz::check(!std::isnan(mtti) && mtti >= 0, "mean_time_to_interruption_s is not a duration: " + std::to_string(mtti));
  return 0;
}
