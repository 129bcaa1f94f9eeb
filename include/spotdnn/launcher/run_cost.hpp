#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/run_cost.hpp What a run has cost: each instance's billed seconds (EC2 per-second billing)
/// priced by the spot price history over its life (spot) or the catalog's on-demand price (on-demand, the
/// parameter server included), so far and, with a deadline, projected to it. Pure computation.
///
/// Billing rules (Linux instances; docs/cost.md gives the sources):
/// - EC2 bills Linux instances per second with a minimum of 60 seconds ("EC2 usage is billed in one-second
///   increments, with a minimum of 60 seconds": Amazon EC2 pricing, per-second billing), so
///   billed_s = max(60, end − launch), from LaunchTime to the end (StateTransitionReason's time) or `now`.
/// - A spot instance pays the spot price in force over its life, to the second ("You pay the Spot price
///   that's in effect, billed to the nearest second": AWS whitepaper "Overview of Amazon EC2 Spot
///   Instances", How Spot Instances Work). The price in force at t is the latest price history record at
///   or before t, so the cost is ∫ p(t) dt over [launch, launch + billed_s] of a piecewise-constant p.
///   (describe-spot-price-history with --start-time "also returns the last price change before the start
///   time, which is the effective price as of the start time": EC2 API Reference, DescribeSpotPriceHistory.)
/// - A spot instance that Amazon EC2 interrupts within its first hour is not charged; interrupted later it
///   is charged for the seconds used; one the user stops or terminates is charged for the seconds used
///   ("Billing for interrupted Spot Instances", Amazon EC2 User Guide: Linux, "If the Amazon EC2
///   interrupts the Spot Instance: interrupted in the first hour: no charge; in any hour after the first
///   hour: charged for the seconds used"). EC2's interruption shows as StateReason.Code
///   "Server.SpotInstanceTermination".
/// - An on-demand instance pays the on-demand price × billed_s / 3600.
/// EBS volumes, data transfer and taxes are not counted.
///
/// A price that is not known (no history record at or before the instance's launch for its type and zone,
/// no zone, no on-demand price in the catalog, or a terminated instance EC2 gave no end time for) does not
/// throw: the instance's row is marked (cost empty, `missing` says why) and the totals say they are
/// incomplete.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/aws/spot_price_history.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/launcher/run_instance.hpp"

namespace spotdnn::launcher {

/// Shortest billed life of a Linux instance (EC2 per-second billing's one-minute minimum).
inline constexpr double kMinimumBilledSeconds = 60;
/// A spot instance EC2 interrupts before it has run this long is not charged.
inline constexpr double kFreeInterruptionSeconds = 3600;
/// StateReason.Code of a spot instance Amazon EC2 interrupted.
inline constexpr std::string_view kSpotInterruptionReasonCode = "Server.SpotInstanceTermination";

/// One spot price record: from `at_unix_s` on (until the next record), this price was in force.
struct SpotPricePoint {
  std::int64_t at_unix_s = 0;
  double price_usd_per_hour = 0;
};

/// Linux spot price histories per (instance type, Availability Zone), each sorted by time.
class SpotPriceBook {
 public:
  /// Adds a record; at a time already recorded for (type, zone), the lower price is kept (the two Linux
  /// product descriptions may both have a record). Throws spotdnn::invalid_argument for a price that is
  /// not finite and greater than zero.
  void add(const std::string& type, const std::string& zone, std::int64_t at_unix_s, double price_usd_per_hour) {
    if (!(price_usd_per_hour > 0) || !std::isfinite(price_usd_per_hour)) {
      spotdnn::detail::fail("SpotPriceBook::add", type + " in " + zone, price_usd_per_hour,
                            "a spot price must be a finite number greater than zero");
    }
    std::vector<SpotPricePoint>& points = series_[{type, zone}];
    const auto at = std::lower_bound(points.begin(), points.end(), at_unix_s,
                                     [](const SpotPricePoint& p, std::int64_t t) { return p.at_unix_s < t; });
    if (at != points.end() && at->at_unix_s == at_unix_s) {
      at->price_usd_per_hour = std::min(at->price_usd_per_hour, price_usd_per_hour);
    } else {
      points.insert(at, SpotPricePoint{at_unix_s, price_usd_per_hour});
    }
  }

