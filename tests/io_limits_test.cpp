// SPDX-License-Identifier: MIT
// Reader limits: regular files of bounded size, bounded JSON nesting, no duplicate keys, UTF-8 with an
// optional byte-order mark, bounded counts summed in 64 bits, and messages that stay one printable line.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <spotdnn/cluster.hpp>
#include <spotdnn/io/csv.hpp>
#include <spotdnn/io/json.hpp>
#include <spotdnn/limits.hpp>
#include <spotdnn/planner.hpp>
#include <spotdnn/revocation/simulate.hpp>

#include "support/error_of.hpp"
#include "support/run_command.hpp"

using namespace spotdnn;
namespace sio = spotdnn::io;

namespace {

using test::error_of;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// True when `text` has no byte below 0x20 and no DEL: one printable line.
bool printable_line(const std::string& text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return false;
  }
  return true;
}

std::string nested_arrays(int depth) { return std::string(std::size_t(depth), '[') + std::string(std::size_t(depth), ']'); }

/// A fresh path under the test's binary directory.
std::string temp_path(const std::string& name) {
  const std::string path = std::string(SPOTDNN_TEST_BINARY_DIR) + "/io_limits_" + std::to_string(::getpid()) + "_" + name;
  std::remove(path.c_str());
  return path;
}

}  // namespace

TEST_CASE("JSON nested at the limit is read and one level deeper is refused, even 100,000 deep") {
  CHECK(sio::parse_json(nested_arrays(kMaxJsonDepth), "t").is_array());
  const std::string deeper = error_of([] { (void)sio::parse_json(nested_arrays(kMaxJsonDepth + 1), "deep.json"); });
  CHECK(contains(deeper, "at most 64 deep in deep.json"));
  const std::string very_deep = error_of([] { (void)sio::parse_json(nested_arrays(100000), "deep.json"); });
  CHECK(contains(very_deep, "at most 64 deep"));
  CHECK(very_deep.size() < 400);  // the key path is shortened, not 64 levels long
  const std::string objects = error_of([] {
    std::string text;
    for (int i = 0; i < 70; ++i) text += "{\"k\":";
    text += "1" + std::string(70, '}');
    (void)sio::parse_json(text, "o.json");
  });
  CHECK(contains(objects, "$[\"k\"]"));
}

TEST_CASE("a key given twice in one object is refused with its path, at the top and nested") {
  CHECK(contains(error_of([] { (void)sio::parse_json(R"({"a":1,"a":2})", "d.json"); }), "$[\"a\"] = (given twice)"));
  CHECK(contains(error_of([] { (void)sio::parse_json(R"({"p":{"x":[{"q":1,"q":1}]}})", "d.json"); }),
                 "$[\"p\"][\"x\"][0][\"q\"] = (given twice)"));
  // The same key in sibling objects is fine.
  CHECK(sio::parse_json(R"([{"a":1},{"a":2}])", "ok.json").size() == 2);
}

