// SPDX-License-Identifier: MIT
// Importing AWS market data (docs/market-data.md): the readers of describe-spot-price-history,
// describe-instance-types, pricing get-products, service-quotas and the Spot Advisor file, the family →
// quota-group table, and import_catalog on the fixtures of tests/fixtures/aws/ (see the README there).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

// io/plan_document.hpp opens spotdnn::io::detail: included first, it checks that fetch_requests.hpp
// names spotdnn::detail in full (an unqualified detail:: there would find io::detail and not compile).
#include <spotdnn/io/plan_document.hpp>
// (the other headers in order)
#include <spotdnn/io/aws/catalog_import.hpp>
#include <spotdnn/io/aws/fetch_requests.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/presets.hpp>

using namespace spotdnn;
using io::Json;
namespace aws = spotdnn::io::aws;

namespace {

Json fixture(const std::string& name) {
  return io::read_json_file(std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/aws/" + name);
}

/// 2026-11-24T09:00:00Z
constexpr std::int64_t kNow = 1795510800;

aws::CatalogImportSources all_sources() {
  aws::CatalogImportSources s;
  s.spot_prices = {fixture("spot-price-history.json"), "SP.json"};
  s.instance_types = {fixture("instance-types.json"), "IT.json"};
  s.on_demand_prices = aws::ImportSource{fixture("pricing-products.json"), "PR.json"};
  s.quotas = aws::ImportSource{fixture("service-quotas.json"), "Q.json"};
  s.default_quotas = aws::ImportSource{fixture("default-service-quotas.json"), "DQ.json"};
  s.advisor = aws::ImportSource{fixture("spot-advisor-data.json"), "ADV.json"};
  return s;
}

aws::CatalogImportOptions us_east_1() {
  aws::CatalogImportOptions o;
  o.region = "us-east-1";
  o.now_unix_s = kNow;
  return o;
}

template <typename Run>
std::string error_of(Run&& run) {
  try {
    run();
  } catch (const spotdnn::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

bool has_warning(const std::vector<std::string>& warnings, const std::string& part) {
  return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

std::string all_warnings(const std::vector<std::string>& warnings) {
  std::string text;
  for (const auto& w : warnings) text += w + "\n";
  return text;
}

Json spot_row(const std::string& zone, const std::string& type, const std::string& price, const std::string& time,
              const std::string& product = "Linux/UNIX") {
  return {{"AvailabilityZone", zone}, {"InstanceType", type}, {"ProductDescription", product}, {"SpotPrice", price}, {"Timestamp", time}};
}

}  // namespace

TEST_CASE("timestamps in the aws-cli v1 and v2 forms parse to the same Unix seconds") {
  const auto parse = [](const std::string& text) { return aws::parse_aws_timestamp(text, "t", "Timestamp"); };
  CHECK(parse("2026-11-24T08:00:00+00:00") == kNow - 3600);
  CHECK(parse("2026-11-24T08:00:00.000Z") == kNow - 3600);
  CHECK(parse("2026-11-24T08:00:00Z") == kNow - 3600);
  CHECK(parse("2026-11-24T10:00:00.123456789+02:00") == kNow - 3600);
  CHECK(parse("2026-11-24T03:30:00-04:30") == kNow - 3600);
  CHECK(parse("1970-01-01T00:00:00Z") == 0);
  CHECK(parse("2024-02-29T00:00:00Z") == 1709164800);
  CHECK(aws::format_utc_timestamp(kNow - 3600) == "2026-11-24T08:00:00Z");
  CHECK(aws::format_utc_timestamp(1709164800) == "2024-02-29T00:00:00Z");
  CHECK(aws::format_utc_timestamp(0) == "1970-01-01T00:00:00Z");
  for (const char* bad : {"", "2026-11-24", "2026-11-24T08:00:00", "2026-11-24 08:00:00Z", "2026-02-30T08:00:00Z",
                          "2023-02-29T00:00:00Z", "2026-11-24T24:00:00Z", "2026-11-24T08:00:00.Z", "2026-11-24T08:00:00+0000",
                          "2026-11-24T08:00:00Zjunk", "1969-12-31T23:59:59Z", "2026-13-01T00:00:00Z", "２026-11-24T08:00:00Z"}) {
    CAPTURE(bad);
    const std::string message = error_of([&] { (void)parse(bad); });
    CHECK(message.rfind("t: Timestamp = \"", 0) == 0);
    CHECK(message.find("expected an ISO 8601 time") != std::string::npos);
  }
}

TEST_CASE("the latest Linux row per type and zone wins whatever the order of rows") {
  Json rows = Json::array();
  rows.push_back(spot_row("us-east-1a", "p3.2xlarge", "0.700000", "2026-11-24T06:00:00+00:00"));
  rows.push_back(spot_row("us-east-1a", "p3.2xlarge", "0.900000", "2026-11-24T08:00:00.000Z"));
  rows.push_back(spot_row("us-east-1a", "p3.2xlarge", "0.800000", "2026-11-24T07:00:00+00:00"));
  const aws::SpotPriceHistory history = aws::read_spot_price_history({{"SpotPriceHistory", rows}}, "SP.json");
  REQUIRE(history.latest.size() == 1);
  CHECK(history.latest[0].price_usd_per_hour == 0.9);
  CHECK(history.latest[0].observed_at_unix_s == kNow - 3600);
  CHECK(history.latest[0].path == "SpotPriceHistory[1]");

  std::reverse(rows.begin(), rows.end());
  const aws::SpotPriceHistory reversed = aws::read_spot_price_history({{"SpotPriceHistory", rows}}, "SP.json");
  REQUIRE(reversed.latest.size() == 1);
  CHECK(reversed.latest[0].price_usd_per_hour == 0.9);
}

TEST_CASE("Windows and other non-Linux rows are ignored even when cheaper and newer") {
  Json rows = Json::array();
  rows.push_back(spot_row("us-east-1a", "p3.2xlarge", "0.900000", "2026-11-24T06:00:00+00:00", "Linux/UNIX (Amazon VPC)"));
  rows.push_back(spot_row("us-east-1a", "p3.2xlarge", "0.100000", "2026-11-24T08:00:00+00:00", "Windows"));
  rows.push_back(spot_row("us-east-1a", "p3.2xlarge", "0.200000", "2026-11-24T08:00:00+00:00", "Red Hat Enterprise Linux"));
  const aws::SpotPriceHistory history = aws::read_spot_price_history({{"SpotPriceHistory", rows}}, "SP.json");
  REQUIRE(history.latest.size() == 1);
  CHECK(history.latest[0].price_usd_per_hour == 0.9);
  CHECK(history.non_linux_rows == 2);
}

TEST_CASE("a spot price that is not a decimal number is an error naming the source path and value") {
  aws::CatalogImportSources sources = all_sources();
  sources.spot_prices.json["SpotPriceHistory"][3]["SpotPrice"] = "abc";
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: SP.json: SpotPriceHistory[3].SpotPrice = \"abc\": expected a decimal number of USD per hour");
  for (const Json& bad : {Json("1e3"), Json("-0.5"), Json(".5"), Json("0.5 "), Json("nan"), Json("0x1p3"), Json(""), Json("1.")}) {
    CAPTURE(bad.dump());
    sources.spot_prices.json["SpotPriceHistory"][3]["SpotPrice"] = bad;
    CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }).find("SpotPriceHistory[3].SpotPrice") != std::string::npos);
  }
  sources.spot_prices.json["SpotPriceHistory"][3]["SpotPrice"] = 0.918;
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: SP.json: SpotPriceHistory[3].SpotPrice = 0.918: expected a decimal number of USD per hour written as a string");
  sources.spot_prices.json["SpotPriceHistory"][3]["SpotPrice"] = "0.000000";
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }).find("must be greater than zero") != std::string::npos);
}

