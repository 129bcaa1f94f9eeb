#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/compare_command.hpp `spotdnn compare`: the cheapest spot plan and the cheapest serverless plan
/// for the same work, side by side (and, with --plot, both cost–deadline frontiers on one chart).
///
/// The same work: the spot plan's samples to train (iterations × weighted batch, docs/model.md eq. (6))
/// become the serverless epochs E = samples / D (docs/model.md section 4). When the spot side has no plan,
/// the samples of its fastest cluster are used (so an infeasible spot side still gives the serverless side
/// its work), or --epochs names the serverless work outright. One side without a plan never hides the other.
///
/// On a catalog with per-zone spot prices the spot side is planned in every Availability Zone and the
/// cheapest kept (all of a run in one zone), or in the zone --zone pins, as `plan` does; its plot is the
/// staircase of the cheapest zone per deadline (zone_frontier.hpp). Every output names the spot plan's
/// zone and, when the catalog holds Spot Placement Scores, the scores of its types there.
///
/// With --catalog given once per region the spot side is planned in every zone of every region and the
/// cheapest kept (choose_region, as `plan` does), or in the region --region pins; every output names its
/// region, and the plot's spot staircase is the cheapest (region, zone) per deadline (region_frontier).
/// With --data-region R --dataset-gb G (as plan takes them: transfer_options.hpp) the spot side pays for
/// reading the dataset from R outside R, counted in the region choice and shown on the spot side (its
/// transfer and total); the plot's spot staircase is then the total per deadline. The serverless side and
/// which side is cheaper are as without it (the serverless plan's own region is not modelled).

#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/io/serverless_plan_json.hpp>
#include <spotdnn/model/profile_estimate.hpp>
#include <spotdnn/plan/exact.hpp>
#include <spotdnn/plan/frontier.hpp>
#include <spotdnn/region_choice.hpp>
#include <spotdnn/serverless/serverless_frontier.hpp>

#include "command.hpp"
#include "csv_output.hpp"
#include "gnuplot.hpp"
#include "options.hpp"
#include "plot_script.hpp"
#include "progress_line.hpp"
#include "serverless_command.hpp"
#include "serverless_options.hpp"
#include "table.hpp"
#include "transfer_options.hpp"
#include "zone_frontier.hpp"
#include "zone_option.hpp"

