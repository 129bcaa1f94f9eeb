// SPDX-License-Identifier: MIT
// Quick start: predict time and cost of a spot cluster on the embedded ResNet-110 preset.
#include <cmath>
#include <cstdio>

#include <spotdnn/planner.hpp>

int main() {
  using namespace spotdnn;
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());

  const Cluster cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}};
  const Prediction p = predict(model, cluster, /*target_loss=*/0.8);

  std::printf("%s: %d workers, %.0f samples/s, loss 0.8 after %.0f iterations\n", cluster.to_string().c_str(),
              p.workers, p.samples_per_s, p.iterations);
  std::printf("training time %.1f s, cost $%.4f (workers $%.4f + PS $%.4f)\n", p.training_time_s, p.cost_usd,
              p.worker_cost_usd, p.ps_cost_usd);

  // Sanity check against the reference figures of docs/model.md.
  return p.status == Status::feasible && std::abs(p.training_time_s - 2340.730) < 1e-3 ? 0 : 1;
}
