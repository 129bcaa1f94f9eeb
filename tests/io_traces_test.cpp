// SPDX-License-Identifier: MIT
// Spot trace readers (io/trace_readers.hpp): JSON series, events CSV and fleet logs become PoolTraces with
// exactly the intervals revocation/trace.hpp defines; pools come from file names through the GPU map; the
// real fixtures read with the counts a separate script computed; hostile input is refused with one line
// that names the file, the place and the value.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <spotdnn/io/trace_readers.hpp>
#include <spotdnn/limits.hpp>

#include "support/error_of.hpp"

using namespace spotdnn;
using namespace std::string_literals;
namespace sio = spotdnn::io;
using test::error_of;

namespace {

const std::string kFixtures = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/traces";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// True when `text` has no byte below 0x20 and no DEL: one printable line.
bool printable_line(const std::string& text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return false;
  }
  return true;
}

sio::TraceSource source_of(TraceKind kind, int requested = 1) {
  sio::TraceSource source;
  source.kind = kind;
  source.pool = PoolId{"p3.2xlarge", "us-east-1a"};
  source.requested = requested;
  source.name = "t.json";
  return source;
}

PoolTrace series(const std::string& text, TraceKind kind = TraceKind::lifetimes, int requested = 1) {
  return sio::parse_series_trace(text, source_of(kind, requested));
}

std::string series_error(const std::string& text, TraceKind kind = TraceKind::lifetimes, int requested = 1) {
  return error_of([&] { (void)series(text, kind, requested); });
}

PoolTrace events(const std::string& text) {
  sio::TraceSource source = source_of(TraceKind::events);
  source.name = "e.csv";
  return sio::parse_events_trace(text, source);
}

std::string events_error(const std::string& text) {
  return error_of([&] { (void)events(text); });
}

std::string fleet_error(const std::string& text) {
  return error_of([&] { (void)sio::parse_fleet_trace(text, "f.csv"); });
}

struct Expected {
  double start_s, end_s;
  bool preempted, age_known;
  int slot;
};

void check_interval(const UpInterval& up, const Expected& expected) {
  CHECK(up.start_s == expected.start_s);  // exact: ticks × gap, ms / 1000, or differences of short decimals
  CHECK(up.end_s == expected.end_s);
  CHECK(up.preempted == expected.preempted);
  CHECK(up.age_known == expected.age_known);
  CHECK(up.slot == expected.slot);
}

void check_intervals(const PoolTrace& trace, const std::vector<Expected>& expected) {
  REQUIRE(trace.up.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("interval " << i);
    check_interval(trace.up[i], expected[i]);
  }
}

std::size_t count_preempted(const PoolTrace& trace) {
  std::size_t n = 0;
  for (const UpInterval& u : trace.up) n += u.preempted ? 1 : 0;
  return n;
}

std::size_t count_age_unknown(const PoolTrace& trace) {
  std::size_t n = 0;
  for (const UpInterval& u : trace.up) n += u.age_known ? 0 : 1;
  return n;
}

double total_up_s(const PoolTrace& trace) {
  double total = 0;
  for (const UpInterval& u : trace.up) total += u.end_s - u.start_s;
  return total;
}

/// A fresh path under the test's binary directory.
std::string temp_path(const std::string& name) {
  const std::string path = std::string(SPOTDNN_TEST_BINARY_DIR) + "/io_traces_" + std::to_string(::getpid()) + "_" + name;
  std::remove(path.c_str());
  return path;
}

void write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(text.data(), 1, text.size(), f) == text.size());
  std::fclose(f);
}

}  // namespace

// ---- JSON series ---------------------------------------------------------------------------------------

TEST_CASE("a lifetimes series gives one slot whose runs of 1 are lifetimes, preempted unless they reach the end") {
  const PoolTrace t = series(R"({"metadata": {"gap_seconds": 10}, "data": [1, 1, 0, 0, 1, 0, 1, 1]})");
  CHECK(t.pool == PoolId{"p3.2xlarge", "us-east-1a"});
  CHECK(t.kind == TraceKind::lifetimes);
  CHECK(t.source == "t.json");
  CHECK(t.tick_s == 10);
  CHECK(t.span_s == 80);
  CHECK(t.slots == 1);
  CHECK(t.slotted);
  CHECK(t.clock_offset_s == 0);
  CHECK(t.waits.empty());
  check_intervals(t, {{0, 20, true, false, 0}, {40, 50, true, true, 0}, {60, 80, false, true, 0}});
}

TEST_CASE("a series of only 0s has no interval, and one of only 1s one censored interval of unknown age") {
  CHECK(series(R"({"metadata": {"gap_seconds": 30}, "data": [0, 0, 0]})").up.empty());
  const PoolTrace all_up = series(R"({"metadata": {"gap_seconds": 30}, "data": [1, 1, 1]})", TraceKind::availability);
  CHECK(all_up.kind == TraceKind::availability);
  check_intervals(all_up, {{0, 90, false, false, 0}});
}

