#pragma once
// SPDX-License-Identifier: MIT
/// @file placement_score.hpp Spot Placement Scores in planning: the score of a pool (instance type ×
/// Availability Zone), and the catalog without the pools that score below a minimum.
///
/// AWS scores a *request* (`aws ec2 get-spot-placement-scores --instance-types A B --target-capacity N`),
/// 1 to 10, per region or, with `--single-availability-zone`, per zone: how likely N instances of those
/// types are to be had now. spotdnn credits the score to every type the request named. The score of type T
/// in zone Z is the lowest of the scores for Z that name T; without one, the lowest of the region-wide
/// scores that name T; without either, unknown. The lowest, because a catalog may hold scores of several
/// requests (other capacities, other type sets) and a plan should not count on the kindest of them.

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/catalog.hpp"

namespace spotdnn {

/// The score of `type` in `zone` (empty: the region), as the file comment says; nullopt when unknown.
[[nodiscard]] inline std::optional<int> placement_score(const Catalog& catalog, std::string_view type, std::string_view zone) {
  std::optional<int> in_zone, in_region;
  for (const PlacementScore& p : catalog.placement_scores) {
    if (std::find(p.instance_types.begin(), p.instance_types.end(), type) == p.instance_types.end()) continue;
    std::optional<int>& slot = p.zone.empty() ? in_region : in_zone;
    if (!p.zone.empty() && p.zone != zone) continue;
    slot = slot ? std::min(*slot, p.score) : p.score;
  }
  return in_zone ? in_zone : in_region;
}

/// The catalog without the pools whose score is below `min_score`: a spot type's zone price is dropped where
/// its score in that zone is below it (a type left with no zone then gets quota 0), and a spot type without
/// zone prices gets quota 0 when its region-wide score is below it. Pools without a score stay (unknown is
/// not low). On-demand types are not scored. `left_out` (may be null) gets "TYPE in ZONE (score S)" or
/// "TYPE (score S in the region)" per pool dropped. The scores are indexed by type once, so the work is
/// linear in the scores' type entries and the types' zones (a catalog may hold 10,000 scores of 100 types
/// and 1,000 types of 100 zones each: asking placement_score() per pool would scan every score each time).
[[nodiscard]] inline Catalog catalog_with_min_placement_score(const Catalog& catalog, int min_score,
                                                              std::vector<std::string>* left_out = nullptr) {
  // Per type: its lowest score per zone ("" = the region), as placement_score() takes them.
  std::map<std::string, std::map<std::string, int>, std::less<>> lowest;
  for (const PlacementScore& p : catalog.placement_scores) {
    for (const std::string& type : p.instance_types) {
      auto [it, added] = lowest[type].emplace(p.zone, p.score);
      if (!added) it->second = std::min(it->second, p.score);
    }
  }
  Catalog kept = catalog;
  for (InstanceType& type : kept.instance_types) {
    if (type.market != Market::spot || type.quota == 0) continue;
    const auto scored = lowest.find(type.name);
    if (scored == lowest.end()) continue;  // no score: unknown is not low
    const std::map<std::string, int>& by_zone = scored->second;
    const auto region = by_zone.find(std::string());
    const auto score_in = [&](const std::string& zone) -> std::optional<int> {
      if (const auto z = by_zone.find(zone); z != by_zone.end()) return z->second;
      if (region != by_zone.end()) return region->second;
      return std::nullopt;
    };
    if (type.zone_prices_usd_per_hour.empty()) {
      const std::optional<int> score = score_in({});
      if (score && *score < min_score) {
        type.quota = 0;
        if (left_out) left_out->push_back(type.name + " (score " + std::to_string(*score) + " in the region)");
      }
      continue;
    }
    for (auto it = type.zone_prices_usd_per_hour.begin(); it != type.zone_prices_usd_per_hour.end();) {
      const std::optional<int> score = score_in(it->first);
      if (score && *score < min_score) {
        if (left_out) left_out->push_back(type.name + " in " + it->first + " (score " + std::to_string(*score) + ")");
        it = type.zone_prices_usd_per_hour.erase(it);
      } else {
        ++it;
      }
    }
    if (type.zone_prices_usd_per_hour.empty()) {
      type.quota = 0;  // priced nowhere it may be bought: stays listed (options naming it keep their meaning)
      continue;
    }
    double cheapest = type.zone_prices_usd_per_hour.begin()->second;
    for (const auto& entry : type.zone_prices_usd_per_hour) cheapest = std::min(cheapest, entry.second);
    type.price_usd_per_hour = cheapest;
  }
  return kept;
}

}  // namespace spotdnn
