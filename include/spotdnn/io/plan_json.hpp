#pragma once
// SPDX-License-Identifier: MIT
/// @file io/plan_json.hpp JSON and CSV for plans and cost–deadline frontiers (docs/formats.md: the
/// prediction fields plus the plan's own).

#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/plan/detail/plan_problem.hpp"
#include "spotdnn/io/json.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/plan/frontier.hpp"
#include "spotdnn/plan/plan_result.hpp"

namespace spotdnn::io {

/// The plan object: status, message, the docs/formats.md prediction fields of the plan at top level, then
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
  // The vCPU quota groups that limit the problem, with what the reported cluster (the plan, else the
  // cheapest or the fastest) uses of each, and the group that binds an infeasible answer (null if none).
  Json groups = Json::array();
  for (const QuotaGroupUse& g : r.quota_groups) {
    groups.push_back({{"code", g.code},
                      {"name", g.name},
                      {"market", std::string(to_string(g.market))},
                      {"used_vcpus", g.used_vcpus},
                      {"limit_vcpus", g.limit_vcpus}});
  }
  j["quota_groups"] = groups;
  j["binding_quota_group"] = r.binding_quota_group.empty() ? Json(nullptr) : Json(r.binding_quota_group);
  // Status feasible from the exact planner: its search stopped at its step limit; the optimum's objective
  // (USD or s) is at least this.
  j["objective_lower_bound"] = r.objective_lower_bound ? Json(*r.objective_lower_bound) : Json(nullptr);
  j["search"] = {{"clusters_evaluated", r.stats.clusters_evaluated},
                 {"nodes", r.stats.nodes},
                 {"worker_totals", r.stats.worker_totals},
                 {"steps", r.stats.search_steps},
                 {"stopped", r.stats.stopped}};
  return j;
}

/// "TYPE=N;TYPE=N" in type-name order, the order of Cluster::to_string() and so of every cluster spotdnn
/// prints (';' so it fits one CSV cell, like the throughput-trace format).
[[nodiscard]] inline std::string plan_label(const Prediction& p, char separator = ';') {
  return p.cluster.to_string(separator);
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

}  // namespace spotdnn::io