TEST_CASE("a counts series gives N slots, slot i up while the count exceeds i, ordered by start then slot") {
  const PoolTrace t = series(R"({"metadata": {"gap_seconds": 5}, "data": [2, 3, 1, 0, 3]})", TraceKind::counts, 3);
  CHECK(t.slots == 3);
  CHECK(t.span_s == 25);
  check_intervals(t, {{0, 15, true, false, 0},
                      {0, 10, true, false, 1},
                      {5, 10, true, true, 2},
                      {20, 25, false, true, 0},
                      {20, 25, false, true, 1},
                      {20, 25, false, true, 2}});
}

TEST_CASE("a counts value above the number requested is refused naming the tick and saying to give --requested") {
  const std::string e = series_error(R"({"metadata": {"gap_seconds": 5}, "data": [0, 1, 17]})", TraceKind::counts, 16);
  CHECK(contains(e, "t.json: data[2] = 17"));
  CHECK(contains(e, "0 to the 16 requested"));
  CHECK(contains(e, "--requested"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 5}, "data": [0]})", TraceKind::counts, 0), "requested = 0"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 5}, "data": [0]})", TraceKind::counts, kMaxTraceRequested + 1),
                 "1 to 10000"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 5}, "data": [0]})", TraceKind::lifetimes, 4),
                 "--requested applies to counts traces only"));
}

TEST_CASE("series values must be whole numbers in range: 2 in a lifetimes series, -1, 0.5, true and strings are refused") {
  const std::string head = R"({"metadata": {"gap_seconds": 1}, "data": [0, 1, )";
  CHECK(contains(series_error(head + "2]}"), "t.json: data[2] = 2: a lifetimes value is 0 or 1"));
  CHECK(contains(series_error(head + "2]}", TraceKind::availability), "an availability value is 0 or 1"));
  CHECK(contains(series_error(head + "-1]}"), "data[2] = -1"));
  CHECK(contains(series_error(head + "0.5]}"), "data[2] = 0.5: expected a whole number"));
  CHECK(contains(series_error(head + "true]}"), "data[2] = true: expected a whole number"));
  CHECK(contains(series_error(head + "\"1\"]}"), "data[2] = \"1\""));
  CHECK(contains(series_error(head + "null]}"), "data[2] = null"));
  CHECK(contains(series_error(head + "18446744073709551615]}"), "data[2] = 18446744073709551615"));
  CHECK(contains(series_error(head + "1e400]}"), "number overflow"));  // beyond a double: parse_json refuses it
  CHECK(contains(series_error(head + "NaN]}"), "malformed JSON"));
  CHECK(series(head + "1.0]}").up.size() == 1);  // a whole value written as a float is a whole number
}

TEST_CASE("gap_seconds must be a finite number above 0 and at most a day, and the span at most the limit") {
  for (const char* gap : {"0", "-1", "86401", "1e300", "\"30\"", "null", "[]"}) {
    INFO(gap);
    const std::string e = series_error(std::string(R"({"metadata": {"gap_seconds": )") + gap + R"(}, "data": [1]})");
    CHECK(contains(e, "t.json: metadata.gap_seconds"));
  }
  CHECK(series(R"({"metadata": {"gap_seconds": 86400}, "data": [1]})").span_s == 86400);
  CHECK(series(R"({"metadata": {"gap_seconds": 0.5}, "data": [1, 0]})").tick_s == 0.5);
  CHECK(contains(series_error(R"({"metadata": {}, "data": [1]})"), "metadata.gap_seconds = missing"));
}

TEST_CASE("a series refuses unknown top-level keys, missing ones, an empty data array and a bad prices array") {
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1}, "data": [1], "extra": 1})"),
                 "t.json: extra = 1: unknown key (expected: metadata, data, prices)"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1}})"), "t.json: data = missing"));
  CHECK(contains(series_error(R"({"data": [1]})"), "t.json: metadata = missing"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1}, "data": []})"), "the series has no ticks"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1}, "data": {}})"), "t.json: data = {}: expected an array"));
  CHECK(contains(series_error(R"({"metadata": 5, "data": [1]})"), "t.json: metadata = 5: expected an object"));
  CHECK(contains(series_error(R"([1, 0])"), "expected a JSON object"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1}, "data": [1, 0], "prices": [1.5]})"),
                 "one price per tick (2 numbers)"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1}, "data": [1, 0], "prices": [1.5, -2]})"),
                 "t.json: prices[1] = -2"));
  // Extra metadata keys describe the measurement and are accepted.
  CHECK(series(R"({"metadata": {"gap_seconds": 1, "note": {"x": [1]}}, "data": [1], "prices": [0.9]})").up.size() == 1);
}

TEST_CASE("series text is read under the JSON limits: empty, malformed, duplicate keys, deep nesting, bad UTF-8") {
  CHECK(contains(series_error(""), "malformed JSON"));
  CHECK(contains(series_error("{"), "malformed JSON"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1}, "data": [1], "data": [0]})"), "duplicate key"));
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1, "gap_seconds": 2}, "data": [1]})"), "duplicate key"));
  std::string deep = R"({"metadata": {"gap_seconds": 1, "x": )";
  deep += std::string(200, '[') + std::string(200, ']') + R"(}, "data": [1]})";
  CHECK(contains(series_error(deep), "at most 64 deep"));
  const std::string bad_utf8 = series_error("{\"metadata\": {\"gap_seconds\": 1, \"n\": \"\xff\"}, \"data\": [1]}");
  CHECK(contains(bad_utf8, "malformed JSON"));
  CHECK(printable_line(bad_utf8));
  // A byte-order mark is accepted.
  CHECK(series("\xEF\xBB\xBF{\"metadata\": {\"gap_seconds\": 1}, \"data\": [1]}").up.size() == 1);
}

