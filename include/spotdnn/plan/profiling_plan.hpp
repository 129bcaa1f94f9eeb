#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/profiling_plan.hpp `spotdnn profile plan`: which instance types and cluster sizes to measure, for
/// how long and at what price, so that `spotdnn workload build` can identify every figure of the workload at
/// the least cost within a budget.
///
/// What each figure needs (fit/workload_build.hpp):
/// - a type's compute time: one instance of it running the training example's `--profile` (no PS);
/// - the loss model's γ2 and γ3 (seed form): loss-trace runs at two or more weighted batches;
/// - α1, β1 and B_req (docs/model.md eqs. (1)–(2)): throughput at three or more cluster sizes at the per-GPU
///   batch that will be planned (the throughput fit holds the profiled compute time of that batch). α1 and
///   β1 show only where clusters contend (P(n) = α1·√n + β1 > 0, which for the published ResNet-110 figures
///   starts near n = 6): the sizes double from 1 up to the largest the quota, `max_workers` and the budget
///   allow, and a workload built from sizes that do not contend says it assumed no contention. A size beyond
///   the third is also a held-out check of the fit;
/// - with ProfilingPlanOptions::fit_ps_bandwidth (`workload build --fit-ps-bandwidth`), B_ps as well: a fourth
///   size (1, 2, 4 and 8), and a held-out check only beyond it.
///
/// The plan, cheapest first: (1) the identifying cluster runs on the cheapest type per instance-hour whose
/// quota allows them (sizes 1, 2, 4, and 8 with fit_ps_bandwidth) at the per-GPU batch, and one loss run of
/// one instance at half that batch (a second weighted batch for γ; its throughput rows are left out of the
/// throughput trace); (2) one profile run per type, by increasing price, while the budget lasts; (3) further
/// cluster sizes, doubling, while it lasts (up to ProfilingPlanOptions::cluster_sizes in all: the default 4
/// leaves no held-out size with fit_ps_bandwidth; give 5). Every run is priced as (instances × price + the
/// PS's price, for all but profile runs) × its minutes / 60. Types left out are named: their profiles can
/// only be estimated (`--estimate-profiles-from`). A budget below the identifying cluster runs, the loss run
/// and one profile has no plan: the status says the least budget that has one. vCPU quota groups are not
/// considered: check the clusters against them (`catalog show`).

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/format.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn {

struct ProfilingPlanOptions {
  double budget_usd = 0;             ///< at most this much in all
  double profile_minutes = 10;       ///< one profile run: boot, setup and `--profile` (the timing itself takes about a minute)
  double cluster_run_minutes = 15;   ///< one cluster run: boot, join and enough updates for a loss curve and steady rates
  int cluster_sizes = 4;             ///< how many cluster sizes at most (3 identify α1, β1, B_req, 4 with B_ps; more check the fit)
  bool fit_ps_bandwidth = false;     ///< the workload will be built with B_ps fitted too: one more size to identify it
  int max_workers = 16;              ///< the largest cluster size
  std::vector<std::string> types;    ///< the types to consider (empty: every catalog type)
};

/// One run of the profiling plan.
struct ProfilingRun {
  std::string kind;       ///< "profile" (one instance, ps_train.py --profile), "cluster" (a PS and workers at the
                          ///< per-GPU batch) or "loss" (a PS and one worker at half the batch, for γ only)
  Cluster cluster;        ///< the instances it rents (a profile run: one)
  double minutes = 0;
  double cost_usd = 0;
  std::string purpose;    ///< what it measures, for people
};

struct ProfilingPlan {
  Status status = Status::infeasible;   ///< feasible: `runs` identify the workload within the budget
  std::string message;
  std::vector<ProfilingRun> runs;
  double cost_usd = 0;
  std::vector<std::string> unprofiled_types;  ///< considered, but not profiled within the budget
  std::string cluster_type;                   ///< the type of the cluster runs
  double least_budget_usd = 0;                ///< the least budget with a plan (the identifying sizes, the loss run, one profile)

  [[nodiscard]] bool has_plan() const { return status == Status::feasible; }
};

namespace detail {

/// Cost of `instances` instances at `price_usd_per_hour` each (plus `extra_usd_per_hour`) for `minutes`.
inline double run_cost_usd(int instances, double price_usd_per_hour, double extra_usd_per_hour, double minutes) {
  return (instances * price_usd_per_hour + extra_usd_per_hour) * minutes / 60.0;
}

}  // namespace detail

/// The profiling plan for `catalog` (see the file comment). Throws spotdnn::invalid_argument for bad options
/// (a budget that is not a positive number of at most 10⁹ USD, minutes outside 1 to 1,440, fewer cluster
/// sizes than identify the fit (3, or 4 with fit_ps_bandwidth) or a max_workers below the largest of them,
/// a type the catalog lacks).
[[nodiscard]] inline ProfilingPlan plan_profiling(const Catalog& catalog, const ProfilingPlanOptions& options) {
  constexpr std::string_view fn = "plan_profiling";
  catalog.validate();
  detail::require_positive(fn, "options.budget_usd", options.budget_usd);
  if (options.budget_usd > 1e9) detail::fail(fn, "options.budget_usd", options.budget_usd, "must be at most 1e9 USD");
  for (const auto& [name, minutes] : {std::pair{"options.profile_minutes", options.profile_minutes},
                                      std::pair{"options.cluster_run_minutes", options.cluster_run_minutes}}) {
    if (!(minutes >= 1 && minutes <= 1440)) detail::fail(fn, name, minutes, "must be from 1 to 1440 minutes");
  }
  // The sizes that identify the throughput side: 1, 2 and 4 (α1, β1, B_req), and 8 for B_ps too.
  const int identifying = options.fit_ps_bandwidth ? 4 : 3;
  const int least_largest = 1 << (identifying - 1);
  const std::string identified = options.fit_ps_bandwidth ? "alpha1, beta1, B_req and B_ps" : "alpha1, beta1 and B_req";
  const std::string least_sizes = options.fit_ps_bandwidth ? "1, 2, 4 and 8" : "1, 2 and 4";
  if (options.cluster_sizes < identifying || options.cluster_sizes > 20) {
    detail::fail(fn, "options.cluster_sizes", options.cluster_sizes,
                 "must be from " + std::to_string(identifying) + " to 20 (" + std::to_string(identifying) + " identify " + identified + ")");
  }
  if (options.max_workers < least_largest || options.max_workers > 100000) {
    detail::fail(fn, "options.max_workers", options.max_workers,
                 "must be from " + std::to_string(least_largest) + " to 100000 (clusters of " + least_sizes + " are the least)");
  }
  std::vector<const InstanceType*> types;
  if (options.types.empty()) {
    for (const InstanceType& t : catalog.instance_types) types.push_back(&t);
  } else {
    for (const std::string& name : options.types) {
      const auto k = catalog.index_of(name);
      if (!k) detail::fail(fn, "options.types", detail::quoted(name), "not in the catalog (it has: " + catalog.type_names() + ")");
      if (std::find(types.begin(), types.end(), &catalog.instance_types[*k]) != types.end()) {
        detail::fail(fn, "options.types", detail::quoted(name), "given twice");
      }
      types.push_back(&catalog.instance_types[*k]);
    }
  }

  ProfilingPlan plan;
  // The cluster runs: every run scales with the instance price, so the cheapest instance whose quota allows
  // the largest identifying size identifies the throughput side at the least cost (ties: the first in the catalog).
  const InstanceType* cluster_type = nullptr;
  for (const InstanceType* t : types) {
    if (t->quota < least_largest) continue;
    if (cluster_type == nullptr || t->price_usd_per_hour < cluster_type->price_usd_per_hour) cluster_type = t;
  }
  if (cluster_type == nullptr) {
    plan.status = Status::infeasible;
    plan.message = "no type has a quota of " + std::to_string(least_largest) + " or more instances: " + identified +
                   " need clusters of at least " + std::to_string(identifying) + " sizes (" + least_sizes + " workers)";
    for (const InstanceType* t : types) plan.unprofiled_types.push_back(t->name);
    return plan;
  }
  plan.cluster_type = cluster_type->name;
  // A run of `n` instances of `type`, priced with the PS unless it is a profile run.
  auto make_run = [&](const char* kind, const InstanceType& type, int n, std::string purpose) {
    ProfilingRun run;
    run.kind = kind;
    run.cluster.set(type.name, n);
    const bool profile = run.kind == "profile";
    run.minutes = profile ? options.profile_minutes : options.cluster_run_minutes;
    run.cost_usd = detail::run_cost_usd(n, type.price_usd_per_hour, profile ? 0.0 : catalog.parameter_server.price_usd_per_hour, run.minutes);
    run.purpose = std::move(purpose);
    return run;
  };
  std::vector<ProfilingRun> cluster_runs;
  for (int n = 1; n <= std::min(cluster_type->quota, options.max_workers) && int(cluster_runs.size()) < options.cluster_sizes; n *= 2) {
    cluster_runs.push_back(make_run("cluster", *cluster_type, n,
                                    (int(cluster_runs.size()) < identifying ? "throughput (" + identified + " where contended)"
                                                                            : std::string("throughput where contended, a held-out check of the fit")) +
                                        " and the loss curve, at the per-GPU batch"));
  }
  const ProfilingRun loss_run = make_run(
      "loss", *cluster_type, 1, "the loss curve at half the per-GPU batch (a second weighted batch for gamma); leave its throughput rows out");
  // Profiles by increasing price, the cluster type first (its runs need its compute time).
  std::vector<const InstanceType*> by_price = types;
  std::stable_sort(by_price.begin(), by_price.end(), [&](const InstanceType* a, const InstanceType* b) {
    if ((a == cluster_type) != (b == cluster_type)) return a == cluster_type;
    return a->price_usd_per_hour < b->price_usd_per_hour;
  });
  auto profile_run = [&](const InstanceType* t) {
    return make_run("profile", *t, 1, "compute time per batch and precision, model bytes (ps_train.py --profile)");
  };
  // A quota and max_workers of least_largest or more give the identifying sizes.
  plan.least_budget_usd = loss_run.cost_usd + profile_run(cluster_type).cost_usd;
  for (int k = 0; k < identifying; ++k) plan.least_budget_usd += cluster_runs[std::size_t(k)].cost_usd;
  if (options.budget_usd < plan.least_budget_usd) {
    plan.status = Status::infeasible;
    plan.message = "the budget $" + detail::format_number(options.budget_usd) + " is below the least plan's cost: $" +
                   detail::format_number(plan.least_budget_usd) + " (clusters of " + least_sizes + " " + cluster_type->name +
                   ", one loss run and its profile; shorter runs with --profile-minutes and --run-minutes cost less)";
    for (const InstanceType* t : types) plan.unprofiled_types.push_back(t->name);
    return plan;
  }
  double left = options.budget_usd;
  for (int k = 0; k < identifying; ++k) {
    plan.runs.push_back(cluster_runs[std::size_t(k)]);
    left -= cluster_runs[std::size_t(k)].cost_usd;
  }
  plan.runs.push_back(loss_run);
  left -= loss_run.cost_usd;
  for (const InstanceType* t : by_price) {
    const ProfilingRun run = profile_run(t);
    if (run.cost_usd <= left) {
      plan.runs.push_back(run);
      left -= run.cost_usd;
    } else {
      plan.unprofiled_types.push_back(t->name);
    }
  }
  for (std::size_t k = std::size_t(identifying); k < cluster_runs.size() && cluster_runs[k].cost_usd <= left; ++k) {
    plan.runs.push_back(cluster_runs[k]);
    left -= cluster_runs[k].cost_usd;
  }
  for (const ProfilingRun& run : plan.runs) plan.cost_usd += run.cost_usd;
  plan.status = Status::feasible;
  const int sizes = int(std::count_if(plan.runs.begin(), plan.runs.end(), [](const ProfilingRun& r) { return r.kind == "cluster"; }));
  int largest = 0;
  for (const ProfilingRun& run : plan.runs) {
    if (run.kind == "cluster") largest = std::max(largest, run.cluster.total_workers());
  }
  plan.message = std::to_string(plan.runs.size() - std::size_t(sizes) - 1) + " of " + std::to_string(types.size()) + " types profiled, " +
                 std::to_string(sizes) + " cluster sizes of " + cluster_type->name + " (1 to " + std::to_string(largest) + " workers)" +
                 (sizes > identifying ? "" : ": no held-out size to check the fit") +
                 (largest < 8 ? std::string("; contention shows only in contended clusters: with at most ") + std::to_string(largest) +
                                    " workers the workload may have to assume none"
                              : std::string()) +
                 (plan.unprofiled_types.empty() ? "" : "; not profiled within the budget (their profiles can only be estimated): ");
  for (std::size_t i = 0; i < plan.unprofiled_types.size(); ++i) plan.message += (i == 0 ? "" : ", ") + plan.unprofiled_types[i];
  return plan;
}

}  // namespace spotdnn