  /// The records of (type, zone), sorted by time; nullptr when there are none.
  [[nodiscard]] const std::vector<SpotPricePoint>* series(const std::string& type, const std::string& zone) const {
    const auto it = series_.find({type, zone});
    return it == series_.end() ? nullptr : &it->second;
  }

  /// Number of (type, zone) series.
  [[nodiscard]] std::size_t size() const { return series_.size(); }

 private:
  std::map<std::pair<std::string, std::string>, std::vector<SpotPricePoint>> series_;
};

/// Adds every Linux row of one `aws ec2 describe-spot-price-history --output json` output to `book`. The
/// output is first read by io::aws::read_spot_price_history (every row checked, duplicates refused), so it
/// is refused the same way; an output with no rows at all adds nothing (EC2 has no record for that type
/// and zone: the cost marks the price missing).
inline void add_spot_price_history(SpotPriceBook& book, const io::Json& output, const std::string& source,
                                   const std::string& function = "add_spot_price_history") {
  if (output.is_object()) {
    const auto rows = output.find("SpotPriceHistory");
    if (rows != output.end() && rows->is_array() && rows->empty()) return;
  }
  (void)io::aws::read_spot_price_history(output, source, function);  // validates every row
  for (const io::Json& row : output.at("SpotPriceHistory")) {
    const std::string& description = row.at("ProductDescription").get_ref<const std::string&>();
    bool is_linux = false;
    for (std::string_view d : io::aws::kLinuxProductDescriptions) is_linux = is_linux || d == description;
    if (!is_linux) continue;
    const double price = std::stod(row.at("SpotPrice").get_ref<const std::string&>());
    const std::int64_t at = io::aws::parse_aws_timestamp(row.at("Timestamp").get_ref<const std::string&>(), function, source);
    book.add(row.at("InstanceType").get<std::string>(), row.at("AvailabilityZone").get<std::string>(), at, price);
  }
}

/// USD paid from `from_s` to `to_s` (Unix seconds, from_s ≤ to_s) at the piecewise-constant price of
/// `points` (sorted by time): Σ over the records' intervals of price × seconds / 3600, where the price
/// in force at t is the latest record at or before t (the last record's price holds after it). nullopt
/// when no record is at or before `from_s` (the price at the start is unknown).
[[nodiscard]] inline std::optional<double> spot_cost_usd(const std::vector<SpotPricePoint>& points, double from_s, double to_s) {
  if (points.empty() || double(points.front().at_unix_s) > from_s) return std::nullopt;
  if (!(to_s > from_s)) return 0.0;
  // The record in force at from_s: the last one at or before it.
  auto it = std::upper_bound(points.begin(), points.end(), from_s,
                             [](double t, const SpotPricePoint& p) { return t < double(p.at_unix_s); });
  --it;
  double usd = 0, t = from_s;
  for (; it != points.end() && t < to_s; ++it) {
    const auto next = std::next(it);
    const double until = next == points.end() ? to_s : std::min(to_s, double(next->at_unix_s));
    if (until > t) usd += it->price_usd_per_hour * (until - t) / 3600.0;
    t = std::max(t, until);
  }
  return usd;
}

/// The spot price in force at `at_s` (the latest record at or before it), or nullopt.
[[nodiscard]] inline std::optional<double> spot_price_at(const std::vector<SpotPricePoint>& points, double at_s) {
  auto it = std::upper_bound(points.begin(), points.end(), at_s,
                             [](double t, const SpotPricePoint& p) { return t < double(p.at_unix_s); });
  if (it == points.begin()) return std::nullopt;
  return std::prev(it)->price_usd_per_hour;
}

/// The on-demand price of `type` in `catalog`: the parameter server's price for its type, a type quoted
/// on-demand, or a spot type's on_demand_price_usd_per_hour; nullopt when the catalog gives none.
[[nodiscard]] inline std::optional<double> on_demand_price_usd_per_hour(const Catalog& catalog, std::string_view type) {
  if (type == catalog.parameter_server.type && catalog.parameter_server.price_usd_per_hour > 0) {
    return catalog.parameter_server.price_usd_per_hour;
  }
  if (const auto k = catalog.index_of(type)) {
    const InstanceType& t = catalog.instance_types[*k];
    if (t.market == Market::on_demand && t.price_usd_per_hour > 0) return t.price_usd_per_hour;
    if (t.on_demand_price_usd_per_hour > 0) return t.on_demand_price_usd_per_hour;
  }
  return std::nullopt;
}

/// Billed seconds of a life of `run_s` seconds: max(60, run_s) (EC2 per-second billing, one-minute
/// minimum); 0 for a spot instance EC2 interrupted before an hour (`interrupted_by_ec2`, run_s < 3600).
[[nodiscard]] inline double billed_seconds(double run_s, bool interrupted_by_ec2) {
  if (interrupted_by_ec2 && run_s < kFreeInterruptionSeconds) return 0;
  return std::max(kMinimumBilledSeconds, std::max(0.0, run_s));
}

/// What one instance has cost.
struct InstanceCost {
  RunInstance instance;
  /// End of the life billed so far: its end time, or `now` while it runs (or EC2 gave no end time and it
  /// is not terminated or stopped).
  double end_unix_s = 0;
  bool ended = false;               ///< it has an end time (terminated or stopped)
  double run_s = 0;                 ///< end_unix_s − launch, at least 0
  bool interrupted_by_ec2 = false;  ///< a spot instance EC2 interrupted (StateReason Server.SpotInstanceTermination)
  double billed_s = 0;              ///< billed_seconds(run_s, interrupted_by_ec2)
  /// USD so far; empty when a price is missing (then `missing` says why).
  std::optional<double> cost_usd;
  /// The hourly price: on-demand, or the spot price in force at the end of the billed life.
  std::optional<double> price_usd_per_hour;
  /// What the billed seconds would have cost on demand (spot instances; the same as cost_usd on demand).
  std::optional<double> on_demand_cost_usd;
  /// USD if a live instance runs to the deadline (the last known spot price holding); an ended one's
  /// cost_usd. Empty without a deadline or a price.
  std::optional<double> projected_cost_usd;
  std::string missing;  ///< why cost_usd is empty ("" when it is known)
};

/// What a run has cost (run_cost()).
struct RunCost {
  std::vector<InstanceCost> instances;
  double now_unix_s = 0;
  double cost_so_far_usd = 0;        ///< Σ cost_usd of the instances priced
  double on_demand_cost_usd = 0;     ///< Σ on_demand_cost_usd of the instances with an on-demand price
  bool complete = true;              ///< every instance priced
  std::optional<double> deadline_unix_s;      ///< the parameter server's launch + the plan's deadline_s
  std::optional<double> projected_total_usd;  ///< Σ projected_cost_usd (only when every one is known)
  std::vector<std::string> missing;           ///< "i-…: why" for every instance not priced
};

/// When "now" is and the run's deadline.
struct RunCostOptions {
  double now_unix_s = 0;                ///< the end of the life billed so far of instances that still run
  std::optional<double> deadline_s;     ///< the plan's deadline_s: seconds after the parameter server's launch
};

/// The cost of `instances` (see the file comment for the rules): spot instances priced from `spot_prices`
/// (their type and zone), on-demand ones from `catalog`. With options.deadline_s and a parameter server
/// (role "ps"; the earliest when several) the deadline is its launch + deadline_s and live instances
/// (pending, running) are projected to max(now, deadline). Throws spotdnn::invalid_argument for a `now`
/// or deadline_s that is not finite (or a negative deadline).
[[nodiscard]] inline RunCost run_cost(const std::vector<RunInstance>& instances, const SpotPriceBook& spot_prices,
                                      const Catalog& catalog, const RunCostOptions& options) {
  constexpr std::string_view fn = "run_cost";
  spotdnn::detail::require_finite(fn, "now_unix_s", options.now_unix_s);
  RunCost cost;
  cost.now_unix_s = options.now_unix_s;
  if (options.deadline_s) {
    spotdnn::detail::require_finite(fn, "deadline_s", *options.deadline_s);
    spotdnn::detail::require_non_negative(fn, "deadline_s", *options.deadline_s);
    for (const RunInstance& instance : instances) {
      if (instance.role != "ps") continue;
      const double at = instance.launch_time_unix_s + *options.deadline_s;
      if (!cost.deadline_unix_s || at < *cost.deadline_unix_s) cost.deadline_unix_s = at;
    }
  }
  bool projection_complete = cost.deadline_unix_s.has_value();
  double projected_total = 0;
  for (const RunInstance& instance : instances) {
    InstanceCost row;
    row.instance = instance;
    const bool has_end = instance.end_time_unix_s.has_value();
    const bool stopped_for_good = instance.state == "terminated" || instance.state == "stopped";
    row.ended = has_end;
    row.end_unix_s = has_end ? *instance.end_time_unix_s : options.now_unix_s;
    row.run_s = std::max(0.0, row.end_unix_s - instance.launch_time_unix_s);
    row.interrupted_by_ec2 = instance.market == Market::spot && has_end && instance.state_reason_code == kSpotInterruptionReasonCode;
    row.billed_s = billed_seconds(row.run_s, row.interrupted_by_ec2);
    const double launch = instance.launch_time_unix_s;
    const std::optional<double> on_demand = on_demand_price_usd_per_hour(catalog, instance.type);
    if (on_demand) row.on_demand_cost_usd = *on_demand * row.billed_s / 3600.0;

    // The cost of a life billed for `seconds` from launch, or nullopt (and `missing` set).
    const std::vector<SpotPricePoint>* series =
        instance.market == Market::spot && !instance.zone.empty() ? spot_prices.series(instance.type, instance.zone) : nullptr;
    const auto priced = [&](double seconds) -> std::optional<double> {
      if (instance.market == Market::on_demand) {
        if (!on_demand) return std::nullopt;
        return *on_demand * seconds / 3600.0;
      }
      if (series == nullptr) return std::nullopt;
      return spot_cost_usd(*series, launch, launch + seconds);
    };
    if (!has_end && stopped_for_good) {
      row.missing = "EC2 gave no end time for this " + instance.state + " instance (StateTransitionReason has no \"(... GMT)\")";
    } else if (instance.market == Market::on_demand && !on_demand) {
      row.missing = "no on-demand price for " + instance.type + " in the catalog";
    } else if (instance.market == Market::spot && instance.zone.empty()) {
      row.missing = "no Availability Zone for this spot instance, so no spot price";
    } else if (instance.market == Market::spot && series == nullptr) {
      row.missing = "no spot price record for " + instance.type + " in " + instance.zone;
    } else {
      row.cost_usd = priced(row.billed_s);
      if (!row.cost_usd) {
        row.missing = "no spot price record for " + instance.type + " in " + instance.zone + " at or before its launch " +
                      io::aws::format_utc_timestamp(std::int64_t(launch));
      }
    }
    if (row.cost_usd) {
      row.price_usd_per_hour = instance.market == Market::on_demand ? on_demand
                                                                     : spot_price_at(*series, launch + row.billed_s);
      cost.cost_so_far_usd += *row.cost_usd;
    } else {
      cost.complete = false;
      cost.missing.push_back(instance.instance_id + ": " + row.missing);
    }
    if (row.on_demand_cost_usd) cost.on_demand_cost_usd += *row.on_demand_cost_usd;

    if (cost.deadline_unix_s && row.cost_usd) {
      if (instance.is_live()) {
        const double until = std::max(options.now_unix_s, *cost.deadline_unix_s);
        row.projected_cost_usd = priced(billed_seconds(until - launch, false));
      } else {
        row.projected_cost_usd = row.cost_usd;
      }
    }
    if (row.projected_cost_usd) {
      projected_total += *row.projected_cost_usd;
    } else {
      projection_complete = false;
    }
    cost.instances.push_back(std::move(row));
  }
  if (projection_complete) cost.projected_total_usd = projected_total;
  return cost;
}

}  // namespace spotdnn::launcher
