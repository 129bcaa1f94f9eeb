#pragma once
// SPDX-License-Identifier: MIT
/// @file io/csv.hpp Reads loss and throughput traces (docs/formats.md) with spotdnn's own CSV reader; every
/// bad row is an error naming FILE:LINE and the reason, nothing is skipped silently.
///
/// Loss trace header: `run,workers,weighted_batch,iteration,loss` and optionally `convergence_coefficient`,
/// in any order. Throughput trace header: `cluster,iterations_per_s`, cluster cells `TYPE=N;TYPE=N`.
/// Cells may be double-quoted; spaces and tabs around cells are trimmed; blank lines are not rows.
/// Files: regular files only, at most kMaxCsvFileBytes; a UTF-8 byte-order mark is skipped; run names
/// must be valid UTF-8.
/// Rejected with FILE:LINE: an empty file, a header without rows, a missing, unknown or repeated column,
/// a header row repeated further down (concatenated files), too few or too many cells, a non-numeric
/// cell, NaN or infinity, a negative value and (via validate_loss_trace) a run that changes cluster.
///
/// The reader (CsvInput, CsvTable) keeps the dialect of fast-cpp-csv-parser, which spotdnn used before:
/// lines end at `\n` (one `\r` before it is dropped) and are at most kMaxCsvLineBytes long; lines of only
/// spaces and tabs are skipped; cells are separated by `,`; a `"` opens a quoted stretch that must close on
/// the same line (`""` inside it is one quote); a cell is trimmed of spaces, tabs and `\r` and, when it then
/// starts and ends with `"`, unquoted. It reads a file whole into one buffer sized to it (of huge pages
/// where the system has them; where that buffer cannot be had, at most 32 MiB, then 1 MiB blocks) and parses text in memory where it
/// lies. Numbers are the doubles
/// std::from_chars gives: a plain decimal of at most 19 significant digits is converted exactly by
/// detail::decimal_to_double (in numeric columns while the row is cut, without a second pass over the cell),
/// anything else by from_chars.

#include <charconv>
#include <cmath>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spotdnn/cluster.hpp"
#include "spotdnn/detail/decimal.hpp"
#include "spotdnn/detail/inline.hpp"
#include "spotdnn/detail/validate.hpp"
#include "spotdnn/errors.hpp"
#include "spotdnn/fit/traces.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/limits.hpp"

namespace spotdnn {
namespace detail {

/// The longest CSV line (bytes before its `\n`): fast-cpp-csv-parser's limit of 2^24 − 1.
inline constexpr std::size_t kMaxCsvLineBytes = (std::size_t(1) << 24) - 1;

inline std::string csv_where(std::string_view source, std::size_t line) {
  return std::string(source) + ":" + std::to_string(line);
}

/// Parses a whole cell as a finite, non-negative double; throws naming FILE:LINE, the column and the cell.
/// An absent cell (a column the header does not have) counts as empty. (The location text is built only on
/// error: traces can have 10⁵ rows.)
inline double parse_csv_non_negative(std::string_view fn, std::string_view source, std::size_t line,
                                     std::string_view column, std::string_view text) {
  auto bad = [&](std::string_view value, std::string_view why) {
    fail(fn, csv_where(source, line) + ": " + std::string(column), value, why);
  };
  if (text.empty()) bad("\"\"", "the cell is empty");
  double value = 0;
  const char* begin = text.data();
  const char* const end = text.data() + text.size();
  if (*begin == '+') ++begin;  // from_chars rejects an explicit plus sign
  // A plain decimal of at most 19 significant digits is converted here, exactly as from_chars would.
  std::uint64_t significand = 0;
  int exponent = 0;
  if (scan_decimal(begin, end, significand, exponent) == end && decimal_to_double(significand, exponent, value)) return value;
  const auto parsed = std::from_chars(begin, end, value);
  if (parsed.ec == std::errc::result_out_of_range) bad(quoted(text), "the number is out of range");
  if (parsed.ec != std::errc() || parsed.ptr != end) bad(quoted(text), "not a number");
  if (std::isnan(value)) bad(quoted(text), "NaN is not a measurement");
  if (std::isinf(value)) bad(quoted(text), "infinity is not a measurement");
  if (value < 0) bad(quoted(text), "must not be negative");
  return value;
}

/// Throws naming `source` and the line when a text file holds a NUL byte.
[[noreturn]] inline void fail_nul_byte(std::string_view fn, std::string_view source, std::size_t line) {
  fail(fn, csv_where(source, line), "<NUL byte>", "a text file must not contain NUL bytes");
}

/// The lines of CSV bytes: text in memory (not copied; it must outlive the input) or a regular file, read
/// whole into one buffer (its size when opened; bytes it gains later are then read in blocks) or, where that
/// buffer cannot be had, in blocks. Skips a UTF-8 byte-order mark at the start; refuses a line longer than
/// kMaxCsvLineBytes and, for a file, a NUL byte as soon as its block is read (text is checked by
/// trace_text). A file that shrinks while it is read ends early (a short read), never with a signal.
class CsvInput {
 public:
  /// `text` in memory; `fn` and `source` name it in messages.
  CsvInput(std::string_view text, std::string_view fn, std::string source)
      : fn_(fn), source_(std::move(source)), begin_(text.data()), end_(text.data() + text.size()), eof_(true) {
    skip_byte_order_mark();
  }

