#pragma once
// SPDX-License-Identifier: MIT
/// @file plan/detail/plan_problem.hpp Internal: a planning problem resolved against the model, the
/// deterministic tie-breaking every planner shares, and the assembly of a PlanResult with its diagnosis.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/limits.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn::detail {

/// Two plans whose objective values differ by at most this relative amount are tied, and the next key
/// decides. Floating point demands it: the same cost reached through sums in another order (e.g. two
/// identical types swapped) differs in the last bits. 1e-12 is ~4500 ulps, far below any real price step.
inline constexpr double kPlanTieRelative = 1e-12;

/// A vCPU quota group that limits a problem: Σ vcpus_k·n_k <= limit_vcpus over the worker types it counts.
struct PlanQuotaGroup {
  std::string code;
  std::string name;
  Market market = Market::spot;
  int limit_vcpus = 0;     ///< what the workers may use: the group's value less `reserved_vcpus`
  int reserved_vcpus = 0;  ///< the parameter server's vCPUs when the group also counts it, else 0
};

/// A problem every planner solves: the model with the chosen market prices, per-type count ranges,
/// the worker-count range, the SLO and the budget.
class PlanProblem {
 public:
  /// `minimum_field` names options.minimum_counts in messages (replan calls them the survivors).
  PlanProblem(const PerformanceModel& model, const Slo& slo, const PlanOptions& options, std::string_view fn,
              std::string_view minimum_field = "options.minimum_counts")
      : base_(&model) {
    slo.validate(fn);
    target_loss = slo.target_loss;
    deadline_s = slo.deadline_s;
    budget_usd = options.budget_usd;
    if (budget_usd) require_positive(fn, "options.budget_usd", *budget_usd);
    if (!budget_usd && !std::isfinite(deadline_s)) {
      fail(fn, "slo.deadline_s", deadline_s, "give a finite deadline (or a budget, to minimize the time instead)");
    }
    if (options.max_workers && *options.max_workers < 1) {
      fail(fn, "options.max_workers", *options.max_workers, "must be at least 1");
    }
    if (options.max_search_steps < 1 || options.max_search_steps > kMaxPlanSearchSteps) {
      fail(fn, "options.max_search_steps", std::to_string(options.max_search_steps),
           "must be between 1 and " + std::to_string(kMaxPlanSearchSteps));
    }
    max_search_steps = options.max_search_steps;
    predict.charge_parameter_server = options.charge_parameter_server;

    if (!options.markets.empty()) {
      Catalog catalog = model.catalog();
      for (const auto& [name, market] : options.markets) {
        const auto k = catalog.index_of(name);
        if (!k) fail(fn, "options.markets", detail::quoted(name), "unknown instance type (the catalog has: " + catalog.type_names() + ")");
        InstanceType& type = catalog.instance_types[*k];
        if (type.market == market) continue;
        if (market == Market::on_demand && !(type.on_demand_price_usd_per_hour > 0)) {
          fail(fn, "options.markets[\"" + name + "\"]", "on-demand",
               "the catalog gives no on-demand price for this type (on_demand_price_usd_per_hour is 0)");
        }
        if (market == Market::spot) {
          fail(fn, "options.markets[\"" + name + "\"]", "spot",
               "the catalog quotes this type on-demand only and gives no spot price");
        }
        type.price_usd_per_hour = type.on_demand_price_usd_per_hour;
        type.market = Market::on_demand;
      }
      rebound_ = std::make_shared<const PerformanceModel>(model.workload(), std::move(catalog));
    }

    const auto& types = this->model().worker_types();
    const std::size_t count = types.size();
    min_count.assign(count, 0);
    max_count.resize(count);
    for (std::size_t k = 0; k < count; ++k) max_count[k] = types[k].quota;
    std::int64_t minimum_total = 0;  // 64 bits: quotas are only bounded by Catalog::validate
    for (const auto& [name, minimum] : options.minimum_counts) {
      const auto k = this->model().worker_type_index(name);
      if (!k) {
        const bool known = this->model().catalog().index_of(name).has_value();
        fail(fn, "options.minimum_counts", detail::quoted(name),
             known ? "the workload has no profile for this instance type"
                   : "unknown instance type (the catalog has: " + this->model().catalog().type_names() + ")");
      }
      if (minimum < 0 || minimum > types[*k].quota) {
        fail(fn, "options.minimum_counts[\"" + name + "\"]", minimum,
             "must be between 0 and the type's quota (" + std::to_string(types[*k].quota) + ")");
      }
      min_count[*k] = minimum;
      minimum_total += minimum;
    }
    if (minimum_total > kMaxClusterWorkers) {
      fail(fn, "options.minimum_counts", double(minimum_total),
           "more existing instances in total than the " + std::to_string(kMaxClusterWorkers) +
               " workers a cluster may have (limits.hpp)");
    }
    if (options.max_workers && *options.max_workers < minimum_total) {
      fail(fn, "options.max_workers", *options.max_workers,
           "is below the " + std::to_string(minimum_total) + " existing instances that must stay (options.minimum_counts)");
    }
    std::int64_t quota_total = 0;
    for (std::size_t k = 0; k < count; ++k) quota_total += max_count[k];
    // The totals searched: within the quotas, the worker cap and limits.hpp's largest cluster.
    std::int64_t most = std::min(quota_total, kMaxClusterWorkers);
    if (options.max_workers) most = std::min<std::int64_t>(most, *options.max_workers);
    min_workers = static_cast<int>(std::max<std::int64_t>(1, minimum_total));
    box_max_count_ = max_count;
    box_max_workers_ = static_cast<int>(most);
    ps_price_usd_per_hour = predict.charge_parameter_server ? this->model().catalog().parameter_server.price_usd_per_hour : 0.0;

    if (this->model().catalog().instance_types.empty()) {
      no_instances = "the catalog lists no instance types";
    } else if (count == 0) {
      no_instances = "the workload profiles none of the catalog's instance types (" + this->model().catalog().type_names() + ")";
    } else if (quota_total == 0) {
      no_instances = "every instance type has a quota of zero";
    }
    collect_quota_groups();
    for (std::size_t g = 0; g < quota_groups.size() && !parameter_server_outside_quota_; ++g) {
      const std::int64_t used = minimum_vcpus(g);
      if (used > quota_groups[g].limit_vcpus) {
        const int reserved = quota_groups[g].reserved_vcpus;
        fail(fn, std::string(minimum_field), counts_to_text(min_count),
             "these instances use " + std::to_string(used) + " vCPUs of quota group " + describe_quota_group(g) +
                 ", above its limit of " + std::to_string(quota_groups[g].limit_vcpus + reserved) + " vCPUs" +
                 (reserved > 0 ? " less the parameter server's " + std::to_string(reserved) : std::string()));
      }
    }
    apply_quota_groups();
  }