TEST_CASE("a series read as an events trace is refused, as is a source without a type or a zone") {
  CHECK(contains(series_error(R"({"metadata": {"gap_seconds": 1}, "data": [1]})", TraceKind::events), "events traces are CSV"));
  sio::TraceSource source = source_of(TraceKind::lifetimes);
  source.pool.type.clear();
  CHECK(contains(error_of([&] { (void)sio::parse_series_trace(R"({"metadata": {"gap_seconds": 1}, "data": [1]})", source); }),
                 "give --type"));
  source = source_of(TraceKind::lifetimes);
  source.pool.zone = "us-east-1a\x1b[31m";
  const std::string e = error_of([&] { (void)sio::parse_series_trace(R"({"metadata": {"gap_seconds": 1}, "data": [1]})", source); });
  CHECK(contains(e, "must not contain control characters"));
  CHECK(printable_line(e));
}

TEST_CASE("the trace kind names round-trip and an unknown kind is not one") {
  for (TraceKind kind : {TraceKind::lifetimes, TraceKind::availability, TraceKind::counts, TraceKind::events}) {
    CHECK(trace_kind_from_string(to_string(kind)) == kind);
  }
  CHECK_FALSE(trace_kind_from_string("preemption").has_value());
  CHECK_FALSE(trace_kind_from_string("").has_value());
}

// ---- Events CSV ----------------------------------------------------------------------------------------

TEST_CASE("an events log gives one interval per node stay: removes are preemptions, nodes up at the end censored") {
  const PoolTrace t = events("0,add,a\n0,add,b\n60000,remove,a\n120000,add,c\n180000,remove,b\n300000,add,a\n");
  CHECK(t.kind == TraceKind::events);
  CHECK_FALSE(t.slotted);
  CHECK(t.source == "e.csv");
  CHECK(t.span_s == 300);  // the last event
  CHECK(t.tick_s == 60);   // the smallest step between distinct times
  CHECK(t.slots == 2);
  // a's second stay begins at the last event: up for no time, left out.
  check_intervals(t, {{0, 60, true, true, -1}, {0, 180, true, true, -1}, {120, 300, false, true, -1}});
}

TEST_CASE("an events log accepts a header, a byte-order mark, CRLF, blank lines, spaces and quoted cells") {
  const PoolTrace t = events("\xEF\xBB\xBFms,event,node\r\n\r\n 0 , add , \"node,1\"\r\n1500,remove,\"node,1\"\r\n2000,add,x\r\n");
  CHECK(t.span_s == 2);
  CHECK(t.tick_s == 0.5);
  check_intervals(t, {{0, 1.5, true, true, -1}});  // x, added at the last event, was up for no time
}

TEST_CASE("an events log refuses events out of order, a double add, a remove of a node not up and bad cells, naming the line") {
  CHECK(contains(events_error("0,add,a\n120000,add,b\n60000,remove,a\n"),
                 "e.csv:3: ms = 60000: events must be in time order: line 2 is at 120000 ms"));
  CHECK(contains(events_error("0,add,a\n60000,add,a\n"), "e.csv:2: node = \"a\": added while it is up (added at line 1"));
  CHECK(contains(events_error("0,add,a\n60000,remove,b\n"), "e.csv:2: node = \"b\": removed while it is not up"));
  CHECK(contains(events_error("0,add,a\n60000,join,b\n"), "e.csv:2: event = \"join\": expected add or remove"));
  CHECK(contains(events_error("0,add,a\n-5,add,b\n"), "e.csv:2: ms = \"-5\""));
  CHECK(contains(events_error("0,add,a\n1.5,add,b\n"), "e.csv:2: ms = \"1.5\""));
  CHECK(contains(events_error("0,add,a\n99999999999999999999,add,b\n"), "e.csv:2: ms"));
  CHECK(contains(events_error("0,add,a\n60000,add,\n"), "e.csv:2: node = \"\": the node name is empty"));
  CHECK(contains(events_error("0,add,a\n60000,add\n"), "e.csv:2 = \"60000,add\": too few cells"));
  CHECK(contains(events_error("0,add,a\n60000,add,b,c\n"), "too many cells"));
  CHECK(contains(events_error("0,add,\"a\n"), "a quoted cell is not closed"));
  CHECK(contains(events_error(""), "the trace has no events"));
  CHECK(contains(events_error("ms,event,node\n"), "the trace has no events"));
  CHECK(contains(events_error("0,add,a\n0,add,b\n"), "every event is at the same time"));
  CHECK(contains(events_error("0,add,a\n6\0,add,b\n"s), "e.csv:2 = <NUL byte>"));
  CHECK(contains(events_error("ms,event,node\nms,event,node\n"), "e.csv:2: ms = \"ms\""));
  CHECK(contains(events_error("time_s,pool,instance,event\n"), "this looks like a fleet log"));
}

