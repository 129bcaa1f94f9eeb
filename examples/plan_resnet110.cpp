// SPDX-License-Identifier: MIT
// Plan ResNet-110 training on the embedded preset: the cheapest cluster reaching loss 0.8 in 40 minutes.
#include <cstdio>

#include <spotdnn/planner.hpp>

int main() {
  using namespace spotdnn;
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const PlanResult plan = plan_exact(model, {0.8, 2400});  // target loss 0.8, deadline 2400 s
  std::printf("%s\n", plan.message.c_str());
  for (const auto& part : plan.prediction.per_type) std::printf("  %-14s x %d\n", part.type.c_str(), part.count);
  std::printf("  cost $%.4f = workers $%.4f + PS $%.4f\n", plan.prediction.cost_usd, plan.prediction.worker_cost_usd,
              plan.prediction.ps_cost_usd);

  // Sanity: the known optimum, and the paper's heuristic cannot do better.
  const PlanResult window = plan_sliding_window(model, {0.8, 2400});
  const bool ok = plan.status == Status::optimal && plan.cluster == Cluster{{"p3.2xlarge", 2}, {"g3.8xlarge", 4}} &&
                  window.has_plan() && window.prediction.cost_usd >= plan.prediction.cost_usd;
  return ok ? 0 : 1;
}
