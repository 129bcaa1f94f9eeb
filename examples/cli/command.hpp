#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/command.hpp What every `spotdnn` subcommand shares: the Command interface and loading the
/// workload and catalog (the ResNet-110 preset unless --workload/--catalog are given; `-` reads stdin).

#include <charconv>
#include <cstdio>
#include <cstdint>
#include <map>
#include <ostream>
#include <system_error>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/io/json.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/model/profile_estimate.hpp>
#include <spotdnn/presets.hpp>

#include "options.hpp"

namespace spotdnn::cli {

/// Exit code of a valid question that has no answer (an infeasible plan, a fit that is not identifiable);
/// the output says why. Bad input exits 2.
inline constexpr int kExitNoAnswer = 3;

/// Bad command-line input that no library call caught: main() prints it on one line and exits 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A subcommand. main() calls attach() for every command, parses, then run() on the chosen one.
/// run() writes its whole result to `out`; main() prints it only when run() returns, so a failure never
/// leaves partial output on stdout. Throwing spotdnn::invalid_argument or usage_error means exit code 2.
class Command {
 public:
  virtual ~Command() = default;
  /// Declares the subcommand on `parent` and keeps it in `subcommand_`.
  virtual void attach(CLI::App& parent) = 0;
  /// Runs the command; returns the exit code.
  virtual int run(std::ostream& out) = 0;
  [[nodiscard]] bool chosen() const { return subcommand_ != nullptr && subcommand_->parsed(); }
  /// The command's options as parsed (null before attach()): what error messages name.
  [[nodiscard]] const CLI::App* app() const { return subcommand_; }
  /// The command's words below the program ("plan", "serverless plan"), as messages name it.
  [[nodiscard]] std::string name() const {
    std::string words;
    for (const CLI::App* app = subcommand_; app != nullptr && app->get_parent() != nullptr; app = app->get_parent()) {
      words = app->get_name() + (words.empty() ? "" : " " + words);
    }
    return words;
  }

  /// Prints "spotdnn COMMAND: warning: TEXT" as one line on stderr (control characters escaped). A warning
  /// never changes the exit code or stdout: it tells a person what the answer rests on (stale prices, an
  /// unknown quota, an estimated profile).
  void warn(const std::string& text) const {
    std::fprintf(stderr, "spotdnn %s: warning: %s\n", name().c_str(), detail::escape_for_message(text).c_str());
  }

 protected:
  CLI::App* subcommand_ = nullptr;
};

/// Refuses a leading minus sign, which CLI11 would otherwise wrap into a huge unsigned value (--seed -1).
/// Also refuses anything but digits and values above 2^64 - 1 (which it would saturate).
inline CLI::Validator non_negative_whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || parsed.ptr != text.data() + text.size() || parsed.ec != std::errc()) {
          return "Value " + text + ": give a whole number from 0 to 18446744073709551615";
        }
        return {};
      },
      "UINT", "non-negative whole number");
}

/// A file path option that, when given, must not be empty (an empty --workload "" would otherwise fall
/// back to the preset silently).
inline CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? std::string("give a file path, not an empty string") : std::string(); },
      "FILE", "non-empty path");
}

/// A text option that, when given, must not be empty: `what` says what to give ("an instance type"), and
/// `instead` what leaving the option out does.
inline CLI::Validator non_empty_text(const std::string& what, const std::string& instead) {
  return CLI::Validator(
      [what, instead](std::string& text) {
        return text.empty() ? "\"\": give " + what + ", not an empty string (" + instead + ")" : std::string();
      },
      "");
}

/// --workload FILE.json and --catalog FILE.json (`-`: standard input, for one of them); without them, the
/// embedded ResNet-110 preset. --estimate-profiles-from TYPE gives every catalog type the workload has no
/// profile for an estimate scaled from TYPE's profile by GPU peak throughput (docs/model.md eq. (10)),
/// marked estimated_from; without it those types cannot be planned, and load(command) warns naming them.
///
/// `plan`, `frontier` and `compare` take --catalog once per region (several_catalogs, set before
/// add_to()): load_each() gives one model per catalog. Every other command takes one, and refuses more with a usage error.
struct ModelOptions {
  std::string workload_path;
  std::vector<std::string> catalog_paths;  ///< every --catalog, in order (none: the preset)
  std::string estimate_profiles_from;  ///< --estimate-profiles-from TYPE; empty: no estimates
  bool several_catalogs = false;  ///< --catalog may be given once per region (plan, frontier, compare)

