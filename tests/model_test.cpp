// SPDX-License-Identifier: MIT
// The performance model of docs/model.md against its reference figures and closed forms.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <cmath>
#include <vector>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/planner.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;

namespace {

constexpr double kReferenceTolerance = 1e-9;  // relative, issue #2

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

}  // namespace

TEST_CASE("the first reference cluster reproduces docs/model.md's figures to 1e-9") {
  const PerformanceModel model = preset_model();
  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};
  const Prediction without_ps = predict(model, cluster, 0.8, {false});
  CHECK(without_ps.status == Status::feasible);
  CHECK(without_ps.workers == 6);
  CHECK(without_ps.weighted_batch == doctest::Approx(1024).epsilon(kReferenceTolerance));
  CHECK(without_ps.samples_per_s == doctest::Approx(7842.0).epsilon(kReferenceTolerance));
  CHECK(without_ps.iterations == doctest::Approx(17925.783265603666).epsilon(kReferenceTolerance));
  CHECK(without_ps.training_time_s == doctest::Approx(2340.729669).epsilon(1e-9));
  CHECK(without_ps.cost_usd == doctest::Approx(2.97272668).epsilon(1e-8));
  CHECK(without_ps.ps_cost_usd == 0.0);

  const Prediction with_ps = predict(model, cluster, 0.8);
  CHECK(with_ps.cost_usd == doctest::Approx(3.097565595).epsilon(1e-9));
  CHECK(with_ps.worker_cost_usd == doctest::Approx(without_ps.cost_usd).epsilon(kReferenceTolerance));
  CHECK(with_ps.ps_cost_usd == doctest::Approx(0.192 * with_ps.training_time_s / 3600).epsilon(kReferenceTolerance));
}

TEST_CASE("the second reference cluster reproduces docs/model.md's figures to 1e-9") {
  const PerformanceModel model = preset_model();
  const Prediction p = predict(model, {{"p3.2xlarge", 2}, {"g3.8xlarge", 2}}, 0.9, {false});
  CHECK(p.samples_per_s == doctest::Approx(5806.0).epsilon(kReferenceTolerance));
  CHECK(p.iterations == doctest::Approx(10637.5).epsilon(kReferenceTolerance));
  CHECK(p.training_time_s == doctest::Approx(1876.128143).epsilon(1e-9));
  CHECK(p.cost_usd == doctest::Approx(1.669754048).epsilon(1e-9));
  CHECK(p.samples_to_train == doctest::Approx(p.iterations * p.weighted_batch).epsilon(kReferenceTolerance));
  CHECK(p.iterations_per_s == doctest::Approx(1.0 / (p.training_time_s / p.iterations)).epsilon(kReferenceTolerance));
}

TEST_CASE("contention is absent exactly when the required bandwidth equals the PS share") {
  const double b_ps = 1200e6;
  // B_req = B_ps/n exactly: not oversubscribed, whatever P says.
  CHECK(worker_bandwidth_bytes_per_s<double>(4, b_ps, b_ps / 4, 1.0) == b_ps / 4);
  // Just above the share: contended, and with P = 1 the worker gets exactly the share.
  const double req = std::nextafter(b_ps / 4, 1e12);
  CHECK(worker_bandwidth_bytes_per_s<double>(4, b_ps, req, 1.0) == doctest::Approx(b_ps / 4).epsilon(1e-15));
  // P = 0 while oversubscribed still gives B_req (eq. 2 at its boundary).
  CHECK(worker_bandwidth_bytes_per_s<double>(20, b_ps, 142e6, 0.0) == 142e6);
}

TEST_CASE("the contention probability is clamped to [0, 1]") {
  CHECK(contention_probability<double>(4, 0.8, -1.92) == 0.0);       // 1.6 - 1.92 < 0
  CHECK(contention_probability<double>(100, 0.8, -1.92) == 1.0);     // 8 - 1.92 > 1
  CHECK(contention_probability<double>(1, -3.0, 0.5) == 0.0);
  CHECK(contention_probability<double>(9, 0.1, 0.2) == doctest::Approx(0.5).epsilon(1e-15));
  for (int n = 1; n <= 200; ++n) {
    const double p = contention_probability<double>(n, 0.8, -1.92);
    CHECK(p >= 0.0);
    CHECK(p <= 1.0);
  }
}

