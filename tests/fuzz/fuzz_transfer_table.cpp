// SPDX-License-Identifier: MIT
// Fuzzes the S3 transfer-table CSV reader: parse_transfer_table. An accepted table must answer every query
// (inside, between and beyond its cells) with finite, positive times.
#include <cmath>

#include <spotdnn/io/serverless_transfer_csv.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto table = fuzz::read_or_reject([&] { return spotdnn::io::parse_transfer_table(fuzz::as_text(data, size), "fuzz.csv"); });
  if (!table) return 0;
  for (const double memory_mb : {1.0, 128.0, 700.5, 3008.0, 10240.0}) {
    for (const double object_mb : {1e-3, 1.0, 22.35, 100.0, 5000.0}) {
      const serverless::TransferTime t = table->at(memory_mb, object_mb);
      fuzz::check(std::isfinite(t.upload_s) && t.upload_s > 0 && std::isfinite(t.download_s) && t.download_s > 0,
                  "a transfer time that is not finite and positive");
    }
  }
  return 0;
}
