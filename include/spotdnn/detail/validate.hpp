#pragma once
// SPDX-License-Identifier: MIT
/// @file detail/validate.hpp Internal argument checks that throw spotdnn::invalid_argument.

#include <charconv>
#include <cstddef>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "spotdnn/detail/format.hpp"
#include "spotdnn/errors.hpp"

namespace spotdnn::detail {

/// Length of the well-formed UTF-8 sequence at the start of `text` (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF), or 0 when `text` does not start with one. ASCII bytes have length 1.
inline std::size_t utf8_sequence_length(std::string_view text) {
  if (text.empty()) return 0;
  const auto at = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const auto continuation = [](unsigned byte) { return (byte & 0xC0u) == 0x80u; };
  const unsigned lead = at(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(at(1)) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
    return at(1) >= low && at(1) <= high && continuation(at(2)) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
    return at(1) >= low && at(1) <= high && continuation(at(2)) && continuation(at(3)) ? 4 : 0;
  }
  return 0;
}

/// True when `text` is well-formed UTF-8.
inline bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (length == 0) return false;
    i += length;
  }
  return true;
}

/// True when `text` is valid UTF-8 without control characters (C0, DEL or C1): what escape_for_message
/// returns unchanged. Does not allocate.
inline bool is_printable_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7F) {
      ++i;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (length < 2 || (byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0)) return false;
    i += length;
  }
  return true;
}

/// `text` made safe to print on one terminal line: control characters (C0, DEL and the C1 range, which
/// terminals may read as escape sequences) become \n, \r, \t, \xNN or \u00NN, and bytes that are not
/// valid UTF-8 become \xNN. Valid UTF-8 text without control characters is returned unchanged.
inline std::string escape_for_message(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (length == 0 || byte < 0x20 || byte == 0x7F) {
      out.append("\\x").append(1, kHex[byte >> 4]).append(1, kHex[byte & 0xF]);
    } else if (length == 2 && byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {  // C1: U+0080..U+009F
      const auto low = static_cast<unsigned char>(text[i + 1]);
      out.append("\\u00").append(1, kHex[low >> 4]).append(1, kHex[low & 0xF]);
    } else {
      out.append(text.substr(i, length));
    }
    i += length == 0 ? 1 : length;
  }
  return out;
}

/// Throws spotdnn::invalid_argument "function: field = value: why", escaped with escape_for_message so
/// that a hostile value can neither break the message into lines nor drive the user's terminal; the four
/// parts, escaped alike, are also kept apart (invalid_argument::function() and the others).
[[noreturn]] inline void fail(std::string_view function, std::string_view field, std::string_view value,
                              std::string_view why) {
  std::string message;
  message.append(function).append(": ").append(field).append(" = ").append(value).append(": ").append(why);
  throw invalid_argument(escape_for_message(message), escape_for_message(function), escape_for_message(field),
                         escape_for_message(value), escape_for_message(why));
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

/// A name shown to people (a workload, a region, an instance type, a run): valid UTF-8 without control
/// characters, so that printing it can neither break a table nor drive the terminal.
inline void require_printable_name(std::string_view function, std::string_view field, std::string_view value) {
  if (!is_valid_utf8(value)) fail(function, field, quoted(value), "must be valid UTF-8");
  if (!is_printable_utf8(value)) {
    fail(function, field, quoted(value), "must not contain control characters");
  }
}

}  // namespace spotdnn::detail