  PlanProblem& operator=(const PlanProblem&) = delete;

  /// The same problem without quota group `g`'s constraint (g < quota_groups.size()): the diagnosis asks
  /// whether that group is what makes the problem infeasible.
  [[nodiscard]] PlanProblem without_quota_group(std::size_t g) const { return PlanProblem(*this, static_cast<int>(g)); }
  /// The same problem without any quota group.
  [[nodiscard]] PlanProblem without_quota_groups() const { return PlanProblem(*this, -1); }

  /// The counts (one per worker type) keep every quota group within its limit (true without groups).
  [[nodiscard]] bool within_quota_groups(const int* counts) const {
    if (quota_groups.empty()) return true;
    for (std::size_t g = 0; g < quota_groups.size(); ++g) {
      if (group_vcpus(g, counts) > quota_groups[g].limit_vcpus) return false;
    }
    return true;
  }

  /// vCPUs of group g the counts (one per worker type) use.
  [[nodiscard]] std::int64_t group_vcpus(std::size_t g, const int* counts) const {
    std::int64_t used = 0;
    for (std::size_t k : quota_group_members[g]) used += std::int64_t(counts[k]) * vcpus[k];
    return used;
  }

  /// Every quota group of the problem with what `counts` (one per worker type) use of it.
  [[nodiscard]] std::vector<QuotaGroupUse> quota_group_use(const std::vector<int>& counts) const {
    std::vector<QuotaGroupUse> uses;
    for (std::size_t g = 0; g < quota_groups.size(); ++g) {
      const PlanQuotaGroup& group = quota_groups[g];
      uses.push_back(QuotaGroupUse{group.code, group.name, group.market, group_vcpus(g, counts.data()) + group.reserved_vcpus,
                                   group.limit_vcpus + group.reserved_vcpus});
    }
    return uses;
  }

  /// "L-7212CCBC (All P4, P3 and P2 Spot Instance Requests)".
  [[nodiscard]] std::string describe_quota_group(std::size_t g) const {
    const PlanQuotaGroup& group = quota_groups[g];
    return group.name.empty() ? group.code : group.code + " (" + group.name + ")";
  }

  [[nodiscard]] const PerformanceModel& model() const { return rebound_ ? *rebound_ : *base_; }
  [[nodiscard]] std::size_t types() const { return min_count.size(); }
  [[nodiscard]] PlanObjective objective() const { return budget_usd ? PlanObjective::min_time : PlanObjective::min_cost; }
  [[nodiscard]] double budget_or_infinity() const {
    return budget_usd ? *budget_usd : std::numeric_limits<double>::infinity();
  }

