#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/output_forms.hpp The forms in which people hold AWS market data, and what a file that is
/// none of them looks like: a JSON text that may be a stream of objects (`jq '.PriceList[] | fromjson'`),
/// a bare list (`--query InstanceTypes`), a recorded SDK response, or something else named for the message.
///
/// Forms read (docs/market-data.md, "Forms read"):
/// - one JSON document, as `aws … --output json` prints it;
/// - a stream of JSON objects written one after another (concatenated or one per line, as jq prints
///   `.X[]`): read as a JSON array of those objects, so it is read like the bare list `jq '[.X[]]'` gives;
/// - the list itself instead of the output object (`--query InstanceTypes`, `--query SpotPriceHistory`,
///   `jq .PriceList`);
/// - the output object inside one wrapper object (a recorded SDK response such as {"status_code": 200,
///   "data": {"InstanceTypes": […], "ResponseMetadata": {…}}}): unwrapped, paths keep the wrapper key;
/// - null for an absent field or list, as AWS's Go SDK writes them: read as absent.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/limits.hpp"

namespace spotdnn::io::aws {

/// Most JSON documents in one stream (one per PriceList product, instance type or spot price row).
inline constexpr std::size_t kMaxAwsStreamDocuments = kMaxAwsRows;

namespace forms_detail {

/// Parses `text` (one JSON value) under parse_json's limits, in linear time (detail::LinearJsonBuilder, io/json.hpp). A syntax
/// error reports its byte offset counted from `offset` (where `text` starts in the file); when `text` runs
/// to the end of the file and the error is its end, the message says the file looks truncated.
inline Json parse_at(std::string_view text, std::size_t offset, bool at_end, const std::string& source) {
  const std::string function = "parse_aws_output";
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    spotdnn::detail::fail(function, source, "byte " + std::to_string(offset + nul), "malformed JSON: a NUL byte (JSON text cannot contain one)");
  }
  Json root;
  spotdnn::detail::LinearJsonBuilder builder(root, source, function);
  if (Json::sax_parse(text.begin(), text.end(), &builder)) return root;
  if (!builder.syntax_error()) spotdnn::detail::fail(function, source, "text", "unusable JSON: " + builder.error());
  if (at_end && builder.error_byte() > text.size()) {  // nlohmann reports the end of input one past the last byte
    spotdnn::detail::fail(function, source, "byte " + std::to_string(offset + text.size()),
                          "the JSON ends early: the file looks truncated (cut short while downloading or copying?)");
  }
  spotdnn::detail::fail(function, source, "byte " + std::to_string(offset + builder.error_byte()), "malformed JSON: " + builder.error());
}

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace forms_detail

/// Parses a saved AWS output: one JSON document, or a stream of JSON objects one after another (returned
/// as a JSON array of them, at most kMaxAwsStreamDocuments). At most kMaxJsonFileBytes, parse_json's limits
/// for each document, a leading byte-order mark accepted. Errors throw spotdnn::invalid_argument
/// "parse_aws_output: SOURCE = byte N: why"; a text that ends inside a value says the file looks truncated.
[[nodiscard]] inline Json parse_aws_output(std::string_view text, const std::string& source) {
  namespace d = spotdnn::detail;
  const std::string function = "parse_aws_output";
  if (text.size() > kMaxJsonFileBytes) {
    d::fail(function, source, std::to_string(text.size()) + " bytes", "more than " + std::to_string(kMaxJsonFileBytes) + " bytes");
  }
  std::size_t start = 0;
  if (text.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) start = kUtf8ByteOrderMark.size();
  if (text.substr(start, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
    d::fail(function, source, "byte " + std::to_string(start), "malformed JSON: a second byte-order mark");
  }
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    d::fail(function, source, "byte " + std::to_string(nul), "malformed JSON: a NUL byte (JSON text cannot contain one)");
  }
  // Split into top-level values: objects and arrays are delimited by their brackets (outside strings).
  std::vector<std::pair<std::size_t, std::size_t>> pieces;  // [begin, end)
  std::size_t at = start;
  while (true) {
    while (at < text.size() && forms_detail::is_space(text[at])) ++at;
    if (at == text.size()) break;
    const char first = text[at];
    if (first != '{' && first != '[') {
      if (!pieces.empty()) {
        d::fail(function, source, "byte " + std::to_string(at),
                "after " + std::to_string(pieces.size()) + " JSON document(s), text that is not a JSON object: a stream holds objects only");
      }
      if (first == '<') {
        d::fail(function, source, "byte " + std::to_string(at),
                "this looks like HTML or XML (an error page?), not the JSON of `aws ... --output json`");
      }
      pieces.emplace_back(at, text.size());  // a scalar or garbage: parse_at reports it
      break;
    }
    std::size_t depth = 0;
    bool in_string = false, closed = false;
    std::size_t k = at;
    for (; k < text.size(); ++k) {
      const char c = text[k];
      if (in_string) {
        if (c == '\\') {
          ++k;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) {
          closed = true;
          break;
        }
      }
    }
    if (!closed) {
      pieces.emplace_back(at, text.size());  // ends early (truncated) or unbalanced: parse_at reports it
      break;
    }
    pieces.emplace_back(at, k + 1);
    if (pieces.size() > kMaxAwsStreamDocuments) {
      d::fail(function, source, "more than " + std::to_string(kMaxAwsStreamDocuments) + " documents",
              "at most " + std::to_string(kMaxAwsStreamDocuments) + " JSON documents are read from one stream");
    }
    at = k + 1;
  }
  if (pieces.empty()) d::fail(function, source, "empty", "no JSON document (an empty file?)");
  if (pieces.size() == 1) {
    return forms_detail::parse_at(text.substr(pieces[0].first), pieces[0].first, true, source);
  }
  Json stream = Json::array();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const auto [begin, end] = pieces[i];
    Json document = forms_detail::parse_at(text.substr(begin, end - begin), begin, end == text.size(),
                                           source + ": document " + std::to_string(i + 1) + " of a stream");
    if (!document.is_object()) {
      d::fail(function, source, "document " + std::to_string(i + 1) + " (byte " + std::to_string(begin) + ")",
              "a stream of JSON documents must hold objects only (one product, instance type or row each)");
    }
    stream.push_back(std::move(document));
  }
  return stream;
}

