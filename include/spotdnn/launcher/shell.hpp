#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/shell.hpp Quoting for bash, JSON text from data, base64, and the checks every AWS
/// identifier passes before it reaches an emitted script.
///
/// Everything a user gives the launcher ends up inside a bash script or a JSON document. These helpers
/// make that safe: bash gets single-quoted words (a ' becomes '\''), JSON documents are nlohmann values
/// dumped once by json_text (never assembled from strings), and IDs that AWS spells in a fixed way (ami-,
/// subnet-, sg-, regions, instance types, S3 URIs, IPv4 addresses) are checked against that spelling so a
/// typo fails here, naming the field, and not half-way through a launch.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn::launcher {

/// `text` as one bash word: inside single quotes nothing is special, and a ' is written '\''.
/// The result is safe for any byte string without NUL (bash cannot hold NUL; see require_no_nul).
[[nodiscard]] inline std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

/// `document` as compact JSON text, dumped once: strings are escaped by nlohmann (", \ and control
/// characters), UTF-8 passes unchanged, and invalid UTF-8 throws nlohmann::json::type_error (the
/// validators below let none through).
[[nodiscard]] inline std::string json_text(const nlohmann::ordered_json& document) { return document.dump(); }

/// Standard base64 (RFC 4648, with '=' padding), as EC2 wants user data inside a launch template.
[[nodiscard]] inline std::string base64_encode(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t(static_cast<unsigned char>(data[i])) << 16) |
                            (std::uint32_t(static_cast<unsigned char>(data[i + 1])) << 8) |
                            std::uint32_t(static_cast<unsigned char>(data[i + 2]));
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = data.size() - i;
  if (rest > 0) {
    std::uint32_t v = std::uint32_t(static_cast<unsigned char>(data[i])) << 16;
    if (rest == 2) v |= std::uint32_t(static_cast<unsigned char>(data[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

/// True when `text` is non-empty standard base64: groups of four of A-Z a-z 0-9 + /, the last one
/// possibly ending in one or two '='. Such text needs no escaping in JSON or inside bash double quotes.
[[nodiscard]] inline bool is_base64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return false;
  std::size_t padding = 0;
  while (padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  if (padding > 2) return false;
  for (char c : text.substr(0, text.size() - padding)) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (!ok) return false;
  }
  return true;
}

namespace detail {

constexpr bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
constexpr bool is_lower_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'); }
constexpr bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }


/// `prefix` followed by 8 to 17 lower-case hex digits, the spelling of EC2 resource IDs.
inline bool is_resource_id(std::string_view value, std::string_view prefix) {
  if (value.substr(0, prefix.size()) != prefix) return false;
  const std::string_view hex = value.substr(prefix.size());
  if (hex.size() < 8 || hex.size() > 17) return false;
  for (char c : hex) {
    if (!is_lower_hex(c)) return false;
  }
  return true;
}

/// Number of Unicode code points in valid UTF-8 `text`, or -1 when `text` is not valid UTF-8 (the
/// decoder of detail/validate.hpp: no overlong forms, no surrogates).
inline long utf8_length(std::string_view text) {
  long count = 0;
  for (std::size_t i = 0; i < text.size(); ++count) {
    const std::size_t length = spotdnn::detail::utf8_sequence_length(text.substr(i));
    if (length == 0) return -1;
    i += length;
  }
  return count;
}

}  // namespace detail

/// A private IPv4 address as EC2 reports it: four decimal numbers 0 to 255 joined by '.', at most 15
/// characters ("255.255.255.255").
inline void require_ipv4_address(std::string_view function, std::string_view field, std::string_view value) {
  bool ok = value.size() <= 15;
  int parts = 0;
  std::size_t start = 0;
  while (ok) {
    const std::size_t dot = value.find('.', start);
    const std::string_view part = value.substr(start, dot == std::string_view::npos ? value.npos : dot - start);
    ok = !part.empty() && part.size() <= 3;
    int number = 0;
    for (char c : part) {
      ok = ok && detail::is_digit(c);
      number = number * 10 + (c - '0');
    }
    ok = ok && number <= 255;
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (!ok || parts != 4) spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "expected an IPv4 address like 10.0.0.11");
}

/// Throws when `value` starts like a URI that the aws CLI replaces by what it points to: a parameter
/// given as "file://PATH" or "fileb://PATH" becomes the contents of that local file (aws CLI v2, and v1
/// also fetches "http://" and "https://" URLs). Free-text names the launch script passes as a whole
/// argument (--key-name, --group-name) must not, or a configuration could make the script read a file
/// and send it to AWS.
inline void require_no_aws_cli_uri_prefix(std::string_view function, std::string_view field, std::string_view value) {
  for (std::string_view prefix : {"file://", "fileb://", "http://", "https://"}) {
    std::string start(value.substr(0, prefix.size()));
    for (char& c : start) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    if (start == prefix) {
      spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value),
                            "must not start with " + std::string(prefix) + " (the aws CLI would read that file or URL instead)");
    }
  }
}

