#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/replan_command.hpp `spotdnn replan`: after a revocation notice, the cheapest instances to add
/// to the survivors so that training still meets the deadline.

#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/revocation/replan.hpp>

#include "command.hpp"
#include "table.hpp"

namespace spotdnn::cli {


class ReplanCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("replan", "after a revocation notice: what to add so the deadline still holds");
    subcommand_->add_option("--state", state_path_,
                            "state JSON: survivors, elapsed_s, deadline_s, target_loss, loss_reached (or samples_trained "
                            "+ trained_on), optional join_delay_s, exclude_types, charge_parameter_server")
        ->required();
    subcommand_->add_option("--join-delay", join_delay_s_, "seconds from request to training (overrides the state file)");
    subcommand_->add_option("--exclude", exclude_text_, "types not to add, e.g. g3.8xlarge[,p3.2xlarge] (adds to the state file's)");
    model_.add_to(*subcommand_);
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    const PerformanceModel model = model_.load();
    io::ReplanState state = io::read_replan_state_file(state_path_);
    if (join_delay_s_) state.options.join_delay_s = *join_delay_s_;
    if (no_ps_cost_) state.options.plan.charge_parameter_server = false;
    std::istringstream exclude(exclude_text_);
    for (std::string type; std::getline(exclude, type, ',');) {
      if (type.empty()) throw usage_error("--exclude: empty type name in \"" + exclude_text_ + "\"");
      state.options.exclude_types.push_back(type);
    }
    const ReplanResult r = replan(model, state.request, state.options);
    if (format_ == OutputFormat::json) {
      out << io::replan_document(r, state.request, state.options, model).dump(2) << '\n';
    } else {
      print_table(out, state, r);
    }
    return r.has_plan() ? 0 : kExitNoAnswer;
  }

 private:
  static void print_table(std::ostream& out, const io::ReplanState& state, const ReplanResult& r) {
    out << fmt::format("spotdnn replan: {} at {} of {}, loss {:.4f} reached, target {}\n\n", to_string(r.status),
                       format_duration(state.request.elapsed_s), format_duration(state.request.deadline_s), r.loss_reached,
                       detail::format_number(state.request.target_loss));
    TextTable figures({"figure", "value"}, 2);
    figures.add_row({"survivors", r.survivors.empty() ? "none" : r.survivors.to_string()});
    figures.add_row({"time left", format_duration(r.remaining_time_s)});
    figures.add_row({"join delay", format_duration(state.options.join_delay_s)});
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

  std::string state_path_;
  std::optional<double> join_delay_s_;
  std::string exclude_text_;
  ModelOptions model_;
  bool no_ps_cost_ = false;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
