// SPDX-License-Identifier: MIT
// How often, and by how much, the spotDNN paper's sliding window costs more than the exact optimum,
// over a grid of SLOs on the ResNet-110 preset and on a 7-type catalog (quota 10 each: the paper's
// largest setting). Prints a Markdown table; exits 1 if the window ever beats the optimum.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <spotdnn/planner.hpp>

namespace {

using namespace spotdnn;

/// The preset plus two illustrative 4-GPU types (spot prices and throughputs in the preset's range,
/// not measured), every quota 10.
PerformanceModel seven_type_model() {
  Workload w = presets::resnet110_workload();
  Catalog c = presets::resnet110_catalog();
  auto add = [&](const char* name, int gpus, double spot, double on_demand, int batch_per_gpu, double samples_per_s) {
    InstanceType t;
    t.name = name;
    t.gpus = gpus;
    t.price_usd_per_hour = spot;
    t.on_demand_price_usd_per_hour = on_demand;
    t.quota = 10;
    t.pcie_bandwidth_bytes_per_s = 10e9;
    c.instance_types.push_back(t);
    TypeProfile p;
    p.batch_per_gpu = batch_per_gpu;
    p.iteration_time_s = double(gpus) * batch_per_gpu / samples_per_s;
    w.profiles.emplace(name, p);
  };
  add("p3.8xlarge", 4, 3.672, 12.24, 1024, 6400);
  add("g4dn.12xlarge", 4, 1.17, 3.912, 1024, 2700);
  for (auto& t : c.instance_types) t.quota = 10;
  return PerformanceModel(w, c);
}

struct Row {
  std::string catalog;
  int slos = 0;         ///< SLOs where the exact planner finds a plan
  int window_none = 0;  ///< ... and the sliding window finds none
  int window_more = 0;  ///< ... and the window costs more (by more than 1e-9 relative)
  double mean_excess = 0;
  double max_excess = 0;
  std::string worst;
};

bool compare(const std::string& name, const PerformanceModel& model, Row& row) {
  row.catalog = name;
  bool ok = true;
  double sum_excess = 0;
  int with_window = 0;
  for (double loss : {0.7, 0.8, 0.9, 1.0}) {
    for (double deadline = 1200; deadline <= 7200; deadline += 300) {
      const PlanResult exact = plan_exact(model, {loss, deadline});
      if (exact.status != Status::optimal) continue;
      ++row.slos;
      const PlanResult window = plan_sliding_window(model, {loss, deadline});
      if (!window.has_plan()) {
        ++row.window_none;
        continue;
      }
      ++with_window;
      const double excess = window.prediction.cost_usd / exact.prediction.cost_usd - 1;
      ok = ok && excess >= -1e-12;
      sum_excess += excess;
      if (excess > 1e-9) ++row.window_more;
      if (excess > row.max_excess) {
        row.max_excess = excess;
        char buffer[256];
        std::snprintf(buffer, sizeof buffer, "L=%.1f, T=%.0f s: %s $%.2f vs %s $%.2f", loss, deadline,
                      window.cluster.to_string().c_str(), window.prediction.cost_usd, exact.cluster.to_string().c_str(),
                      exact.prediction.cost_usd);
        row.worst = buffer;
      }
    }
  }
  row.mean_excess = with_window > 0 ? sum_excess / with_window : 0;
  return ok;
}

}  // namespace

int main() {
  const PerformanceModel preset(presets::resnet110_workload(), presets::resnet110_catalog());
  std::vector<Row> rows(2);
  bool ok = compare("ResNet-110 preset (5 types)", preset, rows[0]);
  ok = compare("7 types x quota 10", seven_type_model(), rows[1]) && ok;
  std::printf("SLO grid: target loss {0.7, 0.8, 0.9, 1.0} x deadline 1200..7200 s step 300 s; PS charged.\n\n");
  std::printf("| catalog | SLOs with a plan | window finds none | window costs more | mean excess | max excess | worst case |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %d | %d | %d (%.0f%%) | %.2f%% | %.2f%% | %s |\n", r.catalog.c_str(), r.slos, r.window_none,
                r.window_more, r.slos ? 100.0 * r.window_more / r.slos : 0.0, 100 * r.mean_excess, 100 * r.max_excess,
                r.worst.c_str());
  }
  return ok ? 0 : 1;
}
