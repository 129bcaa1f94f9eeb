#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/instance_types.hpp vCPUs, memory, network and GPUs of each instance type from
/// `aws ec2 describe-instance-types --output json`.
///
/// Shape (EC2 API reference, DescribeInstanceTypes / InstanceTypeInfo; AWS CLI reference, ec2
/// describe-instance-types): {"InstanceTypes": [{"InstanceType": "p3.2xlarge", "VCpuInfo": {"DefaultVCpus": 8},
/// "MemoryInfo": {"SizeInMiB": 62464}, "NetworkInfo": {"NetworkPerformance": "Up to 10 Gigabit"},
/// "GpuInfo": {"Gpus": [{"Name": "V100", "Manufacturer": "NVIDIA", "Count": 1, "MemoryInfo": {"SizeInMiB": 16384}}],
/// "TotalGpuMemoryInMiB": 16384}, …}, …], "NextToken": "…"}. A type without GpuInfo (or with GpuInfo null,
/// as AWS's Go SDK writes it) has no GPU. Unknown keys are ignored. The other forms of output_forms.hpp are
/// read too: the bare list (`--query InstanceTypes`, or a stream of its entries; paths "[2].VCpuInfo"), a
/// wrapped recorded response.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "spotdnn/catalog.hpp"
#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/aws/output_forms.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// Most GPUs of one instance type read from GpuInfo (the largest AWS types have 16).
inline constexpr int kMaxGpusPerInstance = 1024;

/// What describe-instance-types says about one type.
struct InstanceTypeInfo {
  std::string name;                 ///< InstanceType, e.g. "p3.2xlarge"
  int vcpus = 0;                    ///< VCpuInfo.DefaultVCpus
  std::int64_t memory_mib = 0;      ///< MemoryInfo.SizeInMiB; 0 = not given
  std::string network_performance;  ///< NetworkInfo.NetworkPerformance; empty = not given
  int gpus = 0;                     ///< Σ GpuInfo.Gpus[].Count; 0 = not a GPU type
  std::string gpu_model;            ///< the Gpus' Name ("V100"); distinct names joined with " + "
  std::string gpu_manufacturer;     ///< the first Gpus entry's Manufacturer ("NVIDIA"), when given
  std::int64_t gpu_memory_mib = 0;  ///< Σ Count × MemoryInfo.SizeInMiB of the GPUs; 0 = not given
};

/// What one describe-instance-types output says, by type name.
struct InstanceTypeInfos {
  std::map<std::string, InstanceTypeInfo> by_name;
  bool more_pages = false;  ///< the output has a NextToken: later pages were not fetched
};

/// Reads a describe-instance-types output (or its bare list, find_output_list). InstanceType and VCpuInfo.DefaultVCpus (1..kMaxInstanceVcpus)
/// are required; MemoryInfo, NetworkInfo and GpuInfo are optional, but when GpuInfo is given each Gpus
/// entry needs Name and Count (0..kMaxGpusPerInstance). A type listed twice is an error. Errors throw
/// spotdnn::invalid_argument "function: SOURCE: InstanceTypes[2].VCpuInfo.DefaultVCpus = …: why".
[[nodiscard]] inline InstanceTypeInfos read_instance_types(const Json& json, const std::string& source,
                                                          const std::string& function = "read_instance_types") {
  const AwsOutputReader in(source, function);
  using R = AwsOutputReader;
  const AwsOutputList found = find_output_list(in, json, kInstanceTypesOutput);
  const Json& types = *found.list;
  InstanceTypeInfos infos;
  if (const Json* token = found.output != nullptr ? R::member(*found.output, "NextToken") : nullptr) {
    infos.more_pages = !(token->is_string() && token->get_ref<const std::string&>().empty());
  }
  std::map<std::string, std::string> paths;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string path = R::index(found.path, i);
    const Json& entry = in.object(types[i], path);
    InstanceTypeInfo info;
    info.name = in.name(in.required(entry, path, "InstanceType"), R::key(path, "InstanceType"));
    {
      const std::string vcpu_path = R::key(path, "VCpuInfo");
      const Json& vcpu = in.object(in.required(entry, path, "VCpuInfo"), vcpu_path);
      info.vcpus = int(in.whole(in.required(vcpu, vcpu_path, "DefaultVCpus"), R::key(vcpu_path, "DefaultVCpus"), 1, kMaxInstanceVcpus));
    }
    if (const Json* memory = R::member(entry, "MemoryInfo")) {
      const std::string memory_path = R::key(path, "MemoryInfo");
      in.object(*memory, memory_path);
      if (const Json* size = R::member(*memory, "SizeInMiB")) {
        info.memory_mib = in.whole(*size, R::key(memory_path, "SizeInMiB"), 0, JsonObjectReader::kMaxWholeNumber);
      }
    }
    if (const Json* network = R::member(entry, "NetworkInfo")) {
      const std::string network_path = R::key(path, "NetworkInfo");
      in.object(*network, network_path);
      if (const Json* performance = R::member(*network, "NetworkPerformance")) {
        info.network_performance = in.text(*performance, R::key(network_path, "NetworkPerformance"));
      }
    }
    if (const Json* gpu_info = R::member(entry, "GpuInfo")) {
      const std::string gpu_path = R::key(path, "GpuInfo");
      in.object(*gpu_info, gpu_path);
      const std::string gpus_path = R::key(gpu_path, "Gpus");
      const Json& gpus = in.array(in.required(*gpu_info, gpu_path, "Gpus"), gpus_path);
      for (std::size_t g = 0; g < gpus.size(); ++g) {
        const std::string one_path = R::index(gpus_path, g);
        const Json& gpu = in.object(gpus[g], one_path);
        const std::string model = in.name(in.required(gpu, one_path, "Name"), R::key(one_path, "Name"));
        const auto count = int(in.whole(in.required(gpu, one_path, "Count"), R::key(one_path, "Count"), 0, kMaxGpusPerInstance));
        if (info.gpus + count > kMaxGpusPerInstance) {
          in.fail(R::key(one_path, "Count"), std::to_string(count), "more than " + std::to_string(kMaxGpusPerInstance) + " GPUs in one instance");
        }
        info.gpus += count;
        if (info.gpu_model.empty()) {
          info.gpu_model = model;
        } else if (info.gpu_model != model && info.gpu_model.size() + model.size() < kMaxAwsTextBytes) {
          info.gpu_model += " + " + model;
        }
        if (const Json* maker = R::member(gpu, "Manufacturer"); maker != nullptr && info.gpu_manufacturer.empty()) {
          info.gpu_manufacturer = in.text(*maker, R::key(one_path, "Manufacturer"));
        }
        if (const Json* memory = R::member(gpu, "MemoryInfo")) {
          const std::string memory_path = R::key(one_path, "MemoryInfo");
          in.object(*memory, memory_path);
          if (const Json* size = R::member(*memory, "SizeInMiB")) {
            info.gpu_memory_mib += count * in.whole(*size, R::key(memory_path, "SizeInMiB"), 0, JsonObjectReader::kMaxWholeNumber);
          }
        }
      }
    }
    if (const auto [it, fresh] = paths.emplace(info.name, path); !fresh) {
      in.fail(R::key(path, "InstanceType"), spotdnn::detail::quoted(info.name), "listed twice (also at " + it->second + ")");
    }
    infos.by_name.emplace(info.name, std::move(info));
  }
  return infos;
}

}  // namespace spotdnn::io::aws
