#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/table.hpp A small aligned text table for the CLI's human output.

#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace spotdnn::cli {

/// Columns are right-aligned except the first `left_aligned_columns`; the header is underlined.
class TextTable {
 public:
  /// The first `left_aligned_columns` columns are left-aligned, the others right-aligned (numbers), except
  /// the last when `last_left_aligned` (a column of words after the numbers: a note, a purpose).
  explicit TextTable(std::vector<std::string> header, std::size_t left_aligned_columns = 1, bool last_left_aligned = false)
      : header_(std::move(header)), left_aligned_columns_(left_aligned_columns), last_left_aligned_(last_left_aligned) {}

  void add_row(std::vector<std::string> row) {
    row.resize(header_.size());
    rows_.push_back(std::move(row));
  }

  void print(std::ostream& out, const std::string& indent = "  ") const {
    std::vector<std::size_t> width(header_.size(), 0);
    auto widen = [&](const std::vector<std::string>& row) {
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    };
    widen(header_);
    for (const auto& row : rows_) widen(row);
    auto line = [&](const std::vector<std::string>& row) {
      std::string text = indent;
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (c > 0) text += "  ";
        const bool left = c < left_aligned_columns_ || (last_left_aligned_ && c + 1 == row.size());
        text += left ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out << text << '\n';
    };
    line(header_);
    std::vector<std::string> rule;
    for (std::size_t w : width) rule.emplace_back(w, '-');
    line(rule);
    for (const auto& row : rows_) line(row);
  }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::size_t left_aligned_columns_;
  bool last_left_aligned_;
};

/// A duration for people, in d/h/min (whole seconds, then cut to the two largest units): "40 min 24 s",
/// "2 h 05 min", "3 d 07 h"; "never" for a negative, NaN or over 10^12 s. format_duration() puts the
/// seconds in front.
inline std::string format_duration_words(double seconds) {
  if (!(seconds >= 0) || seconds > 1e12) return "never";
  const long long total = static_cast<long long>(seconds + 0.5);
  const long long days = total / 86400, hours = (total % 86400) / 3600, minutes = (total % 3600) / 60, secs = total % 60;
  if (days > 0) return fmt::format("{} d {:02} h", days, hours);
  if (hours > 0) return fmt::format("{} h {:02} min", hours, minutes);
  return fmt::format("{} min {:02} s", minutes, secs);
}

/// "2340.7 s (39 min 01 s)", "200000.0 s (2 d 07 h)": seconds to one decimal, then the d/h/min reading.
inline std::string format_duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e12) return "never";
  return fmt::format("{:.1f} s ({})", seconds, format_duration_words(seconds));
}

inline std::string format_usd(double usd) { return fmt::format("${:.4f}", usd); }

}  // namespace spotdnn::cli
