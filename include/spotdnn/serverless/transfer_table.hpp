#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/transfer_table.hpp S3 transfer times up(M, x) and down(M, x) from a table of measured
/// cells, interpolated bilinearly (docs/model.md eq. (S3)).
///
/// Within a memory column, linear in the object size x between the measured sizes; then linear in the
/// memory M between the two neighbouring columns. Outside the measured cells (each such answer is marked
/// `extrapolated`): x below a column's smallest size takes that column's first value; x above its largest
/// size scales its last value by x/x_last (constant bandwidth); M above the last column (or below the
/// first) takes that column. FasDL's own optimizer instead takes the nearest cell in unscaled (M, x) space,
/// which lets memory dominate the distance.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/serverless/fasdl_transfer_figures.hpp"

namespace spotdnn::serverless {

/// The time to move one object between a function and S3.
struct TransferTime {
  double upload_s = 0;        ///< PUT (s)
  double download_s = 0;      ///< GET (s)
  bool extrapolated = false;  ///< the answer left the measured cells (see the file comment)
};

/// up(M, x) and down(M, x) for one object size x over every memory column: what a search over memory
/// needs, so that the size interpolation is done once per size (TransferTable::for_object_size).
class ObjectSizeTransfer {
 public:
  /// The transfer of this object from a function of `memory_mb` MB (interpolation in M only).
  [[nodiscard]] TransferTime at_memory(double memory_mb) const {
    const std::size_t last = memory_mb_.size() - 1;
    if (!(memory_mb > memory_mb_.front())) return column(0, memory_mb < memory_mb_.front());
    if (!(memory_mb < memory_mb_[last])) return column(last, memory_mb > memory_mb_[last]);
    const std::size_t high = std::size_t(std::upper_bound(memory_mb_.begin(), memory_mb_.end(), memory_mb) - memory_mb_.begin());
    const std::size_t low = high - 1;
    if (memory_mb == memory_mb_[low]) return column(low, false);
    const double w = (memory_mb - memory_mb_[low]) / (memory_mb_[high] - memory_mb_[low]);
    return {upload_s_[low] + w * (upload_s_[high] - upload_s_[low]),
            download_s_[low] + w * (download_s_[high] - download_s_[low]),
            bool(extrapolated_[low]) || bool(extrapolated_[high])};
  }

  [[nodiscard]] double object_mb() const { return object_mb_; }

