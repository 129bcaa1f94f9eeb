#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/catalog_command.hpp `spotdnn catalog import` (a catalog from saved `aws … --output json`
/// outputs) and `spotdnn catalog fetch` (runs those read-only aws calls itself and imports their outputs);
/// `spotdnn catalog show` is in catalog_show_command.hpp. docs/market-data.md describes the sources.

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/errors.hpp>
#include <spotdnn/io/aws/catalog_import.hpp>
#include <spotdnn/io/aws/fetch_requests.hpp>
#include <spotdnn/io/aws/timestamp.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/io/skypilot_catalog.hpp>

#include "catalog_options.hpp"
#include "catalog_show_command.hpp"
#include "command.hpp"
#include "options.hpp"
#include "process.hpp"
#include "table.hpp"

namespace spotdnn::cli {

/// `spotdnn catalog import`: a catalog from saved `aws … --output json` outputs (--spot-prices and
/// --instance-types, with the optional sources), catalogs of every region of a SkyPilot catalog (--skypilot
/// vms.csv: one on stdout, or one file per region in --output-dir with a summary table), or an existing
/// catalog (--base) with placement scores added. --placement-scores adds a get-spot-placement-scores output
/// to any of them; --availability-zones names zone IDs (SkyPilot zones and per-zone scores).
class CatalogImportCommand : public Command {
 public:
  void attach(CLI::App& parent) override {
    subcommand_ = catalog_group(parent)->add_subcommand(
        "import", "build a catalog (JSON on stdout) from saved `aws ... --output json` outputs: spot prices, instance types, "
                  "on-demand prices, quotas, Spot Advisor bands, placement scores; or from a SkyPilot catalog (--skypilot)");
    subcommand_->add_option("--spot-prices", spot_prices_path_,
                            "aws ec2 describe-spot-price-history output, - for stdin (required, with --instance-types, "
                            "unless --skypilot, or --base with --placement-scores)")
        ->type_name("SP.json")
        ->check(non_empty_path());
    subcommand_->add_option("--instance-types", instance_types_path_, "aws ec2 describe-instance-types output, - for stdin")
        ->type_name("IT.json")
        ->check(non_empty_path());
    subcommand_->add_option("--on-demand-prices", on_demand_path_,
                            "aws pricing get-products --service-code AmazonEC2 output (Linux, shared tenancy), or the EC2 "
                            "offer file, - for stdin")
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
    subcommand_->add_option("--skypilot", skypilot_path_,
                            "SkyPilot's AWS catalog (~/.sky/catalogs/v6/aws/vms.csv), - for stdin: one catalog per region "
                            "(instead of the aws outputs)")
        ->type_name("vms.csv")
        ->check(non_empty_path());
    subcommand_->add_option("--availability-zones", zones_paths_,
                            "aws ec2 describe-availability-zones --region R output (repeatable, - for stdin): names zone IDs")
        ->type_name("AZS.json")
        ->allow_extra_args(false)
        ->check(non_empty_path());
    subcommand_->add_option("--output-dir", output_dir_,
                            "with --skypilot: write DIR/REGION.json per catalog (DIR created when missing) and print a summary")
        ->type_name("DIR")
        ->check(non_empty_path());
    placement_.add_to(*subcommand_);
    options_.add_to(*subcommand_, false, true);
    add_format_option(*subcommand_, format_, {OutputFormat::table, OutputFormat::json},
                      "the --output-dir summary: table (default) or json; a catalog is always JSON");
  }

