// SPDX-License-Identifier: MIT
// In-sample calibration on real traces (tests/fixtures/traces: AWS r5.16xlarge in three zones of
// us-east-1 and GCP c3-highcpu-88 in four zones, skypilot-org/spot-traces, "Can't Be Late", NSDI 2024; the
// Bamboo spot groups' events, NSDI 2023), every pool read as p3.2xlarge for the preset's ResNet-110: the
// model fitted to a trace against replaying that trace, with same-type replacement in the same pool, at
// deadlines of 1.1x to 3x the training time. On the preemption traces, one worker on each and several
// spread over a folder's zones (the three AWS zones, each pair of them, the four GCP zones): within
// +-0.05. On the spot groups' 11-hour event traces: closer than the constant-rate model, and where the error
// passes 0.05, the model's P lies inside the replay's interval over its disjoint windows (the trace cannot
// tell it apart from the replayed P; docs/revocations.md gives the figures).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <spotdnn/io/trace_readers.hpp>
#include <spotdnn/presets.hpp>
#include <spotdnn/revocation/fit_revocations.hpp>
#include <spotdnn/revocation/interruption.hpp>
#include <spotdnn/revocation/replay.hpp>
#include <spotdnn/revocation/simulate.hpp>

using namespace spotdnn;

namespace {

const std::string kTraces = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/traces/";

/// The preset with p3.2xlarge's quota raised: the traces' pools are replayed as p3.2xlarge workers.
PerformanceModel calibration_model() {
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) {
    if (t.name == "p3.2xlarge") t.quota = 8;
  }
  return PerformanceModel(presets::resnet110_workload(), c);
}

std::vector<PoolTrace> read_as_p3(const std::vector<std::string>& files) {
  io::TraceFileOptions o;
  o.type = "p3.2xlarge";
  std::vector<std::string> paths;
  for (const std::string& f : files) paths.push_back(kTraces + f);
  if (files.front().find(".csv") != std::string::npos) {
    o.kind = TraceKind::events;
    o.zone = "unstated-zone";  // Bamboo's traces do not say where they were taken
  } else {
    o.kind = TraceKind::lifetimes;
  }
  return io::read_trace_files(paths, o);
}

struct Comparison {
  double replayed = 0;
  double fitted = 0;
  double constant_rate = 0;
  int windows = 0;
  double replayed_lower = 0, replayed_upper = 1;  ///< Wilson interval over the disjoint windows
};

/// Replays `workers` p3.2xlarge workers on `traces` and simulates the same cluster under the model fitted
/// to them (workers spread over the pools in the traces' order, as replay spreads them) and under the
/// constant-rate model at the pools' own preemptions per instance-hour.
Comparison compare(const PerformanceModel& model, const std::vector<PoolTrace>& traces, const RevocationModel& fitted_model,
                   int workers, double deadline_s) {
  const double target = 0.8;
  Cluster cluster;
  cluster.set("p3.2xlarge", workers);
  const std::vector<int> counts = model.counts_of(cluster);
  ReplayOptions r;
  r.deadline_s = deadline_s;
  r.join_delay_s = 120;
  const ReplayResult replayed = replay(model, counts, target, traces, r);

  const auto shared = std::make_shared<const RevocationModel>(fitted_model);
  FittedRevocations fitted;
  fitted.model = shared;
  fitted.type_pools.assign(model.worker_types().size(), {});
  double events = 0, exposure_s = 0;
  const std::size_t k = *model.worker_type_index("p3.2xlarge");
  for (const PoolTrace& t : traces) {
    const PoolModel* p = shared->find(t.pool.type, t.pool.zone);
    REQUIRE(p != nullptr);
    fitted.type_pools[k].push_back(int(p - shared->pools.data()));
    events += p->preemptions;
    exposure_s += p->exposure_s;
  }
  SimulateOptions s;
  s.scenarios = 10000;
  s.seed = 7;
  s.join_delay_s = 120;
  s.replacement = Replacement::same_type;
  InterruptionOptions constant;
  constant.hazard_overrides = {{"p3.2xlarge", events / (exposure_s / 3600)}};
  const InterruptionModel interruption(model, constant);
  const SimulationResult old_model = simulate(model, interruption, cluster, target, deadline_s, s);
  s.revocations = fitted;
  const SimulationResult new_model = simulate(model, interruption, cluster, target, deadline_s, s);
  return {replayed.meets_deadline.estimate, new_model.meets_deadline.estimate, old_model.meets_deadline.estimate, replayed.windows,
          replayed.meets_deadline.lower, replayed.meets_deadline.upper};
}

/// Errors of the two models against the replay over the deadline factors of one case.
struct CaseErrors {
  double fitted_max = 0, constant_max = 0, fitted_sum = 0, constant_sum = 0;
  int comparisons = 0;
};

/// How compare_case holds the fitted model to the replay.
enum class Hold {
  within_0_05,           ///< |fitted − replayed| <= 0.05
  within_0_05_or_interval  ///< that, or the fitted P inside the replay's interval over its disjoint windows
};

