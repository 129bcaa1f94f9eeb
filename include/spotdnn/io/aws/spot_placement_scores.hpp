#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/spot_placement_scores.hpp Spot Placement Scores of one region from the output of
/// `aws ec2 get-spot-placement-scores`.
///
/// The call (`--instance-types A B --target-capacity N [--target-capacity-unit-type units|vcpu|memory-mib]
/// --region-names R [--single-availability-zone] --output json`) prints {"SpotPlacementScores": [{"Region":
/// "us-east-1", "Score": 7}, …]} for the region, or, with --single-availability-zone, one entry per zone
/// with "AvailabilityZoneId": "use1-az1" (an AZ *ID*: AZ names differ between accounts, IDs do not), and
/// maybe "NextToken". `--query SpotPlacementScores` gives the bare array; both are read. The output does not
/// repeat the request, so the caller says which types and capacity it asked for (PlacementScoreRequest).
/// Each zone ID becomes the zone's name where `zone_names_by_id` maps it (describe-availability-zones),
/// else stays the ID (and the score then matches no zone of a catalog priced by AZ name: the import warns).

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// What was asked of get-spot-placement-scores (the output does not say).
struct PlacementScoreRequest {
  std::vector<std::string> instance_types;     ///< --instance-types
  int target_capacity = 0;                     ///< --target-capacity
  std::string target_capacity_unit = "units";  ///< --target-capacity-unit-type
  std::string observed_at;                     ///< when it was asked, ISO 8601 UTC; empty = unknown
};

/// The scores of `region` read from one output, and what was left out.
struct PlacementScoresRead {
  std::vector<PlacementScore> scores;
  std::vector<std::string> warnings;  ///< entries of other regions; zone IDs no name was found for
};

/// Reads one get-spot-placement-scores output (see the file comment). Throws spotdnn::invalid_argument
/// "function: SOURCE: SpotPlacementScores[2].Score = 11: why" for a malformed output, a bad request
/// (no type, a capacity below 1, an unknown unit), and a region or zone scored twice.
[[nodiscard]] inline PlacementScoresRead read_spot_placement_scores(const Json& json, const std::string& source, const std::string& region,
                                                                   const PlacementScoreRequest& request,
                                                                   const std::map<std::string, std::string>& zone_names_by_id = {},
                                                                   const std::string& function = "read_spot_placement_scores") {
  const AwsOutputReader in(source, function);
  using R = AwsOutputReader;
  if (request.instance_types.empty() || request.instance_types.size() > kMaxPlacementScoreTypes) {
    spotdnn::detail::fail(function, "request.instance_types", std::to_string(request.instance_types.size()) + " types",
                          "name the 1 to " + std::to_string(kMaxPlacementScoreTypes) + " instance types the scores were asked for");
  }
  if (request.target_capacity < 1 || request.target_capacity > kMaxQuotaGroupVcpus) {
    spotdnn::detail::fail(function, "request.target_capacity", request.target_capacity,
                          "must be from 1 to " + std::to_string(kMaxQuotaGroupVcpus));
  }
  const std::string& unit = request.target_capacity_unit;
  if (unit != "units" && unit != "vcpu" && unit != "memory-mib") {
    spotdnn::detail::fail(function, "request.target_capacity_unit", spotdnn::detail::quoted(unit), "expected units, vcpu or memory-mib");
  }
  for (const std::string& type : request.instance_types) {
    spotdnn::detail::require_non_empty(function, "request.instance_types", type);
    spotdnn::detail::require_printable_name(function, "request.instance_types", type);
  }
  std::string list_path = "SpotPlacementScores";
  const Json* list = &json;
  if (json.is_object()) {
    list = &in.required(json, "", "SpotPlacementScores");
  } else if (!json.is_array()) {
    in.fail_at("", json, "expected the output of aws ec2 get-spot-placement-scores: {\"SpotPlacementScores\": [...]} or its bare array");
  } else {
    list_path = "";
  }
  const Json& entries = in.array(*list, list_path);
  PlacementScoresRead read;
  std::set<std::string> seen;
  std::set<std::string> other_regions, unnamed_ids;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string path = R::index(list_path, i);
    const Json& entry = in.object(entries[i], path);
    const std::string entry_region = in.name(in.required(entry, path, "Region"), R::key(path, "Region"));
    const auto score = in.whole(in.required(entry, path, "Score"), R::key(path, "Score"), 1, 10);
    std::string zone;
    if (const Json* id = R::member(entry, "AvailabilityZoneId")) zone = in.name(*id, R::key(path, "AvailabilityZoneId"));
    if (entry_region != region) {
      other_regions.insert(entry_region);
      continue;
    }
    if (!seen.insert(zone).second) {
      in.fail(path, zone.empty() ? spotdnn::detail::quoted(region) : spotdnn::detail::quoted(zone),
              zone.empty() ? "the region is scored twice" : "the zone is scored twice");
    }
    if (!zone.empty()) {
      const auto named = zone_names_by_id.find(zone);
      if (named != zone_names_by_id.end()) {
        zone = named->second;
      } else {
        unnamed_ids.insert(zone);
      }
    }
    PlacementScore p;
    p.zone = zone;
    p.score = int(score);
    p.target_capacity = request.target_capacity;
    p.target_capacity_unit = request.target_capacity_unit;
    p.instance_types = request.instance_types;
    p.observed_at = request.observed_at;
    read.scores.push_back(std::move(p));
  }
  if (!other_regions.empty()) {
    std::string names;
    for (const std::string& r : other_regions) names += (names.empty() ? "" : ", ") + r;
    read.warnings.push_back(source + ": scores of other regions skipped (" + names + "); the catalog is of " + region);
  }
  if (!unnamed_ids.empty()) {
    std::string ids;
    for (const std::string& id : unnamed_ids) ids += (ids.empty() ? "" : ", ") + id;
    read.warnings.push_back(source + ": zone IDs kept as IDs (" + ids +
                            "): give describe-availability-zones output to name them, so that they match the catalog's zones");
  }
  return read;
}

}  // namespace spotdnn::io::aws
