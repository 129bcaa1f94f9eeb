#pragma once
// SPDX-License-Identifier: MIT
/// @file io/aws/fetch_requests.hpp The read-only `aws` calls whose outputs import_catalog reads, as argv
/// vectors (no shell): what `spotdnn catalog fetch` runs (docs/market-data.md).

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/io/aws/catalog_import.hpp"

namespace spotdnn::io::aws {

/// The source a request fetches (the fields of CatalogImportSources).
enum class FetchSource { spot_prices, instance_types, on_demand_prices, quotas, default_quotas };

/// "spot prices", "instance types", "on-demand prices", "quotas", "default quotas": the source's label
/// (as in Catalog::missing_sources).
[[nodiscard]] constexpr std::string_view to_string(FetchSource source) {
  switch (source) {
    case FetchSource::spot_prices: return "spot prices";
    case FetchSource::instance_types: return "instance types";
    case FetchSource::on_demand_prices: return kOnDemandPricesLabel;
    case FetchSource::quotas: return kQuotasLabel;
    case FetchSource::default_quotas: return kDefaultQuotasLabel;
  }
  return "spot prices";
}

/// One `aws` call: the program and its arguments, each one argv element (run without a shell).
struct FetchRequest {
  FetchSource source = FetchSource::spot_prices;
  std::vector<std::string> argv;  ///< argv[0] is the aws program
  bool required = true;           ///< spot prices and instance types; a failing optional source is a warning
};

struct FetchRequestOptions {
  std::string aws_program = "aws";  ///< argv[0]: a name looked up on PATH, or a path
  /// Passed as `--endpoint-url URL` to every call when not empty (the CLI passes $AWS_ENDPOINT_URL:
  /// aws-cli before 2.13 ignores that variable).
  std::string endpoint_url;
  /// `--start-time` of describe-spot-price-history, ISO 8601 ("2026-11-24T08:00:00Z"): "now", so that AWS
  /// answers the price in effect then for every (type, zone). Required.
  std::string start_time;
  /// The region the Pricing API is called in: it answers only in us-east-1, eu-central-1 and ap-south-1
  /// (the catalog's region is selected by the regionCode filter).
  std::string pricing_region = "us-east-1";
  /// The parameter server's type, described by the same describe-instance-types call (its vCPUs count in
  /// its on-demand quota group) and priced by the same get-products call.
  std::string parameter_server_type = "m5.xlarge";
};

/// Most instance types one describe-instance-types call of a fetch names, the parameter server's type
/// included (DescribeInstanceTypes takes at most 100 per call).
inline constexpr std::size_t kMaxFetchTypes = 100;

/// The regions the AWS Price List Query API answers in.
inline constexpr std::string_view kPricingApiRegions[] = {"us-east-1", "eu-central-1", "ap-south-1"};

namespace fetch_detail {

/// Why `value` is not shaped like an AWS region, type or zone name (lower-case letters, digits, '.' and
/// '-', 1 to 64 characters, not starting with '-'), or "" when it is: so that no value can read as an option
/// of aws or split an ANY_OF list (',').
inline std::string aws_name_problem(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > 64) return "longer than 64 characters";
  for (char c : value) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) {
      return "expected lower-case letters, digits, '.' and '-' (e.g. us-east-1, p3.2xlarge)";
    }
  }
  if (value.front() == '-') return "must not start with '-'";
  return {};
}

inline void require_aws_name(std::string_view function, const std::string& field, const std::string& value) {
  const std::string problem = aws_name_problem(value);
  if (!problem.empty()) spotdnn::detail::fail(function, field, spotdnn::detail::quoted(value.substr(0, 64)), problem);
}

}  // namespace fetch_detail

