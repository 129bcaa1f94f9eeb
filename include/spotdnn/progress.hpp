#pragma once
// SPDX-License-Identifier: MIT
/// @file progress.hpp How long-running work says how far it got: the library calls a callback the
/// caller gives, and never prints. The `spotdnn` CLI turns the calls into a line on stderr.

#include <functional>
#include <string_view>

namespace spotdnn {

/// One report of progress. The views are valid during the call only.
struct Progress {
  std::string_view task;  ///< what is running, e.g. "simulate" or "confidence search"
  std::string_view unit;  ///< what `done` and `total` count, e.g. "scenarios" or "candidates"
  double done = 0;        ///< units finished so far (never decreases within one task)
  double total = 0;       ///< units expected in all; 0 when not known in advance
};

/// Called on the thread that called the library function, between units of work (never from worker
/// threads), at least once at the start and once when the task ends (done == total when total > 0).
/// Calls are cheap to make often; the callback decides how often to show them. An empty callback is
/// never called. A callback that throws aborts the work, and the exception reaches the caller.
using ProgressCallback = std::function<void(const Progress&)>;

namespace detail {

/// Calls `callback` when it is set.
inline void report(const ProgressCallback& callback, std::string_view task, std::string_view unit, double done,
                   double total) {
  if (callback) callback(Progress{task, unit, done, total});
}

}  // namespace detail

}  // namespace spotdnn