TEST_CASE("a history without a Linux row is an error") {
  aws::CatalogImportSources sources = all_sources();
  sources.spot_prices.json = {{"SpotPriceHistory", Json::array()}};
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: SP.json: SpotPriceHistory = 0 rows: no Linux/UNIX spot price in SP.json");
  sources.spot_prices.json["SpotPriceHistory"].push_back(spot_row("us-east-1a", "p3.2xlarge", "0.1", "2026-11-24T08:00:00Z", "Windows"));
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }).find("no Linux/UNIX spot price in SP.json") != std::string::npos);
  sources.spot_prices.json["SpotPriceHistory"].push_back(spot_row("eu-west-1a", "p3.2xlarge", "0.1", "2026-11-24T08:00:00Z"));
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: SP.json: SpotPriceHistory = 2 rows: no Linux/UNIX spot price in SP.json for an Availability Zone of us-east-1");
}

TEST_CASE("missing or mistyped known fields are errors naming the source and path") {
  aws::CatalogImportSources sources = all_sources();
  sources.spot_prices.json["SpotPriceHistory"][2].erase("Timestamp");
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: SP.json: SpotPriceHistory[2].Timestamp = missing: this key is required");
  sources = all_sources();
  sources.spot_prices.json["SpotPriceHistory"][2]["Timestamp"] = "yesterday";
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }).rfind(
            "import_catalog: SP.json: SpotPriceHistory[2].Timestamp = \"yesterday\": not a time", 0) == 0);
  sources = all_sources();
  sources.spot_prices.json.erase("SpotPriceHistory");
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: SP.json: SpotPriceHistory = missing: this key is required");
  sources = all_sources();
  sources.instance_types.json["InstanceTypes"][1]["VCpuInfo"].erase("DefaultVCpus");
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: IT.json: InstanceTypes[1].VCpuInfo.DefaultVCpus = missing: this key is required");
  sources = all_sources();
  sources.instance_types.json["InstanceTypes"][0]["GpuInfo"]["Gpus"][0]["Count"] = "one";
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: IT.json: InstanceTypes[0].GpuInfo.Gpus[0].Count = \"one\": expected a whole number");
  sources = all_sources();
  sources.quotas->json["Quotas"][0]["Value"] = "64";
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: Q.json: Quotas[0].Value = \"64\": expected a number");
  sources = all_sources();
  sources.quotas->json["Quotas"][1].erase("QuotaCode");
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: Q.json: Quotas[1].QuotaCode = missing: this key is required");
  sources = all_sources();
  sources.instance_types.json = Json::array();
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) == "import_catalog: IT.json = []: expected a JSON object");
}

TEST_CASE("unknown fields of AWS outputs are ignored") {
  aws::CatalogImportSources sources = all_sources();
  sources.spot_prices.json["SomethingNew"] = {1, 2, 3};
  sources.spot_prices.json["SpotPriceHistory"][1]["Future"] = {{"x", nullptr}};
  sources.instance_types.json["InstanceTypes"][0]["GpuInfo"]["Gpus"][0]["NewField"] = true;
  sources.quotas->json["Quotas"][0]["QuotaAppliedAtLevel"] = "ACCOUNT";
  sources.advisor->json["spot_advisor"]["us-east-1"]["Linux"]["p3.2xlarge"]["new"] = 1;
  const aws::CatalogImport imported = aws::import_catalog(sources, us_east_1());
  CHECK(io::to_json(imported.catalog) == io::to_json(aws::import_catalog(all_sources(), us_east_1()).catalog));
}

TEST_CASE("a row given twice is an error naming both places") {
  aws::CatalogImportSources sources = all_sources();
  sources.spot_prices.json["SpotPriceHistory"].push_back(sources.spot_prices.json["SpotPriceHistory"][0]);
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }).find(
            "import_catalog: SP.json: SpotPriceHistory[12] = {") == 0);
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }).find("as SpotPriceHistory[0]") != std::string::npos);
  sources = all_sources();
  sources.instance_types.json["InstanceTypes"].push_back(sources.instance_types.json["InstanceTypes"][2]);
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: IT.json: InstanceTypes[6].InstanceType = \"p5.48xlarge\": listed twice (also at InstanceTypes[2])");
  sources = all_sources();
  sources.quotas->json["Quotas"].push_back(sources.quotas->json["Quotas"][0]);
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: Q.json: Quotas[4].QuotaCode = \"L-7212CCBC\": listed twice (also at Quotas[0])");
  // An EC2 quota that is no vCPU quota group spotdnn uses is skipped unchecked, however odd its value.
  sources = all_sources();
  sources.quotas->json["Quotas"].push_back(
      Json{{"ServiceCode", "ec2"}, {"QuotaCode", "L-0263D0A3"}, {"QuotaName", "EC2-VPC Elastic IPs"}, {"Value", 1e12}});
  sources.quotas->json["Quotas"].push_back(
      Json{{"ServiceCode", "ec2"}, {"QuotaCode", "L-0263D0A3"}, {"QuotaName", "EC2-VPC Elastic IPs"}, {"Value", "many"}});
  const aws::CatalogImport with_others = aws::import_catalog(sources, us_east_1());
  CHECK(with_others.catalog.quota_group("L-7212CCBC")->vcpus == 64);
  CHECK(with_others.catalog.quota_group("L-0263D0A3") == nullptr);
}

