#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/replay_command.hpp `spotdnn replay`: a training job run against real spot traces from every
/// start tick (the honest check of every revocation model), and `spotdnn revocations check`: the model's
/// probability beside the replayed one for the same job, deadline and traces.

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/json.hpp>
#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/io/revocation_model_json.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/revocation/interruption.hpp>
#include <spotdnn/revocation/replay.hpp>
#include <spotdnn/revocation/revocation_model.hpp>
#include <spotdnn/revocation/simulate.hpp>
#include <spotdnn/revocation/work_policies.hpp>

#include "command.hpp"
#include "csv_output.hpp"
#include "options.hpp"
#include "progress_line.hpp"
#include "revocations_command.hpp"
#include "revocations_option.hpp"
#include "table.hpp"
#include "trace_options.hpp"

namespace spotdnn::cli {

/// "0.7312 [0.7201, 0.7420]".
inline std::string probability_text(const ProbabilityEstimate& p) {
  return fmt::format("{:.4f} [{:.4f}, {:.4f}]", p.estimate, p.lower, p.upper);
}

/// The options every replaying command shares: the traces, the job and the replay's timing.
struct ReplayCliOptions {
  TraceCliOptions traces;
  ModelOptions model;
  std::string cluster_text;
  std::optional<double> target_loss;
  std::optional<double> work_s;
  double deadline_s = 0;
  double join_delay_s = 120;
  double restart_overhead_s = 0;
  int stride = 1;
  std::optional<double> from_s, to_s;
  std::optional<double> spot_price_usd_per_hour;
  bool no_ps_cost = false;

  bool allow_work_ = true;

  void add_to(CLI::App& app, bool allow_work) {
    allow_work_ = allow_work;
    traces.add_to(app);
    app.add_option("--cluster", cluster_text, "workers per type, e.g. p3.2xlarge=2 (spread over the type's traces round-robin)");
    app.add_option("--target-loss", target_loss, "training loss to reach (with --cluster)");
    if (allow_work) {
      add_duration_option(app, "--work", work_s, "instead of --cluster: a job of this much work on one instance (e.g. 1h)");
      app.add_option("--spot-price", spot_price_usd_per_hour, "with --work: the instance's price in USD per hour")
          ->check(finite_range(0.0, 1e6));
    }
    add_duration_option(app, "--deadline", deadline_s, "the deadline from the job's start: seconds or a duration (1h30m)")->required();
    add_duration_option(app, "--join-delay", join_delay_s, "from an instance being up to it training (boot and join; 0 allowed)",
                        ZeroDuration::allowed)
        ->default_str("2m");
    if (allow_work) {
      add_duration_option(app, "--restart-overhead", restart_overhead_s,
                          "with --work: time lost at each (re)start (restoring a checkpoint)", ZeroDuration::allowed)
          ->default_str("0");
    }
    add_duration_option(app, "--from", from_s, "replay only the part of each trace from this time on (since its start)",
                        ZeroDuration::allowed);
    add_duration_option(app, "--to", to_s, "replay only the part of each trace before this time (since its start)");
    app.add_option("--stride", stride, "start a window every this many ticks")->default_str("1")->check(CLI::Range(1, 100000000));
    app.add_flag("--no-ps-cost", no_ps_cost, "leave the parameter server out of the cost");
    model.add_to(app);
  }

  [[nodiscard]] bool work_job() const { return work_s.has_value(); }

  /// Refuses a job given twice or not at all.
  void check_job() const {
    if (work_s && (!cluster_text.empty() || target_loss)) throw usage_error("give --work, or --cluster with --target-loss, not both");
    if (!work_s && (cluster_text.empty() || !target_loss)) {
      throw usage_error(allow_work_ ? "give the job: --cluster C --target-loss L (or --work DURATION for a one-instance job)"
                                    : "give the job: --cluster C --target-loss L");
    }
    if (!work_s && (spot_price_usd_per_hour || restart_overhead_s > 0)) {
      throw usage_error("--spot-price and --restart-overhead belong to a --work job; a --cluster job is priced by the catalog");
    }
  }

