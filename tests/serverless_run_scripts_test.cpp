// SPDX-License-Identifier: MIT
// The status and teardown scripts of serverless runs (launcher/serverless_run_scripts.hpp): the golden
// texts, the run ids and configurations they refuse, bash -n and shellcheck, and the scripts run with a
// stand-in aws CLI that holds Lambda functions and S3 buckets: what status lists, that teardown deletes the
// run's tagged functions and bucket and nothing else (another run's function, a function or bucket of the
// run's name with another tag or none), that a second teardown finds nothing, and the failures it reports.
// Nothing here talks to AWS or a fake of it (moto: moto_serverless_runs_test.cpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <spotdnn/launcher/launch_plan_json.hpp>
#include <spotdnn/launcher/serverless_run_scripts.hpp>

#include "support/error_of.hpp"
#include "support/launcher_fixtures.hpp"

using namespace spotdnn;
using launcher::AwsConfig;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

const std::string& kRun = test::kExampleRunId;
const std::string kOtherRun = "20260301-130000-ffff00";

/// A serverless-only configuration (region and serverless object; the tags do not reach these scripts).
AwsConfig serverless_config() {
  AwsConfig c;
  c.region = "us-east-1";
  launcher::ServerlessConfig s;
  s.image_uri = "123456789012.dkr.ecr.us-east-1.amazonaws.com/fasdl:latest";
  s.role_arn = "arn:aws:iam::123456789012:role/fasdl";
  s.bucket_prefix = "team-fasdl";
  c.serverless = s;
  c.tags = {{"Project", "it's \"q\" $(touch PWNED)"}};
  return c;
}

/// Compares `text` with tests/golden/`name`; SPOTDNN_UPDATE_GOLDEN=1 rewrites the file first.
void check_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/golden/" + name;
  if (std::getenv("SPOTDNN_UPDATE_GOLDEN")) test::write_text(path, text);
  INFO("golden file ", path, " (regenerate with SPOTDNN_UPDATE_GOLDEN=1 after reviewing the difference)");
  CHECK(text == test::read_text(path));
}

/// bash -n and shellcheck (all severities) on `script`, written to `dir`/`name`.
void check_script(const test::TempDir& dir, const std::string& name, const std::string& script) {
  const std::string path = dir / name;
  test::write_text(path, script);
  CHECK_MESSAGE(test::run_bash("bash -n " + launcher::shell_quote(path)) == 0, name);
  const std::string out = dir / (name + ".shellcheck");
  const int rc = test::run_bash("shellcheck " + launcher::shell_quote(path) + " >" + launcher::shell_quote(out) + " 2>&1");
  INFO(name, ": ", test::read_text(out));
  CHECK(rc == 0);
}

