#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/serverless_options.hpp The options that define a serverless question, shared by `spotdnn
/// serverless plan` and `spotdnn compare`: the profile, the batch rules, the memory grid, the transfer
/// table and the pricing (docs/model.md section 4).

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include <spotdnn/io/serverless_profile_json.hpp>
#include <spotdnn/io/serverless_transfer_csv.hpp>
#include <spotdnn/serverless/serverless_model.hpp>
#include <spotdnn/serverless/serverless_plan.hpp>

#include "options.hpp"

namespace spotdnn::cli {

/// The serverless options of a command (all but the work: epochs come from the command).
struct ServerlessOptions {
  std::string profile_path;
  std::string transfer_path;
  int max_global_batch = 1024;
  std::optional<int> batch;
  int min_memory_mb = serverless::kLambdaMinMemoryMb;
  int memory_step_mb = 64;
  int max_memory_mb = serverless::kLambdaMaxMemoryMb;
  bool fasdl_pricing = false;
  bool fasdl_rounding = false;  ///< --fasdl-rounding (serverless plan only): I = ⌊D·E/P⌋ as FasDL

  /// Declares the options; `profile_option` is the profile's option name (--profile, or
  /// --serverless-profile in compare).
  void add_to(CLI::App& app, const std::string& profile_option) {
    profile_option_ = profile_option;
    app.add_option(profile_option, profile_path,
                   "serverless profile, - for stdin: spotdnn serverless fit --format json (model size, samples per "
                   "epoch, a, b, m, k1, k2)")
        ->required()
        ->type_name("FILE");
    app.add_option("--max-global-batch", max_global_batch, "the most samples of one iteration over all functions (Bg)")
        ->default_str("1024")
        ->check(CLI::Range(1, 100000000));
    app.add_option("--batch", batch, "aggregator batch B (default: round(b/(1/0.8 - 1)) from the profile's b)")
        ->check(CLI::Range(1, 100000000));
    app.add_option("--min-memory-mb", min_memory_mb, "smallest Lambda memory searched (MB)")
        ->default_str("128")
        ->check(CLI::Range(serverless::kLambdaMinMemoryMb, serverless::kLambdaMaxMemoryMb));
    app.add_option("--memory-step-mb", memory_step_mb, "memory grid step (MB; 1 is Lambda's real lattice)")
        ->default_str("64")
        ->check(CLI::Range(1, serverless::kLambdaMaxMemoryMb));
    app.add_option("--max-memory-mb", max_memory_mb, "largest Lambda memory searched (MB)")
        ->default_str("10240")
        ->check(CLI::Range(serverless::kLambdaMinMemoryMb, serverless::kLambdaMaxMemoryMb));
    app.add_option("--transfer", transfer_path,
                   "measured S3 transfer table CSV (memory_mb,object_mb,upload_s,download_s), - for stdin; default: "
                   "the FasDL authors' measurements")
        ->type_name("FILE");
    app.add_flag("--fasdl-pricing", fasdl_pricing,
                 "price as FasDL's optimizer does ($1.64e-8 per MB-second, no request fee) instead of AWS's prices");
  }

  /// Declares --fasdl-rounding (serverless plan; compare keeps the default, so that both sides train the
  /// same work).
  void add_rounding_to(CLI::App& app) {
    app.add_flag("--fasdl-rounding", fasdl_rounding,
                 "reproduce FasDL's rounding down of the iteration count (trains less than --epochs)");
  }

  /// The (option, value) pairs of the file options, for require_one_stdin.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> file_options() const {
    return {{profile_option_, profile_path}, {"--transfer", transfer_path}};
  }

  [[nodiscard]] serverless::ServerlessProfile load_profile() const {
    return read_json_input(
        profile_option_, profile_path,
        [](const io::Json& json, const std::string& file) {
          return io::serverless_profile_from_json(json, "profile", "read_serverless_profile_file(" + file + ")");
        },
        [](const std::string& file) { return io::read_serverless_profile_file(file); });
  }

  /// The model of `profile` for `epochs` epochs (throws invalid_argument naming the bad field).
  [[nodiscard]] serverless::ServerlessModel model(const serverless::ServerlessProfile& profile, double epochs) const {
    serverless::ServerlessWork work;
    work.epochs = epochs;
    work.max_global_batch = max_global_batch;
    work.batch = batch;
    work.pricing = fasdl_pricing ? serverless::ServerlessPricing::fasdl_accounting() : serverless::ServerlessPricing::aws();
    work.iteration_rounding = fasdl_rounding ? serverless::IterationRounding::fasdl_floor : serverless::IterationRounding::up;
    std::shared_ptr<const serverless::TransferTable> transfer;
    if (!transfer_path.empty()) {
      transfer = std::make_shared<const serverless::TransferTable>(
          is_stdin(transfer_path) ? io::parse_transfer_table(read_stdin("--transfer", kMaxCsvFileBytes), std::string(kStdinName))
                                  : io::read_transfer_table(transfer_path));
    }
    return serverless::ServerlessModel(profile, work, transfer);
  }

  /// The question for `deadline_s` (validated: the memory grid's bounds in order).
  [[nodiscard]] serverless::ServerlessPlanOptions plan_options(double deadline_s) const {
    serverless::ServerlessPlanOptions o;
    o.deadline_s = deadline_s;
    o.min_memory_mb = min_memory_mb;
    o.memory_step_mb = memory_step_mb;
    o.max_memory_mb = max_memory_mb;
    if (max_memory_mb < min_memory_mb) {
      throw CLI::ValidationError("--max-memory-mb", std::to_string(max_memory_mb) + " is below --min-memory-mb " +
                                                        std::to_string(min_memory_mb));
    }
    o.validate();
    return o;
  }

 private:
  std::string profile_option_ = "--profile";
};

}  // namespace spotdnn::cli