TEST_CASE("an object of 300,000 keys is read whole and in order (linear time: nlohmann's own builder is quadratic here)") {
  std::string text = "{";
  for (int i = 0; i < 300000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  text += "}";
  const sio::Json j = sio::parse_json(text, "keys.json");
  REQUIRE(j.size() == 300000);
  CHECK(j.begin().key() == "k0");
  CHECK((--j.end()).key() == "k299999");
  CHECK(j.at("k123456") == 123456);
  // Nested values land where they belong, and a malformed tail still names its byte.
  const sio::Json nested = sio::parse_json(R"({"a":[1,{"b":[true,null,"x"]}],"c":{}})", "n.json");
  CHECK(nested.dump() == R"({"a":[1,{"b":[true,null,"x"]}],"c":{}})");
  CHECK(contains(error_of([] { (void)sio::parse_json(R"({"a":1,)", "t.json"); }), "t.json = byte 8: malformed JSON"));
  CHECK(contains(error_of([] { (void)sio::parse_json("[1e999]", "big.json"); }), "big.json"));
}

TEST_CASE("JSON with a byte-order mark is read, and invalid UTF-8 and raw control characters are refused") {
  CHECK(sio::parse_json("\xEF\xBB\xBF{\"a\":1}", "bom.json").at("a") == 1);
  const std::string bad_utf8 = error_of([] { (void)sio::parse_json("{\"a\":\"\xff\"}", "u.json"); });
  CHECK(contains(bad_utf8, "ill-formed UTF-8"));
  CHECK(contains(bad_utf8, "\\xff"));
  CHECK(printable_line(bad_utf8));
  const std::string escape = error_of([] { (void)sio::parse_json("{\"a\":\"\x1b[2J\"}", "e.json"); });
  CHECK(printable_line(escape));
}

TEST_CASE("file readers accept only regular files up to their maximum size") {
  CHECK(contains(error_of([] { (void)sio::read_json_file("/dev/zero"); }), "is a character device; give a regular file"));
  CHECK(contains(error_of([] { (void)sio::read_json_file(SPOTDNN_TEST_BINARY_DIR); }), "is a directory"));
  CHECK(contains(error_of([] { (void)sio::read_json_file("/nonexistent/x.json"); }), "cannot open the file"));
  const std::string fifo = temp_path("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Without a writer, opening a FIFO would block forever: the reader refuses it instead.
  CHECK(contains(error_of([&] { (void)sio::read_json_file(fifo); }), "is a FIFO"));
  CHECK(contains(error_of([&] { (void)read_loss_table(fifo); }), "is a FIFO"));
  std::remove(fifo.c_str());

  const std::string big = temp_path("big.json");
  {
    const int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t(kMaxJsonFileBytes) + 1) == 0);  // sparse: no disk used
    ::close(fd);
  }
  CHECK(contains(error_of([&] { (void)sio::read_json_file(big); }), "the file has 16777217 bytes; the maximum is 16777216"));
  std::remove(big.c_str());
  const std::string huge_csv = temp_path("huge.csv");
  {
    const int fd = ::open(huge_csv.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, off_t(kMaxCsvFileBytes) + 1) == 0);
    ::close(fd);
  }
  CHECK(contains(error_of([&] { (void)read_throughput_trace(huge_csv); }), "the maximum is 1073741824"));
  std::remove(huge_csv.c_str());
}

TEST_CASE("a trace CSV with a UTF-8 byte-order mark is read, and a run name that is not UTF-8 is refused with its line") {
  const std::string text = "\xEF\xBB\xBFrun,workers,weighted_batch,iteration,loss\na,2,1024,0,4\na,2,1024,10,3\n";
  CHECK(parse_loss_table(text).size() == 2);
  const std::string path = test::write_temp_file("io_limits_bom.csv", text);
  CHECK(read_loss_table(path).size() == 2);
  CHECK(read_loss_trace(path).samples.size() == 2);
  const std::string throughput = test::write_temp_file("io_limits_bom_t.csv", "\xEF\xBB\xBF" "cluster,iterations_per_s\np3.2xlarge=1,2\n");
  CHECK(read_throughput_trace(throughput).samples.size() == 1);
  const std::string bad = error_of([] {
    (void)parse_loss_table("run,workers,weighted_batch,iteration,loss\n\xff\x1b[2J,2,1024,0,4\n", "bad.csv");
  });
  CHECK(contains(bad, "bad.csv:2: run = \"\\xff\\x1b[2J\": the run name is not valid UTF-8"));
  CHECK(printable_line(bad));
  CHECK(contains(error_of([] { (void)parse_loss_table("run,workers,weighted_batch,iteration,loss\n\"a\x1b[2J\",2,1024,0,4\n", "c.csv"); }),
                 "must not contain control characters"));
}

