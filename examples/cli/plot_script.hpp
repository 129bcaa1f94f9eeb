#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/plot_script.hpp What every `--plot` script shares: the terminal the file name asks for, one
/// look (fonts, grid, key outside the data), safe strings for user text, time axes in s, min or h, and
/// thinning of long series for drawing; plus the frontier script.
///
/// Scripts made here go to run_gnuplot() (gnuplot.hpp), which sends them to gnuplot on a pipe and
/// writes what gnuplot prints to the user's file only when it succeeded. They never name a file: they
/// say `set output` without one. User text (run names, instance-type names) only ever enters a script
/// through gnuplot_string() followed by `noenhanced`; the datablocks (`$d << EOD`) hold only numbers.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/detail/validate.hpp>
#include <spotdnn/io/plan_json.hpp>  // io::plan_label
#include <spotdnn/plan/frontier.hpp>

#include "options.hpp"  // PlotFormat, plot_format_of

namespace spotdnn::cli {

/// `text` as a gnuplot string expression that gnuplot takes as text, never as commands.
///
/// What gnuplot 5.4 documents and this relies on (`help substitution backquotes`, `help substitution
/// macros`, `help syntax quotes`): backquote command substitution happens "anywhere on the gnuplot
/// command line except inside strings delimited by single quotes" (double quotes do not stop it); `@`
/// macro expansion "does not occur inside either single or double quotes"; in a single-quoted string a
/// backslash is an ordinary character, and octal escapes like \345 are read "only for double-quoted
/// strings". So the text goes inside single quotes, cut at every ' and joined with the concatenation
/// operator (`help operators binary`: A.B), each quote written "\047": it's -> 'it'."\047".'s'.
/// Two documented alternatives are unsafe in gnuplot 5.4.4, as tests/cli_gnuplot_test.cpp shows:
/// a doubled '' is honoured by the scanner only after another character (`print '''a'` is a syntax
/// error), and the macro expander flips its "inside single quotes" flag at every ', even one inside
/// double quotes, so "'" would let the next piece's `@name` expand. Here every ' on the line opens or
/// closes a piece, and nothing but `."\047".` stands between pieces. A command ends at the end of its
/// line, so control characters and bytes that are not UTF-8 are first written as visible escapes
/// (\n, \t, \xNN, as in error messages): a newline can never end the string and start a command.
/// Titles, keys and labels take such expressions; the caller puts `noenhanced` after them so that
/// { } ^ _ @ & ~ are printed, not read as enhanced-text markup (`help enhanced`). Datablock lines
/// (`$d << EOD`) are not covered: they end at a newline or at a line "EOD", so only numbers go there.
[[nodiscard]] inline std::string gnuplot_string(std::string_view text) {
  const std::string printable = spotdnn::detail::escape_for_message(text);
  std::string out;
  std::size_t start = 0;
  while (true) {
    const std::size_t quote = printable.find('\'', start);
    const std::size_t end = quote == std::string::npos ? printable.size() : quote;
    if (end > start || (quote == std::string::npos && out.empty())) {
      out.append(out.empty() ? "" : ".").append("'").append(printable, start, end - start).append("'");
    }
    if (quote == std::string::npos) break;
    out.append(out.empty() ? "" : ".").append("\"\\047\"");
    start = quote + 1;
  }
  return out;
}

/// The gnuplot string expression for a line break, to join gnuplot_string() pieces into two-line
/// titles: 'first'."\n".'second' (a fixed double-quoted string: nothing to substitute in it).
inline constexpr std::string_view kGnuplotNewline = "\"\\n\"";

/// "an SVG file", "a PNG file", "a PDF file".
[[nodiscard]] inline std::string_view plot_format_name(PlotFormat format) {
  switch (format) {
    case PlotFormat::svg: return "an SVG file";
    case PlotFormat::png: return "a PNG file";
    case PlotFormat::pdf: return "a PDF file";
  }
  return "a plot";
}

/// A number for a script or a datablock: shortest round-trip text, '.' whatever the locale.
[[nodiscard]] inline std::string plot_number(double value) { return detail::format_number(value); }

/// The first lines of every script: the terminal for `format` at about `width` × `height` pixels (PDF:
/// the same at 100 pixels per inch) and `set output` without a file name, then one look for all plots:
/// sans fonts, a light grid behind the data, tics outside on the left and bottom axes only.
/// PNG is drawn by pngcairo (antialiased); a gnuplot built without cairo falls back to the libgd png.
[[nodiscard]] inline std::string plot_preamble(PlotFormat format, int width, int height) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  std::string s;
  switch (format) {
    case PlotFormat::svg:
      s = "set terminal svg size " + w + "," + h + " dynamic enhanced background rgb 'white' font 'sans,11'\n";
      break;
    case PlotFormat::png:
      s = "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "  set terminal pngcairo size " + w + "," + h + " enhanced background rgb 'white' font 'sans,10'\n"
          "} else {\n"
          "  set terminal png size " + w + "," + h + " enhanced background rgb 'white' font 'sans,10'\n"
          "}\n";
      break;
    case PlotFormat::pdf:
      s = "set terminal pdfcairo size " + plot_number(width / 100.0) + "in," + plot_number(height / 100.0) +
          "in enhanced background rgb 'white' font 'sans,10'\n";
      break;
  }
  s += "set output\n"
       "set encoding utf8\n"
       "set border 3 lw 1\n"
       "set tics nomirror out\n"
       "set grid back lw 1 lc rgb '#dddddd'\n"
       "set key outside bottom center horizontal Left reverse box lc rgb '#bbbbbb' spacing 1.2 height 1\n";
  return s;
}

