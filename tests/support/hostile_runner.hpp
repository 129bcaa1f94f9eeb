#pragma once
// SPDX-License-Identifier: MIT
/// @file support/hostile_runner.hpp Test helper: reads the hostile-input case table (tests/hostile/cases.tsv),
/// builds each case's files in a fresh directory, runs the `spotdnn` executable on an argv vector (fork +
/// execve, no shell) with a time limit, and lists every way the run broke the CLI's contract.
///
/// Table format: one case per line, tab-separated; `#` starts a comment line.
///
///     name <TAB> exit codes <TAB> arguments <TAB> stdin <TAB> extra...
///
/// - name: `group/what`; the group (predict, plan, ...) picks the doctest TEST_CASE that runs the case.
/// - exit codes: one code, or several allowed ones separated by `|` (e.g. `0|3`).
/// - arguments: separated by spaces, each expanded (see below); an empty cell runs the CLI without any.
/// - stdin: `-` for /dev/null, else a file spec (below) whose content is fed on stdin.
/// - extra cells, any number, in any order:
///   - `NAME=SPEC`: create the file NAME (expanded, relative to the case directory) from SPEC;
///   - `stderr~TEXT` / `stdout~TEXT`: the stream must contain TEXT (expanded);
///   - `created:PATH`: when the exit code is 0, PATH (relative to the case directory) must exist.
///
/// Expansion of every text (arguments, names, generator and edit arguments), one pass, left to right:
/// `\s` space, `\t`, `\n`, `\r`, `\e` (ESC), `\\`, `\xHH` (any byte); `%{empty}` nothing (an empty argument);
/// `%{dir}` the case directory; `%{repeat:N:TEXT}` TEXT N times (TEXT expanded; write `}` as `\x7d`).
///
/// A file SPEC is a generator followed by edits, separated by `|` (write a literal `|` as `\x7c`):
/// - generators: `base:FILE` (a file of tests/hostile/), `text:TEXT`, `fill:N:TEXT` (N bytes repeating TEXT),
///   `zeros:N` (a sparse file of N zero bytes), `dir` (a directory), `fifo` (a named pipe that nobody
///   writes), `symlink:TARGET`, `catalog-types:N:QUOTA` (the preset catalog grown to N types, every quota
///   QUOTA), `workload-types:N` (the preset workload profiling those N types);
/// - edits: `replace:OLD=>NEW` (first occurrence; it must occur), `replaceall:OLD=>NEW`, `prefix:TEXT`,
///   `suffix:TEXT`, `pad:N` (N spaces appended), `repeat-rows:N` (the lines after the first N times),
///   `set:POINTER=JSON` (the text is parsed as JSON, the value at the JSON pointer set, `*` matching every
///   member or element, and dumped compactly), `del:POINTER`, `size:N` (truncate or extend sparsely to N
///   bytes once written).

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace spotdnn::test::hostile {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

/// A mistake in the case table itself (not in the CLI): reported with the table's file and line.
class table_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One row of the table.
struct Case {
  std::string name;   ///< "group/what"
  std::string group;  ///< the part of the name before '/'
  int line = 0;       ///< line in the table file
  std::set<int> exit_codes;
  std::vector<std::string> arguments;  ///< unexpanded tokens
  std::string stdin_spec;              ///< "-" or a file spec
  std::vector<std::pair<std::string, std::string>> files;  ///< (unexpanded name, spec)
  std::vector<std::string> stderr_contains;
  std::vector<std::string> stdout_contains;
  std::vector<std::string> created;

  [[nodiscard]] std::string expected_text() const {
    std::string text;
    for (int code : exit_codes) text += (text.empty() ? "" : " or ") + std::to_string(code);
    return text;
  }
};

/// `text` with every byte outside printable ASCII written as an escape, for messages.
inline std::string printable(std::string_view text, std::size_t limit = 400) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= limit) {
      out += "...(" + std::to_string(text.size()) + " bytes)";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += char(c);
    }
  }
  return out;
}

