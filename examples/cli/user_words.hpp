#pragma once
// SPDX-License-Identifier: MIT
/// @file cli/user_words.hpp Errors in the user's words: the library's and CLI11's messages retold with the
/// option the user typed and the value they gave, what is allowed, and the nearest valid name.
///
/// The library names its own function and parameter ("plan_exact: options.minimum_counts["p3.2xlarge"] = 5:
/// ..."), which is right for a library user and wrong for a person at a shell, who typed `--keep
/// p3.2xlarge=5`. spotdnn::invalid_argument keeps the parts of its message apart (function(), field(),
/// value(), why()); user_words() finds the option behind the field (a table for the fields whose names
/// differ from their option's, else the field's own name, else the option whose value holds the refused
/// value or file) and says `--keep "p3.2xlarge=5": must be between 0 and the type's quota (2)`. CLI11's
/// parse errors ("Could not convert: --target-loss = 0,8", "At Most 1 required but received 2") are
/// retold by parse_error_words(). Whatever is left of a C++ name (`options.x`, `Type::member`, a leading
/// "function: ") is put into words by scrub_identifiers().

#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <spotdnn/detail/format.hpp>
#include <spotdnn/detail/validate.hpp>
#include <spotdnn/errors.hpp>

#include "help.hpp"
#include "suggest.hpp"

namespace spotdnn::cli {

namespace user_words_detail {

/// A library field whose option has another name, or that needs other words.
struct FieldWords {
  std::string_view function;  ///< the function's name starts with this ("" for any)
  std::string_view field;     ///< the field starts with this
  std::string_view option;    ///< the option that sets it ("" for none)
  std::string_view words;     ///< how the field reads in a sentence ("" for the option's name)
};

/// Fields whose option is not named after them. The first match wins.
inline constexpr FieldWords kFieldWords[] = {
    {"", "options.minimum_counts", "--keep", ""},
    {"", "minimum_counts", "--keep", ""},
    {"", "options.markets", "--on-demand", ""},
    {"", "markets", "--on-demand", ""},
    {"", "options.max_deadline_s", "--deadlines", "the longest deadline of --deadlines"},
    {"", "options.min_deadline_s", "--deadlines", "the shortest deadline of --deadlines"},
    {"", "options.count", "--deadlines", "the COUNT of --deadlines"},
    {"", "options.points", "--deadlines", "the COUNT of --deadlines"},
    {"", "hazard_overrides", "--hazard", ""},
    {"", "options.hazard_overrides", "--hazard", ""},
    {"", "fallback_hazard_per_hour", "--fallback-hazard", ""},
    {"interruption_band", "band", "--fallback-band", ""},
    {"", "options.exclude_types", "--exclude", ""},
    {"", "exclude_types", "--exclude", ""},
    {"", "options.charge_parameter_server", "--no-ps-cost", ""},
    {"", "from_type", "--estimate-profiles-from", ""},
    {"", "options.threads", "--threads", ""},
    {"", "options.scenarios", "--scenarios", ""},
    {"", "options.notice_s", "--notice", ""},
    {"plan_profiling", "options.cluster_run_minutes", "--run-minutes", ""},
    {"plan_profiling", "options.cluster_sizes", "--sizes", ""},
    {"plan_profiling", "options.budget_usd", "--budget", ""},
    {"build_workload", "options.required_bandwidth_bytes_per_s", "--required-bandwidth", ""},
    {"", "cluster entry", "--cluster", ""},
    {"", "cluster entry", "--keep", ""},
    {"", "gpu_map entry", "--gpu-map", ""},
    {"", "free_parameters", "--free", ""},
};

/// Unit suffixes of field names (deadline_s is --deadline, budget_usd is --budget).
inline constexpr std::string_view kUnitSuffixes[] = {"_s", "_usd", "_per_hour", "_mb", "_gb", "_ms", "_bytes", "_hours"};

[[nodiscard]] inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

[[nodiscard]] inline bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

[[nodiscard]] inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// `text` without one pair of surrounding double quotes.
[[nodiscard]] inline std::string unquoted(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') return std::string(text.substr(1, text.size() - 2));
  return std::string(text);
}

/// The key of the first index of `field`: `minimum_counts["p3.2xlarge"]` gives p3.2xlarge, `x[3]` gives 3.
[[nodiscard]] inline std::string index_key(std::string_view field) {
  const std::size_t open = field.find('[');
  if (open == std::string_view::npos) return {};
  const std::size_t close = field.find(']', open);
  if (close == std::string_view::npos) return {};
  return unquoted(field.substr(open + 1, close - open - 1));
}

/// "fallback_hazard_per_hour" from "options.fallback_hazard_per_hour[2]": the last name of a field.
[[nodiscard]] inline std::string last_name(std::string_view field) {
  std::string_view f = field.substr(0, field.find('['));
  const std::size_t dot = f.rfind('.');
  if (dot != std::string_view::npos) f = f.substr(dot + 1);
  const std::size_t colons = f.rfind("::");
  if (colons != std::string_view::npos) f = f.substr(colons + 2);
  return std::string(f);
}

/// "fallback_hazard" from "--fallback-hazard".
[[nodiscard]] inline std::string option_key(std::string_view name) {
  std::string key(name.substr(name.find_first_not_of('-') == std::string_view::npos ? name.size() : name.find_first_not_of('-')));
  for (char& c : key) c = c == '-' ? '_' : c;
  return key;
}

/// True when a field named `field` is set by the option whose key is `key` (equal, its plural, or the key
/// plus a unit).
[[nodiscard]] inline bool field_is_option(std::string_view field, std::string_view key) {
  if (field.empty() || key.empty()) return false;
  if (field == key || (field.size() == key.size() + 1 && starts_with(field, key) && field.back() == 's')) return true;
  for (std::string_view unit : kUnitSuffixes) {
    if (field.size() == key.size() + unit.size() && starts_with(field, key) && ends_with(field, unit)) return true;
  }
  return false;
}

/// The long name ("--keep") of `option`.
[[nodiscard]] inline std::string long_name(const CLI::Option& option) {
  if (!option.get_lnames().empty()) return "--" + option.get_lnames().front();
  return option.get_name();
}

/// The options of `app` that take part in messages (not --help).
[[nodiscard]] inline std::vector<const CLI::Option*> options_of(const CLI::App& app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty() || option->get_lnames().front() == "help") continue;
    out.push_back(option);
  }
  return out;
}

