// SPDX-License-Identifier: MIT
// The forms in which people hold AWS market data (docs/market-data.md, "Forms read"): bare lists, Go SDK
// nulls, the EC2 offer file, decoded PriceList entries (one or a stream), recorded SDK responses, and what
// a file of none of these forms is said to look like. Fixtures: tests/fixtures/aws/forms/ (README there).
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <spotdnn/io/aws/catalog_import.hpp>
#include <spotdnn/io/aws/output_forms.hpp>
#include <spotdnn/io/json.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;
using io::Json;
namespace aws = spotdnn::io::aws;

using spotdnn::test::error_of;

namespace {

std::string forms_path(const std::string& name) { return std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/aws/forms/" + name; }

Json form(const std::string& name) { return aws::read_aws_output_file(forms_path(name)); }

std::string text_of(const std::string& name) {
  std::ifstream in(forms_path(name), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// 2026-11-24T09:00:00Z
constexpr std::int64_t kNow = 1795510800;

aws::CatalogImportOptions us_east_1() {
  aws::CatalogImportOptions o;
  o.region = "us-east-1";
  o.now_unix_s = kNow;
  return o;
}

}  // namespace

TEST_CASE("a bare list of instance types reads like the describe-instance-types output it came from") {
  const Json bare = form("instance-types-bare.json");
  REQUIRE(bare.is_array());
  const aws::InstanceTypeInfos from_bare = aws::read_instance_types(bare, "IT.json");
  const aws::InstanceTypeInfos from_output = aws::read_instance_types(Json{{"InstanceTypes", bare}}, "IT.json");
  REQUIRE(from_bare.by_name.size() == 3);
  CHECK(from_bare.by_name.at("p3.2xlarge").gpus == 1);
  CHECK(from_bare.by_name.at("p3.2xlarge").gpu_memory_mib == 16384);
  CHECK(from_bare.by_name.at("m5.xlarge").gpus == 0);
  CHECK_FALSE(from_bare.more_pages);
  for (const auto& entry : from_output.by_name) {
    const std::string& name = entry.first;
    CAPTURE(name);
    CHECK(from_bare.by_name.at(name).vcpus == entry.second.vcpus);
    CHECK(from_bare.by_name.at(name).memory_mib == entry.second.memory_mib);
    CHECK(from_bare.by_name.at(name).gpu_model == entry.second.gpu_model);
  }
  // Errors name the entry by its index in the bare list.
  Json bad = bare;
  bad[1]["VCpuInfo"].erase("DefaultVCpus");
  CHECK(error_of([&] { (void)aws::read_instance_types(bad, "IT.json", "f"); }) ==
        "f: IT.json: [1].VCpuInfo.DefaultVCpus = missing: this key is required");
  // A list of something else is refused at its first entry.
  CHECK(contains(error_of([&] { (void)aws::read_instance_types(Json::parse("[1, 2]"), "IT.json", "f"); }), "f: IT.json: [0] = 1: expected a JSON object"));
}

TEST_CASE("a bare list of spot prices reads like the describe-spot-price-history output") {
  const Json bare = form("spot-price-history-bare.json");
  const aws::SpotPriceHistory history = aws::read_spot_price_history(bare, "SP.json");
  CHECK(history.rows == 3);
  REQUIRE(history.latest.size() == 3);
  CHECK(history.latest[1].instance_type == "p3.2xlarge");
  CHECK(history.latest[1].price_usd_per_hour == 0.918);
  CHECK(history.latest[1].path == "[0]");
  CHECK(history.list_path.empty());
  Json bad = bare;
  bad[2]["SpotPrice"] = "abc";
  CHECK(error_of([&] { (void)aws::read_spot_price_history(bad, "SP.json", "f"); }) ==
        "f: SP.json: [2].SpotPrice = \"abc\": expected a decimal number of USD per hour");
  Json windows = bare;
  for (Json& row : windows) row["ProductDescription"] = "Windows";
  CHECK(error_of([&] { (void)aws::read_spot_price_history(windows, "SP.json", "f"); }) ==
        "f: SP.json = 3 rows: no Linux/UNIX spot price in SP.json");
}

TEST_CASE("Go SDK nulls read as absent, never as a value") {
  const Json go = form("instance-types-go-sdk.json");
  const aws::InstanceTypeInfos infos = aws::read_instance_types(go, "IT.json", "f");
  CHECK_FALSE(infos.more_pages);  // "NextToken": null
  CHECK(infos.by_name.at("m5.xlarge").gpus == 0);  // "GpuInfo": null
  CHECK(infos.by_name.at("g4dn.xlarge").gpus == 1);
  CHECK(infos.by_name.at("g4dn.xlarge").network_performance == "Up to 25 Gigabit");

  Json bad = go;
  bad["InstanceTypes"][0]["VCpuInfo"]["DefaultVCpus"] = nullptr;
  CHECK(error_of([&] { (void)aws::read_instance_types(bad, "IT.json", "f"); }) ==
        "f: IT.json: InstanceTypes[0].VCpuInfo.DefaultVCpus = null: this key is required (null is read as absent)");
  bad = go;
  bad["InstanceTypes"][2]["MemoryInfo"] = nullptr;
  bad["InstanceTypes"][2]["NetworkInfo"]["NetworkPerformance"] = nullptr;
  const aws::InstanceTypeInfos no_memory = aws::read_instance_types(bad, "IT.json", "f");
  CHECK(no_memory.by_name.at("m5.xlarge").memory_mib == 0);
  CHECK(no_memory.by_name.at("m5.xlarge").network_performance.empty());
  bad = go;
  bad["InstanceTypes"] = nullptr;  // the Go SDK's empty list
  CHECK(error_of([&] { (void)aws::read_instance_types(bad, "IT.json", "f"); }) ==
        "f: IT.json: InstanceTypes = null: this key is required (null is read as absent: the output lists nothing)");

  const Json spot = form("spot-price-history-go-sdk.json");
  const aws::SpotPriceHistory history = aws::read_spot_price_history(spot, "SP.json", "f");
  CHECK(history.latest.size() == 3);
  CHECK_FALSE(history.more_pages);
  CHECK(history.latest[1].observed_at_unix_s == kNow - 3600);
  Json null_price = spot;
  null_price["SpotPriceHistory"][1]["SpotPrice"] = nullptr;
  CHECK(error_of([&] { (void)aws::read_spot_price_history(null_price, "SP.json", "f"); }) ==
        "f: SP.json: SpotPriceHistory[1].SpotPrice = null: this key is required (null is read as absent)");
}

TEST_CASE("the offer file gives the Linux shared on-demand price and never a placeholder") {
  const Json offer = form("offer-file-us-east-1.json");
  const aws::OnDemandPrices prices = aws::read_pricing_products(offer, "OF.json", "us-east-1", "f");
  CHECK(prices.form == "offer file");
  CHECK(prices.products == 12);
  REQUIRE(prices.by_type.size() == 3);
  CHECK(prices.by_type.at("p3.2xlarge").price_usd_per_hour == 3.06);
  CHECK(prices.by_type.at("p3.2xlarge").sku == "P3LINUXSHARED");
  CHECK(prices.by_type.at("p3.2xlarge").path == "products.P3LINUXSHARED");
  CHECK(prices.by_type.at("g4dn.xlarge").price_usd_per_hour == 0.526);
  CHECK(prices.by_type.at("m5.xlarge").price_usd_per_hour == 0.192);
  // Windows, Dedicated, SQL Web, two capacity reservations, a Capacity Block, a Dedicated Host, data transfer.
  CHECK(prices.other_products == 8);
  CHECK(prices.zero_price_products == 1);  // the $0 p4d.24xlarge placeholder
  CHECK(prices.by_type.count("p4d.24xlarge") == 0);
  CHECK(prices.by_type.count("p5.48xlarge") == 0);

  // A Linux/Shared/NA/Used product without an OnDemand term is skipped and counted.
  Json no_term = offer;
  no_term["terms"]["OnDemand"].erase("G4DNLINUXSHARED");
  const aws::OnDemandPrices fewer = aws::read_pricing_products(no_term, "OF.json", "us-east-1");
  CHECK(fewer.by_type.count("g4dn.xlarge") == 0);
  CHECK(fewer.without_on_demand_term == 1);
  // Two chosen products of one type with different prices are an error naming both.
  Json twice = offer;
  twice["products"]["P3UNUSEDCR"]["attributes"]["capacitystatus"] = "Used";
  twice["terms"]["OnDemand"]["P3UNUSEDCR"]["P3UNUSEDCR.JRTCKXETXF"]["priceDimensions"]["P3UNUSEDCR.JRTCKXETXF.6YS6EN2CT7"]["pricePerUnit"]["USD"] = "3.5";
  CHECK(contains(error_of([&] { (void)aws::read_pricing_products(twice, "OF.json", "us-east-1", "f"); }),
                 "f: OF.json: products.P3UNUSEDCR = \"p3.2xlarge\": a second Linux/Shared/NA/Used on-demand product"));
}

TEST_CASE("an offer file priced in another currency than USD is refused naming the currency") {
  Json offer = form("offer-file-us-east-1.json");
  Json& per_unit = offer["terms"]["OnDemand"]["P3LINUXSHARED"]["P3LINUXSHARED.JRTCKXETXF"]["priceDimensions"]
                        ["P3LINUXSHARED.JRTCKXETXF.6YS6EN2CT7"]["pricePerUnit"];
  per_unit = {{"CNY", "21.9500000000"}};
  const std::string error = error_of([&] { (void)aws::read_pricing_products(offer, "OF.json", "us-east-1", "f"); });
  CHECK(error.rfind("f: OF.json: terms.OnDemand.P3LINUXSHARED.P3LINUXSHARED.JRTCKXETXF.priceDimensions."
                    "P3LINUXSHARED.JRTCKXETXF.6YS6EN2CT7.pricePerUnit = {\"CNY\":\"21.9500000000\"}: priced in CNY, not USD",
                    0) == 0);
  // USD beside another currency is read.
  per_unit = {{"CNY", "21.9500000000"}, {"USD", "3.0600000000"}};
  CHECK(aws::read_pricing_products(offer, "OF.json", "us-east-1").by_type.at("p3.2xlarge").price_usd_per_hour == 3.06);
}

TEST_CASE("an offer file of another region or another service is refused naming what it is") {
  const Json ireland = form("offer-file-eu-west-1.json");
  CHECK(aws::read_pricing_products(ireland, "OF.json", "eu-west-1").by_type.at("p3.2xlarge").price_usd_per_hour == 3.305);
  CHECK(error_of([&] { (void)aws::read_pricing_products(ireland, "OF.json", "us-east-1", "f"); }) ==
        "f: OF.json = regionCode eu-west-1: the on-demand prices are of eu-west-1, not of us-east-1 (--region): give the offer "
        "file or get-products output of us-east-1");
  // The same rule for a get-products output whose products are all of another region.
  Json products = form("price-list-products.jsonl");
  for (Json& entry : products) entry["product"]["attributes"]["regionCode"] = "ap-south-1";
  CHECK(contains(error_of([&] { (void)aws::read_pricing_products(Json{{"PriceList", products}}, "PR.json", "us-east-1", "f"); }),
                 "the on-demand prices are of ap-south-1, not of us-east-1"));
  Json s3 = ireland;
  s3["offerCode"] = "AmazonS3";
  CHECK(error_of([&] { (void)aws::read_pricing_products(s3, "OF.json", "eu-west-1", "f"); }) ==
        "f: OF.json: offerCode = \"AmazonS3\": the offer file of another service: on-demand instance prices are in the AmazonEC2 offer file");
}

TEST_CASE("decoded PriceList entries are read one at a time or as a stream") {
  const Json one = form("price-list-product.json");
  REQUIRE(one.is_object());
  const aws::OnDemandPrices single = aws::read_pricing_products(one, "P.json", "us-east-1", "f");
  CHECK(single.form == "products");
  CHECK(single.by_type.at("p3.2xlarge").price_usd_per_hour == 3.06);
  CHECK(single.by_type.at("p3.2xlarge").path == "product");

  const Json lines = form("price-list-products.jsonl");  // one object per line (jq -c)
  REQUIRE(lines.is_array());
  CHECK(lines.size() == 5);
  const aws::OnDemandPrices streamed = aws::read_pricing_products(lines, "P.jsonl", "us-east-1", "f");
  CHECK(streamed.products == 5);
  CHECK(streamed.by_type.size() == 3);
  CHECK(streamed.other_products == 2);  // Windows and the AllocatedCapacityReservation
  CHECK(streamed.by_type.at("g4dn.xlarge").path == "[1]");

  const Json pretty = form("price-list-products-pretty.json");  // jq without -c: pretty objects one after another
  CHECK(aws::read_pricing_products(pretty, "P.json", "us-east-1").by_type.size() == 3);
  // Concatenated with nothing between them.
  std::string glued;
  for (const Json& entry : lines) glued += entry.dump();
  CHECK(aws::parse_aws_output(glued, "G.json") == lines);
  // Errors in a streamed entry name its index.
  Json bad = lines;
  bad[2]["terms"]["OnDemand"]["M5LINUXSHARED.JRTCKXETXF"]["priceDimensions"]["M5LINUXSHARED.JRTCKXETXF.6YS6EN2CT7"]["pricePerUnit"]["USD"] = "x";
  CHECK(error_of([&] { (void)aws::read_pricing_products(bad, "P.jsonl", "us-east-1", "f"); }).rfind("f: P.jsonl: [2].terms.OnDemand.M5LINUXSHARED", 0) == 0);
  // A stream holds objects only.
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("{\"a\": 1}\n[1]\n", "S.json"); }),
                 "parse_aws_output: S.json = document 2 (byte 9): a stream of JSON documents must hold objects only"));
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("{\"a\": 1}\n42\n", "S.json"); }),
                 "parse_aws_output: S.json = byte 9: after 1 JSON document(s), text that is not a JSON object"));
  // Each document is parsed under the reader limits.
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("{\"a\": 1}{\"b\": 1, \"b\": 2}", "S.json"); }), "duplicate key"));
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("{}" + std::string(100, '[') + std::string(100, ']'), "S.json"); }),
                 "at most 64 deep"));
}

