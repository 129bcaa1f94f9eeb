#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/run_id.hpp Run ids: what ties everything one launch creates together.
///
/// A launch script makes a new run id each time it runs, `YYYYMMDD-HHMMSS-xxxxxx` (UTC date and time,
/// then 6 random lower-case hex digits; regex `^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$`), and tags every
/// instance, spot request and launch template `spotdnn:run=ID`. Status, teardown and join select by that
/// exact tag and nothing else. An id must match the regex before it goes anywhere: EC2 filter values
/// treat `*` and `?` as wildcards, and the aws CLI's shorthand syntax splits on commas, so a looser id
/// could select another run.

#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn::launcher {

/// Length of a run id: 8 + 1 + 6 + 1 + 6 characters.
inline constexpr std::size_t kRunIdLength = 22;

/// The run id regex as the emitted scripts check it (bash `=~`, POSIX ERE).
inline constexpr std::string_view kRunIdRegex = "^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$";

/// What a run id looks like, for messages that refuse one.
inline constexpr std::string_view kRunIdFormatHelp =
    "expected a run id YYYYMMDD-HHMMSS-xxxxxx (UTC time and 6 lower-case hex digits), as the launch script printed it: "
    "\"spotdnn run: ID\" (EC2 filters would read * and ? as wildcards)";

/// True when `text` is a run id: 8 digits, '-', 6 digits, '-', 6 lower-case hex digits.
[[nodiscard]] constexpr bool is_run_id(std::string_view text) {
  if (text.size() != kRunIdLength) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool ok = (i == 8 || i == 15) ? c == '-'
                    : i < 15           ? (c >= '0' && c <= '9')
                                       : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    if (!ok) return false;
  }
  return true;
}

/// Throws spotdnn::invalid_argument naming `field` unless `value` is a run id.
inline void require_run_id(std::string_view function, std::string_view field, std::string_view value) {
  if (!is_run_id(value)) {
    spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value), kRunIdFormatHelp);
  }
}

}  // namespace spotdnn::launcher