/// `app`'s option named `name` ("--keep"), or null.
[[nodiscard]] inline const CLI::Option* find_option(const CLI::App& app, std::string_view name) {
  for (const CLI::Option* option : options_of(app)) {
    if (long_name(*option) == name) return option;
  }
  return nullptr;
}

/// The entries of a list value ("a=1,b=2" or "a=1;b=2").
[[nodiscard]] inline std::vector<std::string> entries_of(std::string_view value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t end = std::min(value.find_first_of(",;", start), value.size());
    std::string entry(value.substr(start, end - start));
    while (!entry.empty() && entry.front() == ' ') entry.erase(0, 1);
    out.push_back(entry);
    start = end + 1;
  }
  return out;
}

/// True when `entry` is about `name`: equal to it, or `name=...`.
[[nodiscard]] inline bool entry_names(std::string_view entry, std::string_view name) {
  return entry == name || (starts_with(entry, name) && entry.size() > name.size() && entry[name.size()] == '=');
}

/// Candidate names listed in `text` after `at`: "a, b, c or d" up to a closing parenthesis, a semicolon,
/// ", got" or the end.
[[nodiscard]] inline std::vector<std::string> listed_names(std::string_view text) {
  std::size_t end = text.size();
  for (std::string_view stop : {std::string_view(")"), std::string_view(";"), std::string_view(", got"), std::string_view(": ")}) {
    end = std::min(end, text.find(stop));
  }
  std::string list(text.substr(0, end));
  std::vector<std::string> names;
  std::string word;
  auto flush = [&] {
    while (!word.empty() && (word.back() == '.' || word.back() == ' ')) word.pop_back();
    if (!word.empty() && word != "or" && word != "and") names.push_back(word);
    word.clear();
  };
  for (char c : list) {
    if (c == ',' || c == ' ') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return names;
}

/// The names a message lists as allowed, or none: "(known: a, b)", "(known for this trace: a, b)", "(the
/// catalog has: a, b)", "expected one of a, b", "expected a, b or c", "this command writes a, b or c".
[[nodiscard]] inline std::vector<std::string> allowed_names(std::string_view text) {
  // "(known for this trace: a, b)" and the like
  if (const std::size_t known = text.find("(known"); known != std::string_view::npos) {
    const std::size_t colon = text.find(": ", known);
    const std::size_t close = text.find(')', known);
    if (colon != std::string_view::npos && (close == std::string_view::npos || colon < close)) {
      return listed_names(text.substr(colon + 2));
    }
  }
  for (std::string_view marker : {std::string_view("(known: "), std::string_view("(the catalog has: "), std::string_view("expected one of "),
                                  std::string_view("expected "), std::string_view("this command writes "),
                                  std::string_view("known zones: ")}) {
    const std::size_t at = text.find(marker);
    if (at == std::string_view::npos) continue;
    const std::string_view list = text.substr(at + marker.size());
    if (list.find("e.g.") != std::string_view::npos || list.find("such as") != std::string_view::npos) return {};
    std::vector<std::string> names = listed_names(list);
    // "expected a number": a description, not a list of names.
    if (marker == "expected " && names.size() < 2) return {};
    return names;
  }
  return {};
}

/// The name `word` most likely stands for among `names`: the same name in other letter case, else
/// closest_name's choice.
[[nodiscard]] inline std::optional<std::string> nearest_name(std::string_view word, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (name != word && lower(name) == lower(word)) return name;
  }
  return closest_name(word, names);
}

