#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/revocations_command.hpp `spotdnn revocations fit | show`: a revocation model fitted to spot
/// traces (per pool: hazard by instance age, bursts, waits to obtain an instance, gangs, the period), and
/// the model shown for people (a hazard-by-age table and, with --plot, survival curves via gnuplot).

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/io/json.hpp>
#include <spotdnn/io/revocation_model_json.hpp>
#include <spotdnn/revocation/fit_revocations.hpp>
#include <spotdnn/revocation/revocation_model.hpp>

#include "command.hpp"
#include "csv_output.hpp"
#include "gnuplot.hpp"
#include "options.hpp"
#include "plot_script.hpp"
#include "table.hpp"
#include "trace_options.hpp"

namespace spotdnn::cli {

/// The `revocations` group on `parent`, created by the first revocations command that attaches.
inline CLI::App* revocations_group(CLI::App& parent) {
  if (CLI::App* group = find_subcommand(parent, "revocations")) return group;
  CLI::App* group = parent.add_subcommand(
      "revocations", "revocation models from real spot traces: revocations fit, revocations show, revocations check");
  group->require_subcommand(1);
  return group;
}

/// "12 min", "3.5 h", "-" for a missing value: a duration for the hazard tables.
inline std::string short_duration(double seconds) {
  if (!std::isfinite(seconds)) return "inf";
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.3g} h", seconds / 3600);
}

/// The median and 90th percentile of a wait distribution, and the share in which none came.
inline std::string wait_summary(const WaitDistribution& w) {
  if (w.observed == 0) return "not observed";
  std::string s = w.quantiles_s.empty()
                      ? std::string("none ended")
                      : fmt::format("median {}, p90 {}", short_duration(w.quantiles_s[50]), short_duration(w.quantiles_s[90]));
  return s + fmt::format(" ({} seen, none came in {:.1f}%)", w.observed, 100 * w.none_share);
}

class RevocationsFitCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = revocations_group(parent)->add_subcommand(
        "fit", "fit a revocation model to spot traces: per pool the hazard by instance age, bursts, waits, gangs");
    traces_.add_to(*subcommand_);
    subcommand_->add_option("--age-bins", bins_text_,
                            "lower edges of the hazard's age bins, durations from 0 up (default 0,10m,30m,1h,2h,4h,8h,16h)");
    add_duration_option(*subcommand_, "--burst-window", burst_window_s_, "two preemptions this close are one burst")
        ->default_str("3m");
    add_duration_option(*subcommand_, "--from", from_s_, "fit only the part of each trace from this time on (since its start)",
                        ZeroDuration::allowed);
    add_duration_option(*subcommand_, "--to", to_s_, "fit only the part of each trace before this time (since its start)");
    subcommand_->add_option("--confidence-level", level_, "of the hazard intervals")->default_str("0.95")->check(CLI::Range(0.5, 0.9999));
    CLI::Option* bin = add_duration_option(*subcommand_, "--market-state-bin", market_state_bin_s_,
                                           "the bins in which calm and stormy market states are told apart, per region")
                           ->default_str("30m");
    subcommand_
        ->add_flag("--no-market-states", no_market_states_,
                   "fit one market state per region (by default a region gets calm and stormy states where they explain its "
                   "traces better, by BIC)")
        ->excludes(bin);
    add_format_option(*subcommand_, format_, {OutputFormat::json, OutputFormat::table, OutputFormat::csv},
                      "json (the model document, the default: --revocations takes it), table (for people, as revocations "
                      "show prints it) or csv (the hazard by age, one row per pool and age bin)");
  }

  int run(std::ostream& out) override {
    const std::vector<PoolTrace> traces = traces_.read();
    RevocationFitOptions o;
    o.burst_window_s = burst_window_s_;
    o.confidence_level = level_;
    o.from_s = from_s_;
    o.to_s = to_s_;
    o.market_regimes = !no_market_states_;
    o.regime_bin_s = market_state_bin_s_;
    if (!bins_text_.empty()) o.age_bin_edges_s = parse_bins(bins_text_);
    const RevocationModel model = fit_revocations(traces, o);
    if (format_ == OutputFormat::table) {
      print_revocation_model(out, model);
    } else if (format_ == OutputFormat::csv) {
      print_hazard_csv(out, model);
    } else {
      out << io::to_json(model).dump(2) << '\n';
    }
    return 0;
  }

  /// "0,10m,30m,1h" → seconds; throws naming the bad entry.
  static std::vector<double> parse_bins(const std::string& text) {
    std::vector<double> edges;
    std::vector<std::string> entries(1);
    for (char c : text) {
      if (c == ',' || c == ';') {
        entries.emplace_back();
      } else {
        entries.back() += c;
      }
    }
    for (const std::string& entry : entries) {
      const std::optional<double> s = entry == "0" ? std::optional<double>(0.0) : parse_duration_s(entry);
      if (!s || *s < 0) throw usage_error("--age-bins: " + detail::quoted(entry) + ": expected a duration (0, 10m, 1h, ...)");
      edges.push_back(*s);
    }
    return edges;
  }

  /// Per pool: its figures, then the hazard-by-age table.
  static void print_revocation_model(std::ostream& out, const RevocationModel& m) {
    out << fmt::format("spotdnn revocations: {} pool{}, burst window {}\n", m.pools.size(), m.pools.size() == 1 ? "" : "s",
                       short_duration(m.burst_window_s));
    for (const PoolModel& p : m.pools) {
      out << fmt::format("\npool {} ({} trace{}: {}{})\n", p.pool.name(), to_string(p.kind), p.sources.size() == 1 ? "" : "s",
                         p.sources.empty() ? std::string("-") : p.sources.front(), p.sources.size() > 1 ? ", ..." : "");
      TextTable figures({"figure", "value"}, 2);
      figures.add_row({"period", fmt::format("{}{} to {} of the trace ({}), tick {}", p.observed_from.empty() ? "" : p.observed_from + ": ",
                                             short_duration(p.from_s), short_duration(p.to_s), short_duration(p.to_s - p.from_s),
                                             short_duration(p.tick_s))});
      figures.add_row({"instances, preemptions", fmt::format("{}, {} over {:.1f} instance-hours ({:.3f}/h)", p.instances, p.preemptions,
                                                             p.exposure_s / 3600,
                                                             p.exposure_s > 0 ? p.preemptions / (p.exposure_s / 3600) : 0.0)});
      figures.add_row({"lifetime law (AIC)", fmt::format("{}; exponential {:.3f}/h, Weibull shape {:.3f} scale {}", p.parametric.best_by_aic,
                                                         p.parametric.exponential_hazard_per_hour, p.parametric.weibull_shape,
                                                         short_duration(p.parametric.weibull_scale_s))});
      figures.add_row({"found up at a random moment", fmt::format("{:.1f}%", 100 * p.start.up_share)});
      figures.add_row({"wait to obtain (start)", wait_summary(p.start.wait)});
      figures.add_row({"wait for a replacement", wait_summary(p.replacement_wait)});
      figures.add_row({"bursts", fmt::format("{:.0f}% of preemptions with another within the window ({:.0f}% by chance); largest {}",
                                             100 * p.clustering.share_with_another, 100 * p.clustering.share_by_chance,
                                             p.clustering.largest_burst)});
      if (!p.clustering.observed) {
        figures.add_row({"bursts in the pool", "not observed (one instance at a time)"});
      } else if (p.clustering.shocks > 0) {
        figures.add_row({"bursts in the pool (shocks)", fmt::format("{} of 2 or more: {:.3f} per hour, each taking {:.0f}% of the instances up",
                                                                    p.clustering.shocks, p.clustering.shock_rate_per_hour,
                                                                    100 * p.clustering.shock_hit_probability)});
      } else {
        figures.add_row({"bursts in the pool", "none of 2 or more"});
      }
      if (p.gang) {
        const GangObtainability& g = *p.gang;
        figures.add_row({"all " + std::to_string(g.requested) + " obtained at once",
                         fmt::format("{:.1f}% of ticks", 100 * (g.count_share.empty() ? 0.0 : g.count_share.back()))});
      }
      figures.print(out);
      TextTable hazard({"age", "preemptions", "instance-hours", "hazard [1/h]", "interval"}, 1);
      for (const HazardBin& b : p.hazard_by_age) {
        hazard.add_row({short_duration(b.from_age_s) + " - " + short_duration(b.to_age_s), std::to_string(b.events),
                        fmt::format("{:.1f}", b.exposure_s / 3600), b.exposure_s > 0 ? fmt::format("{:.3f}", b.hazard_per_hour) : "-",
                        b.exposure_s > 0 ? fmt::format("{:.3f} - {:.3f}", b.lower_per_hour, b.upper_per_hour) : "-"});
      }
      out << '\n';
      hazard.print(out);
    }
    for (const RegionCorrelation& r : m.regions) {
      out << fmt::format("\nregion {}: {:.0f}% of {} preemptions with one in another zone within the window ({:.0f}% by chance); "
                         "co-preemption {:.3f}\n",
                         r.region, 100 * r.share_with_other_zone, r.preemptions, 100 * r.share_by_chance, r.co_preemption_probability);
    }
    for (const MarketRegimes& r : m.regimes) print_market_states(out, m, r);
    if (!m.assumptions.empty()) {
      out << "\n";
      for (const std::string& a : m.assumptions) out << "  assumes: " << a << '\n';
    }
  }

  /// A region's calm and stormy states: the chain, then each pool's figures per state.
  static void print_market_states(std::ostream& out, const RevocationModel& m, const MarketRegimes& r) {
    out << fmt::format("\nmarket states of {}: calm and stormy periods shared by its pools (fitted on {} bins of {}; "
                       "log-likelihood {:.1f} against {:.1f} with one state)\n",
                       r.region, r.bins, short_duration(r.bin_s), r.log_likelihood, r.one_state_log_likelihood);
    static const char* const kNames[2] = {"calm", "stormy"};
    // A mean stay longer than the time fitted on was not seen to end: say so rather than print it.
    const auto stay_text = [](double leave_rate_per_hour, double fitted_s) {
      const double stay_s = leave_rate_per_hour > 0 ? units::kSecondsPerHour / leave_rate_per_hour : std::numeric_limits<double>::infinity();
      return stay_s <= fitted_s ? short_duration(stay_s) : "not left in the " + short_duration(fitted_s) + " fitted";
    };
    TextTable states({"state", "time", "hazard x", "returns x", "mean stay"}, 1);
    for (std::size_t s = 0; s < r.states.size() && s < 2; ++s) {
      const MarketState& st = r.states[s];
      states.add_row({kNames[s], fmt::format("{:.0f}%", 100 * st.time_share), fmt::format("{:.2f}", st.hazard_multiplier),
                      fmt::format("{:.2f}", st.arrival_multiplier),
                      stay_text(st.leave_rate_per_hour, r.bin_s * r.bins)});
    }
    states.print(out);
    const auto median_wait = [](const WaitDistribution& w) {
      std::string text = w.quantiles_s.size() == 101 ? short_duration(w.quantiles_s[50]) : std::string("-");
      if (w.none_share > 0) text += fmt::format(" (none {:.0f}%)", 100 * w.none_share);
      return text;
    };
    TextTable pools({"pool", "state", "observed", "found up", "median wait to obtain", "median replacement wait", "shocks/h"}, 2);
    for (const std::string& name : r.pools) {
      const auto at = std::find_if(m.pools.begin(), m.pools.end(), [&](const PoolModel& p) { return p.pool.name() == name; });
      if (at == m.pools.end()) continue;
      for (std::size_t s = 0; s < at->in_state.size() && s < 2; ++s) {
        const PoolInMarketState& in = at->in_state[s];
        pools.add_row({name, kNames[s], short_duration(in.observed_s), fmt::format("{:.1f}%", 100 * in.start.up_share),
                       median_wait(in.start.wait), median_wait(in.replacement_wait), fmt::format("{:.3f}", in.shock_rate_per_hour)});
      }
    }
    out << '\n';
    pools.print(out);
  }

  /// One row per pool and age bin.
  static void print_hazard_csv(std::ostream& out, const RevocationModel& m) {
    out << "pool,type,zone,from_age_s,to_age_s,preemptions,exposure_s,hazard_per_hour,lower_per_hour,upper_per_hour\n";
    for (const PoolModel& p : m.pools) {
      for (const HazardBin& b : p.hazard_by_age) {
        out << csv_field(p.pool.name()) << ',' << csv_field(p.pool.type) << ',' << csv_field(p.pool.zone) << ','
            << csv_number(b.from_age_s) << ',' << csv_number(b.to_age_s) << ',' << b.events << ',' << csv_number(b.exposure_s) << ','
            << csv_number(b.hazard_per_hour) << ',' << csv_number(b.lower_per_hour) << ',' << csv_number(b.upper_per_hour) << '\n';
      }
    }
  }

 private:
  TraceCliOptions traces_;
  std::string bins_text_;
  double burst_window_s_ = 180;
  std::optional<double> from_s_, to_s_;
  double level_ = 0.95;
  double market_state_bin_s_ = 1800;
  bool no_market_states_ = false;
  OutputFormat format_ = OutputFormat::json;
};