  std::vector<int> min_count;  ///< per worker type: existing instances that must stay
  std::vector<int> max_count;  ///< per worker type: quota, capped by max_workers (never below min_count)
  int min_workers = 1;  ///< max(1, Σ min_count)
  int max_workers = 0;  ///< min(Σ quota, options.max_workers, kMaxClusterWorkers); < min_workers: no cluster
  double target_loss = 0;
  double deadline_s = std::numeric_limits<double>::infinity();
  std::optional<double> budget_usd;
  std::int64_t max_search_steps = kDefaultPlanSearchSteps;  ///< PlanOptions::max_search_steps
  PredictOptions predict;
  double ps_price_usd_per_hour = 0;  ///< 0 when the PS is not charged
  std::string no_instances;          ///< why no cluster exists at all; empty when some does
  /// The vCPU quota groups that limit the problem (docs/model.md, "vCPU quota groups"): those with a known
  /// value in the catalog that count at least one worker type in the market the problem prices it in.
  /// Empty: only the per-type quotas limit a cluster (and every planner behaves as without groups).
  std::vector<PlanQuotaGroup> quota_groups;
  std::vector<int> quota_group_of;  ///< per worker type: its index in quota_groups, or -1
  std::vector<std::vector<std::size_t>> quota_group_members;  ///< per group: the worker types it counts
  std::vector<int> vcpus;           ///< per worker type: vCPUs of one instance (0 when unknown)
  /// The parameter server's on-demand quota group (Catalog::parameter_server.quota_group) when it has a
  /// known value and the PS's vCPUs are known, else empty; `parameter_server_vcpus` its vCPUs then.
  std::string parameter_server_quota_group;
  int parameter_server_vcpus = 0;
  /// no_instances because of a quota group: its code (the diagnosis names it as binding).
  std::string no_instances_quota_group;

 private:
  /// A copy without group `drop` (-1: without every group), its caps recomputed from the box.
  PlanProblem(const PlanProblem& other, int drop)
      : min_count(other.min_count),
        max_count(other.box_max_count_),
        min_workers(other.min_workers),
        max_workers(other.box_max_workers_),
        target_loss(other.target_loss),
        deadline_s(other.deadline_s),
        budget_usd(other.budget_usd),
        max_search_steps(other.max_search_steps),
        predict(other.predict),
        ps_price_usd_per_hour(other.ps_price_usd_per_hour),
        no_instances(other.no_instances_quota_group.empty() ? other.no_instances : std::string()),
        vcpus(other.vcpus),
        parameter_server_quota_group(other.parameter_server_quota_group),
        parameter_server_vcpus(other.parameter_server_vcpus),
        base_(other.base_),
        rebound_(other.rebound_),
        box_max_count_(other.box_max_count_),
        box_max_workers_(other.box_max_workers_) {
    quota_group_of.assign(other.quota_group_of.size(), -1);
    for (std::size_t g = 0; g < other.quota_groups.size(); ++g) {
      if (drop < 0 || static_cast<int>(g) == drop) continue;
      const int index = static_cast<int>(quota_groups.size());
      quota_groups.push_back(other.quota_groups[g]);
      for (std::size_t k = 0; k < quota_group_of.size(); ++k) {
        if (other.quota_group_of[k] == static_cast<int>(g)) quota_group_of[k] = index;
      }
    }
    apply_quota_groups();
  }

  /// The groups of the catalog with a known value that count some worker type in its (chosen) market.
  void collect_quota_groups() {
    const Catalog& catalog = model().catalog();
    const auto& types = model().worker_types();
    quota_group_of.assign(types.size(), -1);
    vcpus.assign(types.size(), 0);
    for (std::size_t k = 0; k < types.size(); ++k) {
      const InstanceType& type = catalog.at(types[k].name);
      vcpus[k] = type.vcpus;
      const QuotaGroup* group = catalog.quota_group(type.quota_group_code(type.market));
      if (group == nullptr) continue;  // no group, or its value is unknown: not limited by it
      int index = -1;
      for (std::size_t g = 0; g < quota_groups.size(); ++g) {
        if (quota_groups[g].code == group->code) index = static_cast<int>(g);
      }
      if (index < 0) {
        index = static_cast<int>(quota_groups.size());
        quota_groups.push_back(PlanQuotaGroup{group->code, group->name, group->market, group->vcpus});
      }
      quota_group_of[k] = index;
    }
    quota_group_members.assign(quota_groups.size(), {});
    for (std::size_t k = 0; k < types.size(); ++k) {
      if (quota_group_of[k] >= 0) quota_group_members[std::size_t(quota_group_of[k])].push_back(k);
    }
    collect_parameter_server_group();
  }

  /// The parameter server runs on demand beside the workers and counts in its on-demand quota group
  /// (ParameterServer::quota_group): its vCPUs come off that group's limit before the workers are sized
  /// (when the group also counts worker types, bought on demand), and a group that cannot hold the PS
  /// itself leaves no cluster. The PS is counted whether or not the plan charges its price.
  void collect_parameter_server_group() {
    const Catalog& catalog = model().catalog();
    const ParameterServer& ps = catalog.parameter_server;
    if (ps.quota_group.empty() || ps.vcpus <= 0) return;
    const QuotaGroup* group = catalog.quota_group(ps.quota_group);
    if (group == nullptr) return;  // Catalog::validate refuses it; a hand-built catalog is not limited by it
    parameter_server_quota_group = group->code;
    parameter_server_vcpus = ps.vcpus;
    if (group->vcpus < ps.vcpus) {
      parameter_server_outside_quota_ = true;
      if (!no_instances.empty()) return;  // a more basic reason already leaves no cluster
      no_instances_quota_group = group->code;
      no_instances = "the parameter server (" + ps.type + ", " + std::to_string(ps.vcpus) + " vCPUs, on demand) does not fit in its quota group " +
                     (group->name.empty() ? group->code : group->code + " (" + group->name + ")") + ", which allows " +
                     std::to_string(group->vcpus) + " vCPUs: raise that quota or pick another parameter-server type";
    }
    for (PlanQuotaGroup& g : quota_groups) {
      if (g.code != group->code) continue;
      g.reserved_vcpus = std::min(ps.vcpus, g.limit_vcpus);
      g.limit_vcpus -= g.reserved_vcpus;
    }
  }

