// SPDX-License-Identifier: MIT
// Estimated profiles: which catalog types lack one, the GPU-peak scaling of docs/model.md eq. (10) checked by
// hand, the errors, measured profiles never replaced, and estimated_from through JSON.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include <spotdnn/io/json.hpp>
#include <spotdnn/model/gpu_peak_throughput.hpp>
#include <spotdnn/model/performance_model.hpp>
#include <spotdnn/model/prediction.hpp>
#include <spotdnn/model/profile_estimate.hpp>
#include <spotdnn/presets.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;

namespace {

// The preset's S = 11.5 MB and B_req = 142 MB/s: 2·S/B_req = 23/142 s; B_pcie = 10 GB/s: 2·g·S/B_pcie = g·0.0023 s.
constexpr double kNetworkS = 23.0 / 142.0;
constexpr double kPciePerGpuS = 0.0023;
// p3.2xlarge (1 V100): T_prof = 1·1024/1885 s, so T_comp = T_prof − 2·S/B_req − 2·1·S/B_pcie (eq. 3).
constexpr double kP3ComputeS = 1024.0 / 1885.0 - kNetworkS - kPciePerGpuS;

InstanceType gpu_type(const std::string& name, int gpus, const std::string& gpu_model) {
  InstanceType type;
  type.name = name;
  type.gpus = gpus;
  type.price_usd_per_hour = 0.5;
  type.quota = 4;
  type.gpu_model = gpu_model;
  return type;
}

/// The preset catalog plus g4dn.xlarge (1 T4), p2.16xlarge (16 K80 GPUs) and p5.48xlarge (8 H100).
Catalog fresh_catalog() {
  Catalog catalog = presets::resnet110_catalog();
  catalog.instance_types.push_back(gpu_type("g4dn.xlarge", 1, "T4"));
  catalog.instance_types.push_back(gpu_type("p2.16xlarge", 16, "K80"));
  catalog.instance_types.push_back(gpu_type("p5.48xlarge", 8, "H100"));
  return catalog;
}

}  // namespace

TEST_CASE("the GPU peak table gives every model a positive figure and a cited datasheet URL") {
  for (const GpuPeakThroughput& entry : kGpuPeakThroughputs) {
    INFO(entry.gpu_model);
    CHECK(entry.fp32_tflops > 0);
    CHECK(std::string(entry.source).find("datasheet") != std::string::npos);
    CHECK(std::string(entry.source).find("https://") != std::string::npos);
  }
  // Per GPU as AWS counts GPUs: half a K80 board's 8.73 TFLOPS.
  CHECK(gpu_peak_fp32_tflops("K80") == doctest::Approx(8.73 / 2).epsilon(1e-12));
  CHECK(gpu_peak_fp32_tflops("V100") == 15.7);
  CHECK(gpu_peak_fp32_tflops("T4") == 8.1);
  CHECK(find_gpu_peak_throughput("v100") == nullptr);  // AWS's spelling, exactly
  const std::string error = test::error_of([] { (void)gpu_peak_fp32_tflops("Radeon Pro V520"); });
  CHECK(error.find("\"Radeon Pro V520\"") != std::string::npos);
  CHECK(error.find("known: K80, M60, T4") != std::string::npos);
}

TEST_CASE("types_without_profile lists the catalog types the workload lacks in catalog order") {
  const Workload workload = presets::resnet110_workload();
  CHECK(types_without_profile(workload, presets::resnet110_catalog()).empty());
  CHECK(types_without_profile(workload, fresh_catalog()) == std::vector<std::string>{"g4dn.xlarge", "p2.16xlarge", "p5.48xlarge"});
}

TEST_CASE("an estimate from V100 to T4 scales the compute time by 15.7 over 8.1 and keeps the per-GPU batch") {
  const TypeProfile t4 = estimate_profile(presets::resnet110_workload(), fresh_catalog(), "p3.2xlarge", "g4dn.xlarge");
  CHECK(t4.estimated_from == "p3.2xlarge");
  CHECK(t4.batch_per_gpu == 1024);
  REQUIRE(t4.iteration_time_s.has_value());
  CHECK_FALSE(t4.compute_time_s.has_value());
  // By hand: T_comp = (1024/1885 − 23/142 − 0.0023)·15.7/8.1 = 0.378964…·1.938272… = 0.734536… s, so the
  // estimated T_prof = 0.734536 + 0.161972 + 0.0023 = 0.898807 s (the measured g4dn.4xlarge T4: 1024/750 = 1.365 s).
  const double compute_s = kP3ComputeS * 15.7 / 8.1;
  CHECK(compute_s == doctest::Approx(0.734536).epsilon(1e-5));
  CHECK(*t4.iteration_time_s == doctest::Approx(0.898807).epsilon(1e-5));
  CHECK(*t4.iteration_time_s == doctest::Approx(compute_s + kNetworkS + kPciePerGpuS).epsilon(1e-12));
  // The instance's compute time, not its iteration time, carries the ratio: the transfers do not scale.
  CHECK((*t4.iteration_time_s - kNetworkS - kPciePerGpuS) / kP3ComputeS == doctest::Approx(15.7 / 8.1).epsilon(1e-12));
}

