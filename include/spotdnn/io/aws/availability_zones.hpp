#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/availability_zones.hpp Availability Zone names and IDs from
/// `aws ec2 describe-availability-zones --output json`: the map from zone ID (use1-az1, the same data
/// centre in every account) to the zone name this account sees (us-east-1c, which differs between accounts).
///
/// Shape (EC2 API reference, DescribeAvailabilityZones / AvailabilityZone; AWS CLI reference, ec2
/// describe-availability-zones): {"AvailabilityZones": [{"State": "available", "OptInStatus":
/// "opt-in-not-required", "Messages": [], "RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId":
/// "use1-az4", "GroupName": "us-east-1", "NetworkBorderGroup": "us-east-1", "ZoneType": "availability-zone"},
/// …]}. ZoneName, ZoneId and RegionName are required; State and ZoneType are read when given; other keys
/// are ignored. The forms of output_forms.hpp are read too: the bare list (`--query AvailabilityZones`, or a
/// stream of its entries; paths "[2].ZoneId"), a wrapped recorded response, null for an absent field.
/// The output lists one region's zones (the command is regional): outputs of several regions are merged
/// with merge_zone_names.
///
/// Refused, naming SOURCE and the key path: more than kMaxAvailabilityZones entries, a name or ID longer
/// than kMaxZoneIdBytes or outside its character set, a ZoneName that is not a zone of its RegionName, and
/// a ZoneName or ZoneId listed twice (one ID with two names, or one name with two IDs).

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/aws/output_forms.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// The describe-availability-zones output, for find_output_list and its messages.
inline constexpr AwsOutputKind kAvailabilityZonesOutput{"describe-availability-zones", "--availability-zones", "AvailabilityZones"};

/// Most zones read from one describe-availability-zones output (a region has at most a few dozen, Local
/// and Wavelength Zones included).
inline constexpr std::size_t kMaxAvailabilityZones = 10000;
/// Longest zone name, zone ID or region name read: 64 bytes ("us-east-1-atl-2a", "use1-atl2-az1").
inline constexpr std::size_t kMaxZoneIdBytes = 64;

/// One zone of the output.
struct AvailabilityZoneInfo {
  std::string name;       ///< ZoneName, e.g. "us-east-1a" (this account's name)
  std::string id;         ///< ZoneId, e.g. "use1-az4" (the same in every account)
  std::string region;     ///< RegionName, e.g. "us-east-1"
  std::string state;      ///< State ("available", ...); empty when not given
  std::string zone_type;  ///< ZoneType ("availability-zone", "local-zone", ...); empty when not given
};

/// What one describe-availability-zones output says.
struct AvailabilityZones {
  std::vector<AvailabilityZoneInfo> zones;         ///< in the output's order
  std::map<std::string, std::string> names_by_id;  ///< ZoneId → ZoneName
};

