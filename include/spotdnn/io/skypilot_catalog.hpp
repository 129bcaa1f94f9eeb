#pragma once
// SPDX-License-Identifier: MIT
/// @file io/skypilot_catalog.hpp Catalogs of every region from SkyPilot's AWS catalog
/// (`~/.sky/catalogs/v6/aws/vms.csv`): one validated Catalog per region, spot prices per Availability Zone.
///
/// The format (skypilot-org/skypilot-catalog README, "vms.csv"; written by SkyPilot's
/// sky/catalog/data_fetchers/fetch_aws.py with pandas): a CSV file with the header
/// `InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone`
/// (the columns in any order; schema v8 adds `Arch`, read and ignored; other added columns are ignored with a
/// warning), one row per (instance type, region, zone):
///
///     p3.2xlarge,V100,1.0,8.0,61.0,"{'Gpus': [{'Name': 'V100', 'Manufacturer': 'NVIDIA', 'Count': 1,
///       'MemoryInfo': {'SizeInMiB': 16384}}], 'TotalGpuMemoryInMiB': 16384}",3.06,0.918000,us-east-1,use1-az1
///
/// - `Price` is the region's Linux on-demand price (the same on every zone's row), `SpotPrice` the zone's
///   spot price; either may be empty (unknown). Numbers are Python floats ("8.0", "0.9180", "5e-05").
/// - `AvailabilityZone` holds the zone **ID** (`use1-az1`: the same data centre in every account; AZ names
///   such as us-east-1a differ between accounts). A zone name of the row's region (older catalogs) is read
///   as given.
/// - `AcceleratorName`/`AcceleratorCount` are empty for types without accelerators; the count may be
///   fractional (g6f types share one L4: 0.125).
/// - `GpuInfo` is EC2's GpuInfo printed as a Python literal (single quotes); SkyPilot copies Neuron devices
///   (Inferentia, Trainium) into it with the key renamed, and those entries carry no `Manufacturer`. It is
///   read with a small strict tokenizer of Python literals (dicts, lists, strings, numbers, True, False,
///   None; never evaluated), at most kMaxGpuInfoDepth levels deep.
///
/// What is imported (docs/market-data.md, "SkyPilot catalogs"): per region, the **GPU types with a spot
/// price in at least one zone** (or only `options.types`): a GPU type has a whole AcceleratorCount ≥ 1 and
/// a GpuInfo whose devices name their Manufacturer. Each is on the spot market at its lowest zone price,
/// `zone_prices_usd_per_hour` keyed by zone name where `options.zone_names_by_id` maps the ID (read
/// describe-availability-zones with io/aws/availability_zones.hpp), else by the ID itself;
/// `on_demand_price_usd_per_hour` from Price (0 when empty), gpus from AcceleratorCount, gpu_model from
/// AcceleratorName (SkyPilot's name: "V100-32GB", "A100-80GB"; GpuInfo's name when empty), vCPUs and
/// memory (MemoryGiB × 1024 MiB), the EC2 vCPU quota group codes of io/aws/quota_families.hpp, and
/// `quota` = `options.quota_per_type` (a SkyPilot catalog has no quotas: `missing_sources` says so). The
/// parameter server is the preset's m5.xlarge priced at the file's on-demand Price in that region (the
/// preset's price, with a warning, when the file has none). Types come in name order, regions in name order.
///
/// Skipped with a warning (aggregated, at most kMaxSkyPilotWarnings lines): types without a GPU (one line
/// for the file), accelerators that are not GPUs, fractional GPU counts, GPU types without a spot price in
/// any zone of a region, a type whose rows in one region disagree on AcceleratorName, AcceleratorCount,
/// vCPUs, MemoryGiB or Price (that region only), requested types or regions a region lacks, and a row that
/// repeats a (type, region, zone) without a spot price (SkyPilot's own catalog lists p4de.24xlarge twice in
/// some zones: once priced, once not). A region without any type left gives no catalog (a warning; an
/// error when the region was asked for).
///
/// Errors throw spotdnn::invalid_argument "import_skypilot_catalog: FILE:LINE:COLUMN: Name = value: why":
/// a file over kMaxSkyPilotCatalogBytes, a NUL byte, a line over kMaxSkyPilotLineBytes, a cell over
/// kMaxSkyPilotCellBytes, more than kMaxSkyPilotRows rows or kMaxSkyPilotRegions regions; a header that is
/// not SkyPilot's (the message says what it looks like: a loss trace, SkyPilot's images.csv, another cloud's
/// vms.csv, an offer file, JSON …); the header row repeated; a row with too few or too many cells; a quote
/// not closed on its line; text that is not valid printable UTF-8; an instance type, region or zone outside
/// its character set (a region that is not AWS's, such as GCP's us-central1, says so); a number that is not
/// one, not finite, negative, or a price that is not greater than zero; vCPUs that are not whole; a GpuInfo
/// that is not a Python literal or lacks Gpus[].Name/Count; and a (type, region, zone) given twice with a
/// spot price on both rows.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/aws/quota_families.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/presets.hpp"