TEST_CASE("the pricing reader keeps only the Linux shared NA Used product of the region") {
  const Json products = fixture("pricing-products.json");
  const aws::OnDemandPrices prices = aws::read_pricing_products(products, "PR.json", "us-east-1");
  CHECK(prices.products == 10);
  CHECK(prices.other_products == 6);  // Windows, Dedicated, SQL Web, two capacity reservations, eu-west-1
  REQUIRE(prices.by_type.size() == 4);
  CHECK(prices.by_type.at("p3.2xlarge").price_usd_per_hour == 3.06);
  CHECK(prices.by_type.at("p3.2xlarge").sku == "P3LINUX");
  CHECK(prices.by_type.at("p3.2xlarge").path == "PriceList[6]");
  CHECK(prices.by_type.at("m5.xlarge").price_usd_per_hour == 0.192);

  const aws::OnDemandPrices ireland = aws::read_pricing_products(products, "PR.json", "eu-west-1");
  REQUIRE(ireland.by_type.size() == 1);
  CHECK(ireland.by_type.at("p3.2xlarge").price_usd_per_hour == 3.305);

  // A product without regionCode (older price lists) is taken as the region's.
  Json entry = Json::parse(products["PriceList"][7].get<std::string>());
  entry["product"]["attributes"].erase("regionCode");
  Json one = {{"PriceList", {entry.dump()}}};
  CHECK(aws::read_pricing_products(one, "PR.json", "ap-south-1").by_type.at("g4dn.xlarge").price_usd_per_hour == 0.526);
  // ... and an entry given as an object rather than JSON text is read as it is.
  one["PriceList"][0] = entry;
  CHECK(aws::read_pricing_products(one, "PR.json", "ap-south-1").by_type.size() == 1);
}

TEST_CASE("pricing products with a bad price or bad JSON text are errors naming the entry") {
  const Json products = fixture("pricing-products.json");
  Json entry = Json::parse(products["PriceList"][6].get<std::string>());
  Json& dimension = entry["terms"]["OnDemand"]["P3LINUX.JRTCKXETXF"]["priceDimensions"]["P3LINUX.JRTCKXETXF.6YS6EN2CT7"];
  dimension["pricePerUnit"]["USD"] = "three";
  CHECK(error_of([&] { (void)aws::read_pricing_products({{"PriceList", {entry.dump()}}}, "PR.json", "us-east-1", "f"); }) ==
        "f: PR.json: PriceList[0].terms.OnDemand.P3LINUX.JRTCKXETXF.priceDimensions.P3LINUX.JRTCKXETXF.6YS6EN2CT7.pricePerUnit.USD = "
        "\"three\": expected a decimal number of USD per hour");
  dimension["unit"] = "Quantity";
  CHECK(error_of([&] { (void)aws::read_pricing_products({{"PriceList", {entry.dump()}}}, "PR.json", "us-east-1", "f"); }).find(
            "no price dimension with unit \"Hrs\"") != std::string::npos);
  CHECK(error_of([&] { (void)aws::read_pricing_products({{"PriceList", {"{\"product\": "}}}, "PR.json", "us-east-1", "f"); }).rfind(
            "f: PR.json: PriceList[0] = byte ", 0) == 0);
  CHECK(error_of([&] { (void)aws::read_pricing_products({{"PriceList", {"{\"a\": 1, \"a\": 2}"}}}, "PR.json", "us-east-1", "f"); })
            .find("duplicate key") != std::string::npos);
  std::string deep(100, '[');
  CHECK(error_of([&] { (void)aws::read_pricing_products({{"PriceList", {deep}}}, "PR.json", "us-east-1", "f"); })
            .find("at most 64 deep") != std::string::npos);
  // Two chosen products of one type with different prices.
  Json twice = {{"PriceList", {products["PriceList"][6], products["PriceList"][6]}}};
  CHECK(aws::read_pricing_products(twice, "PR.json", "us-east-1").by_type.size() == 1);
  Json other = Json::parse(products["PriceList"][6].get<std::string>());
  other["terms"]["OnDemand"]["P3LINUX.JRTCKXETXF"]["priceDimensions"]["P3LINUX.JRTCKXETXF.6YS6EN2CT7"]["pricePerUnit"]["USD"] = "3.5";
  twice["PriceList"][1] = other.dump();
  CHECK(error_of([&] { (void)aws::read_pricing_products(twice, "PR.json", "us-east-1", "f"); }).find(
            "f: PR.json: PriceList[1] = \"p3.2xlarge\": a second Linux/Shared/NA/Used on-demand product") == 0);
}

TEST_CASE("instance types give GPUs as the sum of counts and no GpuInfo means no GPU") {
  Json types = fixture("instance-types.json");
  types["InstanceTypes"][1]["GpuInfo"]["Gpus"].push_back({{"Name", "T4"}, {"Count", 2}});
  const aws::InstanceTypeInfos infos = aws::read_instance_types(types, "IT.json");
  CHECK(infos.by_name.size() == 6);
  const aws::InstanceTypeInfo& p3 = infos.by_name.at("p3.2xlarge");
  CHECK(p3.gpus == 1);
  CHECK(p3.gpu_model == "V100");
  CHECK(p3.gpu_manufacturer == "NVIDIA");
  CHECK(p3.vcpus == 8);
  CHECK(p3.memory_mib == 62464);
  CHECK(p3.network_performance == "Up to 10 Gigabit");
  CHECK(infos.by_name.at("g4dn.xlarge").gpus == 3);
  CHECK(infos.by_name.at("g4dn.xlarge").gpu_model == "T4");
  CHECK(infos.by_name.at("p5.48xlarge").gpus == 8);
  CHECK(infos.by_name.at("p5.48xlarge").gpu_memory_mib == 8 * 81920);
  CHECK(infos.by_name.at("m5.xlarge").gpus == 0);
  CHECK(infos.by_name.at("m5.xlarge").gpu_model.empty());
}