/// Writes `dir`/aws: a stand-in aws CLI over `dir`/state.json ({"functions": {NAME: {"tags", "memory",
/// "timeout", "state", "modified"}}, "buckets": {NAME: {"tags" (null: none), "objects", "bytes",
/// "forbidden", "sticky"}}, "fail_delete": [NAME]}) answering as `--output text` would. It logs each call
/// as a JSON array to calls.jsonl. list-functions ignores --query and lists every function, two per line
/// (as pages); get-function prints the row the scripts' query selects; a sticky bucket keeps its objects
/// (as a versioned one would) and so cannot be deleted.
void write_stand_in(const test::TempDir& dir, const json& state) {
  test::write_text(dir / "state.json", state.dump(2));
  const std::string path = dir / "aws";
  test::write_text(path, R"sh(#!/bin/bash
exec /usr/bin/python3 - "$(dirname "$0")" "$@" <<'PY'
import json, sys
here, args = sys.argv[1], sys.argv[2:]
with open(here + "/calls.jsonl", "a") as log:
    log.write(json.dumps(args) + "\n")
with open(here + "/state.json") as f:
    state = json.load(f)
def opt(name):
    return args[args.index(name) + 1] if name in args else None
def error(code, op, text):
    sys.stderr.write("\nAn error occurred (%s) when calling the %s operation: %s\n" % (code, op, text))
    sys.exit(254)
def save():
    with open(here + "/state.json", "w") as f:
        json.dump(state, f)
at = next(i for i, a in enumerate(args) if a in ("lambda", "s3api", "s3"))
service, op = args[at], args[at + 1]
functions, buckets = state["functions"], state["buckets"]
if (service, op) == ("lambda", "list-functions"):
    names = list(functions)
    for i in range(0, len(names), 2):
        print("\t".join(names[i:i + 2]))
elif (service, op) == ("lambda", "get-function"):
    f = functions.get(opt("--function-name"))
    if f is None:
        error("ResourceNotFoundException", "GetFunction", "Function not found")
    tags = f.get("tags") or {}
    row = [tags.get("spotdnn:run"), f["memory"], f["timeout"], f["state"], f["modified"], tags.get("spotdnn:role")]
    print("\t".join("None" if v is None else str(v) for v in row))
elif (service, op) == ("lambda", "delete-function"):
    name = opt("--function-name")
    if name in state.get("fail_delete", []):
        error("TooManyRequestsException", "DeleteFunction", "Rate exceeded")
    if name not in functions:
        error("ResourceNotFoundException", "DeleteFunction", "Function not found")
    del functions[name]
    save()
elif service == "s3api":
    b = buckets.get(opt("--bucket"))
    if op == "head-bucket":
        if b is None:
            error("404", "HeadBucket", "Not Found")
        if b.get("forbidden"):
            error("403", "HeadBucket", "Forbidden")
    elif op == "get-bucket-tagging":
        if b.get("tags") is None:
            error("NoSuchTagSet", "GetBucketTagging", "The TagSet does not exist")
        print(b["tags"].get("spotdnn:run", "None"))
    elif op == "list-objects-v2":
        print("%d\t%d" % (b["objects"], b["bytes"]))
    elif op == "delete-bucket":
        if b["objects"]:
            error("BucketNotEmpty", "DeleteBucket", "The bucket you tried to delete is not empty")
        del buckets[opt("--bucket")]
        save()
    else:
        error("InvalidAction", op, "not in the stand-in")
elif (service, op) == ("s3", "rm"):
    b = buckets[args[at + 2][len("s3://"):]]
    assert "--recursive" in args
    if not b.get("sticky"):
        b["objects"], b["bytes"] = 0, 0
        save()
else:
    error("InvalidAction", op, "not in the stand-in")
PY
)sh");
  REQUIRE(test::run_bash("chmod +x " + launcher::shell_quote(path)) == 0);
}

json function(const std::string& run, const std::string& role = "worker") {
  json f = {{"memory", 1536}, {"timeout", 900}, {"state", "Active"}, {"modified", "2026-03-01T12:00:05.000+0000"}};
  f["tags"] = json::object();
  if (!run.empty()) f["tags"]["spotdnn:run"] = run;
  f["tags"]["spotdnn:role"] = role;
  return f;
}

json bucket(const std::string& run, int objects = 0, int bytes = 0) {
  json b = {{"objects", objects}, {"bytes", bytes}};
  b["tags"] = run.empty() ? json(nullptr) : json{{"spotdnn:run", run}, {"spotdnn:role", "bucket"}};
  return b;
}

std::string fn(const std::string& run, const std::string& rank) { return "spotdnn-" + run + "-" + rank; }