namespace spotdnn::io {

/// Largest SkyPilot catalog read: 64 MiB (the AWS vms.csv of every region is about 2.5 MB).
inline constexpr std::uintmax_t kMaxSkyPilotCatalogBytes = std::uintmax_t(64) << 20;
/// Most data rows read (the whole AWS catalog has about 25,000).
inline constexpr std::size_t kMaxSkyPilotRows = 1000000;
/// Longest line, and longest cell, read (a GpuInfo cell of 8 GPUs is about 150 bytes).
inline constexpr std::size_t kMaxSkyPilotLineBytes = std::size_t(64) << 10;
inline constexpr std::size_t kMaxSkyPilotCellBytes = 4096;
/// Longest instance type or accelerator name, and longest region or zone (ID or name).
inline constexpr std::size_t kMaxSkyPilotNameBytes = 128;
inline constexpr std::size_t kMaxSkyPilotZoneBytes = 64;
/// Most regions in one file, most GPU devices one GpuInfo lists, deepest GpuInfo literal.
inline constexpr std::size_t kMaxSkyPilotRegions = 500;
inline constexpr std::size_t kMaxGpuInfoDevices = 64;
inline constexpr int kMaxGpuInfoDepth = 8;
/// Most accelerators of one instance type, and most memory of one (GiB).
inline constexpr double kMaxSkyPilotAccelerators = 1024;
inline constexpr double kMaxSkyPilotMemoryGib = 1e7;
/// Most warning lines returned; further ones are counted in a last line.
inline constexpr std::size_t kMaxSkyPilotWarnings = 100;
/// Most entries of SkyPilotImportOptions::regions and ::zone_names_by_id.
inline constexpr std::size_t kMaxSkyPilotOptionRegions = 1000;
inline constexpr std::size_t kMaxSkyPilotOptionZones = 100000;

/// SkyPilot's AWS catalog header (schema v5 to v7; v8 adds ",Arch").
inline constexpr std::string_view kSkyPilotAwsHeader =
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone";

/// The `missing_sources` labels of an imported catalog (the same labels as io/aws/catalog_import.hpp's).
inline constexpr std::string_view kSkyPilotQuotasMissing = "quotas: not in a SkyPilot catalog";
inline constexpr std::string_view kSkyPilotAdvisorMissing = "advisor: not in a SkyPilot catalog";

struct SkyPilotImportOptions {
  std::vector<std::string> regions;  ///< regions to import; empty = every region of the file
  std::vector<std::string> types;    ///< types to import; empty = every GPU type with a spot price
  /// Zone ID → zone name, from describe-availability-zones (aws::read_availability_zones); optional.
  std::map<std::string, std::string> zone_names_by_id;
  int quota_per_type = 16;  ///< every imported type's quota (instances): a SkyPilot catalog has none
};

/// What one region of the file held and gave.
struct SkyPilotRegionCounts {
  std::string region;
  std::size_t rows = 0;         ///< data rows of the region
  std::size_t zones = 0;        ///< distinct zones of those rows
  std::size_t types = 0;        ///< distinct instance types of those rows
  std::size_t gpu_types = 0;    ///< types imported into the region's catalog
  std::size_t zone_prices = 0;  ///< zone spot prices imported (Σ over its types)
};

struct SkyPilotImport {
  std::vector<Catalog> catalogs;             ///< one validated catalog per region, by region name
  std::vector<std::string> warnings;         ///< one line each, for people (at most kMaxSkyPilotWarnings)
  std::vector<SkyPilotRegionCounts> counts;  ///< every region of the file, by region name
  std::size_t rows = 0;                      ///< data rows read
};

/// What one GpuInfo cell says.
struct SkyPilotGpuInfo {
  std::string name;          ///< Gpus[].Name (distinct names joined with " + ")
  std::string manufacturer;  ///< the first entry's Manufacturer; empty when not given (Neuron devices)
  double count = 0;          ///< Σ Gpus[].Count
  std::int64_t memory_mib = 0;  ///< Σ Count × MemoryInfo.SizeInMiB; 0 when not given
  bool gpus = false;         ///< every entry names a Manufacturer: GPU devices, not Neuron devices
};

namespace skypilot_detail {

namespace d = spotdnn::detail;

/// "FILE:LINE:COLUMN: Name": where a cell is, for messages.
inline std::string cell_where(std::string_view source, std::size_t line, std::size_t column, std::string_view name) {
  std::string where(source);
  where.append(":").append(std::to_string(line)).append(":").append(std::to_string(column)).append(": ").append(name);
  return where;
}

/// `text` quoted for a message, cut to 80 bytes.
inline std::string excerpt(std::string_view text) {
  return text.size() > 80 ? d::quoted(std::string(text.substr(0, 80)) + "...") : d::quoted(text);
}

// ---- Python literals (GpuInfo) ----------------------------------------------------------------------------

/// A strict reader of the Python literals `repr` prints for EC2's GpuInfo: dicts with string keys, lists,
/// tuples (read as lists), strings in single or double quotes (escapes \\ \' \" \n \r \t), integers,
/// floats, True, False and None. Nothing is evaluated. Throws naming `where` and the character position.
class PythonLiteralReader {
 public:
  PythonLiteralReader(std::string_view text, std::string_view function, std::string where)
      : text_(text), function_(function), where_(std::move(where)) {}

  Json read() {
    Json value = read_value(0);
    skip_space();
    if (at_ != text_.size()) fail("the end of the literal");
    return value;
  }

 private:
  [[noreturn]] void fail(std::string_view expected) const {
    d::fail(function_, where_, excerpt(text_),
            "not a Python literal: expected " + std::string(expected) + " at character " + std::to_string(at_ + 1));
  }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  Json read_value(int depth) {
    skip_space();
    if (at_ >= text_.size()) fail("a value");
    const char c = text_[at_];
    if (c == '{' || c == '[' || c == '(') {
      if (depth >= kMaxGpuInfoDepth) fail("at most " + std::to_string(kMaxGpuInfoDepth) + " levels of nesting");
      return c == '{' ? read_dict(depth + 1) : read_list(depth + 1, c == '[' ? ']' : ')');
    }
    if (c == '\'' || c == '"') return Json(read_string());
    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') return read_number();
    for (const auto& [word, value] : {std::pair<std::string_view, Json>{"True", Json(true)}, {"False", Json(false)}, {"None", Json(nullptr)}}) {
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return value;
      }
    }
    fail("a dict, list, string, number, True, False or None");
  }

  Json read_dict(int depth) {
    ++at_;  // '{'
    Json object = Json::object();
    if (take('}')) return object;
    for (;;) {
      skip_space();
      if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) fail("a string key");
      std::string key = read_string();
      if (object.contains(key)) {
        d::fail(function_, where_, excerpt(text_), "the key " + d::quoted(key) + " is given twice");
      }
      if (!take(':')) fail("':'");
      object[key] = read_value(depth);
      if (take('}')) return object;
      if (!take(',')) fail("',' or '}'");
      if (take('}')) return object;  // a trailing comma
    }
  }

  Json read_list(int depth, char close) {
    ++at_;  // '[' or '('
    Json array = Json::array();
    if (take(close)) return array;
    for (;;) {
      array.push_back(read_value(depth));
      if (take(close)) return array;
      if (!take(',')) fail(std::string("',' or '") + close + "'");
      if (take(close)) return array;
    }
  }