/// Reads and parses a saved AWS output file (parse_aws_output): a regular file of at most
/// kMaxJsonFileBytes; errors name the path.
[[nodiscard]] inline Json read_aws_output_file(const std::string& path) {
  return parse_aws_output(read_checked_file(path, kMaxJsonFileBytes, "read_aws_output_file"), path);
}

/// What a JSON document looks like, for messages: "an EC2 offer file (Price List bulk JSON) of
/// eu-west-1", "a describe-spot-price-history output", "a recorded SDK response (ResponseMetadata) with the
/// keys …", "a JSON object with the keys …", "a JSON array of 3 numbers".
[[nodiscard]] inline std::string describe_aws_json(const Json& json) {
  const auto keys_of = [](const Json& object) {
    std::string keys;
    std::size_t n = 0;
    for (auto it = object.begin(); it != object.end() && n < 6; ++it, ++n) {
      keys += (n == 0 ? "" : ", ") + spotdnn::detail::quoted(it.key().substr(0, 40));
    }
    if (object.size() > 6) keys += ", ...";
    return keys;
  };
  const auto text_at = [](const Json& object, const char* name) -> std::string {
    const Json* value = AwsOutputReader::member(object, name);
    if (value == nullptr || !value->is_string()) return std::string();
    return value->get_ref<const std::string&>().substr(0, 60);
  };
  if (json.is_array()) {
    if (json.empty()) return "an empty JSON array";
    const Json& first = json.front();
    if (first.is_object()) {
      if (first.contains("InstanceType") && first.contains("VCpuInfo")) return "a list of instance types (describe-instance-types --query InstanceTypes)";
      if (first.contains("SpotPrice")) return "a list of spot prices (describe-spot-price-history --query SpotPriceHistory)";
      if (first.contains("product") || first.contains("terms")) return "a list or stream of Price List products (get-products PriceList entries)";
      if (first.contains("QuotaCode")) return "a list of service quotas";
      if (first.contains("ZoneName") || first.contains("ZoneId")) return "a list of Availability Zones";
      if (first.contains("InstanceId")) return "a list of instances";
      return "a JSON array of " + std::to_string(json.size()) + " objects with the keys " + keys_of(first);
    }
    if (first.is_string()) return "a JSON array of " + std::to_string(json.size()) + " strings (PriceList entries as JSON text?)";
    return "a JSON array of " + std::to_string(json.size()) + " values";
  }
  if (!json.is_object()) {
    if (json.is_null()) return "null";
    if (json.is_string()) return "a JSON string";
    if (json.is_number()) return "a JSON number";
    return "a JSON " + std::string(json.type_name());
  }
  if (json.empty()) return "an empty JSON object";
  if (json.contains("offerCode") && json.contains("products")) {
    std::string region;
    if (const Json* products = AwsOutputReader::member(json, "products"); products != nullptr && products->is_object()) {
      for (auto it = products->begin(); it != products->end() && region.empty(); ++it) {
        if (const Json* attributes = it->is_object() ? AwsOutputReader::member(*it, "attributes") : nullptr;
            attributes != nullptr && attributes->is_object()) {
          region = text_at(*attributes, "regionCode");
        }
      }
    }
    const std::string code = text_at(json, "offerCode");
    return "the " + (code.empty() ? std::string("?") : code) + " offer file (Price List bulk JSON)" +
           (region.empty() ? std::string() : " of " + region);
  }
  if (json.contains("offers")) return "the Price List offer index (every service's offer files; download the region's AmazonEC2 offer file it points to)";
  if (json.contains("regions") && json.contains("formatVersion")) {
    return "a Price List region index (region_index.json; download the region's offer file, its currentVersionUrl)";
  }
  if (json.contains("PriceList")) return "a pricing get-products output";
  if (json.contains("product") && json.contains("terms")) return "one Price List product (a decoded PriceList entry)";
  if (json.contains("InstanceTypes")) return "a describe-instance-types output";
  if (json.contains("SpotPriceHistory")) return "a describe-spot-price-history output";
  if (json.contains("Quotas")) return "a service-quotas output";
  if (json.contains("SpotPlacementScores")) return "a get-spot-placement-scores output";
  if (json.contains("AvailabilityZones")) return "a describe-availability-zones output";
  if (json.contains("Reservations")) return "a describe-instances output";
  if (json.contains("spot_advisor") || json.contains("ranges")) return "the Spot Instance Advisor file";
  if (json.contains("instance_types") && json.contains("parameter_server")) return "a spotdnn catalog";
  if (const Json* error = AwsOutputReader::member(json, "Error"); error != nullptr && error->is_object()) {
    const std::string code = text_at(*error, "Code"), message = text_at(*error, "Message");
    return "an AWS error response" + (code.empty() ? std::string() : " (" + code + (message.empty() ? "" : ": " + message) + ")");
  }
  if (json.contains("__type") || (json.contains("message") && json.size() <= 3)) {
    return "an AWS error response (" + (text_at(json, "__type") + " " + text_at(json, "message")) + ")";
  }
  if (json.contains("ResponseMetadata") || json.contains("ResultMetadata")) {
    std::string status;
    if (const Json* meta = AwsOutputReader::member(json, "ResponseMetadata"); meta != nullptr && meta->is_object()) {
      if (const Json* code = AwsOutputReader::member(*meta, "HTTPStatusCode"); code != nullptr && code->is_number_integer()) {
        status = ", HTTP status " + std::to_string(code->get<std::int64_t>());
      }
    }
    return "a recorded SDK response (" + std::string(json.contains("ResponseMetadata") ? "ResponseMetadata" : "ResultMetadata") + status +
           ") with the keys " + keys_of(json);
  }
  return "a JSON object with the keys " + keys_of(json);
}