 private:
  friend class TransferTable;
  [[nodiscard]] TransferTime column(std::size_t k, bool outside_memory) const {
    return {upload_s_[k], download_s_[k], outside_memory || bool(extrapolated_[k])};
  }
  double object_mb_ = 0;
  std::vector<double> memory_mb_, upload_s_, download_s_;
  std::vector<char> extrapolated_;
};

/// A table of measured transfer times: the FasDL authors' cells by default (fasdl_measured()), or a
/// measured CSV (io/serverless_transfer_csv.hpp).
class TransferTable {
 public:
  /// Builds the table. Throws spotdnn::invalid_argument naming the first bad cell: a memory or size that
  /// is not a finite positive number, a time that is not finite and positive, the same (memory, size)
  /// twice, or no cell at all. Cells may come in any order.
  explicit TransferTable(std::vector<TransferCell> cells) {
    constexpr const char* fn = "TransferTable";
    if (cells.empty()) spotdnn::detail::fail(fn, "cells", "[]", "give at least one measured cell");
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string at = "cells[" + std::to_string(i) + "].";
      spotdnn::detail::require_positive(fn, at + "memory_mb", cells[i].memory_mb);
      spotdnn::detail::require_positive(fn, at + "object_mb", cells[i].object_mb);
      spotdnn::detail::require_positive(fn, at + "upload_s", cells[i].upload_s);
      spotdnn::detail::require_positive(fn, at + "download_s", cells[i].download_s);
    }
    std::stable_sort(cells.begin(), cells.end(), [](const TransferCell& x, const TransferCell& y) {
      return x.memory_mb != y.memory_mb ? x.memory_mb < y.memory_mb : x.object_mb < y.object_mb;
    });
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0 && cells[i].memory_mb == cells[i - 1].memory_mb && cells[i].object_mb == cells[i - 1].object_mb) {
        spotdnn::detail::fail(fn, "cells", "memory_mb " + spotdnn::detail::format_number(cells[i].memory_mb) + ", object_mb " +
                                               spotdnn::detail::format_number(cells[i].object_mb),
                              "measured twice: give each (memory, size) once");
      }
      if (i == 0 || cells[i].memory_mb != cells[i - 1].memory_mb) columns_.push_back({cells[i].memory_mb, {}});
      columns_.back().cells.push_back(cells[i]);
    }
  }

  /// The FasDL authors' measured table (serverless/fasdl_transfer_figures.hpp).
  static const TransferTable& fasdl_measured() {
    static const TransferTable table(std::vector<TransferCell>(kFasdlTransferCells.begin(), kFasdlTransferCells.end()));
    return table;
  }

  /// up(M, x) and down(M, x), docs/model.md eq. (S3).
  /// @param memory_mb M (MB), positive
  /// @param object_mb x (MB), positive
  [[nodiscard]] TransferTime at(double memory_mb, double object_mb) const {
    return for_object_size(object_mb).at_memory(memory_mb);
  }

  /// Every column's transfer of one object of `object_mb` MB (interpolated or scaled in x), to be
  /// interpolated in M by ObjectSizeTransfer::at_memory. Throws invalid_argument unless object_mb is a
  /// finite positive number.
  [[nodiscard]] ObjectSizeTransfer for_object_size(double object_mb) const {
    spotdnn::detail::require_positive("TransferTable::for_object_size", "object_mb", object_mb);
    ObjectSizeTransfer out;
    out.object_mb_ = object_mb;
    for (const Column& c : columns_) {
      const TransferTime t = in_column(c, object_mb);
      out.memory_mb_.push_back(c.memory_mb);
      out.upload_s_.push_back(t.upload_s);
      out.download_s_.push_back(t.download_s);
      out.extrapolated_.push_back(t.extrapolated ? 1 : 0);
    }
    return out;
  }

  /// The measured cells, sorted by memory, then size.
  [[nodiscard]] std::vector<TransferCell> cells() const {
    std::vector<TransferCell> out;
    for (const Column& c : columns_) out.insert(out.end(), c.cells.begin(), c.cells.end());
    return out;
  }

 private:
  struct Column {
    double memory_mb = 0;
    std::vector<TransferCell> cells;  ///< sorted by object size
  };

  /// Linear in x between the column's sizes; below the first size its first value, above the last its
  /// last value × x/x_last (constant bandwidth).
  static TransferTime in_column(const Column& c, double object_mb) {
    const TransferCell& first = c.cells.front();
    const TransferCell& last = c.cells.back();
    if (object_mb <= first.object_mb) return {first.upload_s, first.download_s, object_mb < first.object_mb};
    if (object_mb >= last.object_mb) {
      const double scale = object_mb / last.object_mb;
      return {last.upload_s * scale, last.download_s * scale, object_mb > last.object_mb};
    }
    const auto high = std::upper_bound(c.cells.begin(), c.cells.end(), object_mb,
                                       [](double x, const TransferCell& cell) { return x < cell.object_mb; });
    const TransferCell& h = *high;
    const TransferCell& l = *(high - 1);
    if (object_mb == l.object_mb) return {l.upload_s, l.download_s, false};
    const double w = (object_mb - l.object_mb) / (h.object_mb - l.object_mb);
    return {l.upload_s + w * (h.upload_s - l.upload_s), l.download_s + w * (h.download_s - l.download_s), false};
  }

  std::vector<Column> columns_;
};

}  // namespace spotdnn::serverless