  /// vCPUs of group g that the minimum counts use.
  [[nodiscard]] std::int64_t minimum_vcpus(std::size_t g) const { return group_vcpus(g, min_count.data()); }

  /// The caps and the largest total implied by the groups: a type of group g can take at most
  /// floor((Q_g − the group's minimum use)/vcpus_k) more than its minimum, and the largest total within
  /// the groups is, per group, the greedy fill of its spare vCPUs by the types with the fewest vCPUs
  /// (optimal for a count with unit values; groups share no type, so they add up).
  void apply_quota_groups() {
    const std::size_t count = min_count.size();
    quota_group_members.assign(quota_groups.size(), {});
    for (std::size_t k = 0; k < count; ++k) {
      if (quota_group_of[k] >= 0) quota_group_members[std::size_t(quota_group_of[k])].push_back(k);
    }
    max_count = box_max_count_;
    std::int64_t most = box_max_workers_;
    if (!quota_groups.empty()) {
      std::int64_t total = 0;
      for (std::size_t k = 0; k < count; ++k) {
        if (quota_group_of[k] < 0) total += max_count[k];
      }
      for (std::size_t g = 0; g < quota_groups.size(); ++g) {
        const std::int64_t spare = quota_groups[g].limit_vcpus - minimum_vcpus(g);
        std::vector<std::size_t> members;
        for (std::size_t k = 0; k < count; ++k) {
          if (quota_group_of[k] != static_cast<int>(g)) continue;
          members.push_back(k);
          const std::int64_t room = vcpus[k] > 0 ? spare / vcpus[k] : std::int64_t(max_count[k]);
          max_count[k] = static_cast<int>(std::min<std::int64_t>(max_count[k], min_count[k] + std::max<std::int64_t>(0, room)));
          max_count[k] = std::max(max_count[k], min_count[k]);
        }
        std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) { return vcpus[a] < vcpus[b]; });
        std::int64_t left = std::max<std::int64_t>(0, spare);
        for (std::size_t k : members) {
          const std::int64_t extra = max_count[k] - min_count[k];
          const std::int64_t take = vcpus[k] > 0 ? std::min(extra, left / vcpus[k]) : extra;
          total += min_count[k] + take;
          left -= take * vcpus[k];
        }
      }
      most = std::min(most, total);
      if (no_instances.empty() && total == 0) {
        for (std::size_t g = 0; g < quota_groups.size() && no_instances_quota_group.empty(); ++g) {
          int smallest = 0;
          for (std::size_t k = 0; k < count; ++k) {
            if (quota_group_of[k] == static_cast<int>(g) && box_max_count_[k] > 0 && (smallest == 0 || vcpus[k] < smallest)) {
              smallest = vcpus[k];
            }
          }
          if (smallest == 0) continue;
          no_instances_quota_group = quota_groups[g].code;
          no_instances = "quota group " + describe_quota_group(g) + " allows " + std::to_string(quota_groups[g].limit_vcpus) +
                         " vCPUs" +
                         (quota_groups[g].reserved_vcpus > 0
                              ? " beside the parameter server's " + std::to_string(quota_groups[g].reserved_vcpus)
                              : std::string()) +
                         ", fewer than one instance of the types it counts needs (" + std::to_string(smallest) +
                         "), and no other type has a quota";
        }
      }
    }
    max_workers = static_cast<int>(most);
    for (std::size_t k = 0; k < count; ++k) max_count[k] = std::min(max_count[k], std::max(max_workers, min_count[k]));
  }

  /// "t0=2,t1=1": the nonzero counts, for messages.
  [[nodiscard]] std::string counts_to_text(const std::vector<int>& counts) const {
    std::string text;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (counts[k] == 0) continue;
      if (!text.empty()) text += ',';
      text.append(model().worker_types()[k].name).append("=").append(std::to_string(counts[k]));
    }
    return text.empty() ? "(none)" : text;
  }

  const PerformanceModel* base_;
  std::shared_ptr<const PerformanceModel> rebound_;
  bool parameter_server_outside_quota_ = false;  ///< the PS alone exceeds its quota group (no_instances says so)
  std::vector<int> box_max_count_;  ///< the caps before the quota groups tighten them
  int box_max_workers_ = 0;         ///< the largest total before the quota groups
};

/// One feasible cluster a search offers.
struct PlanCandidate {
  std::vector<int> counts;  ///< per worker type
  int workers = 0;
  double cost_usd = 0;
  double training_time_s = 0;
};

