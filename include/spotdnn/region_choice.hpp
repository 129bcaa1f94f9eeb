#pragma once
// SPDX-License-Identifier: MIT
/// @file region_choice.hpp Plans across regions: one catalog per region, every region's every
/// Availability Zone planned (or the region as it is when its catalog has no zone prices), and the
/// cheapest kept, counting a per-region extra cost such as reading the dataset from another region.
///
/// A run lives in one zone of one region (one subnet), and each catalog prices its own parameter server,
/// so a region's plans are planned with its own catalog alone. choose_region() runs choose_zone() in each
/// region and compares the regions' best: the plan's cost plus the region's extra cost (or the caller's
/// own objective, e.g. the training time of a budget plan). Ties go to the first region by name, then the
/// first zone by name. Every zone is planned: exact planning is cheap enough (about 0.1 ms per zone for
/// 5 types; bench/bench_regions.cpp plans 20 regions x 4 zones in a few ms), and no bound is used to skip
/// zones, so the choice is the enumeration's by construction.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/availability_zone.hpp"
#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"

namespace spotdnn {

/// One (region, zone) the region search planned.
struct RegionZoneTried {
  std::string region;
  std::string zone;  ///< empty: the region's catalog has no zone prices (planned as it is)
  bool feasible = false;
  double cost_usd = std::numeric_limits<double>::infinity();  ///< the plan's own cost (no extra cost)
  double extra_cost_usd = 0;                                  ///< the region's extra cost (e.g. data transfer)
  double objective = std::numeric_limits<double>::infinity();  ///< as compared: cost + extra unless the caller said otherwise
  double shortfall = std::numeric_limits<double>::infinity();

