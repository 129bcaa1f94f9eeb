#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/run_instances_json.hpp The instances of one run from `aws ec2 describe-instances --output
/// json` (Reservations[].Instances[]), as RunInstance values: what `spotdnn cost` bills and `spotdnn watch`
/// observes.
///
/// Shape (EC2 API reference, DescribeInstances and Instance; AWS CLI reference, ec2 describe-instances):
///   {"Reservations": [{"Instances": [{"InstanceId": "i-0123456789abcdef0", "InstanceType": "p3.2xlarge",
///     "InstanceLifecycle": "spot",                      // absent for on-demand instances
///     "LaunchTime": "2026-11-24T08:00:00+00:00", "State": {"Code": 48, "Name": "terminated"},
///     "StateReason": {"Code": "Server.SpotInstanceTermination", "Message": "..."},
///     "StateTransitionReason": "Service initiated (2026-11-24 09:00:00 GMT)",
///     "Placement": {"AvailabilityZone": "us-east-1b"},
///     "Tags": [{"Key": "spotdnn:run", "Value": "20261124-080000-a1b2c3"}, ...]}, ...]}, ...]}
///
/// Only instances whose spotdnn:run tag equals the run id exactly are returned: another run's instance (or
/// one without the tag) is skipped, never billed nor acted on, though its keys are still type-checked.
/// Unknown keys are ignored (AWS adds fields over time); a key spotdnn reads that has the wrong type or a
/// bad value throws spotdnn::invalid_argument naming its key path:
///   "run_instances_from_describe: Reservations[0].Instances[2].LaunchTime = "noon": why".

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/availability_zone.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/aws/timestamp.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/run_instance.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"