/// The deterministic choice among feasible plans, independent of the order they are offered in.
///
/// The order: (1) the objective (cost; time in budget mode), (2) the other one (time; cost),
/// (3) fewer workers, (4) type order: the count vector in catalog order compared lexicographically,
/// the larger first (so a plan using more of an earlier-listed type wins).
/// Keys (1) and (2) are compared with the relative tolerance kPlanTieRelative, as a two-phase rule
/// that stays well defined despite the tolerance: with O* the smallest objective value of all feasible
/// plans, the tied set is every plan with objective <= O*·(1 + tol); within it, with S* its smallest
/// second key, the plans with second key <= S*·(1 + tol) are kept, and (3) then (4) pick one.
/// offer() keeps only plans that can still win, so the result does not depend on the visiting order.
class PlanIncumbents {
 public:
  explicit PlanIncumbents(PlanObjective objective) : objective_(objective) {}

  /// Plans whose objective exceeds this can never be chosen (+inf before the first offer).
  [[nodiscard]] double objective_threshold() const { return best_ * (1.0 + kPlanTieRelative); }

  [[nodiscard]] bool empty() const { return kept_.empty(); }

  /// A plan whose objective and second key are both exactly zero can only be beaten by fewer workers.
  [[nodiscard]] std::optional<int> unbeatable_above_workers() const {
    for (const PlanCandidate& c : kept_) {
      if (first(c) == 0 && second(c) == 0) return c.workers;
    }
    return std::nullopt;
  }

  /// Offers a feasible cluster (`counts` has one entry per worker type).
  void offer(const int* counts, std::size_t types, const Estimate& e) {
    PlanCandidate c;
    c.workers = e.workers;
    c.cost_usd = e.cost_usd;
    c.training_time_s = e.training_time_s;
    const double value = first(c);
    if (value > objective_threshold()) return;
    if (value < best_) {
      best_ = value;
      const double threshold = objective_threshold();
      kept_.erase(std::remove_if(kept_.begin(), kept_.end(), [&](const PlanCandidate& k) { return first(k) > threshold; }),
                  kept_.end());
    }
    c.counts.assign(counts, counts + types);
    for (const PlanCandidate& k : kept_) {
      if (removes(k, c) || k.counts == c.counts) return;  // (the same cluster again: the searches may offer it twice)
    }
    kept_.erase(std::remove_if(kept_.begin(), kept_.end(), [&](const PlanCandidate& k) { return removes(c, k); }),
                kept_.end());
    kept_.push_back(std::move(c));
  }

  /// The chosen plan, if any was offered.
  [[nodiscard]] std::optional<PlanCandidate> best() const {
    if (kept_.empty()) return std::nullopt;
    double s_min = std::numeric_limits<double>::infinity();
    for (const PlanCandidate& c : kept_) s_min = std::min(s_min, second(c));
    const PlanCandidate* chosen = nullptr;
    for (const PlanCandidate& c : kept_) {
      if (second(c) > s_min * (1.0 + kPlanTieRelative)) continue;
      if (chosen == nullptr || wins_on_size_and_order(c, *chosen)) chosen = &c;
    }
    return *chosen;
  }

 private:
  [[nodiscard]] double first(const PlanCandidate& c) const {
    return objective_ == PlanObjective::min_cost ? c.cost_usd : c.training_time_s;
  }
  [[nodiscard]] double second(const PlanCandidate& c) const {
    return objective_ == PlanObjective::min_cost ? c.training_time_s : c.cost_usd;
  }
  /// Keys (3) and (4): fewer workers, then the lexicographically larger count vector.
  static bool wins_on_size_and_order(const PlanCandidate& a, const PlanCandidate& b) {
    if (a.workers != b.workers) return a.workers < b.workers;
    return std::lexicographical_compare(b.counts.begin(), b.counts.end(), a.counts.begin(), a.counts.end());
  }
  /// `y` makes `x` unable to win, whatever else is offered later.
  [[nodiscard]] bool removes(const PlanCandidate& y, const PlanCandidate& x) const {
    if (first(y) > first(x)) return false;
    if (second(x) > second(y) * (1.0 + kPlanTieRelative)) return true;
    return second(y) <= second(x) && wins_on_size_and_order(y, x);
  }

  PlanObjective objective_;
  double best_ = std::numeric_limits<double>::infinity();
  std::vector<PlanCandidate> kept_;
};

/// Evaluates one cluster and offers it when it meets the deadline and the budget and reaches the target.
inline void offer_if_feasible(const PlanProblem& problem, const int* counts, double deadline_s, double budget_usd,
                              PlanIncumbents& incumbents, PlanSearchStats& stats) {
  if (!problem.within_quota_groups(counts)) return;
  ++stats.clusters_evaluated;
  const Estimate e = problem.model().estimate(counts, problem.target_loss, problem.predict);
  if (!e.reaches_target()) return;
  if (!(e.training_time_s <= deadline_s) || !(e.cost_usd <= budget_usd)) return;
  incumbents.offer(counts, problem.types(), e);
}

/// "p3.2xlarge=2,g3.8xlarge=4": the counts in catalog order.
inline Cluster cluster_of(const PerformanceModel& model, const std::vector<int>& counts);

/// "TYPE=N,TYPE=N" in type-name order (Cluster::to_string, the one order every cluster is printed in);
/// "(none)" for no worker.
inline std::string counts_to_string(const PerformanceModel& model, const std::vector<int>& counts) {
  const std::string text = cluster_of(model, counts).to_string();
  return text.empty() ? "(none)" : text;
}

