#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/predict_command.hpp `spotdnn predict`: the model's figures for one cluster and target loss.

#include <ostream>
#include <string>

#include <fmt/format.h>

#include <spotdnn/io/json.hpp>
#include <spotdnn/model/prediction.hpp>
#include <spotdnn/model/profile_estimate.hpp>
#include <spotdnn/units.hpp>

#include "command.hpp"
#include "csv_output.hpp"
#include "options.hpp"
#include "table.hpp"

namespace spotdnn::cli {

class PredictCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("predict", "predict training time and cost of one cluster");
    subcommand_->add_option("--cluster", cluster_text_, "workers per type, e.g. p3.2xlarge=2,g3.8xlarge=4 (or ; between entries)")
        ->required();
    subcommand_->add_option("--target-loss", target_loss_, "training loss to reach")->required();
    model_.add_to(*subcommand_);
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    const PerformanceModel model = model_.load(*this);
    const Cluster cluster = Cluster::parse(cluster_text_);
    PredictOptions options;
    options.charge_parameter_server = !no_ps_cost_;
    const Prediction p = predict(model, cluster, target_loss_, options);
    // A target the loss model gives before training, or one no cluster reaches (at or below the loss
    // model's asymptote), is a valid question without an answer: the status and why, exit 3. Any other
    // failure is bad input.
    const bool no_answer = p.status == Status::target_met_at_start || p.status == Status::infeasible;
    if (p.status != Status::feasible && !no_answer) throw usage_error(p.message);
    if (no_answer && format_ == OutputFormat::table) {
      out << to_string(p.status) << ": " << p.message << '\n';
      return kExitNoAnswer;
    }
    if (format_ == OutputFormat::json) {
      out << io::to_json(p, &model.workload()).dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      print_csv(out, p);
    } else {
      print_table(out, model, p);
    }
    return no_answer ? kExitNoAnswer : 0;
  }

 private:
  static void print_table(std::ostream& out, const PerformanceModel& model, const Prediction& p) {
    const Catalog& catalog = model.catalog();
    out << fmt::format("spotdnn predict: {} on {}, target loss {}\n\n", model.workload().name, catalog.region,
                       detail::format_number(p.target_loss));
    TextTable types({"type", "count", "GPUs", "batch", "iteration [s]", "samples/s", "$/h each", "market"});
    for (const WorkerTypeBreakdown& t : p.per_type) {
      types.add_row({t.type, std::to_string(t.count), std::to_string(t.gpus), fmt::format("{:.0f}", t.batch),
                     fmt::format("{:.4f}", t.iteration_time_s), fmt::format("{:.1f}", t.samples_per_s),
                     fmt::format("{:.4f}", t.price_usd_per_hour), std::string(to_string(t.market))});
    }
    types.print(out);
    const ParameterServer& ps = catalog.parameter_server;
    const bool contended = model.workload().required_bandwidth_bytes_per_s > ps.bandwidth_bytes_per_s / p.workers;
    TextTable figures({"figure", "value"}, 2);
    figures.add_row({"workers", fmt::format("{} (PS {} on-demand at ${:.4f}/h, {})", p.workers, ps.type,
                                            ps.price_usd_per_hour, p.parameter_server_charged ? "charged" : "not charged")});
    figures.add_row({"contention probability", fmt::format("{:.4f} ({})", p.contention_probability,
                                                           contended ? "PS link oversubscribed" : "PS link not oversubscribed")});
    figures.add_row({"worker bandwidth", fmt::format("{:.1f} MB/s", units::bytes_to_megabytes(p.worker_bandwidth_bytes_per_s))});
    figures.add_row({"throughput", fmt::format("{:.1f} samples/s, {:.3f} iterations/s", p.samples_per_s, p.iterations_per_s)});
    figures.add_row({"weighted batch", fmt::format("{:.1f} samples", p.weighted_batch)});
    figures.add_row({"convergence coefficient", fmt::format("{:.4f}", p.convergence_coefficient)});
    figures.add_row({"iterations", fmt::format("{:.1f}", p.iterations)});
    figures.add_row({"samples to train", detail::format_count(p.samples_to_train)});
    figures.add_row({"training time", format_duration(p.training_time_s)});
    figures.add_row({"cost", fmt::format("{} (workers {} + PS {})", format_usd(p.cost_usd), format_usd(p.worker_cost_usd),
                                         format_usd(p.ps_cost_usd))});
    out << '\n';
    figures.print(out);
    out << '\n' << "  " << p.message << '\n';
    for (const auto& [type, from] : estimated_profiles(model.workload(), p.cluster)) {
      out << "  estimated: " << type << " from " << from << " (GPU peak), not measured\n";
    }
  }

  /// The prediction's figures as in --format json (without per_type), one header and one row.
  static void print_csv(std::ostream& out, const Prediction& p) {
    CsvTable csv;
    csv.add("status", std::string(to_string(p.status)));
    csv.add("outcome", std::string(to_string(p.outcome)));
    csv.add("target_loss", csv_number(p.target_loss));
    csv.add("ps_charged", p.parameter_server_charged ? "true" : "false");
    csv.add("cluster", csv_cluster(p.cluster));
    csv.add("workers", std::to_string(p.workers));
    csv.add("training_time_s", csv_number(p.training_time_s));
    csv.add("cost_usd", csv_number(p.cost_usd));
    csv.add("worker_cost_usd", csv_number(p.worker_cost_usd));
    csv.add("ps_cost_usd", csv_number(p.ps_cost_usd));
    csv.add("iterations", csv_number(p.iterations));
    csv.add("weighted_batch", csv_number(p.weighted_batch));
    csv.add("samples_per_s", csv_number(p.samples_per_s));
    csv.add("iterations_per_s", csv_number(p.iterations_per_s));
    csv.add("samples_to_train", csv_number(p.samples_to_train));
    csv.add("convergence_coefficient", csv_number(p.convergence_coefficient));
    csv.add("worker_bandwidth_bytes_per_s", csv_number(p.worker_bandwidth_bytes_per_s));
    csv.add("contention_probability", csv_number(p.contention_probability));
    csv.add("message", p.message);
    csv.print(out);
  }

  std::string cluster_text_;
  double target_loss_ = 0;
  bool no_ps_cost_ = false;
  OutputFormat format_ = OutputFormat::table;
  ModelOptions model_;
};

}  // namespace spotdnn::cli