  /// The open regular file `fd` (owned, closed by the destructor) of `size_bytes` bytes (its size when opened).
  CsvInput(int fd, std::uintmax_t size_bytes, std::string_view fn, std::string source)
      : fn_(fn), source_(std::move(source)), fd_(fd) {
    // Read whole, a NUL byte anywhere in the file is reported before any row is parsed. Otherwise the first
    // block holds the whole file up to 32 MiB (for the same reason), later ones 1 MiB.
    if (!read_whole(size_bytes)) {
      first_block_ = std::size_t(std::min<std::uintmax_t>(size_bytes + 1, kFirstBlockBytes));
      fill();
    }
    // A byte-order mark is skipped here as trace_text skips one of text; the former parser skipped one
    // more itself, and so does every CsvInput.
    skip_byte_order_mark();
    skip_byte_order_mark();
  }

  CsvInput(const CsvInput&) = delete;
  CsvInput& operator=(const CsvInput&) = delete;
  ~CsvInput() {
    if (whole_ != nullptr) ::munmap(whole_, whole_region_bytes_);
    if (fd_ >= 0) ::close(fd_);
  }

  /// The next physical line without its `\n` (and one `\r` before it) in `line`; false at the end. The
  /// view stays valid until the next call.
  bool next_line(std::string_view& line) {
    if (begin_ == end_ && !fill()) return false;
    ++line_;
    const char* newline = nullptr;
    for (std::size_t searched = 0;;) {
      newline = static_cast<const char*>(std::memchr(begin_ + searched, '\n', std::size_t(end_ - begin_) - searched));
      if (newline != nullptr) break;
      searched = std::size_t(end_ - begin_);
      if (searched > kMaxCsvLineBytes || !fill(true)) break;
    }
    const char* const stop = newline != nullptr ? newline : end_;
    if (std::size_t(stop - begin_) > kMaxCsvLineBytes) fail(fn_, csv_where(source_, line_), "<row>", "the line is too long");
    line = std::string_view(begin_, std::size_t(stop - begin_));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    begin_ = newline != nullptr ? newline + 1 : end_;
    return true;
  }

  /// The line number of the last line returned (1-based, counting every line).
  [[nodiscard]] std::size_t line() const { return line_; }
  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] std::string_view function() const { return fn_; }

 private:
  static constexpr std::size_t kFirstBlockBytes = std::size_t(32) << 20;
  static constexpr std::size_t kBlockBytes = std::size_t(1) << 20;
  static constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;  ///< x86-64's and arm64's usual huge page

