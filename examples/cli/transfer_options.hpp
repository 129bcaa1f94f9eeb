#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/transfer_options.hpp `--data-region R --dataset-gb G [--transfer-usd-per-gb P]` (plan, frontier,
/// compare): the cost of reading the dataset once from region R, G x P, added to a plan in any other
/// region (0 in R itself), with the keys, rows and columns that show it. One rule for every command:
/// the transfer is a per-region extra cost (choose_region's extra_cost_usd, region_frontier's), and a
/// plan's total is its cost plus its region's transfer.

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <spotdnn/catalog.hpp>
#include <spotdnn/detail/format.hpp>
#include <spotdnn/io/json.hpp>

#include "command.hpp"
#include "csv_output.hpp"
#include "table.hpp"

namespace spotdnn::cli {

/// The data-transfer options and what follows from them.
struct TransferOptions {
  std::string data_region;     ///< --data-region
  double dataset_gb = 0;       ///< --dataset-gb
  double usd_per_gb = 0.02;    ///< --transfer-usd-per-gb
  bool given = false;          ///< --data-region and --dataset-gb given (set by read)

  /// Adds the three options to `app`.
  void add_to(CLI::App& app) {
    app.add_option("--data-region", data_region,
                   "the region that holds the dataset: a plan in any other region pays for reading it from there, "
                   "--dataset-gb x --transfer-usd-per-gb, added to its cost (assumes the dataset is read across "
                   "regions once per run, then kept in the training region); needs --dataset-gb");
    app.add_option("--dataset-gb", dataset_gb, "with --data-region: the dataset's size in GB (> 0)");
    app.add_option("--transfer-usd-per-gb", usd_per_gb,
                   "with --data-region: USD per GB read from another region (default 0.02, AWS's published price for "
                   "\"Data Transfer OUT From Amazon EC2 To another AWS Region\" out of a US region, EC2 On-Demand "
                   "pricing page)")
        ->default_str("0.02");
  }

  /// Checks the options as `app` parsed them (usage_error, exit 2): --data-region and --dataset-gb go
  /// together, --transfer-usd-per-gb only with them, the region a name, the size finite and > 0, the price
  /// finite and >= 0. `pinned_region` (plan's --region value), when given and the option was, is checked
  /// as a region name between the pairing and the values.
  void read(const CLI::App& app, const std::string* pinned_region = nullptr) {
    const bool region = app.count("--data-region") > 0;
    const bool size = app.count("--dataset-gb") > 0;
    if (region != size) {
      throw usage_error(region ? "--data-region needs --dataset-gb GB: the size of the dataset read from that region"
                               : "--dataset-gb needs --data-region REGION: the region the dataset is read from");
    }
    if (!region && app.count("--transfer-usd-per-gb") > 0) {
      throw usage_error("--transfer-usd-per-gb: only with --data-region REGION --dataset-gb GB");
    }
    if (pinned_region != nullptr && app.count("--region") > 0) require_region_name("--region", *pinned_region);
    given = region;
    if (!given) return;
    require_region_name("--data-region", data_region);
    if (!(std::isfinite(dataset_gb) && dataset_gb > 0)) {
      throw usage_error("--dataset-gb = " + detail::format_number(dataset_gb) + ": give the dataset's size in GB, a finite number > 0");
    }
    if (!(std::isfinite(usd_per_gb) && usd_per_gb >= 0)) {
      throw usage_error("--transfer-usd-per-gb = " + detail::format_number(usd_per_gb) + ": give a finite price >= 0 (USD per GB)");
    }
  }

  /// Throws usage_error unless `value` is a region name: 1 to 100 characters of printable ASCII (the
  /// message shows at most the first 60).
  static void require_region_name(const std::string& option, const std::string& value) {
    bool printable = !value.empty() && value.size() <= 100;
    for (char c : value) printable = printable && static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F;
    if (printable) return;
    const std::string shown = value.size() > 60 ? value.substr(0, 60) + "..." : value;
    throw usage_error(option + " = " + detail::quoted(shown) + ": give a region name like us-east-1 (1 to 100 printable characters)");
  }

  /// The cost of reading the dataset once in `region`: --dataset-gb x --transfer-usd-per-gb outside
  /// --data-region, 0 in it (and 0 without --data-region).
  [[nodiscard]] double cost_usd(const std::string& region) const { return given && region != data_region ? dataset_gb * usd_per_gb : 0.0; }

  /// cost_usd of a catalog's region, as choose_region and region_frontier take it; empty without --data-region.
  [[nodiscard]] std::function<double(const Catalog&)> cost_function() const {
    if (!given) return {};
    return [this](const Catalog& catalog) { return cost_usd(catalog.region); };
  }

  /// The options' keys of a document: data_region, dataset_gb, transfer_usd_per_gb (none without --data-region).
  void add_option_keys(io::Json& document) const {
    if (!given) return;
    document["data_region"] = data_region;
    document["dataset_gb"] = dataset_gb;
    document["transfer_usd_per_gb"] = usd_per_gb;
  }

  /// add_option_keys, then transfer_cost_usd (`transfer_usd`) and total_cost_usd (plan cost + transfer,
  /// null without a plan).
  void add_keys(io::Json& document, double transfer_usd, const std::optional<double>& plan_cost_usd) const {
    if (!given) return;
    add_option_keys(document);
    add_cost_keys(document, transfer_usd, plan_cost_usd);
  }

  /// transfer_cost_usd and total_cost_usd alone (a frontier step's keys; none without --data-region).
  void add_cost_keys(io::Json& document, double transfer_usd, const std::optional<double>& plan_cost_usd) const {
    if (!given) return;
    document["transfer_cost_usd"] = transfer_usd;
    document["total_cost_usd"] = plan_cost_usd ? io::Json(*plan_cost_usd + transfer_usd) : io::Json(nullptr);
  }

  /// "the dataset is in us-east-1", or "1000 GB read once from us-east-1 at $0.0200/GB": where a plan in
  /// `region` reads its data from.
  [[nodiscard]] std::string source_text(const std::string& region) const {
    return region == data_region ? "the dataset is in " + data_region
                                 : fmt::format("{} GB read once from {} at {}/GB", detail::format_number(dataset_gb), data_region,
                                               format_usd(usd_per_gb));
  }

  /// The figures rows of the data transfer of a plan in `region`: its cost and the total (plan cost +
  /// transfer); none without --data-region.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> rows(const std::string& region, double transfer_usd,
                                                                      double plan_cost_usd) const {
    if (!given) return {};
    return {{"data transfer", format_usd(transfer_usd) + " (" + source_text(region) + ")"},
            {"total", format_usd(plan_cost_usd + transfer_usd) + " (cost + data transfer)"}};
  }

  /// The CSV columns data_region, dataset_gb, transfer_cost_usd and total_cost_usd (empty without a
  /// plan); none without --data-region.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> csv_columns(double transfer_usd,
                                                                             const std::optional<double>& plan_cost_usd) const {
    std::vector<std::pair<std::string, std::string>> columns;
    if (!given) return columns;
    columns.emplace_back("data_region", data_region);
    columns.emplace_back("dataset_gb", csv_number(dataset_gb));
    columns.emplace_back("transfer_cost_usd", csv_number(transfer_usd));
    columns.emplace_back("total_cost_usd", plan_cost_usd ? csv_number(*plan_cost_usd + transfer_usd) : std::string());
    return columns;
  }
};

}  // namespace spotdnn::cli