namespace zones_detail {

/// True when `text` is 1 to kMaxZoneIdBytes of lower-case letters, digits and '-' (region names, zone
/// names and zone IDs all are).
inline bool is_zone_text(std::string_view text) {
  if (text.empty() || text.size() > kMaxZoneIdBytes) return false;
  for (const char c : text) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

/// True when `zone` is a zone of `region`: the region's name followed by a letter ("us-east-1a") or by "-"
/// and more ("us-east-1-bos-1a", a Local Zone).
inline bool zone_in_region(std::string_view zone, std::string_view region) {
  if (zone.size() <= region.size() || zone.substr(0, region.size()) != region) return false;
  const char next = zone[region.size()];
  return (next >= 'a' && next <= 'z') || (next == '-' && zone.size() > region.size() + 1);
}

}  // namespace zones_detail

/// Reads a describe-availability-zones output (or its bare list, find_output_list). Errors throw
/// spotdnn::invalid_argument "function: SOURCE: AvailabilityZones[2].ZoneId = …: why".
[[nodiscard]] inline AvailabilityZones read_availability_zones(const Json& json, const std::string& source,
                                                               const std::string& function = "read_availability_zones") {
  const AwsOutputReader in(source, function);
  using R = AwsOutputReader;
  const AwsOutputList found = find_output_list(in, json, kAvailabilityZonesOutput);
  const Json& list = *found.list;
  if (list.size() > kMaxAvailabilityZones) {
    in.fail(found.path, std::to_string(list.size()) + " entries", "at most " + std::to_string(kMaxAvailabilityZones) + " zones are read");
  }
  AvailabilityZones zones;
  std::map<std::string, std::string> path_by_name, path_by_id;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = R::index(found.path, i);
    const Json& entry = in.object(list[i], path);
    const auto zone_text = [&](std::string_view key, std::string_view example) {
      const std::string key_path = R::key(path, key);
      std::string text = in.name(in.required(entry, path, key), key_path);
      if (!zones_detail::is_zone_text(text)) {
        in.fail(key_path, spotdnn::detail::quoted(text.substr(0, 80)),
                "expected 1 to " + std::to_string(kMaxZoneIdBytes) + " lower-case letters, digits and '-', like " + std::string(example));
      }
      return text;
    };
    AvailabilityZoneInfo zone;
    zone.region = zone_text("RegionName", "us-east-1");
    zone.name = zone_text("ZoneName", "us-east-1a");
    zone.id = zone_text("ZoneId", "use1-az4");
    if (!zones_detail::zone_in_region(zone.name, zone.region)) {
      in.fail(R::key(path, "ZoneName"), spotdnn::detail::quoted(zone.name), "not a zone of its RegionName " + zone.region);
    }
    if (const Json* state = R::member(entry, "State")) zone.state = in.text(*state, R::key(path, "State"));
    if (const Json* type = R::member(entry, "ZoneType")) zone.zone_type = in.text(*type, R::key(path, "ZoneType"));
    if (const auto [it, fresh] = path_by_name.emplace(zone.name, path); !fresh) {
      in.fail(R::key(path, "ZoneName"), spotdnn::detail::quoted(zone.name), "listed twice (also at " + it->second + ")");
    }
    if (const auto [it, fresh] = path_by_id.emplace(zone.id, path); !fresh) {
      in.fail(R::key(path, "ZoneId"), spotdnn::detail::quoted(zone.id), "listed twice (also at " + it->second + ")");
    }
    zones.names_by_id.emplace(zone.id, zone.name);
    zones.zones.push_back(std::move(zone));
  }
  return zones;
}

/// Adds the zone names of `zones` (read from `source`) to `names_by_id`, for several regions' outputs.
/// An ID already mapped to another name, or a name already given to another ID, throws naming both;
/// the same pair twice (one output given twice) is accepted.
inline void merge_zone_names(std::map<std::string, std::string>& names_by_id, const AvailabilityZones& zones,
                             const std::string& source, const std::string& function = "merge_zone_names") {
  std::map<std::string, std::string> id_by_name;
  for (const auto& [id, name] : names_by_id) id_by_name.emplace(name, id);
  for (const AvailabilityZoneInfo& zone : zones.zones) {
    if (const auto it = names_by_id.find(zone.id); it != names_by_id.end() && it->second != zone.name) {
      spotdnn::detail::fail(function, source + ": ZoneId " + zone.id, spotdnn::detail::quoted(zone.name),
                            "the zone ID is already named " + it->second + " by another output (outputs of different accounts?)");
    }
    if (const auto it = id_by_name.find(zone.name); it != id_by_name.end() && it->second != zone.id) {
      spotdnn::detail::fail(function, source + ": ZoneName " + zone.name, spotdnn::detail::quoted(zone.id),
                            "the zone name already belongs to zone ID " + it->second + " in another output (outputs of different accounts?)");
    }
    names_by_id[zone.id] = zone.name;
    id_by_name[zone.name] = zone.id;
  }
}

}  // namespace spotdnn::io::aws
