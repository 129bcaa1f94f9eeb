#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/catalog_command.hpp `spotdnn catalog import` (a catalog from saved `aws … --output json`
/// outputs) and `spotdnn catalog fetch` (runs those read-only aws calls itself and imports their outputs);
/// `spotdnn catalog show` is in catalog_show_command.hpp. docs/market-data.md describes the sources.

#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/errors.hpp>
#include <spotdnn/io/aws/catalog_import.hpp>
#include <spotdnn/io/aws/fetch_requests.hpp>
#include <spotdnn/io/aws/timestamp.hpp>
#include <spotdnn/io/json.hpp>

#include "catalog_options.hpp"
#include "catalog_show_command.hpp"
#include "command.hpp"
#include "options.hpp"
#include "process.hpp"

namespace spotdnn::cli {

/// `spotdnn catalog import --region R --spot-prices SP.json --instance-types IT.json [...]`.
class CatalogImportCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = catalog_group(parent)->add_subcommand(
        "import", "build a catalog (JSON on stdout) from saved `aws ... --output json` outputs: spot prices, instance types, "
                  "on-demand prices, quotas, Spot Advisor bands");
    subcommand_->add_option("--spot-prices", spot_prices_path_, "aws ec2 describe-spot-price-history output, - for stdin")
        ->type_name("SP.json")
        ->check(non_empty_path())
        ->required();
    subcommand_->add_option("--instance-types", instance_types_path_, "aws ec2 describe-instance-types output, - for stdin")
        ->type_name("IT.json")
        ->check(non_empty_path())
        ->required();
    subcommand_->add_option("--on-demand-prices", on_demand_path_,
                            "aws pricing get-products --service-code AmazonEC2 output (Linux, shared tenancy), - for stdin")
        ->type_name("PR.json")
        ->check(non_empty_path());
    subcommand_->add_option("--quotas", quotas_path_, "aws service-quotas list-service-quotas --service-code ec2 output, - for stdin")
        ->type_name("Q.json")
        ->check(non_empty_path());
    subcommand_->add_option("--default-quotas", default_quotas_path_,
                            "aws service-quotas list-aws-default-service-quotas --service-code ec2 output (values of quotas "
                            "never changed), - for stdin")
        ->type_name("DQ.json")
        ->check(non_empty_path());
    options_.add_to(*subcommand_, false);
  }

  int run(std::ostream& out) override {
    std::vector<std::pair<std::string, std::string>> files = {{"--spot-prices", spot_prices_path_},
                                                              {"--instance-types", instance_types_path_},
                                                              {"--on-demand-prices", on_demand_path_},
                                                              {"--quotas", quotas_path_},
                                                              {"--default-quotas", default_quotas_path_}};
    for (const auto& file : options_.file_options()) files.push_back(file);
    require_one_stdin(files);
    const io::aws::CatalogImportOptions import_options = options_.import_options();
    io::aws::CatalogImportSources sources{read_import_source("--spot-prices", spot_prices_path_),
                                          read_import_source("--instance-types", instance_types_path_),
                                          std::nullopt, std::nullopt, std::nullopt, std::nullopt, {}};
    const auto optional_source = [](const std::string& option, const std::string& path) -> std::optional<io::aws::ImportSource> {
      if (path.empty()) return std::nullopt;
      return read_import_source(option, path);
    };
    sources.on_demand_prices = optional_source("--on-demand-prices", on_demand_path_);
    sources.quotas = optional_source("--quotas", quotas_path_);
    sources.default_quotas = optional_source("--default-quotas", default_quotas_path_);
    sources.advisor = options_.load_advisor();
    write_imported_catalog(out, *this, io::aws::import_catalog(sources, import_options));
    return 0;
  }

 private:
  std::string spot_prices_path_;
  std::string instance_types_path_;
  std::string on_demand_path_;
  std::string quotas_path_;
  std::string default_quotas_path_;
  CatalogImportCliOptions options_;
};

