#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/fit_command.hpp `spotdnn fit loss|throughput`: the profiler. Fits the loss model or the throughput
/// model to a trace CSV and reports estimates with 95% intervals; the updated workload (and, for B_ps, the
/// catalog) come out as the JSON `plan` reads.
///
/// Output: the fit report on stdout (a table; with --format json an object {"fit": report, "workload": …,
/// "catalog": …} whose "workload"/"catalog" members are exactly the files `plan` reads; with --format csv
/// the coefficient table). Every output flags an estimate whose standard error is larger than its magnitude
/// (FitParameter::uncertain): the table's note "uncertain*" and a footnote line, "uncertain": true per
/// parameter and the list "uncertain_parameters" in JSON, the column `uncertain` in CSV. --trace - reads
/// the trace from standard input; --plot FILE.svg|.png|.pdf draws
/// the data (long traces thinned for drawing only) and the fitted model. --output FILE writes
/// the updated workload JSON, --catalog-output FILE the updated catalog (the only place B_ps lives), and
/// --workload-only prints just the workload JSON on stdout (docs/formats.md: pipe it into a file for `plan`;
/// uncertain estimates then come as one warning line on stderr, and a fit without an answer as one line
/// "spotdnn fit: STATUS: why" with nothing on stdout).
/// Exit codes: 0 converged, 2 bad input (one line on stderr), 3 the fit did not converge or the data cannot
/// identify the parameters (the report says why; no workload is written).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/fit.hpp>
#include <spotdnn/io/csv.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/limits.hpp>

#include "command.hpp"
#include "gnuplot.hpp"
#include "options.hpp"
#include "plot_script.hpp"
#include "table.hpp"

