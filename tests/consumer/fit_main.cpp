// SPDX-License-Identifier: MIT
// A consumer of the package with COMPONENTS fit, linking both targets.
#include <spotdnn/fit.hpp>
#include <spotdnn/planner.hpp>

int main() {
  const spotdnn::PerformanceModel model(spotdnn::presets::resnet110_workload(), spotdnn::presets::resnet110_catalog());
  const auto prediction = spotdnn::predict(model, {{"p3.2xlarge", 2}, {"g3.8xlarge", 4}}, 0.8);
  const ceres::Solver::Options options = spotdnn::detail::ceres_options(spotdnn::SolverSettings{});
  return prediction.status == spotdnn::Status::feasible && prediction.weighted_batch == 1024.0 &&
                 options.logging_type == ceres::SILENT
             ? 0
             : 1;
}