/// `spotdnn catalog fetch --region R --types T1,T2,...`: runs the read-only aws calls of
/// io::aws::fetch_requests (no shell; --endpoint-url "$AWS_ENDPOINT_URL" when that is set) and imports
/// their outputs. Spot prices and instance types are required: a failing call exits 1 quoting aws's first
/// error line. The other sources are optional: a failing call is a warning and a `missing_sources` entry.
class CatalogFetchCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = catalog_group(parent)->add_subcommand(
        "fetch", "run the read-only aws calls (spot prices, instance types, on-demand prices, quotas) and import their "
                 "outputs: the catalog JSON on stdout");
    options_.add_to(*subcommand_, true);
    subcommand_->add_option("--aws-cli", aws_program_, "the aws program to run (default: aws on PATH)")
        ->type_name("PATH")
        ->check(non_empty_path());
    add_duration_option(*subcommand_, "--aws-timeout", timeout_s_, "time limit of each aws call; then it is killed (default 120s)")
        ->default_str("120s");
  }

  int run(std::ostream& out) override {
    require_one_stdin(options_.file_options());
    io::aws::CatalogImportOptions import_options = options_.import_options();
    if (!(timeout_s_ <= 24 * 3600)) throw usage_error("--aws-timeout = " + detail::format_number(timeout_s_) + " s: at most 24h");
    io::aws::FetchRequestOptions fetch_options;
    fetch_options.aws_program = aws_program_;
    if (const char* endpoint = std::getenv("AWS_ENDPOINT_URL"); endpoint != nullptr && *endpoint != '\0') {
      fetch_options.endpoint_url = endpoint;
    }
    fetch_options.start_time = io::aws::format_utc_timestamp(import_options.now_unix_s);
    if (import_options.base) fetch_options.parameter_server_type = import_options.base->parameter_server.type;
    const std::vector<io::aws::FetchRequest> requests =
        io::aws::fetch_requests(import_options.region, import_options.types, fetch_options);

    io::aws::CatalogImportSources sources;
    sources.advisor = options_.load_advisor();
    ProcessOptions process_options;
    process_options.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
    process_options.max_output_bytes = std::size_t(kMaxJsonFileBytes);
    process_options.environment_overrides = {"AWS_PAGER="};
    for (const io::aws::FetchRequest& request : requests) {
      const std::string label(io::aws::to_string(request.source));
      // "aws ec2 describe-spot-price-history": the call, for messages and as the source's name.
      std::string call = "aws";
      for (std::size_t k = 1, words = 0; k < request.argv.size() && words < 2; ++k) {
        if (request.argv[k] == "--endpoint-url") {
          ++k;
          continue;
        }
        call += " " + request.argv[k];
        ++words;
      }
      const ProcessResult result = run_process(request.argv, process_options);
      std::optional<io::Json> json;
      std::string failure;
      if (!result.started) {
        failure = "cannot run " + detail::quoted(request.argv.front()) + ": " + result.start_error +
                  " (install the AWS CLI, or give its path with --aws-cli)";
      } else if (!result.succeeded()) {
        const std::string line = result.first_error_line();
        failure = call + " " + result.outcome() + (line.empty() ? std::string() : ": " + line);
      } else {
        try {
          json = io::parse_json(result.out, call);
        } catch (const spotdnn::invalid_argument& e) {
          if (request.required) throw;
          failure = call + ": its output is not JSON: " + e.what();
        }
      }
      failure = detail::escape_for_message(failure);
      if (!json && request.required) throw resource_error(label + ": " + failure);
      if (!json) {
        warn(label + ": " + failure + ": the catalog goes without it");
        if (failure.size() > 300) {
          std::size_t cut = 300;
          while (cut > 0 && (static_cast<unsigned char>(failure[cut]) & 0xC0) == 0x80) --cut;  // a whole UTF-8 sequence
          failure = failure.substr(0, cut) + "...";
        }
        sources.missing.push_back(label + ": " + failure);
        continue;
      }
      io::aws::ImportSource source{std::move(*json), call};
      switch (request.source) {
        case io::aws::FetchSource::spot_prices: sources.spot_prices = std::move(source); break;
        case io::aws::FetchSource::instance_types: sources.instance_types = std::move(source); break;
        case io::aws::FetchSource::on_demand_prices: sources.on_demand_prices = std::move(source); break;
        case io::aws::FetchSource::quotas: sources.quotas = std::move(source); break;
        case io::aws::FetchSource::default_quotas: sources.default_quotas = std::move(source); break;
      }
    }
    write_imported_catalog(out, *this, io::aws::import_catalog(sources, import_options));
    return 0;
  }

 private:
  CatalogImportCliOptions options_;
  std::string aws_program_ = "aws";
  double timeout_s_ = 120;
};

}  // namespace spotdnn::cli