/// A unit for a time axis: seconds below 3 minutes, minutes below 3 hours, hours above.
struct TimeUnit {
  double seconds = 1;  ///< seconds per unit
  std::string name;    ///< "s", "min" or "h"
};

[[nodiscard]] inline TimeUnit time_unit_for(double largest_s) {
  if (largest_s < 180) return {1, "s"};
  if (largest_s < 3 * 3600) return {60, "min"};
  return {3600, "h"};
}

/// `seconds` for a label: "90 s", "40 min", "60 min", "2 h", "2.5 h" (seconds below 2 minutes, minutes
/// below 2 hours, at most 3 significant digits in the unit).
[[nodiscard]] inline std::string time_label(double seconds) {
  const TimeUnit unit = seconds < 120 ? TimeUnit{1, "s"} : seconds < 7200 ? TimeUnit{60, "min"} : TimeUnit{3600, "h"};
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", seconds / unit.seconds);
  return std::string(buffer) + " " + unit.name;
}

/// Positions of the points to draw out of `count` points in x order, at most about `max_points`: all of
/// them when there are few enough, otherwise the first, the last and, in each of max_points/2 buckets of
/// consecutive points, the lowest and the highest `y(position)` (in x order), so that spikes and the
/// envelope stay visible. Deterministic. For drawing only: fits use every point.
template <class Y>
[[nodiscard]] std::vector<std::size_t> thin_for_drawing(std::size_t count, std::size_t max_points, Y&& y) {
  std::vector<std::size_t> kept;
  if (count <= max_points || max_points < 4) {
    kept.resize(count);
    for (std::size_t i = 0; i < count; ++i) kept[i] = i;
    return kept;
  }
  const std::size_t buckets = (max_points - 2) / 2;
  kept.reserve(2 * buckets + 2);
  kept.push_back(0);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = b * count / buckets, end = (b + 1) * count / buckets;
    if (begin >= end) continue;
    std::size_t low = begin, high = begin;
    for (std::size_t i = begin + 1; i < end; ++i) {
      if (y(i) < y(low)) low = i;
      if (y(i) > y(high)) high = i;
    }
    for (std::size_t i : {std::min(low, high), std::max(low, high)}) {
      if (i != kept.back()) kept.push_back(i);
    }
  }
  if (kept.back() != count - 1) kept.push_back(count - 1);
  return kept;
}