TEST_CASE("quota families map type names to the EC2 vCPU quota groups") {
  const auto groups = [](const char* type) {
    const aws::QuotaGroupCodes codes = aws::quota_groups_for_type(type);
    return std::string(codes.spot) + "|" + std::string(codes.on_demand);
  };
  CHECK(groups("p3.2xlarge") == "L-7212CCBC|L-417A185B");
  CHECK(groups("p2.8xlarge") == "L-7212CCBC|L-417A185B");
  CHECK(groups("p4d.24xlarge") == "L-7212CCBC|L-417A185B");
  CHECK(groups("p5.48xlarge") == "L-C4BD4855|L-417A185B");
  CHECK(groups("p5en.48xlarge") == "L-C4BD4855|L-417A185B");
  CHECK(groups("g4dn.xlarge") == "L-3819A6DF|L-DB2E81BA");
  CHECK(groups("g3.8xlarge") == "L-3819A6DF|L-DB2E81BA");
  CHECK(groups("vt1.3xlarge") == "L-3819A6DF|L-DB2E81BA");
  CHECK(groups("m5.xlarge") == "L-34B43A08|L-1216C47A");
  CHECK(groups("c5n.18xlarge") == "L-34B43A08|L-1216C47A");
  for (const char* other : {"inf1.xlarge", "trn1.32xlarge", "dl1.24xlarge", "f1.2xlarge", "x1e.xlarge", "u-6tb1.metal",
                            "mac1.metal", "hpc6a.48xlarge", "", "p", "3.xlarge"}) {
    CAPTURE(other);
    CHECK(groups(other) == "|");
  }
  CHECK(aws::instance_family("g4dn.xlarge").letters == "g");
  CHECK(aws::instance_family("g4dn.xlarge").generation == 4);
  CHECK(aws::instance_family("vt1.3xlarge").letters == "vt");
  for (const aws::KnownQuotaGroup& group : aws::kEc2VcpuQuotaGroups) {
    CHECK(aws::known_quota_group(group.code) == &group);
  }
}

TEST_CASE("advisor labels map to the interruption band names and an unknown label or index is an error") {
  const Json data = fixture("spot-advisor-data.json");
  const aws::SpotAdvisor advisor = aws::read_spot_advisor(data, "ADV.json", "us-east-1");
  CHECK(advisor.region_found);
  CHECK(advisor.linux_types.at("p3.2xlarge").interruption_band == "10-15%");
  CHECK(advisor.linux_types.at("p3.2xlarge").savings_percent == 70);
  CHECK(advisor.linux_types.at("g4dn.xlarge").interruption_band == "<5%");
  CHECK(advisor.linux_types.at("dl1.24xlarge").interruption_band == ">20%");
  CHECK(aws::read_spot_advisor(data, "ADV.json", "eu-west-1").linux_types.at("p3.2xlarge").interruption_band == "5-10%");
  CHECK_FALSE(aws::read_spot_advisor(data, "ADV.json", "ap-south-1").region_found);
  CHECK(aws::interruption_band_from_label("< 5%") == "<5%");
  CHECK(aws::interruption_band_from_label("5-10 %") == "5-10%");
  CHECK(aws::interruption_band_from_label("rare").empty());

  Json bad = data;
  bad["ranges"][3]["label"] = "15-25%";
  CHECK(error_of([&] { (void)aws::read_spot_advisor(bad, "ADV.json", "us-east-1", "f"); }) ==
        "f: ADV.json: ranges[3].label = \"15-25%\": expected one of <5%, 5-10%, 10-15%, 15-20%, >20%");
  bad = data;
  bad["spot_advisor"]["us-east-1"]["Linux"]["g4dn.xlarge"]["r"] = 7;
  CHECK(error_of([&] { (void)aws::read_spot_advisor(bad, "ADV.json", "us-east-1", "f"); }) ==
        "f: ADV.json: spot_advisor.us-east-1.Linux.g4dn.xlarge.r = 7: no range has this index");
  bad = data;
  bad["ranges"][1]["index"] = 0;
  CHECK(error_of([&] { (void)aws::read_spot_advisor(bad, "ADV.json", "us-east-1", "f"); }) ==
        "f: ADV.json: ranges[1].index = 0: given twice");
  bad = data;
  bad["spot_advisor"]["us-east-1"]["Linux"]["g4dn.xlarge"]["s"] = 101;
  CHECK(error_of([&] { (void)aws::read_spot_advisor(bad, "ADV.json", "us-east-1", "f"); }) ==
        "f: ADV.json: spot_advisor.us-east-1.Linux.g4dn.xlarge.s = 101: must be a whole number from 0 to 100");
}

