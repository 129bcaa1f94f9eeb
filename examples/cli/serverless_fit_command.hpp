#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/serverless_fit_command.hpp `spotdnn serverless fit`: fits FasDL's function-time coefficients
/// a, b, m (train time) and k1, k2 (transform time), docs/model.md eq. (S1), to a Lambda profiling trace
/// and prints the serverless profile with 95% intervals.
///
/// Output: a table for people, or with --format json the profile document itself (kind
/// "spotdnn.serverless_profile", with its "fit" report), which `spotdnn serverless plan --profile` reads.
/// Both flag an estimate whose standard error is larger than its magnitude (FitParameter::uncertain): the
/// table's note "uncertain*" and a footnote line; in JSON "uncertain": true in the coefficient's report and
/// its name in the list fit.uncertain_parameters.
/// --trace - reads the trace from standard input; --plot FILE.svg|.png|.pdf draws the measured and fitted
/// times against memory. Exit codes: 0 converged, 2 bad input (one line on stderr, starting
/// "spotdnn serverless fit: error:"), 3 the fit cannot answer (not identifiable, not converged: the report
/// says why; the JSON document then has null coefficients, which the planner refuses).

#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/fit.hpp>
#include <spotdnn/io/serverless_profile_json.hpp>
#include <spotdnn/io/serverless_trace_csv.hpp>
#include <spotdnn/limits.hpp>

#include "command.hpp"
#include "fit_command.hpp"  // fit_cli::number, kExitFitFailed
#include "gnuplot.hpp"
#include "options.hpp"
#include "plot_script.hpp"
#include "program.hpp"
#include "table.hpp"

