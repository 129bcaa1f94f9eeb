#pragma once
// SPDX-License-Identifier: MIT
/// @file availability_zone.hpp Availability Zones: the zones a catalog prices, the catalog as seen from
/// one zone, and planning in every zone to keep the cheapest (all of a run lives in one zone).
///
/// A catalog's spot prices may be per Availability Zone (InstanceType::zone_prices_usd_per_hour, and
/// `price_usd_per_hour` is then the lowest of them). A run's instances share one subnet, so one zone: a
/// plan priced at each type's lowest price over all zones may mix zones and is not a price anyone can
/// buy. catalog_in_zone() gives the catalog as seen from one zone, and choose_zone() plans in each zone
/// (or in the one the caller pins) and keeps the cheapest. AZ names differ between AWS accounts
/// ("us-east-1a" in one account is another data centre in the next): a fetched catalog belongs to the
/// account that fetched it.

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"

namespace spotdnn {

/// Longest Availability Zone name accepted where one names where to launch (a plan document's `zone`, a
/// key of the AWS configuration's `subnet_ids`).
inline constexpr std::size_t kMaxZoneNameLength = 100;

/// An Availability Zone name as a plan or configuration gives it: 1 to 100 characters of printable ASCII
/// (AWS's are like "us-east-1a" or "us-west-2-lax-1a"; spotdnn never puts one in a command, only in
/// messages, comments and JSON).
inline void require_zone_name(std::string_view function, std::string_view field, std::string_view value) {
  bool ok = !value.empty() && value.size() <= kMaxZoneNameLength;
  for (char c : value) ok = ok && static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F;
  if (!ok) {
    detail::fail(function, field, detail::quoted(value),
                 "expected an Availability Zone name like us-east-1a: 1 to " + std::to_string(kMaxZoneNameLength) +
                     " characters of printable ASCII");
  }
}

namespace detail {

/// "$12.34": a cost for messages.
inline std::string usd_text(double usd) {
  char text[64];
  std::snprintf(text, sizeof text, "$%.2f", usd);
  return text;
}

}  // namespace detail

/// Every Availability Zone that prices at least one type of `catalog` (the union over its types), sorted
/// by name; empty when the catalog has no zone prices.
[[nodiscard]] inline std::vector<std::string> catalog_zones(const Catalog& catalog) {
  std::set<std::string> zones;
  for (const InstanceType& type : catalog.instance_types) {
    for (const auto& entry : type.zone_prices_usd_per_hour) zones.insert(entry.first);
  }
  return {zones.begin(), zones.end()};
}

/// "a, b, c": the zones of `catalog`, for messages ("none" without zone prices).
[[nodiscard]] inline std::string catalog_zone_names(const Catalog& catalog) {
  std::string names;
  for (const std::string& zone : catalog_zones(catalog)) names.append(names.empty() ? "" : ", ").append(zone);
  return names.empty() ? "none" : names;
}

/// The catalog as seen from Availability Zone `zone`: each spot type with zone prices is priced at its
/// price in `zone` (`price_usd_per_hour`, and `zone_prices_usd_per_hour` holds that zone alone); a spot
/// type with zone prices but none for `zone` cannot be bought there as spot and gets quota 0 (it stays
/// listed, so that every zone's catalog has the same types in the same order and options naming it mean
/// the same in every zone). On-demand prices are regional and unchanged, and so are types without zone
/// prices and on-demand types. Throws spotdnn::invalid_argument naming the zone and the known zones
/// when no type of the catalog is priced in `zone`.
[[nodiscard]] inline Catalog catalog_in_zone(const Catalog& catalog, std::string_view zone) {
  const std::vector<std::string> zones = catalog_zones(catalog);
  bool known = false;
  for (const std::string& z : zones) known = known || z == zone;
  if (!known) {
    detail::fail("catalog_in_zone", "zone", detail::quoted(zone),
                 zones.empty() ? std::string("the catalog has no per-zone prices (zone_prices_usd_per_hour): plan without a zone")
                               : "no type of the catalog is priced in that Availability Zone (known: " + catalog_zone_names(catalog) +
                                     "; AZ names differ between AWS accounts)");
  }
  Catalog seen = catalog;
  for (InstanceType& type : seen.instance_types) {
    if (type.market != Market::spot || type.zone_prices_usd_per_hour.empty()) continue;
    const auto price = type.zone_prices_usd_per_hour.find(std::string(zone));
    if (price == type.zone_prices_usd_per_hour.end()) {
      type.quota = 0;
      type.zone_prices_usd_per_hour.clear();
      continue;
    }
    type.price_usd_per_hour = price->second;
    const double in_zone = price->second;
    type.zone_prices_usd_per_hour.clear();
    type.zone_prices_usd_per_hour.emplace(std::string(zone), in_zone);
  }
  return seen;
}

/// What planning in one zone gave, as the zone search compares it. `Result` is whatever the caller plans
/// (a plan, a confidence plan, a replan).
template <class Result>
struct ZoneCandidate {
  Result result{};
  bool feasible = false;  ///< the result is a plan that can be launched (optimal or feasible)
  /// The plan's cost (USD), shown in the choice's note.
  double cost_usd = std::numeric_limits<double>::infinity();
  /// What feasible zones are compared by, smaller is better; NaN (the default) means `cost_usd`. A plan
  /// that minimizes time within a budget gives its training time here.
  double objective = std::numeric_limits<double>::quiet_NaN();
  /// Among infeasible zones: how far the zone is from a plan, in any unit the caller uses the same way in
  /// every zone (e.g. the fastest training time minus the deadline, in s); smaller is closer.
  double shortfall = std::numeric_limits<double>::infinity();
};

namespace detail {

template <class Result>
double objective_of(const ZoneCandidate<Result>& candidate) {
  return std::isnan(candidate.objective) ? candidate.cost_usd : candidate.objective;
}

}  // namespace detail

/// One zone the search tried.
struct ZoneTried {
  std::string zone;
  bool feasible = false;
  double cost_usd = std::numeric_limits<double>::infinity();
  double objective = std::numeric_limits<double>::infinity();  ///< as compared (the cost unless the caller said otherwise)
  double shortfall = std::numeric_limits<double>::infinity();
};

/// The zone choice: the zone whose result is kept, the result, every zone tried, and a sentence saying why.
template <class Result>
struct ZoneChoice {
  /// The zone planned in; empty when the catalog has no zone prices (planned as it is).
  std::string zone;
  Result result{};
  bool feasible = false;
  bool pinned = false;  ///< the caller chose the zone
  std::vector<ZoneTried> zones;  ///< in name order; empty when the catalog has no zone prices
  /// "us-east-1b, the cheapest of 3 zones (us-east-1a $3.46, ...)", "us-east-1a (pinned)" or "infeasible
  /// in every zone (3 zones): us-east-1b came closest".
  std::string note;
};

/// Plans with `plan_in_zone(const Catalog& zone_catalog, const std::string& zone) -> ZoneCandidate<R>`
/// in Availability Zone `pinned_zone` when one is given, else in every zone of `catalog`, and keeps the
/// cheapest feasible result (smallest ZoneCandidate::objective, the cost unless the caller says otherwise;
/// ties: the first zone by name). Infeasible in every zone: the result of the
/// zone that came closest (smallest shortfall; ties: the first by name), and the note says which. A catalog
/// without zone prices is planned as it is (zone empty); pinning a zone then throws, as does pinning a zone
/// the catalog does not price (spotdnn::invalid_argument naming the zone and the known zones).
template <class PlanInZone>
[[nodiscard]] auto choose_zone(const Catalog& catalog, PlanInZone&& plan_in_zone, std::string_view pinned_zone = {})
    -> ZoneChoice<decltype(plan_in_zone(catalog, std::string()).result)> {
  using Result = decltype(plan_in_zone(catalog, std::string()).result);
  ZoneChoice<Result> choice;
  const std::vector<std::string> zones = catalog_zones(catalog);
  if (!pinned_zone.empty()) {
    const Catalog seen = catalog_in_zone(catalog, pinned_zone);  // throws for an unknown zone
    auto candidate = plan_in_zone(seen, std::string(pinned_zone));
    choice.zone = std::string(pinned_zone);
    choice.pinned = true;
    choice.feasible = candidate.feasible;
    choice.zones.push_back({choice.zone, candidate.feasible, candidate.cost_usd, detail::objective_of(candidate), candidate.shortfall});
    choice.result = std::move(candidate.result);
    choice.note = choice.zone + " (pinned)";
    return choice;
  }
  if (zones.empty()) {
    auto candidate = plan_in_zone(catalog, std::string());
    choice.feasible = candidate.feasible;
    choice.result = std::move(candidate.result);
    choice.note = "the catalog has no per-zone prices";
    return choice;
  }
  std::size_t best = zones.size();
  std::size_t closest = zones.size();
  std::vector<Result> results;
  results.reserve(zones.size());
  for (std::size_t i = 0; i < zones.size(); ++i) {
    auto candidate = plan_in_zone(catalog_in_zone(catalog, zones[i]), zones[i]);
    choice.zones.push_back({zones[i], candidate.feasible, candidate.cost_usd, detail::objective_of(candidate), candidate.shortfall});
    if (candidate.feasible && (best == zones.size() || choice.zones[i].objective < choice.zones[best].objective)) best = i;
    if (!candidate.feasible && (closest == zones.size() || candidate.shortfall < choice.zones[closest].shortfall)) closest = i;
    results.push_back(std::move(candidate.result));
  }
  std::string summary;
  for (const ZoneTried& z : choice.zones) {
    summary.append(summary.empty() ? "" : ", ")
        .append(z.zone)
        .append(" ")
        .append(z.feasible ? detail::usd_text(z.cost_usd) : std::string("infeasible"));
  }
  const std::size_t kept = best != zones.size() ? best : closest;
  choice.zone = zones[kept];
  choice.feasible = best != zones.size();
  choice.result = std::move(results[kept]);
  const std::string count = std::to_string(zones.size()) + (zones.size() == 1 ? " zone" : " zones");
  choice.note = choice.feasible ? choice.zone + ", the cheapest of " + count + " (" + summary + ")"
                                : "infeasible in every zone (" + count + "): " + choice.zone + " came closest";
  return choice;
}

}  // namespace spotdnn
