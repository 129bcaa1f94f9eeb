#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/replan_command.hpp `spotdnn replan`: after a revocation notice, the cheapest instances to add
/// to the survivors so that training still meets the deadline; with --zone, priced in the running job's
/// Availability Zone (where its additions go).

#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/revocation/replan.hpp>

#include "command.hpp"
#include "revocations_option.hpp"
#include "csv_output.hpp"
#include "options.hpp"
#include "table.hpp"
#include "zone_option.hpp"

namespace spotdnn::cli {

class ReplanCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("replan", "after a revocation notice: what to add so the deadline still holds");
    subcommand_->add_option("--state", state_path_,
                            "state JSON, - for stdin: survivors, elapsed_s, deadline_s, target_loss, loss_reached (or samples_trained "
                            "+ trained_on), optional join_delay_s, exclude_types, charge_parameter_server")
        ->required()
        ->check(non_empty_path());
    add_duration_option(*subcommand_, "--join-delay", join_delay_s_,
                        "from request to training, e.g. 120, 2m (overrides the state file)", ZeroDuration::allowed);
    subcommand_->add_option("--exclude", exclude_text_,
                            "types not to add, e.g. g3.8xlarge[,p3.2xlarge] (or ; between; adds to the state file's)");
    add_zone_option(*subcommand_, zone_,
                    "the running job's Availability Zone: its additions are priced and launched there");
    revocations_.add_to(*subcommand_);
    subcommand_->add_option("--wait-quantile", wait_quantile_,
                            "with --revocations: the additions are counted as joining after this quantile of the fitted "
                            "wait for a replacement, on top of the join delay")
        ->default_str("0.9")
        ->check(CLI::Range(0.0, 1.0));
    model_.add_to(*subcommand_);
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    std::vector<std::pair<std::string, std::string>> files = model_.file_options();
    files.emplace_back("--state", state_path_);
    require_one_stdin(files);
    require_zone_not_empty(*subcommand_, zone_);
    const PerformanceModel model = model_in_zone(model_.load(*this), zone_);
    // A running job is in one zone and its additions must join it there (they launch in that zone's
    // subnet): on a catalog that prices zones, the zone is required, never guessed.
    if (zone_.empty() && !catalog_zones(model.catalog()).empty()) {
      throw usage_error("--zone: the catalog prices " + std::to_string(catalog_zones(model.catalog()).size()) +
                        " Availability Zones (" + catalog_zone_names(model.catalog()) +
                        "): give --zone with the running job's zone (its plan document's \"zone\"), so the additions are priced "
                        "and launched there");
    }
    io::ReplanState state = read_json_input(
        "--state", state_path_,
        [](const io::Json& json, const std::string& file) {
          return io::replan_state_from_json(json, "state", "read_replan_state_file(" + file + ")");
        },
        [](const std::string& file) { return io::read_replan_state_file(file); });
    if (join_delay_s_) state.options.join_delay_s = *join_delay_s_;
    if (no_ps_cost_) state.options.plan.charge_parameter_server = false;
    if (subcommand_->count("--exclude") > 0) {
      std::size_t start = 0;
      while (start <= exclude_text_.size()) {
        const std::size_t end = std::min(exclude_text_.find_first_of(",;", start), exclude_text_.size());
        const std::string type = exclude_text_.substr(start, end - start);
        if (type.empty()) throw usage_error("--exclude: empty type name in " + detail::quoted(exclude_text_));
        state.options.exclude_types.push_back(type);
        start = end + 1;
      }
    }
    if (subcommand_->count("--wait-quantile") > 0 && !revocations_.given()) {
      throw usage_error("--wait-quantile: only with --revocations (it picks the fitted wait for a replacement)");
    }
    if (const auto revocations = revocations_.load()) add_acquisition_wait(*revocations, model, state);
    const ReplanResult r = replan(model, state.request, state.options);
    if (format_ == OutputFormat::json) {
      out << io::replan_document(r, state.request, state.options, model, zone_).dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      print_csv(out, state, r);
    } else {
      print_table(out, state, r);
      if (r.has_plan()) print_estimated_lines(out, r.cluster, model.workload());
    }
    return r.has_plan() ? 0 : kExitNoAnswer;
  }

 private:
  /// With a fitted model, instances do not come at once: the join delay grows by the `--wait-quantile` of
  /// the replacement wait of the slowest pool the additions may come from (the spot types the re-plan may
  /// add, in the zone), and a warning says how often none came at all.
  void add_acquisition_wait(const RevocationModel& revocations, const PerformanceModel& model, io::ReplanState& state) {
    double wait_s = 0;
    std::string slowest;
    double none_share = 0;
    for (const WorkerType& w : model.worker_types()) {
      if (w.market == Market::on_demand || w.quota == 0) continue;
      const auto& excluded = state.options.exclude_types;
      if (std::find(excluded.begin(), excluded.end(), w.name) != excluded.end()) continue;
      for (const PoolModel& pool : revocations.pools) {
        if (pool.pool.type != w.name || (!zone_.empty() && pool.pool.zone != zone_)) continue;
        const WaitDistribution& d = pool.replacement_wait;
        none_share = std::max(none_share, d.none_share);
        if (d.observed == 0 || d.quantiles_s.size() != 101) continue;  // no wait that ended: nothing to count
        // The q-quantile of all waits, those in which none came counting as longer than any: the
        // q/(1 − none_share) quantile of the waits that ended; beyond them, the longest seen (and a warning).
        const double of_ended = d.none_share < 1 ? wait_quantile_ / (1 - d.none_share) : 2.0;
        const double at = std::min(1.0, of_ended) * 100;
        const std::size_t i = std::min<std::size_t>(99, std::size_t(at));
        const double q = d.quantiles_s[i] + (d.quantiles_s[i + 1] - d.quantiles_s[i]) * (at - double(i));
        if (slowest.empty() || q > wait_s) wait_s = q, slowest = pool.pool.name();
      }
    }
    if (none_share > 0) {
      warn(fmt::format("in the fitted traces no replacement came within the observation in {:.1f}% of the waits: an addition "
                       "may not come at all{}",
                       100 * none_share, none_share >= 1 - wait_quantile_ ? " (more than the quantile allows: the longest wait seen is counted)" : ""));
    }
    if (slowest.empty()) {
      warn("the revocation model has no pool of the types this re-plan may add" +
           (zone_.empty() ? std::string() : " in " + zone_) + " that saw a wait: the join delay alone is counted (uncalibrated)");
      return;
    }
    state.options.join_delay_s += wait_s;
    wait_note_ = fmt::format(" (with the {:g}% wait for a replacement in {}: {})", 100 * wait_quantile_, slowest,
                             format_duration(wait_s));
  }

  void print_table(std::ostream& out, const io::ReplanState& state, const ReplanResult& r) const {
    const std::string& zone = zone_;
    out << fmt::format("spotdnn replan: {} at {} of {}, loss {:.4f} reached, target {}\n\n", to_string(r.status),
                       format_duration(state.request.elapsed_s), format_duration(state.request.deadline_s), r.loss_reached,
                       detail::format_number(state.request.target_loss));
    TextTable figures({"figure", "value"}, 2);
    if (!zone.empty()) figures.add_row({"zone", zone});
    figures.add_row({"survivors", r.survivors.empty() ? "none" : r.survivors.to_string()});
    figures.add_row({"time left", format_duration(r.remaining_time_s)});
    figures.add_row({"join delay", format_duration(state.options.join_delay_s) + wait_note_});
    if (r.has_plan()) {
      figures.add_row({"add", r.additions.empty() ? "nothing" : r.additions.to_string()});
      figures.add_row({"cluster", r.cluster.to_string()});
      figures.add_row({"finishes in", format_duration(r.finish_time_s)});
      figures.add_row({"completes at", format_duration(r.completion_time_s)});
      figures.add_row({"cost from now", fmt::format("{} (workers {} + PS {})", format_usd(r.cost_usd), format_usd(r.worker_cost_usd),
                                                    format_usd(r.ps_cost_usd))});
    } else {
      figures.add_row({"soonest finish", format_duration(r.fastest_finish_time_s)});
      if (r.fastest_additions) {
        figures.add_row({"by adding", r.fastest_additions->empty() ? "nothing" : r.fastest_additions->to_string()});
      }
    }
    figures.print(out);
    out << '\n' << "  " << r.message << '\n';
  }

  /// The request and the answer, one header and one row; clusters as TYPE=N;TYPE=N, times that are never
  /// reached empty.
  static void print_csv(std::ostream& out, const io::ReplanState& state, const ReplanResult& r) {
    CsvTable csv;
    csv.add("status", std::string(to_string(r.status)));
    csv.add("elapsed_s", csv_number(state.request.elapsed_s));
    csv.add("deadline_s", csv_number(state.request.deadline_s));
    csv.add("target_loss", csv_number(state.request.target_loss));
    csv.add("loss_reached", csv_number(r.loss_reached));
    csv.add("remaining_time_s", csv_number(r.remaining_time_s));
    csv.add("join_delay_s", csv_number(state.options.join_delay_s));
    csv.add("survivors", csv_cluster(r.survivors));
    csv.add("additions", r.has_plan() ? csv_cluster(r.additions) : std::string());
    csv.add("cluster", r.has_plan() ? csv_cluster(r.cluster) : std::string());
    csv.add("finish_time_s", r.has_plan() ? csv_number(r.finish_time_s) : std::string());
    csv.add("completion_time_s", r.has_plan() ? csv_number(r.completion_time_s) : std::string());
    csv.add("cost_usd", r.has_plan() ? csv_number(r.cost_usd) : std::string());
    csv.add("worker_cost_usd", r.has_plan() ? csv_number(r.worker_cost_usd) : std::string());
    csv.add("ps_cost_usd", r.has_plan() ? csv_number(r.ps_cost_usd) : std::string());
    csv.add("fastest_finish_time_s", csv_number(r.fastest_finish_time_s));
    csv.add("fastest_additions", r.fastest_additions ? csv_cluster(*r.fastest_additions) : std::string());
    csv.add("message", r.message);
    csv.print(out);
  }

  std::string state_path_;
  std::optional<double> join_delay_s_;
  std::string exclude_text_;
  ModelOptions model_;
  RevocationsCliOption revocations_;
  double wait_quantile_ = 0.9;
  std::string wait_note_;
  bool no_ps_cost_ = false;
  OutputFormat format_ = OutputFormat::table;
  std::string zone_;
};

}  // namespace spotdnn::cli
