#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/plan_command.hpp `spotdnn plan`: the cheapest cluster meeting a target loss and a deadline
/// (or the fastest within a budget), by the exact planner, brute force or the paper's sliding window.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/io/plan_json.hpp>
#include <spotdnn/plan/brute_force.hpp>
#include <spotdnn/plan/exact.hpp>
#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/limits.hpp>
#include <spotdnn/plan/sliding_window.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>
#include <spotdnn/units.hpp>

#include "command.hpp"
#include "interruption_options.hpp"
#include "table.hpp"

namespace spotdnn::cli {

class PlanCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("plan", "find the cheapest cluster meeting a target loss and a deadline");
    subcommand_->add_option("--target-loss", target_loss_, "training loss to reach")->required();
    subcommand_->add_option("--deadline", deadline_s_, "training-time limit in seconds (optional with --budget)");
    subcommand_->add_option("--algorithm", algorithm_text_, "exact (default), sliding-window (the paper's heuristic) or brute-force")
        ->default_str("exact");
    subcommand_->add_option("--budget", budget_usd_, "budget mode: the fastest plan costing at most this many USD");
    subcommand_->add_option("--max-workers", max_workers_, "at most this many workers in total");
    subcommand_->add_option("--keep", keep_text_, "existing instances that must stay, e.g. p3.2xlarge=1,g3.8xlarge=2");
    subcommand_->add_option("--on-demand", on_demand_text_, "price these types on-demand, e.g. p3.2xlarge,g3.8xlarge");
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    subcommand_->add_option("--confidence", confidence_,
                            "the cheapest plan whose simulated probability of meeting the deadline under spot "
                            "revocations is at least this, e.g. 0.9");
    subcommand_->add_option("--scenarios", scenarios_, "with --confidence: Monte Carlo scenarios per candidate plan")
        ->default_str("2000")
        ->check(CLI::Range(1, kMaxScenarios));
    subcommand_->add_option("--seed", seed_, "with --confidence: random seed (a whole number >= 0)")
        ->default_str("1")
        ->check(non_negative_whole_number());
    subcommand_->add_flag("--lower-bound", lower_bound_,
                          "with --confidence: require the 95% interval's lower end, not the estimate, to reach it");
    interruption_.add_to(*subcommand_);
    model_.add_to(*subcommand_);
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    const PerformanceModel model = model_.load();
    const auto algorithm = plan_algorithm_from_string(algorithm_text_);
    if (!algorithm) throw usage_error("--algorithm = \"" + algorithm_text_ + "\": expected exact, sliding-window or brute-force");
    if (!deadline_s_ && !budget_usd_) throw usage_error("give --deadline SECONDS (or --budget USD for the fastest plan)");
    Slo slo;
    slo.target_loss = target_loss_;
    if (deadline_s_) slo.deadline_s = *deadline_s_;
    PlanOptions options;
    options.charge_parameter_server = !no_ps_cost_;
    options.budget_usd = budget_usd_;
    options.max_workers = max_workers_;
    if (!keep_text_.empty()) {
      const Cluster keep = Cluster::parse(keep_text_);
      for (const auto& [type, count] : keep.counts()) options.minimum_counts[type] = count;
    }
    for (const std::string& type : split(on_demand_text_)) options.markets[type] = Market::on_demand;

    if (confidence_) return run_with_confidence(out, model, slo, options, *algorithm);