  std::string read_string() {
    const char quote = text_[at_++];
    std::string out;
    while (at_ < text_.size() && text_[at_] != quote) {
      char c = text_[at_++];
      if (c == '\\') {
        if (at_ >= text_.size()) break;
        const char e = text_[at_++];
        switch (e) {
          case '\\': c = '\\'; break;
          case '\'': c = '\''; break;
          case '"': c = '"'; break;
          case 'n': c = '\n'; break;
          case 'r': c = '\r'; break;
          case 't': c = '\t'; break;
          default: --at_; fail("one of the escapes \\\\ \\' \\\" \\n \\r \\t");
        }
      }
      out.push_back(c);
    }
    if (at_ >= text_.size()) fail(std::string("the closing ") + quote);
    ++at_;
    return out;
  }

  Json read_number() {
    const std::size_t start = at_;
    while (at_ < text_.size() && ((text_[at_] >= '0' && text_[at_] <= '9') || text_[at_] == '.' || text_[at_] == 'e' ||
                                  text_[at_] == 'E' || text_[at_] == '-' || text_[at_] == '+')) {
      ++at_;
    }
    std::string_view number = text_.substr(start, at_ - start);
    if (!number.empty() && number.front() == '+') number.remove_prefix(1);
    double value = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (error != std::errc() || end != number.data() + number.size() || !std::isfinite(value)) {
      at_ = start;
      fail("a finite number");
    }
    return Json(value);
  }

  std::string_view text_;
  std::string_view function_;
  std::string where_;
  std::size_t at_ = 0;
};

// ---- CSV -------------------------------------------------------------------------------------------------

/// Splits one line (no line break) into cells: RFC 4180 double quotes ("" inside a quoted cell is one
/// quote). Returns an empty string, or why the line is not CSV and the 1-based cell it happened in.
inline std::string split_csv_line(std::string_view line, std::vector<std::string>& cells, std::size_t& bad_cell) {
  cells.clear();
  std::size_t at = 0;
  for (;;) {
    std::string cell;
    bad_cell = cells.size() + 1;
    if (at < line.size() && line[at] == '"') {
      ++at;
      for (;;) {
        const std::size_t quote = line.find('"', at);
        if (quote == std::string_view::npos) return "a quoted cell is not closed on its line (SkyPilot writes no line breaks in cells)";
        cell.append(line.substr(at, quote - at));
        at = quote + 1;
        if (at < line.size() && line[at] == '"') {
          cell.push_back('"');
          ++at;
          continue;
        }
        break;
      }
      if (at < line.size() && line[at] != ',') return "text after the closing quote of a quoted cell";
    } else {
      const std::size_t comma = std::min(line.find(',', at), line.size());
      const std::string_view raw = line.substr(at, comma - at);
      if (raw.find('"') != std::string_view::npos) return "a double quote inside an unquoted cell";
      cell.assign(raw);
      at = comma;
    }
    if (cell.size() > kMaxSkyPilotCellBytes) return "the cell is longer than " + std::to_string(kMaxSkyPilotCellBytes) + " bytes";
    cells.push_back(std::move(cell));
    if (at >= line.size()) return {};
    ++at;  // ','
  }
}

/// What a header that is not SkyPilot's AWS vms.csv looks like, for the message.
inline std::string describe_header(const std::vector<std::string>& cells, std::string_view first_line) {
  const auto has = [&](std::string_view name) { return std::find(cells.begin(), cells.end(), name) != cells.end(); };
  const std::size_t first = first_line.find_first_not_of(" \t");
  if (first != std::string_view::npos && (first_line[first] == '{' || first_line[first] == '[')) {
    return "a JSON document, not a CSV file (AWS outputs are read by catalog import's other options)";
  }
  if (has("run") && has("loss")) return "a spotdnn loss trace";
  if (has("cluster") && has("iterations_per_s")) return "a spotdnn throughput trace";
  if (has("Tag") && has("ImageId")) return "SkyPilot's images.csv (the image catalog; the instance catalog is vms.csv beside it)";
  if (has("InstanceType") && has("Price") && !has("AvailabilityZone")) {
    return "a SkyPilot vms.csv without an AvailabilityZone column (another cloud's catalog: Lambda, RunPod, ...)";
  }
  if (!cells.empty() && (cells.front().rfind("FormatVersion", 0) == 0 || has("SKU") || has("OfferTermCode"))) {
    return "an AWS Price List offer file in CSV form (index.csv): read its JSON form instead";
  }
  std::string names;
  for (std::size_t i = 0; i < cells.size() && i < 8; ++i) names.append(i == 0 ? "" : ",").append(cells[i].substr(0, 40));
  if (cells.size() > 8) names += ",...";
  return "a CSV file whose header is " + d::quoted(names);
}

/// A number cell: digits with an optional sign, point and exponent (Python's float repr), finite.
inline std::optional<double> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return std::nullopt;
  }
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

inline bool is_region_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

/// An AWS region name: lower-case words joined by '-', ending in "-DIGITS" ("us-east-1", "us-gov-west-1").
inline bool is_aws_region(std::string_view text) {
  if (text.empty() || text.size() > kMaxSkyPilotZoneBytes) return false;
  if (!std::all_of(text.begin(), text.end(), is_region_char)) return false;
  const std::size_t dash = text.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == text.size()) return false;
  const std::string_view tail = text.substr(dash + 1);
  if (!std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  const char head = text.front();
  return head >= 'a' && head <= 'z' && text.find("--") == std::string_view::npos;
}

/// An AWS zone ID: lower-case words and digits joined by '-', ending in "-azDIGITS" ("use1-az1", "use1-bos1-az1").
inline bool is_aws_zone_id(std::string_view text) {
  if (text.empty() || text.size() > kMaxSkyPilotZoneBytes) return false;
  if (!std::all_of(text.begin(), text.end(), is_region_char)) return false;
  const std::size_t az = text.rfind("-az");
  if (az == std::string_view::npos || az == 0 || az + 3 == text.size()) return false;
  const std::string_view digits = text.substr(az + 3);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         text.find("--") == std::string_view::npos;
}

/// True when `zone` is a zone name of `region` ("us-east-1a", or a Local Zone "us-east-1-bos-1a").
inline bool zone_in_region(std::string_view zone, std::string_view region) {
  if (zone.size() <= region.size() || zone.substr(0, region.size()) != region) return false;
  const char next = zone[region.size()];
  return (next >= 'a' && next <= 'z') || (next == '-' && zone.size() > region.size() + 1);
}