/// One kind of AWS output read by import: the aws command, the CLI option that gives it, and its list key.
struct AwsOutputKind {
  std::string_view command;  ///< "describe-instance-types"
  std::string_view option;   ///< "--instance-types"
  std::string_view list_key; ///< "InstanceTypes"
};

inline constexpr AwsOutputKind kInstanceTypesOutput{"describe-instance-types", "--instance-types", "InstanceTypes"};
inline constexpr AwsOutputKind kSpotPriceHistoryOutput{"describe-spot-price-history", "--spot-prices", "SpotPriceHistory"};
inline constexpr AwsOutputKind kPricingProductsOutput{"pricing get-products", "--on-demand-prices", "PriceList"};

/// Where an output's list is: the list, its key path ("InstanceTypes", "data.InstanceTypes", or "" for a
/// bare list), and the object that holds it (for NextToken; nullptr for a bare list).
struct AwsOutputList {
  const Json* list = nullptr;
  std::string path;
  const Json* output = nullptr;
};

/// Finds the list of `kind` in `json`: a bare array (a non-empty one: an empty array is refused as
/// "expected a JSON object"), the output object's `list_key`, or that of the one member object that has it
/// (a wrapper, such as a recorded SDK response). A list given as null is absent. Otherwise throws
/// "function: SOURCE[: path] = value: why" saying what the document looks like instead.
[[nodiscard]] inline AwsOutputList find_output_list(const AwsOutputReader& in, const Json& json, const AwsOutputKind& kind) {
  using R = AwsOutputReader;
  const std::string expected = "a " + std::string(kind.command) + " output (" + std::string(kind.option) + ")";
  if (json.is_array()) {
    if (json.empty()) in.fail_at("", json, "expected a JSON object");
    return {&in.array(json, ""), "", nullptr};
  }
  if (!json.is_object()) in.fail_at("", json, "expected a JSON object: " + expected + "; this is " + describe_aws_json(json));
  const std::string key(kind.list_key);
  if (json.contains(key)) {
    if (json.at(key).is_null()) {
      in.fail(key, "null", "this key is required (null is read as absent: the output lists nothing)");
    }
    return {&in.array(json.at(key), key), key, &json};
  }
  // One wrapper object around the output: {"data": {"InstanceTypes": [...]}, "status_code": 200}.
  const Json* inner = nullptr;
  std::string inner_key;
  std::size_t found = 0;
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (it->is_object() && it->contains(key)) {
      ++found;
      inner = &*it;
      inner_key = it.key();
    }
  }
  if (found == 1) {
    const std::string path = R::key(inner_key, key);
    if (inner->at(key).is_null()) in.fail(path, "null", "this key is required (null is read as absent: the output lists nothing)");
    return {&in.array(inner->at(key), path), path, inner};
  }
  const std::string looks = describe_aws_json(json);
  const bool generic = looks.rfind("a JSON object with the keys", 0) == 0 || looks == "an empty JSON object";
  if (looks == "an empty JSON object") in.fail(key, "missing", "this key is required");
  in.fail(key, "missing", "this key is required: " + in.source() + " is not " + expected + (generic ? ": it is " : ": it looks like ") + looks);
}

}  // namespace spotdnn::io::aws