TEST_CASE("importing the fixtures builds the expected catalog") {
  const aws::CatalogImport imported = aws::import_catalog(all_sources(), us_east_1());
  const Catalog& c = imported.catalog;
  INFO(all_warnings(imported.warnings));
  CHECK(c.region == "us-east-1");
  CHECK(c.type_names() == "dl1.24xlarge, g4dn.xlarge, p3.2xlarge, p5.48xlarge");

  const InstanceType& p3 = c.at("p3.2xlarge");
  CHECK(p3.market == Market::spot);
  CHECK(p3.price_usd_per_hour == 0.918);  // the lowest latest zone price: us-east-1b
  CHECK(p3.price_observed_at == "2026-11-24T07:30:00Z");
  CHECK(p3.zone_prices_usd_per_hour == std::map<std::string, double>{{"us-east-1a", 0.95}, {"us-east-1b", 0.918}});
  CHECK(p3.gpus == 1);
  CHECK(p3.vcpus == 8);
  CHECK(p3.memory_mib == 62464);
  CHECK(p3.network_performance == "Up to 10 Gigabit");
  CHECK(p3.gpu_model == "V100");
  CHECK(p3.on_demand_price_usd_per_hour == 3.06);
  CHECK(p3.spot_quota_group == "L-7212CCBC");
  CHECK(p3.on_demand_quota_group == "L-417A185B");
  // The box around the counts: the larger of the spot group's 64 vCPUs / 8 and the on-demand group's
  // 128 vCPUs / 8; the planner limits spot p3.2xlarge to 8 through the spot group itself.
  CHECK(p3.quota == 16);
  CHECK(p3.interruption_band == std::optional<std::string>("10-15%"));
  CHECK(p3.pcie_bandwidth_bytes_per_s == kDefaultPcieBandwidthBytesPerS);
  CHECK_FALSE(p3.revocation_hazard_per_hour.has_value());

  const InstanceType& g4 = c.at("g4dn.xlarge");
  CHECK(g4.price_usd_per_hour == 0.21);
  CHECK(g4.price_observed_at == "2026-11-20T08:00:00Z");
  CHECK(g4.quota == 16);  // default 64 vCPUs / 4
  CHECK(g4.interruption_band == std::optional<std::string>("<5%"));
  CHECK(g4.on_demand_price_usd_per_hour == 0.526);

  const InstanceType& p5 = c.at("p5.48xlarge");
  CHECK(p5.gpus == 8);
  CHECK(p5.quota == 16);  // no value of L-C4BD4855: options.quota_without_group_instances
  CHECK_FALSE(p5.interruption_band.has_value());
  CHECK(p5.on_demand_price_usd_per_hour == 98.32);

  const InstanceType& dl1 = c.at("dl1.24xlarge");
  CHECK(dl1.spot_quota_group.empty());
  CHECK(dl1.on_demand_quota_group.empty());
  CHECK(dl1.on_demand_price_usd_per_hour == 0);
  CHECK(dl1.interruption_band == std::optional<std::string>(">20%"));

  REQUIRE(c.quota_group("L-7212CCBC") != nullptr);
  CHECK(c.quota_group("L-7212CCBC")->vcpus == 64);
  CHECK(c.quota_group("L-7212CCBC")->market == Market::spot);
  CHECK(c.quota_group("L-7212CCBC")->name == "All P4, P3 and P2 Spot Instance Requests");
  CHECK(c.quota_group("L-417A185B")->vcpus == 128);
  CHECK(c.quota_group("L-417A185B")->market == Market::on_demand);
  CHECK(c.quota_group("L-3819A6DF")->vcpus == 64);
  CHECK(c.quota_group("L-DB2E81BA")->vcpus == 32);
  CHECK(c.quota_group("L-C4BD4855") == nullptr);
  // No worker is a standard type, but the parameter server m5.xlarge is: its on-demand group is kept.
  REQUIRE(c.quota_group("L-1216C47A") != nullptr);
  CHECK(c.quota_group("L-1216C47A")->vcpus == 1152);
  CHECK(c.quota_group("L-1216C47A")->market == Market::on_demand);
  CHECK(c.quota_groups.size() == 5);

  CHECK(c.parameter_server.type == "m5.xlarge");
  CHECK(c.parameter_server.price_usd_per_hour == 0.192);
  CHECK(c.parameter_server.vcpus == 4);
  CHECK(c.parameter_server.quota_group == "L-1216C47A");
  CHECK(c.missing_sources.empty());

  const auto& w = imported.warnings;
  CHECK(has_warning(w, "SP.json: skipped 2 rows that are not Linux/UNIX"));
  CHECK(has_warning(w, "SP.json: skipped the prices of zones outside us-east-1: eu-west-1a"));
  CHECK(has_warning(w, "skipped 1 types with a spot price that IT.json does not describe (GPUs unknown): g3.4xlarge"));
  CHECK(has_warning(w, "skipped 1 GPU types without a Linux spot price in us-east-1 in SP.json: g5.xlarge"));
  CHECK(has_warning(w, "dl1.24xlarge: no Linux, shared-tenancy on-demand product in PR.json: its on-demand price is unknown"));
  CHECK(has_warning(w, "dl1.24xlarge: instance family \"dl\" has no known EC2 spot vCPU quota group: its quota is set to 16 instances"));
  CHECK(has_warning(w, "p5.48xlarge: no known value of its spot vCPU quota group L-C4BD4855: its quota is set to 16 instances"));
  CHECK(has_warning(w, "p5.48xlarge: not in the Spot Advisor's Linux data for us-east-1 in ADV.json: interruption band unknown"));
  CHECK_FALSE(has_warning(w, "m5.xlarge"));
  CHECK_FALSE(has_warning(w, "parameter server"));
}

TEST_CASE("stale prices give a warning naming the type zone and age") {
  aws::CatalogImportOptions options = us_east_1();
  const aws::CatalogImport imported = aws::import_catalog(all_sources(), options);
  INFO(all_warnings(imported.warnings));
  CHECK(has_warning(imported.warnings, "g4dn.xlarge in us-east-1a: the latest spot price ($0.21/h, 2026-11-20T08:00:00Z) is 4.0 days old"));
  CHECK_FALSE(has_warning(imported.warnings, "g4dn.xlarge in us-east-1c"));
  CHECK_FALSE(has_warning(imported.warnings, "p3.2xlarge in"));

  options.max_price_age_s = 3600;  // p3.2xlarge in us-east-1b is 1.5 h old
  CHECK(has_warning(aws::import_catalog(all_sources(), options).warnings, "p3.2xlarge in us-east-1b: the latest spot price ($0.918/h, 2026-11-24T07:30:00Z) is 90 min old"));
  options.max_price_age_s = 30 * 86400;
  CHECK_FALSE(has_warning(aws::import_catalog(all_sources(), options).warnings, "old"));
  options = us_east_1();
  options.now_unix_s = 0;  // no clock: no age check
  CHECK_FALSE(has_warning(aws::import_catalog(all_sources(), options).warnings, "days old"));
}

