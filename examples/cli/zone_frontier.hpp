#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/zone_frontier.hpp The cost–deadline frontier of a catalog with per-zone prices: each zone's
/// exact staircase (catalog_in_zone), merged into the lower envelope, so that every step is the cheapest
/// plan over the zones for its deadlines and all of one run lives in one zone (frontier, compare --plot).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <spotdnn/availability_zone.hpp>
#include <spotdnn/detail/format.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/placement_score.hpp>
#include <spotdnn/plan/frontier.hpp>

#include "zone_option.hpp"

namespace spotdnn::cli {

/// A frontier whose steps may each live in another Availability Zone.
struct ZoneFrontier {
  Frontier frontier;                    ///< the staircase: each step the cheapest over `zones` for its deadlines
  std::vector<std::string> step_zones;  ///< per step of `frontier`: the zone it is priced in ("" without zone prices)
  std::vector<std::string> zones;       ///< the zones searched (the pinned one alone; empty without zone prices)
  bool pinned = false;                  ///< --zone chose the zone
  /// "each step is the cheapest of 3 Availability Zones (us-east-1a, ...); a run stays in one zone", or
  /// "us-east-1a (pinned)"; empty without zone prices.
  std::string note;
  /// With several catalogs (region_frontier): per step the region it is priced in and the index of its
  /// region's model in the caller's vector; `regions` the regions searched, in name order (empty with one catalog).
  std::vector<std::string> step_regions;
  std::vector<std::size_t> step_models;
  std::vector<std::string> regions;
  /// Per step: its region's extra cost (region_frontier's extra_cost_usd, e.g. reading the dataset from
  /// another region), counted when the envelope was merged; all 0 without one.
  std::vector<double> step_extra_usd;
};

namespace zone_frontier_detail {

/// One step of a lower envelope: which source staircase and which of its steps, and its deadline range.
struct EnvelopeStep {
  std::size_t source;
  std::size_t step;
  double from_deadline_s;
  double to_deadline_s;
};

/// The lower envelope of the staircases `sources`, in order: the points (max(training time, min
/// deadline), cost + the source's `extra_usd`, 0 when `extra_usd` is empty) of every source's steps, sorted by time then cost then source order, each kept when
/// it is strictly cheaper than every point kept before it. A kept point is the cheapest plan from its
/// time to just below the next kept point's time (the last: to max_deadline_s). Equal points of two
/// sources keep the first source (callers order them by name: choose_zone's and choose_region's tie rule).
[[nodiscard]] inline std::vector<EnvelopeStep> lower_envelope(const std::vector<const Frontier*>& sources, double min_deadline_s,
                                                             double max_deadline_s, const std::vector<double>& extra_usd = {}) {
  struct Point {
    double time_s;
    double cost_usd;
    std::size_t source;
    std::size_t step;
  };
  std::vector<Point> points;
  for (std::size_t z = 0; z < sources.size(); ++z) {
    for (std::size_t i = 0; i < sources[z]->steps.size(); ++i) {
      const FrontierStep& s = sources[z]->steps[i];
      points.push_back({std::max(s.plan.training_time_s, min_deadline_s), s.plan.cost_usd + (extra_usd.empty() ? 0.0 : extra_usd[z]), z, i});
    }
  }
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return std::tie(a.time_s, a.cost_usd, a.source) < std::tie(b.time_s, b.cost_usd, b.source);
  });
  std::vector<const Point*> kept;
  double cheapest = std::numeric_limits<double>::infinity();
  for (const Point& p : points) {
    if (!(p.cost_usd < cheapest)) continue;
    cheapest = p.cost_usd;
    kept.push_back(&p);
  }
  std::vector<EnvelopeStep> envelope;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    envelope.push_back({kept[i]->source, kept[i]->step, kept[i]->time_s,
                        i + 1 < kept.size() ? std::nextafter(kept[i + 1]->time_s, 0.0) : max_deadline_s});
  }
  return envelope;
}