namespace spotdnn::cli {

class ServerlessFitCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    CLI::App* group = parent.add_subcommand("serverless", "fit a serverless (AWS Lambda, FasDL) profile: serverless fit");
    group->require_subcommand(1);
    subcommand_ = group->add_subcommand("fit", "fit a serverless profile (a, b, m, k1, k2) to Lambda profiling runs");
    subcommand_
        ->add_option("--trace", trace_path_,
                     "profiling trace CSV (- for standard input): batch,memory_mb,train_time_s,transform_time_s "
                     "(either time may be empty)")
        ->required()
        ->type_name("FILE");
    subcommand_->add_option("--model-size-mb", model_size_mb_, "the model's size S (MB), written into the profile")
        ->required()
        ->type_name("MB");
    subcommand_->add_option("--samples-per-epoch", samples_per_epoch_, "training samples in one epoch D, written into the profile")
        ->required()
        ->type_name("N");
    subcommand_->add_option("--name", name_, "the profile's name (shown in plans)")->default_str(name_);
    subcommand_->add_flag("--relative", relative_,
                          "fit relative residuals (noise proportional to the time) instead of absolute seconds (FasDL)");
    add_plot_option(*subcommand_, plot_, "the measured and fitted times against memory");
    add_format_option(*subcommand_, format_, {OutputFormat::table, OutputFormat::json},
                      "table (for people) or json (the profile document serverless plan --profile reads)");
  }

  int run(std::ostream& out) override { return fit(out); }

 private:
  int fit(std::ostream& out) {
    const auto positive = [](const char* option, double value) {
      if (!(value > 0) || !std::isfinite(value)) {
        throw usage_error(std::string(option) + " = " + detail::format_number(value) + ": must be a finite number greater than zero");
      }
    };
    if (!plot_.empty()) (void)check_plot_path(plot_);  // a bad path is bad input, before any work
    positive("--model-size-mb", model_size_mb_);
    positive("--samples-per-epoch", samples_per_epoch_);
    serverless::ServerlessProfile base;
    base.name = name_;
    detail::require_printable_name("--name", "name", name_);
    base.model_size_mb = model_size_mb_;
    base.samples_per_epoch = samples_per_epoch_;
    const serverless::ServerlessTrace trace =
        is_stdin(trace_path_) ? io::parse_serverless_trace(read_stdin("--trace", kMaxCsvFileBytes), std::string(kStdinName))
                              : io::read_serverless_trace(trace_path_);
    serverless::ServerlessFitOptions options;
    options.relative_residuals = relative_;
    const serverless::ServerlessFitResult result = serverless::fit_serverless_profile(trace, base, options);
    const bool ok = result.status == FitStatus::converged;
    // The answer is printed whatever becomes of the plot; a plot that fails is a warning and exit 4.
    const std::string plot_failure = ok && !plot_.empty() ? plot(trace, result) : std::string();
    if (!plot_failure.empty()) warn(plot_failed_warning(plot_failure));
    if (format_ == OutputFormat::json) {
      out << document(result).dump(2) << '\n';
    } else {
      print(out, trace, result);
    }
    if (!ok) return fit_cli::kExitFitFailed;
    return plot_failure.empty() ? 0 : kExitPlotFailed;
  }

  void print(std::ostream& out, const serverless::ServerlessTrace& trace, const serverless::ServerlessFitResult& r) const {
    using fit_cli::number;
    const std::string source = is_stdin(trace_path_) ? std::string(kStdinName) : trace_path_;
    out << fmt::format("spotdnn serverless fit: {} ({} rows, {} residuals)\n\n", one_line(source), trace.samples.size(),
                       r.relative_residuals ? "relative" : "absolute");
    TextTable profile({"profile", "value"}, 2);
    profile.add_row({"name", one_line(r.profile.name)});
    profile.add_row({"model size S", fmt::format("{} MB", number(r.profile.model_size_mb))});
    profile.add_row({"samples per epoch D", number(r.profile.samples_per_epoch)});
    profile.add_row({"T_train(B, M)", "a*(B + b)/(M + m) s"});
    profile.add_row({"T_trans(M)", "k1*M^k2 s"});
    profile.print(out);
    out << '\n';
    TextTable table({"coefficient", "estimate", "std. error", "95% CI low", "95% CI high", "unit", "note"});
    const std::map<std::string, std::string> units = {{"a", "s*MB/sample"}, {"b", "samples"}, {"m", "MB"}, {"k1", "s"}, {"k2", "-"}};
    for (const FitParameter& p : r.parameters) {
      table.add_row({p.name, number(p.value), number(p.standard_error), number(p.ci95_low), number(p.ci95_high), units.at(p.name),
                     fit_cli::parameter_note(p)});
    }
    table.print(out);
    out << fit_cli::uncertain_footnote(r) << '\n';
    TextTable figures({"fit", "status", "rows", "RMSE (s)", "R squared", "iterations"});
    for (const auto& [label, part] : {std::pair<const char*, const FitResult*>{"train time", &r.train},
                                      std::pair<const char*, const FitResult*>{"transform time", &r.transform}}) {
      figures.add_row({label, std::string(to_string(part->status)), std::to_string(part->observations), number(part->rmse),
                       number(part->r_squared), fmt::format("{} (best of {} starts)", part->iterations, part->starts)});
    }
    figures.print(out);
    out << "\n  train time: " << one_line(r.train.message) << "\n  transform time: " << one_line(r.transform.message) << '\n';
    if (r.status == FitStatus::converged) {
      out << "\n  use --format json > PROFILE.json for the profile document (spotdnn serverless plan --profile PROFILE.json)\n";
    }
  }

  /// The profile document with the flags of uncertain estimates (standard error larger than the estimate's
  /// magnitude): "uncertain" in each coefficient's report and the list "uncertain_parameters" in "fit".
  [[nodiscard]] static io::Json document(const serverless::ServerlessFitResult& r) {
    io::Json json = io::serverless_profile_document(r);
    io::Json& report = json.at("fit");
    for (const FitParameter& p : r.parameters) {
      if (report.contains(p.name) && report.at(p.name).is_object()) report[p.name]["uncertain"] = p.uncertain();
    }
    report["uncertain_parameters"] = r.uncertain_parameters();
    return json;
  }

  /// Train times against memory, one colour per batch, with the fitted curves; transform times on the right.
  /// Returns why the plot failed (empty when drawn).
  [[nodiscard]] std::string plot(const serverless::ServerlessTrace& trace, const serverless::ServerlessFitResult& r) const {
    const serverless::ServerlessProfile& p = r.profile;
    double low = serverless::kLambdaMaxTraceMemoryMb, high = 1;
    std::map<double, std::string> by_batch;
    std::string transform;
    for (const serverless::ServerlessSample& s : trace.samples) {
      low = std::min(low, s.memory_mb);
      high = std::max(high, s.memory_mb);
      if (s.train_time_s) by_batch[*s.batch] += plot_number(s.memory_mb) + " " + plot_number(*s.train_time_s) + "\n";
      if (s.transform_time_s) transform += plot_number(s.memory_mb) + " " + plot_number(*s.transform_time_s) + "\n";
    }
    constexpr const char* kColours[] = {"1f77b4", "d62728", "2ca02c", "ff7f0e", "9467bd", "8c564b", "e377c2", "7f7f7f", "bcbd22", "17becf"};
    std::string script = plot_preamble(*plot_format_of(plot_), 1400, 600);
    std::string train_plots;
    int index = 0;
    for (const auto& [batch, rows] : by_batch) {
      const std::string data = "$train" + std::to_string(index), curve = "$curve" + std::to_string(index);
      script += data + " << EOD\n" + rows + "EOD\n" + curve + " << EOD\n";
      for (int step = 0; step <= 100; ++step) {
        const double memory = low + (high - low) * step / 100.0;
        script += plot_number(memory) + " " + plot_number(serverless::train_time_s<double>(batch, memory, p.a, p.b, p.m)) + "\n";
      }
      script += "EOD\n";
      const std::string colour = kColours[index % 10];
      train_plots += fmt::format("{}{} using 1:2 with points pt 7 ps 0.8 lc rgb '#{}' title {} noenhanced, \\\n     {} using 1:2 with lines lc rgb '#{}' notitle",
                                 train_plots.empty() ? "" : ", \\\n     ", data, colour,
                                 gnuplot_string("batch " + detail::format_number(batch)), curve, colour);
      ++index;
    }
    script += "$transform << EOD\n" + transform + "EOD\n$transform_curve << EOD\n";
    for (int step = 0; step <= 100; ++step) {
      const double memory = low + (high - low) * step / 100.0;
      script += plot_number(memory) + " " + plot_number(serverless::transform_time_s<double>(memory, p.k1, p.k2)) + "\n";
    }
    script += "EOD\nset multiplot layout 1,2\nset xlabel 'function memory M [MB]'\n";
    script += "set title " + gnuplot_string(fmt::format("train time: a (B + b)/(M + m), RMSE {} s, R² {}", fit_cli::number(r.train.rmse),
                                                        fit_cli::number(r.train.r_squared))) + " noenhanced\n";
    script += "set ylabel 'train time of one batch [s]'\nplot " + train_plots + "\n";
    script += "set title " + gnuplot_string(fmt::format("transform time: k1 M^k2, RMSE {} s, R² {}", fit_cli::number(r.transform.rmse),
                                                        fit_cli::number(r.transform.r_squared))) + " noenhanced\n";
    script += "set ylabel 'transform time [s]'\nplot $transform using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'measured', \\\n"
              "     $transform_curve using 1:2 with lines lc rgb '#000000' title 'fitted'\nunset multiplot\n";
    return draw_plot(script, plot_);
  }

  std::string trace_path_;
  double model_size_mb_ = 0;
  double samples_per_epoch_ = 0;
  std::string name_ = "serverless-profile";
  bool relative_ = false;
  std::string plot_;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