  /// The traces, cut to --from/--to when given.
  [[nodiscard]] std::vector<PoolTrace> read_traces() const {
    std::vector<PoolTrace> read = traces.read();
    if (!from_s && !to_s) return read;
    if (from_s && to_s && !(*to_s > *from_s)) {
      throw usage_error("--to (" + format_duration(*to_s) + ") must be after --from (" + format_duration(*from_s) + ")");
    }
    for (PoolTrace& t : read) {
      if (from_s && *from_s >= t.span_s) {
        throw usage_error("--from " + format_duration(*from_s) + " is past the end of trace " + detail::quoted(t.source) + " (" +
                          format_duration(t.span_s) + ")");
      }
      t = trace_period(t, from_s.value_or(0.0), to_s.value_or(t.span_s));
    }
    return read;
  }

  [[nodiscard]] ReplayOptions replay_options() const {
    ReplayOptions o;
    o.deadline_s = deadline_s;
    o.join_delay_s = join_delay_s;
    o.restart_overhead_s = restart_overhead_s;
    o.stride_ticks = stride;
    o.spot_price_usd_per_hour = spot_price_usd_per_hour.value_or(0.0);
    o.predict.charge_parameter_server = !no_ps_cost;
    return o;
  }
};

/// The JSON of a replay (the contract of `replay --format json`).
inline io::Json replay_json(const ReplayResult& r) {
  io::Json j = io::Json::object();
  j["probability_meets_deadline"] = io::to_json(r.meets_deadline);
  j["windows"] = r.windows;
  j["effective_windows"] = r.effective_windows;
  j["undecided_windows"] = r.undecided_windows;
  j["unfinished_windows"] = r.unfinished_windows;
  j["finish_time_s"] = io::to_json(r.finish_time_s);
  j["cost_usd"] = io::to_json(r.cost_usd);
  j["mean_cost_usd"] = io::number_or_null(r.mean_cost_usd);
  j["deterministic_time_s"] = io::number_or_null(r.deterministic_time_s);
  return j;
}

class ReplayCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("replay", "run a job against real spot traces from every start tick: the replayed P(meet deadline)");
    options_.add_to(*subcommand_, true);
    subcommand_->add_option("--policy", policy_text_,
                            "compare policies, a comma list or all: with --cluster none, same-type, replan, guard (what "
                            "`spotdnn watch` does when the market takes a worker); with --work on one trace on-demand, spot, greedy, "
                            "guard and omniscient (the cheapest schedule in hindsight)");
    subcommand_->add_option("--on-demand-price", on_demand_price_usd_per_hour_, "with --policy: the on-demand price in USD per hour")
        ->check(finite_range(0.0, 1e6));
    add_duration_option(*subcommand_, "--guard-margin", guard_margin_s_,
                        "with --policy guard: switch to on-demand while it could still finish this long before the deadline",
                        ZeroDuration::allowed)
        ->default_str("30m");
    add_progress_options(*subcommand_, progress_mode_);
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    options_.check_job();
    if (!policy_text_.empty()) return run_policies(out);
    if (on_demand_price_usd_per_hour_ || subcommand_->count("--guard-margin") > 0) {
      throw usage_error("--on-demand-price and --guard-margin belong to --policy");
    }
    const std::vector<PoolTrace> traces = options_.read_traces();
    ReplayOptions o = options_.replay_options();
    ProgressLine progress(progress_mode_);
    o.progress = progress.callback();
    ReplayResult r;
    std::string job;
    if (options_.work_job()) {
      r = replay_work(*options_.work_s, traces, o);
      job = "work " + format_duration(*options_.work_s) + " on one instance";
    } else {
      const PerformanceModel model = options_.model.load(*this);
      const Cluster cluster = Cluster::parse(options_.cluster_text);
      r = replay(model, model.counts_of(cluster), *options_.target_loss, traces, o);
      job = cluster.to_string() + " to loss " + detail::format_number(*options_.target_loss);
    }
    if (r.windows == 0) {
      throw usage_error("no start window of the traces can be decided (" + std::to_string(r.undecided_windows) +
                        " undecided): the traces are shorter than the deadline; give a shorter --deadline or longer traces");
    }
    if (options_.work_job() && !options_.spot_price_usd_per_hour) {
      warn("--work without --spot-price: every cost is $0 (give the instance's price per hour)");
    }
    if (format_ == OutputFormat::json) {
      io::Json j = replay_json(r);
      j["job"] = job;
      j["deadline_s"] = options_.deadline_s;
      io::Json pools = io::Json::array();
      for (const PoolTrace& t : traces) pools.push_back(t.pool.name());
      j["pools"] = std::move(pools);
      out << j.dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      CsvTable csv;
      csv.add("job", job);
      csv.add("deadline_s", csv_number(options_.deadline_s));
      csv.add("probability_meets_deadline", csv_number(r.meets_deadline.estimate));
      csv.add("probability_lower", csv_number(r.meets_deadline.lower));
      csv.add("probability_upper", csv_number(r.meets_deadline.upper));
      csv.add("windows", std::to_string(r.windows));
      csv.add("effective_windows", std::to_string(r.effective_windows));
      csv.add("undecided_windows", std::to_string(r.undecided_windows));
      csv.add("unfinished_windows", std::to_string(r.unfinished_windows));
      csv.add("finish_time_s_p50", csv_number(r.finish_time_s.p50));
      csv.add("finish_time_s_p90", csv_number(r.finish_time_s.p90));
      csv.add("cost_usd_p50", csv_number(r.cost_usd.p50));
      csv.add("cost_usd_p90", csv_number(r.cost_usd.p90));
      csv.add("mean_cost_usd", csv_number(r.mean_cost_usd));
      csv.print(out);
    } else {
      out << fmt::format("spotdnn replay: {}, deadline {}, on {} trace{}\n\n", job, format_duration(options_.deadline_s), traces.size(),
                         traces.size() == 1 ? "" : "s");
      TextTable t({"figure", "value"}, 2);
      t.add_row({"P(finish <= deadline)", probability_text(r.meets_deadline) + " (replayed, " +
                                              fmt::format("{:.0f}% Wilson interval over the {} disjoint windows)",
                                                          100 * r.meets_deadline.confidence_level, r.effective_windows)});
      t.add_row({"windows", fmt::format("{} decided ({} disjoint: windows overlap), {} undecided (the trace ended first: not counted), {} unfinished within the trace",
                                        r.windows, r.effective_windows, r.undecided_windows, r.unfinished_windows)});
      t.add_row({"without revocations", format_duration(r.deterministic_time_s)});
      t.add_row({"finish p50 / p90 / p99", fmt::format("{} / {} / {}", format_duration(r.finish_time_s.p50),
                                                       format_duration(r.finish_time_s.p90), format_duration(r.finish_time_s.p99))});
      t.add_row({"cost mean", format_usd(r.mean_cost_usd)});
      t.add_row({"cost p50 / p90", fmt::format("{} / {}", format_usd(r.cost_usd.p50), format_usd(r.cost_usd.p90))});
      t.print(out);
    }
    return 0;
  }

  /// The items of --policy's comma list, each once and each one of `all` ("all": every one); `names` lists them for errors.
  template <typename Policy>
  [[nodiscard]] std::vector<Policy> parse_policy_list(const std::vector<Policy>& all, const std::string& names) const {
    if (policy_text_ == "all") return all;
    std::vector<Policy> out;
    std::string item;
    for (std::size_t i = 0; i <= policy_text_.size(); ++i) {
      if (i < policy_text_.size() && policy_text_[i] != ',') {
        item += policy_text_[i];
        continue;
      }
      bool known = false;
      for (Policy p : all) {
        if (item == to_string(p)) {
          if (std::find(out.begin(), out.end(), p) != out.end()) throw usage_error("--policy " + detail::quoted(item) + ": given twice");
          out.push_back(p);
          known = true;
        }
      }
      if (!known) {
        throw usage_error("--policy " + detail::quoted(policy_text_) + ": " + detail::quoted(item) + " is not a policy (" + names + ")");
      }
      item.clear();
    }
    return out;
  }

  /// --policy with --cluster: the cluster job under each replacement policy on the traces.
  int run_cluster_policies(std::ostream& out) {
    if (on_demand_price_usd_per_hour_) {
      throw usage_error("--on-demand-price belongs to a --work job; a --cluster job takes on-demand prices from the catalog");
    }
    const std::vector<ReplayPolicy> policies =
        parse_policy_list<ReplayPolicy>({ReplayPolicy::none, ReplayPolicy::same_type, ReplayPolicy::replan, ReplayPolicy::guard},
                                        "with --cluster: none, same-type, replan, guard, or all");
    const std::vector<PoolTrace> traces = options_.read_traces();
    const PerformanceModel model = options_.model.load(*this);
    const Cluster cluster = Cluster::parse(options_.cluster_text);
    const std::vector<int> counts = model.counts_of(cluster);
    std::vector<ReplayResult> results;
    ProgressLine progress(progress_mode_);
    for (ReplayPolicy policy : policies) {
      ReplayOptions o = options_.replay_options();
      o.policy = policy;
      o.guard_margin_s = guard_margin_s_;
      o.progress = progress.callback();
      results.push_back(replay(model, counts, *options_.target_loss, traces, o));
      if (results.back().windows == 0) {
        throw usage_error("no start window of the traces can be decided (" + std::to_string(results.back().undecided_windows) +
                          " undecided): the traces are shorter than the deadline; give a shorter --deadline or longer traces");
      }
    }
    const std::string job = cluster.to_string() + " to loss " + detail::format_number(*options_.target_loss);
    const ReplayResult& first = results.front();
    if (format_ == OutputFormat::json) {
      io::Json j = io::Json::object();
      j["job"] = job;
      j["deadline_s"] = options_.deadline_s;
      io::Json pools = io::Json::array();
      for (const PoolTrace& t : traces) pools.push_back(t.pool.name());
      j["pools"] = std::move(pools);
      j["windows"] = first.windows;
      j["effective_windows"] = first.effective_windows;
      j["undecided_windows"] = first.undecided_windows;
      io::Json by_policy = io::Json::object();
      for (const ReplayResult& r : results) {
        io::Json q = replay_json(r);
        q["mean_on_demand_cost_usd"] = io::number_or_null(r.mean_on_demand_cost_usd);
        q["mean_preemptions"] = io::number_or_null(r.mean_preemptions);
        if (r.policy == ReplayPolicy::replan || r.policy == ReplayPolicy::guard) q["mean_replans"] = io::number_or_null(r.mean_replans);
        if (r.policy == ReplayPolicy::guard) {
          q["switched_windows"] = r.switched_windows;
          q["margin_s"] = guard_margin_s_;
        }
        by_policy[std::string(to_string(r.policy))] = std::move(q);
      }
      j["policies"] = std::move(by_policy);
      out << j.dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      out << "policy,probability_meets_deadline,probability_lower,probability_upper,windows,effective_windows,unfinished_windows,"
             "mean_cost_usd,cost_usd_p50,cost_usd_p90,mean_on_demand_cost_usd,finish_time_s_p50,finish_time_s_p90,mean_preemptions,"
             "mean_replans,switched_windows\n";
      for (const ReplayResult& r : results) {
        out << to_string(r.policy) << ',' << csv_number(r.meets_deadline.estimate) << ',' << csv_number(r.meets_deadline.lower) << ','
            << csv_number(r.meets_deadline.upper) << ',' << r.windows << ',' << r.effective_windows << ',' << r.unfinished_windows << ','
            << csv_number(r.mean_cost_usd) << ',' << csv_number(r.cost_usd.p50) << ',' << csv_number(r.cost_usd.p90) << ','
            << csv_number(r.mean_on_demand_cost_usd) << ',' << csv_number(r.finish_time_s.p50) << ',' << csv_number(r.finish_time_s.p90)
            << ',' << csv_number(r.mean_preemptions) << ',' << csv_number(r.mean_replans) << ',' << r.switched_windows << '\n';
      }
    } else {
      out << fmt::format("spotdnn replay: {}, deadline {}, on {} trace{}: {} windows ({} disjoint), {} undecided\n\n", job,
                         short_duration(options_.deadline_s), traces.size(), traces.size() == 1 ? "" : "s", first.windows,
                         first.effective_windows, first.undecided_windows);
      TextTable t({"policy", "P(finish <= deadline)", "mean cost", "cost p50 / p90", "of it on-demand", "finish p50 / p90",
                   "re-plans", "switched"},
                  1);
      for (const ReplayResult& r : results) {
        std::string name(to_string(r.policy));
        if (r.policy == ReplayPolicy::guard) name += " (margin " + short_duration(guard_margin_s_) + ")";
        const bool replans = r.policy == ReplayPolicy::replan || r.policy == ReplayPolicy::guard;
        t.add_row({name, probability_text(r.meets_deadline), format_usd(r.mean_cost_usd),
                   format_usd(r.cost_usd.p50) + " / " + format_usd(r.cost_usd.p90), format_usd(r.mean_on_demand_cost_usd),
                   format_duration(r.finish_time_s.p50) + " / " + format_duration(r.finish_time_s.p90),
                   replans ? fmt::format("{:.1f}", r.mean_replans) : std::string("-"),
                   r.policy == ReplayPolicy::guard ? fmt::format("{} of {}", r.switched_windows, r.windows) : std::string("-")});
      }
      t.print(out);
      out << "\nre-plans: mean per window; switched: windows where the guard moved to on-demand. A worker the market takes is\n"
             "not replaced (none), waits for its trace's next capacity (same-type), or the exact re-plan chooses what to add\n"
             "from the loss reached and the time left (replan; guard also falls back to on-demand in time).\n";
    }
    return 0;
  }

  /// The policies of --policy for a --work job, in the order given ("all": every one).
  [[nodiscard]] std::vector<WorkPolicy> parse_policies() const {
    return parse_policy_list<WorkPolicy>(
        {WorkPolicy::on_demand, WorkPolicy::spot, WorkPolicy::greedy, WorkPolicy::guard, WorkPolicy::omniscient},
        "with --work: on-demand, spot, greedy, guard, omniscient, or all");
  }

  /// --policy: the work job under each policy on the one trace.
  int run_policies(std::ostream& out) {
    if (!options_.work_job()) return run_cluster_policies(out);
    if (!on_demand_price_usd_per_hour_) throw usage_error("--policy needs --on-demand-price (USD per hour)");
    if (!options_.spot_price_usd_per_hour) throw usage_error("--policy needs --spot-price (USD per hour)");
    const std::vector<PoolTrace> traces = options_.read_traces();
    if (traces.size() != 1) throw usage_error("--policy replays one trace; give one --trace (" + std::to_string(traces.size()) + " given)");
    WorkPolicyOptions o;
    o.policies = parse_policies();
    o.work_s = *options_.work_s;
    o.deadline_s = options_.deadline_s;
    o.start_overhead_s = options_.join_delay_s + options_.restart_overhead_s;
    o.guard_margin_s = guard_margin_s_;
    o.spot_price_usd_per_hour = *options_.spot_price_usd_per_hour;
    o.on_demand_price_usd_per_hour = *on_demand_price_usd_per_hour_;
    o.stride_ticks = options_.stride;
    ProgressLine progress(progress_mode_);
    o.progress = progress.callback();
    const WorkPolicyReplay r = replay_work_policies(traces.front(), o);
    if (r.windows == 0) {
      throw usage_error("no start window of the trace can be decided (" + std::to_string(r.undecided_windows) +
                        " undecided): the trace is shorter than the deadline; give a shorter --deadline or a longer trace");
    }
    const std::string job = "work " + short_duration(o.work_s) + " on one instance, start overhead " + short_duration(o.start_overhead_s);
    if (format_ == OutputFormat::json) {
      io::Json j = io::Json::object();
      j["job"] = job;
      j["pool"] = traces.front().pool.name();
      j["deadline_s"] = o.deadline_s;
      j["windows"] = r.windows;
      j["undecided_windows"] = r.undecided_windows;
      io::Json policies = io::Json::object();
      for (const WorkPolicyResult& p : r.policies) {
        io::Json q = io::Json::object();
        q["probability_meets_deadline"] = io::to_json(p.meets_deadline);
        q["windows"] = p.windows;
        q["effective_windows"] = p.effective_windows;
        q["finish_time_s"] = io::to_json(p.finish_time_s);
        q["cost_usd"] = io::to_json(p.cost_usd);
        q["mean_cost_usd"] = io::number_or_null(p.mean_cost_usd);
        q["mean_spot_hours"] = io::number_or_null(p.mean_spot_hours);
        q["mean_on_demand_hours"] = io::number_or_null(p.mean_on_demand_hours);
        if (p.policy == WorkPolicy::omniscient) q["infeasible_windows"] = p.infeasible_windows;
        if (p.policy == WorkPolicy::guard) q["margin_s"] = o.guard_margin_s;
        policies[std::string(to_string(p.policy))] = std::move(q);
      }
      j["policies"] = std::move(policies);
      out << j.dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      out << "policy,probability_meets_deadline,probability_lower,probability_upper,windows,effective_windows,mean_cost_usd,"
             "cost_usd_p50,cost_usd_p90,mean_spot_hours,mean_on_demand_hours\n";
      for (const WorkPolicyResult& p : r.policies) {
        out << to_string(p.policy) << ',' << csv_number(p.meets_deadline.estimate) << ',' << csv_number(p.meets_deadline.lower) << ','
            << csv_number(p.meets_deadline.upper) << ',' << p.windows << ',' << p.effective_windows << ',' << csv_number(p.mean_cost_usd)
            << ',' << csv_number(p.cost_usd.p50) << ',' << csv_number(p.cost_usd.p90) << ',' << csv_number(p.mean_spot_hours) << ','
            << csv_number(p.mean_on_demand_hours) << '\n';
      }
    } else {
      out << fmt::format("spotdnn replay: {}, deadline {}, on {}: {} windows ({} disjoint), {} undecided\n\n", job,
                         short_duration(o.deadline_s), traces.front().pool.name(), r.windows, r.policies.front().effective_windows,
                         r.undecided_windows);
      TextTable t({"policy", "P(finish <= deadline)", "mean cost", "cost p50 / p90", "hours on spot / on-demand"}, 1);
      for (const WorkPolicyResult& p : r.policies) {
        std::string name(to_string(p.policy));
        if (p.policy == WorkPolicy::guard) name += " (margin " + short_duration(o.guard_margin_s) + ")";
        t.add_row({name, probability_text(p.meets_deadline), format_usd(p.mean_cost_usd),
                   format_usd(p.cost_usd.p50) + " / " + format_usd(p.cost_usd.p90),
                   fmt::format("{:.1f} / {:.1f}", p.mean_spot_hours, p.mean_on_demand_hours)});
      }
      t.print(out);
      for (const WorkPolicyResult& p : r.policies) {
        if (p.policy == WorkPolicy::omniscient && p.infeasible_windows > 0) {
          out << fmt::format("\nomniscient: {} windows where no schedule finishes by the deadline (cost $0 there)\n", p.infeasible_windows);
        }
      }
    }
    return 0;
  }

 private:
  ReplayCliOptions options_;
  ProgressMode progress_mode_ = ProgressMode::automatic;
  OutputFormat format_ = OutputFormat::table;
  std::string policy_text_;
  std::optional<double> on_demand_price_usd_per_hour_;
  double guard_margin_s_ = 1800;
};