/// The lower envelope of per-zone staircases `per_zone` (zone, frontier), in `zones` order (lower_envelope),
/// appended to `out` with each step's zone. Equal points in two zones keep the first zone by name.
inline void merge_zone_steps(const std::vector<std::pair<std::string, Frontier>>& per_zone, double min_deadline_s,
                             double max_deadline_s, ZoneFrontier& out) {
  std::vector<const Frontier*> sources;
  for (const auto& entry : per_zone) sources.push_back(&entry.second);
  for (const EnvelopeStep& e : lower_envelope(sources, min_deadline_s, max_deadline_s)) {
    FrontierStep step = per_zone[e.source].second.steps[e.step];
    step.from_deadline_s = e.from_deadline_s;
    step.to_deadline_s = e.to_deadline_s;
    out.frontier.steps.push_back(std::move(step));
    out.step_zones.push_back(per_zone[e.source].first);
  }
}

/// Whether `part` searched its whole deadline range: not cut at options.max_steps, and every search proven.
/// Only then does its first step say that no plan is feasible below it.
inline bool complete(const Frontier& part) {
  return part.message.find("(options.max_steps)") == std::string::npos && part.status != Status::feasible &&
         part.status != Status::undecided;
}

/// A zone's (region's) frontier `part` whose exact search stopped at its step limit (status feasible or
/// undecided) leaves the merged frontier `f` unproven: optimal becomes feasible, infeasible undecided,
/// and the message says where and why.
inline void note_unproven(Frontier& f, const std::string& where, const Frontier& part) {
  if (part.status != Status::feasible && part.status != Status::undecided) return;
  if (f.status == Status::optimal) f.status = Status::feasible;
  if (f.status == Status::infeasible) f.status = Status::undecided;
  f.message += "; not proven in " + where + ": " + part.message;
}

}  // namespace zone_frontier_detail

