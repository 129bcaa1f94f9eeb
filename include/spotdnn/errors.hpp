#pragma once
// SPDX-License-Identifier: MIT
/// @file errors.hpp The one exception type spotdnn throws for caller mistakes.
///
/// Messages read "function: field = value: why", so a user can find and fix the input.
/// Numerical outcomes (no convergence, infeasible plan) are never thrown: they come back as a
/// status in a result struct (see status.hpp).

#include <stdexcept>
#include <string>
#include <utility>

namespace spotdnn {

/// A caller passed a value spotdnn cannot work with. what() names the function, field and value.
///
/// An error thrown by the library's own checks also carries those parts separately (function(),
/// field(), value(), why()), so that a program can say the same in its own words (the CLI names the
/// option the user typed); they are empty for an error built from a message alone.
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;

  /// `message` (what()) and the parts it was made of.
  invalid_argument(const std::string& message, std::string function, std::string field, std::string value, std::string why)
      : std::invalid_argument(message),
        function_(std::move(function)),
        field_(std::move(field)),
        value_(std::move(value)),
        why_(std::move(why)) {}

  /// The function that refused the value ("plan_exact", "read_catalog_file(c.json)"); empty when unknown.
  [[nodiscard]] const std::string& function() const noexcept { return function_; }
  /// The field, as the function's parameters name it ("options.minimum_counts[\"p3.2xlarge\"]").
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  /// The value refused, as printed in what() (strings quoted).
  [[nodiscard]] const std::string& value() const noexcept { return value_; }
  /// Why it was refused, and what is allowed.
  [[nodiscard]] const std::string& why() const noexcept { return why_; }

 private:
  std::string function_, field_, value_, why_;
};

/// The machine refused a resource spotdnn needed (a thread that cannot start, a temporary file that
/// cannot be written); what() says which. Out of memory stays std::bad_alloc. Not the caller's mistake:
/// the CLI exits 1 with one line for both.
class resource_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace spotdnn