namespace spotdnn::cli {

/// The gnuplot script of both staircases: spot (blue) and serverless (orange) cost against deadline, with
/// the compared deadline marked.
[[nodiscard]] inline std::string compare_gnuplot_script(const Frontier& spot, const serverless::ServerlessFrontier& lambda,
                                                        double deadline_s, double epochs, PlotFormat format) {
  const TimeUnit unit = time_unit_for(spot.max_deadline_s);
  std::string s = plot_preamble(format, 1000, 640);
  s += "set title " + gnuplot_string("Cheapest plan per deadline: spot (target loss " + detail::format_readable(spot.target_loss) +
                                     ") and serverless (" + detail::format_readable(epochs) + " epochs, the same samples)") +
       " noenhanced\n";
  s += "set xlabel " + gnuplot_string("deadline [" + unit.name + "]") + " noenhanced\n";
  s += "set ylabel 'cost [USD]'\nset format y '%.2f'\nset logscale y\n";
  s += "set xrange [" + plot_number(spot.min_deadline_s / unit.seconds) + ":" + plot_number(spot.max_deadline_s / unit.seconds) + "]\n";
  s += "set arrow from " + plot_number(deadline_s / unit.seconds) + ", graph 0 to " + plot_number(deadline_s / unit.seconds) +
       ", graph 1 nohead dt 2 lc rgb '#777777'\n";
  const auto staircase = [&](const std::string& name, const std::vector<std::pair<double, std::pair<double, double>>>& steps) {
    s += "$" + name + " << EOD\n";
    for (const auto& [cost, range] : steps) {
      s += plot_number(range.first / unit.seconds) + " " + plot_number(cost) + " " + plot_number(range.second / unit.seconds) + "\n";
    }
    s += "EOD\n";
  };
  std::vector<std::pair<double, std::pair<double, double>>> spot_steps, lambda_steps;
  for (const FrontierStep& step : spot.steps) spot_steps.push_back({step.plan.cost_usd, {step.from_deadline_s, step.to_deadline_s}});
  for (const serverless::ServerlessFrontierStep& step : lambda.steps) {
    lambda_steps.push_back({step.plan.cost.total_usd, {step.from_deadline_s, step.to_deadline_s}});
  }
  staircase("spot", spot_steps);
  staircase("serverless", lambda_steps);
  std::vector<std::string> plots;
  if (!spot_steps.empty()) {
    plots.push_back("$spot using 1:2:($3-$1):(0) with vectors nohead lw 2 lc rgb '#1f77b4' title 'spot instances'");
    plots.push_back("$spot using 1:2 with points pt 7 ps 0.6 lc rgb '#1f77b4' notitle");
  }
  if (!lambda_steps.empty()) {
    plots.push_back("$serverless using 1:2:($3-$1):(0) with vectors nohead lw 2 lc rgb '#ff7f0e' title 'serverless (Lambda + S3)'");
    plots.push_back("$serverless using 1:2 with points pt 5 ps 0.6 lc rgb '#ff7f0e' notitle");
  }
  if (plots.empty()) {
    s += "set label 1 'no plan on either side in this range' at graph 0.5, graph 0.5 center\nset yrange [0.01:1]\n";
    plots.push_back("NaN notitle");
  }
  s += "plot ";
  for (std::size_t i = 0; i < plots.size(); ++i) s += (i == 0 ? "" : ", \\\n     ") + plots[i];
  s += "\n";
  return s;
}

class CompareCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("compare", "the cheapest spot plan and the cheapest serverless plan for the same work, side by side");
    subcommand_->add_option("--target-loss", target_loss_, "training loss to reach (spot side; its samples are the serverless work)")
        ->required();
    add_duration_option(*subcommand_, "--deadline", deadline_s_, "training-time limit of both: seconds or a duration (3000, 50m)")->required();
    subcommand_->add_option("--epochs", epochs_, "serverless epochs instead of the spot plan's samples / samples_per_epoch");
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the spot parameter server out of the cost");
    subcommand_->add_option("--deadlines", deadlines_text_, "with --plot: the deadline range FROM:TO (default: deadline/4 to 2 × deadline)");
    add_plot_option(*subcommand_, plot_path_, "both cost–deadline frontiers");
    add_zone_option(*subcommand_, zone_,
                    "plan the spot side in this Availability Zone only (default: in every zone the catalog prices, keeping "
                    "the cheapest; a run lives in one zone)");
    subcommand_->add_option("--region", region_,
                            "with --catalog given once per region: plan the spot side in this region only (default: in every "
                            "region, keeping the cheapest; with --data-region, counting the cost of reading the dataset there)");
    transfer_.add_to(*subcommand_);
    serverless_.add_to(*subcommand_, "--serverless-profile");
    model_.several_catalogs = true;
    model_.add_to(*subcommand_);
    add_progress_options(*subcommand_, progress_mode_);
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    if (!plot_path_.empty()) (void)check_plot_path(plot_path_);  // a bad path is bad input, before any work
    std::vector<std::pair<std::string, std::string>> files = serverless_.file_options();
    for (const auto& file : model_.file_options()) files.push_back(file);
    require_one_stdin(files);
    require_zone_not_empty(*subcommand_, zone_);
    if (subcommand_->count("--region") > 0 && region_.empty()) throw usage_error("--region: give a region name like us-east-1, not an empty string");
    transfer_.read(*subcommand_);
    models_ = model_.load_each(*this);
    across_regions_ = models_.size() > 1;
    std::vector<Catalog> catalogs;
    for (const PerformanceModel& m : models_) catalogs.push_back(m.catalog());
    if (!across_regions_ && region_.empty()) (void)model_in_zone(models_.front(), zone_);  // an unknown --zone: one line, exit 2
    const serverless::ServerlessProfile profile = serverless_.load_profile();
    samples_per_epoch_ = profile.samples_per_epoch;
    const serverless::ServerlessPlanOptions grid = serverless_.plan_options(deadline_s_);
    Slo slo;
    slo.target_loss = target_loss_;
    slo.deadline_s = deadline_s_;
    PlanOptions plan_options;
    plan_options.charge_parameter_server = !no_ps_cost_;
    RegionChoice<PlanResult> choice;
    std::string unproven;  // the first zone (region) whose exact search stopped at its step limit, and why
    try {
      choice = choose_region(
          catalogs,
          [&](const Catalog& catalog, const std::string& zone, double) {
            return noted_plan_candidate(plan_exact(PerformanceModel(models_.front().workload(), catalog), slo, plan_options),
                                        zone.empty() ? catalog.region : zone, unproven);
          },
          region_, zone_, transfer_.cost_function());
    } catch (const spotdnn::invalid_argument& e) {
      throw usage_error(e.what());  // a region or zone no catalog has, two catalogs of one region: one line, exit 2
    }
    mark_unproven_choice(choice, unproven);
    const PlanResult& spot = choice.result;
    const PerformanceModel spot_model = model_in_zone(models_[choice.catalog_index], choice.zone);