TEST_CASE("control characters in a node name are escaped in the message, which stays one printable line") {
  const std::string e = events_error("0,add,a\n60000,add,evil\x1b]0;title\x07\r\n");
  CHECK(contains(e, "evil\\x1b]0;title\\x07"));
  CHECK(printable_line(e));
  const std::string cr = events_error("0,add,a\r\r\n60000,remove,a\n");  // a stray CR stays in the name
  CHECK(contains(cr, "a\\r"));
  CHECK(printable_line(cr));
  const std::string utf8 = events_error("0,add,\xc3\x28\n");
  CHECK(contains(utf8, "must be valid UTF-8"));
  CHECK(printable_line(utf8));
}

TEST_CASE("an events source must say events and give a type and a zone") {
  sio::TraceSource source = source_of(TraceKind::lifetimes);
  CHECK(contains(error_of([&] { (void)sio::parse_events_trace("0,add,a\n60,remove,a\n", source); }), "is an events trace"));
  source.kind = TraceKind::events;
  source.pool.zone.clear();
  CHECK(contains(error_of([&] { (void)sio::parse_events_trace("0,add,a\n60,remove,a\n", source); }), "give --zone"));
}

// ---- Fleet log -----------------------------------------------------------------------------------------

TEST_CASE("a fleet log gives one trace per pool with intervals from up to preempted or stopped and the waits of requests") {
  const std::string log =
      "time_s,pool,instance,event\n"
      "1000,p3.2xlarge@us-east-1a,i-1,request\n"
      "1000,g4dn.xlarge@us-east-1b,i-9,up\n"
      "1030.5,p3.2xlarge@us-east-1a,i-1,up\n"
      "1100,p3.2xlarge@us-east-1a,i-2,up\n"
      "1600,p3.2xlarge@us-east-1a,i-1,preempted\n"
      "1600,p3.2xlarge@us-east-1a,i-3,request\n"
      "1700,p3.2xlarge@us-east-1a,i-4,request\n"
      "1800,p3.2xlarge@us-east-1a,i-4,stopped\n"
      "1900,g4dn.xlarge@us-east-1b,i-9,stopped\n"
      "2000,p3.2xlarge@us-east-1a,i-3,up\n"
      "2500,p3.2xlarge@us-east-1a,i-5,request\n"
      "3000,,,end\n";
  const std::vector<PoolTrace> traces = sio::parse_fleet_trace(log, "fleet.csv", "2024-05-01");
  REQUIRE(traces.size() == 2);
  const PoolTrace& g4 = traces[0];  // ordered by pool: g4dn before p3
  const PoolTrace& p3 = traces[1];
  CHECK(g4.pool == PoolId{"g4dn.xlarge", "us-east-1b"});
  CHECK(p3.pool == PoolId{"p3.2xlarge", "us-east-1a"});
  for (const PoolTrace* t : {&g4, &p3}) {
    CHECK(t->kind == TraceKind::events);
    CHECK_FALSE(t->slotted);
    CHECK(t->span_s == 2000);  // the end row, from the first row's time
    CHECK(t->tick_s == 30.5);  // the smallest step between distinct times (1000 → 1030.5)
    CHECK(t->source == "fleet.csv");
    CHECK(t->observed_from == "2024-05-01");
  }
  check_intervals(g4, {{0, 900, false, true, -1}});
  CHECK(g4.slots == 1);
  CHECK(g4.waits.empty());
  check_intervals(p3, {{30.5, 600, true, true, -1}, {100, 2000, false, true, -1}, {1000, 2000, false, true, -1}});
  CHECK(p3.slots == 2);
  REQUIRE(p3.waits.size() == 4);
  const auto check_wait = [](const WaitObservation& w, double start, double end, bool arrived, bool after) {
    CHECK(w.start_s == start);
    CHECK(w.end_s == end);
    CHECK(w.arrived == arrived);
    CHECK(w.after_preemption == after);
  };
  check_wait(p3.waits[0], 0, 30.5, true, false);
  check_wait(p3.waits[1], 600, 1000, true, true);     // follows i-1's preemption
  check_wait(p3.waits[2], 700, 800, false, false);    // given up
  check_wait(p3.waits[3], 1500, 2000, false, false);  // still waiting at the end
}

TEST_CASE("a fleet log without an end row ends at its last row, and its columns may come in any order") {
  const std::vector<PoolTrace> traces = sio::parse_fleet_trace(
      "event,instance,pool,time_s\r\nup,a,t@z-1a,5\r\npreempted,a,t@z-1a,65\r\nrequest,b,t@z-1a,65\r\n");
  REQUIRE(traces.size() == 1);
  CHECK(traces[0].span_s == 60);
  check_intervals(traces[0], {{0, 60, true, true, -1}});
  REQUIRE(traces[0].waits.size() == 1);
  CHECK(traces[0].waits[0].after_preemption);
  CHECK(traces[0].waits[0].end_s == 60);
  CHECK_FALSE(traces[0].waits[0].arrived);
  CHECK(sio::is_fleet_trace_text("\xEF\xBB\xBF\nevent,instance,pool,time_s\n"));
  CHECK_FALSE(sio::is_fleet_trace_text("0,add,node1\n"));
  CHECK_FALSE(sio::is_fleet_trace_text(""));
}

