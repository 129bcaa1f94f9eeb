// SPDX-License-Identifier: MIT
// Re-planning after a revocation notice against an exhaustive enumeration of the additions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <spotdnn/plan/exact.hpp>
#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/replan.hpp>

using namespace spotdnn;

namespace {

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

/// A re-planning request: `survivors` have trained for `elapsed_s` to `loss_reached`; reach `target_loss`
/// by `deadline_s`.
ReplanRequest request_after(Cluster survivors, double elapsed_s, double deadline_s, double target_loss, double loss_reached) {
  ReplanRequest request;
  request.survivors = std::move(survivors);
  request.elapsed_s = elapsed_s;
  request.deadline_s = deadline_s;
  request.target_loss = target_loss;
  request.loss_reached = loss_reached;
  return request;
}

/// The best option found by trying every set of additions within the quotas, with the model written out
/// from predict(): cluster c's curve f_c(j) = A_c/(j + γ1) + a with A_c = (j_c + γ1)(L − a).
struct Enumerated {
  bool feasible = false;
  double cost_usd = std::numeric_limits<double>::infinity();
  double fastest_finish_s = std::numeric_limits<double>::infinity();
};

Enumerated enumerate_additions(const PerformanceModel& model, const Cluster& survivors, double loss, double target,
                               double remaining_s, double join_delay_s, bool charge_ps = true) {
  const double g1 = model.workload().loss_model.gamma[0], a = model.workload().loss_model.asymptote();
  const double ps = charge_ps ? model.catalog().parameter_server.price_usd_per_hour : 0.0;
  const auto& types = model.worker_types();
  const std::vector<int> s = model.counts_of(survivors);
  // Time for cluster `counts` to go from `from` to the target, and its hourly worker price.
  auto run = [&](const std::vector<int>& counts, double from, double& price) {
    Cluster c;
    price = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (counts[k] > 0) c.set(types[k].name, counts[k]);
      price += counts[k] * types[k].price_usd_per_hour;
    }
    if (c.empty()) return std::numeric_limits<double>::infinity();
    const Prediction p = predict(model, c, target);
    const double numerator = (p.iterations + g1) * (target - a);
    const double iteration_s = p.training_time_s / p.iterations;
    return (numerator / (target - a) - numerator / (from - a)) * iteration_s;
  };
  double s_price = 0;
  const double alone_s = run(s, loss, s_price);
  Enumerated best;
  std::vector<int> x(types.size(), 0);
  for (;;) {
    bool any = false;
    std::vector<int> c = s;
    double x_price = 0;
    for (std::size_t k = 0; k < x.size(); ++k) {
      c[k] += x[k];
      any = any || x[k] > 0;
      x_price += x[k] * types[k].price_usd_per_hour;
    }
    double finish = alone_s, cost = 0;
    if (!any) {
      cost = (s_price + ps) * alone_s / 3600;
    } else if (alone_s <= join_delay_s) {
      cost = (s_price + ps) * alone_s / 3600;  // the survivors finish before the additions join
    } else {
      double loss_after = loss, ignored = 0;
      if (std::isfinite(alone_s)) {
        const double left_s = alone_s - join_delay_s;  // survivors' remaining time after the delay
        // The survivors' curve at the time left: invert time → loss on their curve.
        Cluster sc;
        for (std::size_t k = 0; k < s.size(); ++k) if (s[k] > 0) sc.set(types[k].name, s[k]);
        const Prediction p = predict(model, sc, target);
        const double numerator = (p.iterations + g1) * (target - a), iteration_s = p.training_time_s / p.iterations;
        const double j_left = left_s / iteration_s;  // iterations still needed after the delay
        loss_after = a + 1.0 / (1.0 / (target - a) - j_left / numerator);
      }
      finish = join_delay_s + run(c, loss_after, ignored);
      cost = (s_price + ps) * finish / 3600 + x_price * (finish - join_delay_s) / 3600;
    }
    best.fastest_finish_s = std::min(best.fastest_finish_s, finish);
    if (finish <= remaining_s && cost < best.cost_usd) {
      best.feasible = true;
      best.cost_usd = cost;
    }
    std::size_t k = 0;
    while (k < x.size() && ++x[k] + s[k] > types[k].quota) x[k++] = 0;
    if (k == x.size()) break;
  }
  return best;
}

struct Halfway {
  Cluster survivors;
  double elapsed_s = 0;
  double loss = 0;
};