/// `why` with ": did you mean X?" before its list of allowed names (or at its end), when `word` is close
/// to one of them and `why` does not suggest one already.
[[nodiscard]] inline std::string with_suggestion(std::string why, std::string_view word) {
  if (word.empty() || why.find("did you mean") != std::string::npos) return why;
  const std::vector<std::string> names = allowed_names(why);
  const std::optional<std::string> best = nearest_name(word, names);
  if (!best) return why;
  const std::string hint = "did you mean " + *best + "?";
  const std::size_t paren = why.find(" (");
  if (paren != std::string::npos) return why.substr(0, paren) + ": " + hint + why.substr(paren);
  return why + ": " + hint;
}

/// True for a character of a C++ identifier.
[[nodiscard]] inline bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// A field as a message shows it when no option sets it: the name itself (a JSON key or a name a user can
/// find), without its C++ part (`options.`, `Type::`).
[[nodiscard]] inline std::string field_words(std::string_view field) {
  std::string f(field);
  for (std::string_view prefix : {std::string_view("options."), std::string_view("opts."), std::string_view("o.")}) {
    if (starts_with(f, prefix)) f.erase(0, prefix.size());
  }
  const std::size_t colons = f.rfind("::");
  if (colons != std::string::npos) f.erase(0, colons + 2);
  return f;
}

}  // namespace user_words_detail

/// The command `app` ran: `app` or, for a group (`fit`), the subcommand the command line chose in it.
[[nodiscard]] inline const CLI::App* chosen_command(const CLI::App* app) {
  while (app != nullptr) {
    const std::vector<CLI::App*> chosen = app->get_subcommands();
    if (chosen.empty()) break;
    app = chosen.front();
  }
  return app;
}

/// The values the user gave `option`, as typed (empty when not given).
[[nodiscard]] inline std::vector<std::string> given_values(const CLI::Option& option) {
  std::vector<std::string> values;
  if (option.count() == 0) return values;
  for (const std::string& v : option.results()) values.push_back(v);
  return values;
}

/// The option of `app` that sets the library field `field` of `function`: the table's, else the one named
/// after the field (a unit suffix aside). Null when none is.
[[nodiscard]] inline const CLI::Option* option_for_field(const CLI::App& app, std::string_view function, std::string_view field,
                                                          std::string* words = nullptr) {
  using namespace user_words_detail;
  for (const FieldWords& w : kFieldWords) {
    if (!starts_with(function, w.function) || !starts_with(field, w.field)) continue;
    if (w.option.empty()) return nullptr;
    if (const CLI::Option* option = find_option(app, w.option)) {
      if (words != nullptr) *words = w.words.empty() ? std::string(w.option) : std::string(w.words);
      return option;
    }
  }
  // Only a parameter's own field (no JSON key path): "options.x", "x" or "x[...]".
  std::string_view bare = field;
  if (starts_with(bare, "options.")) bare.remove_prefix(8);
  if (bare.find('.') != std::string_view::npos || bare.find(':') != std::string_view::npos ||
      bare.find(' ') != std::string_view::npos) {
    return nullptr;
  }
  const std::string name = last_name(bare);
  for (const CLI::Option* option : options_of(app)) {
    if (field_is_option(name, option_key(long_name(*option)))) {
      if (words != nullptr) *words = long_name(*option);
      return option;
    }
  }
  return nullptr;
}

