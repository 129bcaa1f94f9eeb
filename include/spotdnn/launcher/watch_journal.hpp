#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher/watch_journal.hpp The journal of `spotdnn watch`: an append-only file of JSON lines, one
/// record per decision, that a restarted controller reads back to resume (launcher/controller.hpp).
///
/// Every line is one JSON object, the record's envelope first:
///   {"kind":"spotdnn.watch_journal","schema_version":1,"seq":N,"time_unix_s":T,"event":E, ...}
/// seq counts the lines from 0 with no gap; the events and their fields are in docs/watch.md ("The
/// journal"). Appends are one write() per line of an O_APPEND descriptor followed by fsync, so a crash
/// leaves at most the last line torn (no '\n'): the reader drops that line and says so. Anything else
/// malformed is an error naming the line.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/errors.hpp"
#include "spotdnn/io/file.hpp"
#include "spotdnn/io/json.hpp"

namespace spotdnn::launcher {

/// The `kind` of every journal record.
inline constexpr std::string_view kWatchJournalKind = "spotdnn.watch_journal";
/// The `schema_version` of every journal record.
inline constexpr int kWatchJournalSchemaVersion = 1;
/// Longest journal line: 64 KiB (a record has a few hundred bytes).
inline constexpr std::size_t kMaxWatchJournalLineBytes = std::size_t(64) << 10;
/// Most lines of one journal: 10⁶ (a controller polling every 30 s for a year writes far fewer).
inline constexpr std::size_t kMaxWatchJournalLines = 1000000;
/// Largest journal file read: 256 MiB.
inline constexpr std::uintmax_t kMaxWatchJournalBytes = std::uintmax_t(256) << 20;

/// The events a record may carry (docs/watch.md).
inline constexpr std::string_view kWatchJournalEvents[] = {"start",  "desired", "launch", "launched", "listed",
                                                          "launch_failed", "switch", "note", "stop"};

namespace detail {

/// "journal line N" (N from 1) for messages.
inline std::string journal_line_name(std::size_t index) { return "journal line " + std::to_string(index + 1); }

/// Checks the envelope of record `index` (object, kind, schema_version, seq == index, time_unix_s, a known
/// event); throws spotdnn::invalid_argument naming the line and the field.
inline void check_watch_journal_envelope(const nlohmann::json& record, std::size_t index, std::string_view function) {
  const std::string line = journal_line_name(index);
  if (!record.is_object()) {
    spotdnn::detail::fail(function, line, io::JsonObjectReader::excerpt(io::Json(record)), "expected a JSON object");
  }
  const auto field = [&](const char* key) -> const nlohmann::json& {
    if (!record.contains(key)) spotdnn::detail::fail(function, line + "." + key, "missing", "every record has it");
    return record.at(key);
  };
  const auto shown = [](const nlohmann::json& v) { return io::JsonObjectReader::excerpt(io::Json(v)); };
  const nlohmann::json& kind = field("kind");
  if (!kind.is_string() || kind.get<std::string>() != kWatchJournalKind) {
    spotdnn::detail::fail(function, line + ".kind", shown(kind), "expected \"" + std::string(kWatchJournalKind) + "\"");
  }
  const nlohmann::json& version = field("schema_version");
  if (!version.is_number_integer() || version.get<long long>() != kWatchJournalSchemaVersion) {
    spotdnn::detail::fail(function, line + ".schema_version", shown(version),
                          "expected " + std::to_string(kWatchJournalSchemaVersion));
  }
  const nlohmann::json& seq = field("seq");
  const bool seq_ok = seq.is_number_unsigned() ? seq.get<std::uint64_t>() == index
                                               : seq.is_number_integer() && seq.get<std::int64_t>() == std::int64_t(index);
  if (!seq_ok) {
    spotdnn::detail::fail(function, line + ".seq", shown(seq),
                          "expected " + std::to_string(index) + ": seq counts the records from 0 with no gap");
  }
  const nlohmann::json& time = field("time_unix_s");
  if (!time.is_number() || !(time.get<double>() >= 0) || !std::isfinite(time.get<double>())) {
    spotdnn::detail::fail(function, line + ".time_unix_s", shown(time), "expected a finite number of seconds >= 0");
  }
  const nlohmann::json& event = field("event");
  bool known = false;
  if (event.is_string()) {
    for (std::string_view e : kWatchJournalEvents) known = known || event.get<std::string>() == e;
  }
  if (!known) {
    spotdnn::detail::fail(function, line + ".event", shown(event),
                          "expected one of start, desired, launch, launched, listed, launch_failed, switch, note, stop");
  }
}

}  // namespace detail

/// The records of the journal at `path`, in order. A missing file is an empty journal. The file must be a
/// regular file (not a symbolic link) of at most kMaxWatchJournalBytes and kMaxWatchJournalLines lines of
/// at most kMaxWatchJournalLineBytes, each a JSON object under the JSON reader limits (depth, duplicate
/// keys, UTF-8) with a valid envelope (see the file comment). A last line without '\n' is a torn write of
/// a controller that crashed: it is dropped, and `warning` (when given) says so; otherwise `warning` is
/// set empty. Anything else malformed throws spotdnn::invalid_argument naming "journal line N" and the field.
[[nodiscard]] inline std::vector<nlohmann::json> read_watch_journal(const std::string& path, std::string* warning = nullptr) {
  constexpr std::string_view fn = "read_watch_journal";
  if (warning != nullptr) warning->clear();
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    const int error = errno;
    if (error == ENOENT) return {};
    spotdnn::detail::fail(fn, "path", spotdnn::detail::quoted(path), std::string("cannot inspect the file: ") + std::strerror(error));
  }
  if (S_ISLNK(info.st_mode)) {
    spotdnn::detail::fail(fn, "path", spotdnn::detail::quoted(path), "is a symbolic link; give the journal file itself");
  }
  const std::string text = io::read_checked_file(path, kMaxWatchJournalBytes, fn);
  std::vector<nlohmann::json> records;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::size_t index = records.size();
    const std::string line_name = detail::journal_line_name(index);
    if (end == std::string::npos) {  // a torn last line
      if (warning != nullptr) {
        *warning = "the journal " + spotdnn::detail::escape_for_message(path) + " ends in a torn line (" + line_name + ", " +
                   std::to_string(text.size() - start) + " bytes without a newline: a controller stopped while writing it); dropped";
      }
      break;
    }
    if (index >= kMaxWatchJournalLines) {
      spotdnn::detail::fail(fn, line_name, "(too many lines)",
                            "a journal has at most " + std::to_string(kMaxWatchJournalLines) + " lines");
    }
    const std::string_view line(text.data() + start, end - start);
    if (line.size() > kMaxWatchJournalLineBytes) {
      spotdnn::detail::fail(fn, line_name, std::to_string(line.size()) + " bytes",
                            "a journal line has at most " + std::to_string(kMaxWatchJournalLineBytes) + " bytes");
    }
    if (line.empty()) spotdnn::detail::fail(fn, line_name, "(empty)", "expected one JSON record per line");
    nlohmann::json record = io::parse_json(line, line_name);
    detail::check_watch_journal_envelope(record, index, fn);
    records.push_back(std::move(record));
    start = end + 1;
  }
  return records;
}