/// Run kRun: ranks 0 and 1 aggregate, 2 and 10 do not (listed out of order), a bucket of 3 objects;
/// next to it another run's function and bucket, names that only look like the run's, and a function of
/// the run's name that another run's tag claims.
json two_runs() {
  json s;
  s["functions"] = json::object();
  s["functions"][fn(kRun, "10")] = function(kRun);
  s["functions"][fn(kRun, "1")] = function(kRun, "aggregator");
  s["functions"][fn(kOtherRun, "0")] = function(kOtherRun, "aggregator");
  s["functions"][fn(kRun, "0")] = function(kRun, "aggregator");
  s["functions"][fn(kRun, "2")] = function(kRun);
  s["functions"][fn(kRun, "01")] = function(kRun);      // not a rank spotdnn writes
  s["functions"][fn(kRun, "3-x")] = function(kRun);     // not a rank
  s["functions"]["x" + fn(kRun, "4")] = function(kRun);  // another name
  s["functions"][fn(kRun, "5")] = function(kOtherRun);   // the run's name, another run's tag
  s["functions"][fn(kRun, "6")] = function("");          // the run's name, no run tag
  s["functions"][fn(kRun, "1")]["state"] = "Pending";
  s["functions"][fn(kRun, "2")]["modified"] = "$(touch PWNED)";
  s["functions"][fn(kRun, "10")]["state"] = "`touch PWNED`";
  s["buckets"] = json::object();
  s["buckets"]["team-fasdl-" + kRun] = bucket(kRun, 3, 4096);
  s["buckets"]["team-fasdl-" + kOtherRun] = bucket(kOtherRun, 2, 10);
  return s;
}

struct ScriptRun {
  int exit_code = -1;
  std::string out, err;
};

ScriptRun run_script(const test::TempDir& dir, const std::string& name, const std::string& script) {
  test::write_text(dir / name, script);
  const std::string command = "cd " + launcher::shell_quote(dir.path().string()) +
                              " && timeout 60 env -i PATH=/usr/bin:/bin SPOTDNN_AWS=" + launcher::shell_quote(dir / "aws") +
                              " AWS_ENDPOINT_URL=http://127.0.0.1:9 bash " + name + " >out.txt 2>err.txt";
  ScriptRun r;
  r.exit_code = test::run_bash(command);
  r.out = test::read_text(dir / "out.txt");
  r.err = test::read_text(dir / "err.txt");
  return r;
}

std::vector<json> logged_calls(const test::TempDir& dir) {
  std::vector<json> out;
  std::istringstream in(test::read_text(dir / "calls.jsonl"));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

/// The value after `option` in a logged call ("" when absent).
std::string option_of(const json& call, const std::string& option) {
  for (std::size_t i = 0; i + 1 < call.size(); ++i) {
    if (call[i] == option) return call[i + 1].get<std::string>();
  }
  return "";
}

/// The calls whose arguments include `service` then `operation`.
std::vector<json> calls_to(const std::vector<json>& calls, const std::string& service, const std::string& operation) {
  std::vector<json> out;
  for (const json& call : calls) {
    for (std::size_t i = 0; i + 1 < call.size(); ++i) {
      if (call[i] == service && call[i + 1] == operation) {
        out.push_back(call);
        break;
      }
    }
  }
  return out;
}

std::set<std::string> names_in(const json& object) {
  std::set<std::string> out;
  for (auto it = object.begin(); it != object.end(); ++it) out.insert(it.key());
  return out;
}

/// The whitespace-separated words of each line of `text`.
std::vector<std::vector<std::string>> words_of(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    out.emplace_back();
    for (std::string word; in >> word;) out.back().push_back(word);
  }
  return out;
}

}  // namespace

