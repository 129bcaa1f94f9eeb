#pragma once
// SPDX-License-Identifier: MIT
/// @file detail/validate.hpp Internal argument checks that throw spotdnn::invalid_argument.

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "spotdnn/errors.hpp"

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

[[noreturn]] inline void fail(std::string_view function, std::string_view field, std::string_view value,
                              std::string_view why) {
  std::string message;
  message.append(function).append(": ").append(field).append(" = ").append(value).append(": ").append(why);
  throw invalid_argument(message);
}

[[noreturn]] inline void fail(std::string_view function, std::string_view field, double value,
                              std::string_view why) {
  fail(function, field, format_number(value), why);
}

inline std::string quoted(std::string_view text) {
  std::string out = "\"";
  out.append(text).append("\"");
  return out;
}

inline void require_finite(std::string_view function, std::string_view field, double value) {
  if (!std::isfinite(value)) fail(function, field, value, "must be a finite number");
}

inline void require_positive(std::string_view function, std::string_view field, double value) {
  require_finite(function, field, value);
  if (!(value > 0.0)) fail(function, field, value, "must be greater than zero");
}

inline void require_non_negative(std::string_view function, std::string_view field, double value) {
  require_finite(function, field, value);
  if (value < 0.0) fail(function, field, value, "must not be negative");
}

inline void require_non_empty(std::string_view function, std::string_view field, std::string_view value) {
  if (value.empty()) fail(function, field, "\"\"", "must not be empty");
}

}  // namespace spotdnn::detail
