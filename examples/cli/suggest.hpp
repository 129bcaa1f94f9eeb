#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/suggest.hpp "did you mean ...?": the closest known command or option name to a mistyped one,
/// by edit distance (Damerau–Levenshtein, adjacent transpositions counting one) or by prefix.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spotdnn::cli {

/// Names longer than this are never compared (a huge argument costs nothing).
inline constexpr std::size_t kMaxSuggestedNameBytes = 64;

/// Edits (insert, delete, substitute, swap two adjacent characters) that turn `a` into `b`: the optimal
/// string alignment distance.
[[nodiscard]] inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

/// The candidate `word` most likely stands for, or nullopt when none is close: the one at the smallest
/// edit distance if that is at most a third of the longer name (at least 1, at most 3), else the one
/// `word` starts (at least two characters: "pred" → "predict"), else the one that starts `word`
/// ("plans" → "plan"). Ties go to the earlier candidate. `word` itself is never suggested.
[[nodiscard]] inline std::optional<std::string> closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > kMaxSuggestedNameBytes) return std::nullopt;
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& c : candidates) {
    if (c == word || c.empty() || c.size() > kMaxSuggestedNameBytes) continue;
    const std::size_t distance = edit_distance(word, c);
    const std::size_t limit = std::clamp<std::size_t>(std::max(word.size(), c.size()) / 3, 1, 3);
    if (distance <= limit && (!best || distance < best_distance)) {
      best = c;
      best_distance = distance;
    }
  }
  if (best) return best;
  if (word.size() >= 2) {
    for (const std::string& c : candidates) {
      if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) return c;
    }
  }
  for (const std::string& c : candidates) {
    if (!c.empty() && c.size() < word.size() && word.compare(0, c.size(), c) == 0 && c.size() >= 3) return c;
  }
  return std::nullopt;
}

}  // namespace spotdnn::cli
