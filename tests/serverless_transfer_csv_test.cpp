// SPDX-License-Identifier: MIT
// io/serverless_transfer_csv.hpp: a measured S3 transfer table read from CSV, and every bad file refused
// with FILE:LINE, the column and the value.
#include <doctest/doctest.h>

#include <string>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/io/serverless_transfer_csv.hpp>
#include <spotdnn/limits.hpp>

#include "support/error_of.hpp"

using spotdnn::io::parse_transfer_table;
using spotdnn::serverless::TransferTable;
using spotdnn::test::error_of;

namespace {

constexpr const char* kHeader = "memory_mb,object_mb,upload_s,download_s\n";

std::string embedded_table_csv() {
  std::string text = kHeader;
  for (const auto& c : TransferTable::fasdl_measured().cells()) {
    text += spotdnn::detail::format_number(c.memory_mb) + "," + spotdnn::detail::format_number(c.object_mb) + "," +
            spotdnn::detail::format_number(c.upload_s) + "," + spotdnn::detail::format_number(c.download_s) + "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("transfer CSV: the embedded table written out reads back cell for cell") {
  const TransferTable table = parse_transfer_table(embedded_table_csv(), "fasdl.csv");
  const auto a = table.cells(), b = TransferTable::fasdl_measured().cells();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].memory_mb == b[i].memory_mb);
    CHECK(a[i].object_mb == b[i].object_mb);
    CHECK(a[i].upload_s == b[i].upload_s);
    CHECK(a[i].download_s == b[i].download_s);
  }
}

TEST_CASE("transfer CSV: columns in any order, rows in any order, quoted cells") {
  const TransferTable t = parse_transfer_table(
      "download_s,upload_s,object_mb,memory_mb\n0.4,0.8,2,512\n\"0.2\",0.4,1,512\n0.1,0.2,1,1024\n0.2,0.4,2,1024\n", "t.csv");
  CHECK(t.at(512, 1.5).upload_s == doctest::Approx(0.6));
  CHECK(t.at(768, 1).upload_s == doctest::Approx(0.3));
  CHECK_FALSE(t.at(768, 1.5).extrapolated);
  CHECK(t.at(2048, 1).extrapolated);
}

TEST_CASE("transfer CSV: bad files name the line, the column and the value") {
  const std::string h = kHeader;
  struct Case {
    std::string text;
    std::string expected;
  };
  const Case cases[] = {
      {"", "the file is empty"},
      {h, "no data rows"},
      {h + "512,1,abc,0.1\n", "t.csv:2: upload_s = \"abc\": not a number"},
      {h + "512,1,0.1,nan\n", "t.csv:2: download_s = \"nan\""},
      {h + "512,1,0.1,inf\n", "t.csv:2: download_s = \"inf\""},
      {h + "512,1,-0.1,0.1\n", "t.csv:2: upload_s = \"-0.1\""},
      {h + "512,0,0.1,0.1\n", "t.csv:2: object_mb = \"0\": must be greater than zero"},
      {h + "20000,1,0.1,0.1\n", "t.csv:2: memory_mb = \"20000\""},
      {h + "512,1,0.1\n", "t.csv:2"},
      {h + "512,1,0.1,0.1,9\n", "t.csv:2"},
      {"memory_mb,object_mb,upload_s\n512,1,0.1\n", "download_s"},
      {"memory_mb,object_mb,upload_s,download_s,extra\n512,1,0.1,0.1,1\n", "extra"},
      {h + "512,1,0.1,0.1\n" + h, "repeated"},
      {h + "512,1,0.1,0.1\n512,1,0.2,0.2\n", "measured twice"},
      {h + std::string("512,1,0.1,0.1\0\n", 15), "NUL"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const std::string error = error_of([&] { (void)parse_transfer_table(c.text, "t.csv"); });
    CHECK(error.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("transfer CSV: a table above the cell limit is refused at the first row past it") {
  std::string text = kHeader;
  text.reserve(spotdnn::kMaxTransferCells * 16);
  for (std::size_t i = 0; i <= spotdnn::kMaxTransferCells; ++i) {
    text += std::to_string(128 + i % 10000) + "," + std::to_string(1 + i / 10000) + ",0.1,0.1\n";
  }
  const std::string error = error_of([&] { (void)parse_transfer_table(text, "big.csv"); });
  CHECK(error.find("big.csv:" + std::to_string(spotdnn::kMaxTransferCells + 2)) != std::string::npos);
  CHECK(error.find("too large") != std::string::npos);
}