inline std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

inline long long to_count(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  long long value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 0) throw table_error(what + ": expected a count, got \"" + text + "\"");
  return value;
}

/// Reads the case table; throws table_error naming the line of a malformed row.
inline std::vector<Case> read_table(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw table_error("cannot open the case table " + path);
  std::vector<Case> cases;
  std::set<std::string> names;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(number);
    const std::vector<std::string> cells = split(line, '\t');
    if (cells.size() < 4) throw table_error(where + ": expected name, exit codes, arguments and stdin separated by tabs");
    Case c;
    c.name = cells[0];
    c.line = number;
    const auto slash = c.name.find('/');
    if (slash == std::string::npos || slash == 0) throw table_error(where + ": the name must be group/what");
    c.group = c.name.substr(0, slash);
    if (!names.insert(c.name).second) throw table_error(where + ": the name " + c.name + " is used twice");
    for (const std::string& code : split(cells[1], '|')) {
      const long long value = to_count(code, where + ": exit code");
      if (value > 255) throw table_error(where + ": exit code " + code);
      c.exit_codes.insert(int(value));
    }
    for (const std::string& token : split(cells[2], ' ')) {
      if (!token.empty()) c.arguments.push_back(token);
    }
    c.stdin_spec = cells[3];
    if (c.stdin_spec.empty()) throw table_error(where + ": stdin must be - or a file spec");
    for (std::size_t k = 4; k < cells.size(); ++k) {
      const std::string& cell = cells[k];
      if (cell.rfind("stderr~", 0) == 0) {
        c.stderr_contains.push_back(cell.substr(7));
      } else if (cell.rfind("stdout~", 0) == 0) {
        c.stdout_contains.push_back(cell.substr(7));
      } else if (cell.rfind("created:", 0) == 0) {
        c.created.push_back(cell.substr(8));
      } else {
        const auto eq = cell.find('=');
        if (eq == std::string::npos || eq == 0) throw table_error(where + ": expected NAME=SPEC, got \"" + cell + "\"");
        c.files.emplace_back(cell.substr(0, eq), cell.substr(eq + 1));
      }
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

/// Expands escapes and %{...} macros (see the file comment).
inline std::string expand(std::string_view text, const std::string& dir) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      if (i + 1 >= text.size()) throw table_error("a lone backslash ends \"" + std::string(text) + "\"");
      const char e = text[++i];
      switch (e) {
        case 's': out += ' '; break;
        case 't': out += '\t'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 'e': out += '\x1b'; break;
        case '\\': out += '\\'; break;
        case 'x': {
          if (i + 2 >= text.size()) throw table_error("short \\x escape in \"" + std::string(text) + "\"");
          const std::string hex(text.substr(i + 1, 2));
          char* end = nullptr;
          const long value = std::strtol(hex.c_str(), &end, 16);
          if (hex.size() != 2 || end != hex.c_str() + 2) throw table_error("bad \\x escape in \"" + std::string(text) + "\"");
          out += char(value);
          i += 2;
          break;
        }
        default: throw table_error(std::string("unknown escape \\") + e + " in \"" + std::string(text) + "\"");
      }
    } else if (c == '%' && i + 1 < text.size() && text[i + 1] == '{') {
      const std::size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos) throw table_error("unclosed %{ in \"" + std::string(text) + "\"");
      const std::string macro(text.substr(i + 2, close - i - 2));
      if (macro == "empty") {
      } else if (macro == "dir") {
        out += dir;
      } else if (macro.rfind("repeat:", 0) == 0) {
        const auto colon = macro.find(':', 7);
        if (colon == std::string::npos) throw table_error("expected %{repeat:N:TEXT}, got %{" + macro + "}");
        const long long n = to_count(macro.substr(7, colon - 7), "%{repeat}");
        const std::string unit = expand(macro.substr(colon + 1), dir);
        out.reserve(out.size() + std::size_t(n) * unit.size());
        for (long long k = 0; k < n; ++k) out += unit;
      } else {
        throw table_error("unknown macro %{" + macro + "}");
      }
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

/// Visits the values at a JSON pointer whose segments may be `*` (every member or element).
inline void visit_pointer(Json& j, const std::vector<std::string>& segments, std::size_t k,
                          const std::function<void(Json& parent, const std::string& key)>& at_last) {
  const std::string& s = segments[k];
  const bool last = k + 1 == segments.size();
  auto step = [&](Json& parent, const std::string& key) {
    if (last) {
      at_last(parent, key);
    } else if (parent.is_array()) {
      visit_pointer(parent.at(std::stoul(key)), segments, k + 1, at_last);
    } else {
      visit_pointer(parent[key], segments, k + 1, at_last);
    }
  };
  if (s == "*") {
    if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) step(j, std::to_string(i));
    } else if (j.is_object()) {
      std::vector<std::string> keys;
      for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
      for (const std::string& key : keys) step(j, key);
    } else {
      throw table_error("a * pointer segment on a JSON value that is neither an array nor an object");
    }
  } else {
    step(j, s);
  }
}