/// Throws when `value` contains a NUL byte, which no bash string, file name or AWS value can carry.
inline void require_no_nul(std::string_view function, std::string_view field, std::string_view value) {
  if (value.find('\0') != std::string_view::npos) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "must not contain a NUL byte");
  }
}

/// Throws unless `value` is one line of printable ASCII text (no control characters), 1 to `max_length` long.
inline void require_printable_ascii(std::string_view function, std::string_view field, std::string_view value,
                                    std::size_t max_length) {
  if (value.empty() || value.size() > max_length) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value),
                          "must be 1 to " + std::to_string(max_length) + " characters long");
  }
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F) {
      spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "must be printable ASCII without control characters");
    }
  }
}

/// An AMI ID: "ami-" and 8 to 17 lower-case hex digits.
inline void require_ami_id(std::string_view function, std::string_view field, std::string_view value) {
  if (!detail::is_resource_id(value, "ami-")) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "expected an AMI ID like ami-0123456789abcdef0");
  }
}

/// A subnet ID: "subnet-" and 8 to 17 lower-case hex digits.
inline void require_subnet_id(std::string_view function, std::string_view field, std::string_view value) {
  if (!detail::is_resource_id(value, "subnet-")) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "expected a subnet ID like subnet-0123456789abcdef0");
  }
}

/// A security group ID: "sg-" and 8 to 17 lower-case hex digits.
inline void require_security_group_id(std::string_view function, std::string_view field, std::string_view value) {
  if (!detail::is_resource_id(value, "sg-")) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "expected a security group ID like sg-0123456789abcdef0");
  }
}

/// A region name: lower-case words joined by '-' ending in a number, e.g. us-east-1, eu-central-2,
/// us-gov-west-1, ap-southeast-4.
inline void require_region(std::string_view function, std::string_view field, std::string_view value) {
  // Words of a-z joined by '-', then '-' and a number: at least two words.
  std::size_t words = 0;
  bool ok = value.size() <= 32;
  std::size_t start = 0;
  while (ok) {
    const std::size_t dash = value.find('-', start);
    const std::string_view part = value.substr(start, dash == std::string_view::npos ? value.npos : dash - start);
    ok = !part.empty();
    const bool last = dash == std::string_view::npos;
    for (char c : part) ok = ok && (last ? detail::is_digit(c) : (c >= 'a' && c <= 'z'));
    if (last) break;
    ++words;
    start = dash + 1;
  }
  if (!ok || words < 2) spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "expected a region like us-east-1");
}

/// An EC2 instance type: "family.size", lower-case letters, digits and '-' in the family, e.g.
/// p3.2xlarge, g4dn.12xlarge, u-6tb1.metal.
inline void require_instance_type(std::string_view function, std::string_view field, std::string_view value) {
  const std::size_t dot = value.find('.');
  bool ok = value.size() <= 32 && dot != std::string_view::npos && dot > 0 && dot + 1 < value.size() &&
            value.find('.', dot + 1) == std::string_view::npos && value.front() >= 'a' && value.front() <= 'z';
  for (std::size_t i = 0; ok && i < value.size(); ++i) {
    const char c = value[i];
    ok = detail::is_lower_alnum(c) || c == '.' || (c == '-' && i < dot);
  }
  if (!ok) spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "expected an instance type like p3.2xlarge");
}

