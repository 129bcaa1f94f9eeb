#pragma once
// SPDX-License-Identifier: MIT
/// @file fuzz_check.hpp What every harness shares: the bytes as text, the one expected rejection
/// (spotdnn::invalid_argument with a one-line message), and stopping the fuzzer on a finding.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <spotdnn/errors.hpp>

namespace spotdnn::fuzz {

/// The fuzzer's bytes, unchanged, as the text a reader is given (libFuzzer's pointer is never null).
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

/// Prints `what` and aborts: libFuzzer writes the input as a crash reproducer.
[[noreturn]] inline void finding(std::string_view what) {
  std::fprintf(stderr, "\n== spotdnn fuzz finding: %.*s\n", int(what.size()), what.data());
  std::abort();
}

inline void check(bool ok, std::string_view what) {
  if (!ok) finding(what);
}

/// A rejection's message must be one line: the CLI prints it as the single line on stderr.
inline void check_one_line(const std::exception& e) {
  const std::string_view message = e.what();
  if (message.find('\n') != std::string_view::npos) finding("a rejection's message spans lines: " + std::string(message));
}

/// Runs a reader: its result, or nullopt when it refused the input with spotdnn::invalid_argument (the
/// expected rejection). Any other exception escapes and is a finding.
template <typename Read>
auto read_or_reject(Read&& read) -> std::optional<decltype(read())> {
  try {
    return read();
  } catch (const spotdnn::invalid_argument& e) {
    check_one_line(e);
    return std::nullopt;
  }
}

/// Runs a step that must succeed on what a reader accepted (writing it back, re-reading it, using it):
/// any exception is a finding, named by `step`.
template <typename Step>
auto must_succeed(std::string_view step, Step&& run) -> decltype(run()) {
  try {
    return run();
  } catch (const std::exception& e) {
    finding(std::string(step) + " threw: " + e.what());
  }
}

}  // namespace spotdnn::fuzz