  /// The workload (estimates filled in) and catalog, and the warnings a command prints about them.
  struct Inputs {
    Workload workload;
    Catalog catalog;
    std::vector<std::string> warnings;
  };

  void add_to(CLI::App& app) {
    app.add_option("--workload", workload_path, "workload JSON, - for stdin (default: the embedded ResNet-110 preset)")
        ->check(non_empty_path());
    app.add_option("--catalog", catalog_paths,
                   several_catalogs ? "catalog JSON, - for stdin (default: the embedded us-east-1 preset); give it once per "
                                      "region to plan in every region and keep the cheapest"
                                    : "catalog JSON, - for stdin (default: the embedded us-east-1 preset)")
        ->check(non_empty_path())
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_option("--estimate-profiles-from", estimate_profiles_from,
                   "estimate the profile of every catalog type the workload lacks from this profiled type's, scaled by "
                   "published GPU peak throughput (marked estimated, not measured; fit throughput replaces it)")
        ->type_name("TYPE")
        ->check(CLI::Validator(
            [](std::string& text) { return text.empty() ? std::string("give a profiled instance type, not an empty string") : std::string(); },
            "TYPE", "non-empty instance type"));
  }

  /// Throws usage_error (exit 2) when --catalog was given more than once to a command other than plan.
  /// The first --catalog; empty: the preset.
  [[nodiscard]] std::string first_catalog_path() const { return catalog_paths.empty() ? std::string() : catalog_paths.front(); }

  void require_single_catalog() const {
    if (several_catalogs || catalog_paths.size() <= 1) return;
    throw usage_error("--catalog given " + std::to_string(catalog_paths.size()) +
                      " times: only plan, frontier and compare plan across regions (one catalog per region); give one catalog");
  }

