#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/simulate_command.hpp `spotdnn simulate`: Monte Carlo of one cluster under spot revocations:
/// the probability of meeting the deadline, time and cost percentiles, and a histogram plot.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/json.hpp>
#include <spotdnn/io/revocation_json.hpp>
#include <spotdnn/model/prediction.hpp>
#include <spotdnn/revocation/checkpoint.hpp>
#include <spotdnn/revocation/interruption.hpp>
#include <spotdnn/revocation/replan.hpp>
#include <spotdnn/revocation/simulate.hpp>

#include "command.hpp"
#include "interruption_options.hpp"
#include "table.hpp"

namespace spotdnn::cli {

/// `text` with &, < and > escaped for XML.
inline std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

/// An SVG histogram of finish times (s), with the deadline and the runs that never finish.
inline std::string finish_time_histogram_svg(const std::vector<ScenarioOutcome>& outcomes, double deadline_s,
                                             const std::string& title) {
  std::vector<double> times;
  std::size_t never = 0;
  for (const ScenarioOutcome& o : outcomes) {
    if (o.finished) {
      times.push_back(o.time_s);
    } else {
      ++never;
    }
  }
  constexpr int kBins = 40;
  constexpr double kWidth = 760, kHeight = 430, kLeft = 70, kRight = 20, kTop = 50, kBottom = 60;
  double lo = deadline_s, hi = deadline_s;
  for (double t : times) lo = std::min(lo, t), hi = std::max(hi, t);
  if (!(hi > lo)) hi = lo + 1;
  const double span = hi - lo;
  lo -= 0.02 * span;
  hi += 0.02 * span;
  std::vector<std::size_t> counts(kBins + 1, 0);  // the last bar: never finished
  for (double t : times) counts[std::min(kBins - 1, int((t - lo) / (hi - lo) * kBins))]++;
  counts[kBins] = never;
  const std::size_t top = std::max<std::size_t>(1, *std::max_element(counts.begin(), counts.end()));
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const double bar_w = plot_w / (kBins + 2);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"14\">{3}</text>\n",
      kWidth, kHeight, kLeft, xml_escape(title));
  for (int b = 0; b <= kBins; ++b) {
    const double h = plot_h * double(counts[b]) / double(top);
    const double x = kLeft + (b == kBins ? b + 1 : b) * bar_w;
    const bool late = b == kBins || lo + (b + 0.5) * (hi - lo) / kBins > deadline_s;
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x,
                       kTop + plot_h - h, bar_w * 0.9, h, late ? "#d62728" : "#1f77b4");
  }
  const double deadline_x = kLeft + (deadline_s - lo) / (hi - lo) * kBins * bar_w;
  svg += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\" stroke-dasharray=\"4,3\"/>\n"
      "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">deadline {4:.0f} s</text>\n",
      deadline_x, kTop, kTop + plot_h, kTop - 4, deadline_s);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", kLeft, kTop + plot_h,
                     kLeft + plot_w);
  for (int i = 0; i < 4; ++i) {  // the last quarter's label would collide with "never"
    const double t = lo + i * (hi - lo) / 4;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.0f}</text>\n",
                       kLeft + i * kBins * bar_w / 4, kTop + plot_h + 16, t);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">never</text>\n",
                     kLeft + (kBins + 1.45) * bar_w, kTop + plot_h + 16);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time to reach the target loss [s]</text>\n",
                     kLeft + plot_w / 2, kHeight - 16);
  svg += fmt::format("<text x=\"16\" y=\"{:.1f}\" transform=\"rotate(-90 16 {:.1f})\" text-anchor=\"middle\">"
                     "scenarios (max {})</text>\n</svg>\n",
                     kTop + plot_h / 2, kTop + plot_h / 2, top);
  return svg;
}

class SimulateCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("simulate", "Monte Carlo of one cluster under spot revocations");
    subcommand_->add_option("--cluster", cluster_text_, "workers per type, e.g. p3.2xlarge=2,g3.8xlarge=4")->required();
    subcommand_->add_option("--target-loss", target_loss_, "training loss to reach")->required();
    subcommand_->add_option("--deadline", deadline_s_, "deadline in seconds")->required();
    subcommand_->add_option("--scenarios", scenarios_, "Monte Carlo scenarios")
        ->default_str("10000")
        ->check(CLI::Range(1, kMaxScenarios));
    subcommand_->add_option("--seed", seed_, "random seed, a whole number >= 0 (results depend on it only)")
        ->default_str("1")
        ->check(non_negative_whole_number());
    subcommand_->add_option("--replacement", replacement_text_, "after a revocation notice: none, same-type or replan")
        ->default_str("none");
    subcommand_->add_option("--join-delay", join_delay_s_, "seconds from request to training for a new instance")
        ->default_str("120");
    subcommand_->add_option("--notice", notice_s_, "seconds of notice before a revocation")->default_str("120");
    subcommand_->add_option("--threads", threads_, "worker threads (0 = all cores; results do not depend on it)")
        ->default_str("0")
        ->check(CLI::Range(0, kMaxThreads));
    subcommand_->add_option("--checkpoint-write", checkpoint_write_s_,
                            "seconds to write a PS checkpoint: also report Young's and Daly's intervals");
    subcommand_->add_option("--histogram", histogram_path_, "write an SVG histogram of the finish times to FILE.svg");
    interruption_.add_to(*subcommand_);
    model_.add_to(*subcommand_);
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    const PerformanceModel model = model_.load();
    const Cluster cluster = Cluster::parse(cluster_text_);
    const InterruptionModel interruption = interruption_.build(model);
    SimulateOptions options;
    options.scenarios = scenarios_;
    options.seed = seed_;
    options.threads = threads_;
    options.notice_s = notice_s_;
    options.join_delay_s = join_delay_s_;
    options.predict.charge_parameter_server = !no_ps_cost_;
    options.keep_outcomes = !histogram_path_.empty();
    const auto replacement = replacement_from_string(replacement_text_);
    if (!replacement) throw usage_error("--replacement: expected none, same-type or replan, got \"" + replacement_text_ + "\"");
    options.replacement = *replacement;
    const Replanner replanner(model);
    if (*replacement == Replacement::replan) {
      ReplanOptions replan_options;
      replan_options.join_delay_s = join_delay_s_;
      replan_options.plan.charge_parameter_server = !no_ps_cost_;
      options.replacement_planner = replanner.policy(replan_options);
    }
    const SimulationResult r = simulate(model, interruption, cluster, target_loss_, deadline_s_, options);
    if (r.status != Status::feasible) throw usage_error(r.message);
    std::optional<CheckpointPlan> checkpoint;
    if (checkpoint_write_s_) {
      checkpoint = checkpoint_plan(*checkpoint_write_s_, interruption.mean_time_to_interruption_s(model.counts_of(cluster)));
    }
    if (!histogram_path_.empty()) {
      std::ofstream file(histogram_path_);
      if (!file) throw usage_error("--histogram: cannot write \"" + histogram_path_ + "\"");
      file << finish_time_histogram_svg(r.outcomes, deadline_s_,
                                        fmt::format("{}: P(finish <= {:.0f} s) = {:.3f} over {} scenarios", cluster.to_string(),
                                                    deadline_s_, r.meets_deadline.estimate, r.scenarios));
      if (!file) throw usage_error("--histogram: cannot write \"" + histogram_path_ + "\"");
    }
    if (format_ == OutputFormat::json) {
      io::Json j = io::to_json(r);
      j["interruption"] = io::to_json(interruption);
      if (checkpoint) j["checkpoint"] = io::to_json(*checkpoint);
      out << j.dump(2) << '\n';
    } else {
      print_table(out, model, interruption, r, checkpoint);
    }
    return 0;
  }

 private:
  void print_table(std::ostream& out, const PerformanceModel& model, const InterruptionModel& interruption,
                   const SimulationResult& r, const std::optional<CheckpointPlan>& checkpoint) const {
    out << fmt::format("spotdnn simulate: {} on {}, {}, target loss {}, deadline {}\n\n", model.workload().name,
                       model.catalog().region, r.cluster.to_string(), detail::format_number(r.target_loss),
                       format_duration(r.deadline_s));
    TextTable types({"type", "count", "hazard [1/h]", "source", "mean lifetime"});
    for (std::size_t k = 0; k < model.worker_types().size(); ++k) {
      const int count = r.cluster.count(model.worker_types()[k].name);
      if (count == 0) continue;
      const TypeInterruption& t = interruption.types()[k];
      const double life = interruption.mean_lifetime_s(k);
      types.add_row({t.type, std::to_string(count), fmt::format("{:.6g}", t.hazard_per_hour), std::string(to_string(t.source)),
                     std::isfinite(life) ? fmt::format("{:.1f} h", life / 3600) : "never revoked"});
    }
    types.print(out);
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
  std::string histogram_path_;
  InterruptionCliOptions interruption_;
  ModelOptions model_;
  bool no_ps_cost_ = false;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
