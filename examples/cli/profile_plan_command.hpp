#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/profile_plan_command.hpp `spotdnn profile plan`: which types and cluster sizes to measure with the
/// training example, for how long and at what price, so that `spotdnn workload build` identifies every figure
/// of the workload at the least cost within --budget (plan/profiling_plan.hpp).
///
/// Output: a table of the runs (kind, cluster, minutes, cost, what it measures) with the total and the types
/// left unprofiled; with --format json {"kind": "spotdnn.profiling_plan", "status", "message", "budget_usd",
/// "cost_usd", "least_budget_usd", "cluster_type", "unprofiled_types", "runs": [{"kind", "cluster", "minutes",
/// "cost_usd", "purpose"}]}. Exit 0 with a plan, 3 when the budget is below the least plan's cost (the message names
/// it), 2 for bad input.

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <spotdnn/io/json.hpp>
#include <spotdnn/plan/profiling_plan.hpp>

#include "command.hpp"
#include "options.hpp"
#include "table.hpp"

namespace spotdnn::cli {

class ProfilePlanCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    CLI::App* group = parent.add_subcommand("profile", "plan the profiling of your own model: profile plan");
    group->require_subcommand(1);
    subcommand_ = group->add_subcommand(
        "plan", "which types and cluster sizes to profile, for how long, so that workload build identifies the workload "
                "at the least cost within a budget");
    subcommand_->add_option("--budget", budget_usd_, "the most to spend on profiling, USD")->required()->type_name("USD");
    subcommand_->add_option("--catalog", catalog_path_, "catalog JSON, - for stdin (default: the embedded us-east-1 preset)")
        ->check(non_empty_path());
    subcommand_->add_option("--types", types_text_, "comma-separated types to consider (default: every catalog type)")
        ->type_name("T1,T2");
    subcommand_->add_option("--profile-minutes", options_.profile_minutes, "minutes one profile run is billed (boot, setup, --profile)")
        ->default_str(detail::format_number(options_.profile_minutes));
    subcommand_->add_option("--run-minutes", options_.cluster_run_minutes, "minutes one cluster run is billed")
        ->default_str(detail::format_number(options_.cluster_run_minutes));
    subcommand_->add_option("--sizes", options_.cluster_sizes,
                            "cluster sizes at most (1, 2, 4, ...; 3 identify the fit, 4 with --fit-ps-bandwidth, more check it)")
        ->default_str(std::to_string(options_.cluster_sizes));
    subcommand_->add_flag("--fit-ps-bandwidth", options_.fit_ps_bandwidth,
                          "plan for workload build --fit-ps-bandwidth: B_ps fitted too, one more cluster size (1, 2, 4 and 8)");
    subcommand_->add_option("--max-workers", options_.max_workers, "the largest cluster to run")
        ->default_str(std::to_string(options_.max_workers));
    add_format_option(*subcommand_, format_, {OutputFormat::table, OutputFormat::json});
  }

  int run(std::ostream& out) override {
    if (!(budget_usd_ > 0) || !std::isfinite(budget_usd_)) {
      throw usage_error("--budget = " + detail::format_number(budget_usd_) + ": must be a positive number of USD");
    }
    options_.budget_usd = budget_usd_;
    options_.types.clear();
    if (subcommand_->count("--types") > 0) {
      std::string item;
      for (std::size_t at = 0; at <= types_text_.size(); ++at) {
        if (at == types_text_.size() || types_text_[at] == ',') {
          if (item.empty()) throw usage_error("--types = \"" + types_text_ + "\": an empty type name");
          options_.types.push_back(item);
          item.clear();
        } else {
          item += types_text_[at];
        }
      }
    }
    const Catalog catalog = ModelOptions::load_catalog_at(catalog_path_);
    const ProfilingPlan plan = plan_profiling(catalog, options_);
    const int code = plan.has_plan() ? 0 : kExitNoAnswer;
    if (format_ == OutputFormat::json) {
      io::Json runs = io::Json::array();
      for (const ProfilingRun& r : plan.runs) {
        runs.push_back({{"kind", r.kind}, {"cluster", io::to_json(r.cluster)}, {"minutes", r.minutes}, {"cost_usd", r.cost_usd},
                        {"purpose", r.purpose}});
      }
      io::Json json = {{"kind", "spotdnn.profiling_plan"},
                       {"status", std::string(to_string(plan.status))},
                       {"message", plan.message},
                       {"budget_usd", budget_usd_},
                       {"cost_usd", plan.cost_usd},
                       {"least_budget_usd", plan.least_budget_usd},
                       {"cluster_type", plan.cluster_type.empty() ? io::Json(nullptr) : io::Json(plan.cluster_type)},
                       {"unprofiled_types", plan.unprofiled_types},
                       {"runs", runs}};
      out << json.dump(2) << '\n';
      return code;
    }
    out << fmt::format("spotdnn profile plan: budget ${:.2f} on {}\n\n", budget_usd_, catalog.region);
    if (plan.has_plan()) {
      TextTable table({"run", "kind", "cluster", "minutes", "cost $", "measures"}, 3, /*last_left_aligned=*/true);
      int k = 0;
      for (const ProfilingRun& r : plan.runs) {
        table.add_row({std::to_string(++k), r.kind, r.cluster.to_string(), detail::format_number(r.minutes), fmt::format("{:.2f}", r.cost_usd),
                       r.purpose});
      }
      table.print(out);
      out << fmt::format("\n  total ${:.2f} of ${:.2f}\n", plan.cost_usd, budget_usd_);
    }
    out << "\n  " << to_string(plan.status) << ": " << plan.message << '\n';
    if (plan.has_plan()) {
      out << "\n  then: ps_train.py --profile on each profile run's instance, the cluster runs with workers at the batches shown,\n"
             "  and spotdnn workload build on the profiles and the runs' traces\n";
    }
    return code;
  }

 private:
  ProfilingPlanOptions options_;
  double budget_usd_ = 0;
  std::string catalog_path_;
  std::string types_text_;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