TEST_CASE("a truncated file says so with the byte offset where it ends") {
  const std::string text = text_of("instance-types-truncated.json");
  const std::string path = forms_path("instance-types-truncated.json");
  CHECK(error_of([&] { (void)aws::read_aws_output_file(path); }) ==
        "parse_aws_output: " + path + " = byte " + std::to_string(text.size()) +
            ": the JSON ends early: the file looks truncated (cut short while downloading or copying?)");
  // Cut inside a string, and the last document of a stream cut short.
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("{\"InstanceTypes\": [{\"InstanceType\": \"p3.2x", "T.json"); }),
                 "T.json = byte 42: the JSON ends early"));
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("{\"a\": 1}\n{\"b\": ", "T.json"); }),
                 "T.json: document 2 of a stream = byte 15: the JSON ends early"));
  // A syntax error before the end is not called truncation.
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("{\"a\": ]", "T.json"); }), "T.json = byte 7: malformed JSON"));
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("", "T.json"); }), "T.json = empty: no JSON document"));
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("  \n", "T.json"); }), "no JSON document"));
  CHECK(contains(error_of([&] { (void)aws::parse_aws_output("<html><body>503</body></html>", "T.json"); }), "looks like HTML or XML"));
  CHECK(aws::parse_aws_output("\xEF\xBB\xBF{\"a\": 1}\n", "B.json") == Json{{"a", 1}});
}

