// SPDX-License-Identifier: MIT
// A consumer of the package without the component fit: plans and simulates on spotdnn::spotdnn alone,
// configured and built with Ceres and Eigen hidden.
#include <spotdnn/planner.hpp>
#include <spotdnn/revocation.hpp>

int main() {
  const spotdnn::PerformanceModel model(spotdnn::presets::resnet110_workload(), spotdnn::presets::resnet110_catalog());
  const auto prediction = spotdnn::predict(model, {{"p3.2xlarge", 2}, {"g3.8xlarge", 4}}, 0.8);
  const auto plan = spotdnn::plan_exact(model, spotdnn::Slo{0.8, 2400.0});
  const double young_min = spotdnn::young_checkpoint_interval_s(300.0, 24.0 * 3600.0) / 60.0;
  return prediction.status == spotdnn::Status::feasible && prediction.weighted_batch == 1024.0 &&
                 plan.status == spotdnn::Status::optimal && young_min > 119.9 && young_min < 120.1
             ? 0
             : 1;
}