TEST_CASE("an estimate for a many-GPU type scales one GPU's time and charges its own PCIe transfers") {
  // p2.16xlarge: 16 K80 GPUs of 4.365 TFLOPS each; the same 1024 per GPU, each GPU 15.7/4.365 times slower.
  const TypeProfile k80 = estimate_profile(presets::resnet110_workload(), fresh_catalog(), "p3.2xlarge", "p2.16xlarge");
  REQUIRE(k80.iteration_time_s.has_value());
  CHECK(*k80.iteration_time_s == doctest::Approx(kP3ComputeS * 15.7 / 4.365 + kNetworkS + 16 * kPciePerGpuS).epsilon(1e-12));
  // From g3.8xlarge (2 M60 GPUs, T_prof = 2·512/1018 s) to g4dn.4xlarge's T4: 4.825/8.1.
  const double m60_compute_s = 2 * 512.0 / 1018.0 - kNetworkS - 2 * kPciePerGpuS;
  const TypeProfile t4 = estimate_profile(presets::resnet110_workload(), fresh_catalog(), "g3.8xlarge", "g4dn.xlarge");
  CHECK(t4.batch_per_gpu == 512);
  CHECK(*t4.iteration_time_s == doctest::Approx(m60_compute_s * 4.825 / 8.1 + kNetworkS + kPciePerGpuS).epsilon(1e-12));
}

TEST_CASE("a profile given by compute time gives an estimate by compute time") {
  Workload workload = presets::resnet110_workload();
  workload.profiles["p3.2xlarge"] = TypeProfile{256, std::nullopt, 0.2, ""};
  const TypeProfile h100 = estimate_profile(workload, fresh_catalog(), "p3.2xlarge", "p5.48xlarge");
  REQUIRE(h100.compute_time_s.has_value());
  CHECK_FALSE(h100.iteration_time_s.has_value());
  CHECK(*h100.compute_time_s == doctest::Approx(0.2 * 15.7 / 67.0).epsilon(1e-12));
  CHECK(h100.batch_per_gpu == 256);
}

TEST_CASE("estimate_profiles fills only missing profiles and the model can plan with them") {
  Workload workload = presets::resnet110_workload();
  workload.profiles["p2.16xlarge"] = TypeProfile{512, 9.0, std::nullopt, "g3.8xlarge"};  // an earlier estimate stays
  const Workload estimated = estimate_profiles(workload, fresh_catalog(), "p3.2xlarge");
  for (const auto& entry : presets::resnet110_workload().profiles) {
    const std::string& type = entry.first;
    const TypeProfile& profile = entry.second;
    INFO(type);
    const TypeProfile& kept = estimated.profiles.at(type);
    CHECK(kept.estimated_from.empty());
    CHECK(kept.iteration_time_s == profile.iteration_time_s);
    CHECK(kept.batch_per_gpu == profile.batch_per_gpu);
  }
  CHECK(estimated.profiles.at("p2.16xlarge").estimated_from == "g3.8xlarge");
  CHECK(*estimated.profiles.at("p2.16xlarge").iteration_time_s == 9.0);
  CHECK(estimated.profiles.at("g4dn.xlarge").estimated_from == "p3.2xlarge");
  CHECK(estimated.profiles.at("p5.48xlarge").estimated_from == "p3.2xlarge");
  CHECK(estimated_profiles(estimated) ==
        std::map<std::string, std::string>{{"g4dn.xlarge", "p3.2xlarge"}, {"p2.16xlarge", "g3.8xlarge"}, {"p5.48xlarge", "p3.2xlarge"}});
  CHECK(estimated_profiles(estimated, Cluster::parse("p3.2xlarge=1,p5.48xlarge=2")) ==
        std::map<std::string, std::string>{{"p5.48xlarge", "p3.2xlarge"}});

  // H100 is 4.3 times a V100: scaling the whole iteration time would leave less than the transfers take
  // (0.543/4.27 < 23/142 s); scaling the compute time keeps it positive, so the model accepts it.
  const PerformanceModel model(estimated, fresh_catalog());
  CHECK(model.unprofiled_types().empty());
  const Prediction p = predict(model, Cluster::parse("p5.48xlarge=1"), 0.8);
  CHECK(p.status == Status::feasible);
  CHECK(p.per_type.at(0).iteration_time_s == doctest::Approx(kP3ComputeS * 15.7 / 67.0 + kNetworkS + 8 * kPciePerGpuS).epsilon(1e-12));
}