    PlanResult r;
    switch (*algorithm) {
      case PlanAlgorithm::exact: r = plan_exact(model, slo, options); break;
      case PlanAlgorithm::brute_force: r = plan_brute_force(model, slo, options); break;
      case PlanAlgorithm::sliding_window: r = plan_sliding_window(model, slo, options); break;
    }
    if (format_ == OutputFormat::json) {
      out << io::plan_document(r, model).dump(2) << '\n';
    } else {
      print_table(out, model, r);
    }
    return r.has_plan() ? 0 : kExitNoAnswer;
  }

 private:
  int run_with_confidence(std::ostream& out, const PerformanceModel& model, const Slo& slo, const PlanOptions& options,
                          PlanAlgorithm algorithm) const {
    if (budget_usd_ || !deadline_s_ || algorithm != PlanAlgorithm::exact) {
      throw usage_error("--confidence needs a --deadline and the exact planner (no --budget, no --algorithm)");
    }
    (void)interruption_.build(model);  // one clear line when a type has no hazard
    ConfidencePlanOptions c;
    c.confidence = *confidence_;
    c.plan = options;
    c.interruption = interruption_.options();
    c.simulate.scenarios = scenarios_;
    c.simulate.seed = seed_;
    c.simulate.threads = 0;
    c.require_lower_bound = lower_bound_;
    const ConfidencePlanResult r = plan_with_confidence(model, slo, c);
    if (format_ == OutputFormat::json) {
      out << io::plan_document(r, model).dump(2) << '\n';
      return r.has_plan() ? 0 : kExitNoAnswer;
    }
    out << fmt::format("spotdnn plan (confidence {}): {} on {}, target loss {}, deadline {}\n\n", detail::format_number(r.confidence),
                       model.workload().name, model.catalog().region, detail::format_number(slo.target_loss),
                       format_duration(slo.deadline_s));
    TextTable plans({"plan", "cluster", "cost without revocations", "P(meets deadline)", "95% interval"}, 2);
    auto probability_row = [&](const std::string& label, const Cluster& cluster, double cost_usd, const ProbabilityEstimate& p) {
      plans.add_row({label, cluster.to_string(), format_usd(cost_usd), fmt::format("{:.3f}", p.estimate),
                     fmt::format("[{:.3f}, {:.3f}]", p.lower, p.upper)});
    };
    if (r.deterministic.has_plan() && r.deterministic_probability) {
      probability_row("deterministic (exact)", r.deterministic.cluster, r.deterministic.prediction.cost_usd,
                      *r.deterministic_probability);
    }
    if (r.has_plan()) probability_row("with confidence", r.cluster, r.prediction.cost_usd, r.simulation.meets_deadline);
    plans.print(out);
    out << fmt::format("\n  {} scenarios per candidate; {} of {} candidate plans simulated in cost order\n", r.scenarios,
                       r.candidates_simulated, r.candidates);
    out << "  " << r.message << '\n';
    return r.has_plan() ? 0 : kExitNoAnswer;
  }

  static std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> parts;
    std::string part;
    for (char c : text + ",") {
      if (c != ',') {
        part += c;
      } else if (!part.empty()) {
        parts.push_back(part);
        part.clear();
      }
    }
    return parts;
  }

  static void print_table(std::ostream& out, const PerformanceModel& model, const PlanResult& r) {
    out << fmt::format("spotdnn plan ({}): {} on {}, target loss {}", to_string(r.algorithm), model.workload().name,
                       model.catalog().region, detail::format_number(r.target_loss));
    if (std::isfinite(r.deadline_s)) out << fmt::format(", deadline {}", format_duration(r.deadline_s));
    if (r.budget_usd) out << fmt::format(", budget {}", format_usd(*r.budget_usd));
    out << "\n\n";
    if (!r.has_plan()) {
      out << "  " << to_string(r.status) << " (" << to_string(r.reason) << "): " << r.message << '\n';
      return;
    }
    const Prediction& p = r.prediction;
    TextTable types({"type", "count", "GPUs", "iteration [s]", "samples/s", "$/h each", "market"});
    for (const WorkerTypeBreakdown& t : p.per_type) {
      types.add_row({t.type, std::to_string(t.count), std::to_string(t.gpus), fmt::format("{:.4f}", t.iteration_time_s),
                     fmt::format("{:.1f}", t.samples_per_s), fmt::format("{:.4f}", t.price_usd_per_hour),
                     std::string(to_string(t.market))});
    }
    types.print(out);
    TextTable figures({"figure", "value"}, 2);
    figures.add_row({"status", fmt::format("{} ({})", to_string(r.status), to_string(r.objective))});
    figures.add_row({"workers", std::to_string(p.workers)});
    figures.add_row({"training time", format_duration(p.training_time_s)});
    if (std::isfinite(r.deadline_s)) {
      figures.add_row({"under the deadline by", fmt::format("{} ({:.1f}% of the deadline)", format_duration(r.deadline_slack_s),
                                                            100.0 * r.deadline_slack_s / r.deadline_s)});
    }
    figures.add_row({"cost", format_usd(p.cost_usd)});
    figures.add_row({"  workers", format_usd(p.worker_cost_usd)});
    figures.add_row({"  parameter server", fmt::format("{} ({} on-demand, {})", format_usd(p.ps_cost_usd),
                                                       model.catalog().parameter_server.type,
                                                       p.parameter_server_charged ? "charged" : "not charged")});
    figures.add_row({"iterations", fmt::format("{:.1f}", p.iterations)});
    figures.add_row({"throughput", fmt::format("{:.1f} samples/s", p.samples_per_s)});
    figures.add_row({"weighted batch", fmt::format("{:.1f} samples", p.weighted_batch)});
    out << '\n';
    figures.print(out);
    out << '\n' << "  " << r.message << '\n';
  }

  double target_loss_ = 0;
  std::optional<double> deadline_s_;
  std::optional<double> budget_usd_;
  std::optional<int> max_workers_;
  std::string algorithm_text_ = "exact";
  std::string keep_text_;
  std::string on_demand_text_;
  bool no_ps_cost_ = false;
  std::optional<double> confidence_;
  int scenarios_ = 2000;
  std::uint64_t seed_ = 1;
  bool lower_bound_ = false;
  InterruptionCliOptions interruption_;
  OutputFormat format_ = OutputFormat::table;
  ModelOptions model_;
};

}  // namespace spotdnn::cli