/// A name spotdnn builds other names from (plan IDs): 1 to 64 of A-Z a-z 0-9 . _ -, starting alphanumeric.
inline void require_simple_name(std::string_view function, std::string_view field, std::string_view value) {
  bool ok = !value.empty() && value.size() <= 64 && detail::is_alnum(value.front());
  for (char c : value) ok = ok && (detail::is_alnum(c) || c == '.' || c == '_' || c == '-');
  if (!ok) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value),
                          "expected 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
  }
}

/// An IAM instance profile name: 1 to 128 of A-Z a-z 0-9 and + = , . @ _ - (IAM's rule).
inline void require_instance_profile_name(std::string_view function, std::string_view field, std::string_view value) {
  bool ok = !value.empty() && value.size() <= 128;
  for (char c : value) {
    ok = ok && (detail::is_alnum(c) || c == '+' || c == '=' || c == ',' || c == '.' || c == '@' || c == '_' || c == '-');
  }
  if (!ok) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value),
                          "expected an IAM instance profile name: 1 to 128 letters, digits or + = , . @ _ -");
  }
}

/// An S3 location "s3://bucket" or "s3://bucket/prefix": a bucket name by S3's rules (3 to 63 of
/// a-z 0-9 . -, starting and ending with a letter or digit) and a prefix of printable ASCII.
inline void require_s3_uri(std::string_view function, std::string_view field, std::string_view value) {
  constexpr std::string_view scheme = "s3://";
  const auto bad = [&](std::string_view why) { spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), why); };
  if (value.substr(0, scheme.size()) != scheme) bad("expected s3://bucket/prefix");
  const std::string_view rest = value.substr(scheme.size());
  const std::string_view bucket = rest.substr(0, rest.find('/'));
  bool ok = bucket.size() >= 3 && bucket.size() <= 63 && detail::is_lower_alnum(bucket.front()) &&
            detail::is_lower_alnum(bucket.back());
  for (char c : bucket) ok = ok && (detail::is_lower_alnum(c) || c == '.' || c == '-');
  if (!ok) bad("the bucket name must be 3 to 63 of a-z, 0-9, '.', '-', starting and ending with a letter or digit");
  for (char c : rest) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F) bad("the prefix must be printable ASCII without control characters");
  }
  if (value.size() > 1024) bad("must be at most 1024 characters long");
}

/// An absolute path on the instance: starts with '/', printable ASCII, no control characters.
inline void require_absolute_path(std::string_view function, std::string_view field, std::string_view value) {
  require_printable_ascii(function, field, value, 4096);
  if (value.front() != '/') spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "must be an absolute path");
}

/// An EC2 tag key: 1 to 128 Unicode characters of valid UTF-8, no NUL, not starting with the reserved
/// "aws:" (any case). EC2 itself allows any other character, so quotes, '$', spaces and newlines pass.
inline void require_tag_key(std::string_view function, std::string_view field, std::string_view value) {
  require_no_nul(function, field, value);
  const long length = detail::utf8_length(value);
  if (length < 0) spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "must be valid UTF-8");
  if (length < 1 || length > 128) spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "must be 1 to 128 characters long");
  std::string prefix(value.substr(0, 4));
  for (char& c : prefix) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  if (prefix == "aws:") spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "the prefix aws: is reserved by AWS");
}

/// An EC2 tag value: 0 to 256 Unicode characters of valid UTF-8, no NUL.
inline void require_tag_value(std::string_view function, std::string_view field, std::string_view value) {
  require_no_nul(function, field, value);
  const long length = detail::utf8_length(value);
  if (length < 0) spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "must be valid UTF-8");
  if (length > 256) spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), "must be at most 256 characters long");
}

}  // namespace spotdnn::launcher
