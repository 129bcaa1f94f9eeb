// SPDX-License-Identifier: MIT
// build_workload and the training profile reader (issue 25): a workload from profiles, a loss trace and a
// throughput trace recovers the figures that made them, names every assumed one, and refuses bad input.
#include <cmath>
#include <string>
#include <vector>

#include <spotdnn/fit.hpp>
#include <spotdnn/fit/workload_build.hpp>
#include <spotdnn/io/training_profile_json.hpp>

#include <doctest/doctest.h>

#include "support/error_of.hpp"

#undef CHECK
#define CHECK DOCTEST_CHECK

using namespace spotdnn;
using spotdnn::test::error_of;

namespace {

// The preset's figures (docs/model.md section 3), with each type profiled by its compute time.
constexpr double kParamBytes = 11.5e6;
constexpr double kAlpha1 = 0.8, kBeta1 = -1.92, kRequiredBandwidth = 142e6;
const std::vector<double> kGamma = {876.5, -0.2, 2507.6, 0.5};

TrainingProfile profile_of(const std::string& type, double compute_time_s, int batch = 128) {
  TrainingProfile p;
  p.instance_type = type;
  p.model = "resnet110";
  p.param_bytes = kParamBytes;
  p.device = "cuda";
  p.gpu_name = "Tesla V100";
  p.gpu_count = 1;
  p.measurements = {{batch / 2, "fp32", 20, compute_time_s / 1.8}, {batch, "fp32", 20, compute_time_s}, {batch, "bf16", 20, compute_time_s / 2}};
  return p;
}

const std::vector<TrainingProfile> kProfiles = {profile_of("p3.2xlarge", 0.35), profile_of("g4dn.4xlarge", 0.9)};

// The workload the profiles, the preset's γ and contention describe: what the traces below come from.
Workload truth() {
  Workload w;
  w.name = "resnet110";
  w.param_bytes = kParamBytes;
  w.required_bandwidth_bytes_per_s = kRequiredBandwidth;
  w.contention = {kAlpha1, kBeta1};
  w.loss_model = {LossForm::seed, kGamma};
  for (const TrainingProfile& p : kProfiles) {
    TypeProfile t;
    t.batch_per_gpu = 128;
    t.compute_time_s = p.find("fp32")->compute_time_s;
    w.profiles.emplace(p.instance_type, t);
  }
  return w;
}

Catalog catalog() {
  Catalog c = presets::resnet110_catalog();
  for (InstanceType& t : c.instance_types) t.quota = 64;
  return c;
}

// Clusters from 2 to 16 workers: uncontended and contended (P(n) > 0 from n = 6).
ThroughputTrace throughput_trace() {
  const PerformanceModel model(truth(), catalog());
  ThroughputTrace trace;
  for (const Cluster& c : std::vector<Cluster>{{{"p3.2xlarge", 2}},
                                               {{"g4dn.4xlarge", 4}},
                                               {{"p3.2xlarge", 2}, {"g4dn.4xlarge", 5}},
                                               {{"g4dn.4xlarge", 9}},
                                               {{"p3.2xlarge", 6}, {"g4dn.4xlarge", 6}},
                                               {{"g4dn.4xlarge", 12}},
                                               {{"p3.2xlarge", 16}}}) {
    trace.samples.push_back({c, model.estimate(model.counts_of(c), 0.8).iterations_per_s, 0});
  }
  return trace;
}

LossTable loss_trace() {
  LossTrace trace;
  const std::vector<std::pair<double, double>> runs = {{1, 128}, {2, 256}, {4, 384}, {8, 640}};
  for (const auto& [workers, batch] : runs) {
    for (int i = 0; i <= 40; ++i) {
      const double j = 500.0 * i;
      LossSample s;
      s.run = "n" + std::to_string(int(workers));
      s.workers = workers;
      s.weighted_batch = batch;
      s.iteration = j;
      s.loss = loss_at_iteration<double>(LossForm::seed, j, workers, batch, homogeneous_convergence_coefficient(workers), kGamma.data());
      trace.samples.push_back(s);
    }
  }
  return to_loss_table(trace);
}

double relative_error(double estimate, double truth) { return std::abs(estimate - truth) / std::abs(truth); }

const WorkloadFigure* figure(const WorkloadBuild& build, const std::string& field) {
  for (const WorkloadFigure& f : build.figures) {
    if (f.field == field) return &f;
  }
  return nullptr;
}


}  // namespace