TEST_CASE("a fleet log refuses impossible instance histories and bad cells, naming the line") {
  const std::string h = "time_s,pool,instance,event\n";
  CHECK(contains(fleet_error(h + "0,t@z,a,up\n5,t@z,a,up\n"), "f.csv:3: event = \"up\": instance \"a\" is already up (line 2)"));
  CHECK(contains(fleet_error(h + "0,t@z,a,preempted\n"), "f.csv:2: event = \"preempted\": instance \"a\" is not up"));
  CHECK(contains(fleet_error(h + "0,t@z,a,request\n5,t@z,a,preempted\n"), "is not up"));
  CHECK(contains(fleet_error(h + "0,t@z,a,up\n5,t@z,a,stopped\n6,t@z,a,up\n"), "already ended (line 3)"));
  CHECK(contains(fleet_error(h + "0,t@z,a,up\n5,u@z,a,stopped\n"), "f.csv:3: pool = \"u@z\": instance \"a\" is in pool t@z"));
  CHECK(contains(fleet_error(h + "0,t@z,a,up\n5,t@z,a,request\n"), "already requested or up"));
  CHECK(contains(fleet_error(h + "0,t@z,a,stopped\n"), "is not up or requested"));
  CHECK(contains(fleet_error(h + "5,t@z,a,up\n4,t@z,b,up\n"), "f.csv:3: time_s = \"4\": rows must be in time order"));
  CHECK(contains(fleet_error(h + "0,t@z,a,up\n5,,,end\n6,t@z,b,up\n"), "f.csv:4 = \"6,t@z,b,up\": a row after the end row (line 3)"));
  CHECK(contains(fleet_error(h + "0,t@z,a,up\n5,t@z,,end\n"), "the end row leaves pool and instance empty"));
  CHECK(contains(fleet_error(h + "0,tz,a,up\n"), "f.csv:2: pool = \"tz\": expected TYPE@ZONE"));
  CHECK(contains(fleet_error(h + "0,t@z@y,a,up\n"), "expected TYPE@ZONE"));
  CHECK(contains(fleet_error(h + "0,@z,a,up\n"), "expected TYPE@ZONE"));
  CHECK(contains(fleet_error(h + "0,t@z,,up\n"), "f.csv:2: instance = \"\""));
  CHECK(contains(fleet_error(h + "0,t@z,a,launched\n"), "expected request, up, preempted, stopped or end"));
  for (const char* time : {"-1", "nan", "inf", "1e400", "x", "", "0x10"}) {
    INFO(time);
    CHECK(contains(fleet_error(h + time + ",t@z,a,up\n"), "f.csv:2: time_s"));
  }
  CHECK(contains(fleet_error(h + "0,t@z,a,up\n2000000000,t@z,a,stopped\n"), "may span at most"));
  CHECK(contains(fleet_error(h + "0,t@z,a,up\n"), "the log observes no time"));
  CHECK(contains(fleet_error(h), "the log has a header but no rows"));
  CHECK(contains(fleet_error(h + "5,,,end\n"), "the log names no instance"));
  CHECK(contains(fleet_error(""), "the file is empty"));
  CHECK(contains(fleet_error("time_s,pool,node,event\n"), "f.csv:1: header = \"node\": unknown column"));
  CHECK(contains(fleet_error("time_s,pool,pool,event\n"), "the column is given twice"));
  const std::string evil = fleet_error(h + "0,t@z,i-\x1b[2J,up\n");
  CHECK(contains(evil, "i-\\x1b[2J"));
  CHECK(printable_line(evil));
}

// ---- Names, dates and the GPU map ----------------------------------------------------------------------

