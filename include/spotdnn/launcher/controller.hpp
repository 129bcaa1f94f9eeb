#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/controller.hpp The decision core of `spotdnn watch`: given what EC2 lists of a run, the
/// progress the PS published and the money spent, what to launch now, under one of three policies
/// (same-type, replan, guard) and an optional cost cap. Pure: no AWS call, no clock, no file; the CLI
/// observes, calls decide(), appends the records it returns to the journal (watch_journal.hpp), runs the
/// launches and reports their outcomes. Every change of state is a journal record, and the state is
/// rebuilt from the records alone, so a controller resumed from its journal decides as the one that wrote
/// it (docs/watch.md).
///
/// One decide(), in order:
///  1. live PS count 0 → run_gone; more than one → invalid_argument.
///  2. loss ≤ target → target_reached; now ≥ start + deadline → deadline_passed.
///  3. launches not yet listed (no instance carries their token or id): a launch older than
///     launch_timeout_s is failed (record); the guard's fallback check runs (it may switch); while a
///     younger one is outstanding nothing else is launched.
///  4. missing = desired − dependable workers, per (type, market); a worker with a notice is lost.
///  5. the policy (same-type, replan, guard) acts on what is missing; 6. --max-cost may refuse it.
/// The guard switches to on-demand at the first check where T_od(ℓ) > (T − t) − m (see guard_check()).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/launcher/launch_plan.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/run_instance.hpp"
#include "spotdnn/launcher/run_progress_json.hpp"
#include "spotdnn/launcher/watch_journal.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/revocation/replan.hpp"
#include "spotdnn/status.hpp"
#include "spotdnn/units.hpp"

namespace spotdnn::launcher {

/// What the controller does when workers are lost (`spotdnn watch --policy`).
enum class WatchPolicy {
  same_type,  ///< ask for the lost type again; after same_type_wait_s without it, re-plan without it
  replan,     ///< the exact re-plan from the measured loss and the time left
  guard,      ///< replan on spot, and switch to on-demand while on-demand alone can still meet the deadline
};

[[nodiscard]] inline std::string_view to_string(WatchPolicy p) {
  switch (p) {
    case WatchPolicy::same_type: return "same-type";
    case WatchPolicy::replan: return "replan";
    case WatchPolicy::guard: return "guard";
  }
  return "?";
}

/// "same-type" (or "same_type"), "replan", "guard".
[[nodiscard]] inline std::optional<WatchPolicy> watch_policy_from_string(std::string_view text) {
  if (text == "same-type" || text == "same_type") return WatchPolicy::same_type;
  if (text == "replan") return WatchPolicy::replan;
  if (text == "guard") return WatchPolicy::guard;
  return std::nullopt;
}

/// What the controller knows of the run after a decide().
enum class WatchOutcome {
  watching,         ///< keep watching
  target_reached,   ///< the published loss is at or below the target: done
  deadline_passed,  ///< start + deadline has passed
  run_gone,         ///< no live parameter server: the run was torn down or lost its PS
};

[[nodiscard]] inline std::string_view to_string(WatchOutcome o) {
  switch (o) {
    case WatchOutcome::watching: return "watching";
    case WatchOutcome::target_reached: return "target-reached";
    case WatchOutcome::deadline_passed: return "deadline-passed";
    case WatchOutcome::run_gone: return "run-gone";
  }
  return "?";
}

[[nodiscard]] inline std::optional<WatchOutcome> watch_outcome_from_string(std::string_view text) {
  for (WatchOutcome o : {WatchOutcome::watching, WatchOutcome::target_reached, WatchOutcome::deadline_passed,
                         WatchOutcome::run_gone}) {
    if (text == to_string(o)) return o;
  }
  return std::nullopt;
}

/// The controller's settings. Plain fields, all defaulted; the run, the plan and the start are required.
struct ControllerSettings {
  std::string run_id;                           ///< the run watched (a run id, run_id.hpp)
  WatchPolicy policy = WatchPolicy::same_type;
  double start_unix_s = 0;                      ///< training start (the PS's launch time)
  double deadline_s = 0;                        ///< since start (the plan's deadline_s)
  double target_loss = 0;                       ///< the plan's target loss
  std::vector<WorkerGroup> planned;             ///< the plan's workers (type, count, gpus, market)
  double join_delay_s = 120;                    ///< request to training for a new instance
  double same_type_wait_s = 600;                ///< same-type: after this long without the lost type, other types
  double guard_margin_s = 1800;                 ///< guard: m, the time on-demand must have to spare
  double launch_timeout_s = 600;                ///< a launch not listed after this is failed
  std::optional<double> max_cost_usd;           ///< --max-cost: no launch that would take the run past it
};

/// One launch to run now: `group` with EC2 ClientToken and tag spotdnn:action = token.
struct LaunchRequest {
  std::string token;   ///< "<run_id>-<seq>" (seq of its launch record): at most 64 ASCII characters
  WorkerGroup group;
  std::string reason;  ///< one sentence
};

/// The answer of one decide().
struct ControllerDecision {
  WatchOutcome outcome = WatchOutcome::watching;
  std::vector<LaunchRequest> launches;          ///< to run now, in order
  std::vector<std::string> notes;               ///< one sentence each (waiting, infeasible, --max-cost refusals)
  std::vector<nlohmann::ordered_json> journal;  ///< records to append BEFORE the launches run
};

/// The controller of one run (see the file comment and docs/watch.md).
class Controller {
 public:
  /// Throws spotdnn::invalid_argument naming the first bad setting: a run id that is not one, no planned
  /// worker, a type the model does not profile, a GPU count that is not the catalog's, a time that is
  /// negative or not finite, the guard without any type priced on-demand.
  Controller(const PerformanceModel& model, ControllerSettings settings)
      : model_(model), settings_(std::move(settings)), replanner_(model) {
    constexpr std::string_view fn = "Controller";
    const ControllerSettings& s = settings_;
    require_run_id(fn, "settings.run_id", s.run_id);
    spotdnn::detail::require_finite(fn, "settings.start_unix_s", s.start_unix_s);
    spotdnn::detail::require_non_negative(fn, "settings.start_unix_s", s.start_unix_s);
    spotdnn::detail::require_positive(fn, "settings.deadline_s", s.deadline_s);
    spotdnn::detail::require_finite(fn, "settings.deadline_s", s.deadline_s);
    spotdnn::detail::require_positive(fn, "settings.target_loss", s.target_loss);
    spotdnn::detail::require_finite(fn, "settings.target_loss", s.target_loss);
    for (const auto& [name, value] : {std::pair<const char*, double>{"settings.join_delay_s", s.join_delay_s},
                                      {"settings.same_type_wait_s", s.same_type_wait_s},
                                      {"settings.guard_margin_s", s.guard_margin_s}}) {
      spotdnn::detail::require_finite(fn, name, value);
      spotdnn::detail::require_non_negative(fn, name, value);
    }
    spotdnn::detail::require_positive(fn, "settings.launch_timeout_s", s.launch_timeout_s);
    spotdnn::detail::require_finite(fn, "settings.launch_timeout_s", s.launch_timeout_s);
    if (s.max_cost_usd) {
      spotdnn::detail::require_finite(fn, "settings.max_cost_usd", *s.max_cost_usd);
      spotdnn::detail::require_non_negative(fn, "settings.max_cost_usd", *s.max_cost_usd);
    }
    if (s.planned.empty()) spotdnn::detail::fail(fn, "settings.planned", "{}", "the plan has no workers");
    for (std::size_t i = 0; i < s.planned.size(); ++i) {
      const WorkerGroup& g = s.planned[i];
      const std::string at = "settings.planned[" + std::to_string(i) + "]";
      check_group(fn, at, g, 1);
      if (planned_.count({g.type, g.market}) != 0) {
        spotdnn::detail::fail(fn, at + ".type", spotdnn::detail::quoted(g.type), "appears twice in the same market");
      }
      planned_[{g.type, g.market}] = g.count;
      plan_markets_[g.type] = g.market;
    }
    for (const WorkerType& w : model_.worker_types()) {
      const InstanceType& t = model_.catalog().at(w.name);
      if (t.market == Market::on_demand || t.on_demand_price_usd_per_hour > 0) {
        on_demand_markets_[w.name] = Market::on_demand;
      } else {
        no_on_demand_price_.push_back(w.name);
      }
    }
    if (s.policy == WatchPolicy::guard && on_demand_markets_.empty()) {
      spotdnn::detail::fail(fn, "settings.policy", "guard", "the catalog prices no worker type on-demand, so the guard has no fallback");
    }
    reset();
  }