/// The frontier of `model` for `target_loss` (cost_deadline_frontier), priced per Availability Zone:
/// in `pinned_zone` when given; else, on a catalog with zone prices, each zone's staircase merged into
/// the lower envelope (each step the cheapest over the zones, one zone per run); else the catalog as it
/// is. The merged frontier's at_max_deadline is the cheapest zone's plan at the largest deadline (or the
/// closest zone's infeasibility); its message says how many zones were searched. An unknown pinned zone
/// throws usage_error (model_in_zone).
[[nodiscard]] inline ZoneFrontier zone_frontier(const PerformanceModel& model, double target_loss, const FrontierOptions& options,
                                                const std::string& pinned_zone) {
  ZoneFrontier z;
  const std::vector<std::string> zones = catalog_zones(model.catalog());
  if (!pinned_zone.empty() || zones.empty()) {
    z.frontier = cost_deadline_frontier(model_in_zone(model, pinned_zone), target_loss, options);
    z.step_zones.assign(z.frontier.steps.size(), pinned_zone);
    z.step_models.assign(z.frontier.steps.size(), 0);
    z.pinned = !pinned_zone.empty();
    if (z.pinned) {
      z.zones = {pinned_zone};
      z.note = pinned_zone + " (pinned)";
    }
    return z;
  }
  z.zones = zones;
  std::vector<std::pair<std::string, Frontier>> per_zone;
  for (const std::string& zone : zones) {
    per_zone.emplace_back(zone, cost_deadline_frontier(PerformanceModel(model.workload(), catalog_in_zone(model.catalog(), zone)),
                                                       target_loss, options));
  }
  Frontier& f = z.frontier;
  f.target_loss = target_loss;
  f.min_deadline_s = options.min_deadline_s;
  f.max_deadline_s = options.max_deadline_s;
  // The plan at the largest deadline: the cheapest zone's, else the zone closest to a plan.
  const auto choice = choose_zone(model.catalog(), [&](const Catalog&, const std::string& zone) {
    for (const auto& [name, frontier] : per_zone) {
      if (name == zone) return plan_candidate(frontier.at_max_deadline);
    }
    return plan_candidate(PlanResult{});
  });
  f.at_max_deadline = choice.result;
  const std::string count = std::to_string(zones.size()) + (zones.size() == 1 ? " Availability Zone" : " Availability Zones");
  const std::string names = catalog_zone_names(model.catalog());
  z.note = "each step is the cheapest of " + count + " (" + names + "); a run stays in one zone";
  const std::string range = spotdnn::detail::format_number(options.min_deadline_s) + "–" +
                            spotdnn::detail::format_number(options.max_deadline_s) + " s";
  if (std::all_of(per_zone.begin(), per_zone.end(), [](const auto& p) { return p.second.status == Status::target_met_at_start; })) {
    f.status = Status::target_met_at_start;
    f.message = per_zone.front().second.message;
    return z;
  }
  zone_frontier_detail::merge_zone_steps(per_zone, options.min_deadline_s, options.max_deadline_s, z);
  z.step_models.assign(f.steps.size(), 0);
  if (f.steps.empty()) {
    f.status = Status::infeasible;
    f.message = "no plan in the deadline range " + range + " in any of " + count + " (" + choice.zone +
                " came closest: " + f.at_max_deadline.message + ")";
    for (const auto& [zone, frontier] : per_zone) zone_frontier_detail::note_unproven(f, zone, frontier);
    return z;
  }
  f.status = Status::optimal;
  f.message = std::to_string(f.steps.size()) + " Pareto-optimal plans for loss " + spotdnn::detail::format_number(target_loss) +
              " over deadlines " + range + ", each the cheapest of " + count + ", from $" +
              spotdnn::detail::format_fixed(f.steps.front().plan.cost_usd, 2) + " at " +
              spotdnn::detail::format_fixed(f.steps.front().plan.training_time_s, 1) + " s (" + z.step_zones.front() + ") to $" +
              spotdnn::detail::format_fixed(f.steps.back().plan.cost_usd, 2) + " at " +
              spotdnn::detail::format_fixed(f.steps.back().plan.training_time_s, 1) + " s (" + z.step_zones.back() + ")";
  if (f.steps.front().plan.training_time_s > options.min_deadline_s &&
      std::all_of(per_zone.begin(), per_zone.end(), [](const auto& p) { return zone_frontier_detail::complete(p.second); })) {
    f.message += "; no plan is feasible below " + spotdnn::detail::format_fixed(f.steps.front().plan.training_time_s, 1) + " s";
  }
  for (const auto& [zone, frontier] : per_zone) {
    if (frontier.message.find("(options.max_steps)") != std::string::npos) {
      f.message += "; the search of " + zone + " stopped after " + std::to_string(options.max_steps) + " plans (options.max_steps)";
    }
    zone_frontier_detail::note_unproven(f, zone, frontier);
  }
  return z;
}

