#pragma once
// SPDX-License-Identifier: MIT
/// @file units.hpp Unit conversions at the edges. spotdnn computes in SI doubles: bytes, seconds, USD.
///
/// Decimal prefixes throughout (1 MB = 1e6 bytes, 1 Gbit/s = 1.25e8 bytes/s), as cloud providers quote them.

namespace spotdnn::units {

inline constexpr double kBytesPerMegabyte = 1e6;
inline constexpr double kBytesPerGigabyte = 1e9;
inline constexpr double kBytesPerSecondPerGigabitPerSecond = 1.25e8;
inline constexpr double kSecondsPerMinute = 60.0;
inline constexpr double kSecondsPerHour = 3600.0;

constexpr double megabytes_to_bytes(double megabytes) { return megabytes * kBytesPerMegabyte; }
constexpr double bytes_to_megabytes(double bytes) { return bytes / kBytesPerMegabyte; }
constexpr double gigabytes_to_bytes(double gigabytes) { return gigabytes * kBytesPerGigabyte; }
constexpr double gigabits_per_s_to_bytes_per_s(double gigabits_per_s) {
  return gigabits_per_s * kBytesPerSecondPerGigabitPerSecond;
}
constexpr double hours_to_s(double hours) { return hours * kSecondsPerHour; }
constexpr double s_to_hours(double seconds) { return seconds / kSecondsPerHour; }
constexpr double minutes_to_s(double minutes) { return minutes * kSecondsPerMinute; }

/// USD paid for `seconds` at `price_usd_per_hour`, billed per second (no rounding up to the hour).
constexpr double cost_usd(double price_usd_per_hour, double seconds) {
  return price_usd_per_hour * s_to_hours(seconds);
}

}  // namespace spotdnn::units
