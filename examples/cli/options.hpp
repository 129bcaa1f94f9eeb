#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/options.hpp The option language every `spotdnn` command speaks: --format table|json|csv (or
/// script|json), durations with units, --plot FILE.svg|.png|.pdf, and `-` for standard input.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/detail/validate.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/limits.hpp>

namespace spotdnn::cli {

// ---------------------------------------------------------------------------------------------------------
// --format

/// What a command writes on stdout: an aligned table for people, one JSON document or CSV (a header and
/// rows) for programs, or (launch, status, teardown) a bash script.
enum class OutputFormat { table, json, csv, script };

[[nodiscard]] inline std::string_view to_string(OutputFormat format) {
  switch (format) {
    case OutputFormat::table: return "table";
    case OutputFormat::json: return "json";
    case OutputFormat::csv: return "csv";
    case OutputFormat::script: return "script";
  }
  return "table";
}

/// "table (for people)": a format and what it is for, for help.
[[nodiscard]] inline std::string describe(OutputFormat format) {
  switch (format) {
    case OutputFormat::table: return "table (for people)";
    case OutputFormat::json: return "json (one document, for programs)";
    case OutputFormat::csv: return "csv (a header and rows, for spreadsheets)";
    case OutputFormat::script: return "script (bash)";
  }
  return "table";
}

/// "table, json or csv": the formats in `allowed`, for help and messages.
[[nodiscard]] inline std::string format_list(const std::vector<OutputFormat>& allowed) {
  std::string text;
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + std::string(to_string(allowed[i]));
  }
  return text;
}

/// --format FORMAT, one of `allowed` (the first is the default): the one definition of --format for every
/// command. A format the command does not write is refused with the ones it does. `about`, when given,
/// replaces the help text's description of the formats.
inline CLI::Option* add_format_option(CLI::App& app, OutputFormat& format,
                                      std::vector<OutputFormat> allowed = {OutputFormat::table, OutputFormat::json,
                                                                           OutputFormat::csv},
                                      const std::string& about = {}) {
  if (allowed.empty()) allowed = {OutputFormat::table};
  format = allowed.front();
  const std::string list = format_list(allowed);
  std::string help = "output: ";
  if (about.empty()) {
    for (std::size_t i = 0; i < allowed.size(); ++i) help += (i == 0 ? "" : ", ") + describe(allowed[i]);
  } else {
    help += about;
  }
  return app
      .add_option_function<std::string>(
          "--format",
          [&format, allowed, list](const std::string& text) {
            for (OutputFormat f : allowed) {
              if (text == to_string(f)) {
                format = f;
                return;
              }
            }
            throw CLI::ValidationError("--format", detail::quoted(text) + ": this command writes " + list);
          },
          help)
      ->default_str(std::string(to_string(allowed.front())))
      ->type_name("FORMAT");
}

// ---------------------------------------------------------------------------------------------------------
// Numbers

/// Refuses an empty value ("--target-loss ''") on every number option (FLOAT, INT, UINT) of `app` and of its
/// subcommands, which CLI11 would otherwise read as 0. Call once every command is attached.
inline void refuse_empty_numbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options([](const CLI::Option*) { return true; })) {
    const std::string type = option->get_type_name();
    const std::string head = type.substr(0, type.find(':'));
    if (option->get_expected_min() < 1 || (head != "FLOAT" && head != "INT" && head != "UINT")) continue;
    option->check(CLI::Validator(
        [](std::string& text) { return text.empty() ? std::string("Value : give a number, not an empty string") : std::string(); },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_empty_numbers(*sub);
}

/// A number strictly between `low` and `high`, for options whose ends are refused (--confidence: a
/// probability in (0, 1)); help shows "in (low, high)", where CLI::Range would show "[low - high]" and
/// accept the ends.
inline CLI::Validator open_range(double low, double high) {
  const std::string range = "(" + detail::format_number(low) + ", " + detail::format_number(high) + ")";
  return CLI::Validator(
      [low, high](std::string& text) {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !(value > low && value < high)) {
          return "Value " + text + ": give a number greater than " + detail::format_number(low) + " and less than " +
                 detail::format_number(high);
        }
        return std::string();
      },
      "in " + range);
}

/// A finite number from `low` to `high` (CLI::Range lets "nan" through: every comparison with it is false).
inline CLI::Validator finite_range(double low, double high) {
  const std::string range = "[" + detail::format_number(low) + " - " + detail::format_number(high) + "]";
  return CLI::Validator(
      [low, high](std::string& text) {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || !(value >= low && value <= high)) {
          return "Value " + text + ": give a number from " + detail::format_number(low) + " to " + detail::format_number(high);
        }
        return std::string();
      },
      "in " + range);
}