/// The exact plan for (0.8, deadline) loses every g3.8xlarge at half its training time.
Halfway lose_g3_8xlarge_halfway(const PerformanceModel& model, double deadline_s) {
  Slo slo;
  slo.target_loss = 0.8;
  slo.deadline_s = deadline_s;
  const PlanResult plan = plan_exact(model, slo);
  REQUIRE(plan.has_plan());
  REQUIRE(plan.cluster.count("g3.8xlarge") > 0);
  Halfway h;
  h.survivors = plan.cluster;
  h.survivors.set("g3.8xlarge", 0);
  const Estimate e = model.estimate(plan.counts, 0.8);
  h.elapsed_s = e.training_time_s / 2;
  h.loss = loss_curve(model.workload().loss_model, e).loss_at(e.iterations / 2);
  return h;
}

}  // namespace

TEST_CASE("after losing all g3.8xlarge halfway through (0.8, 2600) the replan meets the deadline iff any plan can") {
  const PerformanceModel model = preset_model();
  const Halfway h = lose_g3_8xlarge_halfway(model, 2600);
  int feasible_cases = 0, infeasible_cases = 0;
  for (double join_delay_s : {0.0, 120.0, 600.0, 1200.0}) {
    CAPTURE(join_delay_s);
    ReplanRequest request = request_after(h.survivors, h.elapsed_s, 2600, 0.8, h.loss);
    ReplanOptions options;
    options.join_delay_s = join_delay_s;
    const ReplanResult r = replan(model, request, options);
    const Enumerated truth = enumerate_additions(model, h.survivors, h.loss, 0.8, 2600 - h.elapsed_s, join_delay_s);
    CHECK(r.has_plan() == truth.feasible);
    if (truth.feasible) {
      ++feasible_cases;
      CHECK(r.status == Status::optimal);
      CHECK(r.cost_usd == doctest::Approx(truth.cost_usd).epsilon(1e-9));
      CHECK(r.completion_time_s <= 2600);
      for (const auto& [type, count] : h.survivors.counts()) CHECK(r.cluster.count(type) >= count);
    } else {
      ++infeasible_cases;
      CHECK(r.status == Status::infeasible);
      CHECK(r.message.find("no set of additions meets the deadline") != std::string::npos);
      CHECK(r.fastest_finish_time_s == doctest::Approx(truth.fastest_finish_s).epsilon(1e-9));
      CHECK(r.fastest_finish_time_s > r.remaining_time_s);
    }
  }
  CHECK(feasible_cases >= 1);
  CHECK(infeasible_cases >= 1);
}

TEST_CASE("a replan whose exact search stops at its step limit is undecided, never a false infeasible") {
  // The case above at join delay 0 (a plan exists), with the residual search limited to 1 step: it stops
  // before any plan, so the replan must not fall back to "no set of additions meets the deadline".
  const PerformanceModel model = preset_model();
  const Halfway h = lose_g3_8xlarge_halfway(model, 2600);
  ReplanRequest request = request_after(h.survivors, h.elapsed_s, 2600, 0.8, h.loss);
  ReplanOptions options;
  options.join_delay_s = 0;
  REQUIRE(replan(model, request, options).status == Status::optimal);
  options.plan.max_search_steps = 1;
  const ReplanResult r = replan(model, request, options);
  CHECK(r.status == Status::undecided);
  CHECK_FALSE(r.has_plan());
  CHECK(r.message.find("step limit") != std::string::npos);
  // Survivors that finish alone in time (the case below): that answer stands when the residual search
  // stops, as feasible, since cheaper additions are not ruled out.
  ReplanRequest alone = request_after(Cluster{{"p3.2xlarge", 2}}, 2000, 2600, 0.8, 0.81);
  REQUIRE(replan(model, alone).status == Status::optimal);
  const ReplanResult unproven = replan(model, alone, options);
  CHECK(unproven.status == Status::feasible);
  CHECK(unproven.has_plan());
  CHECK(unproven.additions.empty());
  CHECK(unproven.message.find("add nothing; cheaper additions are not ruled out") != std::string::npos);
}