TEST_CASE("workload build recovers the figures that made the profiles and traces, each with its source") {
  const ThroughputTrace throughput = throughput_trace();
  const WorkloadBuild build = build_workload(kProfiles, loss_trace(), &throughput, catalog(), {});
  INFO(build.message);
  REQUIRE(build.ok());
  const Workload& w = build.workload;
  CHECK(w.name == "resnet110");
  CHECK(w.param_bytes == kParamBytes);
  CHECK(w.profiles.at("p3.2xlarge").batch_per_gpu == 128);  // the largest fp32 batch measured
  CHECK(*w.profiles.at("p3.2xlarge").compute_time_s == 0.35);
  CHECK(*w.profiles.at("g4dn.4xlarge").compute_time_s == 0.9);
  for (std::size_t k = 0; k < kGamma.size(); ++k) CHECK(std::abs(w.loss_model.gamma[k] - kGamma[k]) <= 1e-6 * (1 + std::abs(kGamma[k])));
  CHECK(relative_error(w.contention.alpha1, kAlpha1) <= 1e-6);
  CHECK(relative_error(w.contention.beta1, kBeta1) <= 1e-6);
  CHECK(relative_error(w.required_bandwidth_bytes_per_s, kRequiredBandwidth) <= 1e-6);
  CHECK(build.assumed().empty());
  REQUIRE(figure(build, "contention.alpha1") != nullptr);
  CHECK(figure(build, "contention.alpha1")->source == "fitted");
  CHECK(figure(build, "profiles[\"g4dn.4xlarge\"].compute_time_s")->source == "measured");
  CHECK(figure(build, "profiles[\"g4dn.4xlarge\"].compute_time_s")->note.find("Tesla V100") != std::string::npos);
  CHECK(figure(build, "loss_model.gamma[3]")->source == "fitted");
  // The workload plans: the preset's question has an answer on it.
  const PlanResult plan = plan_exact(PerformanceModel(w, catalog()), {0.8, 4000});
  CHECK(plan.has_plan());
}

TEST_CASE("workload build names what it assumes: contention without clusters that identify it") {
  SUBCASE("a throughput trace of uncontended clusters: B_req fitted, contention assumed 0") {
    ThroughputTrace throughput = throughput_trace();
    throughput.samples.resize(3);  // up to 7 workers: P(n) = 0 for the truth and near it
    WorkloadBuildOptions options;
    const WorkloadBuild build = build_workload(kProfiles, loss_trace(), &throughput, catalog(), options);
    INFO(build.message);
    REQUIRE(build.ok());
    CHECK(build.contention_attempt.has_value());
    CHECK(build.assumed() == std::vector<std::string>{"contention.alpha1", "contention.beta1"});
    CHECK(build.message.find("assumed, not measured: contention.alpha1, contention.beta1") != std::string::npos);
    CHECK(figure(build, "required_bandwidth_bytes_per_s")->source == "fitted");
    CHECK(relative_error(build.workload.required_bandwidth_bytes_per_s, kRequiredBandwidth) <= 1e-3);
  }
  SUBCASE("the same trace with B_req given: nothing left to fit, contention assumed 0, B_req held") {
    ThroughputTrace throughput = throughput_trace();
    throughput.samples.resize(3);
    WorkloadBuildOptions options;
    options.required_bandwidth_bytes_per_s = 1.2e8;
    const WorkloadBuild build = build_workload(kProfiles, loss_trace(), &throughput, catalog(), options);
    INFO(build.message);
    REQUIRE(build.ok());
    CHECK(build.contention_attempt.has_value());
    CHECK(!build.throughput_fit.has_value());
    CHECK(build.assumed() == std::vector<std::string>{"contention.alpha1", "contention.beta1"});
    CHECK(build.workload.required_bandwidth_bytes_per_s == 1.2e8);
    CHECK(figure(build, "required_bandwidth_bytes_per_s")->source == "given");
  }
  SUBCASE("per-type batches: each type's measurement at its own batch") {
    WorkloadBuildOptions options;
    options.required_bandwidth_bytes_per_s = 1e8;
    options.batch_per_gpu_by_type = {{"g4dn.4xlarge", 64}};
    const WorkloadBuild build = build_workload(kProfiles, loss_trace(), nullptr, catalog(), options);
    REQUIRE(build.ok());
    CHECK(build.workload.profiles.at("g4dn.4xlarge").batch_per_gpu == 64);
    CHECK(*build.workload.profiles.at("g4dn.4xlarge").compute_time_s == 0.9 / 1.8);
    CHECK(build.workload.profiles.at("p3.2xlarge").batch_per_gpu == 128);
  }
  SUBCASE("no throughput trace: B_req given, contention assumed 0") {
    WorkloadBuildOptions options;
    options.required_bandwidth_bytes_per_s = 1e8;
    options.precision = "bf16";
    options.name = "mine";
    const WorkloadBuild build = build_workload(kProfiles, loss_trace(), nullptr, catalog(), options);
    REQUIRE(build.ok());
    CHECK(build.workload.name == "mine");
    CHECK(build.workload.required_bandwidth_bytes_per_s == 1e8);
    CHECK(figure(build, "required_bandwidth_bytes_per_s")->source == "given");
    CHECK(*build.workload.profiles.at("p3.2xlarge").compute_time_s == 0.35 / 2);
    CHECK(build.assumed().size() == 2);
  }
}