  void skip_byte_order_mark() {
    if (std::size_t(end_ - begin_) >= io::kUtf8ByteOrderMark.size() &&
        std::string_view(begin_, io::kUtf8ByteOrderMark.size()) == io::kUtf8ByteOrderMark) {
      begin_ += io::kUtf8ByteOrderMark.size();
    }
  }

  /// Reads the file's first `size_bytes` bytes (its size when opened) in one go into a buffer of huge pages
  /// where the system has them (a fresh buffer faulted in 4 KiB page by page was most of the time a 10⁵-row
  /// trace took to read in a fresh process); refuses a NUL byte in them. The file itself is not
  /// mapped: one that shrinks while it is read then gives a short read, not SIGBUS. False, changing
  /// nothing, when the file is empty or too large for one buffer, or the buffer cannot be mapped (fill()
  /// then reads in blocks).
  bool read_whole(std::uintmax_t size_bytes) {
    if (size_bytes == 0 || size_bytes > kMaxCsvFileBytes) return false;
    const auto bytes = std::size_t(size_bytes);
    // Huge pages where the system gives them on request (transparent huge pages): a 2 MiB page is one
    // fault where 4 KiB pages are 512. The region is over-allocated by one huge page to align its start.
    const std::size_t rounded = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
    const std::size_t region_bytes = rounded + kHugePageBytes;
    void* const region = ::mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return false;
    const auto start = (reinterpret_cast<std::uintptr_t>(region) + kHugePageBytes - 1) & ~std::uintptr_t(kHugePageBytes - 1);
    char* const text = reinterpret_cast<char*>(start);
#ifdef MADV_HUGEPAGE
    ::madvise(text, rounded, MADV_HUGEPAGE);  // a hint: without huge pages the read faults in small ones
#endif
    std::size_t got = 0;
    try {
      got = read_up_to(text, bytes);
    } catch (...) {
      ::munmap(region, region_bytes);  // the destructor does not run when the constructor throws
      throw;
    }
    if (const void* nul = std::memchr(text, 0, got)) {
      const std::size_t line = std::size_t(std::count(static_cast<const char*>(text), static_cast<const char*>(nul), '\n')) + 1;
      ::munmap(region, region_bytes);
      fail_nul_byte(fn_, source_, line);
    }
    whole_ = region;
    whole_bytes_ = bytes;
    whole_region_bytes_ = region_bytes;
    begin_ = text;
    end_ = text + got;
    read_bytes_ = got;
    first_block_ = kBlockBytes;
    if (got < bytes) eof_ = true;  // the file shrank since it was opened
    return true;
  }

  /// Reads `bytes` bytes into `into`, fewer only at the end of the file (their number is returned); throws
  /// naming the file when the system refuses.
  std::size_t read_up_to(char* into, std::size_t bytes) {
    std::size_t got = 0;
    while (got < bytes) {
      const ssize_t n = ::read(fd_, into + got, bytes - got);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int error = errno;
        fail(fn_, source_, "<file>", std::string("cannot read the file: ") + std::strerror(error));
      }
      if (n == 0) break;
      got += std::size_t(n);
    }
    return got;
  }

