// SPDX-License-Identifier: MIT
// The performance model of design §4 against its reference figures and closed forms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <spotdnn/planner.hpp>

using namespace spotdnn;

namespace {

constexpr double kReferenceTolerance = 1e-9;  // relative, issue #2

PerformanceModel preset_model() { return PerformanceModel(presets::resnet110_workload(), presets::resnet110_catalog()); }

}  // namespace

TEST_CASE("the first reference cluster reproduces design §4's figures to 1e-9") {
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

TEST_CASE("the second reference cluster reproduces design §4's figures to 1e-9") {
  const PerformanceModel model = preset_model();
  const Prediction p = predict(model, {{"p3.2xlarge", 2}, {"g3.8xlarge", 2}}, 0.9, {false});
  CHECK(p.samples_per_s == doctest::Approx(5806.0).epsilon(kReferenceTolerance));
  CHECK(p.iterations == doctest::Approx(10637.5).epsilon(kReferenceTolerance));
  CHECK(p.training_time_s == doctest::Approx(1876.128143).epsilon(1e-9));
  CHECK(p.cost_usd == doctest::Approx(1.669754048).epsilon(1e-9));
  CHECK(p.samples_to_train == doctest::Approx(p.iterations * p.weighted_batch).epsilon(kReferenceTolerance));
  CHECK(p.iterations_per_s == doctest::Approx(1.0 / (p.training_time_s / p.iterations)).epsilon(kReferenceTolerance));
}