  [[nodiscard]] const ControllerSettings& settings() const { return settings_; }
  /// The cluster the controller aims for now (the plan's until a re-plan or the guard's switch), by type
  /// and market.
  [[nodiscard]] std::vector<WorkerGroup> desired() const { return to_groups(desired_); }
  /// True once the guard has switched to on-demand.
  [[nodiscard]] bool switched() const { return switched_; }
  /// The seq the next record will carry.
  [[nodiscard]] std::int64_t next_seq() const { return next_seq_; }

  /// The first record of a new journal (seq 0): the run, the policy and the plan, which a resumed
  /// controller must match.
  [[nodiscard]] nlohmann::ordered_json start_record(double now_unix_s) const {
    nlohmann::ordered_json r = envelope(0, now_unix_s, "start");
    r["run_id"] = settings_.run_id;
    r["policy"] = to_string(settings_.policy);
    r["plan"] = plan_summary();
    return r;
  }

  /// Rebuilds the state from a journal read back (read_watch_journal): the records must begin with this
  /// run's start record (same run, policy and plan) and follow each other as a controller writes them.
  /// Throws spotdnn::invalid_argument naming "journal line N" and the field otherwise. Only on a controller
  /// that has not decided yet.
  void resume(const std::vector<nlohmann::json>& records) {
    constexpr std::string_view fn = "Controller::resume";
    if (next_seq_ != 1 || !launches_.empty()) {
      spotdnn::detail::fail(fn, "records", "(controller in use)", "resume a controller before its first decide()");
    }
    if (records.empty()) {
      spotdnn::detail::fail(fn, "records", "[]", "the journal is empty: begin a new one with start_record()");
    }
    if (records.size() > kMaxWatchJournalLines) {
      spotdnn::detail::fail(fn, "records", double(records.size()),
                            "a journal has at most " + std::to_string(kMaxWatchJournalLines) + " lines");
    }
    reset();
    next_seq_ = 0;
    try {
      for (std::size_t i = 0; i < records.size(); ++i) {
        detail::check_watch_journal_envelope(records[i], i, fn);
        apply(io::Json(records[i]), i, fn);
        next_seq_ = std::int64_t(i) + 1;
      }
    } catch (...) {
      reset();
      throw;
    }
  }

