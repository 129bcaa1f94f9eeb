// SPDX-License-Identifier: MIT
// Fuzzes the training profile reader: training_profile_from_json (what `spotdnn workload build --profile`
// reads). An accepted profile must validate, find each of its measurements by batch and precision, and give
// a workload profile (batch, compute time) that Workload::validate accepts.
#include <spotdnn/io/training_profile_json.hpp>
#include <spotdnn/workload.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto profile = fuzz::read_or_reject([&] {
    return io::training_profile_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz.json"), "profile", "fuzz");
  });
  if (!profile) return 0;
  fuzz::must_succeed("validate", [&] { profile->validate(); });
  fuzz::check(!profile->measurements.empty() && !profile->measured_list().empty(), "an accepted profile without measurements");
  Workload workload;
  workload.name = profile->model;
  workload.param_bytes = profile->param_bytes;
  workload.required_bandwidth_bytes_per_s = 1e8;
  workload.loss_model = {LossForm::seed, {1, 0, 1, 0}};
  for (const ComputeMeasurement& m : profile->measurements) {
    const ComputeMeasurement* found = profile->find(m.precision, m.batch_per_gpu);
    fuzz::check(found == &m, "a measurement that find() does not return");
    const ComputeMeasurement* largest = profile->find(m.precision);
    fuzz::check(largest != nullptr && largest->batch_per_gpu >= m.batch_per_gpu, "find() without a batch is not the largest");
    TypeProfile type;
    type.batch_per_gpu = m.batch_per_gpu;
    type.compute_time_s = m.compute_time_s;
    workload.profiles[profile->instance_type] = type;
    fuzz::must_succeed("a workload of the measurement", [&] { workload.validate(); });
  }
  return 0;
}
