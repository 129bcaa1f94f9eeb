#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/serverless_command.hpp `spotdnn serverless plan`: the cheapest FasDL configuration (W Lambda
/// functions of M MB, K aggregators) finishing the epochs by the deadline, by the exact search, exhaustive
/// enumeration or FasDL's greedy search; the iteration count is rounded up, so that the plan trains at least
/// the epochs asked, unless --fasdl-rounding reproduces FasDL's rounding down. (`spotdnn serverless fit` is
/// the fitting program's.)

#include <cmath>
#include <optional>
#include <ostream>
#include <string>

#include <fmt/format.h>

#include <spotdnn/io/serverless_plan_json.hpp>
#include <spotdnn/serverless/exact_search.hpp>
#include <spotdnn/serverless/exhaustive_search.hpp>
#include <spotdnn/serverless/fasdl_search.hpp>

#include "command.hpp"
#include "csv_output.hpp"
#include "options.hpp"
#include "progress_line.hpp"
#include "serverless_options.hpp"
#include "table.hpp"

namespace spotdnn::cli {

/// Runs the planner `algorithm` names.
inline serverless::ServerlessPlanResult plan_serverless(const serverless::ServerlessModel& model,
                                                        const serverless::ServerlessPlanOptions& options,
                                                        serverless::ServerlessAlgorithm algorithm,
                                                        const ProgressCallback& progress = {}) {
  switch (algorithm) {
    case serverless::ServerlessAlgorithm::exhaustive: return serverless::plan_serverless_exhaustive(model, options, progress);
    case serverless::ServerlessAlgorithm::fasdl: return serverless::plan_serverless_fasdl(model, options, progress);
    case serverless::ServerlessAlgorithm::exact: break;
  }
  return serverless::plan_serverless_exact(model, options, progress);
}

/// "W 9 × 1536 MB, K 2".
inline std::string configuration_label(const serverless::ServerlessConfiguration& c) {
  return fmt::format("W {} × {} MB, K {}", c.workers, c.memory_mb, c.aggregators);
}

/// A sample count for a person: "500,000" when whole, else "1000.5".
inline std::string samples_text(double samples) {
  return samples == std::floor(samples) ? detail::format_count(samples) : detail::format_readable(samples);
}

/// "trains 251,713 of the 500,000 samples asked (50.3%): 5.03 of 10 epochs, fewer than asked" when the plan
/// trains less than asked (only under FasDL's rounding), else empty.
inline std::string fewer_samples_text(const serverless::ServerlessEstimate& e, double epochs) {
  if (!(e.samples_trained < e.samples_asked) || !(e.samples_asked > 0)) return {};
  const double share = e.samples_trained / e.samples_asked;
  return fmt::format("trains {} of the {} samples asked ({}%): {:.3g} of {} epochs, fewer than asked", samples_text(e.samples_trained),
                     samples_text(e.samples_asked), detail::format_fixed(100 * share, 1), share * epochs, detail::format_number(epochs));
}

/// The rows of one configuration's figures, for a person.
inline void add_estimate_rows(TextTable& table, const serverless::ServerlessEstimate& e) {
  table.add_row({"functions (W)", std::to_string(e.configuration.workers)});
  table.add_row({"memory per function", fmt::format("{} MB", e.configuration.memory_mb)});
  table.add_row({"aggregators (K)", std::to_string(e.configuration.aggregators)});
  table.add_row({"batch: aggregator / other", fmt::format("{} / {}", e.batch, e.non_aggregator_batch)});
  table.add_row({"iterations", std::to_string(e.iterations)});
  table.add_row({"iteration time", fmt::format("{:.4f} s", e.iteration_time_s)});
  table.add_row({"training time", format_duration(e.training_time_s)});
  table.add_row({"cost", format_usd(e.cost.total_usd)});
  table.add_row({"  Lambda (with requests)", format_usd(e.cost.lambda_usd)});
  table.add_row({"  S3 requests", format_usd(e.cost.s3_usd)});
  table.add_row({"samples trained (I × global batch)", samples_text(e.samples_trained)});
  table.add_row({"samples asked (D × E)", samples_text(e.samples_asked)});
  if (e.extrapolated) table.add_row({"S3 transfer times", "extrapolated beyond the measured table"});
}

/// One CSV row of a serverless answer to a question asking `samples_asked` samples (D·E) under `rounding`.
inline void add_serverless_columns(CsvTable& csv, const serverless::ServerlessPlanResult& r, double samples_asked,
                                   serverless::IterationRounding rounding) {
  const bool has = r.has_plan();
  const serverless::ServerlessEstimate& e = r.plan;
  const auto whole = [has](auto value) { return has ? std::to_string(value) : std::string(); };
  const auto number = [has](double value) { return has ? csv_number(value) : std::string(); };
  csv.add("status", std::string(to_string(r.status)));
  csv.add("algorithm", std::string(to_string(r.algorithm)));
  csv.add("deadline_s", csv_number(r.deadline_s));
  csv.add("workers", whole(e.configuration.workers));
  csv.add("memory_mb", whole(e.configuration.memory_mb));
  csv.add("aggregators", whole(e.configuration.aggregators));
  csv.add("batch", whole(e.batch));
  csv.add("non_aggregator_batch", whole(e.non_aggregator_batch));
  csv.add("iterations", whole(e.iterations));
  csv.add("iteration_time_s", number(e.iteration_time_s));
  csv.add("training_time_s", number(e.training_time_s));
  csv.add("cost_usd", number(e.cost.total_usd));
  csv.add("lambda_cost_usd", number(e.cost.lambda_usd));
  csv.add("s3_cost_usd", number(e.cost.s3_usd));
  csv.add("samples_trained", number(e.samples_trained));
  csv.add("samples_asked", csv_number(samples_asked));
  csv.add("extrapolated", has ? (e.extrapolated ? "true" : "false") : std::string());
  csv.add("iteration_rounding", std::string(to_string(rounding)));
  csv.add("message", r.message);
}

class ServerlessCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    CLI::App* group = parent.add_subcommand("serverless", "plan (and fit) FasDL training on AWS Lambda + S3: serverless plan, serverless fit");
    group->require_subcommand(1);
    subcommand_ = group->add_subcommand("plan", "find the cheapest Lambda configuration (functions, memory, aggregators) meeting a deadline");
    // Declared for the command list, help and suggestions; `spotdnn serverless fit` runs spotdnn-fit.
    group->add_subcommand("fit", "fit a serverless profile (a, b, m, k1, k2) to Lambda profiling runs");
    subcommand_->add_option("--epochs", epochs_, "epochs to train (E; may be fractional): samples_per_epoch × E samples")->required();
    add_duration_option(*subcommand_, "--deadline", deadline_s_, "training-time limit: seconds or a duration (3000, 50m, 1h30m)")->required();
    subcommand_->add_option("--algorithm", algorithm_text_, "exact (default), fasdl (FasDL's greedy search) or exhaustive")->default_str("exact");
    options_.add_to(*subcommand_, "--profile");
    options_.add_rounding_to(*subcommand_);
    add_progress_options(*subcommand_, progress_mode_);
    add_format_option(*subcommand_, format_);
  }

  int run(std::ostream& out) override {
    const auto algorithm = serverless::serverless_algorithm_from_string(algorithm_text_);
    if (!algorithm) throw usage_error("--algorithm = \"" + algorithm_text_ + "\": expected exact, fasdl or exhaustive");
    require_one_stdin(options_.file_options());
    const serverless::ServerlessModel model = options_.model(options_.load_profile(), epochs_);
    const serverless::ServerlessPlanOptions plan_options = options_.plan_options(deadline_s_);
    ProgressLine progress(progress_mode_);
    const serverless::ServerlessPlanResult r = plan_serverless(model, plan_options, *algorithm, progress.callback());
    if (format_ == OutputFormat::json) {
      out << io::serverless_plan_document(r, model).dump(2) << '\n';
    } else if (format_ == OutputFormat::csv) {
      CsvTable csv;
      add_serverless_columns(csv, r, model.samples_to_train(), model.work().iteration_rounding);
      csv.print(out);
    } else {
      print_table(out, model, r);
    }
    return r.has_plan() ? 0 : kExitNoAnswer;
  }

 private:
  void print_table(std::ostream& out, const serverless::ServerlessModel& model, const serverless::ServerlessPlanResult& r) const {
    const bool fasdl_rounding = model.work().iteration_rounding == serverless::IterationRounding::fasdl_floor;
    out << fmt::format("spotdnn serverless plan: {}, {} epochs ({} samples), deadline {}, {} search, {} pricing{}\n\n",
                       model.profile().name, detail::format_number(model.work().epochs),
                       detail::format_readable(model.samples_to_train()), format_duration(r.deadline_s), to_string(r.algorithm),
                       model.work().pricing.fasdl ? "FasDL's" : "AWS", fasdl_rounding ? ", FasDL's rounding" : "");
    out << "  " << to_string(r.status) << ": " << r.message << "\n";
    if (!r.has_plan()) return;
    if (const std::string fewer = fewer_samples_text(r.plan, model.work().epochs); !fewer.empty()) {
      out << "  FasDL's rounding (--fasdl-rounding) rounds the iteration count down: the plan " << fewer << "\n";
    }
    TextTable table({"figure", "value"}, 2);
    add_estimate_rows(table, r.plan);
    out << '\n';
    table.print(out);
  }

  double epochs_ = 0;
  double deadline_s_ = 0;
  std::string algorithm_text_ = "exact";
  ServerlessOptions options_;
  ProgressMode progress_mode_ = ProgressMode::automatic;
  OutputFormat format_ = OutputFormat::table;
};

}  // namespace spotdnn::cli