  /// One observation: the run's instances (describe-instances by the run tag), the progress the PS
  /// published (nullopt: none yet) and what the run has cost so far. See the file comment for the order of
  /// the rules; docs/watch.md for each policy. Throws spotdnn::invalid_argument for input that cannot be
  /// right (two live PSs, a worker of a type the model does not know, another run's progress).
  [[nodiscard]] ControllerDecision decide(double now_unix_s, const std::vector<RunInstance>& instances,
                                          const std::optional<RunProgress>& progress, double spent_usd) {
    constexpr std::string_view fn = "Controller::decide";
    spotdnn::detail::require_finite(fn, "now_unix_s", now_unix_s);
    spotdnn::detail::require_non_negative(fn, "now_unix_s", now_unix_s);
    spotdnn::detail::require_finite(fn, "spent_usd", spent_usd);
    spotdnn::detail::require_non_negative(fn, "spent_usd", spent_usd);
    if (progress) {
      if (!progress->run_id.empty() && progress->run_id != settings_.run_id) {
        spotdnn::detail::fail(fn, "progress.run_id", spotdnn::detail::quoted(progress->run_id),
                              "the progress file belongs to another run (watching " + settings_.run_id + ")");
      }
      if (std::isnan(progress->loss) || progress->loss < 0) {
        spotdnn::detail::fail(fn, "progress.loss", progress->loss, "must be a loss (>= 0, or +inf for nothing measured)");
      }
    }
    ControllerDecision d;
    Observation o;
    o.now_unix_s = now_unix_s;
    o.progress = progress;
    o.spent_usd = spent_usd;

    // 1. The parameter server; the dependable workers (rule 4's count, taken once).
    int live_ps = 0;
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const RunInstance& inst = instances[i];
      if (!inst.is_live()) continue;
      const std::string at = "instances[" + std::to_string(i) + "]";
      if (inst.role == "ps") {
        ++live_ps;
      } else if (inst.role == "worker") {
        if (!model_.worker_type_index(inst.type)) {
          spotdnn::detail::fail(fn, at + ".type", spotdnn::detail::quoted(inst.type),
                                "instance " + spotdnn::detail::escape_for_message(inst.instance_id) +
                                    " is a worker of a type the model does not profile");
        }
        if (inst.is_dependable()) ++o.dependable[{inst.type, inst.market}];
      } else {
        spotdnn::detail::fail(fn, at + ".role", spotdnn::detail::quoted(inst.role),
                              "instance " + spotdnn::detail::escape_for_message(inst.instance_id) + " has no role ps or worker");
      }
    }
    if (live_ps > 1) {
      spotdnn::detail::fail(fn, "instances", std::to_string(live_ps) + " live parameter servers",
                            "a run has one parameter server; refusing to act on this listing");
    }
    if (live_ps == 0) return stop(d, o, WatchOutcome::run_gone, "no live parameter server");

    // 2. Done, or too late.
    if (progress && progress->loss <= settings_.target_loss) {
      return stop(d, o, WatchOutcome::target_reached,
                  "the loss " + spotdnn::detail::format_number(progress->loss) + " is at or below the target " +
                      spotdnn::detail::format_number(settings_.target_loss));
    }
    if (now_unix_s >= deadline_unix_s()) {
      return stop(d, o, WatchOutcome::deadline_passed,
                  "the deadline passed " + spotdnn::detail::format_fixed(now_unix_s - deadline_unix_s(), 0) + " s ago");
    }

    // 3. Launches not yet seen.
    std::optional<std::size_t> waiting;  // the first launch still outstanding
    for (std::size_t k = 0; k < launches_.size(); ++k) {
      if (launches_[k].state != State::requested && launches_[k].state != State::launched) continue;
      std::vector<std::string> seen;
      for (const RunInstance& inst : instances) {
        const bool ours = (!inst.action_token.empty() && inst.action_token == launches_[k].token) ||
                          std::find(launches_[k].instance_ids.begin(), launches_[k].instance_ids.end(), inst.instance_id) !=
                              launches_[k].instance_ids.end();
        if (ours && std::find(seen.begin(), seen.end(), inst.instance_id) == seen.end()) seen.push_back(inst.instance_id);
      }
      const double age_s = now_unix_s - launches_[k].requested_unix_s;
      if (!seen.empty()) {
        nlohmann::ordered_json r = envelope(next_seq_, now_unix_s, "listed");
        r["token"] = launches_[k].token;
        r["instance_ids"] = seen;
        emit(d, std::move(r));
      } else if (age_s >= settings_.launch_timeout_s) {
        nlohmann::ordered_json r = envelope(next_seq_, now_unix_s, "launch_failed");
        r["token"] = launches_[k].token;
        r["error"] = "no instance of the launch was listed " + spotdnn::detail::format_fixed(age_s, 0) +
                     " s after it was requested (launch timeout " + spotdnn::detail::format_fixed(settings_.launch_timeout_s, 0) + " s)";
        d.notes.push_back("launch " + launches_[k].token + " failed: " + r["error"].get<std::string>());
        emit(d, std::move(r));
      } else if (!waiting) {
        waiting = k;
      }
    }

    // 5, the guard's fallback: checked at every decide() until it switches.
    if (settings_.policy == WatchPolicy::guard && !switched_) {
      if (guard_switch(d, o)) return d;
    }
    if (waiting) {
      const LaunchState& w = launches_[*waiting];
      d.notes.push_back("waiting for launch " + w.token + " (" + std::to_string(w.group.count) + " × " + w.group.type +
                        ", requested " + spotdnn::detail::format_fixed(now_unix_s - w.requested_unix_s, 0) +
                        " s ago) before launching anything else");
      return d;
    }

    // 4. What is missing.
    Counts missing;
    for (const auto& [key, count] : desired_) {
      const int have = o.dependable.count(key) ? o.dependable.at(key) : 0;
      if (count > have) missing[key] = count - have;
    }
    if (missing.empty()) return d;