TEST_CASE("the serverless status and teardown scripts match the golden texts and name the run's functions and bucket") {
  const std::string status = launcher::serverless_status_script(kRun, serverless_config());
  const std::string teardown = launcher::serverless_teardown_script(kRun, serverless_config());
  check_golden("serverless_status.sh", status);
  check_golden("serverless_teardown.sh", teardown);
  for (const std::string* script : {&status, &teardown}) {
    CHECK(contains(*script, "readonly REGION='us-east-1'\n"));
    CHECK(contains(*script, "readonly RUN_ID='" + kRun + "'\n"));
    CHECK(contains(*script, "[[ $RUN_ID =~ " + std::string(launcher::kRunIdRegex) + " ]]"));
    CHECK(contains(*script, "readonly BUCKET='team-fasdl-'\"$RUN_ID\"\n"));
    CHECK(contains(*script, "readonly FUNCTION_PREFIX='spotdnn-'\"$RUN_ID-\"\n"));
    CHECK_FALSE(contains(*script, "create-function"));
    CHECK_FALSE(contains(*script, "Project"));  // the user's tags select nothing
    CHECK_FALSE(contains(*script, "eval "));
  }
  CHECK_FALSE(contains(status, "delete-"));
  CHECK_FALSE(contains(status, "s3 rm"));
  CHECK(count_of(teardown, "lambda delete-function") == 1);
  CHECK(count_of(teardown, "s3api delete-bucket") == 1);
  CHECK(count_of(teardown, "is_this_run \"$run\" \"the function $name\" || continue") == 1);
}

TEST_CASE("the serverless run scripts refuse a run id that is not one and a configuration without the serverless object") {
  for (const std::string& bad : {std::string("*"), std::string("20260301-120000-*"), std::string("20260301-120000-0a1b2c,x"),
                                 std::string("20260301-120000-0A1B2C"), std::string("")}) {
    CAPTURE(bad);
    CHECK(contains(test::error_of([&] { (void)launcher::serverless_status_script(bad, serverless_config()); }),
                   "serverless_status_script: --run = "));
    CHECK(contains(test::error_of([&] { (void)launcher::serverless_teardown_script(bad, serverless_config()); }),
                   "serverless_teardown_script: --run = "));
  }
  AwsConfig spot_only = test::example_config();
  CHECK(contains(test::error_of([&] { (void)launcher::serverless_teardown_script(kRun, spot_only); }), "serverless = missing"));
  AwsConfig bad_prefix = serverless_config();
  bad_prefix.serverless->bucket_prefix = "team'$(touch PWNED)";
  CHECK(contains(test::error_of([&] { (void)launcher::serverless_status_script(kRun, bad_prefix); }), "serverless.bucket_prefix = "));
  AwsConfig bad_region = serverless_config();
  bad_region.region = "us-east-1; touch PWNED";
  CHECK(contains(test::error_of([&] { (void)launcher::serverless_teardown_script(kRun, bad_region); }), "region = "));
}

TEST_CASE("every serverless status and teardown script passes bash -n and shellcheck") {
  test::TempDir dir;
  AwsConfig frankfurt = serverless_config();
  frankfurt.region = "eu-central-1";
  frankfurt.serverless->image_uri = "123456789012.dkr.ecr.eu-central-1.amazonaws.com/fasdl:latest";
  frankfurt.serverless->bucket_prefix = std::string(40, 'b');
  int n = 0;
  for (const AwsConfig& config : {serverless_config(), frankfurt}) {
    ++n;
    check_script(dir, "status-" + std::to_string(n) + ".sh", launcher::serverless_status_script(kRun, config));
    check_script(dir, "teardown-" + std::to_string(n) + ".sh", launcher::serverless_teardown_script(kRun, config));
  }
}

