#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/frontier_command.hpp `spotdnn frontier`: the cost–deadline Pareto staircase for a target loss,
/// as a table, JSON or CSV, optionally drawn with gnuplot (--plot FILE.svg|.png|.pdf); --zone prices one
/// Availability Zone (and its step documents launch there).

#include <charconv>
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

#include "command.hpp"
#include "gnuplot.hpp"
#include "options.hpp"
#include "plot_script.hpp"
#include "table.hpp"
#include "zone_option.hpp"

namespace spotdnn::cli {

class FrontierCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("frontier", "cheapest plan for every deadline in a range (Pareto set of cost and time)");
    subcommand_->add_option("--target-loss", target_loss_, "training loss to reach")->required();
    subcommand_->add_option("--deadlines", deadlines_text_,
                            "FROM:TO[:COUNT], durations (600:7200, 40m:2h:10); with COUNT, also the optimum at COUNT "
                            "evenly spaced deadlines")
        ->default_str("600:7200");
    subcommand_->add_flag("--no-ps-cost", no_ps_cost_, "leave the parameter server out of the cost (as the paper does)");
    add_plot_option(*subcommand_, plot_path_, "cost against deadline");
    subcommand_->add_flag_callback("--csv", [] { throw CLI::ValidationError("--csv", "is now --format csv"); })->group("");
    add_zone_option(*subcommand_, zone_,
                    "price this Availability Zone (its steps launch there); without it, a catalog with zone prices is "
                    "priced at each type's lowest price over its zones");
    model_.add_to(*subcommand_);
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    require_zone_not_empty(*subcommand_, zone_);
    const PerformanceModel model = model_in_zone(model_.load(*this), zone_);
    if (const std::string why = unpinned_zone_warning(model.catalog(), zone_, "pass --zone AZ to price one zone and launch its steps there");
        !why.empty()) {
      warn(why);
    }
    FrontierOptions options;
    parse_deadlines(options);
    options.plan.charge_parameter_server = !no_ps_cost_;
    const Frontier f = cost_deadline_frontier(model, target_loss_, options);
    if (!plot_path_.empty() && !f.steps.empty()) plot(f, options);
    if (format_ == OutputFormat::csv) {
      out << io::frontier_csv(f);
    } else if (format_ == OutputFormat::json) {
      io::Json j = io::frontier_document(f, model, zone_);
      j["samples"] = io::Json::array();
      for (int i = 0; i < samples_; ++i) {
        const double d = sample_deadline(options, i);
        const FrontierStep* s = f.at(d);
        j["samples"].push_back({{"deadline_s", d}, {"cost_usd", s ? io::Json(s->plan.cost_usd) : io::Json(nullptr)},
                                {"cluster", s ? io::to_json(s->plan.cluster) : io::Json(nullptr)}});
      }
      if (!plot_path_.empty()) j["plot"] = plot_path_;
      out << j.dump(2) << '\n';
    } else {
      print_table(out, model, f, options);
    }
    return f.steps.empty() ? 3 : 0;
  }

 private:
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
  /// written if it fails).
  void plot(const Frontier& f, const FrontierOptions& options) const {
    std::vector<std::pair<double, double>> samples;
    for (int i = 0; i < samples_; ++i) {
      const double d = sample_deadline(options, i);
      if (const FrontierStep* s = f.at(d)) samples.emplace_back(d, s->plan.cost_usd);
    }
    run_gnuplot(frontier_gnuplot_script(f, *plot_format_of(plot_path_), samples), plot_path_, "--plot");
  }

  void print_table(std::ostream& out, const PerformanceModel& model, const Frontier& f, const FrontierOptions& options) const {
    out << fmt::format("spotdnn frontier: {} on {}{}, target loss {}, deadlines {}\n\n", model.workload().name,
                       model.catalog().region, zone_.empty() ? std::string() : " (zone " + zone_ + ")",
                       detail::format_number(f.target_loss), deadlines_text_);
    if (f.steps.empty()) {
      out << "  " << to_string(f.status) << ": " << f.message << '\n';
      return;
    }
    TextTable steps({"deadline from [s]", "to [s]", "training time", "cost", "workers", "plan"});
    for (const FrontierStep& s : f.steps) {
      steps.add_row({fmt::format("{:.1f}", s.from_deadline_s), fmt::format("{:.1f}", s.to_deadline_s),
                     format_duration(s.plan.training_time_s), format_usd(s.plan.cost_usd), std::to_string(s.plan.workers),
                     io::plan_label(s.plan, ',')});
    }
    steps.print(out);
    if (samples_ > 0) {
      TextTable grid({"deadline [s]", "cost", "plan"});
      for (int i = 0; i < samples_; ++i) {
        const double d = sample_deadline(options, i);
        const FrontierStep* s = f.at(d);
        grid.add_row({fmt::format("{:.1f}", d), s ? format_usd(s->plan.cost_usd) : "infeasible",
                      s ? io::plan_label(s->plan, ',') : "-"});
      }
      out << '\n';
      grid.print(out);
    }
    out << '\n' << "  " << f.message << '\n';
    if (!plot_path_.empty()) out << "  plot: " << plot_path_ << '\n';
  }

  double target_loss_ = 0;
  std::string deadlines_text_ = "600:7200";
  int samples_ = 0;
  bool no_ps_cost_ = false;
  std::string plot_path_;
  OutputFormat format_ = OutputFormat::table;
  ModelOptions model_;
  std::string zone_;
};

}  // namespace spotdnn::cli