TEST_CASE("file names give pools through the GPU map, and folders give the date of time 0") {
  CHECK(sio::pool_from_trace_file_name("a/b/us-east-1c_intel_64.json") == PoolId{"r5.16xlarge", "us-east-1c"});
  CHECK(sio::pool_from_trace_file_name("us-west-2a_v100_1.json") == PoolId{"p3.2xlarge", "us-west-2a"});
  CHECK(sio::pool_from_trace_file_name("us-west-2a_v100_8.json") == PoolId{"p3.16xlarge", "us-west-2a"});
  CHECK(sio::pool_from_trace_file_name("us-west-2b_k80_1.json") == PoolId{"p2.xlarge", "us-west-2b"});
  CHECK(sio::pool_from_trace_file_name("us-west-2b_k80_8.json") == PoolId{"p2.8xlarge", "us-west-2b"});
  CHECK(sio::pool_from_trace_file_name("x/us-central1-a_c3-88.json") == PoolId{"c3-highcpu-88", "us-central1-a"});
  const std::string bad_name = error_of([] { (void)sio::pool_from_trace_file_name("p3-trace.csv"); });
  CHECK(contains(bad_name, "path = \"p3-trace.csv\": the file name does not say the pool"));
  CHECK(contains(bad_name, "give --type and --zone"));
  CHECK(contains(error_of([] { (void)sio::pool_from_trace_file_name("US-EAST-1_v100_1.json"); }), "does not say the pool"));
  const std::string unknown = error_of([] { (void)sio::pool_from_trace_file_name("us-east-1a_a100_8.json"); });
  CHECK(contains(unknown, "the GPU token \"a100_8\" is not in the GPU map"));
  CHECK(contains(unknown, "--gpu-map a100_8=TYPE"));

  CHECK(sio::observed_from_trace_path("traces/preemption/1-node/aws-04-19-2023/us-east-1b_intel_64.json") == "2023-04-19");
  CHECK(sio::observed_from_trace_path("gcp-04-30-2023/us-east1-b_c3-88.json") == "2023-04-30");
  CHECK(sio::observed_from_trace_path("aws-02-29-2024/x.json") == "2024-02-29");
  CHECK(sio::observed_from_trace_path("aws-02-29-2023/x.json").empty());  // no such day
  CHECK(sio::observed_from_trace_path("aws-13-01-2023/x.json").empty());
  CHECK(sio::observed_from_trace_path("2023-04-19/x.json").empty());
  CHECK(sio::observed_from_trace_path("x.json").empty());
}

TEST_CASE("a GPU map text adds and replaces entries, and a bad entry is refused by its number") {
  const sio::GpuMap map = sio::parse_gpu_map(" a100_8 = p4d.24xlarge , v100_1=p3.8xlarge");
  CHECK(map.at("a100_8") == "p4d.24xlarge");
  CHECK(map.at("v100_1") == "p3.8xlarge");
  CHECK(map.at("k80_1") == "p2.xlarge");
  CHECK(sio::pool_from_trace_file_name("us-east-1a_a100_8.json", map) == PoolId{"p4d.24xlarge", "us-east-1a"});
  CHECK(contains(error_of([] { (void)sio::parse_gpu_map(""); }), "gpu_map = \"\""));
  CHECK(contains(error_of([] { (void)sio::parse_gpu_map("a=b,,c=d"); }), "gpu_map entry 2 = \"\""));
  CHECK(contains(error_of([] { (void)sio::parse_gpu_map("a=b,c"); }), "gpu_map entry 2 = \"c\": expected TOKEN=TYPE"));
  CHECK(contains(error_of([] { (void)sio::parse_gpu_map("a=b,=c"); }), "gpu_map entry 2"));
  CHECK(contains(error_of([] { (void)sio::parse_gpu_map("a=b,a=c"); }), "gpu_map entry 2 = \"a=c\": the token \"a\" is given twice"));
  CHECK(contains(error_of([] { (void)sio::parse_gpu_map("a=b c"); }), "single words"));
  CHECK(contains(error_of([] { (void)sio::parse_gpu_map("a=b=c"); }), "single words"));
  const std::string control = error_of([] { (void)sio::parse_gpu_map("a=b\x1b"); });
  CHECK(contains(control, "\\x1b"));
  CHECK(printable_line(control));
}

// ---- Files ---------------------------------------------------------------------------------------------

TEST_CASE("every real series fixture reads with the interval counts computed from it independently") {
  struct Case {
    const char* path;
    TraceKind kind;
    int requested;
    std::size_t ticks, intervals, preempted, age_unknown;
    double gap_s;
  };
  // Counts computed with a separate Python script from the JSON (runs of values > slot, per slot).
  const Case cases[] = {
      {"preemption/1-node/aws-04-19-2023/us-east-1b_intel_64.json", TraceKind::lifetimes, 1, 16090, 67, 66, 0, 34},
      {"preemption/1-node/aws-04-19-2023/us-east-1c_intel_64.json", TraceKind::lifetimes, 1, 16090, 129, 128, 0, 34},
      {"preemption/1-node/aws-04-19-2023/us-east-1d_intel_64.json", TraceKind::lifetimes, 1, 16090, 28, 27, 0, 34},
      {"preemption/1-node/gcp-04-30-2023/us-central1-a_c3-88.json", TraceKind::lifetimes, 1, 5476, 1, 0, 0, 30},
      {"preemption/1-node/gcp-04-30-2023/us-east1-b_c3-88.json", TraceKind::lifetimes, 1, 5476, 4, 3, 0, 30},
      {"availability/1-node/aws-02-15-2023/us-east-1a_v100_1.json", TraceKind::availability, 1, 20158, 253, 253, 0, 195},
      {"availability/1-node/aws-02-15-2023/us-west-2b_v100_1.json", TraceKind::availability, 1, 20158, 95, 94, 1, 195},
      {"availability/1-node/aws-10-26-2022/us-west-2b_v100_8.json", TraceKind::availability, 1, 3895, 400, 399, 0, 600},
      {"availability/1-node/aws-10-26-2022/us-west-2b_k80_8.json", TraceKind::availability, 1, 3895, 246, 246, 1, 600},
      {"availability/16-node/aws-08-27-2023/us-east-2b_v100_1.json", TraceKind::counts, 16, 3247, 910, 910, 0, 300},
      {"availability/16-node/aws-08-27-2023/us-west-2a_v100_1.json", TraceKind::counts, 16, 4736, 1489, 1473, 0, 300},
      {"availability/16-node/aws-08-27-2023/us-west-2c_v100_1.json", TraceKind::counts, 16, 4736, 1382, 1366, 0, 300},
  };
  for (const Case& c : cases) {
    INFO(c.path);
    sio::TraceFileOptions options;
    options.kind = c.kind;
    options.requested = c.requested;
    const std::vector<PoolTrace> traces = sio::read_trace_files({kFixtures + "/" + c.path}, options);
    REQUIRE(traces.size() == 1);
    const PoolTrace& t = traces[0];
    CHECK(t.up.size() == c.intervals);
    CHECK(count_preempted(t) == c.preempted);
    CHECK(count_age_unknown(t) == c.age_unknown);
    CHECK(t.tick_s == c.gap_s);
    CHECK(t.span_s == double(c.ticks) * c.gap_s);
    CHECK(t.slots == c.requested);
    CHECK(t.kind == c.kind);
  }
}

