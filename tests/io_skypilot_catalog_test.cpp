// SPDX-License-Identifier: MIT
// SkyPilot's AWS catalog (vms.csv) into one catalog per region, the GpuInfo literal reader, the
// describe-availability-zones reader, and every hostile-input rule of io/skypilot_catalog.hpp
// (fixtures: tests/fixtures/skypilot/, see the README there).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <spotdnn/availability_zone.hpp>
#include <spotdnn/io/aws/availability_zones.hpp>
#include <spotdnn/io/aws/output_forms.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/io/skypilot_catalog.hpp>
#include <spotdnn/planner.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;
using spotdnn::test::error_of;

namespace {

const std::string kFixtures = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/skypilot/";
const std::string kHeader(io::kSkyPilotAwsHeader);
const std::string kV100Info =
    "\"{'Gpus': [{'Name': 'V100', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 16384}}], 'TotalGpuMemoryInMiB': 16384}\"";

/// One p3.2xlarge row: the cells after GpuInfo are given.
std::string v100_row(const std::string& price, const std::string& spot, const std::string& region, const std::string& zone) {
  return "p3.2xlarge,V100,1.0,8.0,61.0," + kV100Info + "," + price + "," + spot + "," + region + "," + zone + "\n";
}

io::SkyPilotImport import_text(const std::string& text, const io::SkyPilotImportOptions& options = {}) {
  return io::import_skypilot_catalog(text, "vms.csv", options);
}

std::string import_error(const std::string& text, const io::SkyPilotImportOptions& options = {}) {
  return error_of([&] { (void)import_text(text, options); });
}

bool has_warning(const io::SkyPilotImport& result, const std::string& part) {
  return std::any_of(result.warnings.begin(), result.warnings.end(), [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

const Catalog& catalog_of(const io::SkyPilotImport& result, const std::string& region) {
  for (const Catalog& catalog : result.catalogs) {
    if (catalog.region == region) return catalog;
  }
  FAIL("no catalog for " << region);
  throw;  // unreachable
}

io::SkyPilotImport import_fixture(const io::SkyPilotImportOptions& options = {}) {
  return io::import_skypilot_catalog_file(kFixtures + "vms.csv", options);
}

}  // namespace

TEST_CASE("the fixture gives one validated catalog per region, sorted, with the GPU types that have a spot price") {
  const io::SkyPilotImport result = import_fixture();
  REQUIRE(result.catalogs.size() == 3);
  CHECK(result.catalogs[0].region == "eu-west-1");
  CHECK(result.catalogs[1].region == "us-east-1");
  CHECK(result.catalogs[2].region == "us-west-2");
  CHECK(result.rows == 21);
  for (const Catalog& catalog : result.catalogs) {
    CHECK_NOTHROW(catalog.validate());
    // Each catalog reads back from its JSON unchanged.
    const io::Json json = io::to_json(catalog);
    CHECK(io::to_json(io::catalog_from_json(io::parse_json(json.dump(), "catalog.json"))) == json);
  }
  for (const std::string& warning : result.warnings) {
    CHECK(spotdnn::detail::is_printable_utf8(warning));  // one printable line each
  }

  const Catalog& east = catalog_of(result, "us-east-1");
  CHECK(east.type_names() == "g3.8xlarge, g4dn.4xlarge, p2.8xlarge, p3.2xlarge, p4de.24xlarge");
  const InstanceType& p3 = east.at("p3.2xlarge");
  CHECK(p3.market == Market::spot);
  CHECK(p3.gpus == 1);
  CHECK(p3.gpu_model == "V100");
  CHECK(p3.vcpus == 8);
  CHECK(p3.memory_mib == 61 * 1024);
  CHECK(p3.price_usd_per_hour == 0.918);  // the lowest zone price, exactly as written
  CHECK(p3.on_demand_price_usd_per_hour == 3.06);
  CHECK(p3.quota == 16);
  CHECK(p3.spot_quota_group == "L-7212CCBC");
  CHECK(p3.on_demand_quota_group == "L-417A185B");
  // use1-az4 has no spot price for p3.2xlarge: not a zone price.
  CHECK(p3.zone_prices_usd_per_hour == std::map<std::string, double>{{"use1-az1", 0.918}, {"use1-az2", 0.935}});
  const InstanceType& p4de = east.at("p4de.24xlarge");
  CHECK(p4de.gpus == 8);
  CHECK(p4de.gpu_model == "A100-80GB");  // SkyPilot's AcceleratorName, not GpuInfo's "A100"
  CHECK(p4de.price_usd_per_hour == 7.8074);
  CHECK(east.at("g4dn.4xlarge").price_usd_per_hour == 0.3612);
  CHECK(east.at("g3.8xlarge").gpus == 2);
  CHECK(east.parameter_server.type == "m5.xlarge");
  CHECK(east.parameter_server.price_usd_per_hour == 0.192);
  CHECK(east.quota_groups.empty());
  REQUIRE(east.missing_sources.size() == 2);
  CHECK(east.missing_sources[0] == "quotas: not in a SkyPilot catalog: every type's quota is 16 instances");
  CHECK(east.missing_sources[1] == "advisor: not in a SkyPilot catalog");

  const Catalog& west = catalog_of(result, "us-west-2");
  CHECK(west.type_names() == "g4dn.4xlarge, p3.2xlarge");
  CHECK(west.at("p3.2xlarge").price_usd_per_hour == 0.9018);
  const Catalog& eu = catalog_of(result, "eu-west-1");
  CHECK(eu.type_names() == "g4dn.4xlarge, p3.2xlarge");
  CHECK(eu.at("p3.2xlarge").on_demand_price_usd_per_hour == 3.305);
  CHECK(eu.parameter_server.price_usd_per_hour == presets::resnet110_catalog().parameter_server.price_usd_per_hour);

  REQUIRE(result.counts.size() == 3);
  const io::SkyPilotRegionCounts& counts = result.counts[1];
  CHECK(counts.region == "us-east-1");
  CHECK(counts.rows == 12);
  CHECK(counts.zones == 3);
  CHECK(counts.types == 8);
  CHECK(counts.gpu_types == 5);
  CHECK(counts.zone_prices == 7);
}

TEST_CASE("the fixture's skipped rows and types are each named in one warning") {
  const io::SkyPilotImport result = import_fixture();
  const std::string path = kFixtures + "vms.csv";
  CHECK(has_warning(result, path + ": ignored 1 rows that repeat an (instance type, region, zone) without a spot price (the first on line 22)"));
  CHECK(has_warning(result, path + ": skipped 2 instance types without GPUs"));
  CHECK(has_warning(result, "types whose accelerators are not GPUs: inf1.xlarge (Inferentia)"));
  CHECK(has_warning(result, "types with a fractional GPU: g6f.large (0.125)"));
  CHECK(has_warning(result, "us-west-2: skipped 1 GPU types without a spot price in any zone: p3.8xlarge"));
  CHECK(has_warning(result, "eu-west-1: skipped 1 GPU types without a spot price in any zone: g3.8xlarge"));
  CHECK(has_warning(result, "eu-west-1: parameter server m5.xlarge: no on-demand Price in"));
  CHECK_FALSE(has_warning(result, "us-east-1: parameter server"));
  CHECK(result.warnings.size() == 7);
}

TEST_CASE("a plan runs on every imported catalog, in the cheapest zone and in a pinned one") {
  const io::SkyPilotImport result = import_fixture();
  const Slo slo{0.8, 2400};
  for (const Catalog& catalog : result.catalogs) {
    CAPTURE(catalog.region);
    const PerformanceModel model(presets::resnet110_workload(), catalog);
    const PlanResult plan = plan_exact(model, slo);
    CHECK(plan.status == Status::optimal);
    CHECK(plan.has_plan());
  }
  const Catalog& east = catalog_of(result, "us-east-1");
  CHECK(catalog_zones(east) == std::vector<std::string>{"use1-az1", "use1-az2", "use1-az4"});
  const Catalog in_zone = catalog_in_zone(east, "use1-az1");
  CHECK(in_zone.at("p3.2xlarge").price_usd_per_hour == 0.918);
  CHECK(in_zone.at("g3.8xlarge").quota == 0);  // no spot price in use1-az1
  const PlanResult zoned = plan_exact(PerformanceModel(presets::resnet110_workload(), in_zone), slo);
  CHECK(zoned.status == Status::optimal);
}

TEST_CASE("zone IDs become this account's zone names where describe-availability-zones maps them, and stay IDs elsewhere") {
  const io::Json json = io::aws::read_aws_output_file(kFixtures + "availability-zones-us-east-1.json");
  const io::aws::AvailabilityZones zones = io::aws::read_availability_zones(json, "azs.json");
  REQUIRE(zones.zones.size() == 4);
  CHECK(zones.zones[0].name == "us-east-1a");
  CHECK(zones.zones[0].id == "use1-az4");
  CHECK(zones.zones[0].region == "us-east-1");
  CHECK(zones.zones[0].state == "available");
  CHECK(zones.zones[0].zone_type == "availability-zone");
  io::SkyPilotImportOptions options;
  options.zone_names_by_id = zones.names_by_id;
  const io::SkyPilotImport result = import_fixture(options);
  const Catalog& east = catalog_of(result, "us-east-1");
  CHECK(east.at("p3.2xlarge").zone_prices_usd_per_hour == std::map<std::string, double>{{"us-east-1c", 0.918}, {"us-east-1d", 0.935}});
  CHECK(east.at("p4de.24xlarge").zone_prices_usd_per_hour == std::map<std::string, double>{{"us-east-1a", 7.8074}});
  CHECK(catalog_of(result, "us-west-2").at("p3.2xlarge").zone_prices_usd_per_hour.count("usw2-az1") == 1);
  CHECK(has_warning(result, "us-west-2: the zones usw2-az1, usw2-az2 have no name in the availability-zones output: their prices are keyed by zone ID"));
  CHECK(has_warning(result, "eu-west-1: the zones euw1-az1, euw1-az2 have no name"));
  CHECK_FALSE(has_warning(result, "us-east-1: the zones"));

  // A map naming a zone of another region for an ID of this one is refused.
  options.zone_names_by_id = {{"use1-az1", "us-west-2a"}};
  CHECK(error_of([&] { (void)import_fixture(options); }).find("import_skypilot_catalog: options.zone_names_by_id[use1-az1] = \"us-west-2a\": not a zone of us-east-1") == 0);
  options.zone_names_by_id = {{"use1_az1", "us-east-1a"}};
  CHECK(error_of([&] { (void)import_fixture(options); }) ==
        "import_skypilot_catalog: options.zone_names_by_id = \"use1_az1\": expected an AWS zone ID like use1-az1");
}

TEST_CASE("options pick regions and types, and name what a region lacks") {
  io::SkyPilotImportOptions options;
  options.regions = {"us-west-2", "us-east-1"};
  io::SkyPilotImport result = import_fixture(options);
  REQUIRE(result.catalogs.size() == 2);
  CHECK(result.catalogs[0].region == "us-east-1");
  CHECK(result.catalogs[1].region == "us-west-2");
  CHECK(result.counts.size() == 3);  // counts cover every region of the file

  options.regions = {"ap-south-1"};
  CHECK(error_of([&] { (void)import_fixture(options); })
            .find("import_skypilot_catalog: options.regions[0] = \"ap-south-1\": not in " + kFixtures + "vms.csv (its regions: eu-west-1, us-east-1, us-west-2)") == 0);

  options.regions = {};
  options.types = {"p3.2xlarge", "g6f.large", "inf1.xlarge", "m5.xlarge", "p3.8xlarge", "nope.large"};
  result = import_fixture(options);
  REQUIRE(result.catalogs.size() == 3);
  for (const Catalog& catalog : result.catalogs) CHECK(catalog.type_names() == "p3.2xlarge");
  CHECK(has_warning(result, "g6f.large in us-east-1: skipped: a fractional GPU count (0.125)"));
  CHECK(has_warning(result, "inf1.xlarge in us-east-1: skipped: its accelerator \"Inferentia\" is not a GPU"));
  CHECK(has_warning(result, "m5.xlarge in us-east-1: skipped: no GPU"));
  CHECK(has_warning(result, "p3.8xlarge: skipped in us-west-2: no spot price in any zone"));
  CHECK(has_warning(result, "nope.large: not in " + kFixtures + "vms.csv for eu-west-1, us-east-1, us-west-2"));
  CHECK_FALSE(has_warning(result, "instance types without GPUs"));  // only said when no types are named

  options.types = {"g3.8xlarge"};
  options.regions = {"eu-west-1"};
  CHECK(error_of([&] { (void)import_fixture(options); }) ==
        "import_skypilot_catalog: options.regions = \"eu-west-1\": no requested GPU type with a spot price in " + kFixtures +
            "vms.csv for this region");
  options.regions = {};
  options.types = {"m5.xlarge"};
  CHECK(error_of([&] { (void)import_fixture(options); }).find("no requested GPU type with a spot price in any region of the file") != std::string::npos);

  options = {};
  options.quota_per_type = 3;
  CHECK(import_fixture(options).catalogs[0].instance_types[0].quota == 3);
  options.quota_per_type = -1;
  CHECK(error_of([&] { (void)import_fixture(options); }) == "import_skypilot_catalog: options.quota_per_type = -1: must be from 0 to 100000");
  options = {};
  options.types = {"p3.2xlarge", "p3.2xlarge"};
  CHECK(error_of([&] { (void)import_fixture(options); }) == "import_skypilot_catalog: options.types[1] = \"p3.2xlarge\": listed twice");
  options.types = {"p3\x1b[2J"};
  CHECK(error_of([&] { (void)import_fixture(options); }).find("options.types[0] = \"p3\\x1b[2J\": must not contain control characters") !=
        std::string::npos);
}

TEST_CASE("the forms SkyPilot and editors write are read: column order, Arch, CRLF, a byte-order mark, exponents, zone names") {
  // Columns in another order, schema v8's Arch, CRLF line ends and a UTF-8 byte-order mark.
  const std::string v8 =
      "\xEF\xBB\xBFRegion,AvailabilityZone,InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Arch\r\n"
      "us-east-1,use1-az1,p3.2xlarge,V100,1.0,8.0,61.0," + kV100Info + ",3.06,9.18e-01,x86_64\r\n";
  io::SkyPilotImport result = import_text(v8);
  REQUIRE(result.catalogs.size() == 1);
  CHECK(result.catalogs[0].at("p3.2xlarge").price_usd_per_hour == 0.918);
  CHECK(result.warnings.size() == 1);  // the parameter server's frozen price only: Arch is known

  // An unknown added column is ignored with a warning; blank lines are not rows.
  const std::string row = v100_row("3.06", "0.9", "us-east-1", "use1-az1");
  result = import_text(kHeader + ",Bogus\n\n" + row.substr(0, row.size() - 1) + ",x\n\n");
  CHECK(has_warning(result, "vms.csv: ignored the columns Bogus (a newer SkyPilot schema?)"));

  // Older catalogs (v5) give zone names: read as given. An empty Price is an unknown on-demand price.
  result = import_text(kHeader + "\n" + v100_row("", "0.9", "us-east-1", "us-east-1a") + v100_row("", "0.8", "us-east-1", "us-east-1-bos-1a"));
  CHECK(result.catalogs[0].at("p3.2xlarge").zone_prices_usd_per_hour ==
        std::map<std::string, double>{{"us-east-1-bos-1a", 0.8}, {"us-east-1a", 0.9}});
  CHECK(result.catalogs[0].at("p3.2xlarge").on_demand_price_usd_per_hour == 0);

  // A quoted AcceleratorName with a doubled quote and a comma.
  result = import_text(kHeader + "\ng4ad.2xlarge,\"Radeon \"\"Pro\"\", V520\",1.0,8.0,32.0,\"{'Gpus': [{'Name': 'Radeon Pro V520', "
                                 "'Manufacturer': 'AMD', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 8192}}]}\",0.60421,0.244000,us-east-1,use1-az1\n");
  CHECK(result.catalogs[0].at("g4ad.2xlarge").gpu_model == "Radeon \"Pro\", V520");
}

TEST_CASE("a header that is not SkyPilot's AWS vms.csv says what it looks like") {
  const auto header_error = [](const std::string& text) { return import_error(text); };
  CHECK(header_error("") == "import_skypilot_catalog: vms.csv = <empty>: the file is empty: expected SkyPilot's AWS catalog (vms.csv) header " +
                                kHeader);
  CHECK(header_error("\n\r\n") == header_error(""));
  CHECK(header_error(kHeader + "\n") == "import_skypilot_catalog: vms.csv = <no rows>: the file has a header but no data rows");
  const std::string missing = "import_skypilot_catalog: vms.csv:1: header = \"InstanceType\": missing column: expected SkyPilot's AWS catalog (vms.csv) header " +
                              kHeader + "; this looks like ";
  CHECK(header_error("run,workers,weighted_batch,iteration,loss\nr,1,1,0,2\n") == missing + "a spotdnn loss trace");
  CHECK(header_error("cluster,iterations_per_s\n") == missing + "a spotdnn throughput trace");
  CHECK(header_error("Tag,Region,OS,OSVersion,ImageId,CreationDate\n").find("SkyPilot's images.csv") != std::string::npos);
  CHECK(header_error("{\"SpotPriceHistory\": []}\n").find("this looks like a JSON document, not a CSV file") != std::string::npos);
  CHECK(header_error("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n")
            .find("a SkyPilot vms.csv without an AvailabilityZone column (another cloud's catalog") != std::string::npos);
  CHECK(header_error("\"FormatVersion\",\"v1.0\"\n").find("an AWS Price List offer file in CSV form") != std::string::npos);
  CHECK(header_error("a,b,c\n").find("this looks like a CSV file whose header is \"a,b,c\"") != std::string::npos);
  CHECK(header_error("InstanceType,InstanceType\n") == "import_skypilot_catalog: vms.csv:1:2: header = \"InstanceType\": this column is given twice");
  CHECK(header_error("a,\"b\n").find("vms.csv:1:2: header") != std::string::npos);
  CHECK(header_error("\x1b]0;pwned\x07,b\n").find("not printable UTF-8") != std::string::npos);
}

TEST_CASE("every bad cell is an error naming the file, the line, the column and the value") {
  const std::string head = kHeader + "\n";
  const std::string good = v100_row("3.06", "0.918", "us-east-1", "use1-az1");
  CHECK(import_error(head + good + "p3.2xlarge,V100\n") == "import_skypilot_catalog: vms.csv:3 = 2 cells: too few cells: the header has 10 columns");
  CHECK(import_error(head + good.substr(0, good.size() - 1) + ",x\n") ==
        "import_skypilot_catalog: vms.csv:2 = 11 cells: too many cells: the header has 10 columns");
  CHECK(import_error(head + good + head) == "import_skypilot_catalog: vms.csv:3 = <header>: the header row is repeated (concatenated files?)");
  CHECK(import_error(head + "p3.2xlarge,V100,1.0,8.0,61.0,\"{'Gpus': []\n").find("vms.csv:2:6 = ") != std::string::npos);
  CHECK(import_error(head + "p3.2xlarge,V\"100,1.0\n").find("vms.csv:2:2 = \"p3.2xlarge,V\"100,1.0\": a double quote inside an unquoted cell") !=
        std::string::npos);
  CHECK(import_error(head + "\"p3\"x,V100\n").find("text after the closing quote") != std::string::npos);
  CHECK(import_error(head + good + std::string("p3\0", 3)) == "import_skypilot_catalog: vms.csv:3 = <NUL byte>: a text file must not contain NUL bytes");
  CHECK(import_error(std::string(io::kMaxSkyPilotCatalogBytes + 1, '\n')) ==
        "import_skypilot_catalog: vms.csv = 67108865 bytes: larger than 67108864 bytes");
  CHECK(import_error(head + std::string(70000, 'a') + "\n") ==
        "import_skypilot_catalog: vms.csv:2 = 70000 bytes: the line is longer than 65536 bytes");
  CHECK(import_error(head + "p3.2xlarge,V100,1.0,8.0,61.0,\"{'Gpus': [" + std::string(5000, ' ') + "]}\",3,1,us-east-1,use1-az1\n")
            .find("vms.csv:2:6 = ") != std::string::npos);

  const auto cell_error = [&](const std::string& row) { return import_error(head + row); };
  CHECK(cell_error(v100_row("3.06", "abc", "us-east-1", "use1-az1")) ==
        "import_skypilot_catalog: vms.csv:2:8: SpotPrice = \"abc\": not a finite number");
  for (const char* bad : {"nan", "inf", "NaN", "1e999", "0x1p3", "1,5", " 1"}) {
    CAPTURE(bad);
    const std::string row = "p3.2xlarge,V100,1.0,8.0,61.0," + kV100Info + ",3.06,\"" + bad + "\",us-east-1,use1-az1\n";
    CHECK(cell_error(row).find("vms.csv:2:8: SpotPrice") != std::string::npos);
  }
  CHECK(cell_error(v100_row("3.06", "-1", "us-east-1", "use1-az1")) == "import_skypilot_catalog: vms.csv:2:8: SpotPrice = \"-1\": must not be negative");
  CHECK(cell_error(v100_row("0", "1", "us-east-1", "use1-az1")) ==
        "import_skypilot_catalog: vms.csv:2:7: Price = \"0\": a price must be greater than zero (leave the cell empty when unknown)");
  CHECK(cell_error(v100_row("3.06", "2e6", "us-east-1", "use1-az1")).find("SpotPrice = \"2e6\": must be at most 1000000") != std::string::npos);
  CHECK(cell_error("p3.2xlarge,V100,1.0,8.5,61.0," + kV100Info + ",3.06,0.9,us-east-1,use1-az1\n") ==
        "import_skypilot_catalog: vms.csv:2:4: vCPUs = \"8.5\": must be a whole number");
  CHECK(cell_error("p3.2xlarge,V100,-1,8.0,61.0," + kV100Info + ",3.06,0.9,us-east-1,use1-az1\n").find("vms.csv:2:3: AcceleratorCount = \"-1\"") !=
        std::string::npos);
  CHECK(cell_error("p3.2xlarge,V100,2000,8.0,61.0," + kV100Info + ",3.06,0.9,us-east-1,use1-az1\n").find("must be at most 1024") != std::string::npos);
  CHECK(cell_error("p3.2xlarge,V100,1.0,8.0,1e8," + kV100Info + ",3.06,0.9,us-east-1,use1-az1\n").find("vms.csv:2:5: MemoryGiB") != std::string::npos);
  CHECK(cell_error(v100_row("3.06", "0.9", "us-central1", "us-central1-a")) ==
        "import_skypilot_catalog: vms.csv:2:9: Region = \"us-central1\": expected an AWS region like us-east-1 (is this another cloud's vms.csv? "
        "GCP's regions look like us-central1)");
  CHECK(cell_error(v100_row("3.06", "0.9", "us-east-1", "use1_az1")).find("vms.csv:2:10: AvailabilityZone = \"use1_az1\": expected an AWS zone ID") !=
        std::string::npos);
  CHECK(cell_error(v100_row("3.06", "0.9", "us-east-1", "us-west-2a")).find("AvailabilityZone = \"us-west-2a\"") != std::string::npos);
  CHECK(cell_error(v100_row("3.06", "0.9", "us-east-1", "")).find("AvailabilityZone = \"\": expected a zone ID like use1-az1") != std::string::npos);
  CHECK(cell_error("p3 2xlarge,V100,1.0,8.0,61.0," + kV100Info + ",3.06,0.9,us-east-1,use1-az1\n").find("vms.csv:2:1: InstanceType = \"p3 2xlarge\"") !=
        std::string::npos);
  CHECK(cell_error("p3.2xlarge,\"V1\x1b[2J\",1.0,8.0,61.0," + kV100Info + ",3.06,0.9,us-east-1,use1-az1\n") ==
        "import_skypilot_catalog: vms.csv:2:2: AcceleratorName = \"V1\\x1b[2J\": must be printable UTF-8 text");
  CHECK(cell_error("p3.2xlarge,\"V1\xff\",1.0,8.0,61.0," + kV100Info + ",3.06,0.9,us-east-1,use1-az1\n").find("AcceleratorName = \"V1\\xff\"") !=
        std::string::npos);
  CHECK(cell_error("p3.2xlarge,V100,1.0,8.0,61.0,\"__import__('os').system('true')\",3.06,0.9,us-east-1,use1-az1\n")
            .find("vms.csv:2:6: GpuInfo = \"__import__('os').system('true')\": not a Python literal: expected a dict, list, string, number, True, False or "
                  "None at character 1") != std::string::npos);
  CHECK(cell_error("p3.2xlarge,V100,1.0,8.0,61.0,\"{'Gpus': [{'Name': 'V100'}]}\",3.06,0.9,us-east-1,use1-az1\n") ==
        "import_skypilot_catalog: vms.csv:2:6: GpuInfo.Gpus[0].Count = missing: this key is required");
}

TEST_CASE("a (type, region, zone) twice is refused when both rows give a spot price, and rows that disagree skip the type in that region") {
  const std::string head = kHeader + "\n";
  CHECK(import_error(head + v100_row("3.06", "0.9", "us-east-1", "use1-az1") + v100_row("3.06", "0.9", "us-east-1", "use1-az1")) ==
        "import_skypilot_catalog: vms.csv:3:10: AvailabilityZone = \"use1-az1\": p3.2xlarge in us-east-1 is listed twice in this zone with a spot "
        "price (also on line 2): which price holds is ambiguous");
  // An unpriced repeat, before or after the priced row, is ignored.
  for (const bool priced_first : {true, false}) {
    const std::string priced = v100_row("3.06", "0.9", "us-east-1", "use1-az1"), unpriced = v100_row("3.06", "", "us-east-1", "use1-az1");
    const io::SkyPilotImport result = import_text(head + (priced_first ? priced + unpriced : unpriced + priced));
    CHECK(result.catalogs[0].at("p3.2xlarge").price_usd_per_hour == 0.9);
    CHECK(has_warning(result, "ignored 1 rows that repeat an (instance type, region, zone) without a spot price (the first on line 3)"));
  }
  // Rows of one type and region that disagree on Price: the type is skipped there, not elsewhere.
  const io::SkyPilotImport result = import_text(head + v100_row("3.06", "0.9", "us-east-1", "use1-az1") + v100_row("3.5", "0.8", "us-east-1", "use1-az2") +
                                                v100_row("3.06", "0.9", "us-west-2", "usw2-az1") +
                                                "g4dn.4xlarge,T4,1.0,16.0,64.0,\"{'Gpus': [{'Name': 'T4', 'Manufacturer': 'NVIDIA', 'Count': 1}]}\",1.2,0.4,us-east-1,use1-az1\n");
  CHECK(catalog_of(result, "us-east-1").type_names() == "g4dn.4xlarge");
  CHECK(catalog_of(result, "us-west-2").type_names() == "p3.2xlarge");
  CHECK(has_warning(result, "p3.2xlarge in us-east-1: skipped: its rows disagree: line 3 gives Price = \"3.5\" but line 2 gives \"3.06\""));
}

TEST_CASE("a region without GPU types gives a warning, no region with them an error, and the warnings are capped") {
  const std::string head = kHeader + "\n";
  io::SkyPilotImport result = import_text(head + v100_row("3.06", "0.9", "us-east-1", "use1-az1") + "m5.xlarge,,,4.0,16.0,,0.2,0.07,eu-west-1,euw1-az1\n");
  CHECK(result.catalogs.size() == 1);
  CHECK(has_warning(result, "eu-west-1: no GPU type with a spot price: no catalog"));
  CHECK(import_error(head + "m5.xlarge,,,4.0,16.0,,0.2,0.07,eu-west-1,euw1-az1\n") ==
        "import_skypilot_catalog: vms.csv = 1 rows: no GPU type with a spot price in any region of the file");

  // 200 regions whose only GPU type has no spot price: 200 warnings are cut to kMaxSkyPilotWarnings lines.
  std::string text = head + v100_row("3.06", "0.9", "us-east-1", "use1-az1");
  for (int r = 0; r < 200; ++r) text += v100_row("3.06", "", "xx-region-" + std::to_string(r), "xxr" + std::to_string(r) + "-az1");
  result = import_text(text);
  REQUIRE(result.warnings.size() == io::kMaxSkyPilotWarnings);
  CHECK(result.warnings.back().find("more warnings") != std::string::npos);
  CHECK(result.counts.size() == 201);

  // More regions than kMaxSkyPilotRegions are refused.
  text = head;
  for (std::size_t r = 0; r <= io::kMaxSkyPilotRegions; ++r) text += v100_row("3.06", "0.9", "xx-region-" + std::to_string(r), "xxr-az1");
  CHECK(import_error(text).find("more than 500 regions") != std::string::npos);
}

TEST_CASE("GpuInfo is read as a Python literal, never evaluated, under a depth limit") {
  const io::SkyPilotGpuInfo v100 = io::parse_skypilot_gpu_info(
      "{'Gpus': [{'Name': 'V100', 'Manufacturer': 'NVIDIA', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 32768}}], 'TotalGpuMemoryInMiB': 262144}");
  CHECK(v100.name == "V100");
  CHECK(v100.manufacturer == "NVIDIA");
  CHECK(v100.count == 8);
  CHECK(v100.memory_mib == 262144);
  CHECK(v100.gpus);
  const io::SkyPilotGpuInfo neuron =
      io::parse_skypilot_gpu_info("{'Gpus': [{'Count': 1, 'Name': 'Inferentia2', 'CoreInfo': {'Count': 2, 'Version': 2}, 'MemoryInfo': {'SizeInMiB': 32768}}]}");
  CHECK_FALSE(neuron.gpus);
  const io::SkyPilotGpuInfo mixed = io::parse_skypilot_gpu_info(
      "{\"Gpus\": ({'Name': 'A', 'Manufacturer': \"N\\\"x\", 'Count': 1.0, 'MemoryInfo': None}, {'Name': 'B', 'Manufacturer': 'N', 'Count': 2,},), 'X': [True, False, -1e3]}");
  CHECK(mixed.name == "A + B");
  CHECK(mixed.manufacturer == "N\"x");
  CHECK(mixed.count == 3);
  CHECK(mixed.memory_mib == 0);

  const auto bad = [](const std::string& text) { return error_of([&] { (void)io::parse_skypilot_gpu_info(text); }); };
  CHECK(bad("{'Gpus': [") == "parse_skypilot_gpu_info: GpuInfo = \"{'Gpus': [\": not a Python literal: expected a value at character 11");
  CHECK(bad("{'Gpus': [{'Name': 'V100', 'Count': 1}], 'Gpus': []}").find("the key \"Gpus\" is given twice") != std::string::npos);
  CHECK(bad("{'Gpus': []}") == "parse_skypilot_gpu_info: GpuInfo.Gpus = []: expected a non-empty list");
  CHECK(bad("{'Gpus': [{'Name': 'V100', 'Count': 1.5}]}") ==
        "parse_skypilot_gpu_info: GpuInfo.Gpus[0].Count = 1.5: expected a whole number from 0 to 1024");
  CHECK(bad("{'Gpus': [{'Name': '', 'Count': 1}]}").find("GpuInfo.Gpus[0].Name = \"\"") != std::string::npos);
  CHECK(bad("{'Gpus': [{'Name': 'V\xff', 'Count': 1}]}").find("GpuInfo.Gpus[0].Name = ") != std::string::npos);  // called directly: bad UTF-8
  CHECK(bad("{'Gpus': [{'Name': 'V\\x41', 'Count': 1}]}").find("one of the escapes") != std::string::npos);
  CHECK(bad("['Gpus']") == "parse_skypilot_gpu_info: GpuInfo = [\"Gpus\"]: expected a dict with the key 'Gpus'");
  CHECK(bad("{'Gpus': [{'Name': 'V100', 'Count': 1}]} extra").find("expected the end of the literal at character") != std::string::npos);
  CHECK(bad("{'Gpus': nan}").find("expected a dict, list, string, number") != std::string::npos);
  CHECK(bad("{'Gpus': 1e999}").find("expected a finite number") != std::string::npos);
  CHECK(bad("{1: 2}").find("expected a string key") != std::string::npos);
  CHECK(bad(std::string(9, '[') + std::string(9, ']')).find("expected at most 8 levels of nesting") != std::string::npos);
  CHECK(bad(std::string(100000, '[')).find("expected at most 8 levels of nesting") != std::string::npos);
}

TEST_CASE("describe-availability-zones is read in its forms, and a wrong or inconsistent output is refused naming the key path") {
  using io::aws::read_availability_zones;
  const auto read = [](const std::string& text) { return read_availability_zones(io::aws::parse_aws_output(text, "azs.json"), "azs.json"); };
  const std::string zone_a = R"({"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": "use1-az4"})";
  const std::string zone_b = R"({"RegionName": "us-east-1", "ZoneName": "us-east-1b", "ZoneId": "use1-az6", "State": null})";
  CHECK(read("[" + zone_a + "," + zone_b + "]").names_by_id == std::map<std::string, std::string>{{"use1-az4", "us-east-1a"}, {"use1-az6", "us-east-1b"}});
  CHECK(read(zone_a + "\n" + zone_b + "\n").zones.size() == 2);  // a stream, as jq '.AvailabilityZones[]' prints it
  CHECK(read(R"({"data": {"AvailabilityZones": [)" + zone_a + R"(]}, "status_code": 200})").zones.size() == 1);

  const auto error = [&](const std::string& text) { return error_of([&] { (void)read(text); }); };
  CHECK(error(R"({"AvailabilityZones": [)" + zone_a + "," + zone_a + "]}") ==
        "read_availability_zones: azs.json: AvailabilityZones[1].ZoneName = \"us-east-1a\": listed twice (also at AvailabilityZones[0])");
  CHECK(error(R"({"AvailabilityZones": [)" + zone_a + R"(, {"RegionName": "us-east-1", "ZoneName": "us-east-1b", "ZoneId": "use1-az4"}]})") ==
        "read_availability_zones: azs.json: AvailabilityZones[1].ZoneId = \"use1-az4\": listed twice (also at AvailabilityZones[0])");
  CHECK(error(R"({"AvailabilityZones": [{"RegionName": "us-east-1", "ZoneName": "us-west-2a", "ZoneId": "usw2-az1"}]})") ==
        "read_availability_zones: azs.json: AvailabilityZones[0].ZoneName = \"us-west-2a\": not a zone of its RegionName us-east-1");
  CHECK(error(R"({"AvailabilityZones": [{"RegionName": "us-east-1", "ZoneName": "us-east-1a"}]})") ==
        "read_availability_zones: azs.json: AvailabilityZones[0].ZoneId = missing: this key is required");
  CHECK(error(R"({"AvailabilityZones": [{"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": "USE1 AZ1"}]})")
            .find("AvailabilityZones[0].ZoneId = \"USE1 AZ1\": expected 1 to 64 lower-case letters") != std::string::npos);
  CHECK(error(R"({"AvailabilityZones": [{"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": 7}]})")
            .find("AvailabilityZones[0].ZoneId = 7: expected a string") != std::string::npos);
  CHECK(error(R"({"AvailabilityZones": null})").find("AvailabilityZones = null") != std::string::npos);
  CHECK(error(R"({"InstanceTypes": []})").find("it looks like a describe-instance-types output") != std::string::npos);

  std::string many = R"({"AvailabilityZones": [)";
  for (std::size_t i = 0; i <= io::aws::kMaxAvailabilityZones; ++i) many += std::string(i == 0 ? "" : ",") + "{}";
  CHECK(error(many + "]}").find("10001 entries: at most 10000 zones are read") != std::string::npos);

  // Several regions' outputs merge; outputs of different accounts that disagree are refused.
  std::map<std::string, std::string> names;
  io::aws::merge_zone_names(names, read("[" + zone_a + "]"), "east.json");
  io::aws::merge_zone_names(names, read(R"([{"RegionName": "us-west-2", "ZoneName": "us-west-2a", "ZoneId": "usw2-az1"}])"), "west.json");
  io::aws::merge_zone_names(names, read("[" + zone_a + "]"), "east-again.json");
  CHECK(names.size() == 2);
  CHECK(error_of([&] {
          io::aws::merge_zone_names(names, read(R"([{"RegionName": "us-east-1", "ZoneName": "us-east-1b", "ZoneId": "use1-az4"}])"), "other.json");
        }) == "merge_zone_names: other.json: ZoneId use1-az4 = \"us-east-1b\": the zone ID is already named us-east-1a by another output "
              "(outputs of different accounts?)");
  CHECK(error_of([&] {
          io::aws::merge_zone_names(names, read(R"([{"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": "use1-az1"}])"), "other.json");
        }).find("the zone name already belongs to zone ID use1-az4") != std::string::npos);
}

TEST_CASE("a file that is not a regular file, or is too large, is refused by the file reader") {
  CHECK(error_of([] { (void)io::import_skypilot_catalog_file("/nonexistent/vms.csv", {}); }).find("import_skypilot_catalog") == 0);
  CHECK(error_of([] { (void)io::import_skypilot_catalog_file("/dev/zero", {}); }).find("import_skypilot_catalog") == 0);
  CHECK(error_of([] { (void)io::import_skypilot_catalog_file(kFixtures, {}); }).find("import_skypilot_catalog") == 0);
}
