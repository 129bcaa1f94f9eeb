#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/workload_build_command.hpp `spotdnn workload build`: a complete workload document from the
/// training example's profiles (`ps_train.py --profile`, one per instance type), its loss trace and its
/// throughput trace (fit/workload_build.hpp), every figure shown with where it came from.
///
/// Output: a table of the figures (field, value, source, note) and the fits' summaries; with --format json
/// {"status", "message", "assumed": [fields], "figures": [...], "loss_fit": report, "throughput_fit": report
/// or null, "workload": the document `plan --workload` reads, "catalog": with the fitted B_ps under
/// --fit-ps-bandwidth, else null}; --output FILE writes the workload document (--catalog-output the catalog),
/// --workload-only prints just it (assumed figures then as one warning line on stderr). Exit codes: 0 built,
/// 2 bad input (one line on stderr naming the option or file and key), 3 a fit could not answer (the report
/// says why; no workload is written).

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <system_error>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include <spotdnn/fit.hpp>
#include <spotdnn/fit/workload_build.hpp>
#include <spotdnn/io/csv.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/io/training_profile_json.hpp>
#include <spotdnn/limits.hpp>

#include "command.hpp"
#include "fit_command.hpp"  // fit_cli::report_json, number, write_text_file, kExitFitFailed
#include "options.hpp"
#include "table.hpp"