/// The frontier over several regions: `models` one per region (one catalog each, any order), each
/// region's zone_frontier (its zones' staircases merged, or `pinned_zone` alone where the region prices
/// it) merged into the lower envelope, so that every step is the cheapest plan over every (region, zone)
/// for its deadlines, a run staying in one zone of one region; equal points keep the first region by
/// name. `pinned_region` plans that region alone. `extra_cost_usd(catalog)` (empty: 0; finite, >= 0) is a
/// per-region extra cost, such as reading the dataset from another region (transfer_options.hpp): each
/// region's steps are compared at cost + extra (the plans keep their own cost; step_extra_usd holds the
/// extra). One catalog and no region other than its own: exactly zone_frontier (regions empty). Throws usage_error for two catalogs of one region, an unknown pinned
/// region and a pinned zone no (searched) region prices, naming what is known.
[[nodiscard]] inline ZoneFrontier region_frontier(const std::vector<PerformanceModel>& models, double target_loss,
                                                  const FrontierOptions& options, const std::string& pinned_region,
                                                  const std::string& pinned_zone,
                                                  const std::function<double(const Catalog&)>& extra_cost_usd = {}) {
  std::vector<std::size_t> order(models.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return models[a].catalog().region < models[b].catalog().region; });
  std::string known;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::string& region = models[order[i]].catalog().region;
    if (i > 0 && region == models[order[i - 1]].catalog().region) {
      throw usage_error("--catalog: two catalogs of region " + spotdnn::detail::quoted(region) + ": give one catalog per region");
    }
    known.append(known.empty() ? "" : ", ").append(region);
  }
  bool region_known = pinned_region.empty();
  for (const PerformanceModel& m : models) region_known = region_known || m.catalog().region == pinned_region;
  if (!region_known) {
    throw usage_error("--region = " + spotdnn::detail::quoted(pinned_region) + ": no --catalog of that region (known: " + known + ")");
  }
  if (models.size() == 1 && (pinned_region.empty() || pinned_region == models.front().catalog().region)) {
    ZoneFrontier z = zone_frontier(models.front(), target_loss, options, pinned_zone);
    z.step_extra_usd.assign(z.frontier.steps.size(), extra_cost_usd ? extra_cost_usd(models.front().catalog()) : 0.0);
    return z;
  }
  // The regions to search: the pinned one, and with --zone those that price it.
  std::vector<std::size_t> planned;
  std::string zones_known;
  for (std::size_t k : order) {
    const Catalog& catalog = models[k].catalog();
    if (!pinned_region.empty() && catalog.region != pinned_region) continue;
    if (!pinned_zone.empty()) {
      const std::vector<std::string> zones = catalog_zones(catalog);
      zones_known.append(zones_known.empty() ? "" : "; ").append(catalog.region + ": " + catalog_zone_names(catalog));
      if (std::find(zones.begin(), zones.end(), pinned_zone) == zones.end()) continue;
    }
    planned.push_back(k);
  }
  if (planned.empty()) {
    throw usage_error("--zone = " + spotdnn::detail::quoted(pinned_zone) + ": no region's catalog prices that Availability Zone (known: " +
                      zones_known + "; AZ names differ between AWS accounts)");
  }
  std::vector<ZoneFrontier> per_region;
  std::vector<double> extras;
  std::size_t zone_count = 0;
  ZoneFrontier z;
  for (std::size_t k : planned) {
    const double extra = extra_cost_usd ? extra_cost_usd(models[k].catalog()) : 0.0;
    if (!(std::isfinite(extra) && extra >= 0)) {
      throw usage_error("region " + models[k].catalog().region + ": extra cost " + spotdnn::detail::format_number(extra) +
                        ": expected a finite cost >= 0 (USD)");
    }
    extras.push_back(extra);
    per_region.push_back(zone_frontier(models[k], target_loss, options, pinned_zone));
    z.regions.push_back(models[k].catalog().region);
    zone_count += per_region.back().zones.size();
    for (const std::string& zone : per_region.back().zones) z.zones.push_back(zone);
  }
  z.pinned = !pinned_zone.empty();
  const std::string region_names = [&] {
    std::string names;
    for (const std::string& r : z.regions) names.append(names.empty() ? "" : ", ").append(r);
    return names;
  }();
  if (planned.size() == 1) {
    z.note = z.regions.front() + " (pinned region)" + (per_region.front().note.empty() ? std::string() : "; zone: " + per_region.front().note);
  } else if (zone_count > 0) {
    z.note = "each step is the cheapest of " + std::to_string(zone_count) + " Availability Zones in " + std::to_string(planned.size()) +
             " regions (" + region_names + "); a run stays in one zone of one region";
  } else {
    z.note = "each step is the cheapest of " + std::to_string(planned.size()) + " regions (" + region_names + "); a run stays in one region";
  }
  std::vector<const Frontier*> sources;
  for (const ZoneFrontier& r : per_region) sources.push_back(&r.frontier);
  Frontier& f = z.frontier;
  f.target_loss = target_loss;
  f.min_deadline_s = options.min_deadline_s;
  f.max_deadline_s = options.max_deadline_s;
  // The plan at the largest deadline: the cheapest region's counting its extra cost (the first by name on
  // a tie), else the first region's.
  std::size_t best = 0;
  bool any_plan = false;
  for (std::size_t r = 0; r < per_region.size(); ++r) {
    const PlanResult& at = per_region[r].frontier.at_max_deadline;
    if (at.has_plan() &&
        (!any_plan || at.prediction.cost_usd + extras[r] < per_region[best].frontier.at_max_deadline.prediction.cost_usd + extras[best])) {
      best = r;
      any_plan = true;
    }
  }
  f.at_max_deadline = per_region[best].frontier.at_max_deadline;
  const std::string range = spotdnn::detail::format_number(options.min_deadline_s) + "–" +
                            spotdnn::detail::format_number(options.max_deadline_s) + " s";
  if (std::all_of(per_region.begin(), per_region.end(), [](const ZoneFrontier& r) { return r.frontier.status == Status::target_met_at_start; })) {
    f.status = Status::target_met_at_start;
    f.message = per_region.front().frontier.message;
    return z;
  }
  for (const zone_frontier_detail::EnvelopeStep& e : zone_frontier_detail::lower_envelope(sources, options.min_deadline_s, options.max_deadline_s, extras)) {
    FrontierStep step = per_region[e.source].frontier.steps[e.step];
    step.from_deadline_s = e.from_deadline_s;
    step.to_deadline_s = e.to_deadline_s;
    f.steps.push_back(std::move(step));
    z.step_zones.push_back(per_region[e.source].step_zones[e.step]);
    z.step_regions.push_back(z.regions[e.source]);
    z.step_models.push_back(planned[e.source]);
    z.step_extra_usd.push_back(extras[e.source]);
  }
  const auto where = [&](std::size_t i) { return z.step_zones[i].empty() ? z.step_regions[i] : z.step_regions[i] + "/" + z.step_zones[i]; };
  const std::string count = std::to_string(planned.size()) + (planned.size() == 1 ? " region" : " regions");
  if (f.steps.empty()) {
    f.status = Status::infeasible;
    f.message = "no plan in the deadline range " + range + " in any of " + count + " (" + region_names + "; " + z.regions[best] + ": " +
                per_region[best].frontier.message + ")";
    for (std::size_t r = 0; r < per_region.size(); ++r) zone_frontier_detail::note_unproven(f, z.regions[r], per_region[r].frontier);
    return z;
  }
  f.status = Status::optimal;
  f.message = std::to_string(f.steps.size()) + " Pareto-optimal plans for loss " + spotdnn::detail::format_number(target_loss) +
              " over deadlines " + range + ", each the cheapest of " + count + ", from $" +
              spotdnn::detail::format_fixed(f.steps.front().plan.cost_usd, 2) + " at " +
              spotdnn::detail::format_fixed(f.steps.front().plan.training_time_s, 1) + " s (" + where(0) + ") to $" +
              spotdnn::detail::format_fixed(f.steps.back().plan.cost_usd, 2) + " at " +
              spotdnn::detail::format_fixed(f.steps.back().plan.training_time_s, 1) + " s (" + where(f.steps.size() - 1) + ")";
  if (f.steps.front().plan.training_time_s > options.min_deadline_s &&
      std::all_of(per_region.begin(), per_region.end(), [](const ZoneFrontier& r) { return zone_frontier_detail::complete(r.frontier); })) {
    f.message += "; no plan is feasible below " + spotdnn::detail::format_fixed(f.steps.front().plan.training_time_s, 1) + " s";
  }
  for (std::size_t r = 0; r < per_region.size(); ++r) {
    if (per_region[r].frontier.message.find("(options.max_steps)") != std::string::npos) {
      f.message += "; the search of " + z.regions[r] + " stopped after " + std::to_string(options.max_steps) + " plans (options.max_steps)";
    }
    zone_frontier_detail::note_unproven(f, z.regions[r], per_region[r].frontier);
  }
  return z;
}

/// "p3.2xlarge 9, g4dn.4xlarge unknown": the Spot Placement Scores of the types of `cluster` in `zone`
/// (the region's when `zone` is empty), for a table cell; "-" for an empty cluster.
[[nodiscard]] inline std::string placement_scores_cell(const Catalog& catalog, const std::string& zone, const Cluster& cluster) {
  std::string text;
  for (const auto& entry : cluster.counts()) {
    const std::optional<int> score = placement_score(catalog, entry.first, zone);
    text += (text.empty() ? "" : ", ") + entry.first + " " + (score ? std::to_string(*score) : std::string("unknown"));
  }
  return text.empty() ? "-" : text;
}

}  // namespace spotdnn::cli
