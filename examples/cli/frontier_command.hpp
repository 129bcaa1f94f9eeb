#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/frontier_command.hpp `spotdnn frontier`: the cost–deadline Pareto staircase for a target loss,
/// as a table, JSON or CSV, optionally drawn with gnuplot (--plot FILE.svg|.png|.pdf). On a catalog with
/// per-zone prices each step is the cheapest plan over the Availability Zones (each zone's staircase, merged:
/// zone_frontier.hpp), priced and launched in its own zone, which every output shows; --zone prices one zone
/// (and its step documents launch there). The table numbers the steps from 1 by
/// increasing deadline; --step N --format json prints step N as a plan document, and `launch --plan
/// FRONTIER.json --step N` launches it from the whole frontier document. A plot that fails never loses
/// the answer: it is printed, the failure is a warning and the exit code is 4 (gnuplot.hpp).
///
/// With --catalog given once per region, every region's staircase (its zones merged as above) is merged
/// into one lower envelope (region_frontier): each step is the cheapest plan over every (region, zone) for
/// its deadlines, and every output names its region (a `region` column, `region` per step in JSON and
/// CSV; each step's plan document is its region's, so `launch --step N` launches it there); --region
/// plans one region. With --data-region R --dataset-gb G (as plan takes them: transfer_options.hpp) every
/// region's steps count reading the dataset from R before the envelope is merged, so that each step is the
/// cheapest with the data counted; each step shows its transfer and its total (cost + transfer).
///
/// With --confidence C, the frontier of confidence plans: at each of the COUNT evenly spaced deadlines of
/// --deadlines FROM:TO:COUNT (2 to kMaxConfidenceDeadlines: each is a whole search), the cheapest plan
/// shown to meet that deadline under spot revocations with probability at least C
/// (revocation/chance_constrained.hpp, with the options `plan --confidence` takes), beside the
/// deterministic plan of the same deadline. Each deadline's plan is chosen as `plan --confidence` chooses
/// it (confidence_choice.hpp): a search in every Availability Zone of every --catalog's region, the cheapest
/// zone kept, which every output names (or the zone --zone and the region --region pin). Each deadline is its own search at the error rate δ given, so
/// all COUNT answers hold together with probability at least 1 − COUNT·δ (union bound). Every search uses
/// the same seed: the same scenarios at every deadline (common random numbers).

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/io/plan_json.hpp>
#include <spotdnn/limits.hpp>
#include <spotdnn/plan/frontier.hpp>
#include <spotdnn/revocation/chance_constrained.hpp>

#include "command.hpp"
#include "confidence_choice.hpp"
#include "csv_output.hpp"
#include "gnuplot.hpp"
#include "interruption_options.hpp"
#include "options.hpp"
#include "plot_script.hpp"
#include "price_age.hpp"
#include "progress_line.hpp"
#include "revocations_option.hpp"
#include "table.hpp"
#include "transfer_options.hpp"
#include "zone_frontier.hpp"
#include "zone_option.hpp"