TEST_CASE("a recorded SDK response is unwrapped when it holds the list, else it says what it is") {
  const Json recorded = form("instance-types-recorded.json");
  CHECK(aws::read_instance_types(recorded, "R.json").by_name.size() == 3);
  Json bad = recorded;
  bad["data"]["InstanceTypes"][0]["VCpuInfo"]["DefaultVCpus"] = 0;
  CHECK(contains(error_of([&] { (void)aws::read_instance_types(bad, "R.json", "f"); }), "f: R.json: data.InstanceTypes[0].VCpuInfo.DefaultVCpus = 0"));
  // boto3's response dumped as it is: the list beside ResponseMetadata.
  Json boto3 = recorded["data"];
  CHECK(aws::read_instance_types(boto3, "R.json").by_name.size() == 3);

  const Json error = form("sdk-error-response.json");
  CHECK(error_of([&] { (void)aws::read_instance_types(error, "E.json", "f"); }) ==
        "f: E.json: InstanceTypes = missing: this key is required: E.json is not a describe-instance-types output "
        "(--instance-types): it looks like an AWS error response (UnauthorizedOperation: You are not authorized to perform this "
        "operation.)");
  Json other = {{"Reservations", Json::array()}, {"ResponseMetadata", {{"HTTPStatusCode", 200}}}};
  CHECK(contains(error_of([&] { (void)aws::read_spot_price_history(other, "E.json", "f"); }),
                 "E.json is not a describe-spot-price-history output (--spot-prices): it looks like a describe-instances output"));
  Json metadata_only = {{"ResponseMetadata", {{"HTTPStatusCode", 200}}}, {"Something", 1}};
  CHECK(contains(error_of([&] { (void)aws::read_spot_price_history(metadata_only, "E.json", "f"); }),
                 "it looks like a recorded SDK response (ResponseMetadata, HTTP status 200) with the keys \"ResponseMetadata\", \"Something\""));
}