TEST_CASE("workload build with fit_ps_bandwidth: B_ps fitted and carried by the catalog") {
  WorkloadBuildOptions options;
  options.fit_ps_bandwidth = true;
  SUBCASE("a trace that identifies alpha1, beta1, B_req and B_ps: all four fitted") {
    const ThroughputTrace throughput = throughput_trace();
    Catalog given = catalog();
    const double truth_ps = given.parameter_server.bandwidth_bytes_per_s;
    given.parameter_server.bandwidth_bytes_per_s = 2 * truth_ps;  // the NIC's figure; the PS serves half of it
    const WorkloadBuild build = build_workload(kProfiles, loss_trace(), &throughput, given, options);
    INFO(build.message);
    REQUIRE(build.ok());
    CHECK(build.assumed().empty());
    CHECK(relative_error(build.catalog.parameter_server.bandwidth_bytes_per_s, truth_ps) <= 1e-6);
    CHECK(relative_error(build.workload.contention.alpha1, kAlpha1) <= 1e-6);
    CHECK(relative_error(build.workload.required_bandwidth_bytes_per_s, kRequiredBandwidth) <= 1e-6);
    CHECK(figure(build, "catalog.parameter_server.bandwidth_bytes_per_s")->source == "fitted");
  }
  SUBCASE("every cluster contends (a Python PS far below its NIC): the P = 1 model, B_ps fitted, B_req set to it") {
    // Truth: P = 1 at every size, B_ps = 150 MB/s, B_req >= B_ps: T(n) = T_comp + 2·S·n/B_ps.
    Workload contended = truth();
    contended.contention = {0.0, 1.0};
    Catalog made = catalog();
    made.parameter_server.bandwidth_bytes_per_s = 1.5e8;
    contended.required_bandwidth_bytes_per_s = 1.5e8;
    const PerformanceModel model(contended, made);
    ThroughputTrace throughput;
    for (const Cluster& c : std::vector<Cluster>{{{"p3.2xlarge", 1}}, {{"p3.2xlarge", 2}}, {{"g4dn.4xlarge", 2}},
                                                 {{"p3.2xlarge", 2}, {"g4dn.4xlarge", 2}}}) {
      throughput.samples.push_back({c, model.estimate(model.counts_of(c), 0.8).iterations_per_s, 0});
    }
    const WorkloadBuild build = build_workload(kProfiles, loss_trace(), &throughput, catalog(), options);
    INFO(build.message);
    REQUIRE(build.ok());
    CHECK(build.contention_attempt.has_value());
    CHECK(build.assumed() == std::vector<std::string>{"contention.alpha1", "contention.beta1", "required_bandwidth_bytes_per_s"});
    CHECK(build.workload.contention.alpha1 == 0.0);
    CHECK(build.workload.contention.beta1 == 1.0);
    CHECK(relative_error(build.catalog.parameter_server.bandwidth_bytes_per_s, 1.5e8) <= 1e-6);
    CHECK(build.workload.required_bandwidth_bytes_per_s == build.catalog.parameter_server.bandwidth_bytes_per_s);
    CHECK(figure(build, "contention.alpha1")->note.find("every cluster contends") != std::string::npos);
    REQUIRE(build.throughput_fit.has_value());  // its report shows the B_req the workload holds
    CHECK(build.throughput_fit->find("required_bandwidth_bytes_per_s")->value == build.workload.required_bandwidth_bytes_per_s);
    // The built pair predicts the clusters it came from, and one it did not see.
    const PerformanceModel rebuilt(build.workload, build.catalog);
    const Cluster unseen{{"p3.2xlarge", 3}, {"g4dn.4xlarge", 2}};
    CHECK(relative_error(rebuilt.estimate(rebuilt.counts_of(unseen), 0.8).iterations_per_s,
                         model.estimate(model.counts_of(unseen), 0.8).iterations_per_s) <= 1e-6);
    // One cluster size fits both limiting models equally: no contention is kept, and the note says why.
    ThroughputTrace one_size;
    for (const ThroughputSample& sample : throughput.samples) {
      if (sample.cluster.total_workers() == 2) one_size.samples.push_back(sample);
    }
    REQUIRE(one_size.samples.size() == 2);
    const WorkloadBuild tie = build_workload(kProfiles, loss_trace(), &one_size, catalog(), options);
    REQUIRE(tie.ok());
    CHECK(tie.workload.contention.beta1 == 0.0);
    CHECK(figure(tie, "contention.alpha1")->note.find("one cluster size fits both equally") != std::string::npos);
    CHECK(figure(tie, "catalog.parameter_server.bandwidth_bytes_per_s")->source == "given");
    // Without fit_ps_bandwidth the catalog's B_ps is held: only the no-contention model has anything to fit.
    const WorkloadBuild held = build_workload(kProfiles, loss_trace(), &throughput, catalog(), {});
    REQUIRE(held.ok());
    CHECK(held.workload.contention.beta1 == 0.0);
    CHECK(held.catalog.parameter_server.bandwidth_bytes_per_s == catalog().parameter_server.bandwidth_bytes_per_s);
  }
  SUBCASE("uncontended clusters: the P = 0 model fits better, B_ps stays the catalog's") {
    ThroughputTrace throughput = throughput_trace();
    throughput.samples.resize(3);
    const WorkloadBuild build = build_workload(kProfiles, loss_trace(), &throughput, catalog(), options);
    INFO(build.message);
    REQUIRE(build.ok());
    CHECK(build.workload.contention.beta1 == 0.0);
    CHECK(relative_error(build.workload.required_bandwidth_bytes_per_s, kRequiredBandwidth) <= 1e-3);
    CHECK(figure(build, "catalog.parameter_server.bandwidth_bytes_per_s")->source == "given");
    CHECK(build.catalog.parameter_server.bandwidth_bytes_per_s == catalog().parameter_server.bandwidth_bytes_per_s);
    CHECK(figure(build, "contention.alpha1")->note.find("with every cluster contending") != std::string::npos);
  }
  SUBCASE("uncontended clusters with B_req held: the no-contention model, nothing fitted, B_ps the catalog's") {
    ThroughputTrace throughput = throughput_trace();
    throughput.samples.resize(3);
    options.required_bandwidth_bytes_per_s = kRequiredBandwidth;
    const WorkloadBuild build = build_workload(kProfiles, loss_trace(), &throughput, catalog(), options);
    INFO(build.message);
    REQUIRE(build.ok());
    CHECK(build.workload.contention.beta1 == 0.0);
    CHECK(!build.throughput_fit.has_value());  // not the rejected full-contention fit
    CHECK(build.assumed() == std::vector<std::string>{"contention.alpha1", "contention.beta1"});
    CHECK(figure(build, "catalog.parameter_server.bandwidth_bytes_per_s")->source == "given");
    CHECK(figure(build, "required_bandwidth_bytes_per_s")->source == "given");
    CHECK(figure(build, "contention.alpha1")->note.find("with full contention") != std::string::npos);
    CHECK(build.catalog.parameter_server.bandwidth_bytes_per_s == catalog().parameter_server.bandwidth_bytes_per_s);
  }
}