inline void edit_json(std::string& content, const std::string& pointer, const Json* value) {
  if (pointer.empty() || pointer[0] != '/') throw table_error("a JSON pointer starts with /, got \"" + pointer + "\"");
  Json j = Json::parse(content);
  std::vector<std::string> segments = split(pointer.substr(1), '/');
  for (std::string& s : segments) {
    for (std::size_t at = s.find("~1"); at != std::string::npos; at = s.find("~1", at + 1)) s.replace(at, 2, "/");
    for (std::size_t at = s.find("~0"); at != std::string::npos; at = s.find("~0", at + 1)) s.replace(at, 2, "~");
  }
  visit_pointer(j, segments, 0, [&](Json& parent, const std::string& key) {
    if (parent.is_array()) {
      const std::size_t index = std::stoul(key);
      if (value) {
        if (index == parent.size()) {
          parent.push_back(*value);
        } else {
          parent.at(index) = *value;
        }
      } else {
        parent.erase(index);
      }
    } else if (value) {
      parent[key] = *value;
    } else {
      parent.erase(key);
    }
  });
  content = j.dump();
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The preset catalog (tests/hostile/catalog.json) grown to `types` types, every quota `quota`.
inline std::string catalog_with_types(const std::string& base_dir, long long types, long long quota) {
  Json c = Json::parse(read_file(fs::path(base_dir) / "catalog.json"));
  Json& list = c["instance_types"];
  for (long long k = static_cast<long long>(list.size()); k < types; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "x9.t%04lld", k);
    list.push_back({{"name", name}, {"gpus", 1}, {"price_usd_per_hour", 0.5 + 0.001 * double(k)}, {"quota", 0}});
  }
  while (static_cast<long long>(list.size()) > types) list.erase(list.size() - 1);
  for (Json& t : list) t["quota"] = quota;
  return c.dump();
}

/// The preset workload (tests/hostile/workload.json) with profiles for catalog_with_types()'s extra types.
inline std::string workload_with_types(const std::string& base_dir, long long types) {
  Json w = Json::parse(read_file(fs::path(base_dir) / "workload.json"));
  for (long long k = static_cast<long long>(w["profiles"].size()); k < types; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "x9.t%04lld", k);
    w["profiles"][name] = {{"batch_per_gpu", 512}, {"iteration_time_s", 0.8 + 0.001 * double(k)}};
  }
  return w.dump();
}

