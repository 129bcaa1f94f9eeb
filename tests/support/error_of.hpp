#pragma once
// SPDX-License-Identifier: MIT
/// @file support/error_of.hpp Test helper: the message of the spotdnn::invalid_argument a call throws.

#include <string>

#include <spotdnn/errors.hpp>

namespace spotdnn::test {

/// what() of the spotdnn::invalid_argument `f` throws, or "(accepted)" when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const spotdnn::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace spotdnn::test
