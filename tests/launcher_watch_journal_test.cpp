// SPDX-License-Identifier: MIT
// The journal of `spotdnn watch` on disk (append, read back, torn and malformed lines, hostile paths) and
// the progress file the controller reads.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <spotdnn/launcher/controller.hpp>
#include <spotdnn/launcher/run_progress_json.hpp>
#include <spotdnn/launcher/watch_journal.hpp>
#include <spotdnn/planner.hpp>

namespace {

using namespace spotdnn;
using namespace spotdnn::launcher;

constexpr const char* kRun = "20261127-033000-0a1b2c";

/// A fresh path in the build's test directory (removed first).
std::string scratch(const std::string& name) {
  const std::string path = std::string(SPOTDNN_TEST_BINARY_DIR) + "/watch_journal_" + std::to_string(::getpid()) + "_" + name;
  std::remove(path.c_str());
  return path;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string record_line(int seq, const std::string& event, const std::string& extra = "") {
  return R"({"kind":"spotdnn.watch_journal","schema_version":1,"seq":)" + std::to_string(seq) +
         R"(,"time_unix_s":1800000000.5,"event":")" + event + "\"" + extra + "}";
}

ControllerSettings settings() {
  ControllerSettings s;
  s.run_id = kRun;
  s.policy = WatchPolicy::same_type;
  s.start_unix_s = 1.8e9;
  s.deadline_s = 3600;
  s.target_loss = 0.8;
  s.planned = {{"p3.2xlarge", 2, 1, Market::spot}};
  return s;
}

RunInstance instance(const std::string& id, const std::string& role, const std::string& type) {
  RunInstance i;
  i.instance_id = id;
  i.role = role;
  i.type = type;
  i.state = "running";
  return i;
}

}  // namespace

TEST_CASE("a missing journal reads as empty, and appended records read back in order") {
  const std::string path = scratch("roundtrip.jsonl");
  std::string warning = "stale";
  CHECK(read_watch_journal(path, &warning).empty());
  CHECK(warning.empty());

  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  Controller writer(model, settings());
  append_watch_journal(path, writer.start_record(1.8e9));
  const ControllerDecision d =
      writer.decide(1.8e9 + 60, {instance("i-ps", "ps", "m5.xlarge"), instance("i-1", "worker", "p3.2xlarge")}, std::nullopt, 0);
  REQUIRE(d.launches.size() == 1);
  for (const auto& r : d.journal) append_watch_journal(path, r);
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);

  const std::vector<nlohmann::json> records = read_watch_journal(path, &warning);
  CHECK(warning.empty());
  REQUIRE(records.size() == 2);
  CHECK(records[0]["event"] == "start");
  CHECK(records[1]["event"] == "launch");
  CHECK(records[1]["token"] == std::string(kRun) + "-1");

  // A controller resumed from the file finds the launch without an outcome.
  Controller resumed(model, settings());
  resumed.resume(records);
  REQUIRE(resumed.unfinished_launches().size() == 1);
  CHECK(resumed.unfinished_launches()[0].token == d.launches[0].token);
  std::remove(path.c_str());
}

TEST_CASE("a torn last line (a controller that crashed while writing) is dropped with a warning") {
  const std::string path = scratch("torn.jsonl");
  write_text(path, record_line(0, "start") + "\n" + record_line(1, "note", R"(,"topic":"x","text":"y")") + "\n" +
                       R"({"kind":"spotdnn.watch_journal","sch)");
  std::string warning;
  const std::vector<nlohmann::json> records = read_watch_journal(path, &warning);
  CHECK(records.size() == 2);
  CHECK(warning.find("journal line 3") != std::string::npos);
  CHECK(warning.find("dropped") != std::string::npos);
  // Even a complete record without its newline is a torn write.
  write_text(path, record_line(0, "start") + "\n" + record_line(1, "stop"));
  CHECK(read_watch_journal(path, &warning).size() == 1);
  CHECK_FALSE(warning.empty());
  std::remove(path.c_str());
}

TEST_CASE("an append after a torn last line cuts the fragment off, so the journal reads whole again") {
  const std::string path = scratch("torn-append.jsonl");
  const std::string whole = record_line(0, "start") + "\n" + record_line(1, "note", R"(,"topic":"x","text":"y")") + "\n";
  // A fragment longer than the 4096-byte blocks the cut reads backwards in.
  write_text(path, whole + R"({"kind":"spotdnn.watch_journal","text":")" + std::string(9000, 'x'));
  std::string warning;
  REQUIRE(read_watch_journal(path, &warning).size() == 2);
  REQUIRE_FALSE(warning.empty());
  append_watch_journal(path, nlohmann::ordered_json::parse(record_line(2, "note", R"(,"topic":"z","text":"w")")));
  const std::vector<nlohmann::json> records = read_watch_journal(path, &warning);
  CHECK(warning.empty());
  REQUIRE(records.size() == 3);
  CHECK(records[2]["topic"] == "z");
  // A journal that is one torn line only: the append leaves just the new record.
  write_text(path, R"({"kind":"spotdnn.wat)");
  append_watch_journal(path, nlohmann::ordered_json::parse(record_line(0, "start")));
  CHECK(read_watch_journal(path, &warning).size() == 1);
  CHECK(warning.empty());
  std::remove(path.c_str());
}