TEST_CASE("workload build: a loss trace that cannot identify gamma is a status with the reason, not a workload") {
  LossTrace one_batch;
  for (int i = 0; i <= 20; ++i) one_batch.samples.push_back({"n1", 1, 128, double(i * 100), 3.0 / (1 + i), std::nullopt, 0});
  const ThroughputTrace throughput = throughput_trace();
  const WorkloadBuild build = build_workload(kProfiles, to_loss_table(one_batch), &throughput, catalog(), {});
  CHECK(build.status == FitStatus::not_identifiable);
  CHECK(build.message.find("the loss fit did not answer") != std::string::npos);
}

TEST_CASE("workload build refuses bad input, naming the profile and field") {
  const ThroughputTrace throughput = throughput_trace();
  const LossTable loss = loss_trace();
  auto build = [&](std::vector<TrainingProfile> profiles, WorkloadBuildOptions options = {}, const ThroughputTrace* t = nullptr) {
    return error_of([&] { (void)build_workload(profiles, loss, t, catalog(), options); });
  };
  CHECK(build({}, {}, &throughput).find("give at least one training profile") != std::string::npos);
  TrainingProfile other = kProfiles[1];
  other.model = "resnet20";
  CHECK(build({kProfiles[0], other}, {}, &throughput).find("profiles[1] = g4dn.4xlarge: resnet20") != std::string::npos);
  CHECK(build({kProfiles[0], kProfiles[0]}, {}, &throughput).find("profiles[1].instance_type = \"p3.2xlarge\": profiled twice") != std::string::npos);
  TrainingProfile unknown = kProfiles[0];
  unknown.instance_type = "x9.huge";
  CHECK(build({unknown}, {}, &throughput).find("the catalog has no such type") != std::string::npos);
  WorkloadBuildOptions batch;
  batch.batch_per_gpu = 256;
  CHECK(build(kProfiles, batch, &throughput).find("no measurement at batch 256 fp32 (it has: batch 64 fp32, batch 128 fp32, batch 128 bf16)") !=
        std::string::npos);
  WorkloadBuildOptions by_type;
  by_type.batch_per_gpu_by_type = {{"p2.8xlarge", 64}};
  CHECK(build(kProfiles, by_type, &throughput).find("options.batch_per_gpu_by_type = \"p2.8xlarge\": no profile of this type") !=
        std::string::npos);
  by_type.batch_per_gpu_by_type = {{"p3.2xlarge", 0}};
  CHECK(build(kProfiles, by_type, &throughput).find("batch_per_gpu_by_type[\"p3.2xlarge\"] = 0") != std::string::npos);
  WorkloadBuildOptions precision;
  precision.precision = "fp8";
  CHECK(build(kProfiles, precision, &throughput).find("options.precision = \"fp8\"") != std::string::npos);
  CHECK(build(kProfiles, {}, nullptr).find("give one, or give B_req") != std::string::npos);
  TrainingProfile twice = kProfiles[0];
  twice.measurements.push_back(twice.measurements.front());
  CHECK(build({twice}, {}, &throughput).find("measurements[3] = batch 64 fp32: measured twice") != std::string::npos);
}