namespace spotdnn::cli {

/// The most deadlines `frontier --confidence` samples: each one is a whole confidence search.
inline constexpr int kMaxConfidenceDeadlines = 50;

/// One sampled deadline of the confidence frontier and the search's answer there.
struct ConfidenceFrontierSample {
  double deadline_s = 0;
  ConfidencePlanResult result;
  std::string region;       ///< the region of the plan kept (its catalog's)
  std::string zone;         ///< its Availability Zone ("" on a catalog without zone prices)
  std::size_t model = 0;    ///< the index of its region's model in the command's models
};

/// A gnuplot script drawing the confidence frontier in `format` (to standard output): the deterministic
/// staircase `f` (cost against deadline, as frontier_gnuplot_script draws it, without labels), the
/// deterministic plan's cost at each sampled deadline as open circles, and the confidence plan's
/// revocation-free cost there as filled triangles; a deadline where no plan meets the level is a cross on
/// the top edge. Only numbers enter the datablocks; the title's text goes through gnuplot_string().
[[nodiscard]] inline std::string confidence_frontier_gnuplot_script(const Frontier& f, const std::vector<ConfidenceFrontierSample>& samples,
                                                                    double confidence, bool calibrated, PlotFormat format = PlotFormat::svg) {
  const TimeUnit unit = time_unit_for(f.max_deadline_s);
  std::vector<double> costs;
  for (const FrontierStep& s : f.steps) costs.push_back(s.plan.cost_usd);
  for (const ConfidenceFrontierSample& s : samples) {
    if (s.result.has_plan()) costs.push_back(s.result.prediction.cost_usd);
    if (s.result.deterministic.has_plan()) costs.push_back(s.result.deterministic.prediction.cost_usd);
  }
  double cost_low = costs.empty() ? 0 : *std::min_element(costs.begin(), costs.end());
  double cost_high = costs.empty() ? 1 : *std::max_element(costs.begin(), costs.end());
  if (!(cost_high > cost_low)) cost_high = cost_low + std::max(0.01, 0.1 * cost_low);
  const double span = cost_high - cost_low;
  const double y_low = std::max(0.0, cost_low - 0.08 * span), y_high = cost_high + 0.12 * span;
  const double x_low = f.min_deadline_s, x_high = f.max_deadline_s > f.min_deadline_s ? f.max_deadline_s : f.min_deadline_s + 1;
  const double x_pad = 0.02 * (x_high - x_low);

  std::string s = plot_preamble(format, 1000, 640);
  s += "set title " +
       gnuplot_string("Cheapest plan per deadline, target loss " + detail::format_readable(f.target_loss) + ": deterministic and with " +
                      "confidence " + detail::format_number(confidence)) +
       "." + std::string(kGnuplotNewline) + "." +
       gnuplot_string(calibrated ? std::string("revocations drawn from the model fitted to traces")
                                 : std::string("UNCALIBRATED: constant-rate revocations for some types (see --format table)")) +
       " noenhanced\n";
  s += "set xlabel " + gnuplot_string("deadline [" + unit.name + "]") + " noenhanced\n";
  s += "set ylabel 'cost without revocations [USD]'\nset format y '%.2f'\n";
  s += "set xrange [" + plot_number((x_low - x_pad) / unit.seconds) + ":" + plot_number((x_high + x_pad) / unit.seconds) + "]\n";
  s += "set yrange [" + plot_number(y_low) + ":" + plot_number(y_high) + "]\n";
  std::string frontier, deterministic, confident, none;
  for (const FrontierStep& step : f.steps) {
    frontier += plot_number(step.from_deadline_s / unit.seconds) + " " + plot_number(step.plan.cost_usd) + " " +
                plot_number(step.to_deadline_s / unit.seconds) + "\n";
  }
  for (const ConfidenceFrontierSample& sample : samples) {
    const std::string x = plot_number(sample.deadline_s / unit.seconds);
    if (sample.result.deterministic.has_plan()) deterministic += x + " " + plot_number(sample.result.deterministic.prediction.cost_usd) + "\n";
    if (sample.result.has_plan()) {
      confident += x + " " + plot_number(sample.result.prediction.cost_usd) + "\n";
    } else {
      none += x + " " + plot_number(y_high - 0.03 * (y_high - y_low)) + "\n";
    }
  }
  std::vector<std::string> curves;
  auto block = [&s, &curves](const std::string& name, const std::string& data, const std::string& how) {
    if (data.empty()) return;
    s += "$" + name + " << EOD\n" + data + "EOD\n";
    curves.push_back("$" + name + " " + how);
  };
  block("frontier", frontier, "using 1:2:($3-$1):(0) with vectors nohead lw 2 lc rgb '#1f77b4' title 'deterministic optimum [USD]'");
  block("deterministic", deterministic, "using 1:2 with points pt 6 ps 1.2 lc rgb '#1f77b4' title 'deterministic plan at a sampled deadline'");
  block("confidence", confident,
        "using 1:2 with points pt 9 ps 1.4 lc rgb '#d62728' title " +
            gnuplot_string("cheapest plan with P(meets deadline) >= " + detail::format_number(confidence)) + " noenhanced");
  block("none", none, "using 1:2 with points pt 2 ps 1.4 lc rgb '#7f7f7f' title 'no plan meets the level'");
  s += "plot ";
  for (std::size_t i = 0; i < curves.size(); ++i) s += (i == 0 ? "" : ", \\\n     ") + curves[i];
  s += "\n";
  return s;
}

class FrontierCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("frontier", "cheapest plan for every deadline in a range (Pareto set of cost and time)");
    subcommand_->add_option("--target-loss", target_loss_, "training loss to reach")->required();
    subcommand_->add_option("--deadlines", deadlines_text_,
                            "FROM:TO[:COUNT], durations (600:7200, 40m:2h:10); with COUNT, also the optimum at COUNT "
                            "evenly spaced deadlines (with --confidence, COUNT from 2 to " +
                                std::to_string(kMaxConfidenceDeadlines) + " is required)")
        ->default_str("600:7200");
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    add_plot_option(*subcommand_, plot_path_, "cost against deadline");
    subcommand_->add_flag_callback("--csv", [] { throw CLI::ValidationError("--csv", "is now --format csv"); })->group("");
    add_zone_option(*subcommand_, zone_,
                    "price this Availability Zone (its steps launch there); without it, on a catalog with zone prices each "
                    "step is the cheapest plan over the zones, in one zone (with --confidence: each deadline's plan in "
                    "the cheapest zone, as plan --confidence chooses it)");
    subcommand_->add_option("--step", step_,
                            "print step N of the frontier (numbered from 1 by increasing deadline, as the table numbers them) "
                            "as a plan document that spotdnn launch takes; needs --format json")
        ->type_name("N");
    subcommand_->add_option("--region", region_,
                            "with --catalog given once per region: the frontier of this region only (default: each step the "
                            "cheapest over every region; with --data-region, counting the cost of reading the dataset there)");
    transfer_.add_to(*subcommand_);
    model_.several_catalogs = true;
    model_.add_to(*subcommand_);
    price_age_.add_to(*subcommand_);
    add_confidence_options();
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    require_zone_not_empty(*subcommand_, zone_);
    transfer_.read(*subcommand_);
    if (confidence_ && transfer_.given) {
      throw usage_error("--data-region: not with --confidence (the confidence frontier does not count the data transfer); "
                        "plan --confidence --data-region counts it at one deadline");
    }
    if (!confidence_) refuse_confidence_only_options();
    if (step_) refuse_with_step();
    if (!plot_path_.empty()) (void)check_plot_path(plot_path_);  // a bad path is bad input, before any work
    if (subcommand_->count("--region") > 0 && region_.empty()) throw usage_error("--region: give a region name like us-east-1, not an empty string");
    models_ = model_.load_each(*this);
    const PerformanceModel& loaded = models_.front();
    if (models_.size() == 1 && !region_.empty() && region_ != loaded.catalog().region) {
      throw usage_error("--region = " + detail::quoted(region_) + ": no --catalog of that region (known: " + loaded.catalog().region + ")");
    }
    if (models_.size() == 1) (void)model_in_zone(loaded, zone_);  // an unknown --zone: one line, exit 2
    FrontierOptions options;
    parse_deadlines(options);
    options.plan.charge_parameter_server = !no_ps_cost_;
    if (confidence_) return run_with_confidence(out, options);
    const ZoneFrontier zoned = region_frontier(models_, target_loss_, options, region_, zone_, transfer_.cost_function());
    const Frontier& f = zoned.frontier;
    if (step_) check_step(f);
    // Once the question is answered: bad input stays one line on stderr.
    if (models_.size() == 1) {
      warn_stale_prices(model_in_zone(loaded, zone_));
    } else {
      for (const PerformanceModel& m : models_) {
        for (const std::string& stale : price_age_.warnings(m.catalog())) warn("region " + m.catalog().region + ": " + stale);
      }
    }
    if (step_) return print_step(out, loaded, zoned);
    // The answer is printed whatever becomes of the plot; a plot that fails is a warning and exit 4.
    std::string plot_failure;
    if (!plot_path_.empty() && !f.steps.empty()) plot_failure = plot(f, options);
    const bool plotted = !plot_path_.empty() && !f.steps.empty() && plot_failure.empty();
    if (!plot_failure.empty()) warn(plot_failed_warning(plot_failure));
    if (format_ == OutputFormat::csv) {
      print_csv(out, loaded.catalog(), zoned);
    } else if (format_ == OutputFormat::json) {
      io::Json j = frontier_json(loaded, zoned);
      j["samples"] = io::Json::array();
      for (int i = 0; i < samples_; ++i) {
        const double d = sample_deadline(options, i);
        const FrontierStep* s = f.at(d);
        io::Json sample = {{"deadline_s", d}, {"cost_usd", s ? io::Json(s->plan.cost_usd) : io::Json(nullptr)},
                           {"cluster", s ? io::to_json(s->plan.cluster) : io::Json(nullptr)}};
        if (!zoned.zones.empty()) sample["zone"] = s ? io::Json(zoned.step_zones[std::size_t(s - f.steps.data())]) : io::Json(nullptr);
        if (!zoned.regions.empty()) sample["region"] = s ? io::Json(zoned.step_regions[std::size_t(s - f.steps.data())]) : io::Json(nullptr);
        if (transfer_.given) {
          transfer_.add_cost_keys(sample, s ? zoned.step_extra_usd[std::size_t(s - f.steps.data())] : 0.0,
                                  s ? std::optional<double>(s->plan.cost_usd) : std::nullopt);
        }
        j["samples"].push_back(std::move(sample));
      }
      if (!plot_path_.empty()) j["plot"] = plotted ? io::Json(plot_path_) : io::Json(nullptr);  // null: not drawn
      if (!plot_failure.empty()) j["plot_error"] = plot_failure;
      out << j.dump(2) << '\n';
    } else {
      print_table(out, loaded, zoned, options, plotted, plot_failure);
    }
    if (f.steps.empty()) return kExitNoAnswer;
    return plot_failure.empty() ? 0 : kExitPlotFailed;
  }

 private:
  /// The options of the confidence frontier, as `plan --confidence` takes them.
  void add_confidence_options() {
    subcommand_->add_option("--confidence", confidence_,
                            "the frontier of confidence plans: at each of the COUNT deadlines of --deadlines FROM:TO:COUNT "
                            "(COUNT from 2 to " + std::to_string(kMaxConfidenceDeadlines) +
                                "), the cheapest plan shown to meet it under spot revocations with at least this probability, "
                                "e.g. 0.9 (as plan --confidence)")
        ->check(open_range(0, 1));
    subcommand_->add_option("--tolerance", tolerance_,
                            "with --confidence: opt in to accepting a plan shown to reach only the level minus this (default 0)")
        ->default_str("0")
        ->check(CLI::Range(0.0, 1.0));
    subcommand_->add_option("--error-rate", error_rate_,
                            "with --confidence: the probability that any decision of one deadline's search is wrong")
        ->default_str("0.05")
        ->check(open_range(0, 1));
    subcommand_->add_option("--max-scenarios", max_scenarios_,
                            "with --confidence: at most this many Monte Carlo scenarios per candidate plan")
        ->default_str("200000")
        ->check(CLI::Range(1, kMaxScenarios));
    subcommand_->add_option("--replacement", replacement_text_,
                            "with --confidence: after a revocation, none (the survivors finish) or same-type (one instance of "
                            "the lost type is requested again, in the same pool)")
        ->default_str("none");
    add_duration_option(*subcommand_, "--join-delay", join_delay_s_,
                        "with --confidence: from an instance being obtained to it training (0 allowed)", ZeroDuration::allowed)
        ->default_str("2m");
    subcommand_->add_option("--seed", seed_, "with --confidence: random seed (a whole number >= 0), the same at every deadline")
        ->default_str("1")
        ->check(non_negative_whole_number());
    interruption_.add_to(*subcommand_);
    revocations_.add_to(*subcommand_);
    add_progress_options(*subcommand_, progress_mode_);
  }

  /// Without --confidence, the options that only it uses are refused, naming them.
  void refuse_confidence_only_options() const {
    std::string given;
    for (const char* name : {"--tolerance", "--error-rate", "--max-scenarios", "--replacement", "--join-delay", "--seed", "--hazard",
                             "--fallback-band", "--fallback-hazard", "--weibull-shape", "--revocations", "--progress", "--no-progress"}) {
      if (subcommand_->count(name) > 0) given += (given.empty() ? "" : ", ") + std::string(name);
    }
    if (!given.empty()) {
      throw usage_error(given + ": only with --confidence (the frontier of confidence plans); without it frontier gives the "
                                "deterministic staircase");
    }
  }

  /// The stale-price warnings `catalog show` gives (price_age.hpp), for every type of the catalog.
  void warn_stale_prices(const PerformanceModel& model) const {
    for (const std::string& stale : price_age_.warnings(model.catalog())) warn(stale);
  }

  /// --step goes with --format json alone: it prints one plan document.
  void refuse_with_step() const {
    if (confidence_) {
      throw usage_error("--step: a confidence frontier's samples are not plan documents; plan the deadline you want with "
                        "spotdnn plan --confidence C --deadline D --format json");
    }
    if (format_ != OutputFormat::json) {
      throw usage_error("--step prints a step's plan document: add --format json (the table numbers the steps)");
    }
    if (!plot_path_.empty()) throw usage_error("--step prints one step's plan document; draw the frontier without --step");
  }

  /// --step N outside the steps of `f` (when it has any) is bad input naming their range.
  void check_step(const Frontier& f) const {
    const std::size_t count = f.steps.size();
    if (count > 0 && (*step_ < 1 || std::uint64_t(*step_) > count)) {
      throw usage_error("--step = " + std::to_string(*step_) + ": the frontier has steps " +
                        (count == 1 ? std::string("1 (it has one step)") : "1 to " + std::to_string(count)) +
                        ", numbered by increasing deadline as its table numbers them");
    }
  }

  /// `frontier --step N --format json`: step N's plan document (frontier_step_document), exit 0 (N is
  /// checked by check_step); a frontier without steps prints the frontier document (its status and
  /// message say why) and exits 3.
  int print_step(std::ostream& out, const PerformanceModel& model, const ZoneFrontier& zoned) const {
    const Frontier& f = zoned.frontier;
    if (f.steps.empty()) {
      out << frontier_json(model, zoned).dump(2) << '\n';
      return kExitNoAnswer;
    }
    const std::size_t i = std::size_t(*step_ - 1);
    const PerformanceModel& region = zoned.regions.empty() ? model : models_[zoned.step_models[i]];
    io::Json document = io::frontier_step_document(f.steps[i], model_in_zone(region, zoned.step_zones[i]), zoned.step_zones[i]);
    transfer_.add_keys(document, zoned.step_extra_usd[i], f.steps[i].plan.cost_usd);
    out << document.dump(2) << '\n';
    return 0;
  }

  /// The frontier document (io::frontier_document); on a catalog with zone prices each step also has its
  /// `zone` and its plan document is priced there, `zone` at the top is the pinned zone (null when each
  /// step has its own) and `zones` lists the zones searched. Across regions each step also has its
  /// `region` and its plan document is that region's, and `regions` lists the regions searched.
  /// With --data-region the document also has data_region, dataset_gb and transfer_usd_per_gb, and
  /// each step its transfer_cost_usd and total_cost_usd (cost + transfer).
  [[nodiscard]] io::Json frontier_json(const PerformanceModel& model, const ZoneFrontier& zoned) const {
    io::Json j = zoned.regions.empty() ? one_region_json(model, zoned) : regions_json(zoned);
    if (!transfer_.given) return j;
    transfer_.add_option_keys(j);
    io::Json& steps = j["steps"];
    for (std::size_t i = 0; i < zoned.frontier.steps.size() && i < steps.size(); ++i) {
      transfer_.add_cost_keys(steps[i], zoned.step_extra_usd[i], zoned.frontier.steps[i].plan.cost_usd);
    }
    return j;
  }

  /// The frontier document of one region (frontier_json without the transfer keys).
  [[nodiscard]] io::Json one_region_json(const PerformanceModel& model, const ZoneFrontier& zoned) const {
    const std::string top = zoned.pinned ? zoned.zones.front() : std::string();
    io::Json j = io::frontier_document(zoned.frontier, model_in_zone(model, top), top);
    if (zoned.zones.empty()) return j;
    io::Json& steps = j["steps"];
    for (std::size_t i = 0; i < zoned.frontier.steps.size() && i < steps.size(); ++i) {
      const std::string& zone = zoned.step_zones[i];
      steps[i]["zone"] = zone;
      if (!zoned.pinned) steps[i]["plan"] = io::frontier_step_document(zoned.frontier.steps[i], model_in_zone(model, zone), zone);
    }
    j["zones"] = zoned.zones;
    return j;
  }

  /// The frontier document across regions: each step's `region`, `zone` (when searched) and plan document
  /// priced in its region and zone; `zone` at the top the pinned zone (else null), `regions` and `zones`.
  [[nodiscard]] io::Json regions_json(const ZoneFrontier& zoned) const {
    const Frontier& f = zoned.frontier;
    io::Json j = io::frontier_document(f, models_[zoned.step_models.empty() ? 0 : zoned.step_models.front()],
                                       zoned.pinned ? zone_ : std::string());
    io::Json& steps = j["steps"];
    for (std::size_t i = 0; i < f.steps.size() && i < steps.size(); ++i) {
      const std::string& zone = zoned.step_zones[i];
      steps[i]["region"] = zoned.step_regions[i];
      if (!zoned.zones.empty()) steps[i]["zone"] = zone;
      steps[i]["plan"] = io::frontier_step_document(f.steps[i], model_in_zone(models_[zoned.step_models[i]], zone), zone);
    }
    j["regions"] = zoned.regions;
    if (!zoned.zones.empty()) j["zones"] = zoned.zones;
    j["region_choice"] = zoned.note;
    return j;
  }

  /// io::frontier_csv, with the columns `zone` (on a catalog with zone prices) and `placement_scores`
  /// (on one with Spot Placement Scores: placement_scores_csv_text) after the others.
  /// Across regions a `region` column follows, and the scores are those of each step's region.
  void print_csv(std::ostream& out, const Catalog& catalog, const ZoneFrontier& zoned) const {
    const std::string text = io::frontier_csv(zoned.frontier);
    const bool regions = !zoned.regions.empty();
    const bool zones = !zoned.zones.empty(), scores = regions ? any_placement_scores() : !catalog.placement_scores.empty();
    if (!zones && !scores && !regions && !transfer_.given) {
      out << text;
      return;
    }
    std::size_t at = 0;
    for (std::size_t row = 0; at < text.size(); ++row) {
      const std::size_t end = text.find('\n', at);
      out << text.substr(at, end - at);
      if (row == 0) {
        if (zones) out << ",zone";
        if (scores) out << ",placement_scores";
        if (regions) out << ",region";
        for (const auto& column : transfer_.csv_columns(0, 0.0)) out << ',' << column.first;
      } else {
        const std::string& zone = zoned.step_zones[row - 1];
        const Catalog& priced = regions ? models_[zoned.step_models[row - 1]].catalog() : catalog;
        if (zones) out << ',' << csv_field(zone);
        if (scores) out << ',' << csv_field(placement_scores_csv_text(priced, zone, zoned.frontier.steps[row - 1].plan.cluster));
        if (regions) out << ',' << csv_field(zoned.step_regions[row - 1]);
        for (const auto& column : transfer_.csv_columns(zoned.step_extra_usd[row - 1], zoned.frontier.steps[row - 1].plan.cost_usd)) {
          out << ',' << csv_field(column.second);
        }
      }
      out << '\n';
      at = end == std::string::npos ? text.size() : end + 1;
    }
  }

  /// Whether any catalog holds Spot Placement Scores.
  [[nodiscard]] bool any_placement_scores() const {
    return std::any_of(models_.begin(), models_.end(), [](const PerformanceModel& m) { return !m.catalog().placement_scores.empty(); });
  }

  int run_with_confidence(std::ostream& out, const FrontierOptions& options) {
    if (!(*confidence_ > 0 && *confidence_ < 1)) {
      throw usage_error("--confidence = " + detail::format_number(*confidence_) + ": expected a probability between 0 and 1, both excluded");
    }
    if (samples_ == 0) {
      throw usage_error("--deadlines = " + detail::quoted(deadlines_text_) + ": with --confidence give FROM:TO:COUNT, COUNT from 2 to " +
                        std::to_string(kMaxConfidenceDeadlines) + " (each deadline is a whole confidence search)");
    }
    if (samples_ > kMaxConfidenceDeadlines) {
      throw usage_error("--deadlines COUNT = " + std::to_string(samples_) + ": at most " + std::to_string(kMaxConfidenceDeadlines) +
                        " deadlines with --confidence (each is a whole confidence search)");
    }
    ConfidencePlanOptions c;
    c.confidence = *confidence_;
    c.tolerance = tolerance_;
    c.error_rate = error_rate_;
    c.max_scenarios = max_scenarios_;
    c.initial_scenarios = std::min(c.initial_scenarios, max_scenarios_);
    c.plan = options.plan;
    c.interruption = interruption_.options();
    c.simulate.seed = seed_;
    c.simulate.threads = 0;
    c.simulate.join_delay_s = join_delay_s_;
    if (replacement_text_ == "same-type") {
      c.simulate.replacement = Replacement::same_type;
    } else if (replacement_text_ != "none") {
      throw usage_error("--replacement = " + detail::quoted(replacement_text_) + ": expected none or same-type");
    }
    const std::shared_ptr<const RevocationModel> revocations = revocations_.load();
    // The deterministic staircase (each step in its cheapest zone and region, as frontier gives it): checks
    // the range (FROM < TO) and is drawn beside the points.
    const Frontier f = region_frontier(models_, target_loss_, options, region_, zone_).frontier;

    std::vector<ConfidenceFrontierSample> samples;
    ProgressLine progress(progress_mode_);
    const ProgressCallback report = progress.callback();
    detail::report(report, "confidence frontier", "deadlines", 0, samples_);
    for (int i = 0; i < samples_; ++i) {
      Slo slo;
      slo.target_loss = target_loss_;
      slo.deadline_s = sample_deadline(options, i);
      RegionChoice<ConfidencePlanResult> choice = choose_confidence_plan(models_, slo, c, revocations, region_, zone_);
      samples.push_back({slo.deadline_s, std::move(choice.result), choice.region, choice.zone, choice.catalog_index});
      detail::report(report, "confidence frontier", "deadlines", i + 1, samples_);
    }
    // Once every deadline is answered: bad input stays one line on stderr.
    if (models_.size() == 1) {
      warn_stale_prices(model_in_zone(models_.front(), zone_));
    } else {
      for (const PerformanceModel& m : models_) {
        for (const std::string& stale : price_age_.warnings(m.catalog())) warn("region " + m.catalog().region + ": " + stale);
      }
    }
    const CalibrationNote calibration = confidence_calibration(samples, revocations, c.interruption);

    const bool any_plan = std::any_of(samples.begin(), samples.end(), [](const ConfidenceFrontierSample& s) { return s.result.has_plan(); });
    const bool any_point = any_plan || !f.steps.empty() ||
                           std::any_of(samples.begin(), samples.end(),
                                       [](const ConfidenceFrontierSample& s) { return s.result.deterministic.has_plan(); });
    std::string plot_failure;
    if (!plot_path_.empty() && any_point) {
      plot_failure = draw_plot(
          confidence_frontier_gnuplot_script(f, samples, c.confidence, calibration.calibrated, *plot_format_of(plot_path_)), plot_path_,
          "--plot");
      if (!plot_failure.empty()) warn(plot_failed_warning(plot_failure));
    }
    const bool plotted = !plot_path_.empty() && any_point && plot_failure.empty();
    if (format_ == OutputFormat::json) {
      io::Json document = confidence_document(models_.front(), samples, calibration, plotted);
      if (!plot_failure.empty()) {
        document["plot"] = nullptr;
        document["plot_error"] = plot_failure;
      }
      out << document.dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      print_confidence_csv(out, samples, calibration);
    } else {
      print_confidence_table(out, models_.front(), samples, calibration, plotted, plot_failure);
    }
    if (!any_plan) return kExitNoAnswer;
    return plot_failure.empty() ? 0 : kExitPlotFailed;
  }

  /// What the probabilities rest on: in each (region, zone) some deadline's plan lives in, the types of the
  /// plans shown there (each deadline's confidence plan, else its deterministic one), fitted or
  /// constant-rate; calibrated when every one is. Fitted pools spread over zones are warned about once.
  [[nodiscard]] CalibrationNote confidence_calibration(const std::vector<ConfidenceFrontierSample>& samples,
                                                       const std::shared_ptr<const RevocationModel>& revocations,
                                                       const InterruptionOptions& interruption) const {
    std::vector<std::pair<std::size_t, std::string>> places;
    for (const ConfidenceFrontierSample& s : samples) {
      if (std::find(places.begin(), places.end(), std::make_pair(s.model, s.zone)) == places.end()) places.emplace_back(s.model, s.zone);
    }
    CalibrationNote note;
    std::vector<std::string> warned;
    for (std::size_t p = 0; p < places.size(); ++p) {
      const PerformanceModel model = model_in_zone(models_[places[p].first], places[p].second);
      std::vector<bool> in_use(model.worker_types().size(), false);
      for (const ConfidenceFrontierSample& s : samples) {
        if (s.model != places[p].first || s.zone != places[p].second) continue;
        const Cluster& shown = s.result.has_plan() ? s.result.cluster : s.result.deterministic.cluster;
        for (std::size_t k = 0; k < in_use.size(); ++k) in_use[k] = in_use[k] || shown.count(model.worker_types()[k].name) > 0;
      }
      std::vector<std::string> spread;
      const FittedRevocations fitted = fitted_revocations(revocations, model, places[p].second, in_use, &spread);
      for (const std::string& w : spread) {
        if (std::find(warned.begin(), warned.end(), w) == warned.end()) warned.push_back(w);
      }
      const CalibrationNote here = calibration_note(fitted, model, InterruptionModel(model, interruption), in_use, revocations_.path);
      if (p == 0) {
        note = here;
        continue;
      }
      note.calibrated = note.calibrated && here.calibrated;
      for (const std::string& t : here.uncalibrated_types) {
        if (std::find(note.uncalibrated_types.begin(), note.uncalibrated_types.end(), t) == note.uncalibrated_types.end()) {
          note.uncalibrated_types.push_back(t);
        }
      }
      for (const std::string& a : here.assumptions) {
        if (std::find(note.assumptions.begin(), note.assumptions.end(), a) == note.assumptions.end()) note.assumptions.push_back(a);
      }
    }
    for (const std::string& w : warned) warn(w);
    return note;
  }

  /// Whether the confidence outputs name each deadline's zone (a catalog with zone prices, or --zone) and
  /// region (several catalogs).
  [[nodiscard]] bool confidence_zones() const {
    if (!zone_.empty()) return true;
    return std::any_of(models_.begin(), models_.end(), [](const PerformanceModel& m) { return !catalog_zones(m.catalog()).empty(); });
  }
  [[nodiscard]] bool confidence_regions() const { return models_.size() > 1; }

  /// The document of kind "spotdnn.confidence_frontier", schema_version 1; each sample names its `zone`
  /// (with zone prices) and `region` (several catalogs), and `regions` lists the regions searched.
  [[nodiscard]] io::Json confidence_document(const PerformanceModel& model, const std::vector<ConfidenceFrontierSample>& samples,
                                             const CalibrationNote& calibration, bool plotted) const {
    io::Json j = io::Json::object();
    j["kind"] = "spotdnn.confidence_frontier";
    j["schema_version"] = 1;
    j["workload"] = model.workload().name;
    j["region"] = model.catalog().region;
    j["zone"] = zone_.empty() ? io::Json(nullptr) : io::Json(zone_);
    if (confidence_regions()) {
      j["region"] = region_.empty() ? io::Json(nullptr) : io::Json(region_);
      std::vector<std::string> regions;
      for (const PerformanceModel& m : models_) regions.push_back(m.catalog().region);
      std::sort(regions.begin(), regions.end());
      j["regions"] = regions;
    }
    j["target_loss"] = target_loss_;
    j["confidence"] = *confidence_;
    j["tolerance"] = tolerance_;
    j["error_rate"] = error_rate_;
    j["max_scenarios"] = max_scenarios_;
    j["seed"] = seed_;
    j["replacement"] = replacement_text_;
    j["join_delay_s"] = join_delay_s_;
    j["ps_charged"] = !no_ps_cost_;
    j["samples"] = io::Json::array();
    for (const ConfidenceFrontierSample& s : samples) {
      const ConfidencePlanResult& r = s.result;
      io::Json sample = io::Json::object();
      sample["deadline_s"] = s.deadline_s;
      if (confidence_regions()) sample["region"] = s.region;
      if (confidence_zones()) sample["zone"] = s.zone;
      sample["status"] = std::string(to_string(r.status));
      sample["cluster"] = r.has_plan() ? io::to_json(r.cluster) : io::Json(nullptr);
      sample["cost_usd"] = r.has_plan() ? io::Json(r.prediction.cost_usd) : io::Json(nullptr);
      sample["training_time_s"] = r.has_plan() ? io::Json(r.prediction.training_time_s) : io::Json(nullptr);
      sample["probability_meets_deadline"] =
          r.has_plan() ? io::Json{{"estimate", r.probability.estimate},
                                  {"lower", r.probability.lower},
                                  {"upper", r.probability.upper},
                                  {"trials", r.probability.trials}}
                       : io::Json(nullptr);
      const bool deterministic = r.deterministic.has_plan();
      sample["deterministic_cluster"] = deterministic ? io::to_json(r.deterministic.cluster) : io::Json(nullptr);
      sample["deterministic_cost_usd"] = deterministic ? io::Json(r.deterministic.prediction.cost_usd) : io::Json(nullptr);
      sample["candidates"] = r.candidates;
      sample["candidates_simulated"] = r.candidates_simulated;
      sample["candidates_undecided"] = r.candidates_undecided;
      sample["scenarios_simulated"] = r.scenarios_simulated;
      sample["message"] = r.message;
      j["samples"].push_back(std::move(sample));
    }
    j["calibration"] = calibration.to_json();
    if (plotted) j["plot"] = plot_path_;
    return j;
  }

  /// A header and one row per sampled deadline; a deadline without a confidence plan leaves its columns empty.
  void print_confidence_csv(std::ostream& out, const std::vector<ConfidenceFrontierSample>& samples, const CalibrationNote& calibration) const {
    auto line = [&out](const std::vector<std::string>& fields) {
      for (std::size_t i = 0; i < fields.size(); ++i) out << (i == 0 ? "" : ",") << csv_field(fields[i]);
      out << '\n';
    };
    std::vector<std::string> header = {"deadline_s", "status", "cluster", "workers", "cost_usd", "training_time_s", "probability",
                                       "lower", "upper", "scenarios", "deterministic_cluster", "deterministic_cost_usd", "confidence",
                                       "tolerance", "error_rate", "calibrated"};
    if (confidence_zones()) header.push_back("zone");
    if (confidence_regions()) header.push_back("region");
    line(header);
    for (const ConfidenceFrontierSample& s : samples) {
      const ConfidencePlanResult& r = s.result;
      const bool has = r.has_plan(), deterministic = r.deterministic.has_plan();
      std::vector<std::string> row = {csv_number(s.deadline_s), std::string(to_string(r.status)), has ? csv_cluster(r.cluster) : std::string(),
            has ? std::to_string(r.cluster.total_workers()) : std::string(), has ? csv_number(r.prediction.cost_usd) : std::string(),
            has ? csv_number(r.prediction.training_time_s) : std::string(), has ? csv_number(r.probability.estimate) : std::string(),
            has ? csv_number(r.probability.lower) : std::string(), has ? csv_number(r.probability.upper) : std::string(),
            has ? std::to_string(r.probability.trials) : std::string(),
            deterministic ? csv_cluster(r.deterministic.cluster) : std::string(),
            deterministic ? csv_number(r.deterministic.prediction.cost_usd) : std::string(), csv_number(*confidence_),
            csv_number(tolerance_), csv_number(error_rate_), calibration.calibrated ? "true" : "false"};
      if (confidence_zones()) row.push_back(s.zone);
      if (confidence_regions()) row.push_back(s.region);
      line(row);
    }
  }

  void print_confidence_table(std::ostream& out, const PerformanceModel& model, const std::vector<ConfidenceFrontierSample>& samples,
                              const CalibrationNote& calibration, bool plotted, const std::string& plot_failure) const {
    const double level = *confidence_;
    std::string where = model.catalog().region;
    if (confidence_regions()) {
      std::vector<std::string> regions;
      for (const PerformanceModel& m : models_) regions.push_back(m.catalog().region);
      std::sort(regions.begin(), regions.end());
      where.clear();
      for (const std::string& r : regions) where.append(where.empty() ? "" : ", ").append(r);
    }
    out << fmt::format("spotdnn frontier (confidence {}): {} on {}{}, target loss {}, deadlines {}\n\n", detail::format_number(level),
                       model.workload().name, where, zone_.empty() ? std::string() : " (zone " + zone_ + ")",
                       detail::format_number(target_loss_), deadlines_text_);
    if (confidence_zones() || confidence_regions()) {
      out << "  " << (confidence_regions() ? "region" : "zone") << ": each deadline's plan in the cheapest "
          << (confidence_regions() ? "(region, zone)" : "zone") << " with a plan meeting the level, as plan --confidence chooses it\n\n";
    }
    if (std::all_of(samples.begin(), samples.end(),
                    [](const ConfidenceFrontierSample& s) { return s.result.status == Status::target_met_at_start; })) {
      // Nothing to train at any deadline: said once, as the deterministic frontier says it.
      out << "  " << to_string(Status::target_met_at_start) << ": " << samples.front().result.message << '\n';
      return;
    }
    std::vector<std::string> headers = {"deadline [s]", "confidence plan", "cost without revocations",
                                        "P(meets deadline) [exact interval]", "scenarios", "deterministic cost"};
    const bool zones = confidence_zones(), regions = confidence_regions();
    if (zones) headers.insert(headers.begin() + 1, "zone");
    if (regions) headers.insert(headers.begin() + 1, "region");
    const auto where_cells = [&](std::vector<std::string> row, const ConfidenceFrontierSample& s) {
      if (zones) row.insert(row.begin() + 1, s.zone.empty() ? "-" : s.zone);
      if (regions) row.insert(row.begin() + 1, s.region);
      return row;
    };
    TextTable grid(headers, 2 + (zones ? 1 : 0) + (regions ? 1 : 0));
    std::size_t simulated = 0, undecided = 0;
    std::int64_t scenarios = 0;
    for (const ConfidenceFrontierSample& s : samples) {
      const ConfidencePlanResult& r = s.result;
      simulated += r.candidates_simulated;
      undecided += r.candidates_undecided;
      scenarios += r.scenarios_simulated;
      const std::string deterministic = r.deterministic.has_plan() ? format_usd(r.deterministic.prediction.cost_usd) : "infeasible";
      if (r.has_plan()) {
        grid.add_row(where_cells({fmt::format("{:.1f}", s.deadline_s), r.cluster.to_string(), format_usd(r.prediction.cost_usd),
                                  fmt::format("{:.4f} [{:.4f}, {:.4f}]", r.probability.estimate, r.probability.lower, r.probability.upper),
                                  std::to_string(r.probability.trials), deterministic},
                                 s));
      } else {
        grid.add_row(where_cells({fmt::format("{:.1f}", s.deadline_s), "none", "-", "-", "-", deterministic}, s));
      }
    }
    grid.print(out);
    out << fmt::format(
        "\n  level {0}, tolerance {1}: at each deadline the cheapest plan whose exact lower bound exceeds {2} is accepted. Error\n"
        "  rate {3} per deadline (each is its own search): with probability >= {4} every decision of one deadline's search is\n"
        "  right; for all {5} deadlines together, with probability >= {6} (union bound).\n",
        detail::format_number(level), detail::format_number(tolerance_), detail::format_number(level - tolerance_),
        detail::format_number(error_rate_), detail::format_number(1 - error_rate_), samples.size(),
        detail::format_number(std::max(0.0, 1 - double(samples.size()) * error_rate_)));
    out << fmt::format("  {} candidate plans simulated over the {} deadlines, {} undecided at the cap of {} scenarios; {} scenarios in all\n"
                       "  (a row per deadline: its accepted plan; plan --confidence --deadline D lists every plan simulated at D)\n",
                       simulated, samples.size(), undecided, max_scenarios_, scenarios);
    // Why a deadline has no plan, and where cheaper plans were passed over undecided (the guarantee says
    // nothing about those).
    for (const ConfidenceFrontierSample& s : samples) {
      const ConfidencePlanResult& r = s.result;
      if (!r.has_plan()) {
        out << fmt::format("  deadline {:.1f} s: {}\n", s.deadline_s, r.message);
      } else if (r.candidates_undecided > r.candidates_work_limited) {
        const std::size_t capped = r.candidates_undecided - r.candidates_work_limited;
        out << fmt::format("  deadline {:.1f} s: {} cheaper {} undecided at the scenario cap and passed over (P may reach {}; "
                           "raise --max-scenarios or --tolerance to decide)\n",
                           s.deadline_s, capped, capped == 1 ? "plan stayed" : "plans stayed", detail::format_number(level));
      }
      if (r.candidates_work_limited > 0) {
        out << fmt::format("  deadline {:.1f} s: {} cheaper {} undecided at the simulation work limit and passed over "
                           "(P may reach {}; raise --tolerance to decide with fewer scenarios)\n",
                           s.deadline_s, r.candidates_work_limited,
                           r.candidates_work_limited == 1 ? "plan stayed" : "plans stayed", detail::format_number(level));
      }
    }
    out << "  " << calibration.line() << '\n';
    for (const std::string& a : calibration.assumptions) out << "    assumes: " << a << '\n';
    print_plot_line(out, plotted, plot_failure);
  }

  /// "plot: FILE" when the plot was written, "plot: not written: WHY" when it failed, nothing without --plot.
  void print_plot_line(std::ostream& out, bool plotted, const std::string& plot_failure) const {
    if (plotted) out << "  plot: " << plot_path_ << '\n';
    if (!plot_failure.empty()) out << "  plot: not written: " << plot_failure << '\n';
  }

  void parse_deadlines(FrontierOptions& options) {
    const std::string& t = deadlines_text_;
    const std::string expected = "--deadlines = " + detail::quoted(t) +
                                 ": expected FROM:TO or FROM:TO:COUNT, FROM and TO durations (600:7200, 40m:2h:10)";
    const auto first = t.find(':');
    if (first == std::string::npos) throw usage_error(expected);
    const auto second = t.find(':', first + 1);
    const std::string from = t.substr(0, first);
    const std::string to = t.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
    const std::optional<double> from_s = parse_duration_s(from), to_s = parse_duration_s(to);
    if (!from_s || !to_s) {
      throw usage_error(expected + "; " + detail::quoted(!from_s ? from : to) + " is not a duration: " + std::string(kDurationHelp));
    }
    options.min_deadline_s = *from_s;
    options.max_deadline_s = *to_s;
    if (second != std::string::npos) {
      const std::string count = t.substr(second + 1);
      long long parsed = 0;
      const auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), parsed);
      if (count.empty() || error != std::errc() || end != count.data() + count.size() || parsed < 2) {
        throw usage_error(expected + "; COUNT must be a whole number >= 2");
      }
      if (parsed > kMaxDeadlineSamples) {
        throw usage_error("--deadlines COUNT = " + std::to_string(parsed) + ": at most " + std::to_string(kMaxDeadlineSamples) +
                          " deadlines");
      }
      samples_ = int(parsed);
    }
  }

  /// The i-th of samples_ evenly spaced deadlines from min to max (both included).
  [[nodiscard]] double sample_deadline(const FrontierOptions& o, int i) const {
    return o.min_deadline_s + (o.max_deadline_s - o.min_deadline_s) * i / (samples_ - 1);
  }

  /// Draws the staircase and the sampled deadlines to plot_path_ (gnuplot without a shell; nothing is
  /// written if it fails). Returns why it failed, empty when the plot was written.
  [[nodiscard]] std::string plot(const Frontier& f, const FrontierOptions& options) const {
    std::vector<std::pair<double, double>> samples;
    for (int i = 0; i < samples_; ++i) {
      const double d = sample_deadline(options, i);
      if (const FrontierStep* s = f.at(d)) samples.emplace_back(d, s->plan.cost_usd);
    }
    return draw_plot(frontier_gnuplot_script(f, *plot_format_of(plot_path_), samples), plot_path_, "--plot");
  }

  /// The table; on a catalog with zone prices a `zone` column (and a line saying how the zones were
  /// searched), on one with Spot Placement Scores a `placement score` column (each step's types in its zone).
  void print_table(std::ostream& out, const PerformanceModel& model, const ZoneFrontier& zoned, const FrontierOptions& options,
                   bool plotted, const std::string& plot_failure) const {
    const Frontier& f = zoned.frontier;
    const bool regions = !zoned.regions.empty();
    std::string where = model.catalog().region;
    if (regions) {
      where.clear();
      for (const std::string& r : zoned.regions) where.append(where.empty() ? "" : ", ").append(r);
    }
    out << fmt::format("spotdnn frontier: {} on {}{}, target loss {}, deadlines {}\n\n", model.workload().name, where,
                       zone_.empty() ? std::string() : " (zone " + zone_ + ")", detail::format_number(f.target_loss), deadlines_text_);
    if (regions) {
      out << "  region: " << zoned.note << "\n\n";
    } else if (!zoned.zones.empty()) {
      out << "  zone: " << zoned.note << "\n\n";
    }
    if (transfer_.given) {
      out << fmt::format("  data transfer: {} GB read once from {} at {}/GB, {} in any other region; each step is the cheapest "
                         "counting it (total = cost + transfer)\n\n",
                         detail::format_number(transfer_.dataset_gb), transfer_.data_region, format_usd(transfer_.usd_per_gb),
                         format_usd(transfer_.dataset_gb * transfer_.usd_per_gb));
    }
    if (f.steps.empty()) {
      out << "  " << to_string(f.status) << ": " << f.message << '\n';
      return;
    }
    const bool zones = !zoned.zones.empty(), scores = regions ? any_placement_scores() : !model.catalog().placement_scores.empty();
    std::vector<std::string> headers = {"step", "deadline from [s]", "to [s]", "training time", "cost", "workers"};
    if (transfer_.given) headers.insert(headers.begin() + 5, {"transfer", "total"});
    if (regions) headers.push_back("region");
    if (zones) headers.push_back("zone");
    headers.push_back("plan");
    if (scores) headers.push_back("placement score");
    const auto extra = [&](std::vector<std::string> row, std::size_t step, const Cluster& cluster) {
      if (transfer_.given) {
        const double transfer = zoned.step_extra_usd[step];
        row.insert(row.begin() + 5, {format_usd(transfer), format_usd(f.steps[step].plan.cost_usd + transfer)});
      }
      if (regions) row.insert(row.end() - 1, zoned.step_regions[step]);
      if (zones) row.insert(row.end() - 1, zoned.step_zones[step]);
      const Catalog& priced = regions ? models_[zoned.step_models[step]].catalog() : model.catalog();
      if (scores) row.push_back(placement_scores_cell(priced, zoned.step_zones[step], cluster));
      return row;
    };
    TextTable steps(headers, 0);
    for (std::size_t i = 0; i < f.steps.size(); ++i) {
      const FrontierStep& s = f.steps[i];
      steps.add_row(extra({std::to_string(i + 1), fmt::format("{:.1f}", s.from_deadline_s), fmt::format("{:.1f}", s.to_deadline_s),
                           format_duration(s.plan.training_time_s), format_usd(s.plan.cost_usd), std::to_string(s.plan.workers),
                           io::plan_label(s.plan, ',')},
                          i, s.plan.cluster));
    }
    steps.print(out);
    if (samples_ > 0) {
      std::vector<std::string> grid_headers = {"deadline [s]", "cost"};
      if (transfer_.given) grid_headers.push_back("total");
      if (regions) grid_headers.push_back("region");
      if (zones) grid_headers.push_back("zone");
      grid_headers.push_back("plan");
      TextTable grid(grid_headers);
      for (int i = 0; i < samples_; ++i) {
        const double d = sample_deadline(options, i);
        const FrontierStep* s = f.at(d);
        std::vector<std::string> row = {fmt::format("{:.1f}", d), s ? format_usd(s->plan.cost_usd) : "infeasible"};
        if (transfer_.given) row.push_back(s ? format_usd(s->plan.cost_usd + zoned.step_extra_usd[std::size_t(s - f.steps.data())]) : "-");
        if (regions) row.push_back(s ? zoned.step_regions[std::size_t(s - f.steps.data())] : "-");
        if (zones) row.push_back(s ? zoned.step_zones[std::size_t(s - f.steps.data())] : "-");
        row.push_back(s ? io::plan_label(s->plan, ',') : "-");
        grid.add_row(row);
      }
      out << '\n';
      grid.print(out);
    }
    out << '\n' << "  " << f.message << '\n';
    if (scores) out << "  placement score: AWS Spot Placement Scores, 1 to 10, of each step's types in its zone\n";
    out << "  to launch step N: spotdnn launch --plan F.json --step N, F.json this command's --format json output\n";
    print_plot_line(out, plotted, plot_failure);
  }

  double target_loss_ = 0;
  std::string deadlines_text_ = "600:7200";
  int samples_ = 0;
  bool no_ps_cost_ = false;
  std::string plot_path_;
  OutputFormat format_ = OutputFormat::table;
  ModelOptions model_;
  std::vector<PerformanceModel> models_;  ///< one per --catalog (set by run)
  std::string region_;
  std::string zone_;
  std::optional<std::int64_t> step_;
  PriceAgeOptions price_age_;
  TransferOptions transfer_;  ///< --data-region, --dataset-gb, --transfer-usd-per-gb
  // --confidence and the options only it uses.
  std::optional<double> confidence_;
  double tolerance_ = 0;
  double error_rate_ = 0.05;
  int max_scenarios_ = 200000;
  std::uint64_t seed_ = 1;
  std::string replacement_text_ = "none";
  double join_delay_s_ = 120;
  InterruptionCliOptions interruption_;
  RevocationsCliOption revocations_;
  ProgressMode progress_mode_ = ProgressMode::automatic;
};

}  // namespace spotdnn::cli