inline Cluster cluster_of(const PerformanceModel& model, const std::vector<int>& counts) {
  Cluster cluster;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] > 0) cluster.set(model.worker_types()[k].name, counts[k]);
  }
  return cluster;
}

/// The answer when `counts` (a cluster of the problem) meets the target at start: status
/// target_met_at_start, no plan, a message naming the cluster and the model's loss at iteration 0, and
/// the cluster's prediction (0 s: the fastest there is) in `fastest`.
inline void set_met_at_start(const PlanProblem& problem, const std::vector<int>& counts, PlanResult& r) {
  const PerformanceModel& model = problem.model();
  const Estimate e = model.estimate(counts.data(), problem.target_loss, problem.predict);
  r.status = Status::target_met_at_start;
  r.reason = InfeasibleReason::none;
  r.fastest = predict(model, cluster_of(model, counts), problem.target_loss, problem.predict);
  r.message = "the target loss " + format_number(problem.target_loss) +
              " is met before training starts: the loss model gives " +
              format_readable(loss_at_start(model.workload().loss_model, e)) + " at iteration 0 for " +
              counts_to_string(model, counts) + ", a cluster within the quotas; nothing to train";
}

/// Runs `solve` for the problem and turns its answer into a PlanResult; when there is none, runs the
/// diagnosis searches with `diagnose` (an exact method) to report why, with the figure that explains it.
///
/// Target met at start. When ANY cluster the problem allows (quotas, minimum counts, worker cap,
/// markets) meets the target at iteration 0 by the loss model (TargetOutcome::met_at_start), there is no
/// training to plan: the result has status target_met_at_start and names one such cluster, whatever
/// the deadline or budget ("any cluster" is the rule, not only "the cheapest": such a cluster takes 0 s
/// and costs $0, so it would be every objective's optimum). An exact `solve` (exact, brute force) needs
/// no extra work: such a cluster is then its optimum, chosen by the shared tie-breaking (fewest workers,
/// then type order), so both name the same cluster. A heuristic `solve` may miss such clusters, so
/// `met_at_start` (an exact check: PlanSearchStats& -> std::optional<PlanCandidate>) runs first.
template <typename Solve, typename Diagnose, typename MetAtStart>
PlanResult assemble_plan_without_quota_groups(const PlanProblem& problem, PlanAlgorithm algorithm, Solve&& solve,
                                              Diagnose&& diagnose, MetAtStart&& met_at_start) {
  const PerformanceModel& model = problem.model();
  PlanResult r;
  r.algorithm = algorithm;
  r.objective = problem.objective();
  r.target_loss = problem.target_loss;
  r.deadline_s = problem.deadline_s;
  r.budget_usd = problem.budget_usd;
  r.parameter_server_charged = problem.predict.charge_parameter_server;
  r.status = Status::infeasible;
  const std::string loss = format_number(problem.target_loss);

  if (!problem.no_instances.empty()) {
    r.reason = InfeasibleReason::no_instances;
    r.message = "no cluster can be formed: " + problem.no_instances;
    return r;
  }
  const double asymptote = model.workload().loss_model.asymptote();
  if (!(problem.target_loss > asymptote)) {
    r.reason = InfeasibleReason::below_asymptote;
    r.loss_asymptote = asymptote;
    r.message = "target loss " + loss + " is at or below the loss model's asymptote " + format_number(asymptote) +
                ": no cluster reaches it";
    return r;
  }
  auto to_prediction = [&](const PlanCandidate& c) {
    return predict(model, cluster_of(model, c.counts), problem.target_loss, problem.predict);
  };

  // A search that stopped at its step limit (PlanOptions::max_search_steps) proves nothing: without a
  // plan the answer is undecided, never a diagnosis drawn from an unfinished search.
  const std::string limit = "the exact planner stopped at its step limit of " + std::to_string(problem.max_search_steps) +
                            " steps (`spotdnn plan --search-steps`, PlanOptions::max_search_steps)";
  auto undecided = [&](const std::string& what) {
    r.status = Status::undecided;
    r.reason = InfeasibleReason::none;
    r.message = what + ": " + limit;
    return r;
  };
  const std::optional<PlanCandidate> at_start = met_at_start(r.stats);
  if (r.stats.stopped) return undecided("no plan found before the search stopped, and whether one exists is not known");
  if (at_start) {
    set_met_at_start(problem, at_start->counts, r);
    return r;
  }
  const std::optional<PlanCandidate> found =
      solve(problem.objective(), problem.deadline_s, problem.budget_or_infinity(), r.stats);
  if (r.stats.stopped && !found) return undecided("no plan found before the search stopped, and whether one exists is not known");
  if (found && model.estimate(found->counts.data(), problem.target_loss, problem.predict).outcome ==
                   TargetOutcome::met_at_start) {
    set_met_at_start(problem, found->counts, r);
    return r;
  }
  if (found) {
    r.status = algorithm == PlanAlgorithm::sliding_window ? Status::feasible : Status::optimal;
    r.counts = found->counts;
    r.cluster = cluster_of(model, found->counts);
    r.prediction = to_prediction(*found);
    r.deadline_slack_s = problem.deadline_s - r.prediction.training_time_s;
    const std::string plan = counts_to_string(model, found->counts);
    const std::string what = algorithm == PlanAlgorithm::sliding_window ? "best window"
                             : r.objective == PlanObjective::min_cost ? "cheapest plan"
                                                                      : "fastest plan";
    r.message = what + ": " + plan + " reaches loss " + loss + " in " + format_fixed(r.prediction.training_time_s, 1) + " s";
    if (std::isfinite(problem.deadline_s)) {
      r.message += " (" + format_fixed(r.deadline_slack_s, 1) + " s under the " + format_number(problem.deadline_s) + " s deadline)";
    }
    r.message += " for $" + format_fixed(r.prediction.cost_usd, 2);
    if (problem.budget_usd) r.message += " (budget $" + format_fixed(*problem.budget_usd, 2) + ")";
    if (r.stats.stopped) {
      // The best plan found, with the bound every cluster the search had not ruled out obeys.
      const bool cost = r.objective == PlanObjective::min_cost;
      const double value = cost ? found->cost_usd : found->training_time_s;
      const double bound = std::min(value, std::max(0.0, r.stats.stopped_lower_bound));
      r.status = Status::feasible;
      r.objective_lower_bound = bound;
      // Rounded the safe way: the bound down, the gap up.
      const double shown = cost ? std::floor(bound * 1e4) / 1e4 : std::floor(bound * 10) / 10;
      r.message = "best plan found" + r.message.substr(what.size()) + "; " + limit + ": the optimum " +
                  (cost ? "costs at least $" + format_fixed(shown, 4) : "takes at least " + format_fixed(shown, 1) + " s");
      if (bound > 0) {
        r.message += ", so this plan is at most " + format_fixed(std::ceil(1000.0 * (value / bound - 1.0)) / 10.0, 1) + "% above it";
      } else {
        r.message += value > 0 ? ", so how far above it this plan is, is not known" : ", which this plan meets";
      }
    }
    return r;
  }

  const double inf = std::numeric_limits<double>::infinity();
  const std::optional<PlanCandidate> fastest = diagnose(PlanObjective::min_time, inf, inf, r.stats);
  if (r.stats.stopped) return undecided("no plan found; the search for the fastest cluster, to say why, did not finish");
  if (!fastest) {
    r.reason = InfeasibleReason::model_not_decreasing;
    r.message = "no cluster within the quotas reaches loss " + loss +
                ": the loss model does not decrease for any of them (check the gamma coefficients)";
    return r;
  }
  if (fastest->training_time_s > problem.deadline_s) {
    r.reason = InfeasibleReason::deadline_too_short;
    r.fastest = to_prediction(*fastest);
    r.message = "the deadline of " + format_number(problem.deadline_s) + " s is shorter than the fastest achievable time " +
                format_fixed(fastest->training_time_s, 1) + " s (" + counts_to_string(model, fastest->counts) + ", $" +
                format_fixed(fastest->cost_usd, 2) + ") to reach loss " + loss;
    return r;
  }
  if (problem.budget_usd) {
    const std::optional<PlanCandidate> cheapest = diagnose(PlanObjective::min_cost, problem.deadline_s, inf, r.stats);
    if (r.stats.stopped) return undecided("no plan found; the search for the cheapest cluster, to say why, did not finish");
    if (cheapest && cheapest->cost_usd > *problem.budget_usd) {
      r.reason = InfeasibleReason::over_budget;
      r.cheapest = to_prediction(*cheapest);
      r.message = "the budget of $" + format_fixed(*problem.budget_usd, 2) + " is below the cheapest plan reaching loss " + loss +
                  (std::isfinite(problem.deadline_s) ? " within the deadline" : "") + ": $" +
                  format_fixed(cheapest->cost_usd, 4) + " (" + counts_to_string(model, cheapest->counts) + ", " +
                  format_fixed(cheapest->training_time_s, 1) + " s)";
      return r;
    }
  }
  r.reason = InfeasibleReason::heuristic_missed;
  r.fastest = to_prediction(*fastest);
  r.message = "no window of the sliding-window heuristic meets the SLO, although the fastest cluster (" +
              counts_to_string(model, fastest->counts) + ", " + format_fixed(fastest->training_time_s, 1) +
              " s) does: use the exact planner";
  return r;
}