TEST_CASE("estimate_profiles refuses a source that is unknown, unprofiled or itself estimated, naming it") {
  Workload workload = presets::resnet110_workload();
  const Catalog catalog = fresh_catalog();
  std::string error = test::error_of([&] { (void)estimate_profiles(workload, catalog, "x9.huge"); });
  CHECK(error.find("from_type = \"x9.huge\": not in the catalog (known: p3.2xlarge") != std::string::npos);
  error = test::error_of([&] { (void)estimate_profiles(workload, catalog, "g4dn.xlarge"); });
  CHECK(error.find("from_type = \"g4dn.xlarge\"") != std::string::npos);
  CHECK(error.find("has no profile for it") != std::string::npos);
  workload.profiles["g4dn.xlarge"] = TypeProfile{1024, 1.0, std::nullopt, "p3.2xlarge"};
  error = test::error_of([&] { (void)estimate_profiles(workload, catalog, "g4dn.xlarge"); });
  CHECK(error.find("itself estimated (from p3.2xlarge)") != std::string::npos);
}

TEST_CASE("estimate_profiles leaves a type whose GPU peak is unknown unprofiled, and refuses such a source, naming both") {
  const Workload workload = presets::resnet110_workload();
  Catalog catalog = fresh_catalog();
  catalog.instance_types.push_back(gpu_type("g4ad.xlarge", 1, "Radeon Pro V520"));
  // The other missing types are estimated; the Radeon type stays without a profile, and says why.
  const Workload estimated = estimate_profiles(workload, catalog, "p3.2xlarge");
  CHECK(estimated.profiles.count("g4ad.xlarge") == 0);
  CHECK(types_without_profile(estimated, catalog) == std::vector<std::string>{"g4ad.xlarge"});
  CHECK(why_not_estimable(catalog.at("g4ad.xlarge")) == "g4ad.xlarge: no published peak throughput known for its GPU \"Radeon Pro V520\"");
  CHECK(why_not_estimable(catalog.at("p3.2xlarge")).empty());
  std::string error = test::error_of([&] { (void)estimate_profile(workload, catalog, "p3.2xlarge", "g4ad.xlarge"); });
  CHECK(error.find("catalog type \"g4ad.xlarge\".gpu_model = \"Radeon Pro V520\"") != std::string::npos);
  CHECK(error.find("known: K80") != std::string::npos);

  Catalog unnamed = fresh_catalog();
  unnamed.instance_types[0].gpu_model.clear();  // p3.2xlarge, the source
  error = test::error_of([&] { (void)estimate_profiles(workload, unnamed, "p3.2xlarge"); });
  CHECK(error.find("catalog type \"p3.2xlarge\".gpu_model = \"\": unknown") != std::string::npos);
  // A source without a GPU model is refused even when no type lacks a profile.
  Catalog preset = presets::resnet110_catalog();
  preset.instance_types[0].gpu_model.clear();
  CHECK(test::error_of([&] { (void)estimate_profiles(workload, preset, "p3.2xlarge"); }).find("gpu_model") != std::string::npos);
}

TEST_CASE("estimated_from survives a JSON round trip and predictions say which per-type profile is estimated") {
  const Workload estimated = estimate_profiles(presets::resnet110_workload(), fresh_catalog(), "p3.2xlarge");
  const Workload back = io::workload_from_json(io::Json::parse(io::to_json(estimated).dump()));
  CHECK(back.profiles.at("g4dn.xlarge").estimated_from == "p3.2xlarge");
  CHECK(back.profiles.at("p3.2xlarge").estimated_from.empty());
  CHECK(*back.profiles.at("g4dn.xlarge").iteration_time_s == *estimated.profiles.at("g4dn.xlarge").iteration_time_s);
  CHECK(io::to_json(back) == io::to_json(estimated));

  const PerformanceModel model(estimated, fresh_catalog());
  const Prediction p = predict(model, Cluster::parse("p3.2xlarge=1,g4dn.xlarge=2"), 0.8);
  const io::Json with = io::to_json(p, &model.workload());
  REQUIRE(with.at("per_type").size() == 2);
  CHECK(with.at("per_type")[0].at("type") == "p3.2xlarge");
  CHECK(with.at("per_type")[0].at("profile_estimated_from").is_null());
  CHECK(with.at("per_type")[1].at("profile_estimated_from") == "p3.2xlarge");
  CHECK_FALSE(io::to_json(p).at("per_type")[1].contains("profile_estimated_from"));
}

TEST_CASE("the preset catalog names each type's GPU model, vCPUs and memory") {
  const Catalog catalog = presets::resnet110_catalog();
  const std::vector<std::string> models = {"V100", "T4", "M60", "M60", "K80"};
  const std::vector<int> vcpus = {8, 16, 32, 64, 32};
  REQUIRE(catalog.instance_types.size() == 5);
  for (std::size_t k = 0; k < 5; ++k) {
    INFO(catalog.instance_types[k].name);
    CHECK(catalog.instance_types[k].gpu_model == models[k]);
    CHECK(catalog.instance_types[k].vcpus == vcpus[k]);
    CHECK(catalog.instance_types[k].memory_mib > 0);
    CHECK(find_gpu_peak_throughput(catalog.instance_types[k].gpu_model) != nullptr);
  }
}