  /// Reads the next block behind the unread bytes; false when the file has no more. `in_line`: called for
  /// more of the line being read (line_ counts it already).
  bool fill(bool in_line = false) {
    if (eof_) return false;
    if (whole_ != nullptr && !buffer_) {
      // Past read_whole's bytes: a file that has not grown since it was opened (the usual case) needs no buffer.
      struct stat info {};
      if (::fstat(fd_, &info) == 0 && std::uintmax_t(info.st_size) <= whole_bytes_) {
        eof_ = true;
        return false;
      }
    }
    const std::size_t kept = std::size_t(end_ - begin_);
    const std::size_t block = capacity_ == 0 ? first_block_ : kBlockBytes;
    if (kept + block > capacity_) {
      const std::size_t capacity = std::max(kept + block, capacity_ + capacity_ / 2);
      std::unique_ptr<char[]> grown(new char[capacity]);
      if (kept > 0) std::memcpy(grown.get(), begin_, kept);
      buffer_ = std::move(grown);
      capacity_ = capacity;
    } else if (kept > 0 && begin_ != buffer_.get()) {
      std::memmove(buffer_.get(), begin_, kept);
    }
    begin_ = buffer_.get();
    end_ = begin_ + kept;
    char* const fresh = buffer_.get() + kept;
    const std::size_t got = read_up_to(fresh, block);
    if (got < block) eof_ = true;
    read_bytes_ += got;
    if (read_bytes_ > kMaxCsvFileBytes) {
      fail(fn_, "path", detail::quoted(source_), "the file holds more than the maximum of " + std::to_string(kMaxCsvFileBytes) + " bytes");
    }
    if (const void* nul = std::memchr(fresh, 0, got)) {
      // Newlines before the block: one after each line returned so far but the one being read, whose start
      // is among the kept bytes (which hold no `\n`).
      const std::size_t newlines_before = in_line ? line_ - 1 : line_;
      const auto before = std::size_t(static_cast<const char*>(nul) - fresh);
      fail_nul_byte(fn_, source_, newlines_before + std::size_t(std::count(fresh, fresh + before, '\n')) + 1);
    }
    end_ += got;
    return got > 0;
  }

  std::string_view fn_;
  std::string source_;
  int fd_ = -1;
  void* whole_ = nullptr;  ///< read_whole's buffer (whole_bytes_ bytes), holding the file's first bytes
  std::size_t whole_bytes_ = 0;         ///< the file's bytes it was sized for
  std::size_t whole_region_bytes_ = 0;  ///< the region mapped (whole_bytes_ and the alignment)
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0, first_block_ = 0;
  const char* begin_ = nullptr;  ///< the unread bytes [begin_, end_)
  const char* end_ = nullptr;
  bool eof_ = false;
  std::size_t line_ = 0;
  std::uintmax_t read_bytes_ = 0;
};

/// A CSV table of up to N named columns over a CsvInput: the header maps names to slots (any order), and
/// each row's cells are then found by slot. Errors name the function, FILE:LINE and the reason, as the
/// former parser's did.
template <std::size_t N>
class CsvTable {
 public:
  /// `names` are the columns a row may have; `expected_header` is shown when the header is wrong. The
  /// columns flagged in `numeric` are converted while a row is cut when they hold a plain decimal (see number()).
  CsvTable(CsvInput& in, const std::array<std::string_view, N>& names, std::string_view expected_header,
           const std::array<bool, N>& numeric = {})
      : in_(in), names_(names), expected_header_(expected_header), numeric_(numeric) {}

  /// Reads the header (the first line that is not blank). With `all_required` every name must be there
  /// (else "Missing column ..."); otherwise the caller checks has_column.
  void read_header(bool all_required) {
    std::string_view line;
    do {
      if (!in_.next_line(line)) fail(fn(), source(), "<empty>", "the file is empty: " + header_help());
    } while (blank(line));
    const char* rest = line.data();
    const char* const end = line.data() + line.size();
    bool more = true;
    while (more) {
      std::string_view cell;
      more = chop(rest, end, cell, scratch_[0]);
      std::size_t slot = N;
      for (std::size_t k = 0; k < N; ++k) {
        if (cell == names_[k]) {
          slot = k;
          break;
        }
      }
      if (slot == N) {
        // The former parser kept 63 bytes of the name.
        fail(fn(), source() + ":1: header", quoted(cell.substr(0, 63)), "unknown column: " + header_help());
      }
      if (present_[slot]) fail(fn(), source() + ":1: header", quoted(cell), "duplicate column in the header");
      present_[slot] = true;
      order_[columns_++] = slot;
    }
    if (all_required) {
      for (std::size_t k = 0; k < N; ++k) {
        if (!present_[k]) {
          // The former parser's words; it kept 255 bytes of the file name.
          fail(fn(), source(), "<file>",
               "Missing column \"" + std::string(names_[k]) + "\" in header of file \"" + source().substr(0, 255) + "\".");
        }
      }
    }
  }

