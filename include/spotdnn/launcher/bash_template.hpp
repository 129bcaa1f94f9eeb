#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/bash_template.hpp Text with holes for values that only the running script knows (the
/// run id, the PS address, ranks), and the bash word that fills them.
///
/// A launch script learns its run id when it starts and the PS address after launching the PS, yet the
/// tag specifications, launch templates and user data that carry them are written by spotdnn. A
/// BashTemplate is such a text cut where those values go: `pieces[0] slot[0] pieces[1] ... pieces[n]`.
/// bash_word() makes one bash word of it, the pieces single-quoted and each slot a double-quoted
/// variable (`'{"Value":"'"$RUN_ID"'"}'`), so bash joins them and nothing in a piece is ever expanded.
///
/// make_template() finds the holes without any marker that a configuration value could imitate: it
/// builds the text twice, with two different sets of stand-in values of equal length, and the text is
/// equal everywhere except where a stand-in went. Every other byte (configuration values included)
/// comes out the same both times, so only a slot can produce a difference. Stand-ins are digits and
/// '-', which neither JSON nor a single-quoted bash string changes, and the values put into the holes
/// must be checked to be of that kind too (run ids, IPv4 addresses, decimal numbers) before the
/// script uses them.

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/shell.hpp"

namespace spotdnn::launcher {

/// A value the running script supplies.
enum class Slot {
  run_id,      ///< the run id (bash "$RUN_ID")
  ps_address,  ///< the PS private IPv4 address (bash "$ps_ip")
  world_size,  ///< PS + workers the run starts with, or has after a join (bash "$world_size")
  rank_base,   ///< the first rank of a group of workers (bash "$rank_base")
};

inline constexpr std::size_t kSlotCount = 4;

/// The bash variable that holds `slot` in the emitted scripts.
[[nodiscard]] constexpr std::string_view bash_variable(Slot slot) {
  switch (slot) {
    case Slot::run_id: return "RUN_ID";
    case Slot::ps_address: return "ps_ip";
    case Slot::world_size: return "world_size";
    case Slot::rank_base: return "rank_base";
  }
  return "";
}

/// The values a template is filled with, indexed by Slot.
using SlotValues = std::array<std::string, kSlotCount>;

/// The longest value each slot can take: a run id, "255.255.255.255", and 7 digits (at most
/// kMaxClusterWorkers + 1 = 1,000,001 instances or ranks). Sizes are checked with these.
[[nodiscard]] inline SlotValues longest_slot_values() {
  return {std::string(22, '0'), "255.255.255.255", "1000001", "1000001"};
}

/// Text with holes: pieces.size() == slots.size() + 1.
struct BashTemplate {
  std::vector<std::string> pieces;
  std::vector<Slot> slots;

  /// The text with `values` in the holes.
  [[nodiscard]] std::string filled(const SlotValues& values) const {
    std::string out = pieces.front();
    for (std::size_t i = 0; i < slots.size(); ++i) out += values[static_cast<std::size_t>(slots[i])] + pieces[i + 1];
    return out;
  }

  /// One bash word: each piece single-quoted (shell_quote), each slot "$VARIABLE".
  [[nodiscard]] std::string bash_word() const {
    std::string out;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (!pieces[i].empty() || pieces.size() == 1) out += shell_quote(pieces[i]);
      if (i < slots.size()) out += "\"$" + std::string(bash_variable(slots[i])) + "\"";
    }
    return out;
  }
};

namespace detail {

/// Two sets of stand-ins: equal lengths per slot, a different first character per slot in set A (so a
/// hole tells its slot), and every character different between the sets.
inline const std::array<SlotValues, 2>& stand_ins() {
  static const std::array<SlotValues, 2> values = {
      SlotValues{"00000000-000000-000000", "2.2.2.2", "4444444", "6666666"},
      SlotValues{"11111111-111111-111111", "3.3.3.3", "5555555", "7777777"}};
  return values;
}

}  // namespace detail

/// The template of the text `make(values)` builds, for any callable taking `const SlotValues&` and
/// returning std::string. Throws std::logic_error if `make` does not treat the values as opaque text
/// of their own length (a bug in spotdnn, never a user error).
template <class Make>
[[nodiscard]] BashTemplate make_template(Make make) {
  const auto& stand_in = detail::stand_ins();
  const std::string a = make(stand_in[0]);
  const std::string b = make(stand_in[1]);
  if (a.size() != b.size()) throw std::logic_error("make_template: the text changes length with its values");
  BashTemplate t;
  std::size_t start = 0;
  std::size_t i = 0;
  while (i < a.size()) {
    if (a[i] == b[i]) {
      ++i;
      continue;
    }
    bool found = false;
    for (std::size_t s = 0; s < kSlotCount && !found; ++s) {
      const std::string& va = stand_in[0][s];
      const std::string& vb = stand_in[1][s];
      if (a.compare(i, va.size(), va) == 0 && b.compare(i, vb.size(), vb) == 0) {
        t.pieces.push_back(a.substr(start, i - start));
        t.slots.push_back(static_cast<Slot>(s));
        i += va.size();
        start = i;
        found = true;
      }
    }
    if (!found) throw std::logic_error("make_template: a difference that is not a whole value at byte " + std::to_string(i));
  }
  t.pieces.push_back(a.substr(start));
  if (t.filled(stand_in[0]) != a || t.filled(stand_in[1]) != b) throw std::logic_error("make_template: the pieces do not add up");
  return t;
}

/// Throws unless every value is of its kind: a run id, an IPv4 address (when `with_ps_address`),
/// decimal numbers of at most 7 digits.
inline void require_slot_values(std::string_view function, const SlotValues& values, bool with_ps_address) {
  require_run_id(function, "run id", values[static_cast<std::size_t>(Slot::run_id)]);
  if (with_ps_address) require_ipv4_address(function, "ps_private_ip", values[static_cast<std::size_t>(Slot::ps_address)]);
  for (Slot slot : {Slot::world_size, Slot::rank_base}) {
    const std::string& v = values[static_cast<std::size_t>(slot)];
    bool ok = !v.empty() && v.size() <= 7;
    for (char c : v) ok = ok && c >= '0' && c <= '9';
    if (!ok) spotdnn::detail::fail(function, bash_variable(slot), spotdnn::detail::quoted(v), "expected a number of at most 7 digits");
  }
}

/// A template without holes.
[[nodiscard]] inline BashTemplate fixed_template(std::string text) { return BashTemplate{{std::move(text)}, {}}; }

}  // namespace spotdnn::launcher