TEST_CASE("the serverless status script lists the run's tagged functions by rank and its bucket, and nothing else") {
  test::TempDir dir;
  write_stand_in(dir, two_runs());
  const ScriptRun r = run_script(dir, "status.sh", launcher::serverless_status_script(kRun, serverless_config()));
  INFO("stderr: ", r.err);
  INFO("stdout: ", r.out);
  REQUIRE(r.exit_code == 0);
  using Row = std::vector<std::string>;
  const std::string modified = "2026-03-01T12:00:05.000+0000";
  CHECK(words_of(r.out) ==
        std::vector<Row>{{"RANK", "ROLE", "FUNCTION", "MEMORY_MB", "TIMEOUT_S", "STATE", "LAST_MODIFIED"},
                         {"0", "aggregator", fn(kRun, "0"), "1536", "900", "Active", modified},
                         {"1", "aggregator", fn(kRun, "1"), "1536", "900", "Pending", modified},
                         {"2", "worker", fn(kRun, "2"), "1536", "900", "Active", "-"},
                         {"10", "worker", fn(kRun, "10"), "1536", "900", "?", modified},
                         {"BUCKET", "team-fasdl-" + kRun + ":", "3", "objects,", "4096", "bytes"},
                         {"spotdnn", "run", kRun + ":", "4", "functions", "(1", "Pending,", "2", "Active,", "1", "?),", "bucket",
                          "team-fasdl-" + kRun, "(3", "objects,", "4096", "bytes)"}});
  CHECK(contains(r.err, fn(kRun, "5") + " is not tagged spotdnn:run=" + kRun + " (spotdnn:run: " + kOtherRun + ")"));
  CHECK(contains(r.err, fn(kRun, "6") + " is not tagged spotdnn:run=" + kRun + " (spotdnn:run: None)"));
  CHECK(test::pwned_files(dir.path()).empty());

  const std::vector<json> calls = logged_calls(dir);
  for (const json& call : calls) {
    CHECK(option_of(call, "--region") == "us-east-1");
    CHECK(option_of(call, "--endpoint-url") == "http://127.0.0.1:9");
    CHECK(option_of(call, "--output") == "text");
  }
  REQUIRE(calls_to(calls, "lambda", "list-functions").size() == 1);
  CHECK(option_of(calls_to(calls, "lambda", "list-functions")[0], "--query") ==
        "Functions[?starts_with(FunctionName, 'spotdnn-" + kRun + "-')].FunctionName");
  std::set<std::string> read;
  for (const json& call : calls_to(calls, "lambda", "get-function")) read.insert(option_of(call, "--function-name"));
  CHECK(read == std::set<std::string>{fn(kRun, "0"), fn(kRun, "1"), fn(kRun, "2"), fn(kRun, "10"), fn(kRun, "5"), fn(kRun, "6")});
  for (const json& call : calls_to(calls, "s3api", "head-bucket")) CHECK(option_of(call, "--bucket") == "team-fasdl-" + kRun);
  CHECK(calls_to(calls, "lambda", "delete-function").empty());
  CHECK(calls_to(calls, "s3api", "delete-bucket").empty());
}

TEST_CASE("the serverless status script exits 3 for a run without functions or bucket, and lists a bucket alone") {
  SUBCASE("nothing") {
    test::TempDir dir;
    json state = two_runs();
    state["buckets"].erase("team-fasdl-" + kRun);
    for (const std::string rank : {"0", "1", "2", "10"}) state["functions"].erase(fn(kRun, rank));
    write_stand_in(dir, state);
    const ScriptRun r = run_script(dir, "status.sh", launcher::serverless_status_script(kRun, serverless_config()));
    CHECK(r.exit_code == 3);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "no functions or bucket for run " + kRun));
  }
  SUBCASE("only the bucket") {
    test::TempDir dir;
    json state;
    state["functions"] = json::object();
    state["buckets"] = {{"team-fasdl-" + kRun, bucket(kRun)}};
    write_stand_in(dir, state);
    const ScriptRun r = run_script(dir, "status.sh", launcher::serverless_status_script(kRun, serverless_config()));
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "BUCKET team-fasdl-" + kRun + ": 0 objects, 0 bytes\nspotdnn run " + kRun + ": 0 functions, bucket team-fasdl-" +
                       kRun + " (0 objects, 0 bytes)\n");
  }
  SUBCASE("a bucket of the run's name without the run's tag is not the run's") {
    test::TempDir dir;
    json state;
    state["functions"] = json::object();
    state["buckets"] = {{"team-fasdl-" + kRun, bucket("")}};
    write_stand_in(dir, state);
    const ScriptRun r = run_script(dir, "status.sh", launcher::serverless_status_script(kRun, serverless_config()));
    CHECK(r.exit_code == 3);
    CHECK(contains(r.err, "the bucket team-fasdl-" + kRun + " is not tagged spotdnn:run=" + kRun + " (spotdnn:run: untagged)"));
  }
  SUBCASE("an unreadable bucket: exit 1") {
    test::TempDir dir;
    json state = two_runs();
    state["buckets"]["team-fasdl-" + kRun]["forbidden"] = true;
    write_stand_in(dir, state);
    const ScriptRun r = run_script(dir, "status.sh", launcher::serverless_status_script(kRun, serverless_config()));
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "cannot read the bucket team-fasdl-" + kRun + ": An error occurred (403)"));
    CHECK(contains(r.out, "bucket team-fasdl-" + kRun + " unreadable\n"));
  }
}