  [[nodiscard]] bool has_column(std::size_t slot) const { return present_[slot]; }

  /// Reads the next row that is not blank; false at the end. Throws on too few or too many cells or an
  /// unclosed quote.
  SPOTDNN_FLATTEN bool read_row() {
    std::string_view line;
    do {
      if (!in_.next_line(line)) return false;
    } while (blank(line));
    const char* rest = line.data();
    const char* const end = line.data() + line.size();
    bool more = true;
    for (std::size_t c = 0; c < columns_; ++c) {
      if (!more) fail(fn(), where(), "<row>", "too few cells: " + header_help());
      const std::size_t slot = order_[c];
      converted_[slot] = numeric_[slot] && chop_number(rest, end, cells_[slot], numbers_[slot], more);
      if (!converted_[slot]) more = chop(rest, end, cells_[slot], scratch_[slot]);
    }
    if (more) fail(fn(), where(), "<row>", "too many cells: " + header_help());
    return true;
  }

  /// The cell of `slot` in the current row; an empty view with a null pointer when the header lacks it.
  [[nodiscard]] std::string_view cell(std::size_t slot) const { return present_[slot] ? cells_[slot] : std::string_view(); }
  /// The value of a numeric column's cell in the current row when it is a plain decimal (digits, an optional
  /// point with digits, an optional exponent; no sign, quote or space) that decimal_to_double converts: then
  /// it is finite, non-negative and the double parse_csv_non_negative would return. Null otherwise: parse
  /// cell(slot) then.
  [[nodiscard]] const double* number(std::size_t slot) const { return present_[slot] && converted_[slot] ? &numbers_[slot] : nullptr; }
  /// The line of the current row.
  [[nodiscard]] std::size_t line() const { return in_.line(); }
  [[nodiscard]] std::string where() const { return csv_where(source(), in_.line()); }

 private:
  [[nodiscard]] std::string_view fn() const { return in_.function(); }
  [[nodiscard]] const std::string& source() const { return in_.source(); }
  [[nodiscard]] std::string header_help() const { return "expected the header " + std::string(expected_header_); }

  /// Empty or only spaces and tabs.
  static bool blank(std::string_view line) {
    for (const char c : line) {
      if (c != ' ' && c != '\t') return false;
    }
    return true;
  }

  static bool trimmed(char c) { return c == ' ' || c == '\t' || c == '\r'; }

  /// Cuts the next cell off [rest, end) when it is a plain decimal that ends at a `,` or the line's end, with
  /// its text in `cell`, its value in `value` and whether another cell follows in `more`; such a cell needs
  /// no trimming or unquoting, so `cell` is what chop() would give. False, changing nothing, for any other
  /// cell (chop() cuts it).
  SPOTDNN_ALWAYS_INLINE static bool chop_number(const char*& rest, const char* end, std::string_view& cell, double& value, bool& more) {
    std::uint64_t significand = 0;
    int exponent = 0;
    const char* const stop = scan_decimal(rest, end, significand, exponent);
    if (stop == nullptr || (stop != end && *stop != ',') || !decimal_to_double(significand, exponent, value)) return false;
    cell = std::string_view(rest, std::size_t(stop - rest));
    more = stop != end;
    rest = more ? stop + 1 : end;
    return true;
  }

