#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/progress_line.hpp Shows the library's progress reports (spotdnn::ProgressCallback) on stderr:
/// on a terminal by default, once the work has run for a second (SPOTDNN_PROGRESS_DELAY_S seconds when
/// set), as one line rewritten in place; with --progress always (one line per report when stderr is not
/// a terminal); never with --no-progress.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <spotdnn/progress.hpp>

namespace spotdnn::cli {

enum class ProgressMode { automatic, always, never };

/// --progress and --no-progress; given together they are refused by CLI11's excludes (CLI::ExcludesError).
inline void add_progress_options(CLI::App& app, ProgressMode& mode) {
  CLI::Option* always = app.add_flag_callback("--progress", [&mode] { mode = ProgressMode::always; },
                                              "report progress on stderr even when it is not a terminal");
  CLI::Option* never = app.add_flag_callback("--no-progress", [&mode] { mode = ProgressMode::never; },
                                             "never report progress (by default it shows on a terminal after a second)");
  always->excludes(never);
}

/// Turns progress reports into text on `stream`. Reports come at most ten times a second; the last one
/// of a task is always shown once anything of it was. The destructor ends an open line.
class ProgressLine {
 public:
  explicit ProgressLine(ProgressMode mode, std::FILE* stream = stderr)
      : stream_(stream), terminal_(::isatty(::fileno(stream)) == 1), start_(Clock::now()) {
    enabled_ = mode == ProgressMode::always || (mode == ProgressMode::automatic && terminal_);
    delay_ = mode == ProgressMode::always ? Clock::duration::zero()
                                          : std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(automatic_delay_s()));
  }

  /// How long work runs before a terminal shows its progress: SPOTDNN_PROGRESS_DELAY_S when it holds a
  /// number of seconds from 0 to 3600, else 1.
  [[nodiscard]] static double automatic_delay_s() {
    const char* text = std::getenv("SPOTDNN_PROGRESS_DELAY_S");
    if (text == nullptr || *text == '\0') return 1;
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    return *end == '\0' && std::isfinite(seconds) && seconds >= 0 && seconds <= 3600 ? seconds : 1;
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { end_line(); }

  /// The callback to hand to the library (empty when progress is not shown, so the library skips it).
  [[nodiscard]] ProgressCallback callback() {
    if (!enabled_) return {};
    return [this](const Progress& p) { show(p); };
  }

  /// "simulate: 45000 of 100000 scenarios (45%)"; "confidence search: 12 candidates" without a total.
  [[nodiscard]] static std::string describe(const Progress& p) {
    if (p.total > 0) {
      return fmt::format("{}: {:.0f} of {:.0f} {} ({:.0f}%)", p.task, p.done, p.total, p.unit, 100 * p.done / p.total);
    }
    return fmt::format("{}: {:.0f} {}", p.task, p.done, p.unit);
  }

 private:
  using Clock = std::chrono::steady_clock;

  void show(const Progress& p) {
    const Clock::time_point now = Clock::now();
    const bool last = p.total > 0 && p.done >= p.total;
    if (now - start_ < delay_ && !(last && shown_)) return;
    if (!last && shown_ && now - last_shown_ < std::chrono::milliseconds(100)) return;
    const std::string text = describe(p);
    if (terminal_) {
      std::fprintf(stream_, "\r\033[K%s", text.c_str());
      line_open_ = true;
    } else {
      std::fprintf(stream_, "%s\n", text.c_str());
    }
    std::fflush(stream_);
    shown_ = true;
    last_shown_ = now;
  }

  void end_line() {
    if (!line_open_) return;
    std::fputs("\n", stream_);
    std::fflush(stream_);
    line_open_ = false;
  }

  std::FILE* stream_;
  bool terminal_;
  bool enabled_ = false;
  bool shown_ = false;
  bool line_open_ = false;
  Clock::time_point start_;
  Clock::time_point last_shown_;
  Clock::duration delay_ = Clock::duration::zero();
};

}  // namespace spotdnn::cli
