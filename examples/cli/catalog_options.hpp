#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/catalog_options.hpp What `spotdnn catalog import` and `catalog fetch` share: the `catalog`
/// command group, --region, --types, --advisor, --base, --max-price-age, --as-of and --quota-without-group,
/// reading a saved AWS output (`-` for stdin), the placement-score request options, the zone names of
/// --availability-zones outputs, and writing one catalog file per region into --output-dir.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/errors.hpp>
#include <spotdnn/io/aws/availability_zones.hpp>
#include <spotdnn/io/aws/catalog_import.hpp>
#include <spotdnn/io/aws/fetch_requests.hpp>
#include <spotdnn/io/aws/output_forms.hpp>
#include <spotdnn/io/aws/spot_placement_scores.hpp>
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

/// A saved AWS output: the JSON of file `path` (`-`: standard input), named by its path in messages; a
/// stream of JSON objects reads as an array of them (io::aws::parse_aws_output).
[[nodiscard]] inline io::aws::ImportSource read_import_source(const std::string& option, const std::string& path) {
  if (is_stdin(path)) return {io::aws::parse_aws_output(read_stdin(option, kMaxJsonFileBytes), std::string(kStdinName)), std::string(kStdinName)};
  return {io::aws::read_aws_output_file(path), path};
}

/// Throws usage_error "OPTION = "value": why" when `value` is not shaped like an AWS name.
inline void require_aws_name_option(const std::string& option, const std::string& value) {
  const std::string problem = io::aws::fetch_detail::aws_name_problem(value);
  if (!problem.empty()) throw usage_error(option + " = " + detail::escape_for_message(detail::quoted(value.substr(0, 64))) + ": " + problem);
}

/// The options import and fetch share, and the CatalogImportOptions they make.
struct CatalogImportCliOptions {
  std::string region;                ///< the one --region (set from `regions` by import)
  std::vector<std::string> regions;  ///< every --region, when add_to(..., several_regions = true)
  std::string types_text;   ///< --types T1,T2,...
  std::string advisor_path;
  std::string base_path;
  double max_price_age_s = 86400;
  std::optional<std::int64_t> as_of_unix_s;
  int quota_without_group = 16;

