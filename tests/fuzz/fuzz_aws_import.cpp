// SPDX-License-Identifier: MIT
// Fuzzes the AWS market-data importer: the bytes, parsed by parse_json, stand in turn for each of the six
// sources of io::aws::import_catalog (spot prices, instance types, pricing products, applied and default
// quotas, Spot Advisor data), the other five being small valid outputs. An accepted import must validate,
// give one-line printable warnings and round-trip through catalog JSON.
#include <string>

#include <spotdnn/io/aws/catalog_import.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;
namespace aws = spotdnn::io::aws;

namespace {

aws::CatalogImportSources valid_sources() {
  aws::CatalogImportSources s;
  s.spot_prices = {io::parse_json(R"json({"SpotPriceHistory": [
    {"AvailabilityZone": "us-east-1a", "InstanceType": "p3.2xlarge", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.950000", "Timestamp": "2026-11-24T08:00:00+00:00"},
    {"AvailabilityZone": "us-east-1b", "InstanceType": "p3.2xlarge", "ProductDescription": "Linux/UNIX (Amazon VPC)", "SpotPrice": "0.918000", "Timestamp": "2026-11-24T07:30:00.000Z"},
    {"AvailabilityZone": "us-east-1a", "InstanceType": "g4dn.xlarge", "ProductDescription": "Linux/UNIX", "SpotPrice": "0.210000", "Timestamp": "2026-11-20T08:00:00+00:00"},
    {"AvailabilityZone": "us-east-1a", "InstanceType": "dl1.24xlarge", "ProductDescription": "Linux/UNIX", "SpotPrice": "4.0", "Timestamp": "2026-11-24T08:00:00Z"}]})json", "SP"), "SP.json"};
  s.instance_types = {io::parse_json(R"json({"InstanceTypes": [
    {"InstanceType": "p3.2xlarge", "VCpuInfo": {"DefaultVCpus": 8}, "MemoryInfo": {"SizeInMiB": 62464}, "NetworkInfo": {"NetworkPerformance": "Up to 10 Gigabit"},
     "GpuInfo": {"Gpus": [{"Name": "V100", "Manufacturer": "NVIDIA", "Count": 1, "MemoryInfo": {"SizeInMiB": 16384}}]}},
    {"InstanceType": "g4dn.xlarge", "VCpuInfo": {"DefaultVCpus": 4}, "GpuInfo": {"Gpus": [{"Name": "T4", "Count": 1}]}},
    {"InstanceType": "dl1.24xlarge", "VCpuInfo": {"DefaultVCpus": 96}, "GpuInfo": {"Gpus": [{"Name": "Gaudi HL-205", "Count": 8}]}}]})json", "IT"), "IT.json"};
  s.on_demand_prices = aws::ImportSource{io::parse_json(R"json({"FormatVersion": "aws_v1", "PriceList": [
    "{\"product\":{\"attributes\":{\"instanceType\":\"p3.2xlarge\",\"operatingSystem\":\"Linux\",\"tenancy\":\"Shared\",\"preInstalledSw\":\"NA\",\"capacitystatus\":\"Used\",\"regionCode\":\"us-east-1\"},\"sku\":\"A\"},\"terms\":{\"OnDemand\":{\"A.T\":{\"priceDimensions\":{\"A.T.D\":{\"unit\":\"Hrs\",\"pricePerUnit\":{\"USD\":\"3.0600000000\"}}}}}}}",
    "{\"product\":{\"attributes\":{\"instanceType\":\"m5.xlarge\",\"operatingSystem\":\"Linux\",\"tenancy\":\"Shared\",\"preInstalledSw\":\"NA\",\"capacitystatus\":\"Used\"}},\"terms\":{\"OnDemand\":{\"B.T\":{\"priceDimensions\":{\"B.T.D\":{\"unit\":\"Hrs\",\"pricePerUnit\":{\"USD\":\"0.192\"}}}}}}}"]})json", "PR"), "PR.json"};
  s.quotas = aws::ImportSource{io::parse_json(R"json({"Quotas": [{"ServiceCode": "ec2", "QuotaCode": "L-7212CCBC", "QuotaName": "All P4, P3 and P2 Spot Instance Requests", "Value": 64.0, "Unit": "None"}]})json", "Q"), "Q.json"};
  s.default_quotas = aws::ImportSource{io::parse_json(R"json({"Quotas": [{"ServiceCode": "ec2", "QuotaCode": "L-3819A6DF", "Value": 64.0}, {"QuotaCode": "L-DB2E81BA", "Value": 32}]})json", "DQ"), "DQ.json"};
  s.advisor = aws::ImportSource{io::parse_json(R"json({"ranges": [{"index": 0, "label": "<5%"}, {"index": 1, "label": "5-10%"}, {"index": 2, "label": "10-15%"}, {"index": 3, "label": "15-20%"}, {"index": 4, "label": ">20%"}],
    "spot_advisor": {"us-east-1": {"Linux": {"p3.2xlarge": {"s": 70, "r": 2}, "g4dn.xlarge": {"s": 63, "r": 0}}}}})json", "ADV"), "ADV.json"};
  return s;
}

void check_import(const aws::CatalogImportSources& sources, const aws::CatalogImportOptions& options) {
  const auto imported = fuzz::read_or_reject([&] { return aws::import_catalog(sources, options); });
  if (!imported) return;
  fuzz::must_succeed("validating the imported catalog", [&] { imported->catalog.validate(); return 0; });
  for (const std::string& warning : imported->warnings) {
    fuzz::check(detail::is_printable_utf8(warning), "a warning is not one printable line: " + warning);
  }
  const std::string written = fuzz::must_succeed("to_json(catalog)", [&] { return io::to_json(imported->catalog).dump(); });
  const Catalog back = fuzz::must_succeed("re-reading the imported catalog",
                                          [&] { return io::catalog_from_json(io::parse_json(written, "written")); });
  fuzz::check(io::to_json(back).dump() == written, "the imported catalog does not round-trip: " + written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto json = fuzz::read_or_reject([&] { return io::parse_json(fuzz::as_text(data, size), "fuzz"); });
  if (!json) return 0;
  static const aws::CatalogImportSources valid = valid_sources();
  static const Catalog base = presets::resnet110_catalog();
  for (int slot = 0; slot < 6; ++slot) {
    aws::CatalogImportSources sources = valid;
    switch (slot) {
      case 0: sources.spot_prices.json = *json; break;
      case 1: sources.instance_types.json = *json; break;
      case 2: sources.on_demand_prices->json = *json; break;
      case 3: sources.quotas->json = *json; break;
      case 4: sources.default_quotas->json = *json; break;
      default: sources.advisor->json = *json; break;
    }
    aws::CatalogImportOptions options;
    options.region = "us-east-1";
    options.now_unix_s = 1795510800;  // 2026-11-24T09:00:00Z
    if (slot % 2 == 1) options.base = base;
    if (slot == 2) options.types = {"p3.2xlarge", "g4dn.xlarge", "x1.32xlarge"};
    check_import(sources, options);
  }
  return 0;
}