  /// Cuts the next cell off [rest, end): its text in `cell` (unquoted into `scratch` when it holds `""`).
  /// Returns whether another cell follows (a `,` ended this one).
  bool chop(const char*& rest, const char* end, std::string_view& cell, std::string& scratch) {
    const char* p = rest;
    while (p != end && *p != ',') {
      if (*p != '"') {
        ++p;
        continue;
      }
      do {  // a quoted stretch, `""` included
        ++p;
        while (p != end && *p != '"') ++p;
        if (p == end) fail(fn(), where(), "<row>", "a quoted cell is not closed");
        ++p;
      } while (p != end && *p == '"');
    }
    const char* begin = rest;
    const bool more = p != end;
    rest = more ? p + 1 : end;
    while (begin != p && trimmed(*begin)) ++begin;
    const char* last = p;
    while (last != begin && trimmed(*(last - 1))) --last;
    if (last - begin >= 2 && *begin == '"' && *(last - 1) == '"') {
      const std::string_view inner(begin + 1, std::size_t(last - begin - 2));
      if (inner.find('"') == std::string_view::npos) {
        cell = inner;
      } else {
        scratch.clear();
        for (std::size_t i = 0; i < inner.size(); ++i) {
          if (inner[i] == '"' && i + 1 != inner.size() && inner[i + 1] == '"') ++i;
          scratch.push_back(inner[i]);
        }
        cell = scratch;
      }
    } else {
      cell = std::string_view(begin, std::size_t(last - begin));
    }
    return more;
  }

  CsvInput& in_;
  std::array<std::string_view, N> names_;
  std::string_view expected_header_;
  std::array<bool, N> present_{};
  std::array<std::size_t, N> order_{};  ///< slot of each header column, in file order
  std::size_t columns_ = 0;
  std::array<bool, N> numeric_{};
  std::array<std::string_view, N> cells_{};
  std::array<bool, N> converted_{};  ///< per slot: the current row's cell is in numbers_
  std::array<double, N> numbers_{};
  std::array<std::string, N> scratch_{};
};

inline void require_csv_column(std::string_view fn, std::string_view source, bool present, std::string_view column,
                               std::string_view expected_header) {
  if (!present) {
    fail(fn, std::string(source) + ":1: header", quoted(column),
         "missing column: expected the header " + std::string(expected_header));
  }
}

inline constexpr std::string_view kLossTraceHeader =
    "run,workers,weighted_batch,iteration,loss[,convergence_coefficient]";
inline constexpr std::string_view kThroughputTraceHeader = "cluster,iterations_per_s";

/// At most one row per 10 bytes ("a,1,1,0,0\n"): reserving that much address space up front avoids
/// copying 10⁵ samples through every doubling of the vector (only the touched part is ever mapped).
inline std::size_t csv_row_bound(std::uintmax_t bytes) { return std::size_t(std::min<std::uintmax_t>(bytes / 10 + 1, 1u << 24)); }

/// Reads the rows of a loss-trace CSV, calling row(run, workers, weighted_batch, iteration, loss, r, line)
/// for each (the cells are parsed and checked; `run` points into the reader's buffer). Returns the rows read.
template <typename Row>
std::size_t read_loss_rows(CsvInput& input, bool& has_r, Row&& row) {
  const std::string_view fn = input.function();
  const std::string& source = input.source();
  enum Slot : std::size_t { kRun, kWorkers, kBatch, kIteration, kLoss, kR };
  CsvTable<6> in(input, {"run", "workers", "weighted_batch", "iteration", "loss", "convergence_coefficient"}, kLossTraceHeader,
                 {false, true, true, true, true, true});
  in.read_header(false);
  constexpr std::array<std::string_view, 5> required{"run", "workers", "weighted_batch", "iteration", "loss"};
  for (std::size_t k = 0; k < required.size(); ++k) require_csv_column(fn, source, in.has_column(k), required[k], kLossTraceHeader);
  has_r = in.has_column(kR);
  std::size_t rows = 0;
  while (in.read_row()) {
    const std::size_t line = in.line();
    const std::string_view name = in.cell(kRun), workers = in.cell(kWorkers);
    if (name == "run" && workers == "workers" && in.cell(kLoss) == "loss") {
      fail(fn, csv_where(source, line), "<row>", "the header row is repeated (concatenated files?)");
    }
    if (name.empty()) fail(fn, csv_where(source, line) + ": run", "\"\"", "the cell is empty");
    if (!is_printable_utf8(name)) {  // printable UTF-8 is valid UTF-8: one pass for the usual name
      if (!is_valid_utf8(name)) fail(fn, csv_where(source, line) + ": run", quoted(name), "the run name is not valid UTF-8");
      fail(fn, csv_where(source, line) + ": run", quoted(name), "the run name must not contain control characters");
    }
    // Cells converted while the row was cut, the others parsed here (in the column order of the messages).
    const auto value = [&](Slot slot, std::string_view column) {
      const double* number = in.number(slot);
      return number != nullptr ? *number : parse_csv_non_negative(fn, source, line, column, in.cell(slot));
    };
    const double n = value(kWorkers, "workers");
    if (n > double(kMaxClusterWorkers)) {
      fail(fn, csv_where(source, line) + ": workers", quoted(workers), "must be at most " + std::to_string(kMaxClusterWorkers));
    }
    const double b = value(kBatch, "weighted_batch");
    const double j = value(kIteration, "iteration");
    const double y = value(kLoss, "loss");
    std::optional<double> coefficient;
    if (has_r) coefficient = value(kR, "convergence_coefficient");
    row(name, n, b, j, y, coefficient, line);
    ++rows;
  }
  if (rows == 0) fail(fn, source, "<no rows>", "the file has a header but no data rows");
  return rows;
}

