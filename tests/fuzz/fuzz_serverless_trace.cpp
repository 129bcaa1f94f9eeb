// SPDX-License-Identifier: MIT
// Fuzzes the serverless profiling-trace CSV reader: parse_serverless_trace. An accepted trace must validate.
#include <spotdnn/io/serverless_trace_csv.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto trace = fuzz::read_or_reject([&] { return spotdnn::io::parse_serverless_trace(fuzz::as_text(data, size), "fuzz.csv"); });
  if (!trace) return 0;
  fuzz::check(!trace->samples.empty(), "an accepted trace without samples");
  return 0;
}
