#pragma once
// SPDX-License-Identifier: MIT
/// @file errors.hpp The one exception type spotdnn throws for caller mistakes.
///
/// Messages read "function: field = value: why", so a user can find and fix the input.
/// Numerical outcomes (no convergence, infeasible plan) are never thrown: they come back as a
/// status in a result struct (see status.hpp).

#include <stdexcept>

namespace spotdnn {

/// A caller passed a value spotdnn cannot work with. what() names the function, field and value.
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The machine refused a resource spotdnn needed (a thread that cannot start, a temporary file that
/// cannot be written); what() says which. Out of memory stays std::bad_alloc. Not the caller's mistake:
/// the CLI exits 1 with one line for both.
class resource_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace spotdnn
