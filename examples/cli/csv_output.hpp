#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/csv_output.hpp --format csv: a header line and rows (RFC 4180 quoting), numbers in the
/// shortest form that reads back exactly, clusters as TYPE=N;TYPE=N (the trace format's cell).

#include <cmath>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <spotdnn/cluster.hpp>

namespace spotdnn::cli {

/// `text` as one CSV field: quoted (with quotes doubled) when it holds a comma, a quote or a line break.
[[nodiscard]] inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

/// A number as it reads back exactly; empty when it is not finite (a time that is never reached).
[[nodiscard]] inline std::string csv_number(double value) { return std::isfinite(value) ? fmt::format("{}", value) : std::string(); }

/// A cluster as TYPE=N;TYPE=N (what `--cluster` and trace CSV files take); empty for no workers.
[[nodiscard]] inline std::string csv_cluster(const Cluster& cluster) { return cluster.to_string(';'); }

/// Rows of named columns, written as a header and one line per row.
class CsvTable {
 public:
  /// Adds a column to the current row (the first row's names make the header).
  void add(std::string name, std::string value) {
    if (rows_.empty()) rows_.emplace_back();
    if (rows_.size() == 1) header_.push_back(std::move(name));
    rows_.back().push_back(std::move(value));
  }
  /// Starts the next row; it must add the same columns in the same order.
  void next_row() { rows_.emplace_back(); }

  void print(std::ostream& out) const {
    auto line = [&out](const std::vector<std::string>& fields) {
      for (std::size_t i = 0; i < fields.size(); ++i) out << (i == 0 ? "" : ",") << csv_field(fields[i]);
      out << '\n';
    };
    line(header_);
    for (const auto& row : rows_) {
      if (!row.empty()) line(row);
    }
  }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace spotdnn::cli
