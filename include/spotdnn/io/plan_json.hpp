#pragma once
// SPDX-License-Identifier: MIT
/// @file io/plan_json.hpp JSON and CSV for plans and cost–deadline frontiers, and the gnuplot script
/// that draws a frontier as an SVG (design §7 contract: the prediction fields plus the plan's own).

#include <cstddef>
#include <locale>
#include <sstream>
#include <string>
#include <string_view>

#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/plan/frontier.hpp"
#include "spotdnn/plan/plan_result.hpp"

namespace spotdnn::io {

/// The plan object: status, message, the design §7 prediction fields of the plan at top level, then
/// algorithm, objective, deadline, slack, reason and the explaining figures (null when absent).
[[nodiscard]] inline Json to_json(const PlanResult& r) {
  Json j;
  j["status"] = std::string(to_string(r.status));
  j["message"] = r.message;
  j["algorithm"] = std::string(to_string(r.algorithm));
  j["objective"] = std::string(to_string(r.objective));
  j["target_loss"] = r.target_loss;
  j["deadline_s"] = number_or_null(r.deadline_s);
  j["budget_usd"] = r.budget_usd ? Json(*r.budget_usd) : Json(nullptr);
  j["ps_charged"] = r.parameter_server_charged;
  j["reason"] = std::string(to_string(r.reason));
  j["cluster"] = to_json(r.cluster);
  if (r.has_plan()) {
    const Json p = to_json(r.prediction);
    for (const char* key : {"workers", "training_time_s", "cost_usd", "worker_cost_usd", "ps_cost_usd", "iterations",
                            "weighted_batch", "samples_per_s", "iterations_per_s", "samples_to_train",
                            "convergence_coefficient", "worker_bandwidth_bytes_per_s", "contention_probability",
                            "per_type"}) {
      j[key] = p.at(key);
    }
    j["deadline_slack_s"] = number_or_null(r.deadline_slack_s);
  } else {
    j["workers"] = 0;
    j["training_time_s"] = nullptr;
    j["cost_usd"] = nullptr;
  }
  j["loss_asymptote"] = number_or_null(r.loss_asymptote);
  j["fastest"] = r.fastest ? to_json(*r.fastest) : Json(nullptr);
  j["cheapest"] = r.cheapest ? to_json(*r.cheapest) : Json(nullptr);
  j["search"] = {{"clusters_evaluated", r.stats.clusters_evaluated},
                 {"nodes", r.stats.nodes},
                 {"worker_totals", r.stats.worker_totals}};
  return j;
}

/// "TYPE=N;TYPE=N" in catalog order (';' so it fits one CSV cell, like the throughput-trace format).
[[nodiscard]] inline std::string plan_label(const Prediction& p, char separator = ';') {
  std::string text;
  for (const WorkerTypeBreakdown& t : p.per_type) {
    if (!text.empty()) text += separator;
    text.append(t.type).append("=").append(std::to_string(t.count));
  }
  return text;
}

/// {status, message, target_loss, min/max_deadline_s, steps: [{from_deadline_s, to_deadline_s, plan}]}.
[[nodiscard]] inline Json to_json(const Frontier& f) {
  Json steps = Json::array();
  for (const FrontierStep& s : f.steps) {
    steps.push_back({{"from_deadline_s", s.from_deadline_s},
                     {"to_deadline_s", s.to_deadline_s},
                     {"cluster", to_json(s.plan.cluster)},
                     {"training_time_s", s.plan.training_time_s},
                     {"cost_usd", s.plan.cost_usd},
                     {"plan", to_json(s.plan)}});
  }
  return {{"status", std::string(to_string(f.status))},
          {"message", f.message},
          {"target_loss", f.target_loss},
          {"min_deadline_s", f.min_deadline_s},
          {"max_deadline_s", f.max_deadline_s},
          {"steps", steps}};
}

/// One row per step, by increasing deadline:
/// from_deadline_s,to_deadline_s,training_time_s,cost_usd,worker_cost_usd,ps_cost_usd,workers,cluster
[[nodiscard]] inline std::string frontier_csv(const Frontier& f) {
  std::ostringstream out;
  out.precision(17);
  out << "from_deadline_s,to_deadline_s,training_time_s,cost_usd,worker_cost_usd,ps_cost_usd,workers,cluster\n";
  for (const FrontierStep& s : f.steps) {
    out << s.from_deadline_s << ',' << s.to_deadline_s << ',' << s.plan.training_time_s << ',' << s.plan.cost_usd << ','
        << s.plan.worker_cost_usd << ',' << s.plan.ps_cost_usd << ',' << s.plan.workers << ',' << plan_label(s.plan) << '\n';
  }
  return out.str();
}

/// `text` as a gnuplot string expression that gnuplot takes as text, never as commands.
///
/// What gnuplot 5.4 documents and this relies on (`help substitution backquotes`, `help substitution
/// macros`, `help syntax quotes`): backquote command substitution happens "anywhere on the gnuplot
/// command line except inside strings delimited by single quotes" (double quotes do not stop it); `@`
/// macro expansion "does not occur inside either single or double quotes"; in a single-quoted string a
/// backslash is an ordinary character, and octal escapes like \345 are read "only for double-quoted
/// strings". So the text goes inside single quotes, cut at every ' and joined with the concatenation
/// operator (`help operators binary`: A.B), each quote written "\047": it's -> 'it'."\047".'s'.
/// Two documented alternatives are unsafe in gnuplot 5.4.4, as tests/plan_frontier_test.cpp shows:
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

/// A gnuplot script drawing `f` as an SVG on standard output (`set output` without a file name): cost
/// (USD) against deadline (s) as a staircase, one point per step labelled with its plan. The numbers
/// are inline data; the labels, which hold the catalog's type names, are `set label` commands with
/// gnuplot_string() text and `noenhanced`. The caller decides where the SVG goes.
[[nodiscard]] inline std::string frontier_gnuplot_script(const Frontier& f) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out.precision(10);
  out << "set terminal svg size 1000,640 dynamic enhanced font 'sans,11'\n";
  out << "set output\n";
  out << "set title " << gnuplot_string("Cheapest plan per deadline, target loss " + detail::format_number(f.target_loss))
      << " noenhanced\n";
  out << "set xlabel 'deadline (s)'\nset ylabel 'cost (USD)'\nset grid\nset key top right\n";
  int tag = 0;
  for (const FrontierStep& s : f.steps) {
    out << "set label " << ++tag << ' ' << gnuplot_string(plan_label(s.plan, ',')) << " at " << s.from_deadline_s << ','
        << s.plan.cost_usd << " noenhanced rotate by 30 left offset 0.5,0.5 font 'sans,8'\n";
  }
  out << "$frontier << EOD\n";
  for (const FrontierStep& s : f.steps) out << s.from_deadline_s << ' ' << s.plan.cost_usd << ' ' << s.to_deadline_s << '\n';
  out << "EOD\n";
  out << "plot $frontier using 1:2:($3-$1):(0) with vectors nohead lw 2 lc rgb '#1f77b4' title 'optimal cost (USD)', \\\n"
      << "     $frontier using 1:2 with points pt 7 ps 0.8 lc rgb '#1f77b4' notitle\n";
  return out.str();
}

}  // namespace spotdnn::io
