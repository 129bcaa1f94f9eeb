#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/price_age.hpp How old a catalog's prices are, and the warning about stale ones that
/// `catalog show`, `plan` and `frontier` print (one rule, one text): a type whose price_observed_at is
/// more than --max-price-age (default 24 h) before "now" (--as-of, else the clock) is named on stderr.
/// A type without a parseable price_observed_at (the embedded preset's) is not warned about.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <spotdnn/catalog.hpp>
#include <spotdnn/errors.hpp>
#include <spotdnn/io/aws/timestamp.hpp>

#include "catalog_options.hpp"  // now_unix_s, add_as_of_option, add_max_price_age_option

namespace spotdnn::cli {

/// "3 h 12 min", "2 d 5 h", "40 min": an age for people (whole minutes).
[[nodiscard]] inline std::string format_age(double age_s) {
  if (!(age_s >= 0)) return "in the future";
  const long long minutes = static_cast<long long>(age_s / 60);
  const long long days = minutes / 1440, hours = (minutes % 1440) / 60, rest = minutes % 60;
  if (days > 0) return fmt::format("{} d {} h", days, hours);
  if (hours > 0) return fmt::format("{} h {} min", hours, rest);
  return fmt::format("{} min", rest);
}

/// Unix seconds of a type's price_observed_at, or nothing when it is not given or not ISO 8601.
[[nodiscard]] inline std::optional<std::int64_t> observed_at_unix_s(const InstanceType& type) {
  if (type.price_observed_at.empty()) return std::nullopt;
  try {
    return io::aws::parse_aws_timestamp(type.price_observed_at, "catalog show", "price_observed_at");
  } catch (const spotdnn::invalid_argument&) {
    return std::nullopt;
  }
}

/// One warning per type of `catalog` (in catalog order) whose price was observed more than `max_age_s`
/// before `now_unix_s`: "TYPE: its price ($P/h, observed T) is AGE old: fetch a fresh catalog (spotdnn
/// catalog fetch) before planning".
[[nodiscard]] inline std::vector<std::string> stale_price_warnings(const Catalog& catalog, std::int64_t now_unix_s, double max_age_s) {
  std::vector<std::string> warnings;
  for (const InstanceType& type : catalog.instance_types) {
    const std::optional<std::int64_t> observed = observed_at_unix_s(type);
    if (!observed || double(now_unix_s - *observed) <= max_age_s) continue;
    warnings.push_back(type.name + ": its price ($" + detail::format_readable(type.price_usd_per_hour) + "/h, observed " +
                       type.price_observed_at + ") is " + format_age(double(now_unix_s - *observed)) +
                       " old: fetch a fresh catalog (spotdnn catalog fetch) before planning");
  }
  return warnings;
}

/// --max-price-age and --as-of, for a command that plans with a catalog's prices.
struct PriceAgeOptions {
  std::optional<std::int64_t> as_of_unix_s;
  double max_price_age_s = 86400;

  void add_to(CLI::App& app) {
    add_max_price_age_option(app, max_price_age_s);
    add_as_of_option(app, as_of_unix_s);
  }

  /// The stale-price warnings of `catalog` as of --as-of (else now).
  [[nodiscard]] std::vector<std::string> warnings(const Catalog& catalog) const {
    return stale_price_warnings(catalog, now_unix_s(as_of_unix_s), max_price_age_s);
  }
};

}  // namespace spotdnn::cli