TEST_CASE("a file given to the wrong option says what it looks like") {
  const Json offer = form("offer-file-us-east-1.json");
  CHECK(error_of([&] { (void)aws::read_instance_types(offer, "OF.json", "f"); }) ==
        "f: OF.json: InstanceTypes = missing: this key is required: OF.json is not a describe-instance-types output "
        "(--instance-types): it looks like the AmazonEC2 offer file (Price List bulk JSON) of us-east-1");
  const Json spot = form("spot-price-history-go-sdk.json");
  CHECK(contains(error_of([&] { (void)aws::read_instance_types(spot, "SP.json", "f"); }),
                 "SP.json is not a describe-instance-types output (--instance-types): it looks like a describe-spot-price-history output"));
  CHECK(contains(error_of([&] { (void)aws::read_pricing_products(spot, "SP.json", "us-east-1", "f"); }),
                 "f: SP.json: PriceList = missing: this key is required: SP.json is not a pricing get-products output "
                 "(--on-demand-prices): it looks like a describe-spot-price-history output"));
  CHECK(contains(error_of([&] { (void)aws::read_spot_price_history(form("instance-types-bare.json"), "IT.json", "f"); }),
                 "f: IT.json: [0].ProductDescription = missing"));
  CHECK(error_of([&] { (void)aws::read_spot_price_history(Json("text"), "X.json", "f"); }) ==
        "f: X.json = \"text\": expected a JSON object: a describe-spot-price-history output (--spot-prices); this is a JSON string");
  CHECK(aws::describe_aws_json(Json::parse(R"({"formatVersion": "v1.0", "offers": {}})")).rfind("the Price List offer index", 0) == 0);
  CHECK(aws::describe_aws_json(Json::parse(R"({"formatVersion": "v1.0", "regions": {}})")).rfind("a Price List region index", 0) == 0);
  CHECK(aws::describe_aws_json(Json::parse(R"({"SpotPlacementScores": []})")) == "a get-spot-placement-scores output");
  CHECK(aws::describe_aws_json(Json::parse(R"({"a": 1, "b": 2})")) == "a JSON object with the keys \"a\", \"b\"");
}