TEST_CASE("trace text readers refuse NUL bytes and take an empty view without a null pointer reaching the parser") {
  CHECK(contains(error_of([] { (void)parse_throughput_trace(std::string_view{}); }), "the file is empty"));
  CHECK(contains(error_of([] { (void)parse_loss_table(std::string_view{}); }), "the file is empty"));
  const std::string nul("run,workers,weighted_batch,iteration,loss\na,2,1024,0,4\na\0,2,1024,10,3\n", 67);
  CHECK(contains(error_of([&] { (void)parse_loss_table(nul, "n.csv"); }), "n.csv:3 = <NUL byte>"));
  const std::string path = test::write_temp_file("io_limits_nul.csv", nul);
  CHECK(contains(error_of([&] { (void)read_loss_table(path); }), ":3 = <NUL byte>: a text file must not contain NUL bytes"));
  CHECK(contains(error_of([] { (void)sio::parse_json(std::string("{\"a\":1}\0", 8), "j.json"); }), "byte 7"));
  CHECK(contains(error_of([] { (void)sio::parse_json("\xEF\xBB\xBF\xEF\xBB\xBF{}", "j.json"); }), "a second byte-order mark"));
  CHECK(contains(error_of([] { (void)parse_loss_table("run,workers,weighted_batch,iteration,loss\na,3000000000,1024,0,4\n", "w.csv"); }),
                 "w.csv:2: workers = \"3000000000\": must be at most 1000000"));
}

TEST_CASE("names shown to people may not carry control characters") {
  Workload w = presets::resnet110_workload();
  w.name = "resnet\x1b]0;pwned\x07";
  CHECK(contains(error_of([&] { w.validate(); }), "name = \"resnet\\x1b]0;pwned\\x07\": must not contain control characters"));
  Catalog c = presets::resnet110_catalog();
  c.region = "us-east-1\n";
  CHECK(contains(error_of([&] { c.validate(); }), "region"));
  c = presets::resnet110_catalog();
  c.instance_types[2].name = "g3\x9b.8xlarge";
  CHECK(contains(error_of([&] { c.validate(); }), "instance_types[2].name"));
  CHECK(contains(error_of([] { (void)Cluster::parse("p3\x1b[2J=1"); }), "must not contain control characters"));
}

TEST_CASE("cluster counts are bounded and summed in 64 bits") {
  CHECK(contains(error_of([] { (void)Cluster::parse("p3.2xlarge=2147483647,g3.8xlarge=1"); }), "at most 1000000"));
  CHECK(contains(error_of([] { (void)Cluster::parse("a=3000000000"); }), "a = \"3000000000\": the count must be at most 1000000"));
  CHECK(contains(error_of([] { (void)Cluster::parse("a=99999999999999999999999"); }), "at most 1000000"));
  CHECK(contains(error_of([] { (void)Cluster::parse("a=600000,b=600000"); }), "more than 1000000 workers in total"));
  CHECK(Cluster::parse("a=500000,b=500000").total_workers() == 1000000);
  CHECK(contains(error_of([] { (void)Cluster::parse(std::string(kMaxClusterTextBytes + 1, 'a')); }), "at most 1048576 bytes"));
  Cluster c;
  c.set("a", 1000000);
  CHECK(contains(error_of([&] { c.set("b", 1); }), "the cluster would have 1000001 workers"));
  c.set("a", 5);  // replacing a count is not adding to it
  CHECK(c.total_workers() == 5);
  CHECK(contains(error_of([] { (void)sio::cluster_from_json(sio::Json{{"a", 3000000000LL}}); }), "from 0 to 1000000"));
  CHECK(contains(error_of([] { (void)sio::cluster_from_json(sio::Json{{"a", 18446744073709551615ULL}}); }),
                 "cluster[\"a\"] = 18446744073709551615"));
  CHECK(contains(error_of([] { (void)sio::cluster_from_json(sio::Json{{"a", 700000}, {"b", 700000}}); }), "1000000"));
}