/// Quota group g of `problem` is full for `counts`: it is used to its limit, or no type it counts that is
/// below its own quota could take one more instance without exceeding the limit.
inline bool quota_group_full(const PlanProblem& problem, std::size_t g, const std::vector<int>& counts) {
  const std::int64_t used = problem.group_vcpus(g, counts.data());
  const std::int64_t limit = problem.quota_groups[g].limit_vcpus;
  if (used >= limit) return true;
  bool growable = false;
  for (std::size_t k : problem.quota_group_members[g]) {
    if (counts[k] >= problem.model().worker_types()[k].quota) continue;
    growable = true;
    if (used + problem.vcpus[k] <= limit) return false;
  }
  return growable;
}

/// The answer of assemble_plan_without_quota_groups, with the vCPU quota groups accounted for
/// (PlanResult::quota_groups, binding_quota_group). `diagnose` takes the problem to search first
/// (const PlanProblem&, objective, deadline, budget, stats): the binding group's diagnosis runs it on the
/// problem without one group, and without every group, and may answer nothing for a problem too large.
template <typename Solve, typename Diagnose, typename MetAtStart>
PlanResult assemble_plan(const PlanProblem& problem, PlanAlgorithm algorithm, Solve&& solve, Diagnose&& diagnose,
                         MetAtStart&& met_at_start) {
  auto diagnose_problem = [&](PlanObjective objective, double deadline_s, double budget_usd, PlanSearchStats& stats) {
    return diagnose(problem, objective, deadline_s, budget_usd, stats);
  };
  PlanResult r = assemble_plan_without_quota_groups(problem, algorithm, std::forward<Solve>(solve), diagnose_problem,
                                                    std::forward<MetAtStart>(met_at_start));
  if (problem.quota_groups.empty()) {
    if (r.reason == InfeasibleReason::no_instances) r.binding_quota_group = problem.no_instances_quota_group;
    return r;
  }
  std::vector<int> counts(problem.types(), 0);
  const Prediction* shown = r.cheapest ? &*r.cheapest : r.fastest ? &*r.fastest : nullptr;
  if (r.has_plan()) {
    counts = r.counts;
  } else if (shown != nullptr) {
    counts = problem.model().counts_of(shown->cluster);
  }
  r.quota_groups = problem.quota_group_use(counts);
  if (r.status != Status::infeasible) return r;
  if (r.reason == InfeasibleReason::no_instances) {
    r.binding_quota_group = problem.no_instances_quota_group;
    return r;
  }
  if (r.reason != InfeasibleReason::deadline_too_short && r.reason != InfeasibleReason::over_budget) return r;
  // A group binds when the problem without it has a plan; else, when the problem without any group has
  // one, the first group the reported cluster fills. Whether a plan exists is asked of the fastest plan
  // within the deadline and budget, whatever the objective: it exists iff the cheapest does, and the
  // search for the fastest meets a cluster within the deadline far sooner than the search for the cheapest.
  // Each search counts its work into r.stats but keeps its own `stopped`: a plan a stopped search found
  // still proves that a plan exists; its "none" proves nothing, so that group is simply not named.
  auto has_plan = [&](const PlanProblem& p) {
    PlanSearchStats own;
    const bool found = diagnose(p, PlanObjective::min_time, problem.deadline_s, problem.budget_or_infinity(), own).has_value();
    r.stats.add_work(own);
    return found;
  };
  std::optional<std::size_t> binding;
  bool alone = false;
  for (std::size_t g = 0; g < problem.quota_groups.size() && !binding; ++g) {
    const PlanProblem relaxed = problem.without_quota_group(g);
    if (!relaxed.no_instances.empty()) continue;
    if (has_plan(relaxed)) {
      binding = g;
      alone = true;
    }
  }
  if (!binding) {
    const PlanProblem open = problem.without_quota_groups();
    if (open.no_instances.empty() && has_plan(open)) {
      for (std::size_t g = 0; g < problem.quota_groups.size() && !binding; ++g) {
        if (quota_group_full(problem, g, counts)) binding = g;
      }
    }
  }
  if (!binding) return r;
  const PlanQuotaGroup& group = problem.quota_groups[*binding];
  const std::int64_t used = problem.group_vcpus(*binding, counts.data()) + group.reserved_vcpus;
  const std::string limit = std::to_string(group.limit_vcpus + group.reserved_vcpus);
  r.binding_quota_group = group.code;
  const std::string who = r.reason == InfeasibleReason::deadline_too_short
                              ? "the fastest cluster within the quotas"
                              : "the cheapest cluster within the quotas meeting the deadline";
  r.message += "; " +
               (group.limit_vcpus == 0
                    ? "quota group " + problem.describe_quota_group(*binding) + " allows no vCPUs" +
                          (group.reserved_vcpus > 0 ? " beside the parameter server's " + std::to_string(group.reserved_vcpus)
                                                    : std::string())
                    : who + " uses " +
                          (used == group.limit_vcpus + group.reserved_vcpus ? "all " + limit : std::to_string(used) + " of the " + limit) +
                          " vCPUs of quota group " + problem.describe_quota_group(*binding) +
                          (group.reserved_vcpus > 0 ? " (the parameter server's " + std::to_string(group.reserved_vcpus) + " included)"
                                                    : std::string())) +
               (alone ? ", the limit that binds: without it a plan exists"
                      : ", which binds: without the vCPU quota groups a plan exists");
  return r;
}

/// assemble_plan for an exact `solve`, which finds a cluster meeting the target at start by itself.
template <typename Solve, typename Diagnose>
PlanResult assemble_plan(const PlanProblem& problem, PlanAlgorithm algorithm, Solve&& solve, Diagnose&& diagnose) {
  return assemble_plan(problem, algorithm, std::forward<Solve>(solve), std::forward<Diagnose>(diagnose),
                       [](PlanSearchStats&) { return std::optional<PlanCandidate>(); });
}

}  // namespace spotdnn::detail