  /// (option, value) of both (every --catalog), for require_one_stdin together with a command's other
  /// file options.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> file_options() const {
    require_single_catalog();
    std::vector<std::pair<std::string, std::string>> files = {{"--workload", workload_path}};
    if (catalog_paths.empty()) files.emplace_back("--catalog", std::string());
    for (const std::string& path : catalog_paths) files.emplace_back("--catalog", path);
    return files;
  }

  /// The workload as read (no estimates).
  [[nodiscard]] Workload load_workload() const {
    require_single_catalog();
    if (workload_path.empty()) return presets::resnet110_workload();
    return read_json_input(
        "--workload", workload_path,
        [](const io::Json& json, const std::string& file) {
          return io::workload_from_json(json, "workload", "read_workload_file(" + file + ")");
        },
        [](const std::string& path) { return io::read_workload_file(path); });
  }
  [[nodiscard]] Catalog load_catalog() const {
    require_single_catalog();
    return load_catalog_at(first_catalog_path());
  }
  /// The catalog at `path` (empty: the preset).
  [[nodiscard]] static Catalog load_catalog_at(const std::string& path) {
    if (path.empty()) return presets::resnet110_catalog();
    return read_json_input(
        "--catalog", path,
        [](const io::Json& json, const std::string& file) {
          return io::catalog_from_json(json, "catalog", "read_catalog_file(" + file + ")");
        },
        [](const std::string& path) { return io::read_catalog_file(path); });
  }

  /// Reads both, fills missing profiles when --estimate-profiles-from is given (a bad TYPE throws
  /// spotdnn::invalid_argument naming it), and says in `warnings` which catalog types have no profile
  /// (without the option) and which have an estimated one, and from what.
  [[nodiscard]] Inputs load_inputs() const { return inputs_of(load_workload(), load_catalog()); }

  /// `workload` with --estimate-profiles-from's estimates for `catalog`, and the warnings about both.
  [[nodiscard]] Inputs inputs_of(Workload workload, Catalog catalog) const {
    Inputs inputs{std::move(workload), std::move(catalog), {}};
    if (!estimate_profiles_from.empty()) {
      inputs.workload = estimate_profiles(std::move(inputs.workload), inputs.catalog, estimate_profiles_from);
    }
    const std::vector<std::string> missing = types_without_profile(inputs.workload, inputs.catalog);
    if (!missing.empty() && !estimate_profiles_from.empty()) {
      std::string why;
      for (const std::string& name : missing) why.append(why.empty() ? "" : "; ").append(why_not_estimable(inputs.catalog.at(name)));
      inputs.warnings.push_back("not estimated by GPU peak, so not planned: " + why + "; measure them with `spotdnn fit throughput`");
    } else if (!missing.empty()) {
      std::string names;
      for (const std::string& name : missing) names.append(names.empty() ? "" : ", ").append(name);
      inputs.warnings.push_back("no profile for " + names + " in workload " + inputs.workload.name +
                                ": not planned; measure them with `spotdnn fit throughput --estimate-profiles-from TYPE` "
                                "on a throughput trace (the estimate is the fit's start), or give --estimate-profiles-from "
                                "TYPE for a GPU-peak estimate");
    }
    std::string estimated;
    for (const InstanceType& type : inputs.catalog.instance_types) {
      const auto found = inputs.workload.profiles.find(type.name);
      if (found == inputs.workload.profiles.end() || found->second.estimated_from.empty()) continue;
      estimated.append(estimated.empty() ? "" : ", ").append(type.name + " from " + found->second.estimated_from);
    }
    if (!estimated.empty()) {
      inputs.warnings.push_back("estimated profiles (GPU peak, not measured): " + estimated +
                                "; `spotdnn fit throughput` on a throughput trace replaces them");
    }
    // A type counted by a quota group whose value the catalog does not give: planned without that limit.
    std::map<std::string, std::string> unknown_groups;  // code -> the types it counts
    for (const InstanceType& type : inputs.catalog.instance_types) {
      const std::string& code = type.quota_group_code(type.market);
      if (code.empty() || inputs.catalog.quota_group(code) != nullptr) continue;
      if (inputs.workload.profiles.count(type.name) == 0) continue;
      std::string& names = unknown_groups[code];
      names.append(names.empty() ? "" : ", ").append(type.name);
    }
    for (const auto& [code, names] : unknown_groups) {
      inputs.warnings.push_back("quota group " + code + " (" + names + ") has no known value: planned without that vCPU limit; " +
                                "give it in the catalog's quota_groups (spotdnn catalog import --quotas)");
    }
    return inputs;
  }

  /// Loads, estimates (with --estimate-profiles-from), validates and binds both; prints load_inputs()'s
  /// warnings through `command` (throws spotdnn::invalid_argument naming the bad field; a
  /// CLI::ValidationError when both are `-`).
  [[nodiscard]] PerformanceModel load(const Command& command) const {
    require_one_stdin(file_options());
    Inputs inputs = load_inputs();
    for (const std::string& warning : inputs.warnings) command.warn(warning);
    return PerformanceModel(std::move(inputs.workload), std::move(inputs.catalog));
  }

  /// One model per --catalog (plan across regions; the preset alone without --catalog), each loaded,
  /// estimated and validated as load(command) does; with several catalogs each warning names its region.
  [[nodiscard]] std::vector<PerformanceModel> load_each(const Command& command) const {
    require_one_stdin(file_options());
    const Workload workload = load_workload();
    std::vector<PerformanceModel> models;
    const std::vector<std::string> paths = catalog_paths.empty() ? std::vector<std::string>{std::string()} : catalog_paths;
    for (const std::string& path : paths) {
      Inputs inputs = inputs_of(workload, load_catalog_at(path));
      for (const std::string& warning : inputs.warnings) {
        command.warn(paths.size() > 1 ? "region " + inputs.catalog.region + ": " + warning : warning);
      }
      models.emplace_back(std::move(inputs.workload), std::move(inputs.catalog));
    }
    return models;
  }

  /// The same without printing the warnings (for callers that report them their own way).
  [[nodiscard]] PerformanceModel load() const {
    require_one_stdin(file_options());
    Inputs inputs = load_inputs();
    return PerformanceModel(std::move(inputs.workload), std::move(inputs.catalog));
  }
};

}  // namespace spotdnn::cli