TEST_CASE("malformed journal lines are refused naming the line and the field") {
  const std::string path = scratch("malformed.jsonl");
  const std::string start = record_line(0, "start") + "\n";
  const auto refused = [&](const std::string& text, const char* where) {
    write_text(path, text);
    CHECK_THROWS_WITH_AS((void)read_watch_journal(path), doctest::Contains(where), invalid_argument);
  };
  refused(start + "not json\n", "journal line 2");
  refused(start + "\n", "journal line 2");
  refused(start + "[1,2]\n", "journal line 2");
  refused(start + record_line(2, "note") + "\n", "journal line 2.seq");
  refused(start + record_line(1, "reboot") + "\n", "journal line 2.event");
  refused(record_line(0, "start").replace(9, 21, "spotdnn.watch_journaX") + "\n", "journal line 1.kind");
  refused(start + R"({"kind":"spotdnn.watch_journal","schema_version":2,"seq":1,"time_unix_s":1,"event":"note"})" "\n",
          "journal line 2.schema_version");
  refused(start + R"({"kind":"spotdnn.watch_journal","schema_version":1,"seq":1,"time_unix_s":-5,"event":"note"})" "\n",
          "journal line 2.time_unix_s");
  refused(start + R"({"kind":"spotdnn.watch_journal","kind":"spotdnn.watch_journal","schema_version":1,"seq":1,"time_unix_s":1,"event":"note"})" "\n",
          "duplicate key");
  refused(start + std::string(200, '[') + std::string(200, ']') + "\n", "nesting deeper");
  refused(start + record_line(1, "note", ",\"text\":\"" + std::string(70000, 'a') + "\"") + "\n", "at most 65536 bytes");
  refused(start + record_line(1, "note", ",\"text\":\"\xff\"") + "\n", "journal line 2");
  std::remove(path.c_str());
}

TEST_CASE("the journal refuses a symbolic link or a path that is not a regular file") {
  const std::string target = scratch("target.jsonl");
  const std::string link = scratch("link.jsonl");
  write_text(target, "");
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  CHECK_THROWS_WITH_AS(append_watch_journal(link, nlohmann::ordered_json::object()), doctest::Contains("symbolic link"), invalid_argument);
  CHECK_THROWS_WITH_AS((void)read_watch_journal(link), doctest::Contains("symbolic link"), invalid_argument);
  CHECK_THROWS_WITH_AS(append_watch_journal(std::string(SPOTDNN_TEST_BINARY_DIR), nlohmann::ordered_json::object()),
                       doctest::Contains("path"), spotdnn::invalid_argument);
  CHECK_THROWS_AS((void)read_watch_journal(std::string(SPOTDNN_TEST_BINARY_DIR)), invalid_argument);
  std::remove(link.c_str());
  std::remove(target.c_str());
}

TEST_CASE("the progress file reads back, with a null loss meaning nothing measured yet") {
  RunProgress p;
  p.iteration = 1200;
  p.loss = 2.31;
  p.time_unix_s = 1.8e9 + 600;
  p.run_id = kRun;
  const RunProgress back = parse_run_progress(to_json(p).dump(), "s3://bucket/run/progress.json");
  CHECK(back.iteration == 1200);
  CHECK(back.loss == 2.31);
  CHECK(back.time_unix_s == 1.8e9 + 600);
  CHECK(back.run_id == kRun);
  const RunProgress fresh = parse_run_progress(
      R"({"kind":"spotdnn.progress","schema_version":1,"run_id":"20261127-033000-0a1b2c","iteration":0,"loss":null,"time_unix_s":5})", "p");
  CHECK(std::isinf(fresh.loss));
}

TEST_CASE("a malformed, hostile or huge progress file is refused naming the key") {
  const std::string good_head = R"({"kind":"spotdnn.progress","schema_version":1,"run_id":"20261127-033000-0a1b2c",)";
  const auto refused = [](const std::string& text, const char* where) {
    CHECK_THROWS_WITH_AS((void)parse_run_progress(text, "progress.json"), doctest::Contains(where), invalid_argument);
  };
  refused(good_head + R"("iteration":1,"loss":-1,"time_unix_s":5})", "progress.loss");
  refused(good_head + R"("iteration":-1,"loss":1,"time_unix_s":5})", "progress.iteration");
  refused(good_head + R"("iteration":1,"loss":"1","time_unix_s":5})", "progress.loss");
  refused(good_head + R"("iteration":1,"loss":1})", "progress.time_unix_s");
  refused(good_head + R"("iteration":1,"loss":1,"time_unix_s":5,"extra":0})", "progress.extra");
  refused(R"({"kind":"spotdnn.plan","schema_version":1,"run_id":"20261127-033000-0a1b2c","iteration":1,"loss":1,"time_unix_s":5})",
          "progress.kind");
  refused(R"({"kind":"spotdnn.progress","schema_version":1,"run_id":"*","iteration":1,"loss":1,"time_unix_s":5})", "progress.run_id");
  refused(good_head + R"("iteration":1,"loss":1e999,"time_unix_s":5})", "progress.json");
  refused(std::string(70000, ' ') + "{}", "at most 65536 bytes");
  refused("[1]", "progress");
}