TEST_CASE("the replan is the cheapest option at several deadlines and revocation times") {
  const PerformanceModel model = preset_model();
  for (double deadline : {2000.0, 2400.0, 2600.0}) {
    const Halfway h = lose_g3_8xlarge_halfway(model, deadline);
    const Estimate e = model.estimate(model.counts_of(h.survivors), 0.8);
    (void)e;
    for (double extra_elapsed : {-400.0, 0.0, 300.0}) {
      CAPTURE(deadline);
      CAPTURE(extra_elapsed);
      ReplanRequest request;
      request.survivors = h.survivors;
      request.elapsed_s = h.elapsed_s + extra_elapsed;  // the same loss, noticed earlier or later
      request.deadline_s = deadline;
      request.target_loss = 0.8;
      request.loss_reached = h.loss;
      for (bool charge_ps : {true, false}) {
        ReplanOptions options;
        options.plan.charge_parameter_server = charge_ps;
        const ReplanResult r = replan(model, request, options);
        const Enumerated truth =
            enumerate_additions(model, h.survivors, h.loss, 0.8, deadline - request.elapsed_s, 120, charge_ps);
        CHECK(r.has_plan() == truth.feasible);
        if (truth.feasible) CHECK(r.cost_usd == doctest::Approx(truth.cost_usd).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("survivors that finish alone in time get nothing added, and a reached target needs nothing") {
  const PerformanceModel model = preset_model();
  ReplanRequest request = request_after(Cluster{{"p3.2xlarge", 2}}, 2000, 2600, 0.8, 0.81);
  const ReplanResult r = replan(model, request);
  REQUIRE(r.has_plan());
  CHECK(r.additions.empty());
  CHECK(r.cluster == request.survivors);
  CHECK(r.message.find("add nothing") != std::string::npos);
  request.loss_reached = 0.79;
  const ReplanResult done = replan(model, request);
  // Nothing to plan: the target-met status plan() gives, not "optimal".
  CHECK(done.status == Status::target_met_at_start);
  CHECK_FALSE(done.has_plan());
  CHECK(done.additions.empty());
  CHECK(done.finish_time_s == 0.0);
  CHECK(done.message.find("already reached") != std::string::npos);
}

TEST_CASE("progress given as samples trained on the original cluster equals the loss it implies") {
  const PerformanceModel model = preset_model();
  const Cluster original{{"p3.2xlarge", 2}, {"g3.8xlarge", 2}};
  const Prediction p = predict(model, original, 0.8);
  ReplanRequest by_samples;
  by_samples.survivors = Cluster{{"p3.2xlarge", 2}};
  by_samples.elapsed_s = p.training_time_s / 2;
  by_samples.deadline_s = 2600;
  by_samples.target_loss = 0.8;
  by_samples.samples_trained = p.samples_to_train / 2;
  by_samples.trained_on = original;
  const ReplanResult a = replan(model, by_samples);
  ReplanRequest by_loss = by_samples;
  by_loss.samples_trained.reset();
  const double g1 = 876.5, numerator = (p.iterations + g1) * (0.8 - 0.5);
  by_loss.loss_reached = numerator / (p.iterations / 2 + g1) + 0.5;
  const ReplanResult b = replan(model, by_loss);
  CHECK(a.loss_reached == doctest::Approx(*by_loss.loss_reached).epsilon(1e-12));
  CHECK(a.cost_usd == doctest::Approx(b.cost_usd).epsilon(1e-9));
  CHECK(a.cluster == b.cluster);
}

TEST_CASE("excluded types are not added, and bad requests throw") {
  const PerformanceModel model = preset_model();
  const Halfway h = lose_g3_8xlarge_halfway(model, 2600);
  ReplanRequest request = request_after(h.survivors, h.elapsed_s, 2600, 0.8, h.loss);
  ReplanOptions options;
  options.exclude_types = {"g3.8xlarge"};
  const ReplanResult r = replan(model, request, options);
  CHECK(r.cluster.count("g3.8xlarge") == 0);
  CHECK(r.additions.count("g3.8xlarge") == 0);

  ReplanRequest none = request;
  none.loss_reached.reset();
  CHECK_THROWS_AS((void)replan(model, none), spotdnn::invalid_argument);
  ReplanRequest unknown = request;
  unknown.survivors = Cluster{{"t2.nano", 1}};
  CHECK_THROWS_AS((void)replan(model, unknown), spotdnn::invalid_argument);
  ReplanOptions bad_exclude;
  bad_exclude.exclude_types = {"t2.nano"};
  CHECK_THROWS_AS((void)replan(model, request, bad_exclude), spotdnn::invalid_argument);
}

TEST_CASE("after the deadline has passed the replan says so") {
  const PerformanceModel model = preset_model();
  ReplanRequest request = request_after(Cluster{{"p3.2xlarge", 1}}, 2700, 2600, 0.8, 0.9);
  const ReplanResult r = replan(model, request);
  CHECK(r.status == Status::infeasible);
  CHECK(r.message.find("the deadline has passed") != std::string::npos);
  CHECK(std::isfinite(r.fastest_finish_time_s));
}

TEST_CASE("with quotas of 10,000 the replan's residual plan is the every-total reference's, searched over few totals") {
  Catalog catalog = presets::resnet110_catalog();
  for (auto& type : catalog.instance_types) type.quota = 10000;
  const PerformanceModel model(presets::resnet110_workload(), catalog);
  const PerformanceModel residual(residual_workload(model.workload()), catalog);
  const Halfway h = lose_g3_8xlarge_halfway(preset_model(), 2600);
  for (double elapsed : {h.elapsed_s, 2600.0 - 200.0, 2600.0 - 60.0}) {
    CAPTURE(elapsed);
    ReplanRequest request = request_after(h.survivors, elapsed, 2600, 0.8, h.loss);
    const ReplanResult r = replan(model, request);
    for (const auto& [type, count] : h.survivors.counts()) CHECK(r.cluster.count(type) >= count);
    if (elapsed + 120 >= 2600) {
      // No time after the join delay: infeasible, with the fastest finish over all additions.
      CHECK(r.status == Status::infeasible);
      CHECK(std::isfinite(r.fastest_finish_time_s));
      continue;
    }
    REQUIRE(r.residual_plan.status != Status::invalid_input);
    CHECK(r.residual_plan.stats.worker_totals <= 10);
    PlanOptions options;
    for (const auto& [type, count] : h.survivors.counts()) options.minimum_counts[type] = count;
    Slo slo;
    slo.target_loss = r.residual_plan.target_loss;
    slo.deadline_s = r.residual_plan.deadline_s;
    const PlanResult reference = detail::plan_exact_in_order(residual, slo, options, detail::ExactSearchOrder::every_total);
    CHECK(r.residual_plan.status == reference.status);
    CHECK(r.residual_plan.counts == reference.counts);
    CHECK(r.residual_plan.fastest.has_value() == reference.fastest.has_value());
    if (r.residual_plan.fastest && reference.fastest) CHECK(r.residual_plan.fastest->cluster == reference.fastest->cluster);
  }
}

TEST_CASE("before any training a target the loss model meets at start is target_met_at_start, not a plan") {
  const PerformanceModel model = preset_model();
  ReplanRequest request;
  request.elapsed_s = 0;
  request.deadline_s = 3600;
  request.target_loss = 1.6;
  request.loss_reached = std::numeric_limits<double>::infinity();  // nothing trained yet
  // The survivors alone meet it at start.
  request.survivors = Cluster{{"p2.8xlarge", 1}};
  const ReplanResult survivors = replan(model, request);
  CHECK(survivors.status == Status::target_met_at_start);
  CHECK_FALSE(survivors.has_plan());
  CHECK(survivors.message.find("the target loss 1.6 is met before training starts: the loss model gives ") == 0);
  CHECK(survivors.message.find("for the survivors (p2.8xlarge=1); nothing to train") != std::string::npos);
  // No survivors: the residual planner (plan_exact) finds the cluster that does.
  request.survivors = Cluster{};
  const ReplanResult none = replan(model, request);
  CHECK(none.status == Status::target_met_at_start);
  CHECK(none.residual_plan.status == Status::target_met_at_start);
  CHECK(none.message == none.residual_plan.message);
  CHECK(none.message.find("p2.8xlarge=1") != std::string::npos);
  // Once training has made progress the residual problem has no γ1, so the same target is a plan again.
  request.loss_reached = 1.7;
  const ReplanResult later = replan(model, request);
  CHECK(later.status != Status::target_met_at_start);
}

TEST_CASE("survivors that fit their on-demand quota group alone but not beside the parameter server's vCPUs are refused") {
  // p3.2xlarge bought on demand (8 vCPUs each) in on-demand group L-417A185B of 24 vCPUs, which also
  // counts the parameter server's 8: 3 survivors use 24 of the 24, but 32 with the PS.
  Catalog catalog = presets::resnet110_catalog();
  for (InstanceType& type : catalog.instance_types) {
    if (type.name != "p3.2xlarge") continue;
    type.vcpus = 8;
    type.quota = 4;
    type.on_demand_quota_group = "L-417A185B";
    type.on_demand_price_usd_per_hour = 3.06;
  }
  catalog.quota_groups.push_back({"L-417A185B", "Running On-Demand P instances", 24, Market::on_demand});
  ReplanOptions options;
  options.plan.markets["p3.2xlarge"] = Market::on_demand;
  const ReplanRequest three = request_after(Cluster{{"p3.2xlarge", 3}}, 600, 1e6, 0.8, 1.5);
  // Without the PS in the group, the same survivors are accepted.
  REQUIRE_NOTHROW((void)replan(PerformanceModel(presets::resnet110_workload(), catalog), three, options));

  catalog.parameter_server.vcpus = 8;
  catalog.parameter_server.quota_group = "L-417A185B";
  REQUIRE_NOTHROW(catalog.validate());
  const PerformanceModel model(presets::resnet110_workload(), catalog);
  CHECK_THROWS_WITH_AS((void)replan(model, three, options),
                       "replan: survivors = p3.2xlarge=3: these instances use 24 vCPUs of quota group L-417A185B (Running "
                       "On-Demand P instances), above its limit of 24 vCPUs less the parameter server's 8",
                       invalid_argument);
  // 2 survivors fit beside the PS, and no p3.2xlarge can join them (the group is full).
  const ReplanResult two = replan(model, request_after(Cluster{{"p3.2xlarge", 2}}, 600, 1e6, 0.8, 1.5), options);
  CHECK(two.additions.count("p3.2xlarge") == 0);
}