/// A gnuplot script of every pool's survival curve S(a) = exp(−H(a)) from its piecewise-constant hazard,
/// over ages up to `max_age_s`. Pool names are user text: gnuplot_string + noenhanced.
inline std::string survival_gnuplot_script(const RevocationModel& m, PlotFormat format) {
  double max_age_s = 3600;
  for (const PoolModel& p : m.pools) {
    for (const HazardBin& b : p.hazard_by_age) {
      if (b.exposure_s > 0 && std::isfinite(b.to_age_s)) max_age_s = std::max(max_age_s, b.to_age_s);
    }
  }
  const TimeUnit unit = time_unit_for(max_age_s);
  std::string s = plot_preamble(format, 1000, 600);
  s += "set title 'Survival of spot instances by age (piecewise-constant hazard)' noenhanced\n";
  s += "set xlabel " + gnuplot_string("instance age [" + unit.name + "]") + " noenhanced\n";
  s += "set ylabel 'P(still up)'\nset yrange [0:1.02]\nset key outside right top\n";
  s += "set xrange [0:" + plot_number(max_age_s / unit.seconds) + "]\n";
  std::string plots;
  for (std::size_t i = 0; i < m.pools.size(); ++i) {
    const PoolModel& p = m.pools[i];
    s += "$pool" + std::to_string(i) + " << EOD\n";
    double cumulative = 0;
    const int steps = 200;
    for (int k = 0; k <= steps; ++k) {
      const double age = max_age_s * k / steps;
      cumulative = 0;
      for (const HazardBin& b : p.hazard_by_age) {
        const double lo = b.from_age_s, hi = std::min(b.to_age_s, age);
        if (hi > lo) cumulative += b.hazard_per_hour / 3600 * (hi - lo);
      }
      s += plot_number(age / unit.seconds) + " " + plot_number(std::exp(-cumulative)) + "\n";
    }
    s += "EOD\n";
    plots += std::string(plots.empty() ? "plot " : ", \\\n     ") + "$pool" + std::to_string(i) + " using 1:2 with lines lw 2 title " +
             gnuplot_string(p.pool.name()) + " noenhanced";
  }
  if (plots.empty()) plots = "plot 1 with lines title 'no pools' noenhanced";
  return s + plots + "\n";
}

class RevocationsShowCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = revocations_group(parent)->add_subcommand("show", "print a revocation model for people: hazard by age, waits, bursts");
    subcommand_->add_option("--revocations", path_, "the model (spotdnn revocations fit's output; - for stdin)")
        ->required()
        ->check(non_empty_path());
    add_plot_option(*subcommand_, plot_path_, "the survival curve of every pool");
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    if (!plot_path_.empty()) (void)check_plot_path(plot_path_);  // a bad path is bad input, before any work
    const RevocationModel m = is_stdin(path_) ? io::revocation_model_from_json(read_stdin_json("--revocations"))
                                           : io::read_revocation_model_file(path_);
    // The model is printed whatever becomes of the plot; a plot that fails is a warning and exit 4.
    std::string plot_failure;
    if (!plot_path_.empty()) {
      plot_failure = draw_plot(survival_gnuplot_script(m, *plot_format_of(plot_path_)), plot_path_, "--plot");
      if (!plot_failure.empty()) warn(plot_failed_warning(plot_failure));
    }
    if (format_ == OutputFormat::json) {
      out << io::to_json(m).dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      RevocationsFitCommand::print_hazard_csv(out, m);
    } else {
      RevocationsFitCommand::print_revocation_model(out, m);
    }
    return plot_failure.empty() ? 0 : kExitPlotFailed;
  }

 private:
  std::string path_;
  std::string plot_path_;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
