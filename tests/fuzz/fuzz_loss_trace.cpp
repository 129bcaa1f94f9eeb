// SPDX-License-Identifier: MIT
// Fuzzes the loss-trace CSV readers: parse_loss_table (columns, what `spotdnn fit loss` uses) and
// parse_loss_trace (one sample per row). Both must accept or refuse the same text, and an accepted
// trace must give the same table either way.
#include <spotdnn/io/csv.hpp>

#include "fuzz_check.hpp"

using namespace spotdnn;

namespace {

bool same_table(const LossTable& a, const LossTable& b) {
  if (a.size() != b.size() || a.runs.size() != b.runs.size() || a.run != b.run || a.iteration != b.iteration ||
      a.loss != b.loss) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a.line_of(i) != b.line_of(i)) return false;
  }
  for (std::size_t k = 0; k < a.runs.size(); ++k) {
    const LossRun &x = a.runs[k], &y = b.runs[k];
    if (x.name != y.name || x.workers != y.workers || x.weighted_batch != y.weighted_batch ||
        x.convergence_coefficient != y.convergence_coefficient || x.line != y.line) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  const auto table = fuzz::read_or_reject([&] { return parse_loss_table(text, "fuzz.csv"); });
  const auto trace = fuzz::read_or_reject([&] { return parse_loss_trace(text, "fuzz.csv"); });
  fuzz::check(table.has_value() == trace.has_value(), table ? "only parse_loss_table accepts the text"
                                                            : "only parse_loss_trace accepts the text");
  if (!table) return 0;

  fuzz::must_succeed("validate_loss_table", [&] { validate_loss_table(*table); });
  const LossTable converted = fuzz::must_succeed("to_loss_table", [&] { return to_loss_table(*trace); });
  fuzz::check(same_table(*table, converted), "parse_loss_table and to_loss_table(parse_loss_trace) differ");
  return 0;
}
