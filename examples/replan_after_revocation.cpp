// SPDX-License-Identifier: MIT
// Halfway through the cheapest (0.8, 2600 s) plan, every g3.8xlarge is revoked: what should be added so
// that training still finishes by the deadline? (ResNet-110 preset, 2-minute join delay.)
#include <cstdio>

#include <spotdnn/plan/exact.hpp>
#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/replan.hpp>

int main() {
  using namespace spotdnn;
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  const Slo slo{0.8, 2600};  // reach loss 0.8 within 2600 s
  const PlanResult plan = plan_exact(model, slo);
  if (!plan.has_plan() || plan.cluster.count("g3.8xlarge") == 0) return 1;

  // Where training stands halfway: the loss on the plan's curve at half its iterations.
  const Estimate e = model.estimate(plan.counts, slo.target_loss);
  ReplanRequest request;
  request.survivors = plan.cluster;
  request.survivors.set("g3.8xlarge", 0);
  request.elapsed_s = e.training_time_s / 2;
  request.deadline_s = slo.deadline_s;
  request.target_loss = slo.target_loss;
  request.loss_reached = loss_curve(model.workload().loss_model, e).loss_at(e.iterations / 2);

  ReplanOptions options;  // join delay 120 s
  const ReplanResult r = replan(model, request, options);
  std::printf("plan %s; at %.1f s (loss %.4f) the g3.8xlarge leave: %s\n", plan.cluster.to_string().c_str(),
              request.elapsed_s, *request.loss_reached, r.message.c_str());

  options.exclude_types = {"g3.8xlarge"};  // do not go back to the pool that was just revoked
  const ReplanResult other_pool = replan(model, request, options);
  std::printf("without g3.8xlarge: %s\n", other_pool.message.c_str());

  // Sanity: both re-plans meet the deadline, the second one without g3.8xlarge.
  const bool ok = r.has_plan() && r.completion_time_s <= slo.deadline_s && other_pool.has_plan() &&
                  other_pool.cluster.count("g3.8xlarge") == 0 && other_pool.completion_time_s <= slo.deadline_s;
  return ok ? 0 : 1;
}