TEST_CASE("serverless teardown deletes the run's tagged functions and bucket only, and a second teardown finds nothing") {
  test::TempDir dir;
  const json before = two_runs();
  write_stand_in(dir, before);
  const std::string script = launcher::serverless_teardown_script(kRun, serverless_config());
  const ScriptRun r = run_script(dir, "teardown.sh", script);
  INFO("stderr: ", r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "deleted function " + fn(kRun, "0") + "\ndeleted function " + fn(kRun, "1") + "\ndeleted function " + fn(kRun, "2") +
                     "\ndeleted function " + fn(kRun, "10") + "\ndeleted bucket team-fasdl-" + kRun +
                     " (3 objects, 4096 bytes)\nspotdnn run " + kRun + ": deleted 4 functions and 1 bucket\n");
  CHECK(contains(r.err, fn(kRun, "5") + " is not tagged spotdnn:run=" + kRun));
  CHECK(contains(r.err, fn(kRun, "6") + " is not tagged spotdnn:run=" + kRun));

  const json after = json::parse(test::read_text(dir / "state.json"));
  CHECK(names_in(after["functions"]) == std::set<std::string>{fn(kOtherRun, "0"), fn(kRun, "01"), fn(kRun, "3-x"), "x" + fn(kRun, "4"),
                                                              fn(kRun, "5"), fn(kRun, "6")});
  CHECK(names_in(after["buckets"]) == std::set<std::string>{"team-fasdl-" + kOtherRun});
  CHECK(after["buckets"]["team-fasdl-" + kOtherRun]["objects"] == 2);

  const std::vector<json> calls = logged_calls(dir);
  std::set<std::string> deleted;
  for (const json& call : calls_to(calls, "lambda", "delete-function")) deleted.insert(option_of(call, "--function-name"));
  CHECK(deleted == std::set<std::string>{fn(kRun, "0"), fn(kRun, "1"), fn(kRun, "2"), fn(kRun, "10")});
  const auto removed = calls_to(calls, "s3", "rm");
  REQUIRE(removed.size() == 1);
  CHECK(removed[0][removed[0].size() - 3] == "s3://team-fasdl-" + kRun);
  const auto deleted_buckets = calls_to(calls, "s3api", "delete-bucket");
  REQUIRE(deleted_buckets.size() == 1);
  CHECK(option_of(deleted_buckets[0], "--bucket") == "team-fasdl-" + kRun);
  // The functions go first: nothing writes to the bucket while it is emptied.
  std::size_t last_function = 0, first_bucket = calls.size();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (!calls_to({calls[i]}, "lambda", "delete-function").empty()) last_function = i;
    if (!calls_to({calls[i]}, "s3", "rm").empty() && i < first_bucket) first_bucket = i;
  }
  CHECK(last_function < first_bucket);
  CHECK(test::pwned_files(dir.path()).empty());

  const ScriptRun again = run_script(dir, "teardown.sh", script);
  CHECK(again.exit_code == 3);
  CHECK(again.out.empty());
  CHECK(contains(again.err, "no functions or bucket of run " + kRun + " to delete; nothing deleted"));
  CHECK(calls_to(logged_calls(dir), "lambda", "delete-function").size() == 4);
  CHECK(json::parse(test::read_text(dir / "state.json")) == after);
}