// ---------------------------------------------------------------------------------------------------------
// Durations

/// What a duration may look like, for messages.
inline constexpr std::string_view kDurationHelp =
    "give seconds (3600) or a duration with units: 90s, 40m, 2h, 1h30m, 1.5d";

/// Seconds in `text`: a plain number of seconds ("3600", "0.5", "1e4", "-5": the sign is the caller's to
/// judge) or numbers each followed by a unit, the units in decreasing order and each at most once ("90s",
/// "40m", "2h", "1h30m", "1.5d", "2h 15m"). Units: d (86400 s), h (3600 s), m or min (60 s), s. nullopt
/// when `text` is not one of these or the result is not finite.
[[nodiscard]] inline std::optional<double> parse_duration_s(std::string_view text) {
  auto skip_spaces = [&](std::size_t i) {
    while (i < text.size() && text[i] == ' ') ++i;
    return i;
  };
  {
    // A plain number, as strtod reads it but without hexadecimal, inf or nan.
    std::size_t b = skip_spaces(0), e = text.size();
    while (e > b && text[e - 1] == ' ') --e;
    const std::string_view plain_text = text.substr(b, e - b);
    if (!plain_text.empty() && plain_text.size() < 64 &&
        plain_text.find_first_not_of("0123456789.eE+-") == std::string_view::npos) {
      const std::string copy(plain_text);
      char* end = nullptr;
      const double value = std::strtod(copy.c_str(), &end);
      if (end == copy.c_str() + copy.size()) return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
    }
  }
  auto number_at = [&](std::size_t& i) -> std::optional<double> {
    const std::size_t start = i;
    bool digits = false, dot = false;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || (text[i] == '.' && !dot))) {
      dot = dot || text[i] == '.';
      digits = digits || text[i] != '.';
      ++i;
    }
    if (!digits) return std::nullopt;
    return std::strtod(std::string(text.substr(start, i - start)).c_str(), nullptr);
  };
  std::size_t i = skip_spaces(0);
  if (i == text.size()) return std::nullopt;
  std::size_t first = i;
  const std::optional<double> plain = number_at(first);
  if (plain && skip_spaces(first) == text.size()) return std::isfinite(*plain) ? plain : std::nullopt;

  struct Unit {
    std::string_view name;
    double seconds;
  };
  constexpr Unit kUnits[] = {{"d", 86400}, {"h", 3600}, {"min", 60}, {"m", 60}, {"s", 1}};
  double total = 0;
  int last_rank = -1;
  while (i < text.size()) {
    const std::optional<double> value = number_at(i);
    if (!value) return std::nullopt;
    int rank = -1;
    for (int u = 0; u < int(std::size(kUnits)); ++u) {
      if (text.substr(i, kUnits[u].name.size()) == kUnits[u].name) {
        rank = u;
        break;
      }
    }
    if (rank < 0) return std::nullopt;
    const int order = rank >= 3 ? rank - 1 : rank;  // min and m are the same unit
    if (order <= last_rank) return std::nullopt;    // 30m1h, 1h1h
    last_rank = order;
    total += *value * kUnits[rank].seconds;
    i = skip_spaces(i + kUnits[rank].name.size());
  }
  return std::isfinite(total) ? std::optional<double>(total) : std::nullopt;
}

/// Whether a duration option takes zero (a join delay may be 0 s; a deadline may not).
enum class ZeroDuration { refused, allowed };

/// Seconds of `option`'s `text`, which must be a duration greater than zero (or at least zero); otherwise
/// a CLI::ValidationError naming the option, the value and what a duration looks like.
[[nodiscard]] inline double require_duration_s(const std::string& option, const std::string& text,
                                               ZeroDuration zero = ZeroDuration::refused) {
  const std::optional<double> seconds = parse_duration_s(text);
  if (!seconds) throw CLI::ValidationError(option, detail::quoted(text) + ": " + std::string(kDurationHelp));
  if (*seconds < 0) throw CLI::ValidationError(option, detail::quoted(text) + ": a duration must not be negative");
  if (zero == ZeroDuration::refused && !(*seconds > 0)) {
    throw CLI::ValidationError(option, detail::quoted(text) + ": must be longer than zero");
  }
  return *seconds;
}