TEST_CASE("a quota without an applied value falls back to the default list and a group without any value warns") {
  aws::CatalogImportSources sources = all_sources();
  aws::CatalogImport imported = aws::import_catalog(sources, us_east_1());
  INFO(all_warnings(imported.warnings));
  CHECK(has_warning(imported.warnings, "quota group L-3819A6DF (All G and VT Spot Instance Requests): no applied value in Q.json: using the default value 64 vCPUs from DQ.json"));
  CHECK(has_warning(imported.warnings, "quota group L-DB2E81BA (Running On-Demand G and VT instances): no applied value in Q.json: using the default value 32 vCPUs from DQ.json"));
  CHECK(has_warning(imported.warnings, "quota group L-C4BD4855 (All P5 Spot Instance Requests): no value known in Q.json or DQ.json"));
  CHECK_FALSE(has_warning(imported.warnings, "quota group L-7212CCBC"));  // the applied 64 beats the default 0

  sources.default_quotas.reset();
  imported = aws::import_catalog(sources, us_east_1());
  CHECK(imported.catalog.quota_group("L-3819A6DF") == nullptr);
  CHECK(imported.catalog.at("g4dn.xlarge").quota == 16);
  CHECK(has_warning(imported.warnings, "quota group L-3819A6DF (All G and VT Spot Instance Requests): no value known in Q.json"));
  CHECK(has_warning(imported.warnings, "g4dn.xlarge: no known value of its spot vCPU quota group L-3819A6DF: its quota is set to 16 instances"));
  CHECK(imported.catalog.missing_sources == std::vector<std::string>{"default quotas: not given"});

  sources.quotas.reset();
  sources.default_quotas = aws::ImportSource{fixture("default-service-quotas.json"), "DQ.json"};
  imported = aws::import_catalog(sources, us_east_1());
  CHECK(imported.catalog.quota_group("L-7212CCBC")->vcpus == 0);
  CHECK(imported.catalog.at("p3.2xlarge").quota == 0);
  CHECK_FALSE(has_warning(imported.warnings, "no applied value"));  // no applied list to miss it from

  aws::CatalogImportOptions options = us_east_1();
  options.quota_without_group_instances = 3;
  sources.default_quotas.reset();
  imported = aws::import_catalog(sources, options);
  CHECK(imported.catalog.quota_groups.empty());
  for (const InstanceType& type : imported.catalog.instance_types) CHECK(type.quota == 3);
  CHECK(has_warning(imported.warnings, "quota group L-7212CCBC (All P4, P3 and P2 Spot Instance Requests): no value known (no quotas given)"));

  sources = all_sources();
  sources.quotas->json["Quotas"][0]["Value"] = 1e6;  // 1e6 vCPUs / 8 = 125000 instances: capped at kMaxQuota
  CHECK(aws::import_catalog(sources, us_east_1()).catalog.at("p3.2xlarge").quota == kMaxQuota);
  sources.quotas->json["Quotas"][0]["Value"] = 0;  // no spot P instances: the on-demand group still allows 16
  CHECK(aws::import_catalog(sources, us_east_1()).catalog.at("p3.2xlarge").quota == 16);
  sources.quotas->json["Quotas"][0]["Value"] = 71.9;
  CHECK(aws::import_catalog(sources, us_east_1()).catalog.quota_group("L-7212CCBC")->vcpus == 71);
  sources.quotas->json["Quotas"][0]["Value"] = -1;
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: Q.json: Quotas[0].Value = -1: must be from 0 to 100000000");
}

TEST_CASE("requested types without price or description are skipped with a warning and none left is an error") {
  aws::CatalogImportOptions options = us_east_1();
  options.types = {"p3.2xlarge", "g5.xlarge", "g3.4xlarge", "m5.xlarge", "x9.huge"};
  const aws::CatalogImport imported = aws::import_catalog(all_sources(), options);
  CHECK(imported.catalog.type_names() == "p3.2xlarge");
  CHECK(has_warning(imported.warnings, "g5.xlarge: skipped: no Linux/UNIX spot price in us-east-1 in SP.json"));
  CHECK(has_warning(imported.warnings, "g3.4xlarge: skipped: IT.json does not describe this type"));
  CHECK(has_warning(imported.warnings, "m5.xlarge: skipped: IT.json gives it no GPU"));
  CHECK(has_warning(imported.warnings, "x9.huge: skipped: IT.json does not describe this type"));

  options.types = {"g5.xlarge", "x9.huge"};
  CHECK(error_of([&] { (void)aws::import_catalog(all_sources(), options); }) ==
        "import_catalog: types = g5.xlarge, x9.huge: no GPU instance type with a Linux/UNIX spot price in us-east-1 is described by IT.json");
  options.types = {"p3.2xlarge", "p3.2xlarge"};
  CHECK(error_of([&] { (void)aws::import_catalog(all_sources(), options); }) ==
        "import_catalog: options.types[1] = \"p3.2xlarge\": listed twice");
  options.types = {};
  options.region = "";
  CHECK(error_of([&] { (void)aws::import_catalog(all_sources(), options); }) == "import_catalog: options.region = \"\": must not be empty");
  options.region = "ap-south-1";
  CHECK(error_of([&] { (void)aws::import_catalog(all_sources(), options); }).find("no Linux/UNIX spot price in SP.json for an Availability Zone of ap-south-1") != std::string::npos);
}

TEST_CASE("a base catalog keeps its other types and its region must match") {
  Catalog base = presets::resnet110_catalog();
  base.instance_types[0].revocation_hazard_per_hour = 0.05;  // p3.2xlarge
  base.instance_types[0].pcie_bandwidth_bytes_per_s = 12e9;
  base.parameter_server.type = "c5.xlarge";
  base.parameter_server.price_usd_per_hour = 0.17;
  aws::CatalogImportOptions options = us_east_1();
  options.base = base;
  options.types = {"p3.2xlarge", "g4dn.xlarge"};
  const aws::CatalogImport imported = aws::import_catalog(all_sources(), options);
  const Catalog& c = imported.catalog;
  INFO(all_warnings(imported.warnings));
  // The base's order first, the new type after.
  CHECK(c.type_names() == "p3.2xlarge, g4dn.4xlarge, g3.8xlarge, g3.16xlarge, p2.8xlarge, g4dn.xlarge");
  const InstanceType& p3 = c.at("p3.2xlarge");
  CHECK(p3.price_usd_per_hour == 0.918);
  CHECK(p3.quota == 16);  // max(64, 128 on-demand) vCPUs / 8
  CHECK(p3.on_demand_price_usd_per_hour == 3.06);
  CHECK(p3.revocation_hazard_per_hour == std::optional<double>(0.05));
  CHECK(p3.pcie_bandwidth_bytes_per_s == 12e9);
  // Base-only types are kept as they were.
  CHECK(io::to_json(c.at("g3.8xlarge")) == io::to_json(base.at("g3.8xlarge")));
  CHECK(has_warning(imported.warnings, "g3.8xlarge: kept from the base catalog: its prices were not updated"));
  CHECK(has_warning(imported.warnings, "p2.8xlarge: kept from the base catalog: its prices were not updated"));
  CHECK_FALSE(has_warning(imported.warnings, "p3.2xlarge: kept"));
  // The base's parameter server (no c5.xlarge product in the pricing output: its price is kept).
  CHECK(c.parameter_server.type == "c5.xlarge");
  CHECK(c.parameter_server.price_usd_per_hour == 0.17);

  options.base->region = "eu-west-1";
  CHECK(error_of([&] { (void)aws::import_catalog(all_sources(), options); }) ==
        "import_catalog: options.base.region = \"eu-west-1\": the base catalog is for another region than us-east-1");
}