namespace spotdnn::launcher {

/// Most instances one describe-instances output may list (all runs together); more is refused.
inline constexpr std::size_t kMaxDescribedInstances = 100000;
/// Most tags one instance may carry (EC2 allows 50 per resource); more is refused.
inline constexpr std::size_t kMaxInstanceTags = 1000;
/// Longest tag value, StateReason code or StateTransitionReason read (EC2 tag values: at most 256 characters).
inline constexpr std::size_t kMaxDescribedTextBytes = 1024;

/// The EC2 instance states (InstanceState.Name).
inline constexpr std::string_view kInstanceStates[] = {"pending", "running", "shutting-down", "terminated", "stopping", "stopped"};

/// True for an EC2 instance ID: "i-" and 8 to 17 lower-case hex digits (^i-[0-9a-f]{8,17}$).
[[nodiscard]] constexpr bool is_instance_id(std::string_view text) {
  if (text.size() < 10 || text.size() > 19 || text.substr(0, 2) != "i-") return false;
  for (char c : text.substr(2)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

namespace run_instances_detail {

/// Compact text of a value for a message (at most 60 characters).
template <typename J>
[[nodiscard]] std::string excerpt(const J& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

/// "path.key" and "path[i]".
[[nodiscard]] inline std::string key(std::string_view path, std::string_view name) {
  return path.empty() ? std::string(name) : std::string(path) + "." + std::string(name);
}
[[nodiscard]] inline std::string index(std::string_view path, std::size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

/// Reads one describe-instances output for `function`'s messages.
struct Reader {
  std::string_view function;

  template <typename J>
  [[noreturn]] void fail_at(const std::string& path, const J& value, std::string_view why) const {
    spotdnn::detail::fail(function, path, excerpt(value), why);
  }
  template <typename J>
  const J& object(const J& value, const std::string& path) const {
    if (!value.is_object()) fail_at(path, value, "expected a JSON object");
    return value;
  }
  template <typename J>
  const J& array(const J& value, const std::string& path, std::size_t max_entries) const {
    if (!value.is_array()) fail_at(path, value, "expected a JSON array");
    if (value.size() > max_entries) {
      spotdnn::detail::fail(function, path, std::to_string(value.size()) + " entries",
                            "at most " + std::to_string(max_entries) + " entries are read");
    }
    return value;
  }
  /// The member `name`, or nullptr when absent or null (the CLI prints null for some unset fields).
  template <typename J>
  static const J* member(const J& object, std::string_view name) {
    const auto it = object.find(std::string(name));
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }
  template <typename J>
  const J& required(const J& object, const std::string& path, std::string_view name) const {
    const J* value = member(object, name);
    if (value == nullptr) spotdnn::detail::fail(function, key(path, name), "missing", "this key is required");
    return *value;
  }
  /// A string of at most kMaxDescribedTextBytes of printable UTF-8 (may be empty).
  template <typename J>
  std::string text(const J& value, const std::string& path) const {
    if (!value.is_string()) fail_at(path, value, "expected a string");
    const auto& s = value.template get_ref<const std::string&>();
    if (s.size() > kMaxDescribedTextBytes) {
      spotdnn::detail::fail(function, path, spotdnn::detail::quoted(s.substr(0, 40) + "..."),
                            "longer than " + std::to_string(kMaxDescribedTextBytes) + " bytes");
    }
    if (!spotdnn::detail::is_printable_utf8(s)) {
      spotdnn::detail::fail(function, path, spotdnn::detail::quoted(s.substr(0, 64)), "must be printable UTF-8 text");
    }
    return s;
  }
};

/// The time in "... (YYYY-MM-DD HH:MM:SS GMT)" (or "UTC)") at the end of a StateTransitionReason, as Unix seconds;
/// nullopt when the text ends in no such parenthesis (EC2 gave no time). A parenthesis of that shape
/// holding a day or time that does not exist throws naming `path`.
[[nodiscard]] inline std::optional<double> transition_time_unix_s(std::string_view reason, std::string_view function,
                                                                  const std::string& path) {
  std::string_view text = reason;
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  // EC2 writes " GMT)"; moto writes " UTC)": the same time scale.
  constexpr std::size_t kSuffixLength = 5;
  constexpr std::size_t kLength = 1 + 19 + kSuffixLength;  // "(" + "YYYY-MM-DD HH:MM:SS" + " GMT)"
  if (text.size() < kLength) return std::nullopt;
  const std::string_view suffix = text.substr(text.size() - kSuffixLength);
  if (suffix != " GMT)" && suffix != " UTC)") return std::nullopt;
  const std::string_view stamp = text.substr(text.size() - kLength);
  if (stamp.front() != '(') return std::nullopt;
  const std::string_view date_time = stamp.substr(1, 19);
  for (std::size_t i = 0; i < date_time.size(); ++i) {
    const char c = date_time[i];
    const bool ok = (i == 4 || i == 7) ? c == '-' : i == 10 ? c == ' ' : (i == 13 || i == 16) ? c == ':' : (c >= '0' && c <= '9');
    if (!ok) return std::nullopt;
  }
  std::string iso(date_time);
  iso[10] = 'T';
  iso += 'Z';
  return double(io::aws::parse_aws_timestamp(iso, function, path));
}

template <typename J>
std::vector<RunInstance> read(const J& output, std::string_view run_id, std::string_view function) {
  require_run_id(function, "run_id", run_id);
  const Reader in{function};
  in.object(output, "");
  std::vector<RunInstance> instances;
  const J* reservations = Reader::member(output, "Reservations");
  if (reservations == nullptr) return instances;  // describe-instances prints {"Reservations": []}; absent: none
  in.array(*reservations, "Reservations", kMaxDescribedInstances);
  std::size_t listed = 0;
  std::set<std::string> seen_ids;
  for (std::size_t r = 0; r < reservations->size(); ++r) {
    const std::string reservation_path = index("Reservations", r);
    const J& reservation = in.object((*reservations)[r], reservation_path);
    const J* list = Reader::member(reservation, "Instances");
    if (list == nullptr) continue;
    const std::string list_path = key(reservation_path, "Instances");
    in.array(*list, list_path, kMaxDescribedInstances);
    listed += list->size();
    if (listed > kMaxDescribedInstances) {
      spotdnn::detail::fail(function, list_path, std::to_string(listed) + " instances so far",
                            "at most " + std::to_string(kMaxDescribedInstances) + " instances are read from one output");
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string path = index(list_path, i);
      const J& item = in.object((*list)[i], path);
      RunInstance instance;

      const std::string id_path = key(path, "InstanceId");
      instance.instance_id = in.text(in.required(item, path, "InstanceId"), id_path);
      if (!is_instance_id(instance.instance_id)) {
        spotdnn::detail::fail(function, id_path, spotdnn::detail::quoted(instance.instance_id),
                              "expected an instance ID i- and 8 to 17 lower-case hex digits");
      }
      const std::string type_path = key(path, "InstanceType");
      instance.type = in.text(in.required(item, path, "InstanceType"), type_path);
      require_instance_type(function, type_path, instance.type);

      if (const J* lifecycle = Reader::member(item, "InstanceLifecycle")) {
        instance.market = in.text(*lifecycle, key(path, "InstanceLifecycle")) == "spot" ? Market::spot : Market::on_demand;
      } else {
        instance.market = Market::on_demand;
      }

      const std::string state_path = key(path, "State");
      const J& state = in.object(in.required(item, path, "State"), state_path);
      const std::string name_path = key(state_path, "Name");
      instance.state = in.text(in.required(state, state_path, "Name"), name_path);
      if (std::find(std::begin(kInstanceStates), std::end(kInstanceStates), instance.state) == std::end(kInstanceStates)) {
        spotdnn::detail::fail(function, name_path, spotdnn::detail::quoted(instance.state),
                              "expected pending, running, shutting-down, terminated, stopping or stopped");
      }
      if (const J* reason = Reader::member(item, "StateReason")) {
        const std::string reason_path = key(path, "StateReason");
        in.object(*reason, reason_path);
        if (const J* code = Reader::member(*reason, "Code")) instance.state_reason_code = in.text(*code, key(reason_path, "Code"));
      }
      if (const J* placement = Reader::member(item, "Placement")) {
        const std::string placement_path = key(path, "Placement");
        in.object(*placement, placement_path);
        if (const J* zone = Reader::member(*placement, "AvailabilityZone")) {
          const std::string zone_path = key(placement_path, "AvailabilityZone");
          instance.zone = in.text(*zone, zone_path);
          if (!instance.zone.empty()) require_zone_name(function, zone_path, instance.zone);
        }
      }
      if (const J* address = Reader::member(item, "PrivateIpAddress")) {
        const std::string address_path = key(path, "PrivateIpAddress");
        instance.private_ip = in.text(*address, address_path);
        if (!instance.private_ip.empty()) require_ipv4_address(function, address_path, instance.private_ip);
      }

      const std::string launch_path = key(path, "LaunchTime");
      const std::string launch_text = in.text(in.required(item, path, "LaunchTime"), launch_path);
      instance.launch_time_unix_s = double(io::aws::parse_aws_timestamp(launch_text, function, launch_path));
      if (const J* transition = Reader::member(item, "StateTransitionReason")) {
        const std::string transition_path = key(path, "StateTransitionReason");
        const std::string reason = in.text(*transition, transition_path);
        if (instance.state == "terminated" || instance.state == "stopped") {
          instance.end_time_unix_s = transition_time_unix_s(reason, function, transition_path);
          if (instance.end_time_unix_s && *instance.end_time_unix_s < instance.launch_time_unix_s) {
            spotdnn::detail::fail(function, transition_path, spotdnn::detail::quoted(reason),
                                  "the instance stopped before its LaunchTime " + launch_text);
          }
        }
      }

      std::optional<std::string> run_tag;
      if (const J* tags = Reader::member(item, "Tags")) {
        const std::string tags_path = key(path, "Tags");
        in.array(*tags, tags_path, kMaxInstanceTags);
        for (std::size_t t = 0; t < tags->size(); ++t) {
          const std::string tag_path = index(tags_path, t);
          const J& tag = in.object((*tags)[t], tag_path);
          const std::string tag_key = in.text(in.required(tag, tag_path, "Key"), key(tag_path, "Key"));
          const J* value_json = Reader::member(tag, "Value");
          const std::string value = value_json == nullptr ? std::string() : in.text(*value_json, key(tag_path, "Value"));
          if (tag_key == kRunTag) {
            if (run_tag && *run_tag != value) in.fail_at(tag_path, tag, "the run tag is given twice with different values");
            run_tag = value;
          } else if (tag_key == kRoleTag) {
            instance.role = value;
          } else if (tag_key == kRankBaseTag) {
            // As the scripts' rank rule reads it (tags.hpp): a number of at most 7 digits, else no rank base.
            const bool digits = !value.empty() && value.size() <= 7 &&
                                value.find_first_not_of("0123456789") == std::string::npos;
            instance.rank_base = digits ? std::optional<long>(std::stol(value)) : std::nullopt;
          } else if (tag_key == kRevokedTag) {
            instance.revocation_notice = value;
          } else if (tag_key == kActionTag) {
            instance.action_token = value;
          }
        }
      }
      if (!run_tag || *run_tag != run_id) continue;  // another run's instance: never billed nor acted on
      if (!seen_ids.insert(instance.instance_id).second) {
        spotdnn::detail::fail(function, id_path, spotdnn::detail::quoted(instance.instance_id), "the instance is listed twice");
      }
      instances.push_back(std::move(instance));
    }
  }
  std::sort(instances.begin(), instances.end(),
            [](const RunInstance& a, const RunInstance& b) { return a.instance_id < b.instance_id; });
  return instances;
}

}  // namespace run_instances_detail

/// The instances of run `run_id` in a describe-instances output, sorted by instance ID (see the file
/// comment). `end_time_unix_s` is set for terminated and stopped instances whose StateTransitionReason
/// ends in "(YYYY-MM-DD HH:MM:SS GMT)". `rank_base` is empty when the tag is not a number of at most 7
/// digits (the scripts' rank rule). `market` is spot when InstanceLifecycle is "spot", else on-demand.
/// Throws spotdnn::invalid_argument "function: key path = value: why" for a bad run id, an instance ID
/// not ^i-[0-9a-f]{8,17}$, an instance type not spelled as AWS spells them, an unknown state, a bad
/// time, an instance listed twice or more than kMaxDescribedInstances instances.
[[nodiscard]] inline std::vector<RunInstance> run_instances_from_describe(const nlohmann::json& describe_instances_output,
                                                                          std::string_view run_id, std::string_view function) {
  return run_instances_detail::read(describe_instances_output, run_id, function);
}

/// The same for an ordered JSON document (io::Json, as io::parse_json returns).
[[nodiscard]] inline std::vector<RunInstance> run_instances_from_describe(const nlohmann::ordered_json& describe_instances_output,
                                                                          std::string_view run_id, std::string_view function) {
  return run_instances_detail::read(describe_instances_output, run_id, function);
}

}  // namespace spotdnn::launcher