/// Compares the models with the replay of `workers` on `files` (fitted on exactly those files) at deadlines
/// of 1.1, 1.5, 2 and 3 times the training time, and checks the fitted model's error as `hold` says.
CaseErrors compare_case(const std::vector<std::string>& files, int workers, Hold hold) {
  const PerformanceModel model = calibration_model();
  const std::vector<PoolTrace> traces = read_as_p3(files);
  const RevocationModel fitted = fit_revocations(traces);
  Cluster cluster;
  cluster.set("p3.2xlarge", workers);
  const double training_s = model.estimate(model.counts_of(cluster), 0.8, {}).training_time_s;
  CaseErrors e;
  for (const double factor : {1.1, 1.5, 2.0, 3.0}) {
    const Comparison c = compare(model, traces, fitted, workers, factor * training_s);
    INFO(files.front() << " (" << files.size() << " files), " << workers << " workers, deadline " << factor
                       << "x: replayed " << c.replayed << " over " << c.windows << " windows, fitted model " << c.fitted
                       << ", constant-rate " << c.constant_rate << "; replay interval [" << c.replayed_lower << ", "
                       << c.replayed_upper << "]");
    CHECK(c.windows > 200);
    const bool close = std::abs(c.fitted - c.replayed) <= 0.05;
    if (hold == Hold::within_0_05) {
      CHECK(close);
    } else {
      CHECK((close || (c.fitted >= c.replayed_lower && c.fitted <= c.replayed_upper)));
    }
    e.fitted_max = std::max(e.fitted_max, std::abs(c.fitted - c.replayed));
    e.constant_max = std::max(e.constant_max, std::abs(c.constant_rate - c.replayed));
    e.fitted_sum += std::abs(c.fitted - c.replayed);
    e.constant_sum += std::abs(c.constant_rate - c.replayed);
    ++e.comparisons;
  }
  return e;
}

const std::vector<std::string> kAws = {"preemption/1-node/aws-04-19-2023/us-east-1b_intel_64.json",
                                       "preemption/1-node/aws-04-19-2023/us-east-1c_intel_64.json",
                                       "preemption/1-node/aws-04-19-2023/us-east-1d_intel_64.json"};
const std::vector<std::string> kGcp = {"preemption/1-node/gcp-04-30-2023/us-central1-a_c3-88.json",
                                       "preemption/1-node/gcp-04-30-2023/us-central1-b_c3-88.json",
                                       "preemption/1-node/gcp-04-30-2023/us-central1-c_c3-88.json",
                                       "preemption/1-node/gcp-04-30-2023/us-east1-b_c3-88.json"};

}  // namespace

TEST_CASE("on each preemption trace, one worker: the fitted model reproduces the replayed P within 0.05") {
  double constant_max = 0;
  for (const std::vector<std::string>* folder : {&kAws, &kGcp}) {
    for (const std::string& file : *folder) constant_max = std::max(constant_max, compare_case({file}, 1, Hold::within_0_05).constant_max);
  }
  // The constant-rate model at the pool's own mean rate misses by far more (it lets a replacement arrive
  // at the notice and join 2 minutes later; real replacements wait minutes to hours): what the fit is for.
  CHECK(constant_max > 0.2);
}

TEST_CASE("several workers spread over a preemption folder's zones: the fitted model reproduces the replayed P within 0.05") {
  // The zones of a region go through calm and stormy periods together (MarketRegimes): without them the
  // three us-east-1 zones missed by 0.068 at 1.1x and 0.055 at 1.5x.
  CaseErrors all;
  const std::vector<std::pair<std::vector<std::string>, int>> cases = {
      {kAws, 3}, {{kAws[0], kAws[1]}, 2}, {{kAws[0], kAws[2]}, 2}, {{kAws[1], kAws[2]}, 2}, {kGcp, 4}};
  for (const auto& [files, workers] : cases) {
    const CaseErrors e = compare_case(files, workers, Hold::within_0_05);
    all.constant_max = std::max(all.constant_max, e.constant_max);
  }
  CHECK(all.constant_max > 0.2);
}

TEST_CASE("workers of one spot group: closer than the constant-rate model, and inside the replay's interval where the error passes 0.05") {
  // An 11-hour trace holds 13 to 26 disjoint windows of these deadlines: the replayed P itself is known to
  // about +-0.2 (docs/revocations.md, "Calibration").
  CaseErrors all;
  for (const auto& [file, workers] : {std::pair{"events/p3-trace.csv", 4}, std::pair{"events/p3-trace.csv", 8},
                                      std::pair{"events/g4dn-trace.csv", 4}, std::pair{"events/g4dn-trace.csv", 8}}) {
    const CaseErrors e = compare_case({file}, workers, Hold::within_0_05_or_interval);
    all.fitted_sum += e.fitted_sum;
    all.constant_sum += e.constant_sum;
    all.comparisons += e.comparisons;
    all.fitted_max = std::max(all.fitted_max, e.fitted_max);
  }
  INFO("mean absolute error: fitted " << all.fitted_sum / all.comparisons << ", constant-rate " << all.constant_sum / all.comparisons
                                      << "; largest fitted error " << all.fitted_max);
  CHECK(all.fitted_sum < 0.5 * all.constant_sum);
}