/// The five read-only calls of one fetch, in this order (the first two required):
///
///     aws ec2 describe-spot-price-history --region R --instance-types T... --product-descriptions Linux/UNIX
///         "Linux/UNIX (Amazon VPC)" --start-time NOW --output json
///     aws ec2 describe-instance-types --region R --instance-types T... PS --output json
///     aws pricing get-products --region us-east-1 --service-code AmazonEC2 --filters
///         Type=TERM_MATCH,Field=regionCode,Value=R Type=TERM_MATCH,Field=operatingSystem,Value=Linux
///         Type=TERM_MATCH,Field=tenancy,Value=Shared Type=TERM_MATCH,Field=preInstalledSw,Value=NA
///         Type=TERM_MATCH,Field=capacitystatus,Value=Used 'Type=ANY_OF,Field=instanceType,Value="T1,T2,PS"'
///         --output json
///     aws service-quotas list-service-quotas --service-code ec2 --region R --output json
///     aws service-quotas list-aws-default-service-quotas --service-code ec2 --region R --output json
///
/// (the ANY_OF value is quoted inside its argv element: the CLI's shorthand would split it at the commas),
/// each with `--endpoint-url URL` after the program when options.endpoint_url is set. PS is
/// options.parameter_server_type, added to describe-instance-types and get-products unless `types` lists
/// it (so that import_catalog learns the PS's vCPUs, which its on-demand quota group counts, and its
/// price). A pure function: it runs nothing. `types` (1 to kMaxFetchTypes with the PS's type, each once)
/// and `region` must look like AWS names
/// (lower-case letters, digits, '.', '-'); otherwise spotdnn::invalid_argument naming the field.
[[nodiscard]] inline std::vector<FetchRequest> fetch_requests(const std::string& region, const std::vector<std::string>& types,
                                                              const FetchRequestOptions& options = {}) {
  constexpr std::string_view fn = "fetch_requests";
  fetch_detail::require_aws_name(fn, "region", region);
  if (types.empty()) spotdnn::detail::fail(fn, "types", "(none)", "give at least one instance type");
  fetch_detail::require_aws_name(fn, "options.parameter_server_type", options.parameter_server_type);
  const bool lists_parameter_server =
      std::find(types.begin(), types.end(), options.parameter_server_type) != types.end();
  const std::size_t most_types = lists_parameter_server ? kMaxFetchTypes : kMaxFetchTypes - 1;
  if (types.size() > most_types) {
    spotdnn::detail::fail(fn, "types", std::to_string(types.size()) + " types",
                          "at most " + std::to_string(kMaxFetchTypes) + " types per fetch, the parameter server's " +
                              options.parameter_server_type + " included");
  }
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string field = "types[" + std::to_string(i) + "]";
    fetch_detail::require_aws_name(fn, field, types[i]);
    for (std::size_t j = 0; j < i; ++j) {
      if (types[j] == types[i]) spotdnn::detail::fail(fn, field, spotdnn::detail::quoted(types[i]), "listed twice");
    }
  }
  spotdnn::detail::require_non_empty(fn, "options.aws_program", options.aws_program);
  spotdnn::detail::require_printable_name(fn, "options.aws_program", options.aws_program);
  if (!options.endpoint_url.empty()) spotdnn::detail::require_printable_name(fn, "options.endpoint_url", options.endpoint_url);
  spotdnn::detail::require_non_empty(fn, "options.start_time", options.start_time);
  (void)parse_aws_timestamp(options.start_time, fn, "options.start_time");
  fetch_detail::require_aws_name(fn, "options.pricing_region", options.pricing_region);
  // The GPU types, then the parameter server's type unless they list it.
  std::vector<std::string> described = types;
  if (!lists_parameter_server) described.push_back(options.parameter_server_type);

  const auto call = [&](std::initializer_list<std::string> words) {
    std::vector<std::string> argv = {options.aws_program};
    if (!options.endpoint_url.empty()) {
      argv.push_back("--endpoint-url");
      argv.push_back(options.endpoint_url);
    }
    argv.insert(argv.end(), words);
    return argv;
  };
  const auto append = [](std::vector<std::string> argv, const std::vector<std::string>& more) {
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  };

  std::vector<FetchRequest> requests;
  {
    std::vector<std::string> argv = append(call({"ec2", "describe-spot-price-history", "--region", region, "--instance-types"}), types);
    argv = append(std::move(argv), {"--product-descriptions", "Linux/UNIX", "Linux/UNIX (Amazon VPC)", "--start-time",
                                    options.start_time, "--output", "json"});
    requests.push_back({FetchSource::spot_prices, std::move(argv), true});
  }
  {
    std::vector<std::string> argv = append(call({"ec2", "describe-instance-types", "--region", region, "--instance-types"}), described);
    argv = append(std::move(argv), {"--output", "json"});
    requests.push_back({FetchSource::instance_types, std::move(argv), true});
  }
  {
    std::string priced;
    for (const std::string& type : described) priced += (priced.empty() ? "" : ",") + type;
    std::vector<std::string> argv = call({"pricing", "get-products", "--region", options.pricing_region, "--service-code",
                                          "AmazonEC2", "--filters", "Type=TERM_MATCH,Field=regionCode,Value=" + region,
                                          "Type=TERM_MATCH,Field=operatingSystem,Value=Linux",
                                          "Type=TERM_MATCH,Field=tenancy,Value=Shared",
                                          "Type=TERM_MATCH,Field=preInstalledSw,Value=NA",
                                          "Type=TERM_MATCH,Field=capacitystatus,Value=Used",
                                          "Type=ANY_OF,Field=instanceType,Value=\"" + priced + "\"", "--output", "json"});
    requests.push_back({FetchSource::on_demand_prices, std::move(argv), false});
  }
  requests.push_back({FetchSource::quotas,
                      call({"service-quotas", "list-service-quotas", "--service-code", "ec2", "--region", region, "--output", "json"}),
                      false});
  requests.push_back({FetchSource::default_quotas,
                      call({"service-quotas", "list-aws-default-service-quotas", "--service-code", "ec2", "--region", region,
                            "--output", "json"}),
                      false});
  return requests;
}

}  // namespace spotdnn::io::aws