namespace spotdnn::cli {

class WorkloadBuildCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    CLI::App* group = parent.add_subcommand("workload", "build a workload document from your own model's profiles: workload build");
    group->require_subcommand(1);
    subcommand_ = group->add_subcommand(
        "build", "a workload from training profiles (ps_train.py --profile), a loss trace and a throughput trace");
    subcommand_->add_option("--profile", profile_paths_, "a training profile JSON (one per instance type; give it once per type)")
        ->required()
        ->check(non_empty_path())
        ->type_name("FILE")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    subcommand_->add_option("--loss-trace", loss_trace_path_, "loss trace CSV: run,workers,weighted_batch,iteration,loss")
        ->required()
        ->check(non_empty_path())
        ->type_name("FILE");
    subcommand_->add_option("--throughput-trace", throughput_trace_path_,
                            "throughput trace CSV: cluster,iterations_per_s (fits the contention and B_req)")
        ->check(non_empty_path())
        ->type_name("FILE");
    subcommand_->add_option("--catalog", catalog_path_, "catalog JSON with every profiled type (default: the embedded us-east-1 preset)")
        ->check(non_empty_path())
        ->type_name("FILE");
    subcommand_->add_option("--precision", precision_, "which measurements to use: fp32, tf32, bf16 or fp16")->default_str(precision_);
    subcommand_->add_option("--batch-per-gpu", batch_text_,
                            "the per-GPU batch the traces' runs used: N for every type, or TYPE=N,TYPE=N (default: per type, "
                            "the largest measured)")
        ->type_name("N|TYPE=N,...");
    subcommand_->add_option("--required-bandwidth", required_bandwidth_,
                            "hold B_req at this many bytes/s instead of fitting it (needed without --throughput-trace)")
        ->type_name("BYTES_PER_S");
    subcommand_->add_flag("--fit-ps-bandwidth", fit_ps_bandwidth_,
                          "fit the parameter server's bandwidth B_ps to the throughput trace too (its effective rate is often far "
                          "below the catalog's NIC figure); the catalog then carries it: --catalog-output");
    subcommand_->add_option("--catalog-output", catalog_output_,
                            "with --fit-ps-bandwidth: write the catalog with the fitted B_ps (what plan --catalog reads) to FILE")
        ->check(non_empty_path())
        ->type_name("FILE");
    subcommand_->add_option("--form", form_text_, "loss model form: seed (4 coefficients) or cc (5)")->default_str(form_text_);
    subcommand_->add_option("--starts", starts_, "local solves of the loss fit; the lowest cost wins")->default_str("4");
    subcommand_->add_option("--name", name_, "the workload's name (default: the profiles' model)");
    subcommand_->add_option("--output", output_, "write the workload JSON (what plan --workload reads) to FILE")->type_name("FILE");
    subcommand_->add_flag("--workload-only", workload_only_, "print only the workload JSON on stdout");
    add_format_option(*subcommand_, format_, {OutputFormat::table, OutputFormat::json});
  }

  int run(std::ostream& out) override {
    std::vector<std::pair<std::string, std::string>> files;
    for (const std::string& path : profile_paths_) files.emplace_back("--profile", path);
    files.emplace_back("--loss-trace", loss_trace_path_);
    if (!throughput_trace_path_.empty()) files.emplace_back("--throughput-trace", throughput_trace_path_);
    if (!catalog_path_.empty()) files.emplace_back("--catalog", catalog_path_);
    for (const auto& [option, path] : files) {
      if (is_stdin(path)) throw usage_error(option + " = -: workload build reads files only; give a path");
    }
    if (profile_paths_.size() > std::size_t(kMaxTrainingProfiles)) {
      throw usage_error("--profile given " + std::to_string(profile_paths_.size()) + " times: at most " +
                        std::to_string(kMaxTrainingProfiles));
    }
    WorkloadBuildOptions options;
    options.name = name_;
    if (!name_.empty()) detail::require_printable_name("--name", "name", name_);
    if (!is_training_precision(precision_)) throw usage_error("--precision = \"" + precision_ + "\": expected fp32, tf32, bf16 or fp16");
    options.precision = precision_;
    if (!batch_text_.empty()) parse_batches(options);
    if (required_bandwidth_) {
      if (!(*required_bandwidth_ > 0) || !std::isfinite(*required_bandwidth_)) {
        throw usage_error("--required-bandwidth = " + detail::format_number(*required_bandwidth_) + ": must be a positive number of bytes/s");
      }
      options.required_bandwidth_bytes_per_s = *required_bandwidth_;
    } else if (throughput_trace_path_.empty()) {
      throw usage_error("--throughput-trace: B_req is fitted to a throughput trace; give one (or hold B_req with --required-bandwidth)");
    }
    if (fit_ps_bandwidth_ && throughput_trace_path_.empty()) {
      throw usage_error("--fit-ps-bandwidth: B_ps is fitted to a throughput trace; give one with --throughput-trace");
    }
    if (!catalog_output_.empty() && !fit_ps_bandwidth_) {
      throw usage_error("--catalog-output = \"" + catalog_output_ + "\": only with --fit-ps-bandwidth (the catalog is unchanged otherwise)");
    }
    options.fit_ps_bandwidth = fit_ps_bandwidth_;
    if (!output_.empty() && output_ == catalog_output_) {
      throw usage_error("--catalog-output = \"" + catalog_output_ + "\": the same file as --output; give two paths");
    }
    check_output_directory("--output", output_);  // before the fits: no half-written pair of outputs
    check_output_directory("--catalog-output", catalog_output_);
    const auto form = loss_form_from_string(form_text_);
    if (!form) throw usage_error("--form = \"" + form_text_ + "\": expected seed or cc");
    options.loss.form = *form;
    if (starts_ < 1 || starts_ > kMaxFitStarts) {
      throw usage_error("--starts = " + std::to_string(starts_) + ": must be from 1 to " + std::to_string(kMaxFitStarts));
    }
    options.loss.starts = starts_;

    std::vector<TrainingProfile> profiles;
    for (const std::string& path : profile_paths_) profiles.push_back(io::read_training_profile_file(path));
    const LossTable loss = read_loss_table(loss_trace_path_);
    std::optional<ThroughputTrace> throughput;
    if (!throughput_trace_path_.empty()) throughput = read_throughput_trace(throughput_trace_path_);
    const Catalog catalog = ModelOptions::load_catalog_at(catalog_path_);
    const WorkloadBuild build = build_workload(profiles, loss, throughput ? &*throughput : nullptr, catalog, options);
    return finish(out, build);
  }

 private:
  /// An output path whose directory is missing or not writable, or that names a directory, fails now,
  /// naming the option (the writes come after the fits; one failing there would leave the other written).
  static void check_output_directory(const std::string& option, const std::string& path) {
    if (path.empty()) return;
    std::error_code error;
    const std::filesystem::path file(path);
    const std::filesystem::path directory = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
    if (std::filesystem::is_directory(file, error)) throw usage_error("cannot write \"" + path + "\" (" + option + "): a directory");
    if (!std::filesystem::is_directory(directory, error) || ::access(directory.c_str(), W_OK) != 0) {
      throw usage_error("cannot write \"" + path + "\" (" + option + "): its directory is missing or not writable");
    }
  }

  /// --batch-per-gpu: N, or TYPE=N entries separated by commas.
  void parse_batches(WorkloadBuildOptions& options) const {
    auto batch = [&](const std::string& text) {
      int value = 0;
      const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() || value < 1 || value > kMaxBatchPerGpu) {
        throw usage_error("--batch-per-gpu = \"" + batch_text_ + "\": \"" + text + "\" is not a whole number from 1 to " +
                          std::to_string(kMaxBatchPerGpu));
      }
      return value;
    };
    if (batch_text_.find('=') == std::string::npos) {
      options.batch_per_gpu = batch(batch_text_);
      return;
    }
    std::size_t start = 0;
    while (start <= batch_text_.size()) {
      const std::size_t end = std::min(batch_text_.find(',', start), batch_text_.size());
      const std::string entry = batch_text_.substr(start, end - start);
      const std::size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw usage_error("--batch-per-gpu = \"" + batch_text_ + "\": give N, or TYPE=N entries separated by commas");
      }
      const std::string type = entry.substr(0, eq);
      if (!options.batch_per_gpu_by_type.emplace(type, batch(entry.substr(eq + 1))).second) {
        throw usage_error("--batch-per-gpu = \"" + batch_text_ + "\": " + type + " is given twice");
      }
      start = end + 1;
    }
  }

  int finish(std::ostream& out, const WorkloadBuild& build) {
    const bool ok = build.ok();
    if (ok && !output_.empty()) fit_cli::write_text_file(output_, io::to_json(build.workload).dump(2) + "\n");
    if (ok && !catalog_output_.empty()) fit_cli::write_text_file(catalog_output_, io::to_json(build.catalog).dump(2) + "\n");
    if (workload_only_) {
      if (!ok) {
        std::fprintf(stderr, "spotdnn %s: %s: %s\n", name().c_str(), std::string(to_string(build.status)).c_str(),
                     detail::escape_for_message(build.message).c_str());
        return fit_cli::kExitFitFailed;
      }
      if (!build.assumed().empty()) warn(build.message);
      if (fit_ps_bandwidth_ && catalog_output_.empty()) warn("the fitted B_ps is in the catalog, not the workload: give --catalog-output FILE");
      out << io::to_json(build.workload).dump(2) << '\n';
      return 0;
    }
    if (format_ == OutputFormat::json) {
      io::Json figures = io::Json::array();
      for (const WorkloadFigure& f : build.figures) {
        figures.push_back({{"field", f.field}, {"value", io::number_or_null(f.value)}, {"source", f.source}, {"note", f.note}});
      }
      io::Json json = {{"status", std::string(to_string(build.status))},
                       {"message", build.message},
                       {"assumed", build.assumed()},
                       {"figures", figures},
                       {"loss_fit", fit_cli::report_json(build.loss_fit)},
                       {"throughput_fit", build.throughput_fit ? fit_cli::report_json(*build.throughput_fit) : io::Json(nullptr)}};
      json["workload"] = ok ? io::to_json(build.workload) : io::Json(nullptr);
      json["catalog"] = ok && fit_ps_bandwidth_ ? io::to_json(build.catalog) : io::Json(nullptr);
      out << json.dump(2) << '\n';
      return ok ? 0 : fit_cli::kExitFitFailed;
    }
    out << "spotdnn workload build: " << (build.workload.name.empty() ? std::string("workload") : build.workload.name) << "\n\n";
    TextTable table({"field", "source", "value", "note"}, 2, /*last_left_aligned=*/true);
    for (const WorkloadFigure& f : build.figures) table.add_row({f.field, f.source, fit_cli::number(f.value), f.note});
    table.print(out);
    auto summary = [&](const char* what, const FitResult& fit) {
      out << fmt::format("\n  {}: {}, {} observations, RMSE {}, R squared {}: {}\n", what, to_string(fit.status), fit.observations,
                         fit_cli::number(fit.rmse), fit_cli::number(fit.r_squared), fit.message);
    };
    summary("loss fit", build.loss_fit);
    if (build.throughput_fit) summary("throughput fit", *build.throughput_fit);
    out << "\n  " << to_string(build.status) << ": " << build.message << '\n';
    if (ok && output_.empty()) out << "\n  use --output FILE (or --workload-only) for the workload JSON, then plan --workload FILE\n";
    if (ok && fit_ps_bandwidth_ && catalog_output_.empty()) {
      out << "  B_ps is in the catalog, not the workload: use --catalog-output FILE, then plan --catalog FILE\n";
    }
    return ok ? 0 : fit_cli::kExitFitFailed;
  }

  std::vector<std::string> profile_paths_;
  std::string loss_trace_path_;
  std::string throughput_trace_path_;
  std::string catalog_path_;
  std::string precision_ = "fp32";
  std::string batch_text_;
  std::optional<double> required_bandwidth_;
  std::string form_text_ = "seed";
  int starts_ = 4;
  std::string name_;
  std::string output_;
  bool workload_only_ = false;
  bool fit_ps_bandwidth_ = false;
  std::string catalog_output_;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