/// The option the user gave whose value is `text`, or lists it (`p3.2xlarge` in `--cluster
/// g3.8xlarge=1,p3.2xlarge=2`); `text` has at least two characters and is not a number, so that "1" finds
/// nothing: where a refused name or file came from. Null when none.
[[nodiscard]] inline const CLI::Option* option_holding(const CLI::App& app, std::string_view text) {
  using namespace user_words_detail;
  if (text.size() < 2) return nullptr;
  char* end = nullptr;
  const std::string copy(text);
  std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() + copy.size()) return nullptr;
  const CLI::Option* listed = nullptr;
  for (const CLI::Option* option : options_of(app)) {
    for (const std::string& value : given_values(*option)) {
      if (value == text) return option;
      for (const std::string& entry : entries_of(value)) {
        if (listed == nullptr && entry_names(entry, text)) listed = option;
      }
    }
  }
  return listed;
}

/// The option the user gave exactly `text` (a file path), or null, also when several options were given it
/// (the same file twice: which one refused it is not known, so the message names the file alone).
[[nodiscard]] inline const CLI::Option* option_with_value(const CLI::App& app, std::string_view text) {
  const CLI::Option* found = nullptr;
  for (const CLI::Option* option : user_words_detail::options_of(app)) {
    for (const std::string& value : given_values(*option)) {
      if (value != text) continue;
      if (found != nullptr && found != option) return nullptr;
      found = option;
    }
  }
  return found;
}

/// What the user gave `option`, for a message: `"VALUE"`, or the one entry of a list about `key` or
/// `value` (`--keep "p3.2xlarge=5"` of `--keep g3.8xlarge=1,p3.2xlarge=5`), or "(default D)" or "" when
/// the option was not given.
[[nodiscard]] inline std::string given_text(const CLI::Option& option, std::string_view key, std::string_view value) {
  using namespace user_words_detail;
  const std::vector<std::string> values = given_values(option);
  if (values.empty()) {
    const std::string d = option.get_default_str();
    return d.empty() ? std::string() : "(default " + d + ")";
  }
  for (std::string_view name : {key, value}) {
    if (name.empty()) continue;
    for (const std::string& v : values) {
      const std::vector<std::string> entries = entries_of(v);
      if (entries.size() < 2) continue;
      for (const std::string& entry : entries) {
        if (entry_names(entry, name)) return detail::quoted(entry);
      }
    }
  }
  if (values.size() == 1) return detail::quoted(values.front());
  for (const std::string& v : values) {
    if (!value.empty() && v.find(value) != std::string::npos) return detail::quoted(v);
  }
  return detail::quoted(values.back());
}

/// `text` with its C++ names put into the user's words: `options.x` and `Type::x` become the option of
/// `app` that sets x (or x), a leading "function: " goes, and so does a library-only hint ("; in the library
/// ...").
[[nodiscard]] inline std::string scrub_identifiers(std::string text, const CLI::App* app) {
  using namespace user_words_detail;
  // "(..., or --fallback-hazard RATE; in the library InterruptionOptions::x or y, or the catalog's fields)"
  for (std::size_t at = text.find("; in the library"); at != std::string::npos; at = text.find("; in the library")) {
    const std::size_t close = text.find(')', at);
    text.erase(at, (close == std::string::npos ? text.size() : close) - at);
  }
  // A leading "function: " or "Type::function: " (not an option, not a file: no '-', '.', '/' or space).
  for (int round = 0; round < 3; ++round) {
    const std::size_t colon = text.find(": ");
    if (colon == std::string::npos || colon == 0) break;
    const std::string_view head(text.data(), colon);
    bool identifier = head.find('_') != std::string_view::npos || head.find("::") != std::string_view::npos;
    bool camel = std::isupper(static_cast<unsigned char>(head.front())) != 0;
    for (char c : head) {
      if (!identifier_char(c) && c != ':') identifier = camel = false;
    }
    if (camel) {
      bool inner_upper = false;
      for (std::size_t i = 1; i < head.size(); ++i) inner_upper = inner_upper || std::isupper(static_cast<unsigned char>(head[i])) != 0;
      camel = inner_upper || head.find("::") != std::string_view::npos;
    }
    if (!identifier && !camel) break;
    text.erase(0, colon + 2);
  }
  // options.x / opts.x / Type::x anywhere.
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t start = std::string::npos, name_at = 0;
    for (std::string_view prefix : {std::string_view("options."), std::string_view("opts.")}) {
      if (text.compare(i, prefix.size(), prefix) == 0 && (i == 0 || !identifier_char(text[i - 1]))) {
        start = i;
        name_at = i + prefix.size();
      }
    }
    if (start == std::string::npos && std::isupper(static_cast<unsigned char>(text[i])) != 0 && (i == 0 || !identifier_char(text[i - 1]))) {
      std::size_t j = i;
      while (j < text.size() && identifier_char(text[j])) ++j;
      if (text.compare(j, 2, "::") == 0) {
        start = i;
        name_at = j + 2;
      }
    }
    if (start == std::string::npos) {
      out += text[i++];
      continue;
    }
    std::size_t end = name_at;
    while (end < text.size() && (identifier_char(text[end]) || text[end] == ':')) ++end;
    if (end < text.size() && text[end] == '[') {
      const std::size_t close = text.find(']', end);
      if (close != std::string::npos) end = close + 1;
    }
    const std::string field = text.substr(start, end - start);
    std::string words;
    if (app == nullptr || option_for_field(*app, "", field, &words) == nullptr) words = field_words(field);
    out += words;
    i = end;
  }
  return out;
}

