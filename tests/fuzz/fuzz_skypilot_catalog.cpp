// SPDX-License-Identifier: MIT
// Fuzzes the SkyPilot catalog importer: the bytes stand for SkyPilot's AWS vms.csv, imported for every
// region and for one named type with a zone-name map. An accepted import must give validated catalogs,
// one-line printable warnings, and catalogs that round-trip through catalog JSON.
#include <string>

#include <spotdnn/io/json.hpp>
#include <spotdnn/io/skypilot_catalog.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

namespace {

void check_import(std::string_view text, const io::SkyPilotImportOptions& options) {
  const auto imported = fuzz::read_or_reject([&] { return io::import_skypilot_catalog(text, "fuzz.csv", options); });
  if (!imported) return;
  fuzz::check(!imported->catalogs.empty(), "an accepted import gave no catalog");
  for (const std::string& warning : imported->warnings) {
    fuzz::check(detail::is_printable_utf8(warning), "a warning is not one printable line: " + warning);
  }
  for (const Catalog& catalog : imported->catalogs) {
    fuzz::must_succeed("validating an imported catalog", [&] { catalog.validate(); return 0; });
    const std::string written = fuzz::must_succeed("to_json(catalog)", [&] { return io::to_json(catalog).dump(); });
    const Catalog back = fuzz::must_succeed("re-reading an imported catalog",
                                            [&] { return io::catalog_from_json(io::parse_json(written, "written")); });
    fuzz::check(io::to_json(back).dump() == written, "an imported catalog does not round-trip: " + written);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  check_import(text, {});
  io::SkyPilotImportOptions options;
  options.types = {"p3.2xlarge"};
  options.zone_names_by_id = {{"use1-az1", "us-east-1c"}, {"use1-az2", "us-east-1d"}};
  check_import(text, options);
  return 0;
}
