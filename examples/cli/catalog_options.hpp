#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/catalog_options.hpp What `spotdnn catalog import` and `catalog fetch` share: the `catalog`
/// command group, --region, --types, --advisor, --base, --max-price-age, --as-of and --quota-without-group,
/// and reading a saved AWS output (`-` for stdin).

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/io/aws/catalog_import.hpp>
#include <spotdnn/io/aws/fetch_requests.hpp>
#include <spotdnn/io/aws/timestamp.hpp>
#include <spotdnn/io/json.hpp>

#include "command.hpp"
#include "help.hpp"
#include "options.hpp"

namespace spotdnn::cli {

/// The `catalog` group on `parent`, created by the first catalog command that attaches.
inline CLI::App* catalog_group(CLI::App& parent) {
  if (CLI::App* group = find_subcommand(parent, "catalog")) return group;
  CLI::App* group = parent.add_subcommand(
      "catalog", "market data: build a catalog from what AWS says today and show one: catalog import, catalog fetch, catalog show");
  group->require_subcommand(1);
  return group;
}

/// "now" for price ages: --as-of (ISO 8601) when given, else the clock (Unix seconds).
[[nodiscard]] inline std::int64_t now_unix_s(const std::optional<std::int64_t>& as_of) {
  if (as_of) return *as_of;
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// --as-of TIME: an ISO 8601 time that fixes "now" (reproducible price ages).
inline CLI::Option* add_as_of_option(CLI::App& app, std::optional<std::int64_t>& as_of) {
  return app
      .add_option_function<std::string>(
          "--as-of",
          [&as_of](const std::string& text) {
            try {
              as_of = io::aws::parse_aws_timestamp(text, "--as-of", "TIME");
            } catch (const spotdnn::invalid_argument&) {
              throw CLI::ValidationError("--as-of", detail::quoted(text.substr(0, 64)) +
                                                        ": expected an ISO 8601 time such as 2026-11-24T08:00:00Z or "
                                                        "2026-11-24T09:00:00+01:00");
            }
          },
          "\"now\" for price ages, ISO 8601 (2026-11-24T08:00:00Z; default: the clock), for reproducible output")
      ->type_name("TIME");
}

/// --max-price-age DURATION: latest prices older than this give a warning (default 24h).
inline CLI::Option* add_max_price_age_option(CLI::App& app, double& seconds) {
  return add_duration_option(app, "--max-price-age", seconds,
                             "warn about prices older than this (default 24h; 0 warns about every dated price)", ZeroDuration::allowed)
      ->default_str("24h");
}

/// A saved AWS output: the JSON of file `path` (`-`: standard input), named by its path in messages.
[[nodiscard]] inline io::aws::ImportSource read_import_source(const std::string& option, const std::string& path) {
  if (is_stdin(path)) return {read_stdin_json(option), std::string(kStdinName)};
  return {io::read_json_file(path), path};
}

/// Throws usage_error "OPTION = "value": why" when `value` is not shaped like an AWS name.
inline void require_aws_name_option(const std::string& option, const std::string& value) {
  const std::string problem = io::aws::fetch_detail::aws_name_problem(value);
  if (!problem.empty()) throw usage_error(option + " = " + detail::escape_for_message(detail::quoted(value.substr(0, 64))) + ": " + problem);
}

/// The options import and fetch share, and the CatalogImportOptions they make.
struct CatalogImportCliOptions {
  std::string region;
  std::string types_text;   ///< --types T1,T2,...
  std::string advisor_path;
  std::string base_path;
  double max_price_age_s = 86400;
  std::optional<std::int64_t> as_of_unix_s;
  int quota_without_group = 16;

  void add_to(CLI::App& app, bool types_required) {
    app.add_option("--region", region, "the AWS region of the catalog, e.g. us-east-1")->type_name("REGION")->required();
    CLI::Option* types = app.add_option("--types", types_text,
                                        types_required ? "the instance types to fetch, comma-separated (p3.2xlarge,g5.xlarge)"
                                                       : "keep only these instance types, comma-separated (default: every GPU "
                                                         "type with a Linux spot price)");
    types->type_name("T1,T2,...");
    if (types_required) types->required();
    app.add_option("--advisor", advisor_path,
                   "the Spot Instance Advisor JSON (curl -o ADV.json https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json), - for stdin")
        ->type_name("ADV.json")
        ->check(non_empty_path());
    app.add_option("--base", base_path, "a catalog to update: imported types replace its types of the same name, - for stdin")
        ->type_name("CATALOG.json")
        ->check(non_empty_path());
    add_max_price_age_option(app, max_price_age_s);
    add_as_of_option(app, as_of_unix_s);
    app.add_option("--quota-without-group", quota_without_group,
                   "a type's quota (instances) when no vCPU quota value of its group is known (default 16)")
        ->type_name("N")
        ->check(non_negative_whole_number())
        ->check(CLI::Range(0, kMaxQuota));
  }

  /// --types split at commas; each an AWS name, listed once.
  [[nodiscard]] std::vector<std::string> types() const {
    std::vector<std::string> out;
    if (types_text.empty()) return out;
    std::set<std::string> seen;
    std::size_t at = 0;
    while (true) {
      const std::size_t comma = types_text.find(',', at);
      const std::string type = types_text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      require_aws_name_option("--types", type);
      if (!seen.insert(type).second) throw usage_error("--types = " + detail::quoted(type) + ": listed twice");
      out.push_back(type);
      if (out.size() > std::size_t(kMaxInstanceTypes)) {
        throw usage_error("--types: more than " + std::to_string(kMaxInstanceTypes) + " types");
      }
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    return out;
  }

  /// (option, path) of the JSON files these options read, for require_one_stdin.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> file_options() const {
    return {{"--advisor", advisor_path}, {"--base", base_path}};
  }

  [[nodiscard]] std::optional<Catalog> load_base() const {
    if (base_path.empty()) return std::nullopt;
    return read_json_input(
        "--base", base_path,
        [](const io::Json& json, const std::string& file) {
          return io::catalog_from_json(json, "catalog", "read_catalog_file(" + file + ")");
        },
        [](const std::string& path) { return io::read_catalog_file(path); });
  }

  [[nodiscard]] std::optional<io::aws::ImportSource> load_advisor() const {
    if (advisor_path.empty()) return std::nullopt;
    return read_import_source("--advisor", advisor_path);
  }

  /// The library's options: region, types, base, "now" and the limits.
  [[nodiscard]] io::aws::CatalogImportOptions import_options() const {
    require_aws_name_option("--region", region);
    io::aws::CatalogImportOptions options;
    options.region = region;
    options.types = types();
    options.base = load_base();
    options.now_unix_s = now_unix_s(as_of_unix_s);
    options.max_price_age_s = max_price_age_s;
    options.quota_without_group_instances = quota_without_group;
    return options;
  }
};

/// Prints the import's warnings through `command`, then the catalog as JSON (validated again by reading
/// it back, so what is written is what `--catalog` reads).
inline void write_imported_catalog(std::ostream& out, const Command& command, const io::aws::CatalogImport& imported) {
  for (const std::string& warning : imported.warnings) command.warn(warning);
  const io::Json json = io::to_json(imported.catalog);
  (void)io::catalog_from_json(json, "catalog", command.name());
  out << json.dump(2) << '\n';
}

}  // namespace spotdnn::cli