/// The message of a library error `e` raised while running the command `app`, in the user's words:
/// `OPTION "VALUE": why` when an option of `app` gave the refused value, `--catalog "FILE": key K = V: why`
/// for a file, else the field and value without C++ names; with the nearest allowed name when `why` lists
/// them.
[[nodiscard]] inline std::string user_words(const spotdnn::invalid_argument& e, const CLI::App* command) {
  using namespace user_words_detail;
  const CLI::App* app = chosen_command(command);
  std::string function = e.function(), field = e.field(), value = e.value(), why = e.why();
  if (function.empty() && field.empty()) {
    // A message without parts: "function: field = value: why" when it has that shape.
    const std::string text = e.what();
    const std::size_t colon = text.find(": ");
    const std::size_t equals = colon == std::string::npos ? std::string::npos : text.find(" = ", colon + 2);
    const std::size_t why_at = equals == std::string::npos ? std::string::npos : text.find(": ", equals + 3);
    if (why_at == std::string::npos) return scrub_identifiers(text, app);
    function = text.substr(0, colon);
    field = text.substr(colon + 2, equals - colon - 2);
    value = text.substr(equals + 3, why_at - equals - 3);
    why = text.substr(why_at + 2);
  }
  const std::string bare_value = unquoted(value);
  why = with_suggestion(scrub_identifiers(why, app), bare_value);
  const std::string key = index_key(field);
  const bool missing = value == "missing";
  const bool placeholder = value.size() >= 2 && value.front() == '<' && value.back() == '>';
  const auto value_part = [&](const std::string& what) {
    if (missing) return what + " is missing";
    if (placeholder || value.empty()) return what;
    return what + " = " + value;
  };

  // A file: "read_catalog_file(c.json)" or a field that starts with the file ("t.csv:3: column").
  std::string file;
  const std::size_t open = function.find('(');
  if (open != std::string::npos && function.back() == ')') file = function.substr(open + 1, function.size() - open - 2);
  if (file.empty() && app != nullptr) {
    const std::string head = field.substr(0, field.find(':'));
    if (head == "<stdin>" || option_with_value(*app, head) != nullptr) file = head;
  }
  if (!file.empty()) {
    std::string rest = field;
    if (starts_with(rest, file + ":")) {
      rest.erase(0, file.size() + 1);
      std::size_t digits = 0;
      while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])) != 0) ++digits;
      if (digits > 0 && rest.compare(digits, 2, ": ") == 0) {
        rest = "line " + rest.substr(0, digits) + ": " + rest.substr(digits + 2);
      } else if (digits > 0 && digits == rest.size()) {  // "t.csv:14": a whole row
        rest = "line " + rest;
      } else if (starts_with(rest, " ")) {
        rest.erase(0, 1);
      }
    } else if (rest == file) {
      rest.clear();
    } else if (!rest.empty() && rest.find(' ') == std::string::npos && rest.find(':') == std::string::npos) {
      rest = "key " + rest;
    }
    const CLI::Option* option = app != nullptr ? option_with_value(*app, file) : nullptr;
    std::string head = option != nullptr ? long_name(*option) + " " + detail::quoted(file) : file;
    if (file == "<stdin>" && app != nullptr) {
      head = "standard input";
      for (const CLI::Option* o : options_of(*app)) {
        for (const std::string& v : given_values(*o)) {
          if (v == "-") head = long_name(*o) + " - (standard input)";
        }
      }
    }
    if (rest.empty()) {
      // The value, unless it is the file itself or a placeholder ("<file>", parse_json's "text").
      if (missing || placeholder || value.empty() || bare_value == file || value == "text") return head + ": " + why;
      return head + ": " + value + ": " + why;
    }
    return head + ": " + value_part(rest) + ": " + why;
  }

  // An option's value.
  if (app != nullptr) {
    std::string words;
    const CLI::Option* option = option_for_field(*app, function, field, &words);
    if (option == nullptr && !key.empty()) option = option_holding(*app, key);
    if (option == nullptr && !missing && !placeholder) option = option_holding(*app, bare_value);
    if (option == nullptr && field == "path") option = option_with_value(*app, bare_value);  // a file: "-1" too
    if (option == nullptr && field.find(' ') == std::string::npos && !starts_with(field, "options.")) {
      option = option_holding(*app, field);  // Cluster::parse: "p3.2xlarge = -1"
    }
    if (option != nullptr) {
      const std::string given = given_text(*option, key.empty() ? (field.find('.') == std::string::npos ? field : "") : key, bare_value);
      std::string head = long_name(*option) + (given.empty() ? std::string() : " " + given);
      // The refused value is not what the user typed (a deadline in seconds, one of several fields).
      const bool shown = given.find(bare_value) != std::string::npos || missing || placeholder || value.empty();
      if (!words.empty() && words != long_name(*option)) {
        return head + ": " + words + (shown ? std::string() : " (" + bare_value + ")") + " " + why;
      }
      if (shown) return head + ": " + why;
      if (words != long_name(*option)) return head + ": " + value_part(field_words(field)) + ": " + why;
      // The option's own field, with the value as the library saw it: seconds of a duration, a name.
      char* end = nullptr;
      std::strtod(bare_value.c_str(), &end);
      if (!bare_value.empty() && end == bare_value.c_str() + bare_value.size()) {
        const std::string unit = ends_with(field, "_s") ? " s" : ends_with(field, "_usd") ? " USD" : "";
        return head + " (" + bare_value + unit + "): " + why;
      }
      return head + ": " + value + ": " + why;
    }
  }
  return value_part(scrub_identifiers(field_words(field), app)) + ": " + why;
}