  int run(std::ostream& out) override {
    std::vector<std::pair<std::string, std::string>> files = {{"--spot-prices", spot_prices_path_},
                                                              {"--instance-types", instance_types_path_},
                                                              {"--on-demand-prices", on_demand_path_},
                                                              {"--quotas", quotas_path_},
                                                              {"--default-quotas", default_quotas_path_},
                                                              {"--skypilot", skypilot_path_},
                                                              {"--placement-scores", placement_.path}};
    for (const std::string& path : zones_paths_) files.emplace_back("--availability-zones", path);
    for (const auto& file : options_.file_options()) files.push_back(file);
    require_one_stdin(files);
    (void)placement_.request();  // the request's options before any file is read
    if (!output_dir_.empty() && skypilot_path_.empty()) throw usage_error("--output-dir writes the catalogs of --skypilot: give --skypilot FILE");
    if (!skypilot_path_.empty()) return run_skypilot(out);
    if (options_.regions.size() > 1) throw usage_error("--region: give one region (several only with --skypilot)");
    if (!options_.regions.empty()) options_.region = options_.regions.front();
    const bool base_only = !options_.base_path.empty() && placement_.given() && spot_prices_path_.empty() &&
                           instance_types_path_.empty() && on_demand_path_.empty() && quotas_path_.empty() &&
                           default_quotas_path_.empty() && options_.advisor_path.empty();
    if (base_only) return run_base_scores(out);
    if (options_.region.empty()) throw usage_error("--region is required");
    if (spot_prices_path_.empty()) throw usage_error("--spot-prices is required (or --skypilot FILE, or --base with --placement-scores)");
    if (instance_types_path_.empty()) throw usage_error("--instance-types is required with --spot-prices");
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
    io::aws::CatalogImport imported = io::aws::import_catalog(sources, import_options);
    add_scores(imported.catalog, imported.warnings);
    write_imported_catalog(out, *this, imported);
    return 0;
  }

 private:
  /// --placement-scores (when given) added to `catalog`, the reader's warnings to `warnings`.
  void add_scores(Catalog& catalog, std::vector<std::string>& warnings) {
    if (!placement_.given()) return;
    if (!scores_json_) scores_json_ = read_import_source("--placement-scores", placement_.path);
    if (!zone_names_) zone_names_ = read_zone_names(zones_paths_);
    add_placement_scores(catalog, placement_.read(scores_json_->json, scores_json_->name, catalog.region, *zone_names_, warnings));
  }

  /// `catalog import --base CATALOG.json --placement-scores PS.json ...`: the catalog with the scores added.
  int run_base_scores(std::ostream& out) {
    std::optional<Catalog> base = options_.load_base();
    Catalog catalog = std::move(*base);
    if (!options_.region.empty() && options_.region != catalog.region) {
      throw usage_error("--region = " + detail::quoted(options_.region) + ": the --base catalog is of " + catalog.region);
    }
    std::vector<std::string> warnings;
    add_scores(catalog, warnings);
    const std::string text = catalog_text(catalog, *this);
    for (const std::string& warning : warnings) warn(warning);
    out << text;
    return 0;
  }