/// `spotdnn revocations check`: for one job, deadline and set of traces, the replayed probability beside
/// the fitted model's (same-type replacement in the same pool, as the trace replaces) and the constant-rate
/// model's at each pool's fitted constant hazard (the old model at its best).
class RevocationsCheckCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = revocations_group(parent)->add_subcommand(
        "check", "calibration: the model's P(meet deadline) beside the P replayed on traces, for one cluster and deadline");
    subcommand_->add_option("--revocations", model_path_, "the fitted model to check (spotdnn revocations fit)")
        ->required()
        ->check(non_empty_path());
    options_.add_to(*subcommand_, false);
    subcommand_->add_option("--scenarios", scenarios_, "Monte Carlo scenarios of each model")->default_str("10000")->check(CLI::Range(1, kMaxScenarios));
    subcommand_->add_option("--seed", seed_, "random seed")->default_str("1")->check(non_negative_whole_number());
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    options_.check_job();
    const auto fitted_model = std::make_shared<const RevocationModel>(io::read_revocation_model_file(model_path_));
    const std::vector<PoolTrace> traces = options_.read_traces();
    const PerformanceModel model = options_.model.load(*this);
    const Cluster cluster = Cluster::parse(options_.cluster_text);
    const std::vector<int> counts = model.counts_of(cluster);
    const double target = *options_.target_loss;
    const ReplayResult replayed = replay(model, counts, target, traces, options_.replay_options());
    if (replayed.windows == 0) {
      throw usage_error("no start window of the traces can be decided: give a shorter --deadline or longer traces");
    }
    // The model's pools in the traces' order, so that workers are spread over pools as replay spreads them.
    FittedRevocations fitted;
    fitted.model = fitted_model;
    fitted.type_pools.assign(model.worker_types().size(), {});
    std::vector<HazardOverride> constant;
    for (std::size_t k = 0; k < model.worker_types().size(); ++k) {
      if (counts[k] == 0) continue;
      const std::string& type = model.worker_types()[k].name;
      for (const PoolTrace& t : traces) {
        if (t.pool.type != type) continue;
        const PoolModel* p = fitted_model->find(t.pool.type, t.pool.zone);
        if (p == nullptr) throw usage_error("--revocations: the model has no pool " + t.pool.name() + " of the traces; fit it on them");
        fitted.type_pools[k].push_back(int(p - fitted_model->pools.data()));
      }
      constant.push_back({type, mean_hazard_per_hour(*fitted_model, fitted.type_pools[k])});
    }
    SimulateOptions s;
    s.scenarios = scenarios_;
    s.seed = seed_;
    s.threads = 0;
    s.join_delay_s = options_.join_delay_s;
    s.replacement = Replacement::same_type;
    s.predict.charge_parameter_server = !options_.no_ps_cost;
    InterruptionOptions io_options;
    io_options.hazard_overrides = constant;
    const InterruptionModel constant_rate(model, io_options);
    const SimulationResult old_model = simulate(model, constant_rate, cluster, target, options_.deadline_s, s);
    s.revocations = fitted;
    const SimulationResult new_model = simulate(model, constant_rate, cluster, target, options_.deadline_s, s);
    if (format_ == OutputFormat::json) {
      io::Json j = io::Json::object();
      j["cluster"] = io::to_json(cluster);
      j["target_loss"] = target;
      j["deadline_s"] = options_.deadline_s;
      j["replayed"] = replay_json(replayed);
      j["fitted_model"] = io::to_json(new_model.meets_deadline);
      j["constant_rate_model"] = io::to_json(old_model.meets_deadline);
      j["fitted_error"] = new_model.meets_deadline.estimate - replayed.meets_deadline.estimate;
      j["constant_rate_error"] = old_model.meets_deadline.estimate - replayed.meets_deadline.estimate;
      out << j.dump(2) << '\n';
      return 0;
    }
    if (format_ == OutputFormat::csv) {
      out << "cluster,target_loss,deadline_s,replayed,replayed_lower,replayed_upper,windows,effective_windows,fitted_model,constant_rate_model,"
             "fitted_error,constant_rate_error\n";
      out << csv_field(csv_cluster(cluster)) << ',' << csv_number(target) << ',' << csv_number(options_.deadline_s) << ','
          << csv_number(replayed.meets_deadline.estimate) << ',' << csv_number(replayed.meets_deadline.lower) << ','
          << csv_number(replayed.meets_deadline.upper) << ',' << replayed.windows << ',' << replayed.effective_windows << ','
          << csv_number(new_model.meets_deadline.estimate)
          << ',' << csv_number(old_model.meets_deadline.estimate) << ','
          << csv_number(new_model.meets_deadline.estimate - replayed.meets_deadline.estimate) << ','
          << csv_number(old_model.meets_deadline.estimate - replayed.meets_deadline.estimate) << '\n';
      return 0;
    }
    out << fmt::format("spotdnn revocations check: {} to loss {}, deadline {}\n\n", cluster.to_string(), detail::format_number(target),
                       format_duration(options_.deadline_s));
    TextTable t({"source", "P(finish <= deadline)", "error vs replay"}, 1);
    t.add_row({"replayed on the traces", probability_text(replayed.meets_deadline) + fmt::format(" ({} windows, {} disjoint)", replayed.windows, replayed.effective_windows), "-"});
    t.add_row({"fitted model", probability_text(new_model.meets_deadline),
               fmt::format("{:+.4f}", new_model.meets_deadline.estimate - replayed.meets_deadline.estimate)});
    t.add_row({"constant-rate model (fitted rate)", probability_text(old_model.meets_deadline),
               fmt::format("{:+.4f}", old_model.meets_deadline.estimate - replayed.meets_deadline.estimate)});
    t.print(out);
    out << "\n  both models: same-type replacement in the same pool, join delay " << format_duration(options_.join_delay_s)
        << "; the constant-rate model uses each pool's preemptions per instance-hour\n"
        << "  the replayed interval counts the " << replayed.effective_windows
        << " disjoint windows (overlapping ones are not independent): a model's error inside it is within what the traces can tell\n";
    return 0;
  }

 private:
  std::string model_path_;
  ReplayCliOptions options_;
  int scenarios_ = 10000;
  std::uint64_t seed_ = 1;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