TEST_CASE("catalogs are limited to 1,000 types and a quota of 100,000 per type") {
  Catalog catalog = presets::resnet110_catalog();
  catalog.instance_types[0].quota = kMaxQuota;
  catalog.validate();
  catalog.instance_types[0].quota = kMaxQuota + 1;
  CHECK(contains(error_of([&] { catalog.validate(); }), "instance_types[0].quota = 100001: must be at most 100000"));
  sio::Json json = sio::to_json(presets::resnet110_catalog());
  json["instance_types"][1]["quota"] = 1000000000;
  CHECK(contains(error_of([&] { (void)sio::catalog_from_json(json); }), "catalog.instance_types[1].quota = 1000000000"));
  json = sio::to_json(presets::resnet110_catalog());
  const sio::Json one = json["instance_types"][0];
  json["instance_types"] = sio::Json::array();
  for (int k = 0; k <= kMaxInstanceTypes; ++k) {
    sio::Json t = one;
    t["name"] = "x" + std::to_string(k) + ".large";
    json["instance_types"].push_back(t);
  }
  CHECK(contains(error_of([&] { (void)sio::catalog_from_json(json); }), "at most 1000 instance types"));
}

TEST_CASE("simulation scenarios and threads have documented maxima") {
  const PerformanceModel model(presets::resnet110_workload(), presets::resnet110_catalog());
  InterruptionOptions io_options;
  io_options.fallback_hazard_per_hour = 0.1;
  const InterruptionModel interruption(model, io_options);
  SimulateOptions options;
  options.scenarios = kMaxScenarios + 1;
  const Cluster cluster{{"p3.2xlarge", 2}};
  CHECK(contains(error_of([&] { (void)simulate(model, interruption, cluster, 0.8, 3000, options); }),
                 "options.scenarios = 10000001: must be from 1 to 10000000"));
  options.scenarios = 100;
  options.threads = kMaxThreads + 1;
  CHECK(contains(error_of([&] { (void)simulate(model, interruption, cluster, 0.8, 3000, options); }),
                 "options.threads = 257: must be from 0 (one per core) to 256"));
  options.threads = kMaxThreads;  // more threads than scenarios is fine: the pool shrinks to the work
  CHECK(simulate(model, interruption, cluster, 0.8, 3000, options).scenarios == 100);  options.threads = 1;
  options.scenarios = 1000;
  const Cluster big{{"p3.2xlarge", 10001}};  // 1000 x 10001 simulated workers > 1e7
  CHECK(contains(error_of([&] { (void)simulate(model, interruption, big, 0.8, 3000, options); }),
                 "scenarios x workers = 10001000 exceeds the maximum of 10000000"));
}

TEST_CASE("messages escape control characters, terminal escapes and bytes that are not UTF-8") {
  CHECK(detail::escape_for_message("plain ascii, é and 日本") == "plain ascii, é and 日本");
  CHECK(detail::escape_for_message("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(detail::escape_for_message("\x1b[2J\x07\x7f") == "\\x1b[2J\\x07\\x7f");
  CHECK(detail::escape_for_message("\xC2\x9B" "31m") == "\\u009b31m");   // C1 CSI
  CHECK(detail::escape_for_message("\xff\xC0\xAF") == "\\xff\\xc0\\xaf");  // invalid and overlong
  CHECK(detail::escape_for_message("\xED\xA0\x80") == "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  CHECK(detail::is_valid_utf8("é日本\xF0\x9F\x98\x80"));
  CHECK(detail::is_printable_utf8("é日本\xF0\x9F\x98\x80 ok"));
  CHECK_FALSE(detail::is_printable_utf8("a\tb"));
  CHECK_FALSE(detail::is_printable_utf8("\xC2\x9B"));
  CHECK_FALSE(detail::is_printable_utf8("\xff"));
  CHECK_FALSE(detail::is_valid_utf8("\xE6\x97"));
  const std::string message = error_of([] { detail::fail("f", "field\n", "\x1b]0;pwned\x07", "why"); });
  CHECK(message == "f: field\\n = \\x1b]0;pwned\\x07: why");
}