  /// `catalog import --skypilot FILE ...`.
  int run_skypilot(std::ostream& out) {
    for (const auto& [option, path] : std::vector<std::pair<std::string, std::string>>{{"--spot-prices", spot_prices_path_},
                                                                                       {"--instance-types", instance_types_path_},
                                                                                       {"--on-demand-prices", on_demand_path_},
                                                                                       {"--quotas", quotas_path_},
                                                                                       {"--default-quotas", default_quotas_path_},
                                                                                       {"--advisor", options_.advisor_path},
                                                                                       {"--base", options_.base_path}}) {
      if (!path.empty()) {
        throw usage_error("--skypilot and " + option + " cannot be combined: a SkyPilot catalog is a whole source of its own");
      }
    }
    if (!output_dir_.empty()) prepare_output_dir(output_dir_);
    io::SkyPilotImportOptions options;
    for (const std::string& region : options_.regions) require_aws_name_option("--region", region);
    options.regions = options_.regions;
    options.types = options_.types();
    options.quota_per_type = options_.quota_without_group;
    zone_names_ = read_zone_names(zones_paths_);
    options.zone_names_by_id = *zone_names_;
    io::SkyPilotImport imported;
    if (is_stdin(skypilot_path_)) {
      imported = io::import_skypilot_catalog(read_stdin("--skypilot", io::kMaxSkyPilotCatalogBytes), kStdinName, options);
    } else {
      imported = io::import_skypilot_catalog_file(skypilot_path_, options);
    }
    const std::string file = is_stdin(skypilot_path_) ? std::string(kStdinName) : skypilot_path_;
    if (imported.catalogs.size() > 1 && output_dir_.empty()) {
      std::vector<std::string> names;
      for (const Catalog& catalog : imported.catalogs) names.push_back(catalog.region);
      std::string list;
      for (std::size_t i = 0; i < names.size() && i < 5; ++i) list += (i ? ", " : "") + names[i];
      if (names.size() > 5) list += ", ...";
      throw usage_error(detail::escape_for_message(file) + " has " + std::to_string(names.size()) + " regions (" + list +
                        "): give --region R for one catalog on standard output, or --output-dir DIR for one file per region");
    }
    std::vector<std::string> warnings = imported.warnings;
    for (Catalog& catalog : imported.catalogs) add_scores(catalog, warnings);
    std::vector<std::string> texts;
    for (const Catalog& catalog : imported.catalogs) texts.push_back(catalog_text(catalog, *this));
    if (output_dir_.empty()) {
      for (const std::string& warning : warnings) warn(warning);
      for (const std::string& text : texts) out << text;
      return 0;
    }
    // One file per region, then the summary.
    TextTable table({"region", "rows", "zones", "GPU types", "zone prices", "placement scores", "path"}, 1);
    io::Json summary = io::Json::array();
    for (std::size_t i = 0; i < imported.catalogs.size(); ++i) {
      const Catalog& catalog = imported.catalogs[i];
      const std::string path = output_dir_ + "/" + catalog.region + ".json";
      write_file_atomically(output_dir_, catalog.region + ".json", texts[i]);
      io::SkyPilotRegionCounts counts;
      for (const io::SkyPilotRegionCounts& c : imported.counts) {
        if (c.region == catalog.region) counts = c;
      }
      table.add_row({catalog.region, std::to_string(counts.rows), std::to_string(counts.zones), std::to_string(counts.gpu_types),
                     std::to_string(counts.zone_prices), std::to_string(catalog.placement_scores.size()),
                     detail::escape_for_message(path)});
      summary.push_back({{"region", catalog.region},
                         {"rows", counts.rows},
                         {"zones", counts.zones},
                         {"gpu_types", counts.gpu_types},
                         {"zone_prices", counts.zone_prices},
                         {"placement_scores", catalog.placement_scores.size()},
                         {"path", path}});
    }
    for (const std::string& warning : warnings) warn(warning);
    if (format_ == OutputFormat::json) {
      out << io::Json{{"source", file}, {"rows", imported.rows}, {"catalogs", summary}}.dump(2) << '\n';
    } else {
      out << detail::escape_for_message(file) << ": " << imported.rows << " rows, " << imported.catalogs.size() << " catalogs in "
          << detail::escape_for_message(output_dir_) << "\n\n";
      table.print(out);
    }
    return 0;
  }

  std::string spot_prices_path_;
  std::string instance_types_path_;
  std::string on_demand_path_;
  std::string quotas_path_;
  std::string default_quotas_path_;
  std::string skypilot_path_;
  std::vector<std::string> zones_paths_;
  std::string output_dir_;
  OutputFormat format_ = OutputFormat::table;
  PlacementScoreCliOptions placement_;
  CatalogImportCliOptions options_;
  std::optional<io::aws::ImportSource> scores_json_;
  std::optional<std::map<std::string, std::string>> zone_names_;
};

namespace catalog_fetch_detail {

/// `text` cut to at most `max_bytes` at a UTF-8 sequence boundary, with "..." when cut.
inline std::string capped(std::string text, std::size_t max_bytes = 300) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

inline std::string lower_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  }
  return out;
}

