#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/confidence_choice.hpp The confidence plan across Availability Zones and regions, chosen one
/// way for `plan --confidence` and `frontier --confidence`: every zone of every region (choose_region) gets
/// its own chance-constrained search (revocation/chance_constrained.hpp) with the revocation pools fitted
/// in that zone, and the cheapest zone with a plan shown to reach the level is kept (its cost plus the
/// region's extra cost, e.g. reading the dataset from another region); with none, the zone that came
/// closest: one with a deterministic plan (1 - the best probability seen) before one without (2 + how far
/// the fastest time misses the deadline, relative to it).

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/region_choice.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>

#include "revocations_option.hpp"
#include "zone_option.hpp"

namespace spotdnn::cli {

/// The confidence plan for `slo` over `models` (one per region; any order; the regions must differ):
/// plan_with_confidence in every zone (or in `pinned_region` / `pinned_zone` alone, as choose_region pins
/// them) with `options` and the pools of `revocations` (null: constant-rate) fitted in that zone, the
/// cheapest feasible zone kept (cost + `extra_cost_usd(catalog)`). The result's catalog_index indexes
/// `models`. Throws spotdnn::invalid_argument as choose_region does (an unknown pinned region or zone).
[[nodiscard]] inline RegionChoice<ConfidencePlanResult> choose_confidence_plan(
    const std::vector<PerformanceModel>& models, const Slo& slo, const ConfidencePlanOptions& options,
    const std::shared_ptr<const RevocationModel>& revocations, const std::string& pinned_region, const std::string& pinned_zone,
    const std::function<double(const Catalog&)>& extra_cost_usd = {}) {
  std::vector<Catalog> catalogs;
  std::map<std::string, std::size_t> region_index;
  for (std::size_t i = 0; i < models.size(); ++i) {
    catalogs.push_back(models[i].catalog());
    region_index.emplace(models[i].catalog().region, i);
  }
  return choose_region(
      catalogs,
      [&](const Catalog& catalog, const std::string& zone, double) {
        const PerformanceModel& model = models[region_index.at(catalog.region)];
        ZoneCandidate<ConfidencePlanResult> candidate;
        if (auto missing = kept_type_missing(model.catalog(), catalog, zone, slo, options.plan)) {
          candidate.result.status = Status::infeasible;
          candidate.result.message = missing->message;
          candidate.result.confidence = options.confidence;
          candidate.result.tolerance = options.tolerance;
          candidate.result.error_rate = options.error_rate;
          candidate.result.max_scenarios = options.max_scenarios;
          candidate.result.deterministic = std::move(*missing);
          return candidate;
        }
        const PerformanceModel in_zone(model.workload(), catalog);
        ConfidencePlanOptions zone_options = options;
        zone_options.simulate.revocations =
            fitted_revocations(revocations, in_zone, zone, std::vector<bool>(in_zone.worker_types().size(), true));
        candidate.result = plan_with_confidence(in_zone, slo, zone_options);
        const ConfidencePlanResult& z = candidate.result;
        candidate.feasible = z.has_plan();
        candidate.cost_usd = z.has_plan() ? z.prediction.cost_usd : candidate.cost_usd;
        double best = 0;
        for (const ConfidenceCandidate& s : z.simulated) best = std::max(best, s.probability.estimate);
        candidate.shortfall = z.deterministic.has_plan() ? 1 - best : 2 + plan_shortfall(z.deterministic) / slo.deadline_s;
        return candidate;
      },
      pinned_region, pinned_zone, extra_cost_usd);
}

}  // namespace spotdnn::cli