/// A command's own refusal (usage_error) in the house's form: `--x = "v": why` and `--x: why, got "v"`
/// become `--x "v": why`, with the nearest allowed name when `why` lists them; C++ names put into words.
[[nodiscard]] inline std::string usage_words(const std::string& text, const CLI::App* command) {
  using namespace user_words_detail;
  const CLI::App* app = chosen_command(command);
  std::string out = scrub_identifiers(text, app);
  if (!starts_with(out, "--")) return out;
  std::size_t name_end = 2;
  while (name_end < out.size() && (identifier_char(out[name_end]) || out[name_end] == '-')) ++name_end;
  const std::string name = out.substr(0, name_end);
  std::string rest = out.substr(name_end);
  for (std::string_view form : {std::string_view(" = \""), std::string_view(": \"")}) {
    // `--x = "v": why` and `--x: "v": why`
    if (!starts_with(rest, form)) continue;
    const std::size_t close = rest.find("\": ", form.size());
    if (close == std::string::npos) return out;
    const std::string value = rest.substr(form.size(), close - form.size());
    return name + " " + detail::quoted(value) + ": " + with_suggestion(rest.substr(close + 3), value);
  }
  if (starts_with(rest, " = ")) {
    // `--x = v: why`, v unquoted (a number)
    const std::size_t colon = rest.find(": ", 3);
    if (colon == std::string::npos) return out;
    return name + " " + detail::quoted(rest.substr(3, colon - 3)) + ": " + rest.substr(colon + 2);
  }
  const std::size_t got = rest.rfind(", got \"");
  if (starts_with(rest, ": ") && got != std::string::npos && !rest.empty() && rest.back() == '"') {
    const std::string value = rest.substr(got + 7, rest.size() - got - 8);
    return name + " " + detail::quoted(value) + ": " + with_suggestion(rest.substr(2, got - 2), value);
  }
  return out;
}

