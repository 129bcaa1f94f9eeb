#pragma once
// SPDX-License-Identifier: MIT
/// @file cluster.hpp A cluster: how many instances of each type (the workers; the PS is implied).

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/limits.hpp"

namespace spotdnn {

/// Worker counts per instance type name. Types with count 0 are not stored.
class Cluster {
 public:
  Cluster() = default;
  Cluster(std::initializer_list<std::pair<const std::string, int>> counts) {
    for (const auto& [type, count] : counts) set(type, count);
  }

  /// Sets the count of `type`; 0 removes it. Throws for an empty name, a negative count, or a cluster
  /// that would have more than kMaxClusterWorkers workers in total (summed in 64 bits).
  void set(std::string_view type, int count) {
    constexpr std::string_view fn = "Cluster::set";
    detail::require_non_empty(fn, "type", type);
    detail::require_printable_name(fn, "type", type);
    if (count < 0) detail::fail(fn, std::string(type), count, "count must not be negative");
    const std::int64_t total = total_ - this->count(type) + count;
    if (total > kMaxClusterWorkers) {
      detail::fail(fn, std::string(type), count,
                   "the cluster would have " + std::to_string(total) + " workers; the maximum is " +
                       std::to_string(kMaxClusterWorkers));
    }
    if (count == 0) {
      if (auto it = counts_.find(type); it != counts_.end()) counts_.erase(it);
    } else {
      counts_.insert_or_assign(std::string(type), count);
    }
    total_ = total;
  }

  [[nodiscard]] int count(std::string_view type) const {
    auto it = counts_.find(type);
    return it == counts_.end() ? 0 : it->second;
  }

  /// Workers of all types together (at most kMaxClusterWorkers, so an int holds it).
  [[nodiscard]] int total_workers() const { return int(total_); }

  [[nodiscard]] bool empty() const { return counts_.empty(); }
  [[nodiscard]] const std::map<std::string, int, std::less<>>& counts() const { return counts_; }

  friend bool operator==(const Cluster& a, const Cluster& b) { return a.counts_ == b.counts_; }
  friend bool operator!=(const Cluster& a, const Cluster& b) { return !(a == b); }

  /// Parses "TYPE=N,TYPE=N" (`separator` ',' on the command line, where ';' also separates entries so that a
  /// cluster copied from a trace works; ';' inside CSV cells).
  /// Throws naming the bad entry: a missing '=', a count that is not a whole number >= 0, a type twice, a
  /// total above kMaxClusterWorkers, or a text longer than kMaxClusterTextBytes.
  static Cluster parse(std::string_view text, char separator = ',') {
    constexpr std::string_view fn = "Cluster::parse";
    Cluster cluster;
    std::map<std::string, int, std::less<>> given;  // includes zero counts, to catch a type given twice
    if (text.empty()) detail::fail(fn, "cluster", "\"\"", "give TYPE=N entries separated by '" + std::string(1, separator) + "'");
    if (text.size() > kMaxClusterTextBytes) {
      detail::fail(fn, "cluster", std::to_string(text.size()) + " bytes",
                   "a cluster text may have at most " + std::to_string(kMaxClusterTextBytes) + " bytes");
    }
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end =
          std::min(separator == ',' ? text.find_first_of(",;", start) : text.find(separator, start), text.size());
      const std::string_view entry = trim(text.substr(start, end - start));
      const std::size_t eq = entry.find('=');
      if (eq == std::string_view::npos) {
        detail::fail(fn, "cluster entry", detail::quoted(entry), "expected TYPE=N");
      }
      const std::string_view type = trim(entry.substr(0, eq));
      const std::string_view count_text = trim(entry.substr(eq + 1));
      if (type.empty()) detail::fail(fn, "cluster entry", detail::quoted(entry), "the instance type is missing");
      long long count = 0;
      const auto parsed = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
      const bool whole = !count_text.empty() && parsed.ptr == count_text.data() + count_text.size() &&
                         (parsed.ec == std::errc() || parsed.ec == std::errc::result_out_of_range);
      if (!whole) detail::fail(fn, std::string(type), detail::quoted(count_text), "the count must be a whole number");
      if (parsed.ec == std::errc::result_out_of_range || count > kMaxClusterWorkers) {
        detail::fail(fn, std::string(type), detail::quoted(count_text),
                     "the count must be at most " + std::to_string(kMaxClusterWorkers));
      }
      if (count < 0) detail::fail(fn, std::string(type), double(count), "the count must not be negative");
      if (given.count(type) != 0) detail::fail(fn, std::string(type), detail::quoted(entry), "the type is given twice");
      given.emplace(type, int(count));
      const std::int64_t total = std::int64_t(cluster.total_workers()) + count;
      if (total > kMaxClusterWorkers) {
        detail::fail(fn, "cluster", detail::quoted(text.size() > 80 ? text.substr(0, 77) : text),
                     "the cluster has more than " + std::to_string(kMaxClusterWorkers) + " workers in total");
      }
      cluster.set(type, int(count));
      start = end + 1;
    }
    return cluster;
  }

  /// "TYPE=N,TYPE=N" in type-name order; parse(to_string()) gives the same cluster.
  [[nodiscard]] std::string to_string(char separator = ',') const {
    std::string text;
    for (const auto& [type, count] : counts_) {
      if (!text.empty()) text += separator;
      text.append(type).append("=").append(std::to_string(count));
    }
    return text;
  }

 private:
  static std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  }

  std::map<std::string, int, std::less<>> counts_;
  std::int64_t total_ = 0;
};

}  // namespace spotdnn
