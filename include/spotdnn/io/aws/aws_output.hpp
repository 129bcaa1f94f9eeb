#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/aws_output.hpp Reading one saved `aws … --output json` output: lenient to keys AWS adds,
/// strict about the keys spotdnn reads, bounded, with messages "function: SOURCE: path = value: why".

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// Most entries of one list in one AWS output (spot price rows, instance types, PriceList products,
/// quotas, advisor ranges and types): more is refused before any entry is read.
inline constexpr std::size_t kMaxAwsRows = 1000000;
/// Longest string spotdnn reads from an AWS output field (names, zones, codes, descriptions): 1 KiB.
inline constexpr std::size_t kMaxAwsTextBytes = 1024;
/// Longest decimal number written as text (AWS prices such as "0.918000" or "3.0600000000"): 64 bytes.
inline constexpr std::size_t kMaxAwsDecimalBytes = 64;

/// One AWS output being read: its name for messages (the file) and the function reported. Unknown keys
/// are ignored (AWS adds fields over time); a known key of the wrong type, or a value out of range, throws
/// spotdnn::invalid_argument "function: SOURCE: Path[3].Key = value: why".
class AwsOutputReader {
 public:
  AwsOutputReader(std::string source, std::string function) : source_(std::move(source)), function_(std::move(function)) {}

  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const std::string& function() const { return function_; }

  /// "SOURCE: path", or "SOURCE" for the document itself (path "").
  [[nodiscard]] std::string where(std::string_view path) const {
    return path.empty() ? source_ : source_ + ": " + std::string(path);
  }
  [[noreturn]] void fail(std::string_view path, std::string_view value, std::string_view why) const {
    spotdnn::detail::fail(function_, where(path), value, why);
  }
  [[noreturn]] void fail_at(std::string_view path, const Json& value, std::string_view why) const {
    fail(path, JsonObjectReader::excerpt(value), why);
  }

  /// `path` joined with an object key or an array index.
  [[nodiscard]] static std::string key(std::string_view path, std::string_view key) {
    return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
  }
  [[nodiscard]] static std::string index(std::string_view path, std::size_t i) {
    return std::string(path) + "[" + std::to_string(i) + "]";
  }

  /// `value` when it is an object; throws otherwise.
  const Json& object(const Json& value, std::string_view path) const {
    if (!value.is_object()) fail_at(path, value, "expected a JSON object");
    return value;
  }
  /// `value` when it is an array of at most kMaxAwsRows entries; throws otherwise.
  const Json& array(const Json& value, std::string_view path) const {
    if (!value.is_array()) fail_at(path, value, "expected a JSON array");
    if (value.size() > kMaxAwsRows) {
      fail(path, std::to_string(value.size()) + " entries", "at most " + std::to_string(kMaxAwsRows) + " entries are read");
    }
    return value;
  }
  /// The member `name` of an object, or nullptr when absent or null (the CLI prints null for some unset fields).
  [[nodiscard]] static const Json* member(const Json& object, std::string_view name) {
    const auto it = object.find(std::string(name));
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }
  /// The member `name` of an object at `path`; throws naming the key when it is missing or null (AWS's Go
  /// SDK writes an unset field as null: null is read as absent, never as a value).
  const Json& required(const Json& object, std::string_view path, std::string_view name) const {
    const Json* value = member(object, name);
    if (value == nullptr) {
      const bool null = object.is_object() && object.contains(std::string(name));
      fail(key(path, name), null ? "null" : "missing", null ? "this key is required (null is read as absent)" : "this key is required");
    }
    return *value;
  }

  /// A string of at most kMaxAwsTextBytes of printable UTF-8.
  [[nodiscard]] std::string text(const Json& value, std::string_view path) const {
    if (!value.is_string()) fail_at(path, value, "expected a string");
    const auto& s = value.get_ref<const std::string&>();
    if (s.size() > kMaxAwsTextBytes) {
      fail(path, spotdnn::detail::quoted(s.substr(0, 40) + "..."), "longer than " + std::to_string(kMaxAwsTextBytes) + " bytes");
    }
    if (!spotdnn::detail::is_printable_utf8(s)) fail(path, spotdnn::detail::quoted(s), "must be printable UTF-8 text");
    return s;
  }
  /// A non-empty text(): names, codes and zones.
  [[nodiscard]] std::string name(const Json& value, std::string_view path) const {
    std::string s = text(value, path);
    if (s.empty()) fail(path, "\"\"", "must not be empty");
    return s;
  }
  /// A finite JSON number.
  [[nodiscard]] double number(const Json& value, std::string_view path) const {
    if (!value.is_number()) fail_at(path, value, "expected a number");
    const double d = value.get<double>();
    if (!std::isfinite(d)) fail_at(path, value, "must be a finite number");
    return d;
  }
  /// A whole JSON number from `minimum` to `maximum`.
  [[nodiscard]] std::int64_t whole(const Json& value, std::string_view path, std::int64_t minimum, std::int64_t maximum) const {
    if (!value.is_number_integer()) fail_at(path, value, "expected a whole number");
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(maximum)) {
      fail_at(path, value, "must be a whole number from " + std::to_string(minimum) + " to " + std::to_string(maximum));
    }
    const auto v = value.get<std::int64_t>();
    if (v < minimum || v > maximum) {
      fail_at(path, value, "must be a whole number from " + std::to_string(minimum) + " to " + std::to_string(maximum));
    }
    return v;
  }
  /// A decimal number written as a string, as AWS writes prices: digits, optionally a point and digits
  /// ("0.918000", "3.0600000000"); at most kMaxAwsDecimalBytes. `what` completes "expected a decimal number of …".
  [[nodiscard]] double decimal_text(const Json& value, std::string_view path, std::string_view what) const {
    const std::string why = "expected a decimal number of " + std::string(what);
    if (!value.is_string()) fail_at(path, value, why + " written as a string");
    const auto& s = value.get_ref<const std::string&>();
    std::size_t at = 0, integer_digits = 0, fraction_digits = 0;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at, ++integer_digits;
    if (at < s.size() && s[at] == '.') {
      ++at;
      while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at, ++fraction_digits;
      if (fraction_digits == 0) at = std::string::npos;
    }
    if (s.size() > kMaxAwsDecimalBytes || integer_digits == 0 || at != s.size()) {
      fail(path, spotdnn::detail::quoted(s.substr(0, kMaxAwsDecimalBytes)), why);
    }
    double d = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (error != std::errc() || end != s.data() + s.size() || !std::isfinite(d)) fail(path, spotdnn::detail::quoted(s), why);
    return d;
  }

 private:
  std::string source_;
  std::string function_;
};

}  // namespace spotdnn::io::aws
