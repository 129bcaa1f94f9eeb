#pragma once
// SPDX-License-Identifier: MIT
/// @file detail/format.hpp Internal: numbers as text, the one definition every message, table and
/// document uses.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>

namespace spotdnn::detail {

/// Shortest text that reads back to the same double ("nan", "inf" and "-inf" for non-finite values).
inline std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

/// Six significant digits, for sentences meant to be read ("17925.8", "0.8").
inline std::string format_readable(double value) {
  if (!std::isfinite(value)) return format_number(value);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

/// "2340.7": `value` with `digits` decimals, for messages.
inline std::string format_fixed(double value, int digits) {
  if (!std::isfinite(value)) return format_number(value);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

/// "6,962,690": a count rounded to a whole number with its thousands grouped, for people (tables and
/// messages; documents keep full precision). Counts beyond 10^15 and non-finite values as format_readable.
inline std::string format_count(double value) {
  if (!std::isfinite(value) || std::fabs(value) >= 1e15) return format_readable(value);
  const long long whole = std::llround(value);
  const std::string digits = std::to_string(whole < 0 ? -whole : whole);
  std::string out = whole < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace spotdnn::detail