/// Creates `path` from a file spec (see the file comment).
inline void materialize(const std::string& spec, const fs::path& path, const std::string& dir, const std::string& base_dir) {
  const std::vector<std::string> parts = split(spec, '|');
  const std::string& generator = parts[0];
  auto argument = [&](const std::string& prefix) { return generator.substr(prefix.size()); };
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::string content;
  if (generator == "dir") {
    if (parts.size() > 1) throw table_error("dir takes no edits");
    fs::create_directory(path);
    return;
  }
  if (generator == "fifo") {
    if (parts.size() > 1) throw table_error("fifo takes no edits");
    if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + path.string() + ": " + std::strerror(errno));
    return;
  }
  if (generator.rfind("symlink:", 0) == 0) {
    if (parts.size() > 1) throw table_error("symlink takes no edits");
    fs::create_symlink(expand(argument("symlink:"), dir), path);
    return;
  }
  if (generator.rfind("base:", 0) == 0) {
    const fs::path source = fs::path(base_dir) / argument("base:");
    if (!fs::is_regular_file(source)) throw table_error("no base file " + source.string());
    content = read_file(source);
  } else if (generator.rfind("text:", 0) == 0) {
    content = expand(argument("text:"), dir);
  } else if (generator.rfind("fill:", 0) == 0) {
    const std::string rest = argument("fill:");
    const auto colon = rest.find(':');
    if (colon == std::string::npos) throw table_error("expected fill:N:TEXT");
    const auto n = std::size_t(to_count(rest.substr(0, colon), "fill"));
    const std::string unit = expand(rest.substr(colon + 1), dir);
    if (unit.empty()) throw table_error("fill needs a non-empty TEXT");
    content.reserve(n);
    while (content.size() < n) content += unit;
    content.resize(n);
  } else if (generator.rfind("zeros:", 0) == 0) {
    if (parts.size() > 1) throw table_error("zeros takes no edits");
    const long long n = to_count(argument("zeros:"), "zeros");
    std::ofstream(path, std::ios::binary).close();
    if (::truncate(path.c_str(), off_t(n)) != 0) throw std::runtime_error("truncate: " + std::string(std::strerror(errno)));
    return;
  } else if (generator.rfind("catalog-types:", 0) == 0) {
    const std::vector<std::string> a = split(argument("catalog-types:"), ':');
    if (a.size() != 2) throw table_error("expected catalog-types:N:QUOTA");
    content = catalog_with_types(base_dir, to_count(a[0], "catalog-types"), to_count(a[1], "catalog-types"));
  } else if (generator.rfind("workload-types:", 0) == 0) {
    content = workload_with_types(base_dir, to_count(argument("workload-types:"), "workload-types"));
  } else {
    throw table_error("unknown generator \"" + generator + "\"");
  }

  std::optional<long long> final_size;
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const std::string& edit = parts[k];
    const auto colon = edit.find(':');
    const std::string op = edit.substr(0, colon);
    const std::string arg = colon == std::string::npos ? std::string() : edit.substr(colon + 1);
    if (op == "replace" || op == "replaceall") {
      const auto arrow = arg.find("=>");
      if (arrow == std::string::npos) throw table_error(op + " needs OLD=>NEW");
      const std::string from = expand(arg.substr(0, arrow), dir), to = expand(arg.substr(arrow + 2), dir);
      std::size_t at = content.find(from);
      if (from.empty() || at == std::string::npos) throw table_error(op + ": \"" + printable(from) + "\" does not occur");
      while (at != std::string::npos) {
        content.replace(at, from.size(), to);
        if (op == "replace") break;
        at = content.find(from, at + to.size());
      }
    } else if (op == "prefix") {
      content = expand(arg, dir) + content;
    } else if (op == "suffix") {
      content += expand(arg, dir);
    } else if (op == "pad") {
      content.append(std::size_t(to_count(arg, "pad")), ' ');
    } else if (op == "repeat-rows") {
      const auto newline = content.find('\n');
      if (newline == std::string::npos) throw table_error("repeat-rows needs a header line");
      const std::string rows = content.substr(newline + 1);
      const long long n = to_count(arg, "repeat-rows");
      content.resize(newline + 1);
      for (long long r = 0; r < n; ++r) content += rows;
    } else if (op == "set") {
      const auto eq = arg.find('=');
      if (eq == std::string::npos) throw table_error("set needs POINTER=JSON");
      const Json value = Json::parse(expand(arg.substr(eq + 1), dir));
      edit_json(content, expand(arg.substr(0, eq), dir), &value);
    } else if (op == "del") {
      edit_json(content, expand(arg, dir), nullptr);
    } else if (op == "size") {
      final_size = to_count(arg, "size");
    } else {
      throw table_error("unknown edit \"" + edit + "\"");
    }
  }
  {
    std::ofstream out(path, std::ios::binary);
    out.write(content.data(), std::streamsize(content.size()));
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }
  if (final_size && ::truncate(path.c_str(), off_t(*final_size)) != 0) {
    throw std::runtime_error("truncate: " + std::string(std::strerror(errno)));
  }
}