/// An instance type name: 1 to kMaxSkyPilotNameBytes letters, digits, '.', '-' and '_'.
inline bool is_type_name(std::string_view text) {
  if (text.empty() || text.size() > kMaxSkyPilotNameBytes) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
  });
}

/// "a, b, c" with at most `shown` names, then "and N more".
inline std::string name_list(const std::vector<std::string>& names, std::size_t shown = 10) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) text.append(i == 0 ? "" : ", ").append(names[i]);
  if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

/// One zone's row of a (type, region).
struct ZoneRow {
  std::optional<double> spot_price_usd_per_hour;
  std::size_t line = 0;
};

/// The rows of one instance type in one region.
struct TypeRows {
  std::size_t first_line = 0;
  std::string accelerator_name;
  double accelerator_count = 0;  ///< 0 when empty
  int vcpus = 0;
  std::int64_t memory_mib = 0;
  double price_usd_per_hour = 0;  ///< on-demand; 0 when empty
  std::optional<SkyPilotGpuInfo> gpu_info;
  std::map<std::string, ZoneRow> zones;
  std::string inconsistent;  ///< why the rows disagree (the first disagreement); empty when they agree
};

struct RegionRows {
  std::size_t rows = 0;
  std::set<std::string> zones;
  std::map<std::string, TypeRows> types;
};

/// Warning lines, capped at kMaxSkyPilotWarnings (then one line counts the rest).
class Warnings {
 public:
  void add(std::string line) {
    ++total_;
    if (lines_.size() + 1 < kMaxSkyPilotWarnings) lines_.push_back(std::move(line));
  }
  std::vector<std::string> take() {
    if (total_ > lines_.size()) lines_.push_back("... and " + std::to_string(total_ - lines_.size()) + " more warnings");
    return std::move(lines_);
  }

 private:
  std::vector<std::string> lines_;
  std::size_t total_ = 0;
};

}  // namespace skypilot_detail

/// Reads one GpuInfo cell (a Python literal, see the file comment): Gpus must be a non-empty list of at
/// most kMaxGpuInfoDevices dicts, each with Name (printable, 1 to kMaxSkyPilotNameBytes bytes) and Count
/// (a whole number from 0 to kMaxSkyPilotAccelerators); Manufacturer and MemoryInfo.SizeInMiB are read
/// when given; other keys are ignored. Errors throw "function: WHERE.Gpus[0].Count = value: why".
[[nodiscard]] inline SkyPilotGpuInfo parse_skypilot_gpu_info(std::string_view text, std::string_view function = "parse_skypilot_gpu_info",
                                                             const std::string& where = "GpuInfo") {
  namespace d = spotdnn::detail;
  using skypilot_detail::excerpt;
  const Json literal = skypilot_detail::PythonLiteralReader(text, function, where).read();
  const auto bad = [&](const std::string& path, const Json& value, std::string_view why) {
    const std::string dumped = value.dump(-1, ' ', false, Json::error_handler_t::replace);  // never throws on bad UTF-8
    d::fail(function, where + path, dumped.size() > 80 ? dumped.substr(0, 80) + "..." : dumped, why);
  };
  if (!literal.is_object()) bad("", literal, "expected a dict with the key 'Gpus'");
  const auto gpus = literal.find("Gpus");
  if (gpus == literal.end()) d::fail(function, where + ".Gpus", "missing", "this key is required");
  if (!gpus->is_array() || gpus->empty()) bad(".Gpus", *gpus, "expected a non-empty list");
  if (gpus->size() > kMaxGpuInfoDevices) {
    d::fail(function, where + ".Gpus", std::to_string(gpus->size()) + " entries", "at most " + std::to_string(kMaxGpuInfoDevices) + " entries");
  }
  SkyPilotGpuInfo info;
  info.gpus = true;
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    const std::string path = ".Gpus[" + std::to_string(i) + "]";
    const Json& gpu = (*gpus)[i];
    if (!gpu.is_object()) bad(path, gpu, "expected a dict");
    const auto name = gpu.find("Name");
    if (name == gpu.end()) d::fail(function, where + path + ".Name", "missing", "this key is required");
    if (!name->is_string()) bad(path + ".Name", *name, "expected a string");
    const std::string& model = name->get_ref<const std::string&>();
    if (model.empty() || model.size() > kMaxSkyPilotNameBytes || !d::is_printable_utf8(model)) {
      bad(path + ".Name", *name, "expected 1 to " + std::to_string(kMaxSkyPilotNameBytes) + " bytes of printable UTF-8");
    }
    const auto count = gpu.find("Count");
    if (count == gpu.end()) d::fail(function, where + path + ".Count", "missing", "this key is required");
    if (!count->is_number() || count->get<double>() < 0 || count->get<double>() > kMaxSkyPilotAccelerators ||
        count->get<double>() != std::floor(count->get<double>())) {
      bad(path + ".Count", *count, "expected a whole number from 0 to " + d::format_number(kMaxSkyPilotAccelerators));
    }
    info.count += count->get<double>();
    if (info.count > kMaxSkyPilotAccelerators) {
      bad(path + ".Count", *count, "more than " + d::format_number(kMaxSkyPilotAccelerators) + " devices in one instance");
    }
    if (info.name.empty()) {
      info.name = model;
    } else if (info.name != model && info.name.size() + model.size() < kMaxSkyPilotNameBytes) {
      info.name += " + " + model;
    }
    const auto maker = gpu.find("Manufacturer");
    if (maker == gpu.end() || maker->is_null()) {
      info.gpus = false;
    } else {
      if (!maker->is_string() || !d::is_printable_utf8(maker->get_ref<const std::string&>()) ||
          maker->get_ref<const std::string&>().size() > kMaxSkyPilotNameBytes) {
        bad(path + ".Manufacturer", *maker, "expected a printable string of at most " + std::to_string(kMaxSkyPilotNameBytes) + " bytes");
      }
      if (info.manufacturer.empty()) info.manufacturer = maker->get<std::string>();
    }
    if (const auto memory = gpu.find("MemoryInfo"); memory != gpu.end() && !memory->is_null()) {
      if (!memory->is_object()) bad(path + ".MemoryInfo", *memory, "expected a dict");
      if (const auto size = memory->find("SizeInMiB"); size != memory->end() && !size->is_null()) {
        if (!size->is_number() || size->get<double>() < 0 || size->get<double>() > 1e9 || size->get<double>() != std::floor(size->get<double>())) {
          bad(path + ".MemoryInfo.SizeInMiB", *size, "expected a whole number from 0 to 1000000000");
        }
        info.memory_mib += std::int64_t(count->get<double>()) * std::int64_t(size->get<double>());
      }
    }
  }
  return info;
}

