#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/run_instance.hpp One instance of a run as EC2 lists it (`aws ec2 describe-instances`
/// filtered by the run tag): what the controller (`spotdnn watch`) observes and the cost report
/// (`spotdnn cost`) bills.

#include <optional>
#include <string>

#include "spotdnn/catalog.hpp"

namespace spotdnn::launcher {

/// Tag the controller puts on the instances of one of its launches: the launch's idempotency token, so
/// that a restarted controller recognises what it already started.
inline constexpr std::string_view kActionTag = "spotdnn:action";

/// One instance of a run, from describe-instances and the launcher's tags (tags.hpp).
struct RunInstance {
  std::string instance_id;         ///< i-0123456789abcdef0
  std::string type;                ///< EC2 instance type (InstanceType)
  Market market = Market::spot;    ///< spot when EC2 says InstanceLifecycle "spot", else on-demand
  std::string role;                ///< the spotdnn:role tag: "ps" or "worker"
  std::string state;               ///< State.Name: pending, running, shutting-down, terminated, stopping, stopped
  std::string state_reason_code;   ///< StateReason.Code, e.g. "Server.SpotInstanceTermination" ("" when absent)
  std::string zone;                ///< Placement.AvailabilityZone ("" when absent)
  std::string private_ip;          ///< PrivateIpAddress, dotted IPv4 ("" when absent: pending or gone)
  double launch_time_unix_s = 0;   ///< LaunchTime, seconds since 1970-01-01 UTC
  /// When it stopped running (terminated or stopped): from StateTransitionReason's "(YYYY-MM-DD HH:MM:SS
  /// GMT)"; empty while it runs or when EC2 gave no time.
  std::optional<double> end_time_unix_s;
  std::optional<long> rank_base;   ///< the spotdnn:rank-base tag
  std::string revocation_notice;   ///< the spotdnn:revoked tag its watcher set on a notice ("" when none)
  std::string action_token;        ///< the spotdnn:action tag (kActionTag): which controller launch started it

  /// pending or running: it holds (or will hold) a rank.
  [[nodiscard]] bool is_live() const { return state == "pending" || state == "running"; }
  /// Live and without a revocation notice: it can be counted on for more than two minutes.
  [[nodiscard]] bool is_dependable() const { return is_live() && revocation_notice.empty(); }
};

}  // namespace spotdnn::launcher