/// Resident memory at which a run is killed (the CLI reading /dev/zero must not take the machine down).
inline constexpr long long kMemoryLimitBytes = 2LL << 30;
/// Largest file a run may write (RLIMIT_FSIZE).
inline constexpr long long kFileSizeLimitBytes = 512LL << 20;

/// Resident memory of process `pid` in bytes (0 when it cannot be read).
inline long long resident_bytes(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/statm", int(pid));
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 0;
  long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * ::sysconf(_SC_PAGESIZE) : 0;
}

/// What one run of the CLI did.
struct Outcome {
  int exit_code = -1;  ///< -1 when killed by a signal or the time limit
  int signal = 0;
  bool timed_out = false;
  bool memory_exceeded = false;  ///< resident memory passed kMemoryLimitBytes: killed
  double seconds = 0;
  std::string out, err;
};

/// Runs `program` with `arguments` in `dir` (also HOME and TMPDIR), stdin from `stdin_path`, stdout and
/// stderr to files next to `dir`; kills the process group after `limit_s` seconds.
inline Outcome run_process(const std::string& program, const std::vector<std::string>& arguments, const std::string& dir,
                           const std::string& stdin_path, const std::string& capture_prefix, double limit_s) {
  const std::string out_path = capture_prefix + ".out", err_path = capture_prefix + ".err";
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view key = entry.substr(0, entry.find('='));
    if (key == "HOME" || key == "TMPDIR" || key == "TMP" || key == "TEMP" || key == "PWD" || key == "OLDPWD") continue;
    env_text.emplace_back(entry);
  }
  env_text.push_back("HOME=" + dir);
  env_text.push_back("TMPDIR=" + dir);
  env_text.push_back("PWD=" + dir);
  std::vector<char*> envp, argv;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string argv0 = program;
  std::vector<std::string> args = arguments;
  argv.push_back(argv0.data());
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {  // child: only async-signal-safe calls until execve
    ::setpgid(0, 0);
    const struct rlimit fsize = {rlim_t(kFileSizeLimitBytes), rlim_t(kFileSizeLimitBytes)};
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    const int in = ::open(stdin_path.c_str(), O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0 || ::chdir(dir.c_str()) != 0) {
      ::_exit(126);
    }
    ::close(in);
    ::close(out);
    ::close(err);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the kill below cannot race the child's own call
  Outcome o;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool too_big = resident_bytes(pid) > kMemoryLimitBytes;
    if (elapsed > limit_s || too_big) {
      (too_big ? o.memory_exceeded : o.timed_out) = true;
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(elapsed < 1 ? 2 : 10));
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::kill(-pid, SIGKILL);  // anything the CLI left running (a helper it started) goes too
  const bool killed = o.timed_out || o.memory_exceeded;
  if (!killed && WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (!killed && WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  o.out = read_file(out_path);
  o.err = read_file(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return o;
}

/// Names in a directory (not recursive).
inline std::set<std::string> list_names(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.insert(it->path().filename().string());
  }
  return names;
}

/// Every path under `dir` (recursive, symlinks not followed) whose name is `name`.
inline std::vector<std::string> find_named(const fs::path& dir, const std::string& name) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().filename() == name) found.push_back(it->path().string());
  }
  return found;
}

