#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/launch_plan.hpp What the launcher launches: the content of a plan document
/// (`kind: "spotdnn.plan"`, the whole cluster) or of a replan document (`kind: "spotdnn.replan"`, only
/// the additions, joined to a run that is already going). The documents are read by
/// launcher/launch_plan_json.hpp; the launcher takes nothing else.

#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/availability_zone.hpp"
#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/document_kind.hpp"
#include "spotdnn/launcher/shell.hpp"

namespace spotdnn::launcher {

using io::kPlanDocumentKind;
using io::kPlanDocumentSchemaVersion;
using io::kReplanDocumentKind;

/// Workers of one instance type to launch.
struct WorkerGroup {
  std::string type;  ///< EC2 instance type, e.g. "p3.2xlarge"
  int count = 0;     ///< instances to launch, at least 1
  int gpus = 0;      ///< GPUs per instance, at least 1
  Market market = Market::spot;  ///< spot: one-time, terminated on interruption; on_demand: on-demand

  /// Same type, count, GPUs and market.
  friend bool operator==(const WorkerGroup& a, const WorkerGroup& b) {
    return a.type == b.type && a.count == b.count && a.gpus == b.gpus && a.market == b.market;
  }
  friend bool operator!=(const WorkerGroup& a, const WorkerGroup& b) { return !(a == b); }
};

/// What to launch, as a plan or replan document says it.
struct LaunchPlan {
  std::string kind = std::string(kPlanDocumentKind);  ///< kPlanDocumentKind or kReplanDocumentKind
  std::string region;                 ///< the region the plan was priced in (the catalog's)
  std::string workload_name;          ///< the workload the plan trains
  double target_loss = 0;             ///< the loss the plan trains to
  double deadline_s = 0;              ///< the plan's deadline (s from the start of training)
  std::vector<WorkerGroup> workers;   ///< plan: the whole cluster; replan: only the additions
  Cluster survivors;                  ///< replan: the workers that keep running (empty for a plan)
  std::string parameter_server_type;  ///< the PS instance type (always launched on-demand)
  /// The Availability Zone the plan was priced in: the run launches in the AWS configuration's
  /// subnet_ids[zone]. Empty: the catalog had no zone prices, and the run launches in subnet_id.
  std::string zone;

  /// True for a replan document: it launches only with `--join RUN_ID`.
  [[nodiscard]] bool is_join() const { return kind == kReplanDocumentKind; }

  /// Workers to launch in total.
  [[nodiscard]] long worker_count() const {
    long total = 0;
    for (const WorkerGroup& g : workers) total += g.count;
    return total;
  }

  /// Throws spotdnn::invalid_argument naming the first bad field: an unknown kind, a region or type
  /// not spelled as AWS spells them, no workers, a count or GPU number below 1, a type given twice.
  void validate() const {
    constexpr std::string_view fn = "LaunchPlan::validate";
    if (kind != kPlanDocumentKind && kind != kReplanDocumentKind) {
      spotdnn::detail::fail(fn, "kind", spotdnn::detail::quoted(kind), "expected spotdnn.plan or spotdnn.replan");
    }
    require_region(fn, "region", region);
    spotdnn::detail::require_printable_name(fn, "workload_name", workload_name);
    spotdnn::detail::require_positive(fn, "target_loss", target_loss);
    spotdnn::detail::require_positive(fn, "deadline_s", deadline_s);
    require_instance_type(fn, "parameter_server_type", parameter_server_type);
    if (!zone.empty()) require_zone_name(fn, "zone", zone);
    if (workers.empty()) {
      spotdnn::detail::fail(fn, is_join() ? "additions" : "cluster", "{}",
                            is_join() ? "the replan adds no instances: there is nothing to launch" : "the plan has no workers");
    }
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const WorkerGroup& g = workers[i];
      const std::string at = "workers[" + std::to_string(i) + "]";
      require_instance_type(fn, at + ".type", g.type);
      if (g.count < 1) spotdnn::detail::fail(fn, at + ".count", g.count, "must be at least 1");
      if (g.gpus < 1) spotdnn::detail::fail(fn, at + ".gpus", g.gpus, "must be at least 1");
      for (std::size_t j = 0; j < i; ++j) {
        if (workers[j].type == g.type) spotdnn::detail::fail(fn, at + ".type", spotdnn::detail::quoted(g.type), "appears twice");
      }
    }
    for (const auto& entry : survivors.counts()) require_instance_type(fn, "survivors type", entry.first);
  }

  /// Every field equal (workers in the same order); a plan read back from its own document equals it.
  friend bool operator==(const LaunchPlan& a, const LaunchPlan& b) {
    return a.kind == b.kind && a.region == b.region && a.workload_name == b.workload_name && a.target_loss == b.target_loss &&
           a.deadline_s == b.deadline_s && a.workers == b.workers && a.survivors == b.survivors &&
           a.parameter_server_type == b.parameter_server_type && a.zone == b.zone;
  }
  friend bool operator!=(const LaunchPlan& a, const LaunchPlan& b) { return !(a == b); }
};

}  // namespace spotdnn::launcher