namespace detail {

/// Cuts a torn last line (bytes after the last '\n': a controller that stopped while writing it, which
/// read_watch_journal() drops) off the journal open on `fd` with `size` bytes, so that the next record
/// starts a line of its own instead of being glued to the fragment.
inline void cut_torn_tail(int fd, off_t size, const std::string& shown) {
  off_t keep = size;
  char buffer[4096];
  while (keep > 0) {
    const off_t from = keep > off_t(sizeof buffer) ? keep - off_t(sizeof buffer) : 0;
    const ssize_t n = ::pread(fd, buffer, std::size_t(keep - from), from);
    if (n != ssize_t(keep - from)) {
      throw resource_error("append_watch_journal: cannot read the end of the journal " + shown);
    }
    std::size_t k = std::size_t(n);
    while (k > 0 && buffer[k - 1] != '\n') --k;
    if (k > 0) {
      keep = from + off_t(k);
      break;
    }
    keep = from;
  }
  if (keep == size) return;
  if (::ftruncate(fd, keep) != 0) {
    const int error = errno;
    throw resource_error("append_watch_journal: cannot cut the torn last line of the journal " + shown + ": " + std::strerror(error));
  }
}

}  // namespace detail

/// Appends `record` as one line to the journal at `path`: one write() of the line and its '\n' on an
/// O_APPEND descriptor, then fsync. A torn last line (which read_watch_journal() drops) is cut off
/// first, so the record starts a line of its own. Creates the file with mode 0600 when it is missing. Refuses (with
/// spotdnn::invalid_argument) a path that is a symbolic link or not a regular file, and a record longer
/// than kMaxWatchJournalLineBytes; a failed open, write or fsync throws spotdnn::resource_error.
inline void append_watch_journal(const std::string& path, const nlohmann::ordered_json& record) {
  constexpr std::string_view fn = "append_watch_journal";
  const std::string shown = spotdnn::detail::quoted(path);
  std::string line = record.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::strict);
  if (line.size() > kMaxWatchJournalLineBytes) {
    spotdnn::detail::fail(fn, "record", std::to_string(line.size()) + " bytes",
                          "a journal line has at most " + std::to_string(kMaxWatchJournalLineBytes) + " bytes");
  }
  line.push_back('\n');
  struct stat before {};
  if (::lstat(path.c_str(), &before) == 0) {  // refuse before open(), which would block on a FIFO
    if (S_ISLNK(before.st_mode)) spotdnn::detail::fail(fn, "path", shown, "is a symbolic link; give the journal file itself");
    if (!S_ISREG(before.st_mode)) {
      spotdnn::detail::fail(fn, "path", shown, std::string("is ") + spotdnn::detail::file_kind(before.st_mode) + "; give a regular file");
    }
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
  if (fd < 0) {
    const int error = errno;
    if (error == ELOOP) spotdnn::detail::fail(fn, "path", shown, "is a symbolic link; give the journal file itself");
    throw resource_error(std::string(fn) + ": cannot open the journal " + shown + ": " + std::strerror(error));
  }
  spotdnn::detail::FdGuard guard(fd);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    throw resource_error(std::string(fn) + ": cannot inspect the journal " + shown + ": " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    spotdnn::detail::fail(fn, "path", shown, std::string("is ") + spotdnn::detail::file_kind(info.st_mode) + "; give a regular file");
  }
  launcher::detail::cut_torn_tail(fd, info.st_size, shown);
  std::size_t written = 0;
  while (written < line.size()) {  // one write; a short one (disk full) is finished or reported
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      throw resource_error(std::string(fn) + ": cannot write to the journal " + shown + ": " + std::strerror(error));
    }
    written += std::size_t(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    throw resource_error(std::string(fn) + ": cannot sync the journal " + shown + ": " + std::strerror(error));
  }
}

}  // namespace spotdnn::launcher
