// SPDX-License-Identifier: MIT
// Fuzzes the revocation-model reader: parse_json + revocation_model_from_json. An accepted model must
// write back (to_json) to a document that reads again to the same text, and keep the ranges the reader
// promises (shares in [0, 1], hazards from 0, 101 non-decreasing quantiles or none).
#include <cmath>
#include <string>
#include <vector>

#include <spotdnn/io/revocation_model_json.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

namespace {

bool is_share(double x) { return x >= 0 && x <= 1; }

bool quantiles_ok(const std::vector<double>& q) {
  if (!q.empty() && q.size() != 101) return false;
  for (std::size_t i = 0; i < q.size(); ++i) {
    if (!(q[i] >= 0) || !std::isfinite(q[i]) || (i > 0 && q[i] < q[i - 1])) return false;
  }
  return true;
}

void check_ranges(const RevocationModel& m) {
  fuzz::check(!m.age_bin_edges_s.empty() && m.age_bin_edges_s[0] == 0, "age bins do not start at 0");
  fuzz::check(m.burst_window_s > 0 && m.confidence_level > 0 && m.confidence_level < 1, "bad window or level");
  for (const PoolModel& p : m.pools) {
    fuzz::check(p.hazard_by_age.size() == m.age_bin_edges_s.size() && p.trigger_hazard_by_age.size() == m.age_bin_edges_s.size(),
                "bins do not match the edges");
    for (const HazardBin& b : p.hazard_by_age) {
      fuzz::check(b.hazard_per_hour >= 0 && b.lower_per_hour >= 0 && b.lower_per_hour <= b.upper_per_hour && b.events >= 0,
                  "a hazard bin out of range");
    }
    fuzz::check(is_share(p.start.up_share) && is_share(p.start.wait.none_share) && is_share(p.replacement_wait.none_share) &&
                    is_share(p.clustering.co_preemption_probability) && is_share(p.clustering.share_with_another),
                "a share out of [0, 1]");
    fuzz::check(quantiles_ok(p.start.age_quantiles_s) && quantiles_ok(p.start.wait.quantiles_s) &&
                    quantiles_ok(p.replacement_wait.quantiles_s),
                "quantiles out of order");
    if (p.gang) {
      double sum = 0;
      for (double s : p.gang->count_share) sum += s;
      fuzz::check(p.gang->count_share.size() == std::size_t(p.gang->requested) + 1 && std::abs(sum - 1) <= 1e-9, "gang shares");
    }
  }
  for (const RegionCorrelation& r : m.regions) {
    fuzz::check(r.zones.size() >= 2 && is_share(r.co_preemption_probability) && is_share(r.share_with_other_zone), "a region out of range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto model = fuzz::read_or_reject([&] { return io::revocation_model_from_json(io::parse_json(fuzz::as_text(data, size), "fuzz")); });
  if (!model) return 0;
  check_ranges(*model);
  const std::string written = fuzz::must_succeed("to_json(revocation model)", [&] { return io::to_json(*model).dump(); });
  const RevocationModel back = fuzz::must_succeed("re-reading the written model",
                                                  [&] { return io::revocation_model_from_json(io::parse_json(written, "written")); });
  fuzz::check(io::to_json(back).dump() == written, "the revocation model does not round-trip: " + written.substr(0, 2000));
  return 0;
}