TEST_CASE("the r5.16xlarge us-east-1c trace gives its pool, date and exact first and last lifetimes") {
  sio::TraceFileOptions options;
  const std::string path = kFixtures + "/preemption/1-node/aws-04-19-2023/us-east-1c_intel_64.json";
  const PoolTrace t = sio::read_trace_files({path}, options).at(0);
  CHECK(t.pool == PoolId{"r5.16xlarge", "us-east-1c"});
  CHECK(t.observed_from == "2023-04-19");
  CHECK(t.source == path);
  REQUIRE(t.up.size() == 129);
  check_interval(t.up.front(), {19 * 34, 33 * 34, true, true, 0});  // ticks 19..32 up, 33 down
  check_interval(t.up[1], {222 * 34, 229 * 34, true, true, 0});
  check_interval(t.up.back(), {15933 * 34, 16090 * 34, false, true, 0});  // up until the last tick: censored
  CHECK(total_up_s(t) == 10287 * 34);  // the sum of the data: up ticks × gap
  const PoolTrace counts = [&] {
    sio::TraceFileOptions o;
    o.kind = TraceKind::counts;
    o.requested = 16;
    return sio::read_trace_files({kFixtures + "/availability/16-node/aws-08-27-2023/us-east-2b_v100_1.json"}, o).at(0);
  }();
  CHECK(total_up_s(counts) == 28437 * 300);  // the sum of the counts × gap
}

TEST_CASE("the Bamboo event logs read as events traces with the pool the options give") {
  struct Case {
    const char* file;
    const char* type;
    std::size_t intervals, preempted;
    int slots;
    double span_s, total_up_s;
  };
  const Case cases[] = {{"p3-trace.csv", "p3.2xlarge", 177, 167, 32, 40920, 983220},
                        {"g4dn-trace.csv", "g4dn.xlarge", 79, 74, 24, 38760, -1}};
  for (const Case& c : cases) {
    INFO(c.file);
    sio::TraceFileOptions options;
    options.kind = TraceKind::events;
    options.type = c.type;
    options.zone = "us-east-1a";
    const std::vector<PoolTrace> traces = sio::read_trace_files({kFixtures + "/events/" + c.file}, options);
    REQUIRE(traces.size() == 1);
    const PoolTrace& t = traces[0];
    CHECK(t.pool == PoolId{c.type, "us-east-1a"});
    CHECK(t.up.size() == c.intervals);
    CHECK(count_preempted(t) == c.preempted);
    CHECK(count_age_unknown(t) == 0);
    CHECK(t.slots == c.slots);
    CHECK(t.span_s == c.span_s);
    CHECK(t.tick_s == 60);
    CHECK(t.observed_from.empty());
    if (c.total_up_s > 0) CHECK(total_up_s(t) == c.total_up_s);
  }
  sio::TraceFileOptions options;
  options.kind = TraceKind::events;
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({kFixtures + "/events/p3-trace.csv"}, options); }),
                 "give --type and --zone"));
  options.type = "p3.2xlarge";
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({kFixtures + "/events/p3-trace.csv"}, options); }), "give --zone"));
}