/// A directory watched for entries the CLI must not create. Strict canaries report every new name;
/// shared ones (where other programs write too) only names containing one of `suspicious`.
struct Canary {
  fs::path dir;
  bool strict = true;
  std::vector<std::string> suspicious;
  std::vector<std::string> ignore_prefixes;

  [[nodiscard]] bool counts(const std::string& name) const {
    for (const std::string& p : ignore_prefixes) {
      if (name.rfind(p, 0) == 0) return false;
    }
    if (strict) return true;
    for (const std::string& s : suspicious) {
      if (name.find(s) != std::string::npos) return true;
    }
    return false;
  }
};

/// Runs cases and checks the contract. One Matrix per test program run; run() may be called from threads.
class Matrix {
 public:
  Matrix(std::string program, std::string base_dir, std::vector<Canary> canaries, double limit_s)
      : program_(std::move(program)), base_dir_(std::move(base_dir)), canaries_(std::move(canaries)), limit_s_(limit_s) {
    std::string pattern = (fs::temp_directory_path() / "spotdnn-hostile-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    root_ = pattern;
    canaries_.push_back({root_, true, {}, {}});  // only the cases' own directories and captures may appear
  }
  ~Matrix() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;

  [[nodiscard]] const fs::path& root() const { return root_; }

  /// Runs one case; returns its problems (empty when the CLI kept the contract) and fills `outcome`.
  std::vector<std::string> run(const Case& c, int index, Outcome& outcome) {
    std::vector<std::string> problems;
    const std::string id = "c" + std::to_string(index);
    const fs::path dir = root_ / id;
    const std::string dir_text = dir.string();
    fs::create_directory(dir);
    std::vector<std::string> args;
    std::string stdin_path = "/dev/null";
    try {
      for (const auto& file : c.files) materialize(file.second, dir / expand(file.first, dir_text), dir_text, base_dir_);
      if (c.stdin_spec != "-") {
        stdin_path = (root_ / (id + ".in")).string();
        materialize(c.stdin_spec, stdin_path, dir_text, base_dir_);
      }
      for (const std::string& token : c.arguments) args.push_back(expand(token, dir_text));
    } catch (const std::exception& e) {
      cleanup(dir, stdin_path);
      return {std::string("case table error: ") + e.what()};
    }

    const std::vector<std::set<std::string>> before = snapshot();
    std::set<std::string> overlapping = register_running(c.name);
    outcome = run_process(program_, args, dir_text, stdin_path, (root_ / id).string(), limit_s_);
    unregister_running(c.name, overlapping);
    std::string also;
    for (const std::string& other : overlapping) also += (also.empty() ? "" : ", ") + other;
    const std::vector<std::set<std::string>> after = snapshot();

    const Outcome& o = outcome;
    if (o.timed_out) {
      problems.push_back("did not finish within " + std::to_string(int(limit_s_)) + " s (process group killed)");
    } else if (o.memory_exceeded) {
      problems.push_back("used more than " + std::to_string(kMemoryLimitBytes >> 20) + " MiB of memory (process group killed)");
    } else if (o.signal != 0) {
      problems.push_back("killed by signal " + std::to_string(o.signal) + " (" + ::strsignal(o.signal) + ")");
    } else if (c.exit_codes.count(o.exit_code) == 0) {
      problems.push_back("exit code " + std::to_string(o.exit_code) + ", expected " + c.expected_text());
    }
    if (o.exit_code == 2 && !o.out.empty()) problems.push_back("exit code 2 but stdout is not empty");
    if (o.exit_code == 1 || o.exit_code == 2) {
      const auto newlines = std::count(o.err.begin(), o.err.end(), '\n');
      if (o.err.empty() || o.err.back() != '\n' || newlines != 1) {
        problems.push_back("stderr is not exactly one line (" + std::to_string(newlines) + " newlines, " +
                           std::to_string(o.err.size()) + " bytes)");
      }
      for (std::size_t i = 0; i < o.err.size(); ++i) {
        const auto b = static_cast<unsigned char>(o.err[i]);
        if ((b < 0x20 && !(b == '\n' && i + 1 == o.err.size())) || b == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", b);
          problems.push_back(std::string("stderr carries the raw control byte ") + hex + " at offset " + std::to_string(i));
          break;
        }
      }
    }
    for (const std::string& text : c.stderr_contains) {
      const std::string want = expand(text, dir_text);
      if (o.err.find(want) == std::string::npos) problems.push_back("stderr lacks \"" + printable(want) + "\"");
    }
    for (const std::string& text : c.stdout_contains) {
      const std::string want = expand(text, dir_text);
      if (o.out.find(want) == std::string::npos) problems.push_back("stdout lacks \"" + printable(want) + "\"");
    }
    if (o.exit_code == 0) {
      for (const std::string& path : c.created) {
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(dir / expand(path, dir_text), ec))) {
          problems.push_back("exit code 0 but \"" + printable(expand(path, dir_text)) + "\" was not created");
        }
      }
    }
    for (const std::string& pwned : find_named(dir, "PWNED")) problems.push_back("a file named PWNED appeared: " + printable(pwned));
    for (std::size_t k = 0; k < canaries_.size(); ++k) {
      for (const std::string& name : after[k]) {
        if (before[k].count(name) || !canaries_[k].counts(name)) continue;
        if (canaries_[k].dir == root_ && (name == id || name.rfind(id + ".", 0) == 0)) continue;
        if (canaries_[k].dir == root_ && name.size() > 1 && name[0] == 'c' &&
            name.find_first_not_of("0123456789.inouterr", 1) == std::string::npos) {
          continue;  // another worker's case directory or capture file
        }
        problems.push_back("\"" + printable(name) + "\" appeared in " + canaries_[k].dir.string() +
                           (also.empty() ? "" : " (cases running at the same time: " + also + ")"));
      }
    }
    cleanup(dir, stdin_path);
    return problems;
  }

 private:
  std::vector<std::set<std::string>> snapshot() const {
    std::vector<std::set<std::string>> names;
    for (const Canary& c : canaries_) names.push_back(list_names(c.dir));
    return names;
  }

  /// The other cases running now (and, after unregister_running, also those running at the end).
  std::set<std::string> register_running(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::string> others = running_;
    running_.insert(name);
    return others;
  }
  void unregister_running(const std::string& name, std::set<std::string>& others) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_.erase(name);
    others.insert(running_.begin(), running_.end());
  }

  void cleanup(const fs::path& dir, const std::string& stdin_path) const {
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (stdin_path != "/dev/null") std::remove(stdin_path.c_str());
  }

  std::string program_;
  std::string base_dir_;
  std::vector<Canary> canaries_;
  double limit_s_;
  fs::path root_;
  std::mutex mutex_;
  std::set<std::string> running_;
};

/// Runs `cases` on `jobs` threads; result k belongs to cases[k].
struct Result {
  Outcome outcome;
  std::vector<std::string> problems;
};

inline std::vector<Result> run_all(Matrix& matrix, const std::vector<Case>& cases, int jobs) {
  std::vector<Result> results(cases.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t k = next++; k < cases.size(); k = next++) {
      try {
        results[k].problems = matrix.run(cases[k], int(k), results[k].outcome);
      } catch (const std::exception& e) {
        results[k].problems = {std::string("the runner failed: ") + e.what()};
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace spotdnn::test::hostile