TEST_CASE("import_catalog builds one catalog from bare lists, Go SDK output and the offer file") {
  aws::CatalogImportSources sources;
  sources.spot_prices = {form("spot-price-history-go-sdk.json"), "SP.json"};
  sources.instance_types = {form("instance-types-bare.json"), "IT.json"};
  sources.on_demand_prices = aws::ImportSource{form("offer-file-us-east-1.json"), "OF.json"};
  const aws::CatalogImport imported = aws::import_catalog(sources, us_east_1());
  const Catalog& c = imported.catalog;
  REQUIRE(c.instance_types.size() == 2);
  CHECK(c.at("p3.2xlarge").price_usd_per_hour == 0.918);
  CHECK(c.at("p3.2xlarge").on_demand_price_usd_per_hour == 3.06);
  CHECK(c.at("g4dn.xlarge").on_demand_price_usd_per_hour == 0.526);
  CHECK(c.parameter_server.price_usd_per_hour == 0.192);
  bool warned = false;
  for (const std::string& w : imported.warnings) warned = warned || contains(w, "OF.json: skipped 1 Linux on-demand products priced $0 per hour");
  CHECK(warned);

  // The same from the decoded stream and the bare spot price list.
  sources.spot_prices = {form("spot-price-history-bare.json"), "SP.json"};
  sources.on_demand_prices = aws::ImportSource{form("price-list-products.jsonl"), "P.jsonl"};
  const aws::CatalogImport streamed = aws::import_catalog(sources, us_east_1());
  CHECK(streamed.catalog.at("p3.2xlarge").on_demand_price_usd_per_hour == 3.06);
  CHECK(streamed.catalog.parameter_server.price_usd_per_hour == 0.192);

  // Another region's offer file stops the import, naming both regions.
  sources.on_demand_prices = aws::ImportSource{form("offer-file-eu-west-1.json"), "OF.json"};
  CHECK(contains(error_of([&] { (void)aws::import_catalog(sources, us_east_1()); }),
                 "import_catalog: OF.json = regionCode eu-west-1: the on-demand prices are of eu-west-1, not of us-east-1"));
}