TEST_CASE("worker bandwidth falls monotonically with n once the PS link is oversubscribed") {
  const PerformanceModel model = preset_model();
  // 1200/142 = 8.45: from 9 workers on, B_req exceeds the fair share.
  CHECK(model.worker_bandwidth_bytes_per_s(8) == 142e6);
  double previous = model.worker_bandwidth_bytes_per_s(9);
  CHECK(previous < 142e6);
  for (int n = 10; n <= 70; ++n) {
    const double now = model.worker_bandwidth_bytes_per_s(n);
    CHECK(now < previous);
    previous = now;
  }
}

TEST_CASE("the convergence coefficient of n identical workers is sqrt(1 - 1/n)") {
  for (int n = 1; n <= 64; ++n) {
    ClusterRates<double> rates;
    rates.add(n, 512.0, 0.7);
    CHECK(rates.convergence_coefficient() == doctest::Approx(std::sqrt(1.0 - 1.0 / n)).epsilon(1e-12));
  }
  ClusterRates<double> one;
  one.add(1, 1024.0, 0.54);
  CHECK(one.convergence_coefficient() == 0.0);
}

TEST_CASE("the convergence coefficient matches the sorted-share definition and ignores worker order") {
  // Workers (batch, iteration time), heterogeneous; reference computed from the definition with sorting.
  const std::vector<std::pair<double, double>> workers = {{1024, 0.54}, {512, 1.0}, {2048, 3.9}, {1024, 1.36}, {512, 0.25}};
  double v = 0;
  std::vector<double> shares;
  for (auto [b, t] : workers) v += b / t;
  for (auto [b, t] : workers) shares.push_back(b / t / v);
  std::sort(shares.rbegin(), shares.rend());
  double r2 = (shares[0] - 1) * (shares[0] - 1);
  for (std::size_t i = 1; i < shares.size(); ++i) r2 += shares[i] * shares[i];
  const double expected = std::sqrt(r2);

  std::vector<std::size_t> order = {0, 1, 2, 3, 4};
  do {
    ClusterRates<double> rates;
    for (std::size_t i : order) rates.add(1, workers[i].first, workers[i].second);
    CHECK(rates.convergence_coefficient() == doctest::Approx(expected).epsilon(1e-12));
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST_CASE("compute time is the profiled time minus both the network and the PCIe transfer") {
  const PerformanceModel model = preset_model();
  const WorkerType& p3 = model.worker_types().at(*model.worker_type_index("p3.2xlarge"));
  const double profiled = 1024.0 / 1885.0;
  const double expected = profiled - 2 * 11.5e6 / 142e6 - 2 * 1 * 11.5e6 / 10e9;
  CHECK(p3.compute_time_s == doctest::Approx(expected).epsilon(1e-14));
  // Uncontended (n <= 8) the iteration time is the profiled time again.
  CHECK(model.worker_iteration_time_s(*model.worker_type_index("p3.2xlarge"), 3) == doctest::Approx(profiled).epsilon(1e-14));
}

TEST_CASE("the CC loss form inverts to the iterations it was evaluated at") {
  Workload w = presets::resnet110_workload();
  w.loss_model = {LossForm::cc, {900.0, -0.1, 2000.0, 0.3, 0.45}};
  const PerformanceModel model(w, presets::resnet110_catalog());
  const Prediction p = predict(model, {{"p2.8xlarge", 1}, {"g4dn.4xlarge", 3}}, 0.7);
  REQUIRE(p.status == Status::feasible);
  const double g[] = {900.0, -0.1, 2000.0, 0.3, 0.45};
  const double loss = loss_cc_form<double>(p.iterations, p.workers, p.weighted_batch, p.convergence_coefficient, g);
  CHECK(loss == doctest::Approx(0.7).epsilon(1e-12));
  CHECK(p.convergence_coefficient > 0.0);
}

TEST_CASE("an unreachable or already met target is a status, not an exception") {
  const PerformanceModel model = preset_model();
  const Prediction below = predict(model, {{"p3.2xlarge", 1}}, 0.5);
  CHECK(below.status == Status::infeasible);
  CHECK(below.outcome == TargetOutcome::below_asymptote);
  CHECK(below.message.find("asymptote 0.5") != std::string::npos);
  const Prediction met = predict(model, {{"p3.2xlarge", 1}}, 1000.0);
  CHECK(met.status == Status::target_met_at_start);
  CHECK(met.outcome == TargetOutcome::met_at_start);
  CHECK(met.iterations == 0.0);
  CHECK(met.cost_usd == 0.0);
}

TEST_CASE("a cluster whose loss at iteration 0 is already below the target reports target_met_at_start with that loss") {
  // The issue: p2.8xlarge=1 at loss 1.6 gave a $0 "plan". Eq. (7) gives j <= 0 for it, so nothing trains.
  const PerformanceModel model = preset_model();
  const Prediction p = predict(model, {{"p2.8xlarge", 1}}, 1.6);
  CHECK(p.status == Status::target_met_at_start);
  CHECK(p.outcome == TargetOutcome::met_at_start);
  CHECK(p.iterations == 0.0);
  CHECK(p.training_time_s == 0.0);
  CHECK(p.cost_usd == 0.0);
  CHECK(p.workers == 1);
  // The loss at j = 0 from eq. (6) directly, not through the library's helper.
  const LossModel& loss = model.workload().loss_model;
  const double at_start = loss.form == LossForm::seed
                              ? loss_seed_form<double>(0.0, 1.0, p.weighted_batch, loss.gamma.data())
                              : loss_cc_form<double>(0.0, 1.0, p.weighted_batch, p.convergence_coefficient, loss.gamma.data());
  CHECK(at_start <= 1.6);
  CHECK(at_start > loss.asymptote());
  CHECK(p.message == "the target loss 1.6 is met before training starts: the loss model gives " +
                         detail::format_readable(at_start) + " at iteration 0 for this cluster; nothing to train");
  // A lower target the same cluster does not meet at start trains, as before.
  const Prediction trains = predict(model, {{"p2.8xlarge", 1}}, 0.99 * at_start);
  CHECK(trains.status == Status::feasible);
  CHECK(trains.iterations > 0.0);
}

TEST_CASE("counts above the quota are predicted and noted") {
  const Prediction p = predict(preset_model(), {{"p3.2xlarge", 3}}, 0.8);
  CHECK(p.status == Status::feasible);
  CHECK(p.message.find("exceeds its quota of 2") != std::string::npos);
}

using spotdnn::test::error_of;

TEST_CASE("bad inputs throw spotdnn::invalid_argument naming the field") {
  const PerformanceModel model = preset_model();
  CHECK(error_of([&] { (void)predict(model, {}, 0.8); }).find("cluster") != std::string::npos);
  CHECK(error_of([&] { (void)predict(model, {{"g5.xlarge", 1}}, 0.8); }).find("\"g5.xlarge\": unknown instance type") != std::string::npos);
  CHECK(error_of([&] { (void)predict(model, {{"p3.2xlarge", 1}}, std::nan("")); }).find("target_loss = nan") != std::string::npos);
  CHECK(error_of([] { Cluster c; c.set("p3.2xlarge", -1); }).find("p3.2xlarge = -1") != std::string::npos);
  CHECK(error_of([] { (void)Cluster::parse("p3.2xlarge=2,p3.2xlarge=1"); }).find("given twice") != std::string::npos);
  CHECK(error_of([] { (void)Cluster::parse("p3.2xlarge"); }).find("expected TYPE=N") != std::string::npos);
  CHECK(error_of([] { (void)Cluster::parse("p3.2xlarge=1.5"); }).find("whole number") != std::string::npos);

  Workload w = presets::resnet110_workload();
  w.param_bytes = -1;
  CHECK(error_of([&] { PerformanceModel m(w, presets::resnet110_catalog()); }).find("param_bytes = -1") != std::string::npos);
  w = presets::resnet110_workload();
  w.required_bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  CHECK(error_of([&] { PerformanceModel m(w, presets::resnet110_catalog()); }).find("required_bandwidth_bytes_per_s = inf") != std::string::npos);
  w = presets::resnet110_workload();
  w.loss_model.gamma.pop_back();
  CHECK(error_of([&] { PerformanceModel m(w, presets::resnet110_catalog()); }).find("loss_model.gamma") != std::string::npos);
  w = presets::resnet110_workload();
  w.profiles["p3.2xlarge"].iteration_time_s = 0.1;  // shorter than 2S/B_req = 0.162 s
  CHECK(error_of([&] { PerformanceModel m(w, presets::resnet110_catalog()); }).find("profiles[\"p3.2xlarge\"].iteration_time_s = 0.1") != std::string::npos);
  w = presets::resnet110_workload();
  w.profiles["p3.2xlarge"].compute_time_s = 0.3;  // both times given
  CHECK(error_of([&] { PerformanceModel m(w, presets::resnet110_catalog()); }).find("exactly one of") != std::string::npos);

  Catalog c = presets::resnet110_catalog();
  c.instance_types[1].price_usd_per_hour = -0.3;
  CHECK(error_of([&] { PerformanceModel m(presets::resnet110_workload(), c); }).find("instance_types[1].price_usd_per_hour = -0.3") != std::string::npos);
  c = presets::resnet110_catalog();
  c.instance_types[2].gpus = 0;
  CHECK(error_of([&] { PerformanceModel m(presets::resnet110_workload(), c); }).find("instance_types[2].gpus = 0") != std::string::npos);
  c = presets::resnet110_catalog();
  c.instance_types[3].name = "p3.2xlarge";
  CHECK(error_of([&] { PerformanceModel m(presets::resnet110_workload(), c); }).find("listed twice") != std::string::npos);
  c = presets::resnet110_catalog();
  c.instance_types[0].interruption_band = "30%";
  CHECK(error_of([&] { PerformanceModel m(presets::resnet110_workload(), c); }).find("interruption_band = \"30%\"") != std::string::npos);
  CHECK(error_of([&] { (void)presets::resnet110_catalog().at("x1.32xlarge"); }).find("x1.32xlarge") != std::string::npos);
}

TEST_CASE("a catalog type the workload does not profile cannot be part of a cluster") {
  Catalog c = presets::resnet110_catalog();
  InstanceType extra;
  extra.name = "g5.xlarge";
  extra.price_usd_per_hour = 0.4;
  extra.quota = 3;
  c.instance_types.push_back(extra);
  const PerformanceModel model(presets::resnet110_workload(), c);
  CHECK(model.worker_types().size() == 5);
  CHECK(model.unprofiled_types() == std::vector<std::string>{"g5.xlarge"});
  CHECK(error_of([&] { (void)predict(model, {{"g5.xlarge", 1}}, 0.8); }).find("no profile") != std::string::npos);
}

TEST_CASE("estimate and predict agree, and the cost splits into workers and PS") {
  const PerformanceModel model = preset_model();
  const std::vector<int> counts = {1, 2, 0, 3, 1};
  const Estimate e = model.estimate(counts, 0.75);
  Cluster cluster;
  for (std::size_t k = 0; k < counts.size(); ++k) cluster.set(model.worker_types()[k].name, counts[k]);
  const Prediction p = predict(model, cluster, 0.75);
  CHECK(e.cost_usd == p.cost_usd);
  CHECK(e.training_time_s == p.training_time_s);
  CHECK(e.cost_usd == doctest::Approx(e.worker_cost_usd + e.ps_cost_usd).epsilon(1e-15));
  CHECK(e.worker_price_usd_per_hour == doctest::Approx(0.918 + 2 * 0.3612 + 3 * 1.5676 + 2.16).epsilon(1e-15));
  CHECK(Cluster::parse(cluster.to_string()) == cluster);
}

TEST_CASE("counts for people are whole numbers with their thousands grouped") {
  CHECK(detail::format_count(6962690.4) == "6,962,690");
  CHECK(detail::format_count(999) == "999");
  CHECK(detail::format_count(1000) == "1,000");
  CHECK(detail::format_count(-1234567) == "-1,234,567");
  CHECK(detail::format_count(0.4) == "0");
  CHECK(detail::format_count(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(detail::format_count(2e15) == "2e+15");
}