/// The text inside the first <tag>...</tag> of `text` (`lower` its lower-case copy), tags dropped and
/// white space collapsed, at most 80 bytes; "" when there is none.
inline std::string element_text(const std::string& text, const std::string& lower, const std::string& tag) {
  const std::size_t open = lower.find("<" + tag);
  if (open == std::string::npos) return "";
  const std::size_t start = lower.find('>', open);
  if (start == std::string::npos) return "";
  std::size_t end = lower.find("</" + tag, start);
  if (end == std::string::npos) end = std::min(text.size(), start + 1 + 200);
  std::string inner;
  bool in_tag = false, space = false;
  for (std::size_t i = start + 1; i < end; ++i) {
    const char c = text[i];
    if (c == '<') in_tag = true;
    if (in_tag) {
      if (c == '>') in_tag = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !inner.empty();
      continue;
    }
    if (space) inner += ' ';
    space = false;
    inner += c;
  }
  return capped(detail::escape_for_message(inner), 80);
}

/// Where an HTML or XML document starts in `lower` (a lower-case text), or npos: a proxy, captive portal or
/// wrong endpoint answers with a web page where aws expected JSON.
inline std::size_t markup_start(const std::string& lower) {
  std::size_t at = std::string::npos;
  for (const char* marker : {"<!doctype", "<html", "<head", "<body", "<title", "<?xml", "<h1", "<center"}) {
    at = std::min(at, lower.find(marker));
  }
  return at;
}

/// `text` (an aws error line or output) with an HTML or XML document in it summarised: "... an HTTP error
/// page (title: 502 Bad Gateway)", "... an XML error (AccessDenied: Access Denied)"; then printable (control
/// characters escaped) and at most `max_bytes`. Raw markup never reaches a warning or missing_sources.
inline std::string without_markup(const std::string& text, std::size_t max_bytes = 300) {
  const std::string lower = lower_ascii(text);
  const std::size_t at = markup_start(lower);
  if (at == std::string::npos) return capped(detail::escape_for_message(text), max_bytes);
  std::string before = text.substr(0, at);
  while (!before.empty() && (before.back() == ' ' || before.back() == '\t' || before.back() == '\n' || before.back() == '\r')) {
    before.pop_back();
  }
  std::string summary;
  if (const std::string title = element_text(text, lower, "title"); !title.empty()) {
    summary = "an HTTP error page (title: " + title + ")";
  } else if (const std::string code = element_text(text, lower, "code"); !code.empty()) {
    const std::string message = element_text(text, lower, "message");
    summary = "an XML error (" + code + (message.empty() ? std::string() : ": " + message) + ")";
  } else if (const std::string heading = element_text(text, lower, "h1"); !heading.empty()) {
    summary = "an HTTP error page (" + heading + ")";
  } else {
    summary = "an HTML or XML page";
  }
  return capped(detail::escape_for_message(before.empty() ? summary : before + " " + summary), max_bytes);
}

/// True when stdout of an aws call is a web page rather than JSON.
inline bool looks_like_markup(const std::string& out) {
  std::size_t first = 0;
  while (first < out.size() && (out[first] == ' ' || out[first] == '\t' || out[first] == '\n' || out[first] == '\r')) ++first;
  return first < out.size() && out[first] == '<';
}

/// The import slot of an optional source.
inline std::optional<io::aws::ImportSource>& optional_slot(io::aws::CatalogImportSources& sources, io::aws::FetchSource source) {
  switch (source) {
    case io::aws::FetchSource::on_demand_prices: return sources.on_demand_prices;
    case io::aws::FetchSource::quotas: return sources.quotas;
    case io::aws::FetchSource::default_quotas: return sources.default_quotas;
    default: break;
  }
  throw std::logic_error("optional_slot: not an optional source");
}

}  // namespace catalog_fetch_detail

