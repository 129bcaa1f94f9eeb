#pragma once
// SPDX-License-Identifier: MIT
/// @file support/base64.hpp Test helper: standard base64 decoding (what EC2 and moto hand back user data
/// and request bodies in). The launcher only encodes (launcher::base64_encode).

#include <stdexcept>
#include <string>

namespace spotdnn::test {

/// `text` decoded from standard base64; '=' padding and line breaks are skipped, any other character
/// outside the alphabet throws.
inline std::string base64_decode(const std::string& text) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int bits = 0;
  unsigned value = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r') continue;
    const auto pos = alphabet.find(c);
    if (pos == std::string::npos) throw std::runtime_error("not base64: " + text.substr(0, 40));
    value = (value << 6) | unsigned(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((value >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace spotdnn::test