    // The serverless work: --epochs, or the spot plan's samples (its fastest cluster's without a plan).
    std::optional<double> epochs = epochs_;
    std::string work_source = "--epochs";
    if (!epochs) {
      if (spot.has_plan()) {
        epochs = spot.prediction.samples_to_train / profile.samples_per_epoch;
        work_source = "the spot plan's samples";
      } else if (spot.fastest && std::isfinite(spot.fastest->samples_to_train) && spot.fastest->samples_to_train > 0) {
        epochs = spot.fastest->samples_to_train / profile.samples_per_epoch;
        work_source = "the fastest spot cluster's samples";
      }
    }
    std::optional<serverless::ServerlessModel> lambda_model;
    serverless::ServerlessPlanResult lambda;
    lambda.deadline_s = deadline_s_;
    if (epochs) {
      lambda_model.emplace(serverless_.model(profile, *epochs));
      ProgressLine progress(progress_mode_);
      lambda = serverless::plan_serverless_exact(*lambda_model, grid, progress.callback());
    } else {
      lambda.status = Status::invalid_input;
      lambda.message = "the spot side gives no samples to train (" + spot.message + "): give --epochs";
    }
    // The answer is printed whatever becomes of the plot; a plot that fails is a warning and exit 4.
    if (!plot_path_.empty()) {
      plot_failure_ = plot(lambda_model, grid, epochs.value_or(0));
      if (!plot_failure_.empty()) warn(plot_failed_warning(plot_failure_));
    }

