#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/service_quotas.hpp EC2 quota values by QuotaCode from `aws service-quotas
/// list-service-quotas --service-code ec2` (applied values) or `list-aws-default-service-quotas` (defaults).
///
/// Shape (Service Quotas API reference, ListServiceQuotas / ListAWSDefaultServiceQuotas / ServiceQuota; AWS CLI
/// reference, service-quotas list-service-quotas): {"Quotas": [{"ServiceCode": "ec2", "ServiceName": "Amazon
/// Elastic Compute Cloud (Amazon EC2)", "QuotaArn": "…", "QuotaCode": "L-7212CCBC", "QuotaName": "All P4, P3
/// and P2 Spot Instance Requests", "Value": 64.0, "Unit": "None", "Adjustable": true, "GlobalQuota": false,
/// "UsageMetric": {"MetricNamespace": "AWS/Usage", "MetricName": "ResourceCount", "MetricDimensions":
/// {"Class": "P/Spot", "Resource": "vCPU", "Service": "EC2", "Type": "Resource"}, …}, …}, …], "NextToken": "…"}.
/// Quotas are matched by QuotaCode: names change, and Unit says "None" (the vCPU unit is in UsageMetric).
/// A quota whose value was never changed may be missing from the applied list; the default list has it.

#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "spotdnn/catalog.hpp"
#include "spotdnn/io/aws/aws_output.hpp"
#include "spotdnn/io/aws/quota_families.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::io::aws {

/// One quota of one list.
struct ServiceQuota {
  std::string code;          ///< QuotaCode, e.g. "L-7212CCBC"
  std::string name;          ///< QuotaName; empty when not given
  std::optional<double> value;  ///< Value; absent when not given
  std::string path;          ///< e.g. "Quotas[3]", for messages
};

/// What one list-service-quotas (or list-aws-default-service-quotas) output says, by QuotaCode.
struct ServiceQuotas {
  std::map<std::string, ServiceQuota> by_code;
  std::size_t other_services = 0;  ///< quotas whose ServiceCode is given and is not "ec2", skipped
  std::size_t other_quotas = 0;    ///< EC2 quotas that are not a vCPU quota group spotdnn uses, skipped
  bool more_pages = false;         ///< the output has a NextToken: later pages were not fetched
};

/// Reads a list-service-quotas or list-aws-default-service-quotas output, keeping the vCPU quota groups
/// spotdnn uses (known_quota_group; every other EC2 quota is skipped unchecked). QuotaCode is required; QuotaName
/// (text) and Value (a number from 0 to kMaxQuotaGroupVcpus) are read when given; a QuotaCode listed twice is
/// an error. Errors throw spotdnn::invalid_argument "function: SOURCE: Quotas[3].Value = …: why".
[[nodiscard]] inline ServiceQuotas read_service_quotas(const Json& json, const std::string& source,
                                                       const std::string& function = "read_service_quotas") {
  const AwsOutputReader in(source, function);
  using R = AwsOutputReader;
  in.object(json, "");
  const Json& quotas = in.array(in.required(json, "", "Quotas"), "Quotas");
  ServiceQuotas result;
  if (const Json* token = R::member(json, "NextToken")) result.more_pages = !(token->is_string() && token->get_ref<const std::string&>().empty());
  for (std::size_t i = 0; i < quotas.size(); ++i) {
    const std::string path = R::index("Quotas", i);
    const Json& entry = in.object(quotas[i], path);
    ServiceQuota quota;
    quota.path = path;
    quota.code = in.name(in.required(entry, path, "QuotaCode"), R::key(path, "QuotaCode"));
    if (const Json* service = R::member(entry, "ServiceCode"); service != nullptr && in.text(*service, R::key(path, "ServiceCode")) != "ec2") {
      ++result.other_services;
      continue;
    }
    // Only the vCPU quota groups of quota_families.hpp are read: an EC2 quota spotdnn does not use (and
    // whose value may be anything) is skipped unchecked, so it can never fail an import.
    if (known_quota_group(quota.code) == nullptr) {
      ++result.other_quotas;
      continue;
    }
    if (const Json* name = R::member(entry, "QuotaName")) quota.name = in.text(*name, R::key(path, "QuotaName"));
    if (const Json* value = R::member(entry, "Value")) {
      const double v = in.number(*value, R::key(path, "Value"));
      if (v < 0 || v > kMaxQuotaGroupVcpus) {
        in.fail_at(R::key(path, "Value"), *value, "must be from 0 to " + std::to_string(kMaxQuotaGroupVcpus));
      }
      quota.value = v;
    }
    if (const auto [it, fresh] = result.by_code.emplace(quota.code, quota); !fresh) {
      in.fail(R::key(path, "QuotaCode"), spotdnn::detail::quoted(quota.code), "listed twice (also at " + it->second.path + ")");
    }
  }
  return result;
}

}  // namespace spotdnn::io::aws