/// Builds one validated Catalog per region from the text of SkyPilot's AWS vms.csv (see the file comment
/// and docs/market-data.md); `source_name` names the file in messages.
[[nodiscard]] inline SkyPilotImport import_skypilot_catalog(std::string_view csv_text, std::string_view source_name,
                                                            const SkyPilotImportOptions& options) {
  namespace d = spotdnn::detail;
  namespace sd = skypilot_detail;
  using sd::cell_where;
  using sd::excerpt;
  const std::string fn = "import_skypilot_catalog";
  const std::string source(source_name);

  // ---- options ----
  if (options.quota_per_type < 0 || options.quota_per_type > kMaxQuota) {
    d::fail(fn, "options.quota_per_type", options.quota_per_type, "must be from 0 to " + std::to_string(kMaxQuota));
  }
  const auto check_list = [&](const std::vector<std::string>& list, const std::string& name, std::size_t most) {
    if (list.size() > most) d::fail(fn, name, std::to_string(list.size()) + " entries", "at most " + std::to_string(most) + " entries");
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = name + "[" + std::to_string(i) + "]";
      d::require_non_empty(fn, field, list[i]);
      d::require_printable_name(fn, field, list[i]);
      if (list[i].size() > kMaxSkyPilotNameBytes) d::fail(fn, field, excerpt(list[i]), "too long");
      if (!seen.insert(list[i]).second) d::fail(fn, field, d::quoted(list[i]), "listed twice");
    }
  };
  check_list(options.regions, "options.regions", kMaxSkyPilotOptionRegions);
  check_list(options.types, "options.types", std::size_t(kMaxInstanceTypes));
  if (options.zone_names_by_id.size() > kMaxSkyPilotOptionZones) {
    d::fail(fn, "options.zone_names_by_id", std::to_string(options.zone_names_by_id.size()) + " entries",
            "at most " + std::to_string(kMaxSkyPilotOptionZones) + " entries");
  }
  for (const auto& [id, name] : options.zone_names_by_id) {
    if (!sd::is_aws_zone_id(id)) d::fail(fn, "options.zone_names_by_id", excerpt(id), "expected an AWS zone ID like use1-az1");
    if (name.empty() || name.size() > kMaxSkyPilotZoneBytes || !std::all_of(name.begin(), name.end(), sd::is_region_char)) {
      d::fail(fn, "options.zone_names_by_id[" + id + "]", excerpt(name), "expected a zone name like us-east-1a");
    }
  }

  // ---- the text ----
  if (csv_text.size() > kMaxSkyPilotCatalogBytes) {
    d::fail(fn, source, std::to_string(csv_text.size()) + " bytes", "larger than " + std::to_string(kMaxSkyPilotCatalogBytes) + " bytes");
  }
  if (const void* nul = std::memchr(csv_text.data(), 0, csv_text.size())) {
    const auto before = std::size_t(static_cast<const char*>(nul) - csv_text.data());
    const auto line = std::size_t(std::count(csv_text.begin(), csv_text.begin() + std::ptrdiff_t(before), '\n')) + 1;
    d::fail(fn, source + ":" + std::to_string(line), "<NUL byte>", "a text file must not contain NUL bytes");
  }
  std::string_view text = csv_text;
  if (text.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) text.remove_prefix(kUtf8ByteOrderMark.size());

  std::size_t line_number = 0, at = 0;
  std::string_view line;
  const auto next_line = [&]() {
    while (at < text.size()) {
      const std::size_t end = std::min(text.find('\n', at), text.size());
      line = text.substr(at, end - at);
      at = end + 1;
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.size() > kMaxSkyPilotLineBytes) {
        d::fail(fn, source + ":" + std::to_string(line_number), std::to_string(line.size()) + " bytes",
                "the line is longer than " + std::to_string(kMaxSkyPilotLineBytes) + " bytes");
      }
      if (!line.empty()) return true;
    }
    return false;
  };

  // ---- the header ----
  const std::string expected_header = "expected SkyPilot's AWS catalog (vms.csv) header " + std::string(kSkyPilotAwsHeader);
  if (!next_line()) d::fail(fn, source, "<empty>", "the file is empty: " + expected_header);
  std::vector<std::string> cells;
  std::size_t bad_cell = 0;
  const std::size_t header_line = line_number;
  if (std::string why = sd::split_csv_line(line, cells, bad_cell); !why.empty()) {
    d::fail(fn, source + ":" + std::to_string(header_line) + ":" + std::to_string(bad_cell) + ": header", excerpt(line),
            why + ": " + expected_header + "; this looks like " + sd::describe_header(cells, line));
  }
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (!d::is_printable_utf8(cells[c])) {
      d::fail(fn, cell_where(source, header_line, c + 1, "header"), excerpt(cells[c]), "not printable UTF-8: " + expected_header);
    }
  }
  enum Column { kType, kAcceleratorName, kAcceleratorCount, kVcpus, kMemory, kGpuInfo, kPrice, kSpotPrice, kRegion, kZone, kColumns };
  static constexpr std::string_view kNames[kColumns] = {"InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB",
                                                        "GpuInfo", "Price", "SpotPrice", "Region", "AvailabilityZone"};
  std::size_t column_of[kColumns] = {};
  std::vector<std::string> extra_columns;
  {
    std::set<std::string> seen;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (!seen.insert(cells[c]).second) {
        d::fail(fn, cell_where(source, header_line, c + 1, "header"), excerpt(cells[c]), "this column is given twice");
      }
    }
    for (int k = 0; k < kColumns; ++k) {
      const auto it = std::find(cells.begin(), cells.end(), kNames[k]);
      if (it == cells.end()) {
        d::fail(fn, source + ":" + std::to_string(header_line) + ": header", d::quoted(kNames[k]),
                "missing column: " + expected_header + "; this looks like " + sd::describe_header(cells, line));
      }
      column_of[k] = std::size_t(it - cells.begin());
    }
    for (const std::string& name : cells) {
      if (name != "Arch" && std::find(std::begin(kNames), std::end(kNames), name) == std::end(kNames)) extra_columns.push_back(name);
    }
  }
  const std::vector<std::string> header = cells;
  sd::Warnings warnings;
  if (!extra_columns.empty()) warnings.add(source + ": ignored the columns " + sd::name_list(extra_columns) + " (a newer SkyPilot schema?)");

  // ---- the rows ----
  std::map<std::string, sd::RegionRows> regions;
  std::unordered_map<std::string, SkyPilotGpuInfo> gpu_info_cache;
  std::size_t rows = 0, repeated_without_price = 0, first_repeat_line = 0;
  while (next_line()) {
    const std::size_t ln = line_number;
    if (std::string why = sd::split_csv_line(line, cells, bad_cell); !why.empty()) {
      d::fail(fn, source + ":" + std::to_string(ln) + ":" + std::to_string(bad_cell), excerpt(line), why);
    }
    if (cells.size() != header.size()) {
      d::fail(fn, source + ":" + std::to_string(ln), std::to_string(cells.size()) + " cells",
              (cells.size() < header.size() ? "too few cells: the header has " : "too many cells: the header has ") +
                  std::to_string(header.size()) + " columns");
    }
    if (cells == header) d::fail(fn, source + ":" + std::to_string(ln), "<header>", "the header row is repeated (concatenated files?)");
    if (++rows > kMaxSkyPilotRows) {
      d::fail(fn, source + ":" + std::to_string(ln), "<row>", "more than " + std::to_string(kMaxSkyPilotRows) + " data rows");
    }
    const auto where = [&](int k) { return cell_where(source, ln, column_of[k] + 1, kNames[k]); };
    const auto cell = [&](int k) -> const std::string& { return cells[column_of[k]]; };
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (!d::is_printable_utf8(cells[c])) {
        d::fail(fn, cell_where(source, ln, c + 1, header[c]), excerpt(cells[c]), "must be printable UTF-8 text");
      }
    }
    const auto number = [&](int k, double most) -> std::optional<double> {
      const std::string& t = cell(k);
      if (t.empty()) return std::nullopt;
      const std::optional<double> value = sd::parse_number(t);
      if (!value) d::fail(fn, where(k), excerpt(t), "not a finite number");
      if (*value < 0) d::fail(fn, where(k), excerpt(t), "must not be negative");
      if (*value > most) d::fail(fn, where(k), excerpt(t), "must be at most " + d::format_fixed(most, 0));
      return value;
    };
    const auto price = [&](int k) -> std::optional<double> {
      const std::optional<double> value = number(k, 1e6);
      if (value && !(*value > 0)) d::fail(fn, where(k), excerpt(cell(k)), "a price must be greater than zero (leave the cell empty when unknown)");
      return value;
    };

    const std::string& type_name = cell(kType);
    if (!sd::is_type_name(type_name)) {
      d::fail(fn, where(kType), excerpt(type_name),
              "expected an instance type like p3.2xlarge: 1 to " + std::to_string(kMaxSkyPilotNameBytes) + " letters, digits, '.', '-' and '_'");
    }
    const std::string& region = cell(kRegion);
    if (!sd::is_aws_region(region)) {
      d::fail(fn, where(kRegion), excerpt(region),
              "expected an AWS region like us-east-1 (is this another cloud's vms.csv? GCP's regions look like us-central1)");
    }
    const std::string& zone = cell(kZone);
    if (zone.empty()) d::fail(fn, where(kZone), "\"\"", "expected a zone ID like use1-az1: SkyPilot's AWS catalog gives one on every row");
    if (!sd::is_aws_zone_id(zone) && !(sd::zone_in_region(zone, region) && zone.size() <= kMaxSkyPilotZoneBytes &&
                                        std::all_of(zone.begin(), zone.end(), sd::is_region_char))) {
      d::fail(fn, where(kZone), excerpt(zone), "expected an AWS zone ID like use1-az1 (or a zone name of " + region + ", like " + region + "a)");
    }
    const std::string& accelerator = cell(kAcceleratorName);
    if (accelerator.size() > kMaxSkyPilotNameBytes) d::fail(fn, where(kAcceleratorName), excerpt(accelerator), "too long");
    const double count = number(kAcceleratorCount, kMaxSkyPilotAccelerators).value_or(0);
    const std::optional<double> vcpus = number(kVcpus, double(kMaxInstanceVcpus));
    if (vcpus && *vcpus != std::floor(*vcpus)) d::fail(fn, where(kVcpus), excerpt(cell(kVcpus)), "must be a whole number");
    const double memory_gib = number(kMemory, kMaxSkyPilotMemoryGib).value_or(0);
    const double on_demand = price(kPrice).value_or(0);
    const std::optional<double> spot = price(kSpotPrice);
    std::optional<SkyPilotGpuInfo> gpu_info;
    if (const std::string& info = cell(kGpuInfo); !info.empty()) {
      const auto cached = gpu_info_cache.find(info);
      if (cached != gpu_info_cache.end()) {
        gpu_info = cached->second;
      } else {
        gpu_info = parse_skypilot_gpu_info(info, fn, where(kGpuInfo));
        if (gpu_info_cache.size() < 100000) gpu_info_cache.emplace(info, *gpu_info);
      }
    }

    auto [region_it, new_region] = regions.try_emplace(region);
    if (new_region && regions.size() > kMaxSkyPilotRegions) {
      d::fail(fn, where(kRegion), excerpt(region), "more than " + std::to_string(kMaxSkyPilotRegions) + " regions");
    }
    sd::RegionRows& region_rows = region_it->second;
    ++region_rows.rows;
    region_rows.zones.insert(zone);
    auto [type_it, new_type] = region_rows.types.try_emplace(type_name);
    sd::TypeRows& type = type_it->second;
    const int whole_vcpus = vcpus ? int(*vcpus) : 0;
    const auto memory_mib = std::int64_t(std::llround(memory_gib * 1024));
    if (new_type) {
      type.first_line = ln;
      type.accelerator_name = accelerator;
      type.accelerator_count = count;
      type.vcpus = whole_vcpus;
      type.memory_mib = memory_mib;
      type.price_usd_per_hour = on_demand;
      type.gpu_info = gpu_info;
    } else if (type.inconsistent.empty()) {
      const auto differs = [&](int k, const std::string& now, const std::string& before) {
        type.inconsistent = "line " + std::to_string(ln) + " gives " + std::string(kNames[k]) + " = " + d::quoted(now) + " but line " +
                            std::to_string(type.first_line) + " gives " + d::quoted(before);
      };
      if (accelerator != type.accelerator_name) {
        differs(kAcceleratorName, accelerator, type.accelerator_name);
      } else if (count != type.accelerator_count) {
        differs(kAcceleratorCount, d::format_number(count), d::format_number(type.accelerator_count));
      } else if (whole_vcpus != type.vcpus) {
        differs(kVcpus, std::to_string(whole_vcpus), std::to_string(type.vcpus));
      } else if (memory_mib != type.memory_mib) {
        differs(kMemory, d::format_number(memory_gib), d::format_number(double(type.memory_mib) / 1024));
      } else if (on_demand != type.price_usd_per_hour) {
        differs(kPrice, d::format_number(on_demand), d::format_number(type.price_usd_per_hour));
      }
    }
    auto [zone_it, new_zone] = type.zones.try_emplace(zone);
    if (new_zone) {
      zone_it->second = {spot, ln};
    } else {
      sd::ZoneRow& before = zone_it->second;
      if (spot && before.spot_price_usd_per_hour) {
        d::fail(fn, where(kZone), d::quoted(zone),
                type_name + " in " + region + " is listed twice in this zone with a spot price (also on line " + std::to_string(before.line) +
                    "): which price holds is ambiguous");
      }
      if (++repeated_without_price == 1) first_repeat_line = ln;
      if (spot) before = {spot, ln};
    }
  }
  if (rows == 0) d::fail(fn, source, "<no rows>", "the file has a header but no data rows");
  if (repeated_without_price > 0) {
    warnings.add(source + ": ignored " + std::to_string(repeated_without_price) +
                 " rows that repeat an (instance type, region, zone) without a spot price (the first on line " +
                 std::to_string(first_repeat_line) + ")");
  }

  // ---- which regions ----
  std::vector<std::string> wanted_regions;
  if (options.regions.empty()) {
    for (const auto& entry : regions) wanted_regions.push_back(entry.first);
  } else {
    std::vector<std::string> known;
    for (const auto& entry : regions) known.push_back(entry.first);
    for (std::size_t i = 0; i < options.regions.size(); ++i) {
      if (regions.count(options.regions[i]) == 0) {
        d::fail(fn, "options.regions[" + std::to_string(i) + "]", d::quoted(options.regions[i]),
                "not in " + source + " (its regions: " + sd::name_list(known, 30) + ")");
      }
      wanted_regions.push_back(options.regions[i]);
    }
    std::sort(wanted_regions.begin(), wanted_regions.end());
  }
  const std::set<std::string> wanted_types(options.types.begin(), options.types.end());

  // ---- the catalogs ----
  SkyPilotImport result;
  result.rows = rows;
  std::set<std::string> types_without_gpu, non_gpu_accelerators;
  std::map<std::string, std::string> fractional;                // type → count
  std::map<std::string, std::vector<std::string>> missing_in;   // requested type → regions without it
  std::map<std::string, std::vector<std::string>> unpriced_in;  // requested type → regions without a spot price
  const ParameterServer preset_server = presets::resnet110_catalog().parameter_server;
  for (const auto& [region, region_rows] : regions) {
    SkyPilotRegionCounts counts;
    counts.region = region;
    counts.rows = region_rows.rows;
    counts.zones = region_rows.zones.size();
    counts.types = region_rows.types.size();
    // Types without GPUs are counted over the whole file, wanted region or not.
    for (const auto& [name, type] : region_rows.types) {
      if (type.accelerator_count == 0) {
        types_without_gpu.insert(name);
      } else if (!type.gpu_info || !type.gpu_info->gpus) {
        non_gpu_accelerators.insert(name + (type.accelerator_name.empty() ? std::string() : " (" + type.accelerator_name + ")"));
      } else if (type.accelerator_count != std::floor(type.accelerator_count)) {
        fractional.emplace(name, d::format_number(type.accelerator_count));
      }
    }
    if (!std::binary_search(wanted_regions.begin(), wanted_regions.end(), region)) {
      result.counts.push_back(counts);
      continue;
    }
    Catalog catalog;
    catalog.region = region;
    catalog.parameter_server = preset_server;
    std::vector<std::string> unpriced;
    std::set<std::string> unnamed_zones;
    for (const auto& [name, type] : region_rows.types) {
      if (!wanted_types.empty() && wanted_types.count(name) == 0) continue;
      const bool named = !wanted_types.empty();
      if (!type.inconsistent.empty()) {
        warnings.add(name + " in " + region + ": skipped: its rows disagree: " + type.inconsistent);
        continue;
      }
      const bool gpu_type = type.accelerator_count >= 1 && type.accelerator_count == std::floor(type.accelerator_count) &&
                            type.gpu_info && type.gpu_info->gpus;
      if (!gpu_type) {
        if (named) {
          warnings.add(name + " in " + region + ": skipped: " +
                       (type.accelerator_count == 0 ? std::string("no GPU")
                        : type.accelerator_count != std::floor(type.accelerator_count)
                            ? "a fractional GPU count (" + d::format_number(type.accelerator_count) + ")"
                            : "its accelerator " + d::quoted(type.accelerator_name) + " is not a GPU"));
        }
        continue;
      }
      std::vector<std::pair<std::string, double>> prices;
      for (const auto& [zone, row] : type.zones) {
        if (!row.spot_price_usd_per_hour) continue;
        std::string key = zone;
        if (sd::is_aws_zone_id(zone)) {
          if (const auto mapped = options.zone_names_by_id.find(zone); mapped != options.zone_names_by_id.end()) {
            if (!sd::zone_in_region(mapped->second, region)) {
              d::fail(fn, "options.zone_names_by_id[" + zone + "]", d::quoted(mapped->second),
                      "not a zone of " + region + ", where " + source + " lists " + zone + " (line " + std::to_string(row.line) +
                          "): an availability-zones output of another region or account?");
            }
            key = mapped->second;
          } else if (!options.zone_names_by_id.empty()) {
            unnamed_zones.insert(zone);
          }
        }
        prices.emplace_back(std::move(key), *row.spot_price_usd_per_hour);
      }
      if (prices.empty()) {
        if (named) {
          unpriced_in[name].push_back(region);
        } else {
          unpriced.push_back(name);
        }
        continue;
      }
      if (prices.size() > kMaxZonesPerType) {
        d::fail(fn, source + ": " + name + " in " + region, std::to_string(prices.size()) + " zones",
                "at most " + std::to_string(kMaxZonesPerType) + " zones per type");
      }
      InstanceType imported;
      imported.name = name;
      imported.market = Market::spot;
      imported.gpus = int(type.accelerator_count);
      imported.gpu_model = type.accelerator_name.empty() ? type.gpu_info->name : type.accelerator_name;
      imported.vcpus = type.vcpus;
      imported.memory_mib = type.memory_mib;
      imported.on_demand_price_usd_per_hour = type.price_usd_per_hour;
      imported.quota = options.quota_per_type;
      imported.price_usd_per_hour = prices.front().second;
      for (const auto& [key, zone_price] : prices) {
        if (!imported.zone_prices_usd_per_hour.emplace(key, zone_price).second) {
          d::fail(fn, source + ": " + name + " in " + region, d::quoted(key),
                  "two zones of the file are named " + key + " (a zone ID mapped to a name the file also lists)");
        }
        imported.price_usd_per_hour = std::min(imported.price_usd_per_hour, zone_price);
      }
      const aws::QuotaGroupCodes codes = aws::quota_groups_for_type(name);
      imported.spot_quota_group = std::string(codes.spot);
      imported.on_demand_quota_group = std::string(codes.on_demand);
      counts.zone_prices += imported.zone_prices_usd_per_hour.size();
      catalog.instance_types.push_back(std::move(imported));
    }
    for (const std::string& name : options.types) {
      if (region_rows.types.count(name) == 0) missing_in[name].push_back(region);
    }
    if (!unpriced.empty()) {
      warnings.add(region + ": skipped " + std::to_string(unpriced.size()) + " GPU types without a spot price in any zone: " + sd::name_list(unpriced));
    }
    if (!unnamed_zones.empty()) {
      warnings.add(region + ": the zones " + sd::name_list(std::vector<std::string>(unnamed_zones.begin(), unnamed_zones.end())) +
                   " have no name in the availability-zones output: their prices are keyed by zone ID");
    }
    counts.gpu_types = catalog.instance_types.size();
    if (catalog.instance_types.empty()) {
      if (!options.regions.empty()) {
        d::fail(fn, "options.regions", d::quoted(region),
                "no " + std::string(wanted_types.empty() ? "GPU type" : "requested GPU type") + " with a spot price in " + source +
                    " for this region");
      }
      warnings.add(region + ": no " + std::string(wanted_types.empty() ? "GPU type" : "requested GPU type") +
                   " with a spot price: no catalog");
      result.counts.push_back(counts);
      continue;
    }
    if (catalog.instance_types.size() > std::size_t(kMaxInstanceTypes)) {
      d::fail(fn, source + ": " + region, std::to_string(catalog.instance_types.size()) + " types",
              "a catalog may list at most " + std::to_string(kMaxInstanceTypes) + " instance types: pass the types wanted");
    }
    // The parameter server: the preset's type at this region's on-demand price in the file.
    const auto server = region_rows.types.find(catalog.parameter_server.type);
    if (server != region_rows.types.end() && server->second.inconsistent.empty() && server->second.price_usd_per_hour > 0) {
      catalog.parameter_server.price_usd_per_hour = server->second.price_usd_per_hour;
    } else {
      warnings.add(region + ": parameter server " + catalog.parameter_server.type + ": no on-demand Price in " + source +
                   ": using the frozen preset price $" + d::format_readable(catalog.parameter_server.price_usd_per_hour) + "/h");
    }
    catalog.missing_sources = {std::string(kSkyPilotQuotasMissing) + ": every type's quota is " + std::to_string(options.quota_per_type) + " instances",
                               std::string(kSkyPilotAdvisorMissing)};
    validate_at_path(fn, source + ": " + region, "Catalog::validate", [&] { catalog.validate(); });
    result.counts.push_back(counts);
    result.catalogs.push_back(std::move(catalog));
  }

  // ---- what was skipped ----
  if (wanted_types.empty()) {
    if (!types_without_gpu.empty()) {
      warnings.add(source + ": skipped " + std::to_string(types_without_gpu.size()) + " instance types without GPUs");
    }
    if (!non_gpu_accelerators.empty()) {
      warnings.add(source + ": skipped " + std::to_string(non_gpu_accelerators.size()) + " types whose accelerators are not GPUs: " +
                   sd::name_list(std::vector<std::string>(non_gpu_accelerators.begin(), non_gpu_accelerators.end())));
    }
    if (!fractional.empty()) {
      std::vector<std::string> names;
      for (const auto& [name, share] : fractional) names.push_back(name + " (" + share + ")");
      warnings.add(source + ": skipped " + std::to_string(names.size()) + " types with a fractional GPU: " + sd::name_list(names));
    }
  }
  for (const auto& [name, where] : missing_in) {
    warnings.add(name + ": not in " + source + " for " + sd::name_list(where));
  }
  for (const auto& [name, where] : unpriced_in) {
    warnings.add(name + ": skipped in " + sd::name_list(where) + ": no spot price in any zone");
  }
  if (result.catalogs.empty()) {
    d::fail(fn, source, std::to_string(rows) + " rows",
            "no " + std::string(wanted_types.empty() ? "GPU type" : "requested GPU type") + " with a spot price in any region of the file");
  }
  result.warnings = warnings.take();
  return result;
}

/// Reads SkyPilot's AWS vms.csv at `path` (a regular file of at most kMaxSkyPilotCatalogBytes) and imports
/// it as import_skypilot_catalog does; messages name the path.
[[nodiscard]] inline SkyPilotImport import_skypilot_catalog_file(const std::string& path, const SkyPilotImportOptions& options) {
  const std::string text = read_checked_file(path, kMaxSkyPilotCatalogBytes, "import_skypilot_catalog");
  return import_skypilot_catalog(text, path, options);
}

}  // namespace spotdnn::io