TEST_CASE("the parameter server is priced from the pricing output else from the preset with a warning") {
  aws::CatalogImportSources sources = all_sources();
  sources.on_demand_prices->json["PriceList"].erase(9);  // m5.xlarge
  aws::CatalogImport imported = aws::import_catalog(sources, us_east_1());
  CHECK(imported.catalog.parameter_server.price_usd_per_hour == presets::resnet110_catalog().parameter_server.price_usd_per_hour);
  CHECK(has_warning(imported.warnings, "parameter server m5.xlarge: no on-demand price in PR.json: using the frozen preset price $0.192/h"));

  Json m5 = Json::parse(all_sources().on_demand_prices->json["PriceList"][9].get<std::string>());
  m5["terms"]["OnDemand"]["M5LINUX.JRTCKXETXF"]["priceDimensions"]["M5LINUX.JRTCKXETXF.6YS6EN2CT7"]["pricePerUnit"]["USD"] = "0.2000000000";
  sources.on_demand_prices->json["PriceList"].push_back(m5.dump());
  imported = aws::import_catalog(sources, us_east_1());
  CHECK(imported.catalog.parameter_server.price_usd_per_hour == 0.2);
  CHECK_FALSE(has_warning(imported.warnings, "parameter server"));

  sources.on_demand_prices.reset();
  imported = aws::import_catalog(sources, us_east_1());
  CHECK(has_warning(imported.warnings, "parameter server m5.xlarge: no on-demand price in the given sources: using the frozen preset price $0.192/h"));
  CHECK(imported.catalog.at("p3.2xlarge").on_demand_price_usd_per_hour == 0);
}

TEST_CASE("missing sources are listed in the catalog with their reasons") {
  aws::CatalogImportSources sources = all_sources();
  sources.on_demand_prices.reset();
  sources.quotas.reset();
  sources.default_quotas.reset();
  sources.advisor.reset();
  sources.missing = {"quotas: AccessDeniedException: not authorized to perform servicequotas:ListServiceQuotas"};
  const aws::CatalogImport imported = aws::import_catalog(sources, us_east_1());
  CHECK(imported.catalog.missing_sources ==
        std::vector<std::string>{"quotas: AccessDeniedException: not authorized to perform servicequotas:ListServiceQuotas",
                                 "on-demand prices: not given", "default quotas: not given", "advisor: not given"});
  for (const InstanceType& type : imported.catalog.instance_types) CHECK_FALSE(type.interruption_band.has_value());

  sources.missing = {"bad\nline"};
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: sources.missing[0] = \"bad\\nline\": must not contain control characters");
}

TEST_CASE("the imported catalog validates and round-trips through catalog JSON") {
  for (bool with_base : {false, true}) {
    CAPTURE(with_base);
    aws::CatalogImportOptions options = us_east_1();
    if (with_base) options.base = presets::resnet110_catalog();
    const Catalog catalog = aws::import_catalog(all_sources(), options).catalog;
    CHECK_NOTHROW(catalog.validate());
    const Json written = io::to_json(catalog);
    const Catalog back = io::catalog_from_json(io::parse_json(written.dump(2), "written"));
    CHECK(io::to_json(back) == written);
    CHECK(back.at("p3.2xlarge").zone_prices_usd_per_hour.size() == 2);
    CHECK(back.at("p3.2xlarge").price_observed_at == "2026-11-24T07:30:00Z");
  }
}

TEST_CASE("hostile values in AWS outputs are refused with one-line messages") {
  aws::CatalogImportSources sources = all_sources();
  sources.spot_prices.json["SpotPriceHistory"][0]["InstanceType"] = "p3\n\x1b[31mred";
  std::string message = error_of([&] { (void)aws::import_catalog(sources, us_east_1()); });
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.find("must be printable UTF-8 text") != std::string::npos);
  sources = all_sources();
  sources.instance_types.json["InstanceTypes"][0]["NetworkInfo"]["NetworkPerformance"] = std::string(5000, 'x');
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }).find("longer than 1024 bytes") != std::string::npos);
  sources = all_sources();
  sources.instance_types.json["InstanceTypes"][0]["VCpuInfo"]["DefaultVCpus"] = 18446744073709551615ULL;
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }) ==
        "import_catalog: IT.json: InstanceTypes[0].VCpuInfo.DefaultVCpus = 18446744073709551615: must be a whole number from 1 to 100000");
  sources = all_sources();
  sources.spot_prices.json["SpotPriceHistory"][0]["SpotPrice"] = std::string(100, '9');
  CHECK(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }).find("expected a decimal number of USD per hour") != std::string::npos);
}

TEST_CASE("zones belong to a region by name and a NextToken gives a warning") {
  CHECK(aws::import_detail::zone_in_region("us-east-1a", "us-east-1"));
  CHECK(aws::import_detail::zone_in_region("us-east-1-bos-1a", "us-east-1"));
  CHECK_FALSE(aws::import_detail::zone_in_region("us-east-1", "us-east-1"));
  CHECK_FALSE(aws::import_detail::zone_in_region("us-east-10a", "us-east-1"));
  CHECK_FALSE(aws::import_detail::zone_in_region("us-east-1-", "us-east-1"));
  CHECK_FALSE(aws::import_detail::zone_in_region("eu-west-1a", "us-east-1"));

  aws::CatalogImportSources sources = all_sources();
  sources.spot_prices.json["NextToken"] = "abc";
  sources.on_demand_prices->json["NextToken"] = "def";
  const aws::CatalogImport imported = aws::import_catalog(sources, us_east_1());
  CHECK(has_warning(imported.warnings, "SP.json: the output has a NextToken: only its first page was read"));
  CHECK(has_warning(imported.warnings, "PR.json: the output has a NextToken: only its first page was read"));
  CHECK_FALSE(has_warning(imported.warnings, "IT.json: the output has a NextToken"));
  sources.spot_prices.json["NextToken"] = "";
  CHECK_FALSE(has_warning(aws::import_catalog(sources, us_east_1()).warnings, "SP.json: the output has a NextToken"));
}