TEST_CASE("several files read together: a type override applies to all, a zone override to one file only, pools once") {
  const std::string folder = kFixtures + "/availability/1-node/aws-10-26-2022/";
  sio::TraceFileOptions options;
  options.kind = TraceKind::availability;
  const std::vector<PoolTrace> traces =
      sio::read_trace_files({folder + "us-west-2a_k80_1.json", folder + "us-west-2b_v100_8.json"}, options);
  REQUIRE(traces.size() == 2);
  CHECK(traces[0].pool == PoolId{"p2.xlarge", "us-west-2a"});
  CHECK(traces[1].pool == PoolId{"p3.16xlarge", "us-west-2b"});
  CHECK(traces[1].observed_from == "2022-10-26");

  options.type = "p3.2xlarge";
  const std::vector<PoolTrace> typed = sio::read_trace_files({folder + "us-west-2a_k80_1.json", folder + "us-west-2b_k80_1.json"}, options);
  CHECK(typed[0].pool == PoolId{"p3.2xlarge", "us-west-2a"});
  CHECK(typed[1].pool == PoolId{"p3.2xlarge", "us-west-2b"});
  const std::string twice =
      error_of([&] { (void)sio::read_trace_files({folder + "us-west-2a_k80_1.json", folder + "us-west-2a_v100_1.json"}, options); });
  CHECK(contains(twice, "p3.2xlarge@us-west-2a: the pool is given twice (also by "));

  options.type.clear();
  options.zone = "eu-west-1a";
  CHECK(sio::read_trace_files({folder + "us-west-2a_k80_1.json"}, options)[0].pool == PoolId{"p2.xlarge", "eu-west-1a"});
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({folder + "us-west-2a_k80_1.json", folder + "us-west-2b_k80_1.json"}, options); }),
                 "--zone applies to one trace file"));
  options.zone.clear();
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({}, options); }), "give at least one trace file"));
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({folder + "us-west-2a_k80_1.json", folder + "us-west-2a_k80_1.json"}, options); }),
                 "the pool is given twice"));
  options.gpu_map = sio::parse_gpu_map("k80_1=p2.8xlarge");
  CHECK(sio::read_trace_files({folder + "us-west-2a_k80_1.json"}, options)[0].pool.type == "p2.8xlarge");
  options.kind = TraceKind::lifetimes;
  options.requested = 2;
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({folder + "us-west-2a_k80_1.json"}, options); }),
                 "--requested applies to counts traces only"));
}

TEST_CASE("a fleet log given as an events file is read as one, and refuses --type and --zone") {
  const std::string path = temp_path("fleet.csv");
  write_file(path, "time_s,pool,instance,event\n0,p3.2xlarge@us-east-1a,a,up\n60,p3.2xlarge@us-east-1a,a,preempted\n"
                   "60,p3.2xlarge@us-east-1b,b,up\n");
  sio::TraceFileOptions options;
  options.kind = TraceKind::events;
  const std::vector<PoolTrace> traces = sio::read_trace_files({path}, options);
  REQUIRE(traces.size() == 2);
  CHECK(traces[0].pool == PoolId{"p3.2xlarge", "us-east-1a"});
  CHECK(traces[1].pool == PoolId{"p3.2xlarge", "us-east-1b"});
  CHECK(sio::read_fleet_trace(path).size() == 2);
  options.type = "p3.2xlarge";
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({path}, options); }), "a fleet log names its pools"));
  std::remove(path.c_str());
}

TEST_CASE("trace files are regular files under the size limit: a directory, /dev/zero and a huge sparse file are refused") {
  sio::TraceFileOptions options;
  options.type = "p3.2xlarge";
  options.zone = "us-east-1a";
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({kFixtures}, options); }), "is a directory; give a regular file"));
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({"/dev/zero"}, options); }), "is a character device"));
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({kFixtures + "/no-such.json"}, options); }), "cannot open the file"));
  const std::string huge = temp_path("huge.json");
  {
    const int fd = ::open(huge.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t(kMaxTraceFileBytes) + 1) == 0);  // sparse: no disk used
    ::close(fd);
  }
  const std::string size = std::to_string(kMaxTraceFileBytes);
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({huge}, options); }), "the maximum is " + size));
  options.kind = TraceKind::events;
  CHECK(contains(error_of([&] { (void)sio::read_trace_files({huge}, options); }), "the maximum is " + size));
  CHECK(contains(error_of([&] { (void)sio::read_fleet_trace(huge); }), "the maximum is " + size));
  sio::TraceSource source = source_of(TraceKind::events);
  CHECK(contains(error_of([&] { (void)sio::read_events_trace(huge, source); }), "the maximum is " + size));
  std::remove(huge.c_str());
  const std::string bad = temp_path("bad.json");
  write_file(bad, "{\"metadata\": {\"gap_seconds\": 1}, \"data\": [1, 2]}");
  source.kind = TraceKind::lifetimes;
  source.name.clear();  // the file variant names the trace by its path
  const std::string e = error_of([&] { (void)sio::read_series_trace(bad, source); });
  CHECK(contains(e, "read_series_trace: " + bad + ": data[1] = 2"));
  std::remove(bad.c_str());
}

TEST_CASE("a counts series with more up intervals than the limit is refused, naming the tick") {
  // Ticks alternating 0 and N open N intervals each time: N × (ticks / 2) > kMaxTraceIntervals. The count is
  // checked before any interval is built, so this costs no memory.
  const int n = kMaxTraceRequested;
  const std::size_t pairs = kMaxTraceIntervals / std::size_t(n) + 1;
  std::string text = R"({"metadata": {"gap_seconds": 1}, "data": [)";
  for (std::size_t i = 0; i < pairs; ++i) text += (i ? ",0," : "0,") + std::to_string(n);
  text += "]}";
  const std::string e = series_error(text, TraceKind::counts, n);
  CHECK(contains(e, "a trace may hold at most " + std::to_string(kMaxTraceIntervals) + " up intervals"));
  CHECK(contains(e, "t.json: data[" + std::to_string(2 * pairs - 1) + "]"));
}