/// An option taking a duration greater than zero (or, with ZeroDuration::allowed, at least zero) into
/// `seconds`, a double or a std::optional<double> for an option that may be absent (e.g. --deadline 40m).
template <typename Seconds>
CLI::Option* add_duration_option(CLI::App& app, const std::string& name, Seconds& seconds, const std::string& help,
                                 ZeroDuration zero = ZeroDuration::refused) {
  return app
      .add_option_function<std::string>(
          name, [&seconds, name, zero](const std::string& text) { seconds = require_duration_s(name, text, zero); }, help)
      ->type_name("DURATION");
}

// ---------------------------------------------------------------------------------------------------------
// --plot

enum class PlotFormat { svg, png, pdf };

/// The plot format a file name asks for by its extension (case-insensitive), or nullopt.
[[nodiscard]] inline std::optional<PlotFormat> plot_format_of(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return std::nullopt;
  std::string ext(path.substr(dot + 1));
  for (char& c : ext) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  if (ext == "svg") return PlotFormat::svg;
  if (ext == "png") return PlotFormat::png;
  if (ext == "pdf") return PlotFormat::pdf;
  return std::nullopt;
}

/// --plot FILE: draw the command's figure with gnuplot to FILE.svg, FILE.png or FILE.pdf (by extension).
inline CLI::Option* add_plot_option(CLI::App& app, std::string& path, const std::string& what) {
  return app
      .add_option_function<std::string>(
          "--plot",
          [&path](const std::string& text) {
            if (!plot_format_of(text)) {
              throw CLI::ValidationError("--plot", detail::quoted(text) +
                                                       ": give a file name ending in .svg, .png or .pdf (the format follows "
                                                       "the extension)");
            }
            path = text;
          },
          "also draw " + what + " to FILE (.svg, .png or .pdf; needs gnuplot)")
      ->type_name("FILE");
}

// ---------------------------------------------------------------------------------------------------------
// `-` for standard input

/// The name standard input goes by in messages.
inline constexpr std::string_view kStdinName = "<stdin>";

/// True when a file option's value means standard input.
[[nodiscard]] inline bool is_stdin(std::string_view path) { return path == "-"; }

/// Standard input in full, refused (spotdnn::invalid_argument naming `option`) past `max_bytes`.
[[nodiscard]] inline std::string read_stdin(std::string_view option, std::uintmax_t max_bytes) {
  std::string text;
  char buffer[1 << 16];
  while (std::cin.read(buffer, sizeof buffer) || std::cin.gcount() > 0) {
    text.append(buffer, std::size_t(std::cin.gcount()));
    if (text.size() > max_bytes) {
      detail::fail("read_stdin", option, "-", "standard input holds more than " + detail::format_number(double(max_bytes)) +
                                                   " bytes, the limit for this input");
    }
  }
  return text;
}

/// Refuses (CLI::ValidationError) a command line that gives `-` to more than one option: standard input
/// can be read once. `options` are (option name, value) pairs.
template <typename Options>
void require_one_stdin_of(const Options& options) {
  std::string first;
  for (const auto& option : options) {
    if (!is_stdin(option.second)) continue;
    if (!first.empty()) {
      throw CLI::ValidationError(std::string(option.first), "standard input (-) is already read by " + first +
                                                                ": give a file to one of them");
    }
    first = std::string(option.first);
  }
}

inline void require_one_stdin(std::initializer_list<std::pair<std::string_view, std::string_view>> options) {
  require_one_stdin_of(options);
}

inline void require_one_stdin(const std::vector<std::pair<std::string, std::string>>& options) {
  require_one_stdin_of(options);
}

/// Standard input read as one JSON document (at most kMaxJsonFileBytes, under io::parse_json's limits);
/// errors name "<stdin>". `option` names the option that gave `-`.
[[nodiscard]] inline io::Json read_stdin_json(std::string_view option) {
  return io::parse_json(read_stdin(option, kMaxJsonFileBytes), kStdinName);
}

/// What a JSON file option reads: `path`'s document through `from_file(path)`, or with `-` standard input's
/// through `from_json(json, file)`, where `file` is "<stdin>" (for the reader's function name in messages).
template <typename FromJson, typename FromFile>
[[nodiscard]] auto read_json_input(std::string_view option, const std::string& path, FromJson&& from_json, FromFile&& from_file) {
  if (is_stdin(path)) return from_json(read_stdin_json(option), std::string(kStdinName));
  return from_file(path);
}

}  // namespace spotdnn::cli