namespace plot_detail {

/// A label's box in graph coordinates (0..1 both ways).
struct Box {
  double x0, y0, x1, y1;
  [[nodiscard]] bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

}  // namespace plot_detail

/// Which of `f`'s steps get their plan written next to them: in deadline order, each step whose label
/// (about 5.5 pixels a character on a ~860-pixel-wide graph, 3 lines high) overlaps no label already
/// placed. The others are drawn as points only; the table, --format json and csv list every step.
/// Returns, per step, 0 for no label, 1 for a label starting at the point, -1 for one ending at it.
[[nodiscard]] inline std::vector<int> frontier_label_sides(const Frontier& f, double x_low, double x_high, double y_low,
                                                           double y_high) {
  std::vector<int> sides(f.steps.size(), 0);
  std::vector<plot_detail::Box> placed;
  const double char_w = 5.8 / 860, line_h = 16.0 / 440;
  for (std::size_t i = 0; i < f.steps.size(); ++i) {
    const FrontierStep& s = f.steps[i];
    const double x = (s.from_deadline_s - x_low) / (x_high - x_low), y = (s.plan.cost_usd - y_low) / (y_high - y_low);
    const double w = (double(io::plan_label(s.plan, ',').size()) + 1) * char_w;
    plot_detail::Box box{x + 0.004, y + 0.004, x + 0.004 + w, y + 0.004 + line_h};
    int side = 1;
    if (box.x1 > 1.0) {  // past the right edge: end the label at the point instead
      box = {x - 0.004 - w, y + 0.004, x - 0.004, y + 0.004 + line_h};
      side = -1;
    }
    bool free = box.x0 >= 0;
    for (const plot_detail::Box& other : placed) free = free && !box.overlaps(other);
    if (!free) continue;
    placed.push_back(box);
    sides[i] = side;
  }
  return sides;
}

/// A gnuplot script drawing `f` in `format` (to standard output: `set output` without a file name): cost
/// (USD) against deadline (s, min or h by the range) as a staircase with a point where each step starts,
/// labelled with its plan where labels do not collide (frontier_label_sides), and `samples` (deadline s,
/// cost USD) as open circles when given. Numbers are inline data; plan labels, which hold the catalog's
/// type names, are `set label` commands with gnuplot_string() text and `noenhanced`.
[[nodiscard]] inline std::string frontier_gnuplot_script(const Frontier& f, PlotFormat format = PlotFormat::svg,
                                                         const std::vector<std::pair<double, double>>& samples = {}) {
  const TimeUnit unit = time_unit_for(f.max_deadline_s);
  double cost_low = f.steps.empty() ? 0 : f.steps.front().plan.cost_usd, cost_high = cost_low;
  for (const FrontierStep& s : f.steps) {
    cost_low = std::min(cost_low, s.plan.cost_usd);
    cost_high = std::max(cost_high, s.plan.cost_usd);
  }
  if (!(cost_high > cost_low)) cost_high = cost_low + std::max(0.01, 0.1 * cost_low);
  const double span = cost_high - cost_low;
  const double y_low = std::max(0.0, cost_low - 0.08 * span), y_high = cost_high + 0.12 * span;
  const double x_low = f.min_deadline_s, x_high = f.max_deadline_s > f.min_deadline_s ? f.max_deadline_s : f.min_deadline_s + 1;
  const std::vector<int> sides = frontier_label_sides(f, x_low, x_high, y_low, y_high);
  const long labelled = std::count_if(sides.begin(), sides.end(), [](int side) { return side != 0; });

  std::string s = plot_preamble(format, 1000, 640);
  s += "set title " + gnuplot_string("Cheapest plan per deadline, target loss " + detail::format_readable(f.target_loss)) + "." +
       std::string(kGnuplotNewline) + "." +
       gnuplot_string(std::to_string(f.steps.size()) + " steps" +
                      (labelled < long(f.steps.size())
                           ? ", " + std::to_string(labelled) + " labelled (the others would overlap; every step: --format table or csv)"
                           : "")) +
       " noenhanced\n";
  s += "set xlabel " + gnuplot_string("deadline [" + unit.name + "]") + " noenhanced\n";
  s += "set ylabel 'cost [USD]'\nset format y '%.2f'\n";
  s += "set xrange [" + plot_number(x_low / unit.seconds) + ":" + plot_number(x_high / unit.seconds) + "]\n";
  s += "set yrange [" + plot_number(y_low) + ":" + plot_number(y_high) + "]\n";
  int tag = 0;
  for (std::size_t i = 0; i < f.steps.size(); ++i) {
    if (sides[i] == 0) continue;
    const FrontierStep& step = f.steps[i];
    s += "set label " + std::to_string(++tag) + " " + gnuplot_string(io::plan_label(step.plan, ',')) + " at " +
         plot_number(step.from_deadline_s / unit.seconds) + "," + plot_number(step.plan.cost_usd) + " noenhanced " +
         (sides[i] > 0 ? "left offset 0.4,0.6" : "right offset -0.4,0.6") + " font 'sans,9' front\n";
  }
  s += "$frontier << EOD\n";
  for (const FrontierStep& step : f.steps) {
    s += plot_number(step.from_deadline_s / unit.seconds) + " " + plot_number(step.plan.cost_usd) + " " +
         plot_number(step.to_deadline_s / unit.seconds) + "\n";
  }
  s += "EOD\n";
  if (!samples.empty()) {
    s += "$samples << EOD\n";
    for (const auto& [deadline_s, cost_usd] : samples) s += plot_number(deadline_s / unit.seconds) + " " + plot_number(cost_usd) + "\n";
    s += "EOD\n";
  }
  s += "plot $frontier using 1:2:($3-$1):(0) with vectors nohead lw 2 lc rgb '#1f77b4' title 'optimal cost [USD] (each step: one plan)', \\\n"
       "     $frontier using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' title 'cheapest plan changes'";
  if (!samples.empty()) s += ", \\\n     $samples using 1:2 with points pt 6 ps 1.2 lc rgb '#d62728' title 'sampled deadlines (--deadlines COUNT)'";
  s += "\n";
  return s;
}

}  // namespace spotdnn::cli
