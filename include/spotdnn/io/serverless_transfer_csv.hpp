#pragma once
// SPDX-License-Identifier: MIT
/// @file io/serverless_transfer_csv.hpp Reads a measured S3 transfer table (docs/formats.md, "S3 transfer
/// table"): the `--transfer F.csv` of `spotdnn serverless plan`, in place of FasDL's embedded figures.
///
/// Header `memory_mb,object_mb,upload_s,download_s` (any order); one row per measured cell: the seconds to
/// PUT and GET one object of `object_mb` MB from a Lambda function of `memory_mb` MB. Same file rules and
/// FILE:LINE messages as the traces (io/csv.hpp); memory in 1..10,240 MB, sizes and times positive, each
/// (memory, size) once, at most kMaxTransferCells rows.

#include <cstdint>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/io/csv.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/serverless/transfer_table.hpp"

namespace spotdnn {

namespace detail {

inline constexpr std::string_view kTransferTableHeader = "memory_mb,object_mb,upload_s,download_s";

inline serverless::TransferTable read_transfer_table_from(CsvInput& input) {
  using spotdnn::detail::csv_where;
  using spotdnn::detail::fail;
  using spotdnn::detail::parse_csv_non_negative;
  using spotdnn::detail::quoted;
  const std::string_view fn = input.function();
  const std::string& source = input.source();
  CsvTable<4> in(input, {"memory_mb", "object_mb", "upload_s", "download_s"}, kTransferTableHeader);
  std::vector<serverless::TransferCell> cells;
  in.read_header(true);
  while (in.read_row()) {
    const std::size_t line = in.line();
    const std::string_view memory = in.cell(0), size = in.cell(1), up = in.cell(2), down = in.cell(3);
    if (memory == "memory_mb" && size == "object_mb") {
      fail(fn, csv_where(source, line), "<row>", "the header row is repeated (concatenated files?)");
    }
    if (cells.size() >= kMaxTransferCells) {
      fail(fn, csv_where(source, line), "<row>", "more than " + std::to_string(kMaxTransferCells) + " cells: the table is too large");
    }
    serverless::TransferCell cell;
    cell.memory_mb = parse_csv_non_negative(fn, source, line, "memory_mb", memory);
    cell.object_mb = parse_csv_non_negative(fn, source, line, "object_mb", size);
    cell.upload_s = parse_csv_non_negative(fn, source, line, "upload_s", up);
    cell.download_s = parse_csv_non_negative(fn, source, line, "download_s", down);
    const auto positive = [&](std::string_view column, std::string_view text, double value) {
      if (!(value > 0)) fail(fn, csv_where(source, line) + ": " + std::string(column), quoted(text), "must be greater than zero");
    };
    positive("memory_mb", memory, cell.memory_mb);
    positive("object_mb", size, cell.object_mb);
    positive("upload_s", up, cell.upload_s);
    positive("download_s", down, cell.download_s);
    if (cell.memory_mb < 1 || cell.memory_mb > 10240) {
      fail(fn, csv_where(source, line) + ": memory_mb", quoted(memory), "must be in 1..10240 MB (Lambda's memory range)");
    }
    cells.push_back(cell);
  }
  if (cells.empty()) fail(fn, source, "<no rows>", "the file has a header but no data rows");
  try {
    return serverless::TransferTable(std::move(cells));
  } catch (const spotdnn::invalid_argument& e) {
    fail(fn, source, "<table>", e.what());
  }
}

}  // namespace detail

namespace io {

/// Reads a transfer table file. Throws spotdnn::invalid_argument naming FILE:LINE and the reason.
[[nodiscard]] inline serverless::TransferTable read_transfer_table(const std::string& path) {
  std::uintmax_t bytes = 0;
  const auto file = spotdnn::detail::open_trace_file(path, "read_transfer_table", bytes);
  return spotdnn::detail::read_transfer_table_from(*file);
}

/// Parses transfer-table CSV text; `source` names it in messages (FILE:LINE).
[[nodiscard]] inline serverless::TransferTable parse_transfer_table(std::string_view text, const std::string& source = "<text>") {
  text = spotdnn::detail::trace_text(text, "parse_transfer_table", source);
  spotdnn::detail::CsvInput input(text, "parse_transfer_table", source);
  return spotdnn::detail::read_transfer_table_from(input);
}

}  // namespace io

}  // namespace spotdnn