inline LossTrace read_loss_trace_from(CsvInput& input, std::size_t row_bound) {
  LossTrace trace;
  trace.source = input.source();
  trace.samples.reserve(row_bound);
  bool has_r = false;
  read_loss_rows(input, has_r,
                 [&](std::string_view run, double workers, double batch, double iteration, double loss,
                     std::optional<double> r, std::size_t line) {
                   LossSample s;
                   s.line = line;
                   s.run = std::string(run);
                   s.workers = workers;
                   s.weighted_batch = batch;
                   s.iteration = iteration;
                   s.loss = loss;
                   s.convergence_coefficient = r;
                   trace.samples.push_back(std::move(s));
                 });
  validate_loss_trace(trace);  // runs that change cluster, R given for some rows only: names FILE:LINE
  return trace;
}

/// The rows straight into columns (24 bytes a row, no per-row string), checked as validate_loss_trace does
/// while they arrive.
inline LossTable read_loss_table_from(CsvInput& input, std::size_t row_bound) {
  LossTable table;
  table.source = input.source();
  std::optional<LossTableBuilder> builder;
  bool has_r = false;
  read_loss_rows(input, has_r,
                 [&](std::string_view run, double workers, double batch, double iteration, double loss,
                     std::optional<double> r, std::size_t line) {
                   if (!builder) {
                     builder.emplace(table, has_r);
                     builder->reserve(row_bound);
                   }
                   builder->add(run, workers, batch, iteration, loss, r, line);
                 });
  return table;
}

inline ThroughputTrace read_throughput_trace_from(CsvInput& input) {
  const std::string_view fn = input.function();
  const std::string& source = input.source();
  ThroughputTrace trace;
  trace.source = source;
  CsvTable<2> in(input, {"cluster", "iterations_per_s"}, kThroughputTraceHeader, {false, true});
  in.read_header(true);
  while (in.read_row()) {
    const std::size_t line = in.line();
    const std::string where = csv_where(source, line);
    const std::string_view cluster = in.cell(0), rate = in.cell(1);
    if (cluster == "cluster" && rate == "iterations_per_s") {
      fail(fn, where, "<row>", "the header row is repeated (concatenated files?)");
    }
    ThroughputSample s;
    s.line = line;
    try {
      s.cluster = Cluster::parse(cluster, ';');
    } catch (const spotdnn::invalid_argument& e) {
      fail(fn, where + ": cluster", quoted(cluster), e.what());
    }
    if (s.cluster.empty()) fail(fn, where + ": cluster", quoted(cluster), "the cluster has no workers");
    const double* number = in.number(1);
    s.iterations_per_s = number != nullptr ? *number : parse_csv_non_negative(fn, source, line, "iterations_per_s", rate);
    if (!(s.iterations_per_s > 0)) fail(fn, where + ": iterations_per_s", quoted(rate), "must be greater than zero");
    trace.samples.push_back(std::move(s));
  }
  if (trace.samples.empty()) fail(fn, source, "<no rows>", "the file has a header but no data rows");
  return trace;
}