  /// "us-west-2/us-west-2b", or "us-west-2" without a zone.
  [[nodiscard]] std::string label() const { return zone.empty() ? region : region + "/" + zone; }
};

/// The region choice: the region and zone whose result is kept, the result, every (region, zone) planned
/// (in region then zone name order) and a sentence saying why.
template <class Result>
struct RegionChoice {
  std::string region;
  std::string zone;  ///< empty when the chosen region's catalog has no zone prices
  std::size_t catalog_index = 0;  ///< index of the chosen region's catalog in the caller's vector
  Result result{};
  bool feasible = false;
  bool pinned_region = false;
  bool pinned_zone = false;
  double extra_cost_usd = 0;  ///< the chosen region's extra cost
  std::vector<RegionZoneTried> tried;
  /// The note choose_zone() gives in the chosen region alone (what a one-region plan prints as its zone line).
  std::string zone_note;
  /// "us-west-2/us-west-2b, the cheapest of 12 zones in 3 regions (us-west-2/us-west-2b $3.10, ...; 7 more)"
  /// (the kRegionNoteEntries cheapest as compared, each "$cost + $extra" when the region has an extra cost),
  /// "us-west-2, the cheapest of 2 regions (...)" when no catalog has zone prices, "us-east-1/us-east-1a
  /// (pinned zone)" or "infeasible in every zone (12 zones in 3 regions): us-east-1/us-east-1b came closest".
  std::string note;
};

/// The most (region, zone) entries a RegionChoice note lists; the rest are counted.
inline constexpr std::size_t kRegionNoteEntries = 5;

/// Plans with `plan_in_zone(const Catalog& zone_catalog, const std::string& zone, double extra_cost_usd)
/// -> ZoneCandidate<R>` in every zone of every region of `catalogs` (one catalog per region; a catalog
/// without zone prices is planned as it is, zone empty) and keeps the best feasible result: smallest
/// ZoneCandidate::objective when the caller sets it (a budget plan: the training time), else smallest
/// cost_usd + extra cost of the region. `extra_cost_usd(catalog)` (empty: 0) is evaluated once per region
/// and must be finite and >= 0; it is passed to `plan_in_zone` so that a budget plan can leave it out of
/// the cluster's budget. Ties: the first region by name, then the first zone by name. Infeasible
/// everywhere: the result that came closest (smallest shortfall, ties as above).
///
/// `pinned_region` plans in that region alone; `pinned_zone` plans that zone alone, in whichever regions
/// price it (in `pinned_region` when both are given). Throws spotdnn::invalid_argument for no catalog, two
/// catalogs of one region (naming it), an unknown pinned region (naming the regions), a pinned zone no
/// region prices (naming the known zones per region) and a bad extra cost.
template <class PlanInZone>
[[nodiscard]] auto choose_region(const std::vector<Catalog>& catalogs, PlanInZone&& plan_in_zone, std::string_view pinned_region = {},
                                 std::string_view pinned_zone = {},
                                 const std::function<double(const Catalog&)>& extra_cost_usd = {})
    -> RegionChoice<decltype(plan_in_zone(catalogs.front(), std::string(), 0.0).result)> {
  using Result = decltype(plan_in_zone(catalogs.front(), std::string(), 0.0).result);
  constexpr const char* kFunction = "choose_region";
  if (catalogs.empty()) detail::fail(kFunction, "catalogs", "[]", "give at least one catalog (one per region)");
  // Regions in name order, each once.
  std::vector<std::size_t> order(catalogs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return catalogs[a].region < catalogs[b].region; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (catalogs[order[i]].region == catalogs[order[i - 1]].region) {
      detail::fail(kFunction, "catalogs", detail::quoted(catalogs[order[i]].region),
                   "two catalogs of one region: give one catalog per region");
    }
  }
  auto region_list = [&] {
    std::string names;
    for (std::size_t k : order) names.append(names.empty() ? "" : ", ").append(catalogs[k].region);
    return names;
  };
  if (!pinned_region.empty()) {
    bool known = false;
    for (const Catalog& c : catalogs) known = known || c.region == pinned_region;
    if (!known) detail::fail(kFunction, "region", detail::quoted(pinned_region), "no catalog of that region (known: " + region_list() + ")");
  }
  // The regions to plan in, and for each whether it plans the pinned zone alone.
  std::vector<std::size_t> planned;
  for (std::size_t k : order) {
    if (!pinned_region.empty() && catalogs[k].region != pinned_region) continue;
    if (!pinned_zone.empty()) {
      const std::vector<std::string> zones = catalog_zones(catalogs[k]);
      if (std::find(zones.begin(), zones.end(), pinned_zone) == zones.end()) continue;
    }
    planned.push_back(k);
  }
  if (planned.empty()) {  // only a pinned zone can leave nothing to plan
    std::string known;
    for (std::size_t k : order) {
      if (!pinned_region.empty() && catalogs[k].region != pinned_region) continue;
      known.append(known.empty() ? "" : "; ").append(catalogs[k].region + ": " + catalog_zone_names(catalogs[k]));
    }
    detail::fail(kFunction, "zone", detail::quoted(pinned_zone),
                 std::string(pinned_region.empty() ? "no region's catalog" : "the region's catalog") +
                     " prices that Availability Zone (known: " + known + "; AZ names differ between AWS accounts)");
  }

  RegionChoice<Result> choice;
  choice.pinned_region = !pinned_region.empty();
  choice.pinned_zone = !pinned_zone.empty();
  std::vector<ZoneChoice<Result>> regions;
  std::vector<std::size_t> kept_entry;  // per planned region: its entry in choice.tried of the zone it keeps
  std::vector<double> extras;
  regions.reserve(planned.size());
  for (std::size_t k : planned) {
    const Catalog& catalog = catalogs[k];
    const double extra = extra_cost_usd ? extra_cost_usd(catalog) : 0.0;
    if (!std::isfinite(extra) || extra < 0) {
      detail::fail(kFunction, "extra_cost_usd(" + catalog.region + ")", detail::format_number(extra), "expected a finite cost >= 0 (USD)");
    }
    const std::size_t first = choice.tried.size();
    auto wrapped = [&](const Catalog& seen, const std::string& zone) {
      auto candidate = plan_in_zone(seen, zone, extra);
      RegionZoneTried t;
      t.region = catalog.region;
      t.zone = zone;
      t.feasible = candidate.feasible;
      t.cost_usd = candidate.cost_usd;
      t.extra_cost_usd = extra;
      if (std::isnan(candidate.objective)) candidate.objective = candidate.cost_usd + extra;
      t.objective = candidate.objective;
      t.shortfall = candidate.shortfall;
      choice.tried.push_back(std::move(t));
      return candidate;
    };
    regions.push_back(choose_zone(catalog, wrapped, catalog_zones(catalog).empty() ? std::string_view() : pinned_zone));
    std::size_t entry = first;
    for (std::size_t i = first; i < choice.tried.size(); ++i) {
      if (choice.tried[i].zone == regions.back().zone) entry = i;
    }
    kept_entry.push_back(entry);
    extras.push_back(extra);
  }
  // The regions' best, compared: strict < in region-name order keeps the first on ties.
  std::size_t best = planned.size();
  std::size_t closest = planned.size();
  for (std::size_t r = 0; r < planned.size(); ++r) {
    const RegionZoneTried& t = choice.tried[kept_entry[r]];
    if (regions[r].feasible && (best == planned.size() || t.objective < choice.tried[kept_entry[best]].objective)) best = r;
    if (!regions[r].feasible && (closest == planned.size() || t.shortfall < choice.tried[kept_entry[closest]].shortfall)) closest = r;
  }
  const std::size_t kept = best != planned.size() ? best : closest;
  choice.feasible = best != planned.size();
  choice.catalog_index = planned[kept];
  choice.region = catalogs[planned[kept]].region;
  choice.zone = regions[kept].zone;
  choice.extra_cost_usd = extras[kept];
  choice.zone_note = regions[kept].note;
  choice.result = std::move(regions[kept].result);

  const RegionZoneTried& chosen = choice.tried[kept_entry[kept]];
  const std::size_t n = choice.tried.size();
  // "12 zones in 3 regions" (a region without zone prices counts as one zone), or "3 regions" when none has zone prices.
  bool any_zone = false;
  for (const RegionZoneTried& t : choice.tried) any_zone = any_zone || !t.zone.empty();
  const std::string regions_text = std::to_string(planned.size()) + (planned.size() == 1 ? " region" : " regions");
  const std::string count = any_zone ? std::to_string(n) + (n == 1 ? " zone" : " zones") + " in " + regions_text : regions_text;
  if (n == 1) {
    choice.note = chosen.label() + (choice.pinned_zone ? " (pinned zone)" : choice.pinned_region ? " (pinned region)" : "");
    if (!choice.feasible) choice.note += ": infeasible";
    return choice;
  }
  if (!choice.feasible) {
    choice.note = std::string(any_zone ? "infeasible in every zone (" : "infeasible in every region (") + count + "): " +
                  chosen.label() + " came closest";
    return choice;
  }
  // The cheapest feasible entries as compared, at most kRegionNoteEntries, then how many more were planned.
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < n; ++i) {
    if (choice.tried[i].feasible) ranked.push_back(i);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](std::size_t a, std::size_t b) { return choice.tried[a].objective < choice.tried[b].objective; });
  std::string summary;
  const std::size_t listed = std::min(ranked.size(), kRegionNoteEntries);
  for (std::size_t i = 0; i < listed; ++i) {
    const RegionZoneTried& t = choice.tried[ranked[i]];
    summary.append(summary.empty() ? "" : ", ").append(t.label()).append(" ").append(detail::usd_text(t.cost_usd));
    if (t.extra_cost_usd > 0) summary.append(" + ").append(detail::usd_text(t.extra_cost_usd));
  }
  if (n > listed) {
    summary.append("; ").append(std::to_string(n - listed)).append(" more");
    if (ranked.size() < n) summary.append(" (").append(std::to_string(n - ranked.size())).append(" infeasible)");
  }
  const std::string what = choice.pinned_zone ? "pinned zone, the cheapest of " : choice.pinned_region ? "pinned region, the cheapest of " : "the cheapest of ";
  choice.note = chosen.label() + ", " + what + count + " (" + summary + ")";
  return choice;
}

}  // namespace spotdnn