TEST_CASE("the parameter server gets its vCPUs from the instance types and its on-demand group from the quotas") {
  // Neither quota list has the standard group: no group, vCPUs still filled, no warning.
  aws::CatalogImportSources sources = all_sources();
  const auto drop_standard = [](Json& quotas) {
    Json& list = quotas["Quotas"];
    for (std::size_t i = list.size(); i-- > 0;) {
      if (list[i]["QuotaCode"] == "L-1216C47A") list.erase(i);
    }
  };
  drop_standard(sources.quotas->json);
  drop_standard(sources.default_quotas->json);
  aws::CatalogImport imported = aws::import_catalog(sources, us_east_1());
  CHECK(imported.catalog.parameter_server.vcpus == 4);
  CHECK(imported.catalog.parameter_server.quota_group.empty());
  CHECK(imported.catalog.quota_group("L-1216C47A") == nullptr);
  CHECK_FALSE(has_warning(imported.warnings, "L-1216C47A"));

  // The quotas have the group but describe-instance-types does not list the PS: a warning, no group on the PS.
  sources = all_sources();
  Json& types = sources.instance_types.json["InstanceTypes"];
  for (std::size_t i = types.size(); i-- > 0;) {
    if (types[i]["InstanceType"] == "m5.xlarge") types.erase(i);
  }
  imported = aws::import_catalog(sources, us_east_1());
  CHECK(imported.catalog.parameter_server.vcpus == 0);
  CHECK(imported.catalog.parameter_server.quota_group.empty());
  CHECK(has_warning(imported.warnings, "parameter server m5.xlarge: IT.json does not describe it, so its vCPUs are unknown and "
                                       "on-demand quota group L-1216C47A does not count it"));
  CHECK_NOTHROW(imported.catalog.validate());

  // A base catalog's PS of another family: its own on-demand group (G and VT), from the applied quotas.
  aws::CatalogImportOptions options = us_east_1();
  options.base = presets::resnet110_catalog();
  options.base->parameter_server.type = "g4dn.xlarge";
  imported = aws::import_catalog(all_sources(), options);
  CHECK(imported.catalog.parameter_server.vcpus == 4);
  CHECK(imported.catalog.parameter_server.quota_group == "L-DB2E81BA");
}

TEST_CASE("the parameter server's vCPUs and quota group round-trip through catalog JSON and old catalogs still read") {
  const Catalog imported = aws::import_catalog(all_sources(), us_east_1()).catalog;
  const Json written = io::to_json(imported);
  CHECK(written["parameter_server"]["vcpus"] == 4);
  CHECK(written["parameter_server"]["quota_group"] == "L-1216C47A");
  const Catalog back = io::catalog_from_json(written);
  CHECK(back.parameter_server.vcpus == 4);
  CHECK(back.parameter_server.quota_group == "L-1216C47A");

  Json old = io::to_json(presets::resnet110_catalog());
  CHECK_FALSE(old["parameter_server"].contains("vcpus"));
  CHECK_FALSE(old["parameter_server"].contains("quota_group"));
  CHECK(io::catalog_from_json(old).parameter_server.vcpus == 0);

  Json bad = written;
  bad["parameter_server"]["quota_group"] = "L-NOPE";
  CHECK(error_of([&] { (void)io::catalog_from_json(bad); }).find("parameter_server.quota_group = \"L-NOPE\": names no group of quota_groups") !=
        std::string::npos);
  bad = written;
  bad["parameter_server"]["vcpus"] = -4;
  CHECK(error_of([&] { (void)io::catalog_from_json(bad); }).find("catalog.parameter_server.vcpus") != std::string::npos);
  bad["parameter_server"]["vcpus"] = 1.5;
  CHECK(error_of([&] { (void)io::catalog_from_json(bad); }).find("catalog.parameter_server.vcpus") != std::string::npos);
  bad["parameter_server"]["vcpus"] = "4";
  CHECK(error_of([&] { (void)io::catalog_from_json(bad); }).find("catalog.parameter_server.vcpus") != std::string::npos);
  bad = written;
  bad["parameter_server"]["quota_groups"] = "L-1216C47A";  // a misspelt key is refused, as every catalog key
  CHECK(error_of([&] { (void)io::catalog_from_json(bad); }).find("quota_groups") != std::string::npos);
}

TEST_CASE("catalog fetch's describe-instance-types and pricing calls ask for the parameter server's type once") {
  aws::FetchRequestOptions options;
  options.start_time = "2026-11-24T09:00:00Z";
  const auto argv_of = [](const std::vector<aws::FetchRequest>& requests, aws::FetchSource source) {
    for (const aws::FetchRequest& request : requests) {
      if (request.source == source) return request.argv;
    }
    return std::vector<std::string>{};
  };
  const std::vector<aws::FetchRequest> requests = aws::fetch_requests("us-east-1", {"p3.2xlarge", "g4dn.xlarge"}, options);
  CHECK(argv_of(requests, aws::FetchSource::instance_types) ==
        std::vector<std::string>{"aws", "ec2", "describe-instance-types", "--region", "us-east-1", "--instance-types", "p3.2xlarge",
                                 "g4dn.xlarge", "m5.xlarge", "--output", "json"});
  CHECK(argv_of(requests, aws::FetchSource::on_demand_prices)[13] == "Type=ANY_OF,Field=instanceType,Value=\"p3.2xlarge,g4dn.xlarge,m5.xlarge\"");
  // The spot prices are asked for the GPU types only.
  const std::vector<std::string> spot = argv_of(requests, aws::FetchSource::spot_prices);
  CHECK(std::find(spot.begin(), spot.end(), "m5.xlarge") == spot.end());

  // A type list that names the PS's type asks for it once.
  options.parameter_server_type = "g4dn.xlarge";
  const std::vector<std::string> once = argv_of(aws::fetch_requests("us-east-1", {"p3.2xlarge", "g4dn.xlarge"}, options),
                                                aws::FetchSource::instance_types);
  CHECK(std::count(once.begin(), once.end(), "g4dn.xlarge") == 1);
  CHECK(once.size() == 10);

  // DescribeInstanceTypes takes 100 types: 99 beside the PS's type, or 100 that include it.
  options.parameter_server_type = "m5.xlarge";
  std::vector<std::string> many;
  for (int i = 0; i < 99; ++i) many.push_back("g" + std::to_string(i) + ".xlarge");
  const std::vector<std::string> full = argv_of(aws::fetch_requests("us-east-1", many, options), aws::FetchSource::instance_types);
  CHECK(full.size() == 6 + 100 + 2);  // aws ec2 describe-instance-types --region R --instance-types, 100 types, --output json
  many.push_back("g99.xlarge");
  CHECK(error_of([&] { (void)aws::fetch_requests("us-east-1", many, options); })
            .find("types = 100 types: at most 100 types per fetch, the parameter server's m5.xlarge included") != std::string::npos);
  many.back() = "m5.xlarge";
  CHECK_NOTHROW((void)aws::fetch_requests("us-east-1", many, options));
  options.parameter_server_type = "M5";
  CHECK(error_of([&] { (void)aws::fetch_requests("us-east-1", {"p3.2xlarge"}, options); }).find("options.parameter_server_type") !=
        std::string::npos);
}
