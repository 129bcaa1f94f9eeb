#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/spot_price_history.hpp The latest Linux spot price per (instance type, Availability Zone)
/// from `aws ec2 describe-spot-price-history --output json`.
///
/// Shape (EC2 API reference, DescribeSpotPriceHistory; AWS CLI reference, ec2 describe-spot-price-history):
/// {"SpotPriceHistory": [{"AvailabilityZone": "us-east-1a", "InstanceType": "p3.2xlarge",
///   "ProductDescription": "Linux/UNIX", "SpotPrice": "0.918000", "Timestamp": "2026-11-24T08:00:00+00:00"},
///   …], "NextToken": "…"}. Rows come in no reliable order; only "Linux/UNIX" and "Linux/UNIX (Amazon VPC)"
/// rows are kept, and per (type, zone) the row with the latest Timestamp wins (at one time, the lower of the
/// two Linux descriptions' prices). Unknown keys are ignored. The other forms of output_forms.hpp are read
/// too: the bare list (`--query SpotPriceHistory`, or a stream of rows; paths "[3].SpotPrice"), a wrapped
/// recorded response, null for an absent field.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/aws/output_forms.hpp"
#include "spotdnn/io/aws/timestamp.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// The ProductDescription values of Linux spot prices.
inline constexpr std::string_view kLinuxProductDescriptions[] = {"Linux/UNIX", "Linux/UNIX (Amazon VPC)"};

/// The latest Linux spot price of one instance type in one Availability Zone.
struct SpotPriceObservation {
  std::string instance_type;
  std::string availability_zone;
  double price_usd_per_hour = 0;
  std::int64_t observed_at_unix_s = 0;
  std::string path;  ///< where the row sits, e.g. "SpotPriceHistory[3]", for messages
};

/// What one describe-spot-price-history output says.
struct SpotPriceHistory {
  /// One observation per (type, zone), the latest; ordered by type, then zone.
  std::vector<SpotPriceObservation> latest;
  std::size_t rows = 0;              ///< rows in the output
  std::size_t non_linux_rows = 0;    ///< rows of other products (Windows, SUSE, Red Hat, …), skipped
  bool more_pages = false;           ///< the output has a NextToken: later pages were not fetched
  std::string list_path = "SpotPriceHistory";  ///< where the rows are: "SpotPriceHistory", "" for a bare list
};

/// Reads a describe-spot-price-history output. Every row's AvailabilityZone, InstanceType,
/// ProductDescription, SpotPrice (a decimal string, greater than zero) and Timestamp (parse_aws_timestamp)
/// are required; a row given twice (same type, zone, description and time) is an error; an output without
/// a Linux row is an error "no Linux/UNIX spot price in SOURCE". Errors throw spotdnn::invalid_argument
/// "function: SOURCE: SpotPriceHistory[3].SpotPrice = "abc": why".
[[nodiscard]] inline SpotPriceHistory read_spot_price_history(const Json& json, const std::string& source,
                                                              const std::string& function = "read_spot_price_history") {
  const AwsOutputReader in(source, function);
  const AwsOutputList found = find_output_list(in, json, kSpotPriceHistoryOutput);
  const Json& rows = *found.list;
  SpotPriceHistory history;
  history.rows = rows.size();
  history.list_path = found.path;
  if (const Json* token = found.output != nullptr ? AwsOutputReader::member(*found.output, "NextToken") : nullptr) {
    history.more_pages = !(token->is_string() && token->get_ref<const std::string&>().empty());
  }

  struct Latest {
    SpotPriceObservation observation;
    std::string description;
  };
  std::map<std::pair<std::string, std::string>, Latest> latest;  // (type, zone)
  std::map<std::string, std::string> seen;                        // type|zone|description|time → path
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string path = AwsOutputReader::index(found.path, i);
    const Json& row = in.object(rows[i], path);
    const std::string description = in.text(in.required(row, path, "ProductDescription"), AwsOutputReader::key(path, "ProductDescription"));
    const std::string type = in.name(in.required(row, path, "InstanceType"), AwsOutputReader::key(path, "InstanceType"));
    const std::string zone = in.name(in.required(row, path, "AvailabilityZone"), AwsOutputReader::key(path, "AvailabilityZone"));
    const std::string price_path = AwsOutputReader::key(path, "SpotPrice");
    const double price = in.decimal_text(in.required(row, path, "SpotPrice"), price_path, "USD per hour");
    if (!(price > 0)) in.fail_at(price_path, row.at("SpotPrice"), "a spot price must be greater than zero");
    const std::string time_path = AwsOutputReader::key(path, "Timestamp");
    const std::string time_text = in.text(in.required(row, path, "Timestamp"), time_path);
    const std::int64_t time = parse_aws_timestamp(time_text, function, in.where(time_path));

    std::string identity = type;
    identity.append(1, '\0').append(zone).append(1, '\0').append(description).append(1, '\0').append(std::to_string(time));
    if (const auto [it, fresh] = seen.emplace(identity, path); !fresh) {
      in.fail_at(path, row, "the same row (type, zone, product, time) as " + it->second);
    }
    bool is_linux = false;
    for (std::string_view d : kLinuxProductDescriptions) is_linux = is_linux || d == description;
    if (!is_linux) {
      ++history.non_linux_rows;
      continue;
    }
    SpotPriceObservation observation{type, zone, price, time, path};
    auto [it, fresh] = latest.try_emplace({type, zone}, Latest{observation, description});
    if (fresh) continue;
    SpotPriceObservation& kept = it->second.observation;
    if (time > kept.observed_at_unix_s || (time == kept.observed_at_unix_s && price < kept.price_usd_per_hour)) {
      it->second = Latest{observation, description};
    }
  }
  if (latest.empty()) {
    in.fail(found.path, std::to_string(rows.size()) + " rows", "no Linux/UNIX spot price in " + source);
  }
  for (auto& [key, entry] : latest) history.latest.push_back(std::move(entry.observation));
  return history;
}

}  // namespace spotdnn::io::aws