    if (format_ == OutputFormat::json) {
      io::Json j = io::Json::object();
      j["deadline_s"] = deadline_s_;
      j["target_loss"] = target_loss_;
      j["epochs"] = epochs ? io::Json(*epochs) : io::Json(nullptr);
      j["work_from"] = epochs ? io::Json(work_source) : io::Json(nullptr);
      j["spot"] = io::plan_document(spot, spot_model, choice.zone);
      // Estimated profiles the spot plan rests on: {TYPE: FROM}, and per_type's profile_estimated_from.
      j["spot"]["estimated_profiles"] = estimated_profiles(spot_model.workload(), spot.cluster);
      if (spot.has_plan()) j["spot"]["per_type"] = io::to_json(spot.prediction, &spot_model.workload()).at("per_type");
      if (across_regions_ || !region_.empty() || transfer_.given) j["spot"]["region_choice"] = choice.note;
      transfer_.add_keys(j["spot"], choice.extra_cost_usd, spot.has_plan() ? std::optional<double>(spot.prediction.cost_usd) : std::nullopt);
      j["serverless"] = lambda_model ? io::serverless_plan_document(lambda, *lambda_model)
                                     : io::Json{{"status", std::string(to_string(lambda.status))}, {"message", lambda.message}};
      j["cheaper"] = cheaper(spot, lambda);
      if (!plot_path_.empty()) j["plot"] = plot_failure_.empty() ? io::Json(plot_path_) : io::Json(nullptr);
      if (!plot_failure_.empty()) j["plot_error"] = plot_failure_;
      out << j.dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      print_csv(out, spot_model.catalog(), choice, lambda);
    } else {
      print_table(out, spot_model, choice, lambda, epochs, work_source);
    }
    if (!spot.has_plan() && !lambda.has_plan()) return kExitNoAnswer;
    return plot_failure_.empty() ? 0 : kExitPlotFailed;
  }

 private:
  /// "spot", "serverless", "equal" or null (neither has a plan, or the spot search stopped at its step
  /// limit where the serverless cost lies within the spot plan's bound: the cheaper side is not known).
  static io::Json cheaper(const PlanResult& spot, const serverless::ServerlessPlanResult& lambda) {
    if (spot.has_plan() && lambda.has_plan()) {
      const double a = spot.prediction.cost_usd, b = lambda.plan.cost.total_usd;
      if (spot.status != Status::optimal && b <= a && b > spot.objective_lower_bound.value_or(0.0)) return nullptr;
      return a < b ? "spot" : b < a ? "serverless" : "equal";
    }
    if (spot.has_plan()) return "spot";
    if (lambda.has_plan() && spot.status != Status::undecided) return "serverless";
    return nullptr;
  }

  /// Draws both frontiers to --plot; returns why it failed (empty when drawn).
  [[nodiscard]] std::string plot(const std::optional<serverless::ServerlessModel>& lambda_model,
                                 serverless::ServerlessPlanOptions grid, double epochs) const {
    double from_s = deadline_s_ / 4, to_s = deadline_s_ * 2;
    if (!deadlines_text_.empty()) {
      const std::string expected = "--deadlines = " + detail::quoted(deadlines_text_) + ": expected FROM:TO, two durations (20m:2h)";
      const auto colon = deadlines_text_.find(':');
      if (colon == std::string::npos) throw usage_error(expected);
      const std::optional<double> from = parse_duration_s(deadlines_text_.substr(0, colon)), to = parse_duration_s(deadlines_text_.substr(colon + 1));
      if (!from || !to || !(*from > 0) || !(*to > *from)) throw usage_error(expected + " with 0 < FROM < TO");
      from_s = *from;
      to_s = *to;
    }
    FrontierOptions spot_options;
    spot_options.min_deadline_s = from_s;
    spot_options.max_deadline_s = to_s;
    spot_options.plan.charge_parameter_server = !no_ps_cost_;
    const ZoneFrontier zoned = region_frontier(models_, target_loss_, spot_options, region_, zone_, transfer_.cost_function());
    Frontier spot = zoned.frontier;
    // With --data-region the spot staircase is drawn at its totals (cost + transfer), as it was chosen.
    for (std::size_t i = 0; i < spot.steps.size() && i < zoned.step_extra_usd.size(); ++i) spot.steps[i].plan.cost_usd += zoned.step_extra_usd[i];
    serverless::ServerlessFrontier lambda;
    lambda.min_deadline_s = from_s;
    lambda.max_deadline_s = to_s;
    if (lambda_model) lambda = serverless::serverless_cost_deadline_frontier(*lambda_model, grid, from_s, to_s);
    return draw_plot(compare_gnuplot_script(spot, lambda, deadline_s_, epochs, *plot_format_of(plot_path_)), plot_path_, "--plot");
  }

  void print_table(std::ostream& out, const PerformanceModel& model, const RegionChoice<PlanResult>& choice,
                   const serverless::ServerlessPlanResult& lambda, const std::optional<double>& epochs, const std::string& work_source) const {
    const PlanResult& spot = choice.result;
    out << fmt::format("spotdnn compare: {} (target loss {}) on spot instances in {} and on AWS Lambda, deadline {}\n",
                       model.workload().name, detail::format_number(target_loss_), model.catalog().region, format_duration(deadline_s_));
    if (epochs) {
      out << fmt::format("  the same work on both: {} samples ({} epochs of {}; from {})\n\n",
                         detail::format_count(*epochs * samples_per_epoch_), detail::format_readable(*epochs),
                         detail::format_count(samples_per_epoch_), work_source);
    } else {
      out << "\n";
    }
    TextTable table({"", "spot", "serverless"}, 1);
    const bool s = spot.has_plan(), l = lambda.has_plan();
    table.add_row({"status", std::string(to_string(spot.status)), std::string(to_string(lambda.status))});
    table.add_row({"plan", s ? io::plan_label(spot.prediction, ',') : "-", l ? configuration_label(lambda.plan.configuration) : "-"});
    table.add_row({"training time", s ? format_duration(spot.prediction.training_time_s) : "-",
                   l ? format_duration(lambda.plan.training_time_s) : "-"});
    table.add_row({"cost", s ? format_usd(spot.prediction.cost_usd) : "-", l ? format_usd(lambda.plan.cost.total_usd) : "-"});
    table.add_row({"samples", s ? detail::format_count(spot.prediction.samples_to_train) : "-",
                   l ? detail::format_count(lambda.plan.samples_trained) : "-"});
    for (const auto& [name, value] : transfer_.rows(choice.region, choice.extra_cost_usd, s ? spot.prediction.cost_usd : 0.0)) {
      table.add_row({name, name == "total" && !s ? "-" : value, "-"});
    }
    if (across_regions_) table.add_row({"region", choice.region, "-"});
    if (!choice.zone.empty()) table.add_row({"zone", choice.zone, "-"});
    if (!model.catalog().placement_scores.empty()) {
      table.add_row({"placement score", s ? placement_scores_cell(model.catalog(), choice.zone, spot.cluster) : "-", "-"});
    }
    table.print(out);
    out << "\n  spot: " << spot.message << "\n  serverless: " << lambda.message << "\n";
    if (across_regions_ || !region_.empty() || transfer_.given) {
      out << "  spot region: " << choice.note << '\n';
    } else if (!choice.zone.empty()) {
      out << "  spot zone: " << choice.zone_note << '\n';
    }
    if (s) {
      for (const auto& [type, from] : estimated_profiles(model.workload(), spot.cluster)) {
        out << "  estimated: " << type << " from " << from << " (GPU peak), not measured\n";
      }
    }
    if (s && l && cheaper(spot, lambda).is_null()) {
      out << "  which is cheaper is not known: the spot plan is the best found before the exact planner's step limit\n";
    } else if (s && l) {
      const double a = spot.prediction.cost_usd, b = lambda.plan.cost.total_usd;
      out << "  " << (a <= b ? fmt::format("spot is cheaper by {} ({:.2f}×)", format_usd(b - a), b / a)
                             : fmt::format("serverless is cheaper by {} ({:.2f}×)", format_usd(a - b), a / b))
          << '\n';
    }
    if (!plot_path_.empty()) out << "  plot: " << (plot_failure_.empty() ? plot_path_ : "not written: " + plot_failure_) << '\n';
  }

  /// Two rows (spot, serverless); with zone prices a `zone` column, with placement scores a
  /// `placement_scores` column (placement_scores_csv_text), both empty on the serverless row.
  /// Across regions a `region` column follows (empty on the serverless row).
  void print_csv(std::ostream& out, const Catalog& catalog, const RegionChoice<PlanResult>& choice,
                 const serverless::ServerlessPlanResult& lambda) const {
    const PlanResult& spot = choice.result;
    const bool zones = !catalog_zones(catalog).empty() || !choice.zone.empty(), scores = !catalog.placement_scores.empty();
    CsvTable csv;
    const auto add = [&](const std::string& side, const std::string& status, const std::string& plan, double time_s, double cost_usd,
                         double samples, const std::string& message, bool has) {
      csv.add("side", side);
      csv.add("status", status);
      csv.add("plan", plan);
      csv.add("training_time_s", has ? csv_number(time_s) : std::string());
      csv.add("cost_usd", has ? csv_number(cost_usd) : std::string());
      csv.add("samples", has ? csv_number(samples) : std::string());
      csv.add("message", message);
    };
    add("spot", std::string(to_string(spot.status)), spot.has_plan() ? csv_cluster(spot.cluster) : "", spot.prediction.training_time_s,
        spot.prediction.cost_usd, spot.prediction.samples_to_train, spot.message, spot.has_plan());
    if (zones) csv.add("zone", choice.zone);
    if (scores) csv.add("placement_scores", spot.has_plan() ? placement_scores_csv_text(catalog, choice.zone, spot.cluster) : "");
    if (across_regions_) csv.add("region", choice.region);
    const auto transfer = transfer_.csv_columns(choice.extra_cost_usd, spot.has_plan() ? std::optional<double>(spot.prediction.cost_usd) : std::nullopt);
    for (const auto& [name, value] : transfer) csv.add(name, value);
    csv.next_row();
    add("serverless", std::string(to_string(lambda.status)),
        lambda.has_plan() ? fmt::format("workers={};memory_mb={};aggregators={}", lambda.plan.configuration.workers,
                                        lambda.plan.configuration.memory_mb, lambda.plan.configuration.aggregators)
                          : "",
        lambda.plan.training_time_s, lambda.plan.cost.total_usd, lambda.plan.samples_trained, lambda.message, lambda.has_plan());
    if (zones) csv.add("zone", "");
    if (scores) csv.add("placement_scores", "");
    if (across_regions_) csv.add("region", "");
    for (const auto& column : transfer) csv.add(column.first, "");
    csv.print(out);
  }

  double target_loss_ = 0;
  double deadline_s_ = 0;
  std::string zone_;
  std::optional<double> epochs_;
  bool no_ps_cost_ = false;
  std::string deadlines_text_;
  std::string plot_path_;
  std::string plot_failure_;  ///< why --plot was not drawn (set by run; empty: drawn or not asked)
  ServerlessOptions serverless_;
  ModelOptions model_;
  std::vector<PerformanceModel> models_;  ///< one per --catalog (set by run)
  std::string region_;
  bool across_regions_ = false;  ///< several --catalog (set by run)
  TransferOptions transfer_;     ///< --data-region, --dataset-gb, --transfer-usd-per-gb
  ProgressMode progress_mode_ = ProgressMode::automatic;
  OutputFormat format_ = OutputFormat::table;
  double samples_per_epoch_ = 0;  ///< D of the serverless profile (set by run)
};

}  // namespace spotdnn::cli
