#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/timestamp.hpp AWS's ISO 8601 times ("2026-11-24T08:00:00+00:00", "…08:00:00.000Z") to
/// Unix seconds and back to the catalog's UTC form ("2026-11-24T08:00:00Z").

#include <cstdint>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn::io::aws {

namespace civil {

/// Days from 1970-01-01 to the proleptic Gregorian date y-m-d (H. Hinnant's days_from_civil).
constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + std::int64_t(doe) - 719468;
}

constexpr bool is_leap_year(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

constexpr unsigned days_in_month(std::int64_t y, unsigned m) {
  constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap_year(y) ? 29 : kDays[m - 1];
}

}  // namespace civil

/// Earliest and latest instants parse_aws_timestamp accepts: 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
inline constexpr std::int64_t kMinAwsTimestampUnixS = 0;
inline constexpr std::int64_t kMaxAwsTimestampUnixS = 253402300799;

/// Parses an ISO 8601 time as the AWS CLI prints it: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1 to 9
/// digits (dropped: whole seconds are kept), then `Z` or an offset `±hh:mm` (aws-cli v2 prints "+00:00",
/// v1 ".000Z"). Returns Unix seconds (UTC). Anything else, a day that does not exist or a time outside
/// 1970..9999 throws spotdnn::invalid_argument "function: field = "text": why".
[[nodiscard]] inline std::int64_t parse_aws_timestamp(std::string_view text, std::string_view function,
                                                     std::string_view field) {
  const auto bad = [&](std::string_view why) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(text.substr(0, 64)),
                          std::string(why) + " (expected an ISO 8601 time such as 2026-11-24T08:00:00Z or "
                                             "2026-11-24T08:00:00+00:00)");
  };
  std::size_t at = 0;
  const auto digits = [&](std::size_t count) -> int {
    int value = 0;
    for (std::size_t i = 0; i < count; ++i, ++at) {
      if (at >= text.size() || text[at] < '0' || text[at] > '9') bad("not a time");
      value = value * 10 + (text[at] - '0');
    }
    return value;
  };
  const auto expect = [&](char c) {
    if (at >= text.size() || text[at] != c) bad("not a time");
    ++at;
  };
  const int year = digits(4);
  expect('-');
  const int month = digits(2);
  expect('-');
  const int day = digits(2);
  expect('T');
  const int hour = digits(2);
  expect(':');
  const int minute = digits(2);
  expect(':');
  const int second = digits(2);
  if (at < text.size() && text[at] == '.') {
    ++at;
    const std::size_t first = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    if (at == first || at - first > 9) bad("the fraction of a second needs 1 to 9 digits");
  }
  std::int64_t offset_s = 0;
  if (at < text.size() && text[at] == 'Z') {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const int sign = text[at] == '+' ? 1 : -1;
    ++at;
    const int offset_hours = digits(2);
    expect(':');
    const int offset_minutes = digits(2);
    if (offset_hours > 23 || offset_minutes > 59) bad("the UTC offset is out of range");
    offset_s = sign * (std::int64_t(offset_hours) * 3600 + std::int64_t(offset_minutes) * 60);
  } else {
    bad("the time zone is missing (Z or +hh:mm)");
  }
  if (at != text.size()) bad("unexpected text after the time");
  if (month < 1 || month > 12 || day < 1 || unsigned(day) > civil::days_in_month(year, unsigned(month))) {
    bad("no such day");
  }
  if (hour > 23 || minute > 59 || second > 60) bad("no such time of day");  // 60: a leap second
  const std::int64_t unix_s = civil::days_from_civil(year, unsigned(month), unsigned(day)) * 86400 +
                              std::int64_t(hour) * 3600 + minute * 60 + second - offset_s;
  if (unix_s < kMinAwsTimestampUnixS || unix_s > kMaxAwsTimestampUnixS) bad("outside 1970..9999");
  return unix_s;
}

/// "2026-11-24T08:00:00Z": the catalog's form of a time (InstanceType::price_observed_at). Times before
/// 1970 or after 9999 are clamped to those bounds.
[[nodiscard]] inline std::string format_utc_timestamp(std::int64_t unix_s) {
  if (unix_s < kMinAwsTimestampUnixS) unix_s = kMinAwsTimestampUnixS;
  if (unix_s > kMaxAwsTimestampUnixS) unix_s = kMaxAwsTimestampUnixS;
  const std::int64_t days = unix_s / 86400, second_of_day = unix_s % 86400;
  // H. Hinnant's civil_from_days.
  const std::int64_t z = days + 719468;
  const std::int64_t era = z / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned day = doy - (153 * mp + 2) / 5 + 1;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t year = std::int64_t(yoe) + era * 400 + (month <= 2 ? 1 : 0);
  const auto two = [](std::int64_t v) { return std::string(v < 10 ? "0" : "") + std::to_string(v); };
  return std::to_string(year) + "-" + two(month) + "-" + two(day) + "T" + two(second_of_day / 3600) + ":" +
         two(second_of_day / 60 % 60) + ":" + two(second_of_day % 60) + "Z";
}

}  // namespace spotdnn::io::aws
