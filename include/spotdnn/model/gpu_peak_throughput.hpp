#pragma once
// SPDX-License-Identifier: MIT
/// @file model/gpu_peak_throughput.hpp Published peak FP32 throughput per GPU, by the GPU name AWS's
/// describe-instance-types gives (GpuInfo.Gpus[].Name), for estimated profiles (docs/model.md eq. (10)).
///
/// "Per GPU" counts GPUs as AWS does: a p2 "GPU" is one GK210 chip of a two-chip Tesla K80 board, a g3
/// "GPU" one of the two GM204 chips of a Tesla M60 board, so those figures are half the board's. Figures
/// are the vendor's peak (boost clock, no sparsity); real training reaches a workload-dependent fraction
/// of them, which is why a profile scaled by them is only an estimate.

#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"

namespace spotdnn {

/// One GPU model's published peak single-precision throughput and where it is published.
struct GpuPeakThroughput {
  std::string_view gpu_model;  ///< AWS's GpuInfo.Gpus[].Name, e.g. "V100"
  double fp32_tflops;          ///< peak FP32 of one GPU as AWS counts GPUs (10^12 FLOP/s)
  std::string_view source;     ///< the vendor datasheet: its name and URL, and how the figure follows from it
};

/// The GPU models spotdnn knows, by AWS's name.
inline constexpr GpuPeakThroughput kGpuPeakThroughputs[] = {
    {"K80", 4.365,
     "NVIDIA Tesla K80 datasheet: 8.73 TFLOPS single precision with GPU Boost per board of two GK210 GPUs, "
     "halved (https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-product-literature/TeslaK80-datasheet.pdf)"},
    {"M60", 4.825,
     "NVIDIA Tesla M60 datasheet: two GM204 GPUs per board, 2048 CUDA cores each; with the board "
     "specification's 1178 MHz boost clock, 2048 x 2 FLOP x 1.178 GHz per GPU "
     "(https://images.nvidia.com/content/tesla/pdf/188417-Tesla-M60-DS-A4-fnl-Web.pdf)"},
    {"T4", 8.1,
     "NVIDIA T4 Tensor Core GPU datasheet: 8.1 TFLOPS single precision "
     "(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf)"},
    {"T4g", 8.1,
     "NVIDIA T4 Tensor Core GPU datasheet (g5g's T4G is a T4): 8.1 TFLOPS single precision "
     "(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf)"},
    {"V100", 15.7,
     "NVIDIA V100 Tensor Core GPU datasheet: 15.7 TFLOPS single precision, V100 SXM2 (the p3 form) "
     "(https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf)"},
    {"A10G", 31.2,
     "NVIDIA A10 Tensor Core GPU datasheet: 31.2 TFLOPS FP32; the A10G is AWS's variant of the A10, for which NVIDIA "
     "publishes no separate datasheet (https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/a10-datasheet.pdf)"},
    {"A100", 19.5,
     "NVIDIA A100 Tensor Core GPU datasheet: 19.5 TFLOPS FP32 (40 GB and 80 GB SXM) "
     "(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)"},
    {"H100", 67.0,
     "NVIDIA H100 Tensor Core GPU datasheet: 67 TFLOPS FP32, H100 SXM (the p5 form) "
     "(https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet)"},
    {"H200", 67.0,
     "NVIDIA H200 Tensor Core GPU datasheet: 67 TFLOPS FP32, H200 SXM "
     "(https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446)"},
    {"L4", 30.3,
     "NVIDIA L4 Tensor Core GPU datasheet: 30.3 TFLOPS FP32 "
     "(https://resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet)"},
    {"L40S", 91.6,
     "NVIDIA L40S GPU datasheet: 91.6 TFLOPS FP32 (https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413)"},
};

/// "K80, M60, ...": the GPU models kGpuPeakThroughputs knows, for messages.
[[nodiscard]] inline std::string known_gpu_models() {
  std::string names;
  for (const GpuPeakThroughput& entry : kGpuPeakThroughputs) names.append(names.empty() ? "" : ", ").append(entry.gpu_model);
  return names;
}

/// The entry of `gpu_model` (AWS's name, exact and case-sensitive as AWS prints it), or nullptr.
[[nodiscard]] inline const GpuPeakThroughput* find_gpu_peak_throughput(std::string_view gpu_model) {
  for (const GpuPeakThroughput& entry : kGpuPeakThroughputs) {
    if (entry.gpu_model == gpu_model) return &entry;
  }
  return nullptr;
}

/// Peak FP32 TFLOPS of one `gpu_model` GPU; throws spotdnn::invalid_argument naming the known models
/// when spotdnn does not know it.
[[nodiscard]] inline double gpu_peak_fp32_tflops(std::string_view gpu_model) {
  if (const GpuPeakThroughput* entry = find_gpu_peak_throughput(gpu_model)) return entry->fp32_tflops;
  detail::fail("gpu_peak_fp32_tflops", "gpu_model", detail::quoted(gpu_model),
               "no published peak throughput known for this GPU (known: " + known_gpu_models() + ")");
}

}  // namespace spotdnn
