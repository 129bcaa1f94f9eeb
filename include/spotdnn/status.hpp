#pragma once
// SPDX-License-Identifier: MIT
/// @file status.hpp The outcome of a prediction or a plan, and its JSON/CLI spelling.

#include <optional>
#include <string_view>

namespace spotdnn {

/// How a prediction or a plan came out. The spelling of each value is part of the file contract.
enum class Status {
  optimal,        ///< the returned plan is provably the cheapest (or fastest, in budget mode)
  feasible,       ///< the result meets every constraint; optimality is not claimed
  infeasible,     ///< no answer meets the constraints; the message says why
  invalid_input,  ///< the input cannot be used; the message names the field
  /// the loss model puts the target at or above the loss at iteration 0 (of the cluster, or of some
  /// cluster a planner may choose): there is no training to plan; the message names the cluster and the
  /// model's loss at iteration 0. Not a plan (has_plan() is false).
  target_met_at_start,
  /// a search stopped at its work limit before it found an answer or proved there is none; the message
  /// names the limit and how to raise it. Not a plan (has_plan() is false).
  undecided,
};

constexpr std::string_view to_string(Status status) {
  switch (status) {
    case Status::optimal: return "optimal";
    case Status::feasible: return "feasible";
    case Status::infeasible: return "infeasible";
    case Status::invalid_input: return "invalid_input";
    case Status::target_met_at_start: return "target_met_at_start";
    case Status::undecided: return "undecided";
  }
  return "invalid_input";
}

constexpr std::optional<Status> status_from_string(std::string_view text) {
  for (Status s : {Status::optimal, Status::feasible, Status::infeasible, Status::invalid_input, Status::target_met_at_start,
                   Status::undecided}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

}  // namespace spotdnn