namespace spotdnn::cli {

namespace fit_cli {

constexpr int kExitFitFailed = 3;

inline io::Json report_json(const FitResult& fit) {
  io::Json parameters = io::Json::array();
  for (const FitParameter& p : fit.parameters) {
    parameters.push_back({{"name", p.name},
                          {"value", io::number_or_null(p.value)},
                          {"free", p.free},
                          {"standard_error", io::number_or_null(p.standard_error)},
                          {"ci95_low", io::number_or_null(p.ci95_low)},
                          {"ci95_high", io::number_or_null(p.ci95_high)},
                          {"at_bound", p.at_bound},
                          {"uncertain", p.uncertain()}});
  }
  return {{"status", std::string(to_string(fit.status))},
          {"message", fit.message},
          {"parameters", parameters},
          {"uncertain_parameters", fit.uncertain_parameters()},
          {"observations", fit.observations},
          {"free_parameters", fit.free_parameters},
          {"rmse", io::number_or_null(fit.rmse)},
          {"r_squared", io::number_or_null(fit.r_squared)},
          {"final_cost", io::number_or_null(fit.final_cost)},
          {"iterations", fit.iterations},
          {"starts", fit.starts},
          {"starts_at_best", fit.starts_at_best},
          {"starts_at_iteration_limit", fit.starts_at_iteration_limit},
          {"optimum_may_not_be_global", fit.optimum_may_not_be_global},
          {"solve_time_s", fit.solve_time_s}};
}

inline std::string number(double value) { return std::isfinite(value) ? fmt::format("{:.6g}", value) : "-"; }

/// The marker of an uncertain estimate in a table's note column; uncertain_footnote() explains it.
inline constexpr const char* kUncertainMarker = "uncertain*";

/// The note of one parameter in a table: "held", "at bound", "uncertain*" (comma-separated when several).
inline std::string parameter_note(const FitParameter& p) {
  std::string note = !p.free ? "held" : (p.at_bound ? "at bound" : "");
  if (p.uncertain()) note += (note.empty() ? "" : ", ") + std::string(kUncertainMarker);
  return note;
}

/// Why the uncertain estimates (standard error larger than the estimate's magnitude) should not be relied
/// on, one sentence naming them; "" when there are none.
inline std::string uncertain_sentence(const FitResult& fit) {
  const std::vector<std::string> names = fit.uncertain_parameters();
  if (names.empty()) return {};
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    list += (i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ")) + names[i];
  }
  if (names.size() == 1) {
    return "the standard error of " + list + " is larger than its estimate's magnitude, so its 95% interval includes 0: "
           "the data hardly determine it; do not rely on that estimate";
  }
  return "the standard errors of " + list + " are larger than their estimates' magnitudes, so their 95% intervals include 0: "
         "the data hardly determine them; do not rely on those estimates";
}

/// The footnote under a table with uncertain estimates, one line "  * uncertain: ..."; "" when there are none.
inline std::string uncertain_footnote(const FitResult& fit) {
  const std::string sentence = uncertain_sentence(fit);
  return sentence.empty() ? sentence : "  * uncertain: " + sentence + "\n";
}

inline void print_report(std::ostream& out, const std::string& title, const FitResult& fit) {
  out << title << "\n\n";
  TextTable table({"parameter", "estimate", "std. error", "95% CI low", "95% CI high", "note"});
  for (const FitParameter& p : fit.parameters) {
    table.add_row({p.name, number(p.value), number(p.standard_error), number(p.ci95_low), number(p.ci95_high), parameter_note(p)});
  }
  table.print(out);
  out << uncertain_footnote(fit) << '\n';
  TextTable figures({"figure", "value"}, 2);
  figures.add_row({"status", std::string(to_string(fit.status))});
  figures.add_row({"observations", fmt::format("{} ({} free parameters)", fit.observations, fit.free_parameters)});
  figures.add_row({"RMSE", number(fit.rmse)});
  figures.add_row({"R squared", number(fit.r_squared)});
  figures.add_row({"iterations", fmt::format("{} (best of {} starts, {:.3f} s)", fit.iterations, fit.starts, fit.solve_time_s)});
  figures.print(out);
  out << "\n  " << fit.message << '\n';
}

/// The coefficient table as CSV: parameter,estimate,standard_error,ci95_low,ci95_high,free,at_bound,uncertain
/// (empty cells for figures that are not numbers; uncertain: the standard error is larger than the estimate's
/// magnitude), then nothing else: the status and the figures are in --format json.
inline std::string report_csv(const FitResult& fit) {
  auto cell = [](double value) { return std::isfinite(value) ? detail::format_number(value) : std::string(); };
  auto flag = [](bool value) { return std::string(value ? "true" : "false"); };
  std::string text = "parameter,estimate,standard_error,ci95_low,ci95_high,free,at_bound,uncertain\n";
  for (const FitParameter& p : fit.parameters) {
    text += p.name + "," + cell(p.value) + "," + cell(p.standard_error) + "," + cell(p.ci95_low) + "," + cell(p.ci95_high) + "," +
            flag(p.free) + "," + flag(p.at_bound) + "," + flag(p.uncertain()) + "\n";
  }
  return text;
}

/// At most this many points of one run are drawn (the fit uses all of them).
inline constexpr std::size_t kMaxDrawnPointsPerRun = 2000;
/// ... and at most this many over all runs.
inline constexpr std::size_t kMaxDrawnPoints = 20000;

inline void write_text_file(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw usage_error("cannot write \"" + path + "\"");
  const bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !ok) throw usage_error("cannot write \"" + path + "\"");
}

}  // namespace fit_cli

class FitCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = parent.add_subcommand("fit", "fit the loss or throughput model to profiling traces (the profiler)");
    subcommand_->require_subcommand(1);

    loss_ = subcommand_->add_subcommand("loss", "fit the loss-model coefficients gamma to a loss trace");
    loss_->add_option("--trace", trace_path_,
                      "loss trace CSV (- for standard input): run,workers,weighted_batch,iteration,loss[,convergence_coefficient]")
        ->required();
    loss_->add_option("--form", form_text_, "loss model form: seed (4 coefficients) or cc (5)")->default_str("seed");
    loss_->add_option("--robust", robust_text_, "robust loss: none, huber:SCALE or cauchy:SCALE (loss units)")
        ->default_str("none");
    loss_->add_option("--late-weight", late_weight_, "weight late points: 1 + W * iteration / last iteration of the run");
    loss_->add_flag("--relative", relative_, "fit relative residuals (noise proportional to the loss)");
    loss_->add_option("--starts", starts_, "local solves from the best distinct starting points; the lowest cost wins")
        ->default_str("1");
    common(*loss_);

    throughput_ = subcommand_->add_subcommand("throughput", "fit contention, bandwidth and per-type times to measured throughput");
    throughput_->add_option("--trace", trace_path_,
                            "throughput trace CSV (- for standard input): cluster,iterations_per_s (cluster TYPE=N;TYPE=N)")
        ->required();
    throughput_->add_option("--free", free_text_,
                            "comma-separated parameters to fit: alpha1, beta1, required_bandwidth_bytes_per_s (or b_req), "
                            "ps_bandwidth_bytes_per_s (or b_ps), iteration_time_s[TYPE], iteration_time_s (every type)")
        ->required();
    throughput_->add_option("--catalog-output", catalog_output_, "write the updated catalog JSON (carries B_ps) to FILE");
    common(*throughput_);
  }

  int run(std::ostream& out) override {
    std::vector<std::pair<std::string, std::string>> files = model_.file_options();
    files.emplace_back("--trace", trace_path_);
    require_one_stdin(files);  // standard input can be read once
    if (!form_.has_value()) parse_common_options();
    if (!plot_.empty()) (void)check_plot_path(plot_);  // a bad path is bad input, before any work
    return loss_->parsed() ? run_loss(out) : run_throughput(out);
  }

 private:
  void common(CLI::App& app) {
    model_.add_to(app);
    app.add_option("--output", output_, "write the updated workload JSON (what plan --workload reads) to FILE");
    app.add_flag("--workload-only", workload_only_, "print only the updated workload JSON on stdout");
    add_plot_option(app, plot_, "the data and the fitted model");
    add_format_option(app, format_);
  }

  void parse_common_options() {
    form_ = loss_form_from_string(form_text_);
    if (!form_) throw usage_error("--form = \"" + form_text_ + "\": expected seed or cc");
    const auto colon = robust_text_.find(':');
    const std::string kind = robust_text_.substr(0, colon);
    const auto robust = robust_loss_from_string(kind);
    if (!robust) throw usage_error("--robust = \"" + robust_text_ + "\": expected none, huber:SCALE or cauchy:SCALE");
    robust_ = *robust;
    if (robust_ != RobustLoss::none) {
      if (colon == std::string::npos) throw usage_error("--robust = \"" + robust_text_ + "\": give the scale, e.g. " + kind + ":0.1");
      std::size_t used = 0;
      const std::string scale_text = robust_text_.substr(colon + 1);
      try {
        robust_scale_ = std::stod(scale_text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != scale_text.size() || !(robust_scale_ > 0) || !std::isfinite(robust_scale_)) {
        throw usage_error("--robust = \"" + robust_text_ + "\": the scale must be a positive number");
      }
    } else if (colon != std::string::npos) {
      throw usage_error("--robust = \"" + robust_text_ + "\": none takes no scale");
    }
    if (starts_ < 1 || starts_ > kMaxFitStarts) {
      throw usage_error("--starts = " + std::to_string(starts_) + ": must be from 1 to " + std::to_string(kMaxFitStarts));
    }
    if (!(late_weight_ >= 0) || !std::isfinite(late_weight_)) {
      throw usage_error("--late-weight = " + detail::format_number(late_weight_) + ": must be a non-negative number");
    }
  }

  /// Writes the outputs of a converged fit; returns the exit code.
  int finish(std::ostream& out, const FitResult& fit, const std::string& title, const Workload& workload,
             const Catalog* catalog) {
    const bool ok = fit.status == FitStatus::converged;
    // The answer is printed whatever becomes of the plot; a plot that fails is a warning and exit 4.
    if (!plot_failure_.empty()) warn(plot_failed_warning(plot_failure_));
    const int success = plot_failure_.empty() ? 0 : kExitPlotFailed;
    if (ok && !output_.empty()) fit_cli::write_text_file(output_, io::to_json(workload).dump(2) + "\n");
    if (ok && catalog != nullptr && !catalog_output_.empty()) {
      fit_cli::write_text_file(catalog_output_, io::to_json(*catalog).dump(2) + "\n");
    }
    if (workload_only_) {
      if (!ok) {
        // A valid question without an answer: exit 3 like every other output, nothing on stdout (where the
        // workload would go), the status and the reason on one stderr line.
        std::fprintf(stderr, "spotdnn %s: %s: %s\n", name().c_str(), std::string(to_string(fit.status)).c_str(),
                     detail::escape_for_message(fit.message).c_str());
        return fit_cli::kExitFitFailed;
      }
      // The workload document has no room for the flags: say it on stderr instead.
      if (const std::string sentence = fit_cli::uncertain_sentence(fit); !sentence.empty()) warn("uncertain estimates: " + sentence);
      out << io::to_json(workload).dump(2) << '\n';
      return success;
    }
    if (format_ == OutputFormat::csv) {
      out << fit_cli::report_csv(fit);
    } else if (format_ == OutputFormat::json) {
      io::Json json = {{"fit", fit_cli::report_json(fit)}};
      if (ok) {
        json["workload"] = io::to_json(workload);
        if (catalog != nullptr) json["catalog"] = io::to_json(*catalog);
      }
      out << json.dump(2) << '\n';
    } else {
      fit_cli::print_report(out, title, fit);
      if (ok && catalog != nullptr) {
        out << fmt::format("\n  B_ps = {:.6g} bytes/s lives in the catalog: use --catalog-output FILE and plan --catalog FILE\n",
                           catalog->parameter_server.bandwidth_bytes_per_s);
      }
      if (ok && output_.empty()) out << "\n  use --output FILE (or --workload-only) for the updated workload JSON\n";
    }
    return ok ? success : fit_cli::kExitFitFailed;
  }

  int run_loss(std::ostream& out) {
    // Columns: 10⁵-row traces stay small.
    const LossTable trace = is_stdin(trace_path_) ? parse_loss_table(read_stdin("--trace", kMaxCsvFileBytes), std::string(kStdinName))
                                                  : read_loss_table(trace_path_);
    Workload workload = model_workload();
    LossFitOptions options;
    options.form = *form_;
    options.robust_loss = robust_;
    options.robust_scale = robust_scale_;
    options.late_weight = late_weight_;
    options.relative_residuals = relative_;
    options.starts = starts_;
    const LossFitResult fit = fit_loss_model(trace, options);
    if (fit.status == FitStatus::converged) workload.loss_model = fit.model;
    if (!plot_.empty() && fit.status == FitStatus::converged) plot_failure_ = plot_loss(trace, fit);
    return finish(out, fit,
                  fmt::format("spotdnn fit loss: {} form on {} ({} samples)", to_string(*form_), trace_name(), trace.size()),
                  workload, nullptr);
  }

  int run_throughput(std::ostream& out) {
    const ThroughputTrace trace = is_stdin(trace_path_)
                                      ? parse_throughput_trace(read_stdin("--trace", kMaxCsvFileBytes), std::string(kStdinName))
                                      : read_throughput_trace(trace_path_);
    ThroughputFitOptions options;
    std::stringstream list(free_text_);
    for (std::string name; std::getline(list, name, ',');) {
      if (name == "b_req") name = "required_bandwidth_bytes_per_s";
      if (name == "b_ps") name = "ps_bandwidth_bytes_per_s";
      if (!name.empty()) options.free_parameters.push_back(name);
    }
    if (options.free_parameters.empty()) throw usage_error("--free = \"" + free_text_ + "\": name at least one parameter");
    ModelOptions::Inputs inputs = model_.load_inputs();
    for (const std::string& warning : inputs.warnings) warn(warning);
    const ThroughputFitResult fit = fit_throughput(trace, inputs.workload, inputs.catalog, options);
    if (!plot_.empty() && fit.status == FitStatus::converged) plot_failure_ = plot_throughput(trace, fit);
    // A fitted time is a measurement: the profile it replaces is no longer an estimate.
    Workload workload = fit.workload;
    for (const FitParameter& parameter : fit.parameters) {
      if (!parameter.free) continue;
      for (const char* prefix : {"iteration_time_s[", "compute_time_s["}) {
        const std::string p = prefix;
        if (parameter.name.size() > p.size() + 1 && parameter.name.compare(0, p.size(), p) == 0 && parameter.name.back() == ']') {
          const auto profile = workload.profiles.find(parameter.name.substr(p.size(), parameter.name.size() - p.size() - 1));
          if (profile != workload.profiles.end()) profile->second.estimated_from.clear();
        }
      }
    }
    return finish(out, fit, fmt::format("spotdnn fit throughput: {} ({} clusters)", trace_name(), trace.samples.size()),
                  workload, &fit.catalog);
  }

  /// The workload `fit loss` starts from: as read, with estimated profiles when --estimate-profiles-from is
  /// given (then the catalog is read too, and the estimates are announced).
  [[nodiscard]] Workload model_workload() const {
    if (model_.estimate_profiles_from.empty()) return model_.load_workload();
    ModelOptions::Inputs inputs = model_.load_inputs();
    for (const std::string& warning : inputs.warnings) warn(warning);
    return std::move(inputs.workload);
  }

  [[nodiscard]] std::string trace_name() const { return is_stdin(trace_path_) ? std::string(kStdinName) : trace_path_; }

  /// Draws every run's points (thinned for drawing past kMaxDrawnPointsPerRun: min and max per bucket,
  /// first and last kept; the key says so) and its fitted curve over the run's iterations.
  /// Returns why the plot failed (empty when drawn).
  [[nodiscard]] std::string plot_loss(const LossTable& trace, const LossFitResult& fit) const {
    std::map<std::string, std::size_t> runs;  // by name: the plot's run order is alphabetical
    for (std::size_t k = 0; k < trace.runs.size(); ++k) runs.emplace(trace.runs[k].name, k);
    std::vector<std::vector<std::size_t>> members(trace.runs.size());
    for (std::size_t i = 0; i < trace.size(); ++i) members[trace.run[i]].push_back(i);
    std::size_t drawn_runs = 0;
    for (const auto& m : members) drawn_runs += m.empty() ? 0 : 1;
    const std::size_t per_run =
        std::max<std::size_t>(200, std::min(fit_cli::kMaxDrawnPointsPerRun, fit_cli::kMaxDrawnPoints / std::max<std::size_t>(1, drawn_runs)));
    // Run names are user text: gnuplot_string and noenhanced; the datablocks hold only numbers.
    std::string script = plot_preamble(*plot_format_of(plot_), 1000, 640);
    script += "set xlabel 'iteration j [PS updates]'\nset ylabel 'training loss'\nset format x '%.0s%c'\n";
    std::string points_plots, curve_plots;
    int index = 0;
    std::size_t points = 0, shown = 0;
    double low = 0, high = 0;
    bool any = false;
    for (const auto& [run, k] : runs) {
      std::vector<std::size_t>& order = members[k];
      if (order.empty()) continue;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return trace.iteration[a] < trace.iteration[b]; });
      const std::vector<std::size_t> kept =
          thin_for_drawing(order.size(), per_run, [&](std::size_t position) { return trace.loss[order[position]]; });
      points += order.size();
      shown += kept.size();
      const std::string data = "$data" + std::to_string(index), curve = "$fit" + std::to_string(index);
      script += data + " << EOD\n";
      for (std::size_t position : kept) {
        const std::size_t i = order[position];
        script += plot_number(trace.iteration[i]) + " " + plot_number(trace.loss[i]) + "\n";
        low = any ? std::min(low, trace.loss[i]) : trace.loss[i];
        high = any ? std::max(high, trace.loss[i]) : trace.loss[i];
        any = true;
      }
      script += "EOD\n" + curve + " << EOD\n";
      const LossRun& first = trace.runs[k];
      const double r = first.convergence_coefficient ? *first.convergence_coefficient : homogeneous_convergence_coefficient(first.workers);
      const double j0 = trace.iteration[order.front()], j1 = trace.iteration[order.back()];
      for (int step = 0; step <= 200; ++step) {
        const double j = j0 + (j1 - j0) * step / 200.0;
        const double f = loss_at_iteration<double>(fit.model.form, j, first.workers, first.weighted_batch, r, fit.model.gamma.data());
        if (std::isfinite(f)) script += plot_number(j) + " " + plot_number(f) + "\n";
      }
      script += "EOD\n";
      const std::string label = kept.size() < order.size()
                                    ? fmt::format("run {} ({} of {} points drawn)", run, kept.size(), order.size())
                                    : fmt::format("run {} ({} points)", run, order.size());
      // Points in the run's colour, a little transparent; every fitted curve black on top of them.
      constexpr const char* kColours[] = {"1f77b4", "d62728", "2ca02c", "ff7f0e", "9467bd",
                                          "8c564b", "e377c2", "7f7f7f", "bcbd22", "17becf"};
      points_plots += fmt::format("{}{} using 1:2 with points pt 7 ps 0.35 lc rgb '#40{}' title {} noenhanced",
                                  points_plots.empty() ? "" : ", \\\n     ", data, kColours[index % 10], gnuplot_string(label));
      curve_plots += fmt::format(", \\\n     {} using 1:2 with lines lw 1.5 lc rgb '#000000' {}", curve,
                                 index == 0 ? "title 'fitted model (one curve per run)'" : "notitle");
      ++index;
    }
    // The fitted curves can shoot up near j = 0; the range follows the data.
    if (any && high > low) {
      const double pad = 0.05 * (high - low);
      script += "set yrange [" + plot_number(std::max(0.0, low - pad)) + ":" + plot_number(high + pad) + "]\n";
    }
    const std::string title = fmt::format("spotdnn fit loss: {} form, RMSE {}, R² {}", to_string(fit.model.form), fit_cli::number(fit.rmse),
                                          fit_cli::number(fit.r_squared));
    const std::string note = shown < points ? fmt::format("points: {} of {} drawn (min and max per bucket); lines: the model fitted to every point", shown, points)
                                            : std::string("points: the trace; lines: the fitted model");
    script += "set title " + gnuplot_string(title) + "." + std::string(kGnuplotNewline) + "." + gnuplot_string(note) + " noenhanced\n";
    return draw_plot(script + "plot " + points_plots + curve_plots + "\n", plot_);
  }

  /// Measured against fitted PS updates per second, by cluster size.
  /// Returns why the plot failed (empty when drawn).
  [[nodiscard]] std::string plot_throughput(const ThroughputTrace& trace, const ThroughputFitResult& fit) const {
    std::string script = plot_preamble(*plot_format_of(plot_), 1000, 640);
    script += "set xlabel 'workers in the cluster'\nset ylabel 'throughput [PS updates/s]'\nset format y '%g'\n"
              "set xtics 1\nset offsets 0.5, 0.5, 0, 0\n";
    script += "set title " +
              gnuplot_string(fmt::format("spotdnn fit throughput: {} clusters, RMSE {} updates/s, R² {}", trace.samples.size(),
                                         fit_cli::number(fit.rmse), fit_cli::number(fit.r_squared))) +
              " noenhanced\n$data << EOD\n";
    for (std::size_t i = 0; i < trace.samples.size(); ++i) {
      script += plot_number(double(trace.samples[i].cluster.total_workers())) + " " + plot_number(trace.samples[i].iterations_per_s) + " " +
                plot_number(fit.predicted_iterations_per_s[i]) + "\n";
    }
    script += "EOD\nplot $data using 1:2 with points pt 7 ps 0.9 lc rgb '#1f77b4' title 'measured', \\\n"
              "     $data using 1:3 with points pt 6 ps 1.6 lw 2 lc rgb '#d62728' title 'fitted model (same cluster)'\n";
    return draw_plot(script, plot_);
  }

  CLI::App* loss_ = nullptr;
  CLI::App* throughput_ = nullptr;
  std::string trace_path_;
  std::string form_text_ = "seed";
  std::string robust_text_ = "none";
  std::optional<LossForm> form_;
  RobustLoss robust_ = RobustLoss::none;
  double robust_scale_ = 0.1;
  double late_weight_ = 0;
  bool relative_ = false;
  int starts_ = 1;
  std::string free_text_;
  std::string output_;
  std::string catalog_output_;
  std::string plot_;
  std::string plot_failure_;  ///< why --plot was not drawn (empty: drawn, or not asked)
  bool workload_only_ = false;
  OutputFormat format_ = OutputFormat::table;
  ModelOptions model_;
};

}  // namespace spotdnn::cli
