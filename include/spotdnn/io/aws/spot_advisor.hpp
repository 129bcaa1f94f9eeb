#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/spot_advisor.hpp Interruption band and savings per Linux instance type of one region from
/// the Spot Instance Advisor's data file.
///
/// The Spot Instance Advisor (https://aws.amazon.com/ec2/spot/instance-advisor/) publishes its data as
/// https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json: {"ranges": [{"index": 0, "label": "<5%",
/// "dots": 0, "max": 5}, …], "spot_advisor": {"us-east-1": {"Linux": {"p3.2xlarge": {"s": 70, "r": 2}, …},
/// "Windows": {…}}, …}, "instance_types": {…}, "global_rate": "<10%"}: `r` is the index of the type's range
/// of "frequency of interruption", `s` the savings over on-demand in percent. AWS does not version the file;
/// keys spotdnn does not read are ignored. A type or region may be absent.

#include <map>
#include <string>
#include <string_view>

#include "spotdnn/catalog.hpp"
#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// The advisor's entry for one Linux type.
struct SpotAdvisorEntry {
  std::string interruption_band;  ///< one of kInterruptionBands
  int savings_percent = 0;        ///< `s`: savings over on-demand, 0..100
};

/// What the advisor says about one region's Linux types.
struct SpotAdvisor {
  bool region_found = false;  ///< spot_advisor has the region (with Linux types)
  std::map<std::string, SpotAdvisorEntry> linux_types;
};

/// Our band name for an advisor range label ("<5%", "5-10%", "10-15%", "15-20%", ">20%"; spaces are
/// ignored), or "" when the label is none of them.
[[nodiscard]] inline std::string_view interruption_band_from_label(std::string_view label) {
  std::string compact;
  for (char c : label.substr(0, 64)) {
    if (c != ' ') compact += c;
  }
  for (std::string_view band : kInterruptionBands) {
    if (compact == band) return band;
  }
  return {};
}

/// Reads the advisor's data: `ranges` (each with a whole `index` 0..999, given once, and a known `label`)
/// and `spot_advisor[region].Linux` (each type with `r`, a range index, and `s`, a whole 0..100). An unknown
/// label or index is an error naming the path; other regions and operating systems are not read. Errors
/// throw spotdnn::invalid_argument "function: SOURCE: spot_advisor.us-east-1.Linux.p3.2xlarge.r = 9: why".
[[nodiscard]] inline SpotAdvisor read_spot_advisor(const Json& json, const std::string& source, const std::string& region,
                                                   const std::string& function = "read_spot_advisor") {
  const AwsOutputReader in(source, function);
  using R = AwsOutputReader;
  in.object(json, "");
  const Json& ranges = in.array(in.required(json, "", "ranges"), "ranges");
  std::map<std::int64_t, std::string> band_of_index;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const std::string path = R::index("ranges", i);
    const Json& range = in.object(ranges[i], path);
    const std::int64_t index = in.whole(in.required(range, path, "index"), R::key(path, "index"), 0, 999);
    const std::string label = in.text(in.required(range, path, "label"), R::key(path, "label"));
    const std::string_view band = interruption_band_from_label(label);
    if (band.empty()) in.fail(R::key(path, "label"), spotdnn::detail::quoted(label), "expected one of <5%, 5-10%, 10-15%, 15-20%, >20%");
    if (!band_of_index.emplace(index, std::string(band)).second) in.fail(R::key(path, "index"), std::to_string(index), "given twice");
  }
  SpotAdvisor advisor;
  const Json& regions = in.object(in.required(json, "", "spot_advisor"), "spot_advisor");
  const Json* in_region = R::member(regions, region);
  if (in_region == nullptr) return advisor;
  const std::string region_path = R::key("spot_advisor", region);
  in.object(*in_region, region_path);
  const Json* linux_types = R::member(*in_region, "Linux");
  if (linux_types == nullptr) return advisor;
  const std::string linux_path = R::key(region_path, "Linux");
  in.object(*linux_types, linux_path);
  if (linux_types->size() > kMaxAwsRows) in.fail(linux_path, std::to_string(linux_types->size()) + " types", "too many types");
  advisor.region_found = true;
  for (auto it = linux_types->begin(); it != linux_types->end(); ++it) {
    const std::string path = R::key(linux_path, it.key());
    const Json& entry = in.object(it.value(), path);
    const std::int64_t r = in.whole(in.required(entry, path, "r"), R::key(path, "r"), 0, 999);
    const auto band = band_of_index.find(r);
    if (band == band_of_index.end()) in.fail(R::key(path, "r"), std::to_string(r), "no range has this index");
    SpotAdvisorEntry value;
    value.interruption_band = band->second;
    value.savings_percent = int(in.whole(in.required(entry, path, "s"), R::key(path, "s"), 0, 100));
    advisor.linux_types.emplace(it.key(), value);
  }
  return advisor;
}

}  // namespace spotdnn::io::aws
