#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/simulate_command.hpp `spotdnn simulate`: Monte Carlo of one cluster under spot revocations:
/// the probability of meeting the deadline, time and cost percentiles, and (--plot) a histogram of the
/// finish times drawn with gnuplot. A plot that fails never loses the answer: it is printed, the failure
/// is a warning and the exit code is 4 (gnuplot.hpp).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/json.hpp>
#include <spotdnn/io/plan_document.hpp>
#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/model/prediction.hpp>
#include <spotdnn/revocation/checkpoint.hpp>
#include <spotdnn/revocation/interruption.hpp>
#include <spotdnn/revocation/replan.hpp>
#include <spotdnn/revocation/simulate.hpp>

#include "command.hpp"
#include "csv_output.hpp"
#include "gnuplot.hpp"
#include "interruption_options.hpp"
#include "options.hpp"
#include "plot_script.hpp"
#include "progress_line.hpp"
#include "revocations_option.hpp"
#include "table.hpp"
#include "zone_option.hpp"

namespace spotdnn::cli {

/// A gnuplot script drawing the finish times of `outcomes` in `format`: a histogram of the scenarios that
/// reached the target loss (blue up to the deadline, red after it), the deadline as a dashed vertical line
/// in the key, and the scenarios that never finished (every worker lost, or still running at the
/// horizon) as a separate grey bar labelled "never finished" at the right, with its count in the key
/// even when it is zero. Time is in s, min or h by the range. `title` is user text (type names).
inline std::string finish_time_histogram_script(const std::vector<ScenarioOutcome>& outcomes, double deadline_s,
                                                double horizon_factor, const std::string& title, PlotFormat format) {
  std::vector<double> times;
  std::size_t never = 0;
  for (const ScenarioOutcome& o : outcomes) {
    if (o.finished) {
      times.push_back(o.time_s);
    } else {
      ++never;
    }
  }
  double lo = deadline_s, hi = deadline_s;
  for (double t : times) lo = std::min(lo, t), hi = std::max(hi, t);
  const TimeUnit unit = time_unit_for(hi);
  // About 50 bins and 8 tics of a round width (1, 2 or 5 times a power of ten, in the axis unit) over the
  // finish times and the deadline.
  const double span = hi > lo ? (hi - lo) / unit.seconds : std::max(0.1 * hi / unit.seconds, 1e-6);
  auto round_step = [](double rough) {
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    return (rough / power <= 1 ? 1 : rough / power <= 2 ? 2 : rough / power <= 5 ? 5 : 10) * power;
  };
  const double width = round_step(span / 50), tic = round_step(span / 8);
  std::map<long long, std::pair<std::size_t, std::size_t>> bins;  // bin -> (on time, late)
  std::size_t on_time = 0, late = 0;
  for (double t : times) {
    auto& bin = bins[static_cast<long long>(std::floor(t / unit.seconds / width))];
    if (t <= deadline_s) {
      ++bin.first;
      ++on_time;
    } else {
      ++bin.second;
      ++late;
    }
  }
  double x_lo = lo / unit.seconds, x_hi = hi / unit.seconds;
  if (!bins.empty()) {
    x_lo = std::min(x_lo, double(bins.begin()->first) * width);
    x_hi = std::max(x_hi, double(bins.rbegin()->first + 1) * width);
  }
  const double pad = std::max(0.04 * (x_hi - x_lo), width);
  const double never_x = x_hi + 3 * pad;  // the separate bar, after a gap
  std::size_t top = never;
  for (const auto& [bin, counts] : bins) top = std::max(top, counts.first + counts.second);
  const double total = double(outcomes.size());
  auto share = [total](std::size_t n) { return total > 0 ? fmt::format("{:.1f}%", 100.0 * double(n) / total) : std::string("-"); };

  std::string s = plot_preamble(format, 1000, 600);
  s += "set title " + gnuplot_string(title) + " noenhanced\n";
  s += "set xlabel " + gnuplot_string("time to reach the target loss [" + unit.name + "]") + " noenhanced\n";
  s += "set ylabel 'scenarios per bin'\n";
  s += "set style fill solid 0.85 noborder\n";
  s += "set boxwidth " + plot_number(width) + " absolute\n";
  s += "set xrange [" + plot_number(x_lo - pad) + ":" + plot_number(never_x + pad) + "]\n";
  s += "set yrange [0:" + plot_number(std::max<double>(1, double(top)) * 1.12) + "]\n";
  s += "set format y '%.0f'\n";
  s += "set xtics " + plot_number(std::ceil((x_lo - pad) / tic) * tic) + "," + plot_number(tic) + "," + plot_number(x_hi + pad) + "\n";
  s += "set xtics add ('never' " + plot_number(never_x) + ")\n";
  s += "set arrow 1 from " + plot_number(x_hi + 1.5 * pad) + ", graph 0 to " + plot_number(x_hi + 1.5 * pad) +
       ", graph 1 nohead dt 3 lc rgb '#999999'\n";  // the time axis ends here; the "never" bar is no time
  s += "set label 1 " + gnuplot_string("deadline " + time_label(deadline_s)) + " at " + plot_number(deadline_s / unit.seconds) +
       ", graph 1 left offset 0.5,-1 noenhanced front\n";
  s += "$bins << EOD\n";
  for (const auto& [bin, counts] : bins) {
    s += plot_number((double(bin) + 0.5) * width) + " " + std::to_string(counts.first) + " " + std::to_string(counts.second) + "\n";
  }
  if (bins.empty()) s += plot_number(x_lo) + " 0 0\n";
  s += "EOD\n$never << EOD\n" + plot_number(never_x) + " " + std::to_string(never) + "\nEOD\n";
  s += "$deadline << EOD\n" + plot_number(deadline_s / unit.seconds) + " 0\n" + plot_number(deadline_s / unit.seconds) + " " +
       plot_number(std::max<double>(1, double(top)) * 1.12) + "\nEOD\n";
  s += "plot $bins using 1:($2+$3) with boxes lc rgb '#d62728' title " +
       gnuplot_string(fmt::format("finished after the deadline: {} ({})", late, share(late))) + " noenhanced, \\\n";
  s += "     $bins using 1:2 with boxes lc rgb '#1f77b4' title " +
       gnuplot_string(fmt::format("finished by the deadline: {} ({})", on_time, share(on_time))) + " noenhanced, \\\n";
  s += "     $never using 1:2:(" + plot_number(std::max(width, pad)) +
       ") with boxes lc rgb '#7f7f7f' title " +
       gnuplot_string(fmt::format("never finished: {} ({}; lost every worker or ran past {}x the deadline)", never, share(never),
                                  detail::format_readable(horizon_factor))) +
       " noenhanced, \\\n";
  s += "     $deadline using 1:2 with lines dt 2 lw 2 lc rgb '#000000' title " +
       gnuplot_string("deadline (" + time_label(deadline_s) + ")") + " noenhanced\n";
  return s;
}

class SimulateCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("simulate", "Monte Carlo of one cluster under spot revocations");
    subcommand_->add_option("--cluster", cluster_text_, "workers per type, e.g. p3.2xlarge=2,g3.8xlarge=4")->required();
    subcommand_->add_option("--target-loss", target_loss_, "training loss to reach")->required();
    add_duration_option(*subcommand_, "--deadline", deadline_s_, "deadline: seconds or a duration (2600, 45m, 1h30m)")
        ->required();
    subcommand_->add_option("--scenarios", scenarios_, "Monte Carlo scenarios")
        ->default_str("10000")
        ->check(CLI::Range(1, kMaxScenarios));
    subcommand_->add_option("--seed", seed_, "random seed, a whole number >= 0 (results depend on it only)")
        ->default_str("1")
        ->check(non_negative_whole_number());
    subcommand_->add_option("--replacement", replacement_text_, "after a revocation notice: none, same-type or replan")
        ->default_str("none");
    add_duration_option(*subcommand_, "--join-delay", join_delay_s_, "from request to training for a new instance (0 allowed)",
                        ZeroDuration::allowed)
        ->default_str("2m");
    add_duration_option(*subcommand_, "--notice", notice_s_, "notice before a revocation (0: none)", ZeroDuration::allowed)
        ->default_str("2m");
    subcommand_->add_option("--threads", threads_, "worker threads (0 = all cores; results do not depend on it)")
        ->default_str("0")
        ->check(CLI::Range(0, kMaxThreads));
    add_duration_option(*subcommand_, "--checkpoint-write", checkpoint_write_s_,
                        "time to write a PS checkpoint: also report Young's and Daly's intervals");
    add_plot_option(*subcommand_, plot_path_, "a histogram of the finish times");
    subcommand_->add_option_function<std::string>(
                   "--histogram", [](const std::string&) { throw CLI::ValidationError("--histogram", "is now --plot FILE (.svg, .png or .pdf)"); })
        ->group("");
    add_progress_options(*subcommand_, progress_mode_);
    interruption_.add_to(*subcommand_);
    revocations_.add_to(*subcommand_);
    add_zone_option(*subcommand_, zone_,
                    "price the cluster (and any replacements) in this Availability Zone; with --revocations, draw from "
                    "the fitted pools of this zone");
    model_.add_to(*subcommand_);
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    require_zone_not_empty(*subcommand_, zone_);
    if (!plot_path_.empty()) (void)check_plot_path(plot_path_);  // a bad path is bad input, before any work
    const PerformanceModel model = model_in_zone(model_.load(*this), zone_);
    if (const std::string why = unpinned_zone_warning(model.catalog(), zone_, "pass --zone AZ to price the zone the run is in");
        !why.empty()) {
      warn(why);
    }
    const Cluster cluster = Cluster::parse(cluster_text_);
    const InterruptionModel interruption = interruption_.build(model);
    SimulateOptions options;
    options.scenarios = scenarios_;
    options.seed = seed_;
    options.threads = threads_;
    options.notice_s = notice_s_;
    options.join_delay_s = join_delay_s_;
    options.predict.charge_parameter_server = !no_ps_cost_;
    options.keep_outcomes = !plot_path_.empty();
    const auto replacement = replacement_from_string(replacement_text_);
    if (!replacement) throw usage_error("--replacement: expected none, same-type or replan, got \"" + replacement_text_ + "\"");
    options.replacement = *replacement;
    const std::vector<bool> in_use = detail::types_in_use(model, model.counts_of(cluster), options.replacement);
    std::vector<std::string> spread;
    options.revocations = fitted_revocations(revocations_.load(), model, zone_, in_use, &spread);
    for (const std::string& w : spread) warn(w);
    const CalibrationNote calibration = calibration_note(options.revocations, model, interruption, in_use, revocations_.path);
    if (revocations_.given() && !calibration.calibrated) {
      std::string types;
      for (const std::string& t : calibration.uncalibrated_types) types += (types.empty() ? "" : ", ") + t;
      warn("the revocation model has no pool of " + types + (zone_.empty() ? std::string() : " in " + zone_) +
           ": those use the constant-rate model (uncalibrated)");
    }
    const Replanner replanner(model);
    if (*replacement == Replacement::replan) {
      ReplanOptions replan_options;
      replan_options.join_delay_s = join_delay_s_;
      replan_options.plan.charge_parameter_server = !no_ps_cost_;
      options.replacement_planner = replanner.policy(replan_options);
    }
    ProgressLine progress(progress_mode_);
    options.progress = progress.callback();
    const SimulationResult r = simulate(model, interruption, cluster, target_loss_, deadline_s_, options);
    if (r.status != Status::feasible) throw usage_error(r.message);
    std::optional<CheckpointPlan> checkpoint;
    if (checkpoint_write_s_) {
      // With a fitted model, each fitted type counts at its pools' preemptions per instance-hour (the mean
      // hazard over the trace), the others at their constant rate.
      const std::vector<int> counts = model.counts_of(cluster);
      double per_hour = 0;
      std::vector<int> constant_counts = counts;
      for (std::size_t k = 0; k < counts.size(); ++k) {
        if (counts[k] == 0 || !options.revocations.model || options.revocations.type_pools[k].empty()) continue;
        per_hour += counts[k] * mean_hazard_per_hour(*options.revocations.model, options.revocations.type_pools[k]);
        constant_counts[k] = 0;
      }
      const double constant_mtti_s = interruption.mean_time_to_interruption_s(constant_counts);
      const double mtti_s = per_hour > 0 ? 1.0 / (per_hour / 3600 + (std::isfinite(constant_mtti_s) ? 1.0 / constant_mtti_s : 0.0))
                                         : constant_mtti_s;
      checkpoint = checkpoint_plan(*checkpoint_write_s_, mtti_s);
    }
    // The answer is printed whatever becomes of the plot; a plot that fails is a warning and exit 4.
    std::string plot_failure;
    if (!plot_path_.empty()) {
      plot_failure = draw_plot(finish_time_histogram_script(
                      r.outcomes, deadline_s_, options.horizon_factor,
                      fmt::format("{}: P(finish by {}) = {:.3f} over {} scenarios", cluster.to_string(), time_label(deadline_s_),
                                  r.meets_deadline.estimate, r.scenarios),
                      *plot_format_of(plot_path_)),
                  plot_path_, "--plot");
      if (!plot_failure.empty()) warn(plot_failed_warning(plot_failure));
    }
    if (format_ == OutputFormat::json) {
      io::Json j = io::to_json(r);
      j["zone"] = zone_.empty() ? io::Json(nullptr) : io::Json(zone_);
      io::Json estimated = io::Json::object();
      for (const auto& [type, from] : io::estimated_profiles(cluster, model.workload())) estimated[type] = from;
      j["estimated_profiles"] = std::move(estimated);
      j["interruption"] = io::to_json(interruption);
      j["calibration"] = calibration.to_json();
      if (checkpoint) j["checkpoint"] = io::to_json(*checkpoint);
      if (!plot_path_.empty()) j["plot"] = plot_failure.empty() ? io::Json(plot_path_) : io::Json(nullptr);
      if (!plot_failure.empty()) j["plot_error"] = plot_failure;
      out << j.dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      print_csv(out, r, checkpoint, calibration);
    } else {
      print_table(out, model, interruption, r, checkpoint, calibration, options.revocations);
      if (!plot_path_.empty()) out << "  plot: " << (plot_failure.empty() ? plot_path_ : "not written: " + plot_failure) << '\n';
    }
    return plot_failure.empty() ? 0 : kExitPlotFailed;
  }

 private:
  /// One header and one row: the setup, the probability of meeting the deadline with its interval, and
  /// the time and cost figures (times never reached are empty).
  static void print_csv(std::ostream& out, const SimulationResult& r, const std::optional<CheckpointPlan>& checkpoint,
                        const CalibrationNote& calibration) {
    CsvTable csv;
    csv.add("cluster", csv_cluster(r.cluster));
    csv.add("target_loss", csv_number(r.target_loss));
    csv.add("deadline_s", csv_number(r.deadline_s));
    csv.add("scenarios", std::to_string(r.scenarios));
    csv.add("seed", std::to_string(r.seed));
    csv.add("replacement", std::string(to_string(r.replacement)));
    csv.add("ps_charged", r.parameter_server_charged ? "true" : "false");
    csv.add("probability_meets_deadline", csv_number(r.meets_deadline.estimate));
    csv.add("probability_lower", csv_number(r.meets_deadline.lower));
    csv.add("probability_upper", csv_number(r.meets_deadline.upper));
    csv.add("probability_confidence_level", csv_number(r.meets_deadline.confidence_level));
    csv.add("deterministic_time_s", csv_number(r.deterministic_time_s));
    csv.add("deterministic_cost_usd", csv_number(r.deterministic_cost_usd));
    csv.add("finished_share", csv_number(r.finished_share));
    csv.add("mean_time_s", csv_number(r.mean_time_s));
    csv.add("mean_cost_usd", csv_number(r.mean_cost_usd));
    csv.add("mean_revocations", csv_number(r.mean_revocations));
    csv.add("mean_replacements", csv_number(r.mean_replacements));
    for (const auto& [name, value] : {std::pair{"p10", r.time_s.p10}, std::pair{"p50", r.time_s.p50}, std::pair{"p90", r.time_s.p90},
                                      std::pair{"p95", r.time_s.p95}, std::pair{"p99", r.time_s.p99}}) {
      csv.add(std::string("time_s_") + name, csv_number(value));
    }
    for (const auto& [name, value] : {std::pair{"p10", r.cost_usd.p10}, std::pair{"p50", r.cost_usd.p50}, std::pair{"p90", r.cost_usd.p90},
                                      std::pair{"p95", r.cost_usd.p95}, std::pair{"p99", r.cost_usd.p99}}) {
      csv.add(std::string("cost_usd_") + name, csv_number(value));
    }
    csv.add("checkpoint_interval_young_s", checkpoint ? csv_number(checkpoint->young_interval_s) : std::string());
    csv.add("checkpoint_interval_daly_s", checkpoint ? csv_number(checkpoint->daly_interval_s) : std::string());
    csv.add("calibrated", calibration.calibrated ? "true" : "false");
    csv.add("revocation_model", calibration.model);
    csv.print(out);
  }

  void print_table(std::ostream& out, const PerformanceModel& model, const InterruptionModel& interruption,
                   const SimulationResult& r, const std::optional<CheckpointPlan>& checkpoint,
                   const CalibrationNote& calibration, const FittedRevocations& fitted) const {
    out << fmt::format("spotdnn simulate: {} on {}{}, {}, target loss {}, deadline {}\n\n", model.workload().name,
                       model.catalog().region, zone_.empty() ? std::string() : " (zone " + zone_ + ")", r.cluster.to_string(),
                       detail::format_number(r.target_loss), format_duration(r.deadline_s));
    TextTable types({"type", "count", "hazard [1/h]", "source", "mean lifetime"});
    for (std::size_t k = 0; k < model.worker_types().size(); ++k) {
      const int count = r.cluster.count(model.worker_types()[k].name);
      if (count == 0) continue;
      if (fitted.model && k < fitted.type_pools.size() && !fitted.type_pools[k].empty()) {
        std::string pools;
        for (int p : fitted.type_pools[k]) pools += (pools.empty() ? "" : ", ") + fitted.model->pools[std::size_t(p)].pool.zone;
        types.add_row({model.worker_types()[k].name, std::to_string(count),
                       fmt::format("{:.4g} (mean; by age)", mean_hazard_per_hour(*fitted.model, fitted.type_pools[k])),
                       "fitted: " + pools, "by age"});
        continue;
      }
      const TypeInterruption& t = interruption.types()[k];
      const double life = interruption.mean_lifetime_s(k);
      types.add_row({t.type, std::to_string(count), fmt::format("{:.6g}", t.hazard_per_hour), std::string(to_string(t.source)),
                     std::isfinite(life) ? fmt::format("{:.1f} h", life / 3600) : "never revoked"});
    }
    types.print(out);
    for (const auto& [type, from] : io::estimated_profiles(r.cluster, model.workload())) {
      out << "  estimated: " << type << " from " << from << " (GPU peak), not measured: fit throughput replaces it\n";
    }
    const ProbabilityEstimate& p = r.meets_deadline;
    TextTable figures({"figure", "value"}, 2);
    figures.add_row({"without revocations", fmt::format("{}, {} ({} the deadline)", format_duration(r.deterministic_time_s),
                                                        format_usd(r.deterministic_cost_usd),
                                                        r.deterministic_meets_deadline ? "meets" : "misses")});
    figures.add_row({"P(finish <= deadline)", fmt::format("{:.4f} ({:.0f}% interval {:.4f}-{:.4f})", p.estimate,
                                                          100 * p.confidence_level, p.lower, p.upper)});
    figures.add_row({"scenarios", fmt::format("{} (seed {}, replacement {}, lifetimes {})", r.scenarios, r.seed,
                                              to_string(r.replacement),
                                              interruption.weibull_shape() == 1.0
                                                  ? std::string("exponential")
                                                  : fmt::format("Weibull k = {}", interruption.weibull_shape()))});
    figures.add_row({"finished", fmt::format("{:.2f}% (the rest lost every worker or ran past {:.0f}x the deadline)",
                                             100 * r.finished_share, SimulateOptions{}.horizon_factor)});
    figures.add_row({"time mean", format_duration(r.mean_time_s)});
    figures.add_row({"time p50 / p90 / p99", fmt::format("{} / {} / {}", format_duration(r.time_s.p50),
                                                         format_duration(r.time_s.p90), format_duration(r.time_s.p99))});
    figures.add_row({"cost mean", format_usd(r.mean_cost_usd)});
    figures.add_row({"cost p50 / p90 / p99", fmt::format("{} / {} / {}", format_usd(r.cost_usd.p50), format_usd(r.cost_usd.p90),
                                                         format_usd(r.cost_usd.p99))});
    figures.add_row({"revocations per run", fmt::format("{:.4f}", r.mean_revocations)});
    figures.add_row({"replacements per run", fmt::format("{:.4f}", r.mean_replacements)});
    if (checkpoint) {
      figures.add_row({"mean time to interruption", format_duration(checkpoint->mean_time_to_interruption_s)});
      figures.add_row({"checkpoint every (Young)", format_duration(checkpoint->young_interval_s)});
      figures.add_row({"checkpoint every (Daly)", format_duration(checkpoint->daly_interval_s)});
    }
    out << '\n';
    figures.print(out);
    out << '\n' << "  " << r.message << '\n';
    out << "  " << calibration.line() << '\n';
    for (const std::string& a : calibration.assumptions) out << "    assumes: " << a << '\n';
  }

  std::string cluster_text_;
  double target_loss_ = 0;
  double deadline_s_ = 0;
  int scenarios_ = 10000;
  std::uint64_t seed_ = 1;
  std::string replacement_text_ = "none";
  double join_delay_s_ = 120;
  double notice_s_ = 120;
  int threads_ = 0;
  std::optional<double> checkpoint_write_s_;
  std::string plot_path_;
  ProgressMode progress_mode_ = ProgressMode::automatic;
  InterruptionCliOptions interruption_;
  RevocationsCliOption revocations_;
  ModelOptions model_;
  bool no_ps_cost_ = false;
  OutputFormat format_ = OutputFormat::table;
  std::string zone_;
};

}  // namespace spotdnn::cli