    // 5. The policy.
    switch (settings_.policy) {
      case WatchPolicy::same_type: same_type(d, o, missing); break;
      case WatchPolicy::replan:
        apply_replan(d, o, replan(o, o.dependable, plan_markets_, {}, settings_.deadline_s), o.dependable, plan_markets_,
                     false, "replan: " + describe(missing) + " missing");
        break;
      case WatchPolicy::guard:
        if (switched_) {
          const Counts survivors = on_demand_only(o.dependable);
          apply_replan(d, o, replan(o, survivors, on_demand_markets_, no_on_demand_price_, settings_.deadline_s), survivors,
                       on_demand_markets_, true, "guard (on-demand): " + describe(missing) + " missing");
        } else {
          apply_replan(d, o, replan(o, o.dependable, plan_markets_, {}, settings_.deadline_s), o.dependable, plan_markets_,
                       false, "guard (spot): " + describe(missing) + " missing");
        }
        break;
    }
    return d;
  }

  /// The CLI ran launch `token` and EC2 answered with `instance_ids`: the record to append.
  [[nodiscard]] nlohmann::ordered_json launch_succeeded(const std::string& token, const std::vector<std::string>& instance_ids,
                                                        double now_unix_s) {
    constexpr std::string_view fn = "Controller::launch_succeeded";
    (void)requested_launch(fn, token);
    spotdnn::detail::require_finite(fn, "now_unix_s", now_unix_s);
    spotdnn::detail::require_non_negative(fn, "now_unix_s", now_unix_s);
    if (instance_ids.size() > std::size_t(kMaxClusterWorkers)) {
      spotdnn::detail::fail(fn, "instance_ids", double(instance_ids.size()), "more instances than a cluster may hold");
    }
    for (std::size_t i = 0; i < instance_ids.size(); ++i) {
      spotdnn::detail::require_printable_name(fn, "instance_ids[" + std::to_string(i) + "]", instance_ids[i]);
    }
    nlohmann::ordered_json r = envelope(next_seq_, now_unix_s, "launched");
    r["token"] = token;
    r["instance_ids"] = instance_ids;
    apply(r, std::size_t(next_seq_), fn);
    ++next_seq_;
    return r;
  }

  /// The CLI ran launch `token` and it failed with `error` (e.g. InsufficientInstanceCapacity): the
  /// record to append.
  [[nodiscard]] nlohmann::ordered_json launch_failed(const std::string& token, const std::string& error, double now_unix_s) {
    constexpr std::string_view fn = "Controller::launch_failed";
    (void)requested_launch(fn, token);
    spotdnn::detail::require_finite(fn, "now_unix_s", now_unix_s);
    spotdnn::detail::require_non_negative(fn, "now_unix_s", now_unix_s);
    nlohmann::ordered_json r = envelope(next_seq_, now_unix_s, "launch_failed");
    r["token"] = token;
    r["error"] = spotdnn::detail::escape_for_message(error.substr(0, 4096));
    apply(r, std::size_t(next_seq_), fn);
    ++next_seq_;
    return r;
  }

  /// Launches written to the journal with no outcome (a controller that stopped mid-launch), oldest
  /// first. The CLI looks for instances tagged spotdnn:action=TOKEN and re-issues the same token (EC2's
  /// ClientToken makes a repeat harmless) only if there are none, then reports the outcome.
  [[nodiscard]] std::vector<LaunchRequest> unfinished_launches() const {
    std::vector<LaunchRequest> out;
    for (const LaunchState& l : launches_) {
      if (l.state == State::requested) out.push_back({l.token, l.group, l.reason});
    }
    return out;
  }

 private:
  using Key = std::pair<std::string, Market>;
  using Counts = std::map<Key, int>;
  using Markets = std::map<std::string, Market, std::less<>>;
  enum class State { requested, launched, listed, failed };

  struct LaunchState {
    std::string token;
    WorkerGroup group;
    std::string reason;
    double requested_unix_s = 0;
    State state = State::requested;
    std::vector<std::string> instance_ids;
  };

  struct Observation {
    double now_unix_s = 0;
    std::optional<RunProgress> progress;
    double spent_usd = 0;
    Counts dependable;  ///< dependable workers per (type, market)
  };

  void reset() {
    next_seq_ = 1;  // a new journal's record 0 is start_record()
    desired_ = planned_;
    launches_.clear();
    streak_from_ = 0;
    switched_ = false;
    last_note_topic_.clear();
  }

  [[nodiscard]] double deadline_unix_s() const { return settings_.start_unix_s + settings_.deadline_s; }

  void check_group(std::string_view fn, const std::string& at, const WorkerGroup& g, int minimum_count) const {
    const auto k = model_.worker_type_index(g.type);
    if (!k) {
      spotdnn::detail::fail(fn, at + ".type", spotdnn::detail::quoted(g.type),
                            "not a worker type of the model (it has: " + model_.catalog().type_names() + ")");
    }
    if (g.count < minimum_count || g.count > kMaxClusterWorkers) {
      spotdnn::detail::fail(fn, at + ".count", g.count, "must be from " + std::to_string(minimum_count) + " to " +
                                                            std::to_string(kMaxClusterWorkers));
    }
    if (g.gpus != model_.worker_types()[*k].gpus) {
      spotdnn::detail::fail(fn, at + ".gpus", g.gpus, "the catalog gives " + g.type + " " + std::to_string(model_.worker_types()[*k].gpus) + " GPUs");
    }
  }

  [[nodiscard]] nlohmann::ordered_json plan_summary() const {
    nlohmann::ordered_json p;
    p["start_unix_s"] = settings_.start_unix_s;
    p["deadline_s"] = settings_.deadline_s;
    p["target_loss"] = settings_.target_loss;
    p["workers"] = groups_json(planned_);
    return p;
  }

  static nlohmann::ordered_json envelope(std::int64_t seq, double now_unix_s, std::string_view event) {
    nlohmann::ordered_json r;
    r["kind"] = kWatchJournalKind;
    r["schema_version"] = kWatchJournalSchemaVersion;
    r["seq"] = seq;
    r["time_unix_s"] = now_unix_s;
    r["event"] = event;
    return r;
  }