TEST_CASE("serverless teardown of one run leaves another run whole") {
  test::TempDir dir;
  write_stand_in(dir, two_runs());
  const ScriptRun r = run_script(dir, "teardown.sh", launcher::serverless_teardown_script(kOtherRun, serverless_config()));
  INFO("stderr: ", r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "deleted function " + fn(kOtherRun, "0") + "\ndeleted bucket team-fasdl-" + kOtherRun +
                     " (2 objects, 10 bytes)\nspotdnn run " + kOtherRun + ": deleted 1 functions and 1 bucket\n");
  const json after = json::parse(test::read_text(dir / "state.json"));
  CHECK(after["functions"].size() == two_runs()["functions"].size() - 1);
  CHECK(after["functions"].contains(fn(kRun, "5")));  // tagged with kOtherRun, but not named as its function
  CHECK(after["buckets"]["team-fasdl-" + kRun]["objects"] == 3);
}

TEST_CASE("serverless teardown reports what it could not delete and exits 1, after deleting the rest") {
  SUBCASE("a function") {
    test::TempDir dir;
    json state = two_runs();
    state["fail_delete"] = {fn(kRun, "1")};
    write_stand_in(dir, state);
    const ScriptRun r = run_script(dir, "teardown.sh", launcher::serverless_teardown_script(kRun, serverless_config()));
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "could not delete the function " + fn(kRun, "1")));
    CHECK(contains(r.out, "deleted 3 functions and 1 bucket"));
    const json after = json::parse(test::read_text(dir / "state.json"));
    CHECK(after["functions"].contains(fn(kRun, "1")));
    CHECK_FALSE(after["functions"].contains(fn(kRun, "10")));
  }
  SUBCASE("a bucket that keeps its objects") {
    test::TempDir dir;
    json state = two_runs();
    state["buckets"]["team-fasdl-" + kRun]["sticky"] = true;
    write_stand_in(dir, state);
    const ScriptRun r = run_script(dir, "teardown.sh", launcher::serverless_teardown_script(kRun, serverless_config()));
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "could not empty and delete the bucket team-fasdl-" + kRun));
    CHECK(contains(r.out, "deleted 4 functions and 0 bucket"));
    CHECK(json::parse(test::read_text(dir / "state.json"))["buckets"].contains("team-fasdl-" + kRun));
  }
  SUBCASE("a bucket it may not read, and a bucket of the run's name without its tag") {
    for (const bool forbidden : {true, false}) {
      CAPTURE(forbidden);
      test::TempDir dir;
      json state = two_runs();
      if (forbidden) {
        state["buckets"]["team-fasdl-" + kRun]["forbidden"] = true;
      } else {
        state["buckets"]["team-fasdl-" + kRun]["tags"] = nullptr;
      }
      for (const std::string rank : {"0", "1", "2", "10"}) state["functions"].erase(fn(kRun, rank));
      write_stand_in(dir, state);
      const ScriptRun r = run_script(dir, "teardown.sh", launcher::serverless_teardown_script(kRun, serverless_config()));
      CHECK(r.exit_code == (forbidden ? 1 : 3));
      CHECK(r.out.empty());
      CHECK(calls_to(logged_calls(dir), "s3", "rm").empty());
      CHECK(calls_to(logged_calls(dir), "s3api", "delete-bucket").empty());
      CHECK(calls_to(logged_calls(dir), "lambda", "delete-function").empty());
    }
  }
}

TEST_CASE("the EC2 plan reader refuses a serverless plan document saying to add --serverless") {
  const json document = {{"kind", "spotdnn.serverless_plan"}, {"schema_version", 2}, {"status", "optimal"}, {"workers", 9}};
  CHECK(test::error_of([&] { (void)launcher::launch_plan_from_json(document); }) ==
        "launch_plan_from_json: plan.kind = \"spotdnn.serverless_plan\": a serverless plan launches AWS Lambda functions, not EC2 "
        "instances: add --serverless (spotdnn launch --serverless)");
}