/// Opens a trace file under the reader limits (a regular file of at most kMaxCsvFileBytes) as a CsvInput
/// (past a UTF-8 byte-order mark if there is one, refusing NUL bytes); `size_bytes` is its size.
inline std::unique_ptr<CsvInput> open_trace_file(const std::string& path, std::string_view fn, std::uintmax_t& size_bytes) {
  const io::CheckedFile file = io::open_checked_file(path, kMaxCsvFileBytes, fn);
  FdGuard guard(file.fd);
  size_bytes = file.size_bytes;
  auto input = std::make_unique<CsvInput>(file.fd, file.size_bytes, fn, path);  // owns the descriptor once made
  (void)guard.release();
  return input;
}

/// Trace text ready for the reader: without a leading UTF-8 byte-order mark, never a null pointer, and
/// refused when it holds a NUL byte.
inline std::string_view trace_text(std::string_view text, std::string_view fn, std::string_view source) {
  if (text.data() == nullptr) return std::string_view("", 0);
  if (text.substr(0, io::kUtf8ByteOrderMark.size()) == io::kUtf8ByteOrderMark) text.remove_prefix(io::kUtf8ByteOrderMark.size());
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    fail_nul_byte(fn, source, std::size_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(nul), '\n')) + 1);
  }
  return text;
}

}  // namespace detail

/// Reads a loss trace file (docs/formats.md). Throws spotdnn::invalid_argument naming FILE:LINE and the reason.
[[nodiscard]] inline LossTrace read_loss_trace(const std::string& path) {
  std::uintmax_t bytes = 0;
  const auto file = detail::open_trace_file(path, "read_loss_trace", bytes);
  return detail::read_loss_trace_from(*file, detail::csv_row_bound(bytes));
}

/// Parses loss-trace CSV text; `source` names it in messages (FILE:LINE).
[[nodiscard]] inline LossTrace parse_loss_trace(std::string_view text, const std::string& source = "<text>") {
  text = detail::trace_text(text, "parse_loss_trace", source);
  detail::CsvInput input(text, "parse_loss_trace", source);
  return detail::read_loss_trace_from(input, detail::csv_row_bound(text.size()));
}

/// Reads a loss trace file (docs/formats.md) straight into columns: what `spotdnn fit loss` uses for long traces.
/// Same checks and messages as read_loss_trace.
[[nodiscard]] inline LossTable read_loss_table(const std::string& path) {
  std::uintmax_t bytes = 0;
  const auto file = detail::open_trace_file(path, "read_loss_trace", bytes);
  return detail::read_loss_table_from(*file, detail::csv_row_bound(bytes));
}

/// Parses loss-trace CSV text into columns; `source` names it in messages (FILE:LINE).
[[nodiscard]] inline LossTable parse_loss_table(std::string_view text, const std::string& source = "<text>") {
  text = detail::trace_text(text, "parse_loss_trace", source);
  detail::CsvInput input(text, "parse_loss_trace", source);
  return detail::read_loss_table_from(input, detail::csv_row_bound(text.size()));
}

/// Reads a throughput trace file (docs/formats.md). Throws spotdnn::invalid_argument naming FILE:LINE and the reason.
/// Instance types are checked against the workload and catalog by fit_throughput (with FILE:LINE).
[[nodiscard]] inline ThroughputTrace read_throughput_trace(const std::string& path) {
  std::uintmax_t bytes = 0;
  const auto file = detail::open_trace_file(path, "read_throughput_trace", bytes);
  return detail::read_throughput_trace_from(*file);
}

/// Parses throughput-trace CSV text; `source` names it in messages.
[[nodiscard]] inline ThroughputTrace parse_throughput_trace(std::string_view text,
                                                            const std::string& source = "<text>") {
  text = detail::trace_text(text, "parse_throughput_trace", source);
  detail::CsvInput input(text, "parse_throughput_trace", source);
  return detail::read_throughput_trace_from(input);
}

}  // namespace spotdnn