/// `spotdnn catalog fetch --region R --types T1,T2,...`: runs the read-only aws calls of
/// io::aws::fetch_requests (no shell; --endpoint-url "$AWS_ENDPOINT_URL" when that is set) and imports
/// their outputs. Spot prices and instance types are required: a failing call exits 1 quoting aws's first
/// error line. The other sources are optional: a failing call, output that is not JSON, or output that
/// import_catalog refuses is a warning and a `missing_sources` entry (a web page in it summarised, never
/// raw). Each call is ended after --aws-timeout (run_process: its process group, nothing left behind).
/// The spot prices are asked for at --start-time, else the clock: --as-of only sets "now" for price ages.
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
    subcommand_->add_option("--placement-capacity", placement_capacity_,
                            "the target capacity (instances) asked of aws ec2 get-spot-placement-scores (default 1)")
        ->type_name("N")
        ->check(CLI::Range(1, kMaxQuotaGroupVcpus));
    add_duration_option(*subcommand_, "--aws-timeout", timeout_s_, "time limit of each aws call; then it is killed (default 120s)")
        ->default_str("120s");
    subcommand_
        ->add_option_function<std::string>(
            "--start-time",
            [this](const std::string& text) {
              try {
                start_time_unix_s_ = io::aws::parse_aws_timestamp(text, "--start-time", "TIME");
              } catch (const spotdnn::invalid_argument&) {
                throw CLI::ValidationError("--start-time", detail::quoted(text.substr(0, 64)) +
                                                               ": expected an ISO 8601 time such as 2026-11-24T08:00:00Z");
              }
            },
            "the time AWS is asked the spot prices at (describe-spot-price-history --start-time), ISO 8601 (default: the "
            "clock; --as-of does not move it)")
        ->type_name("TIME");
  }

  int run(std::ostream& out) override {
    namespace fd = catalog_fetch_detail;
    require_one_stdin(options_.file_options());
    io::aws::CatalogImportOptions import_options = options_.import_options();
    if (!(timeout_s_ <= 24 * 3600)) throw usage_error("--aws-timeout = " + detail::format_number(timeout_s_) + " s: at most 24h");
    io::aws::FetchRequestOptions fetch_options;
    fetch_options.aws_program = aws_program_;
    if (const char* endpoint = std::getenv("AWS_ENDPOINT_URL"); endpoint != nullptr && *endpoint != '\0') {
      fetch_options.endpoint_url = endpoint;
    }
    // The prices in effect at the start time, not "now" of --as-of: a past --as-of would ask for the
    // whole history since then (and prices newer than it).
    const std::int64_t start_time_unix_s =
        start_time_unix_s_ ? *start_time_unix_s_
                           : std::int64_t(std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
    fetch_options.start_time = io::aws::format_utc_timestamp(start_time_unix_s);
    if (import_options.base) fetch_options.parameter_server_type = import_options.base->parameter_server.type;
    const std::vector<io::aws::FetchRequest> requests =
        io::aws::fetch_requests(import_options.region, import_options.types, fetch_options);

    io::aws::CatalogImportSources sources;
    sources.advisor = options_.load_advisor();
    ProcessOptions process_options;
    process_options.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
    process_options.max_output_bytes = std::size_t(kMaxJsonFileBytes);
    process_options.environment_overrides = {"AWS_PAGER="};
    std::vector<std::pair<io::aws::FetchSource, std::string>> optional_given;  // (source, call)
    for (const io::aws::FetchRequest& request : requests) {
      const std::string label(io::aws::to_string(request.source));
      const std::string call = call_name(request.argv);
      std::optional<io::Json> json = call_aws(request.argv, request.required, label, process_options, sources.missing);
      if (!json) continue;
      io::aws::ImportSource source{std::move(*json), call};
      switch (request.source) {
        case io::aws::FetchSource::spot_prices: sources.spot_prices = std::move(source); break;
        case io::aws::FetchSource::instance_types: sources.instance_types = std::move(source); break;
        default:
          fd::optional_slot(sources, request.source) = std::move(source);
          optional_given.emplace_back(request.source, call);
          break;
      }
    }
    // Spot Placement Scores (optional): the zone names of the region, then the scores of the fetched types.
    std::vector<std::string> argv_prefix = {aws_program_};
    if (!fetch_options.endpoint_url.empty()) argv_prefix.insert(argv_prefix.end(), {"--endpoint-url", fetch_options.endpoint_url});
    std::vector<std::string> zones_argv = argv_prefix;
    zones_argv.insert(zones_argv.end(), {"ec2", "describe-availability-zones", "--region", import_options.region, "--output", "json"});
    std::map<std::string, std::string> zone_names;
    if (std::optional<io::Json> json = call_aws(zones_argv, false, std::string(kZonesLabel), process_options, sources.missing)) {
      const std::string call = call_name(zones_argv);
      try {
        zone_names = io::aws::read_availability_zones(*json, call).names_by_id;
      } catch (const spotdnn::invalid_argument& e) {
        unusable(std::string(kZonesLabel), call, e.what(), sources.missing);
      }
    }
    std::vector<std::string> scores_argv = argv_prefix;
    scores_argv.insert(scores_argv.end(), {"ec2", "get-spot-placement-scores", "--region", import_options.region, "--instance-types"});
    scores_argv.insert(scores_argv.end(), import_options.types.begin(), import_options.types.end());
    scores_argv.insert(scores_argv.end(), {"--target-capacity", std::to_string(placement_capacity_), "--single-availability-zone",
                                           "--region-names", import_options.region, "--output", "json"});
    io::aws::PlacementScoresRead scores;
    if (std::optional<io::Json> json = call_aws(scores_argv, false, std::string(kScoresLabel), process_options, sources.missing)) {
      const std::string call = call_name(scores_argv);
      io::aws::PlacementScoreRequest request;
      request.instance_types = import_options.types;
      request.target_capacity = placement_capacity_;
      request.observed_at = io::aws::format_utc_timestamp(now_unix_s(std::nullopt));
      try {
        scores = io::aws::read_spot_placement_scores(*json, call, import_options.region, request, zone_names);
      } catch (const spotdnn::invalid_argument& e) {
        unusable(std::string(kScoresLabel), call, e.what(), sources.missing);
      }
    }
    io::aws::CatalogImport imported = import_keeping_what_validates(std::move(sources), import_options, optional_given);
    add_placement_scores(imported.catalog, scores.scores);
    for (std::string& warning : scores.warnings) imported.warnings.push_back(std::move(warning));
    write_imported_catalog(out, *this, imported);
    return 0;
  }

 private:
  static constexpr std::string_view kZonesLabel = "availability zones";
  static constexpr std::string_view kScoresLabel = "placement scores";

  /// "aws ec2 describe-spot-price-history": the call of `argv`, for messages and as the source's name.
  [[nodiscard]] static std::string call_name(const std::vector<std::string>& argv) {
    std::string call = "aws";
    for (std::size_t k = 1, words = 0; k < argv.size() && words < 2; ++k) {
      if (argv[k] == "--endpoint-url") {
        ++k;
        continue;
      }
      call += " " + argv[k];
      ++words;
    }
    return call;
  }

  /// A warning and a missing_sources entry for an optional source whose output the import refuses.
  void unusable(const std::string& label, const std::string& call, std::string why, std::vector<std::string>& missing) const {
    namespace fd = catalog_fetch_detail;
    for (const std::string& prefix : {std::string("read_availability_zones: "), std::string("read_spot_placement_scores: "), call + ": "}) {
      if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
    }
    const std::string failure = fd::without_markup(call + " printed output that is not usable: " + why);
    warn(label + ": " + failure + ": the catalog goes without it");
    missing.push_back(label + ": " + failure);
  }

  /// Runs one aws call: its JSON output, or, when it fails (cannot start, exits non-zero, times out, prints
  /// a web page or text that is not JSON), a resource_error for a required source and otherwise a warning
  /// and a `missing` entry ("LABEL: why") and nullopt.
  std::optional<io::Json> call_aws(const std::vector<std::string>& argv, bool required, const std::string& label,
                                   const ProcessOptions& process_options, std::vector<std::string>& missing) const {
    namespace fd = catalog_fetch_detail;
    const std::string call = call_name(argv);
    const ProcessResult result = run_process(argv, process_options);
    std::optional<io::Json> json;
    std::string failure;
    if (!result.started) {
      failure = "cannot run " + detail::quoted(argv.front()) + ": " + result.start_error +
                " (install the AWS CLI, or give its path with --aws-cli)";
    } else if (!result.succeeded()) {
      std::string line = result.first_error_line(2000);
      // A web page on stderr spans lines: summarise it from where it starts (its title may come later).
      if (const std::size_t at = fd::markup_start(fd::lower_ascii(line)); at != std::string::npos) {
        const std::size_t page = fd::markup_start(fd::lower_ascii(result.err));
        line = line.substr(0, at) + (page == std::string::npos ? std::string() : result.err.substr(page, 1 << 16));
      }
      failure = call + " " + result.outcome() + (line.empty() ? std::string() : ": " + line);
    } else if (!required && fd::looks_like_markup(result.out)) {
      failure = call + " printed " + fd::without_markup(result.out) + " instead of JSON";
    } else {
      try {
        json = io::parse_json(result.out, call);
      } catch (const spotdnn::invalid_argument& e) {
        if (required) throw;
        failure = call + ": its output is not JSON: " + e.what();
      }
    }
    if (json) return json;
    failure = fd::without_markup(failure, required ? 2000 : 300);
    if (required) throw resource_error(label + ": " + failure);
    warn(label + ": " + failure + ": the catalog goes without it");
    missing.push_back(label + ": " + failure);
    return std::nullopt;
  }

  /// import_catalog of `sources`. When it refuses them and the required sources alone import, each optional
  /// source that import_catalog refuses beside the required ones is left out, with a warning and a
  /// missing_sources entry, and the rest imported again; otherwise its error is thrown as it is.
  [[nodiscard]] io::aws::CatalogImport import_keeping_what_validates(
      io::aws::CatalogImportSources sources, const io::aws::CatalogImportOptions& options,
      const std::vector<std::pair<io::aws::FetchSource, std::string>>& optional_given) const {
    namespace fd = catalog_fetch_detail;
    try {
      return io::aws::import_catalog(sources, options);
    } catch (const spotdnn::invalid_argument&) {
      if (optional_given.empty()) throw;
    }
    io::aws::CatalogImportSources required = sources;
    for (const auto& [source, call] : optional_given) fd::optional_slot(required, source).reset();
    (void)io::aws::import_catalog(required, options);  // what is wrong without them is thrown as it is
    for (const auto& [source, call] : optional_given) {
      io::aws::CatalogImportSources with_one = required;
      fd::optional_slot(with_one, source) = fd::optional_slot(sources, source);
      try {
        (void)io::aws::import_catalog(with_one, options);
      } catch (const spotdnn::invalid_argument& e) {
        std::string why = e.what();
        for (const std::string& prefix : {std::string("import_catalog: "), call + ": "}) {
          if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
        }
        const std::string label(io::aws::to_string(source));
        const std::string failure = fd::without_markup(call + " printed output that is not usable: " + why);
        warn(label + ": " + failure + ": the catalog goes without it");
        sources.missing.push_back(label + ": " + failure);
        fd::optional_slot(sources, source).reset();
      }
    }
    return io::aws::import_catalog(sources, options);
  }

  CatalogImportCliOptions options_;
  int placement_capacity_ = 1;
  std::string aws_program_ = "aws";
  double timeout_s_ = 120;
  std::optional<std::int64_t> start_time_unix_s_;
};

}  // namespace spotdnn::cli
