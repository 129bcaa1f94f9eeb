#pragma once
// SPDX-License-Identifier: MIT
/// @file detail/format.hpp Internal: numbers as text, the one definition every message, table and
/// document uses.

#include <charconv>
#include <cmath>
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

}  // namespace spotdnn::detail