/// The text of a CLI11 parse error `e` on the command `app` (the command line chose it; null when the
/// line chose none), in the house's words: which option, the value given (as typed in `argv`), what is
/// allowed.
/// Without `argv` (argc 0), the values are those the parser kept.
[[nodiscard]] inline std::string parse_error_words(const CLI::Error& e, const CLI::App* command, int argc = 0,
                                                    char** argv = nullptr) {
  using namespace user_words_detail;
  const CLI::App* app = argv == nullptr ? chosen_command(command) : command;
  const std::string text = e.what();
  // The values given to option `name` on the command line, as typed.
  const auto typed_values = [&](const std::string& name) {
    std::vector<std::string> values;
    if (argv == nullptr) {
      const CLI::Option* option = app != nullptr ? find_option(*app, name) : nullptr;
      return option != nullptr ? given_values(*option) : values;
    }
    for (int i = 1; i < argc; ++i) {
      const std::string_view token = argv[i];
      if (token == name && i + 1 < argc) values.emplace_back(argv[i + 1]);
      if (starts_with(token, name + "=")) values.emplace_back(token.substr(name.size() + 1));
    }
    return values;
  };
  const auto option_named = [&](const std::string& name) -> const CLI::Option* {
    return app != nullptr ? find_option(*app, name) : nullptr;
  };
  const auto description = [&](const CLI::Option* option) -> std::string {
    if (option == nullptr) return {};
    std::string d = option->get_description();
    if (d.size() > 160) d = d.substr(0, d.rfind(' ', 157)) + "...";
    return d;
  };
  const auto expected_kind = [&](const CLI::Option* option, const std::string& value) -> std::string {
    const std::string type = option == nullptr ? std::string() : option->get_type_name();
    std::string kind;
    if (starts_with(type, "FLOAT") || starts_with(type, "MB")) kind = "a number, such as 0.8";
    if (starts_with(type, "INT") || type == "N" || starts_with(type, "N:")) kind = "a whole number, such as 4";
    if (starts_with(type, "UINT")) kind = "a whole number from 0 up, such as 4";
    if (kind.empty()) kind = "a value of the form " + (type.empty() ? std::string("TEXT") : type.substr(0, type.find(':')));
    if (value.find(',') != std::string::npos && kind.find("number") != std::string::npos) kind += " (a decimal point, not a comma)";
    return kind;
  };

  // "--x: Value 1.5 not in range 0.000000 to 1.000000" and the other "--x: MESSAGE" forms.
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr || dynamic_cast<const CLI::ConversionError*>(&e) != nullptr ||
      dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    const std::size_t colon = text.find(": ");
    std::string name = starts_with(text, "--") && colon != std::string::npos ? text.substr(0, colon) : std::string();
    std::string message = colon != std::string::npos && !name.empty() ? text.substr(colon + 2) : text;
    if (starts_with(text, "Could not convert: ")) {
      const std::size_t equals = text.find(" = ");
      name = text.substr(19, equals == std::string::npos ? std::string::npos : equals - 19);
      message = equals == std::string::npos ? std::string() : text.substr(equals + 3);
      const CLI::Option* option = option_named(name);
      const std::vector<std::string> values = typed_values(name);
      const std::string value = values.empty() ? message : values.back();
      if (option != nullptr && (option->get_expected_max() == 0 || option->get_type_size_max() == 0)) {
        return name + " " + detail::quoted(value) + ": " + name + " is a switch and takes no value";
      }
      return name + " " + detail::quoted(value) + ": expected " + expected_kind(option, value);
    }
    if (name.empty() && starts_with(text, "Expected exactly ")) {
      const std::size_t to = text.find(" arguments to ");
      const std::size_t comma = to == std::string::npos ? std::string::npos : text.find(", got", to);
      if (comma != std::string::npos) {
        name = text.substr(to + 14, comma - to - 14);
        message = "missing";
      }
    }
    const CLI::Option* option = option_named(name);
    const std::vector<std::string> values = name.empty() ? std::vector<std::string>() : typed_values(name);
    if (!name.empty() && (message.find("At Most") != std::string::npos || values.size() > 1) &&
        dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
      std::string list;
      for (std::size_t i = 0; i < values.size(); ++i) {
        list += (i == 0 ? "" : i + 1 == values.size() ? " and " : ", ") + detail::quoted(values[i]);
      }
      return name + " is given " + std::to_string(values.size()) + " times (" + list + "): give it once" +
             (option != nullptr && option->get_type_name().find("TEXT") != std::string::npos &&
                      description(option).find("or ; between") != std::string::npos
                  ? ", with every entry in one list"
                  : "");
    }
    if (!name.empty() && (message.find("missing") != std::string::npos || message.find("required") != std::string::npos)) {
      const std::string d = description(option);
      return name + " needs a value: " + expected_kind(option, "") + (d.empty() ? std::string() : " (" + d + ")");
    }
    if (message.find("Should be true/false") != std::string::npos || message.find("too many inputs for a flag") != std::string::npos) {
      const std::vector<std::string> flag_values = typed_values(name);
      return name + (flag_values.empty() ? std::string() : " " + detail::quoted(flag_values.back())) + ": " + name +
             " is a switch and takes no value";
    }
    if (starts_with(message, "Value ")) {
      // CLI11's Range ("Value V not in range A to B") or a validator's "Value V: why".
      const std::size_t range = message.find(" not in range ");
      const std::size_t to = range == std::string::npos ? std::string::npos : message.find(" to ", range + 14);
      if (to != std::string::npos) {
        const std::string value = message.substr(6, range - 6);
        const double low = std::strtod(message.substr(range + 14, to - range - 14).c_str(), nullptr);
        const double high = std::strtod(message.substr(to + 4).c_str(), nullptr);
        const bool whole = option != nullptr && option->get_type_name().find("INT") != std::string::npos;
        const auto number = [whole](double x) {
          return whole && std::abs(x) < 1e15 ? std::to_string(static_cast<long long>(x)) : detail::format_number(x);
        };
        return name + " " + detail::quoted(value) + ": give " + (whole ? "a whole number" : "a number") + " from " + number(low) +
               " to " + number(high);
      }
      const std::size_t converted = message.find(" could not be converted");
      if (converted != std::string::npos) {
        const std::string value = message.substr(6, converted - 6);
        return name + " " + detail::quoted(value) + ": expected " + expected_kind(option, value);
      }
      const std::size_t sep = message.find(": ");
      if (sep != std::string::npos) {
        return name + " " + detail::quoted(message.substr(6, sep - 6)) + ": " + message.substr(sep + 2);
      }
    }
    if (!name.empty() && starts_with(message, "\"")) {
      // A validator's own "\"value\": why": one house form, `--x "value": why`.
      const std::size_t close = message.find("\": ", 1);
      if (close != std::string::npos) {
        const std::string value = message.substr(1, close - 1);
        return name + " " + detail::quoted(value) + ": " + with_suggestion(message.substr(close + 3), value);
      }
    }
    if (!name.empty()) {
      const std::vector<std::string> given = typed_values(name);
      const std::string value = given.empty() ? std::string() : given.back();
      if (!value.empty() && message.find(value) == std::string::npos && message.find("standard input") == std::string::npos) {
        return name + " " + detail::quoted(value) + ": " + scrub_identifiers(message, app);
      }
      return name + ": " + scrub_identifiers(message, app);
    }
    return scrub_identifiers(message, app);
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    if (text == "A subcommand is required" && app != nullptr) {
      std::vector<std::string> names;
      for (const CLI::App* sub : app->get_subcommands({})) names.push_back(sub->get_name());
      std::string list;
      for (std::size_t i = 0; i < names.size(); ++i) list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
      return "give a subcommand: " + list;
    }
    const std::size_t is = text.find(" is required");
    if (is != std::string::npos && starts_with(text, "--")) {
      const std::string name = text.substr(0, is);
      const std::string d = description(option_named(name));
      return name + " is required" + (d.empty() ? std::string() : ": " + d);
    }
    return scrub_identifiers(text, app);
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&e) != nullptr) {
    const std::size_t at = text.find(" excludes ");
    if (at != std::string::npos) return "give " + text.substr(0, at) + " or " + text.substr(at + 10) + ", not both";
  }
  if (dynamic_cast<const CLI::RequiresError*>(&e) != nullptr) {
    const std::size_t at = text.find(" requires ");
    if (at != std::string::npos) return text.substr(0, at) + " needs " + text.substr(at + 10) + " too";
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::size_t colon = text.find(": ");
    const std::string extras = colon == std::string::npos ? std::string() : text.substr(colon + 2);
    return "unexpected " + std::string(text.find("arguments") != std::string::npos ? "arguments " : "argument ") +
           detail::quoted(extras) + ": this command takes options only (--name VALUE), and a value with spaces needs quotes";
  }
  return scrub_identifiers(text, app);
}

}  // namespace spotdnn::cli