  void add_to(CLI::App& app, bool types_required, bool several_regions = false) {
    if (several_regions) {
      app.add_option("--region", regions,
                     "the AWS region of the catalog, e.g. us-east-1 (not needed with --base; with --skypilot: the "
                     "regions to import, repeatable, default every region of the file)")
          ->type_name("REGION")
          ->allow_extra_args(false);
    } else {
      app.add_option("--region", region, "the AWS region of the catalog, e.g. us-east-1")->type_name("REGION")->required();
    }
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

/// The catalog as the JSON text `--catalog` reads (validated again by reading it back).
[[nodiscard]] inline std::string catalog_text(const Catalog& catalog, const Command& command) {
  const io::Json json = io::to_json(catalog);
  (void)io::catalog_from_json(json, "catalog", command.name());
  return json.dump(2) + '\n';
}

/// Prints the import's warnings through `command`, then the catalog as JSON (validated again by reading
/// it back, so what is written is what `--catalog` reads).
inline void write_imported_catalog(std::ostream& out, const Command& command, const io::aws::CatalogImport& imported) {
  const std::string text = catalog_text(imported.catalog, command);
  for (const std::string& warning : imported.warnings) command.warn(warning);
  out << text;
}

/// `text` split at commas into AWS names, each listed once, at most `max` (OPTION names them in errors).
[[nodiscard]] inline std::vector<std::string> aws_name_list(const std::string& option, const std::string& text, std::size_t max) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    const std::string name = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    require_aws_name_option(option, name);
    if (!seen.insert(name).second) throw usage_error(option + " = " + detail::quoted(name) + ": listed twice");
    out.push_back(name);
    if (out.size() > max) throw usage_error(option + ": more than " + std::to_string(max) + " names");
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

/// The zone names (ZoneId → ZoneName) of the describe-availability-zones outputs at `paths` (- for stdin),
/// merged (io::aws::merge_zone_names).
[[nodiscard]] inline std::map<std::string, std::string> read_zone_names(const std::vector<std::string>& paths) {
  std::map<std::string, std::string> names_by_id;
  for (const std::string& path : paths) {
    const io::aws::ImportSource source = read_import_source("--availability-zones", path);
    const io::aws::AvailabilityZones zones = io::aws::read_availability_zones(source.json, source.name);
    io::aws::merge_zone_names(names_by_id, zones, source.name);
  }
  return names_by_id;
}

/// Adds `scores` to `catalog`: a score of the same question (zone, types, capacity and unit) already in it
/// is replaced (the newer answer).
inline void add_placement_scores(Catalog& catalog, const std::vector<PlacementScore>& scores) {
  const auto same_question = [](const PlacementScore& a, const PlacementScore& b) {
    std::vector<std::string> ta = a.instance_types, tb = b.instance_types;
    std::sort(ta.begin(), ta.end());
    std::sort(tb.begin(), tb.end());
    return a.zone == b.zone && a.target_capacity == b.target_capacity && a.target_capacity_unit == b.target_capacity_unit && ta == tb;
  };
  for (const PlacementScore& score : scores) {
    auto& held = catalog.placement_scores;
    held.erase(std::remove_if(held.begin(), held.end(), [&](const PlacementScore& p) { return same_question(p, score); }), held.end());
    held.push_back(score);
  }
}

/// --placement-scores FILE with the request it answers: --placement-types, --placement-capacity and
/// --placement-unit (the output of get-spot-placement-scores does not repeat them).
struct PlacementScoreCliOptions {
  std::string path;
  std::string types_text;
  int capacity = 0;  ///< 0: not given
  std::string unit = "units";

  void add_to(CLI::App& app) {
    app.add_option("--placement-scores", path,
                   "aws ec2 get-spot-placement-scores --region-names R [--single-availability-zone] output, - for stdin "
                   "(with --placement-types and --placement-capacity: the request it answers)")
        ->type_name("PS.json")
        ->check(non_empty_path());
    app.add_option("--placement-types", types_text, "the --instance-types the placement scores were asked for, comma-separated")
        ->type_name("T1,T2,...");
    app.add_option("--placement-capacity", capacity, "the --target-capacity the placement scores were asked for")
        ->type_name("N")
        ->check(CLI::Range(1, kMaxQuotaGroupVcpus));
    app.add_option("--placement-unit", unit, "the --target-capacity-unit-type of the request: units (default), vcpu or memory-mib")
        ->type_name("UNIT")
        ->check(CLI::IsMember({"units", "vcpu", "memory-mib"}));
  }

  [[nodiscard]] bool given() const { return !path.empty(); }

  /// The request; usage_error when --placement-types or --placement-capacity is missing or given without
  /// --placement-scores.
  [[nodiscard]] io::aws::PlacementScoreRequest request() const {
    if (!given()) {
      if (!types_text.empty() || capacity != 0) throw usage_error("--placement-types and --placement-capacity describe --placement-scores: give it too");
      return {};
    }
    if (types_text.empty()) throw usage_error("--placement-scores needs --placement-types T1,T2,...: the instance types the scores were asked for");
    if (capacity == 0) throw usage_error("--placement-scores needs --placement-capacity N: the target capacity the scores were asked for");
    io::aws::PlacementScoreRequest request;
    request.instance_types = aws_name_list("--placement-types", types_text, kMaxPlacementScoreTypes);
    request.target_capacity = capacity;
    request.target_capacity_unit = unit;
    return request;
  }

  /// The scores of `region` in the output `json` (read from `source`), zone IDs named by `names_by_id`;
  /// `warnings` gets the reader's warnings. An object without SpotPlacementScores says what it is instead.
  [[nodiscard]] std::vector<PlacementScore> read(const io::Json& json, const std::string& source, const std::string& region,
                                                 const std::map<std::string, std::string>& names_by_id,
                                                 std::vector<std::string>& warnings) const {
    if (json.is_object() && !json.contains("SpotPlacementScores")) {
      throw usage_error("--placement-scores " + detail::escape_for_message(detail::quoted(source)) +
                        ": expected the output of aws ec2 get-spot-placement-scores ({\"SpotPlacementScores\": [...]}), not " +
                        io::aws::describe_aws_json(json));
    }
    io::aws::PlacementScoresRead read = io::aws::read_spot_placement_scores(json, source, region, request(), names_by_id);
    for (std::string& warning : read.warnings) warnings.push_back(std::move(warning));
    return std::move(read.scores);
  }
};

/// Where an --output-dir is unusable: a symbolic link, or something other than a directory; created
/// (one level, mode 0777 less the umask) when missing.
inline void prepare_output_dir(const std::string& dir) {
  const std::string where = "--output-dir = " + detail::escape_for_message(detail::quoted(dir.substr(0, 200)));
  struct stat info = {};
  if (::lstat(dir.c_str(), &info) != 0) {
    const int e = errno;
    if (e != ENOENT) throw usage_error(where + ": " + std::strerror(e));
    if (::mkdir(dir.c_str(), 0777) != 0) throw usage_error(where + ": cannot create the directory: " + std::strerror(errno));
    return;
  }
  if (S_ISLNK(info.st_mode)) throw usage_error(where + ": a symbolic link; give the directory itself");
  if (!S_ISDIR(info.st_mode)) throw usage_error(where + ": not a directory");
}

/// Writes `text` to DIR/NAME safely: a new temporary file in DIR, synced, then renamed onto the name (a
/// reader never sees half a file, and a symbolic link at the name is replaced, never followed).
inline void write_file_atomically(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  const std::string where = detail::escape_for_message(detail::quoted(path.substr(0, 300)));
  std::string pattern = dir + "/.spotdnn-catalog-XXXXXX";
  std::vector<char> temp(pattern.begin(), pattern.end());
  temp.push_back('\0');
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) throw resource_error("cannot write " + where + ": " + std::strerror(errno));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  bool ok = ::fchmod(fd, 0666 & ~mask) == 0;
  for (std::size_t at = 0; ok && at < text.size();) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) at += std::size_t(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int error = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(temp.data(), path.c_str()) != 0) {
    const int e = ok ? errno : error;
    ::unlink(temp.data());
    throw resource_error("cannot write " + where + ": " + std::strerror(e));
  }
}

}  // namespace spotdnn::cli