  [[nodiscard]] std::vector<WorkerGroup> to_groups(const Counts& counts) const {
    std::vector<WorkerGroup> out;
    for (const auto& [key, count] : counts) {
      if (count <= 0) continue;
      out.push_back({key.first, count, model_.worker_types()[*model_.worker_type_index(key.first)].gpus, key.second});
    }
    return out;
  }

  [[nodiscard]] nlohmann::ordered_json groups_json(const Counts& counts) const {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const WorkerGroup& g : to_groups(counts)) {
      nlohmann::ordered_json j;
      j["type"] = g.type;
      j["count"] = g.count;
      j["gpus"] = g.gpus;
      j["market"] = to_string(g.market);
      a.push_back(std::move(j));
    }
    return a;
  }

  /// "p3.2xlarge=2 (spot), g3.8xlarge=1 (on-demand)".
  static std::string describe(const Counts& counts) {
    std::string s;
    for (const auto& [key, count] : counts) {
      if (count <= 0) continue;
      s += (s.empty() ? "" : ", ") + key.first + "=" + std::to_string(count) + " (" + std::string(to_string(key.second)) + ")";
    }
    return s.empty() ? "nothing" : s;
  }

  [[nodiscard]] Market market_of(const std::string& type, const Markets& markets) const {
    const auto it = markets.find(type);
    return it != markets.end() ? it->second : model_.catalog().at(type).market;
  }

  static Counts on_demand_only(const Counts& counts) {
    Counts out;
    for (const auto& [key, count] : counts) {
      if (key.second == Market::on_demand) out[key] = count;
    }
    return out;
  }

  /// What `counts` and the PS cost over `duration_s` (docs/model.md eq. (9), each worker at its market's price).
  [[nodiscard]] double cost_usd(const Counts& counts, double duration_s) const {
    double price = model_.catalog().parameter_server.price_usd_per_hour;
    for (const auto& [key, count] : counts) price += count * model_.catalog().at(key.first).price_in_usd_per_hour(key.second);
    return units::cost_usd(price, std::max(0.0, duration_s));
  }

  /// The survivors as a Cluster for the re-planner: markets merged, each type capped at its quota (a
  /// listing with more, e.g. a late launch, would be refused by the planner).
  [[nodiscard]] Cluster to_cluster(const Counts& counts) const {
    Cluster c;
    for (const auto& [key, count] : counts) {
      const int quota = model_.catalog().at(key.first).quota;
      c.set(key.first, std::min(quota, c.count(key.first) + count));
    }
    return c;
  }

  [[nodiscard]] ReplanResult replan(const Observation& o, const Counts& survivors, const Markets& markets,
                                    const std::vector<std::string>& exclude, double deadline_s) const {
    ReplanRequest q;
    q.survivors = to_cluster(survivors);
    q.elapsed_s = std::max(0.0, o.now_unix_s - settings_.start_unix_s);
    q.deadline_s = deadline_s;
    q.target_loss = settings_.target_loss;
    q.loss_reached = o.progress ? o.progress->loss : std::numeric_limits<double>::infinity();
    ReplanOptions options;
    options.plan.markets = markets;
    options.join_delay_s = settings_.join_delay_s;
    options.exclude_types = exclude;
    return replanner_.replan(q, options);
  }

  /// --max-cost: true (and a note) when spending `more_usd` from now would take the run past the cap.
  bool over_budget(ControllerDecision& d, const Observation& o, const Counts& adding, double more_usd) {
    if (!settings_.max_cost_usd || !(o.spent_usd + more_usd > *settings_.max_cost_usd)) return false;
    note(d, o, "max_cost",
         "--max-cost = $" + spotdnn::detail::format_fixed(*settings_.max_cost_usd, 2) + ": not adding " + describe(adding) +
             " (spent $" + spotdnn::detail::format_fixed(o.spent_usd, 2) + " so far, $" +
             (std::isfinite(more_usd) ? spotdnn::detail::format_fixed(more_usd, 2) : std::string("an unbounded amount")) +
             " more to finish)");
    return true;
  }

  /// Acts on a re-plan for `survivors`: its additions become launches (markets from `markets`), the
  /// survivors plus the additions the desired cluster. Infeasible: a note and nothing, or, with
  /// `best_effort` (the guard on on-demand), the fastest additions.
  void apply_replan(ControllerDecision& d, const Observation& o, const ReplanResult& r, const Counts& survivors,
                    const Markets& markets, bool best_effort, const std::string& reason) {
    const double left_s = deadline_unix_s() - o.now_unix_s;
    Counts adding;
    double more_usd = 0;
    if (r.has_plan()) {
      for (const auto& [type, count] : r.additions.counts()) adding[{type, market_of(type, markets)}] += count;
      more_usd = r.cost_usd;
    } else if (r.status == Status::infeasible) {
      if (!best_effort || !r.fastest_additions || r.fastest_additions->empty()) {
        note(d, o, "infeasible", reason + ": " + r.message + "; nothing added");
        return;
      }
      for (const auto& [type, count] : r.fastest_additions->counts()) adding[{type, market_of(type, markets)}] += count;
    }
    Counts next = survivors;
    for (const auto& [key, count] : adding) next[key] += count;
    if (!r.has_plan()) more_usd = cost_usd(next, std::min(left_s, r.fastest_finish_time_s));
    if (!adding.empty() && over_budget(d, o, adding, more_usd)) return;
    set_desired(d, o, next, reason + ": " + r.message);
    for (const WorkerGroup& g : to_groups(adding)) add_launch(d, o, g, reason);
  }

  /// same-type: relaunch what is missing, unless a (type, market) has been missing for same_type_wait_s
  /// (its launches since the last change of the desired cluster failed for that long): then re-plan
  /// without those types.
  void same_type(ControllerDecision& d, const Observation& o, const Counts& missing) {
    std::vector<std::string> exclude;
    double longest_s = 0;
    for (const auto& [key, count] : missing) {
      const std::optional<double> since = failing_since(key);
      if (since && o.now_unix_s - *since >= settings_.same_type_wait_s) {
        if (std::find(exclude.begin(), exclude.end(), key.first) == exclude.end()) exclude.push_back(key.first);
        longest_s = std::max(longest_s, o.now_unix_s - *since);
      }
    }
    if (!exclude.empty()) {
      std::string types;
      for (const std::string& t : exclude) types += (types.empty() ? "" : ", ") + t;
      apply_replan(d, o, replan(o, o.dependable, plan_markets_, exclude, settings_.deadline_s), o.dependable, plan_markets_,
                   false, "same-type: " + types + " missing for " + spotdnn::detail::format_fixed(longest_s, 0) + " s, re-planned without it");
      return;
    }
    if (over_budget(d, o, missing, cost_usd(desired_, deadline_unix_s() - o.now_unix_s))) return;
    for (const WorkerGroup& g : to_groups(missing)) {
      add_launch(d, o, g, "same-type: replace " + std::to_string(g.count) + " lost " + g.type + " (" + std::string(to_string(g.market)) + ")");
    }
  }

  /// The request time of the first launch of `key`'s trailing run of failed launches since the desired
  /// cluster last changed; nullopt when its last launch did not fail (or it has none).
  [[nodiscard]] std::optional<double> failing_since(const Key& key) const {
    std::optional<double> since;
    for (std::size_t k = streak_from_; k < launches_.size(); ++k) {
      const LaunchState& l = launches_[k];
      if (l.group.type != key.first || l.group.market != key.second) continue;
      if (l.state == State::failed) {
        if (!since) since = l.requested_unix_s;
      } else {
        since.reset();
      }
    }
    return since;
  }

  /// The guard's fallback check (docs/watch.md): the on-demand-only re-plan (survivors: the dependable
  /// on-demand workers) against the deadline shortened by the margin. Infeasible means
  /// T_od(ℓ) > (T − t) − m: switch now, launching the cheapest on-demand additions that meet the real
  /// deadline (the fastest when none does). Returns true when it switched.
  bool guard_switch(ControllerDecision& d, const Observation& o) {
    const Counts survivors = on_demand_only(o.dependable);
    const double elapsed_s = std::max(0.0, o.now_unix_s - settings_.start_unix_s);
    const double shortened_s = settings_.deadline_s - settings_.guard_margin_s;
    double t_od_s = std::numeric_limits<double>::infinity();
    if (shortened_s > 0) {
      const ReplanResult check = replan(o, survivors, on_demand_markets_, no_on_demand_price_, shortened_s);
      if (check.status != Status::infeasible) return false;
      t_od_s = check.fastest_finish_time_s;
    }
    const ReplanResult r = replan(o, survivors, on_demand_markets_, no_on_demand_price_, settings_.deadline_s);
    if (!std::isfinite(t_od_s)) t_od_s = r.fastest_finish_time_s;
    const double left_s = settings_.deadline_s - elapsed_s;
    Counts adding;
    double finish_s = r.fastest_finish_time_s;
    if (r.has_plan()) {
      for (const auto& [type, count] : r.additions.counts()) adding[{type, Market::on_demand}] += count;
      finish_s = r.finish_time_s;
    } else if (r.status == Status::infeasible && r.fastest_additions) {
      for (const auto& [type, count] : r.fastest_additions->counts()) adding[{type, Market::on_demand}] += count;
    }
    Counts next = survivors;
    for (const auto& [key, count] : adding) next[key] += count;
    Counts spot_survivors;
    for (const auto& [key, count] : o.dependable) {
      if (key.second == Market::spot) spot_survivors[key] = count;
    }
    const double run_s = std::min(left_s, finish_s);
    double more_usd = r.has_plan() ? r.cost_usd : cost_usd(next, run_s);
    if (!spot_survivors.empty()) more_usd += cost_usd(spot_survivors, run_s) - cost_usd({}, run_s);  // their workers only
    if (!adding.empty() && over_budget(d, o, adding, more_usd)) return false;
    const std::string why = "T_od = " + (std::isfinite(t_od_s) ? spotdnn::detail::format_fixed(t_od_s, 1) + " s" : std::string("never")) +
                            " > (T - t) - m = " + spotdnn::detail::format_fixed(left_s, 1) + " - " +
                            spotdnn::detail::format_fixed(settings_.guard_margin_s, 0) + " s";
    nlohmann::ordered_json s = envelope(next_seq_, o.now_unix_s, "switch");
    s["reason"] = "guard: on-demand alone would no longer meet the deadline with the margin: " + why;
    s["t_od_s"] = io::number_or_null(t_od_s);
    s["time_left_s"] = left_s;
    s["margin_s"] = settings_.guard_margin_s;
    d.notes.push_back(s["reason"].get<std::string>());
    emit(d, std::move(s));
    set_desired(d, o, next, "guard switched to on-demand: " + r.message, true);
    for (const WorkerGroup& g : to_groups(adding)) add_launch(d, o, g, "guard: switch to on-demand (" + why + ")");
    return true;
  }

  // ---- records: every change of state is a record, applied by apply() both here and on resume ----

  void emit(ControllerDecision& d, nlohmann::ordered_json record) {
    apply(record, std::size_t(next_seq_), "Controller::decide");
    ++next_seq_;
    d.journal.push_back(std::move(record));
  }

  void set_desired(ControllerDecision& d, const Observation& o, const Counts& next, const std::string& reason, bool force = false) {
    Counts cleaned;
    for (const auto& [key, count] : next) {
      if (count > 0) cleaned[key] = count;
    }
    if (!force && cleaned == desired_) return;
    nlohmann::ordered_json r = envelope(next_seq_, o.now_unix_s, "desired");
    r["workers"] = groups_json(cleaned);
    r["reason"] = reason;
    emit(d, std::move(r));
  }

  void add_launch(ControllerDecision& d, const Observation& o, const WorkerGroup& g, const std::string& reason) {
    nlohmann::ordered_json r = envelope(next_seq_, o.now_unix_s, "launch");
    const std::string token = settings_.run_id + "-" + std::to_string(next_seq_);
    r["token"] = token;
    r["type"] = g.type;
    r["count"] = g.count;
    r["gpus"] = g.gpus;
    r["market"] = to_string(g.market);
    r["reason"] = reason;
    emit(d, std::move(r));
    d.launches.push_back({token, g, reason});
  }

  /// A note for the caller; journaled when its topic differs from the last note journaled since the last
  /// other record (a refusal repeated at every poll is written once).
  void note(ControllerDecision& d, const Observation& o, const std::string& topic, const std::string& text) {
    d.notes.push_back(text);
    if (topic == last_note_topic_) return;
    nlohmann::ordered_json r = envelope(next_seq_, o.now_unix_s, "note");
    r["topic"] = topic;
    r["text"] = text;
    emit(d, std::move(r));
  }

  ControllerDecision& stop(ControllerDecision& d, const Observation& o, WatchOutcome outcome, const std::string& reason) {
    d.outcome = outcome;
    d.notes.push_back(reason);
    nlohmann::ordered_json r = envelope(next_seq_, o.now_unix_s, "stop");
    r["outcome"] = to_string(outcome);
    r["reason"] = reason;
    emit(d, std::move(r));
    return d;
  }

  LaunchState& requested_launch(std::string_view fn, const std::string& token) {
    for (LaunchState& l : launches_) {
      if (l.token != token) continue;
      if (l.state != State::requested) {
        spotdnn::detail::fail(fn, "token", spotdnn::detail::quoted(token), "this launch already has an outcome");
      }
      return l;
    }
    spotdnn::detail::fail(fn, "token", spotdnn::detail::quoted(token), "no launch of this controller has this token");
  }

  LaunchState& launch_of(std::string_view fn, const std::string& field, const std::string& token) {
    for (LaunchState& l : launches_) {
      if (l.token == token) return l;
    }
    spotdnn::detail::fail(fn, field, spotdnn::detail::quoted(token), "no earlier launch record has this token");
  }

  [[nodiscard]] std::vector<std::string> instance_ids(io::JsonObjectReader& r, std::string_view key) const {
    const io::Json& a = r.required(key);
    if (!a.is_array()) spotdnn::detail::fail(r.function(), r.key_path(key), io::JsonObjectReader::excerpt(a), "expected an array of instance ids");
    if (a.size() > std::size_t(kMaxClusterWorkers)) {
      spotdnn::detail::fail(r.function(), r.key_path(key), double(a.size()), "more instances than a cluster may hold");
    }
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string path = r.key_path(key) + "[" + std::to_string(i) + "]";
      ids.push_back(r.as_string(a[i], path));
      spotdnn::detail::require_printable_name(r.function(), path, ids.back());
    }
    return ids;
  }

  [[nodiscard]] WorkerGroup group_from(io::JsonObjectReader& r, const std::string& at, int minimum_count) const {
    WorkerGroup g;
    g.type = r.string("type");
    g.count = r.integer("count", 0, int(kMaxClusterWorkers));
    g.gpus = r.integer("gpus", 1);
    const std::string market = r.string("market");
    const auto m = market_from_string(market);
    if (!m) spotdnn::detail::fail(r.function(), r.key_path("market"), spotdnn::detail::quoted(market), "expected spot or on-demand");
    g.market = *m;
    check_group(r.function(), at, g, minimum_count);
    return g;
  }

  [[nodiscard]] Counts counts_from(io::JsonObjectReader& r, std::string_view key) const {
    const io::Json& a = r.required(key);
    if (!a.is_array()) spotdnn::detail::fail(r.function(), r.key_path(key), io::JsonObjectReader::excerpt(a), "expected an array of worker groups");
    Counts counts;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string at = r.key_path(key) + "[" + std::to_string(i) + "]";
      io::JsonObjectReader g(a[i], at, r.function());
      g.expect_keys({"type", "count", "gpus", "market"});
      const WorkerGroup w = group_from(g, at, 1);
      g.finish();
      if (counts.count({w.type, w.market}) != 0) {
        spotdnn::detail::fail(r.function(), at + ".type", spotdnn::detail::quoted(w.type), "appears twice in the same market");
      }
      counts[{w.type, w.market}] = w.count;
    }
    return counts;
  }

  /// Applies record `index` (envelope already checked) to the state; throws naming "journal line N" and the
  /// field when it cannot follow what came before.
  void apply(const io::Json& record, std::size_t index, std::string_view fn) {
    const std::string line = detail::journal_line_name(index);
    io::JsonObjectReader r(record, line, std::string(fn));
    (void)r.required("kind");
    (void)r.required("schema_version");
    (void)r.required("seq");
    const double time_unix_s = r.non_negative_number("time_unix_s");
    const std::string event = r.string("event");
    if ((index == 0) != (event == "start")) {
      spotdnn::detail::fail(fn, r.key_path("event"), spotdnn::detail::quoted(event),
                            index == 0 ? "a journal begins with its start record" : "only the first record is a start record");
    }
    if (event != "note") last_note_topic_.clear();
    if (event == "start") {
      r.expect_keys({"kind", "schema_version", "seq", "time_unix_s", "event", "run_id", "policy", "plan"});
      const std::string run_id = r.string("run_id");
      if (run_id != settings_.run_id) {
        spotdnn::detail::fail(fn, r.key_path("run_id"), spotdnn::detail::quoted(run_id),
                              "the journal belongs to another run (watching " + settings_.run_id + ")");
      }
      const std::string policy = r.string("policy");
      if (policy != to_string(settings_.policy)) {
        spotdnn::detail::fail(fn, r.key_path("policy"), spotdnn::detail::quoted(policy),
                              "the journal was written under another policy (now " + std::string(to_string(settings_.policy)) + ")");
      }
      io::JsonObjectReader p(r.required("plan"), r.key_path("plan"), std::string(fn));
      p.expect_keys({"start_unix_s", "deadline_s", "target_loss", "workers"});
      for (const auto& [key, value] : {std::pair<const char*, double>{"start_unix_s", settings_.start_unix_s},
                                       {"deadline_s", settings_.deadline_s},
                                       {"target_loss", settings_.target_loss}}) {
        const double v = p.number(key);
        if (v != value) {
          spotdnn::detail::fail(fn, p.key_path(key), v, "the journal is of another plan (now " + spotdnn::detail::format_number(value) + ")");
        }
      }
      if (counts_from(p, "workers") != planned_) {
        spotdnn::detail::fail(fn, p.key_path("workers"), io::JsonObjectReader::excerpt(p.required("workers")),
                              "the journal is of another plan (now " + describe(planned_) + ")");
      }
      p.finish();
    } else if (event == "desired") {
      r.expect_keys({"kind", "schema_version", "seq", "time_unix_s", "event", "workers", "reason"});
      desired_ = counts_from(r, "workers");
      (void)r.string("reason");
      streak_from_ = launches_.size();
    } else if (event == "launch") {
      r.expect_keys({"kind", "schema_version", "seq", "time_unix_s", "event", "token", "type", "count", "gpus", "market", "reason"});
      LaunchState l;
      l.token = r.string("token");
      const std::string expected = settings_.run_id + "-" + std::to_string(index);
      if (l.token != expected) {
        spotdnn::detail::fail(fn, r.key_path("token"), spotdnn::detail::quoted(l.token), "expected " + expected + " (<run id>-<seq>)");
      }
      l.group = group_from(r, line, 1);
      l.reason = r.string("reason");
      l.requested_unix_s = time_unix_s;
      if (switched_ && l.group.market == Market::spot) {
        spotdnn::detail::fail(fn, r.key_path("market"), "spot", "the guard launches no spot instance after its switch");
      }
      launches_.push_back(std::move(l));
    } else if (event == "launched" || event == "listed" || event == "launch_failed") {
      const bool failed = event == "launch_failed";
      if (failed) {
        r.expect_keys({"kind", "schema_version", "seq", "time_unix_s", "event", "token", "error"});
      } else {
        r.expect_keys({"kind", "schema_version", "seq", "time_unix_s", "event", "token", "instance_ids"});
      }
      LaunchState& l = launch_of(fn, r.key_path("token"), r.string("token"));
      const bool open = l.state == State::requested || (event != "launched" && l.state == State::launched);
      if (!open) spotdnn::detail::fail(fn, r.key_path("token"), spotdnn::detail::quoted(l.token), "this launch already has that outcome or a later one");
      if (failed) {
        (void)r.string("error");
        l.state = State::failed;
      } else {
        std::vector<std::string> ids = instance_ids(r, "instance_ids");
        if (event == "launched") l.instance_ids = std::move(ids);
        l.state = event == "launched" ? State::launched : State::listed;
      }
    } else if (event == "switch") {
      r.expect_keys({"kind", "schema_version", "seq", "time_unix_s", "event", "reason", "t_od_s", "time_left_s", "margin_s"});
      if (settings_.policy != WatchPolicy::guard || switched_) {
        spotdnn::detail::fail(fn, r.key_path("event"), "\"switch\"", switched_ ? "the guard switches once" : "only the guard policy switches");
      }
      (void)r.string("reason");
      const io::Json& t_od = r.required("t_od_s");
      if (!t_od.is_null()) (void)r.as_number(t_od, r.key_path("t_od_s"));
      (void)r.number("time_left_s");
      (void)r.non_negative_number("margin_s");
      switched_ = true;
    } else if (event == "note") {
      r.expect_keys({"kind", "schema_version", "seq", "time_unix_s", "event", "topic", "text"});
      last_note_topic_ = r.string("topic");
      (void)r.string("text");
    } else {  // stop
      r.expect_keys({"kind", "schema_version", "seq", "time_unix_s", "event", "outcome", "reason"});
      const std::string outcome = r.string("outcome");
      if (!watch_outcome_from_string(outcome) || outcome == to_string(WatchOutcome::watching)) {
        spotdnn::detail::fail(fn, r.key_path("outcome"), spotdnn::detail::quoted(outcome), "expected target-reached, deadline-passed or run-gone");
      }
      (void)r.string("reason");
    }
    r.finish();
  }

  const PerformanceModel& model_;
  ControllerSettings settings_;
  Replanner replanner_;
  Counts planned_;
  Markets plan_markets_;                    ///< the plan's market per planned type
  Markets on_demand_markets_;               ///< every type with an on-demand price → on-demand
  std::vector<std::string> no_on_demand_price_;  ///< types the guard cannot add on-demand

  // State, rebuilt from the journal by resume().
  std::int64_t next_seq_ = 1;
  Counts desired_;
  std::vector<LaunchState> launches_;
  std::size_t streak_from_ = 0;  ///< launches before this index predate the last change of desired_
  bool switched_ = false;
  std::string last_note_topic_;
};

}  // namespace spotdnn::launcher