TEST_CASE("the training profile reader checks the keys it reads and ignores the others") {
  const std::string good = R"({"kind": "spotdnn.profile", "version": 1, "instance_type": "g4dn.xlarge", "model": "resnet20",
    "param_bytes": 1078888, "gradient_bytes": 1078888, "device": "cuda", "gpu_name": "Tesla T4", "gpu_count": 1,
    "torch_version": "2.11.0+cu128", "skipped": [{"precision": "tf32", "reason": "compute capability 7.5"}],
    "measurements": [{"batch_per_gpu": 128, "precision": "fp32", "iterations": 20, "compute_time_s": 0.0412,
                      "samples_per_s": 3106.8, "warmup_iterations": 5}]})";
  const TrainingProfile p = io::training_profile_from_json(io::parse_json(good, "p.json"));
  CHECK(p.instance_type == "g4dn.xlarge");
  CHECK(p.gpu_name == "Tesla T4");
  CHECK(p.framework == "torch 2.11.0+cu128");
  REQUIRE(p.measurements.size() == 1);
  CHECK(p.measurements[0].compute_time_s == 0.0412);

  auto error = [](const std::string& text) {
    return error_of([&] { (void)io::training_profile_from_json(io::parse_json(text, "p.json")); });
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return error(text.replace(at, from.size(), to));
  };
  CHECK(with(R"("kind": "spotdnn.profile")", R"("kind": "spotdnn.serverless_profile")").find("profile.kind = \"spotdnn.serverless_profile\"") != std::string::npos);
  CHECK(with(R"("version": 1)", R"("version": 2)").find("profile.version = 2: this spotdnn reads version 1") != std::string::npos);
  CHECK(with(R"("device": "cuda")", R"("device": "tpu")").find("profile.device = \"tpu\"") != std::string::npos);
  CHECK(with(R"("param_bytes": 1078888,)", R"("param_bytes": -1,)").find("profile.param_bytes") != std::string::npos);
  CHECK(with(R"("batch_per_gpu": 128)", R"("batch_per_gpu": 0)").find("profile.measurements[0].batch_per_gpu = 0") != std::string::npos);
  CHECK(with(R"("precision": "fp32")", R"("precision": "int8")").find("measurements[0].precision = \"int8\"") != std::string::npos);
  CHECK(with(R"("compute_time_s": 0.0412)", R"("compute_time_s": 0)").find("measurements[0].compute_time_s") != std::string::npos);
  CHECK(with(R"("compute_time_s": 0.0412)", R"("compute_time_s": "fast")").find("expected a number") != std::string::npos);
  CHECK(with(R"("measurements": [)", R"("measurements": 5, "x": [)").find("profile.measurements = 5: expected a JSON array") != std::string::npos);
  CHECK(with(R"("instance_type": "g4dn.xlarge")", R"("instance_type": "")").find("instance_type") != std::string::npos);
  CHECK(with(R"("gpu_count": 1)", R"("gpu_count": 1000)").find("profile.gpu_count = 1000") != std::string::npos);
}