TEST_CASE("an object of 300,000 keys is read in time linear in its size") {
  // nlohmann's own ordered_json builder searches each new key linearly: this object took minutes with it.
  std::string text = "{";
  for (int i = 0; i < 300000; ++i) text += (i == 0 ? "\"k" : ",\"k") + std::to_string(i) + "\":" + std::to_string(i);
  text += "}";
  const auto start = std::chrono::steady_clock::now();
  const Json json = aws::parse_aws_output(text, "K.json");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(json.size() == 300000);
  CHECK(json.begin().key() == "k0");
  CHECK(json.at("k299999") == 299999);
  CHECK(seconds < 5.0);  // about 0.1 s linear; over a minute quadratic
  // Reading it as an output still says what it is, quickly.
  CHECK(contains(error_of([&] { (void)aws::read_spot_price_history(json, "K.json", "f"); }),
                 "it is a JSON object with the keys \"k0\", \"k1\""));
}

TEST_CASE("the output objects, their bare lists and the decoded PriceList stream give the same catalog") {
  const auto fixture = [](const std::string& name) {
    return io::read_json_file(std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/aws/" + name);
  };
  aws::CatalogImportSources outputs;
  outputs.spot_prices = {fixture("spot-price-history.json"), "SP.json"};
  outputs.instance_types = {fixture("instance-types.json"), "IT.json"};
  outputs.on_demand_prices = aws::ImportSource{fixture("pricing-products.json"), "PR.json"};
  // jq '.SpotPriceHistory', jq '.InstanceTypes' and jq '.PriceList[] | fromjson', as text read back.
  std::string stream;
  for (const Json& entry : outputs.on_demand_prices->json["PriceList"]) stream += entry.get<std::string>() + "\n";
  aws::CatalogImportSources forms;
  forms.spot_prices = {aws::parse_aws_output(outputs.spot_prices.json["SpotPriceHistory"].dump(2), "SP.json"), "SP.json"};
  forms.instance_types = {aws::parse_aws_output(outputs.instance_types.json["InstanceTypes"].dump(), "IT.json"), "IT.json"};
  forms.on_demand_prices = aws::ImportSource{aws::parse_aws_output(stream, "PR.json"), "PR.json"};
  REQUIRE(forms.on_demand_prices->json.size() == outputs.on_demand_prices->json["PriceList"].size());
  const Json from_outputs = io::to_json(aws::import_catalog(outputs, us_east_1()).catalog);
  const Json from_forms = io::to_json(aws::import_catalog(forms, us_east_1()).catalog);
  CHECK(from_forms == from_outputs);
  CHECK(from_forms.dump().find("3.06") != std::string::npos);
}

TEST_CASE("a PriceList entry given as JSON text is parsed under the same limits") {
  Json entry = form("price-list-product.json");
  const Json output = {{"FormatVersion", "aws_v1"}, {"PriceList", {entry.dump()}}};
  CHECK(aws::read_pricing_products(output, "PR.json", "us-east-1").by_type.at("p3.2xlarge").price_usd_per_hour == 3.06);
  const Json nul = {{"PriceList", {std::string("{\"product\": 1,\0 \"x\": 2}", 24)}}};
  CHECK(error_of([&] { (void)aws::read_pricing_products(nul, "PR.json", "us-east-1", "f"); }) ==
        "f: PR.json: PriceList[0] = byte 14: malformed JSON: a NUL byte (JSON text cannot contain one)");
  const Json cut = {{"PriceList", {entry.dump().substr(0, 40)}}};
  CHECK(error_of([&] { (void)aws::read_pricing_products(cut, "PR.json", "us-east-1", "f"); }).rfind("f: PR.json: PriceList[0] = byte 41: malformed JSON", 0) == 0);
}
