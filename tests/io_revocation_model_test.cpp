// SPDX-License-Identifier: MIT
// The revocation-model document: every field written (non-finite as null), read back exactly, and the
// reader's refusals (unknown keys, another kind or schema_version, out-of-range numbers), each naming the
// key path; market states (regimes, each pool's in_state) written, read back and checked against the pools
// and regions.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/io/revocation_model_json.hpp>
#include <spotdnn/io/trace_readers.hpp>
#include <spotdnn/revocation/fit_revocations.hpp>

using namespace spotdnn;

namespace {

UpInterval up(double start_s, double end_s, bool preempted, int slot = 0, bool age_known = true) {
  UpInterval u;
  u.start_s = start_s;
  u.end_s = end_s;
  u.preempted = preempted;
  u.slot = slot;
  u.age_known = age_known;
  return u;
}

/// A model with every part: two zones of one region (clustering, a region), a counts pool (gang), an
/// events pool, an interval of unknown age (a note), empty bins (infinite upper bounds).
RevocationModel sample_model() {
  PoolTrace a;
  a.pool = {"r5.16xlarge", "us-east-1a"};
  a.source = "us-east-1a_intel_64.json";
  a.observed_from = "2023-04-19";
  a.tick_s = 10;
  a.span_s = 10000;
  a.slots = 2;
  a.up = {up(0, 1000, true, 0, false), up(100, 1000, true, 1), up(1500, 10000, false, 0), up(2000, 5000, true, 1),
          up(6000, 10000, false, 1)};
  PoolTrace b = a;
  b.pool.zone = "us-east-1b";
  b.source = "us-east-1b_intel_64.json";
  b.up = {up(100, 1000, true, 0), up(100, 10000, false, 1), up(1200, 5100, true, 0), up(5500, 10000, false, 0)};
  PoolTrace c;
  c.pool = {"p3.2xlarge", "us-east-2b"};
  c.kind = TraceKind::counts;
  c.tick_s = 10;
  c.span_s = 100;
  c.slots = 2;
  c.up = {up(0, 60, true, 0, false), up(20, 50, true, 1), up(80, 100, false, 0)};
  PoolTrace e;
  e.pool = {"g4dn.xlarge", "us-west-2a"};
  e.kind = TraceKind::events;
  e.slotted = false;
  e.tick_s = 60;
  e.span_s = 6000;
  e.slots = 2;
  e.up = {up(0, 1200, true, -1, false), up(0, 6000, false, -1, false), up(1500, 6000, false, -1)};
  return fit_revocations({a, b, c, e});
}

std::string written(const RevocationModel& m) { return io::to_json(m).dump(); }

/// The message of the refusal of `json`, or "" when it was read.
std::string refusal(const io::Json& json) {
  try {
    (void)io::revocation_model_from_json(json);
  } catch (const spotdnn::invalid_argument& e) {
    return e.what();
  }
  return "";
}

/// The sample document with one change.
io::Json changed(const std::function<void(io::Json&)>& change) {
  io::Json j = io::to_json(sample_model());
  change(j);
  return j;
}

/// The three r5.16xlarge lifetimes traces of us-east-1b, c and d from 2023-04-19 (16,090 ticks of 34 s
/// each) fitted together: calm and stormy states win in us-east-1 (fitted once).
const RevocationModel& regimes_model() {
  static const RevocationModel model = [] {
    const std::string folder = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/fixtures/traces/preemption/1-node/aws-04-19-2023/";
    const std::vector<PoolTrace> traces = io::read_trace_files(
        {folder + "us-east-1b_intel_64.json", folder + "us-east-1c_intel_64.json", folder + "us-east-1d_intel_64.json"},
        io::TraceFileOptions{});
    return fit_revocations(traces);
  }();
  return model;
}

/// The document of regimes_model() with one change.
io::Json regimes_changed(const std::function<void(io::Json&)>& change) {
  io::Json j = io::to_json(regimes_model());
  change(j);
  return j;
}

/// sample_model() with market states in us-east-2 for its counts pool (p3.2xlarge@us-east-2b, a gang),
/// made by hand: the second state's start state, wait and gang differ from the first's.
RevocationModel sample_model_with_regimes() {
  RevocationModel m = sample_model();
  PoolModel& pool = m.pools[2];
  REQUIRE(pool.gang.has_value());
  for (int s = 0; s < 2; ++s) {
    PoolInMarketState in;
    in.observed_s = s == 0 ? 70.0 : 30.0;
    in.start = pool.start;
    in.replacement_wait = pool.replacement_wait;
    in.gang = pool.gang;
    in.shock_rate_per_hour = s == 0 ? 0.0 : 1.0 / 3.0;
    if (s == 1) {
      in.start.up_share = 0.1;
      in.gang->count_share = {0.7, 0.2, 0.1};
    }
    pool.in_state.push_back(in);
  }
  MarketRegimes r;
  r.region = "us-east-2";
  r.pools = {pool.pool.name()};
  r.bin_s = 1800;
  r.bins = 12;
  r.log_likelihood = 3.25;  // may be positive: the Poisson terms without their constant
  r.one_state_log_likelihood = -0.1;
  r.states = {{0.7, 0.1, 1.9, 0.08}, {0.3, 2.1, 0.4, 1.0 / 7.0}};
  m.regimes.push_back(r);
  return m;
}

}  // namespace

TEST_CASE("a revocation model is written with its kind, version and every field, infinities as null") {
  const RevocationModel m = sample_model();
  const io::Json j = io::to_json(m);
  CHECK(j.at("kind") == "spotdnn.revocations");
  CHECK(j.at("schema_version") == 1);
  CHECK(j.at("burst_window_s") == 180.0);
  CHECK(j.at("age_bin_edges_s").size() == 8);
  REQUIRE(j.at("pools").size() == 4);
  const io::Json& pool = j.at("pools")[0];
  CHECK(pool.at("type") == "r5.16xlarge");
  CHECK(pool.at("kind") == "lifetimes");
  CHECK(pool.at("observed_from") == "2023-04-19");
  CHECK(pool.at("hazard_by_age").back().at("to_age_s").is_null());
  CHECK(pool.at("hazard_by_age").back().at("upper_per_hour").is_null());  // no exposure at 16 h
  CHECK(pool.at("gang").is_null());
  CHECK(pool.at("start").at("age_quantiles_s").size() == 101);
  CHECK(j.at("pools")[2].at("gang").at("count_share").size() == 3);
  CHECK(j.at("pools")[3].at("kind") == "events");
  REQUIRE(j.at("regions").size() == 1);
  CHECK(j.at("regions")[0].at("zones").size() == 2);
  CHECK(j.at("assumptions").size() >= 3);
}

TEST_CASE("a revocation model reads back exactly: the same fields and the same text") {
  const RevocationModel m = sample_model();
  const std::string text = written(m);
  const RevocationModel back = io::revocation_model_from_json(io::parse_json(text, "model.json"));
  CHECK(written(back) == text);
  REQUIRE(back.pools.size() == m.pools.size());
  for (std::size_t k = 0; k < m.pools.size(); ++k) {
    const PoolModel &x = m.pools[k], &y = back.pools[k];
    CHECK(x.pool == y.pool);
    CHECK(x.kind == y.kind);
    CHECK(x.exposure_s == y.exposure_s);
    CHECK(x.parametric.weibull_shape == y.parametric.weibull_shape);
    CHECK(x.parametric.weibull_scale_s == y.parametric.weibull_scale_s);  // +inf for a pool without preemptions too
    CHECK(x.start.age_quantiles_s == y.start.age_quantiles_s);
    CHECK(x.start.wait.quantiles_s == y.start.wait.quantiles_s);
    CHECK(x.replacement_wait.none_share == y.replacement_wait.none_share);
    CHECK(x.clustering.co_preemption_probability == y.clustering.co_preemption_probability);
    CHECK(x.gang.has_value() == y.gang.has_value());
    for (std::size_t b = 0; b < x.hazard_by_age.size(); ++b) {
      CHECK(x.hazard_by_age[b].upper_per_hour == y.hazard_by_age[b].upper_per_hour);
      CHECK(x.trigger_hazard_by_age[b].lower_per_hour == y.trigger_hazard_by_age[b].lower_per_hour);
    }
  }
  CHECK(back.regions[0].share_by_chance == m.regions[0].share_by_chance);
  CHECK(back.assumptions == m.assumptions);
}

TEST_CASE("a revocation model file is read with the file named in errors") {
  const std::string path = std::string(SPOTDNN_TEST_BINARY_DIR) + "/io_revocation_model_test.json";
  {
    std::ofstream out(path);
    out << written(sample_model());
  }
  CHECK(written(io::read_revocation_model_file(path)) == written(sample_model()));
  {
    std::ofstream out(path);
    out << R"({"kind": "spotdnn.plan", "schema_version": 2})";
  }
  std::string message;
  try {
    (void)io::read_revocation_model_file(path);
  } catch (const spotdnn::invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("read_revocation_model_file(" + path + "): revocations.kind") == 0);
  std::remove(path.c_str());
}

TEST_CASE("the reader refuses another kind or schema version, saying what to do") {
  CHECK(refusal(io::Json::array()).find("not a spotdnn revocation model") != std::string::npos);
  CHECK(refusal(changed([](io::Json& j) { j.erase("kind"); })).find("revocations.kind = missing") != std::string::npos);
  CHECK(refusal(changed([](io::Json& j) { j["kind"] = "spotdnn.plan"; })).find("expected \"spotdnn.revocations\"") != std::string::npos);
  CHECK(refusal(changed([](io::Json& j) { j["schema_version"] = 2; })).find("written by a newer spotdnn") != std::string::npos);
  CHECK(refusal(changed([](io::Json& j) { j["schema_version"] = 0; })).find("fit the model again") != std::string::npos);
  CHECK(refusal(changed([](io::Json& j) { j["schema_version"] = "1"; })).find("expected the whole number 1") != std::string::npos);
  CHECK(refusal(changed([](io::Json& j) { j.erase("schema_version"); })).find("schema_version = missing") != std::string::npos);
}

TEST_CASE("the reader refuses unknown keys, missing keys and out-of-range numbers, naming the key path") {
  struct Case {
    const char* what;
    std::function<void(io::Json&)> change;
    const char* expected;  // part of the message
  };
  const std::vector<Case> cases = {
      {"unknown top-level key", [](io::Json& j) { j["extra"] = 1; }, "revocations.extra"},
      {"unknown pool key", [](io::Json& j) { j["pools"][0]["extra"] = 1; }, "revocations.pools[0].extra"},
      {"missing pool key", [](io::Json& j) { j["pools"][0].erase("start"); }, "revocations.pools[0].start = missing"},
      {"negative hazard", [](io::Json& j) { j["pools"][0]["hazard_by_age"][1]["hazard_per_hour"] = -0.1; }, "hazard_by_age[1].hazard_per_hour"},
      {"negative events", [](io::Json& j) { j["pools"][0]["hazard_by_age"][1]["events"] = -1; }, "hazard_by_age[1].events"},
      {"lower above upper", [](io::Json& j) { j["pools"][0]["hazard_by_age"][1]["lower_per_hour"] = 1e9; }, "must not exceed upper_per_hour"},
      {"null hazard", [](io::Json& j) { j["pools"][0]["hazard_by_age"][1]["hazard_per_hour"] = nullptr; }, "expected a number"},
      {"bin edge not the document's", [](io::Json& j) { j["pools"][0]["hazard_by_age"][1]["from_age_s"] = 601; }, "age_bin_edges_s[1]"},
      {"last bin closed", [](io::Json& j) { j["pools"][0]["hazard_by_age"][7]["to_age_s"] = 1e6; }, "expected null"},
      {"bins missing", [](io::Json& j) { j["pools"][0]["trigger_hazard_by_age"].erase(0); }, "one bin per age_bin_edges_s"},
      {"share above 1", [](io::Json& j) { j["pools"][0]["start"]["up_share"] = 1.5; }, "start.up_share"},
      {"co-preemption above 1", [](io::Json& j) { j["regions"][0]["co_preemption_probability"] = 2; }, "regions[0].co_preemption_probability"},
      {"quantiles short", [](io::Json& j) { j["pools"][0]["start"]["age_quantiles_s"].erase(0); }, "expected 101 quantiles"},
      {"quantiles decreasing", [](io::Json& j) { j["pools"][0]["start"]["age_quantiles_s"][100] = 0; }, "age_quantiles_s[100]"},
      {"quantile negative", [](io::Json& j) { j["pools"][0]["replacement_wait"]["quantiles_s"][0] = -1; }, "replacement_wait.quantiles_s[0]"},
      {"none came above observed", [](io::Json& j) { j["pools"][0]["start"]["wait"]["none_came"] = 1000000; }, "must not exceed observed"},
      {"gang shares off", [](io::Json& j) { j["pools"][2]["gang"]["count_share"][0] = 0.3; }, "sum to 1"},
      {"gang shares count", [](io::Json& j) { j["pools"][2]["gang"]["count_share"].erase(0); }, "requested + 1"},
      {"edges not increasing", [](io::Json& j) { j["age_bin_edges_s"][2] = 600; }, "age_bin_edges_s[2]"},
      {"edges not from 0", [](io::Json& j) { j["age_bin_edges_s"][0] = 1; }, "start at 0"},
      {"level 1", [](io::Json& j) { j["confidence_level"] = 1; }, "confidence_level"},
      {"window 0", [](io::Json& j) { j["pools"][0]["clustering"]["window_s"] = 0; }, "clustering.window_s"},
      {"unknown kind of trace", [](io::Json& j) { j["pools"][0]["kind"] = "probes"; }, "expected lifetimes, availability"},
      {"unknown best law", [](io::Json& j) { j["pools"][0]["parametric"]["best_by_aic"] = "gamma"; }, "best_by_aic"},
      {"pool twice", [](io::Json& j) { j["pools"].push_back(j["pools"][0]); }, "given once"},
      {"region of one zone", [](io::Json& j) { j["regions"][0]["zones"].erase(1); }, "at least two zones"},
      {"empty type", [](io::Json& j) { j["pools"][0]["type"] = ""; }, "pools[0].type"},
      {"control character in zone", [](io::Json& j) { j["pools"][0]["zone"] = "us-east-1a\x1b[31m"; }, "control characters"},
      {"to before from", [](io::Json& j) { j["pools"][0]["to_s"] = -1; }, "must not come before from_s"},
      {"count too large", [](io::Json& j) { j["pools"][0]["instances"] = 3000000000LL; }, "pools[0].instances"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const std::string message = refusal(changed(c.change));
    CHECK(message.find(c.expected) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.rfind("revocation_model_from_json: ", 0) == 0);
  }
  CHECK(refusal(io::to_json(sample_model())).empty());  // the unchanged document is read
}

TEST_CASE("every model fitted to random traces of every kind is one the strict reader accepts, and round-trips") {
  // 200 fits (seed 7) of 1-4 pools over two regions: random kinds, slots, up and down runs, clock offsets,
  // age bins, windows and fit periods.
  std::mt19937_64 rng(7);
  const auto pick = [&](int low, int high) { return low + int(rng() % std::uint64_t(high - low + 1)); };
  const char* zones[] = {"us-east-1a", "us-east-1b", "us-east-1c", "us-west-2a"};
  const TraceKind kinds[] = {TraceKind::lifetimes, TraceKind::availability, TraceKind::counts, TraceKind::events};
  int fitted = 0;
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    std::vector<PoolTrace> traces;
    const int pools = pick(1, 4);
    for (int k = 0; k < pools; ++k) {
      PoolTrace t;
      t.pool = {pick(0, 1) == 0 ? "p3.2xlarge" : "r5.16xlarge", zones[pick(0, 3)]};
      t.kind = kinds[pick(0, 3)];
      t.tick_s = 10;
      const int ticks = pick(20, 3000);
      t.span_s = 10.0 * ticks;
      t.slots = t.kind == TraceKind::lifetimes || t.kind == TraceKind::availability ? 1 : pick(1, 5);
      t.slotted = t.kind != TraceKind::events;
      t.clock_offset_s = 10.0 * pick(0, 500);
      for (int slot = 0; slot < t.slots; ++slot) {
        int at = pick(0, 1) == 0 ? 0 : pick(1, 50);
        while (at < ticks) {
          const int length = pick(1, pick(0, 3) == 0 ? 20 : 400);
          const int end = std::min(ticks, at + length);
          t.up.push_back(up(10.0 * at, 10.0 * end, end < ticks, t.slotted ? slot : -1, at > 0));
          at = end + pick(0, 3) * pick(0, 30);
        }
      }
      std::stable_sort(t.up.begin(), t.up.end(), [](const UpInterval& a, const UpInterval& b) { return a.start_s < b.start_s; });
      traces.push_back(t);
    }
    // A pool given twice must keep one kind: give repeated pools the first one's kind and slots rule.
    for (std::size_t k = 1; k < traces.size(); ++k) {
      for (std::size_t j = 0; j < k; ++j) {
        if (traces[j].pool == traces[k].pool) traces[k].pool.type = "m5.large" + std::to_string(k);
      }
    }
    RevocationFitOptions options;
    if (pick(0, 1) == 0) options.age_bin_edges_s = {0, 10.0 * pick(1, 100), 10.0 * pick(101, 1000)};
    options.burst_window_s = 10.0 * pick(1, 40);
    if (pick(0, 2) == 0) options.to_s = 10.0 * pick(200, 400);
    if (pick(0, 2) == 0) options.from_s = 10.0 * pick(0, 100);
    RevocationModel model;
    try {
      model = fit_revocations(traces, options);
    } catch (const spotdnn::invalid_argument& e) {
      // Only a window that leaves a pool nothing observed may be refused here.
      CHECK(std::string(e.what()).find("nothing observed") != std::string::npos);
      continue;
    }
    const std::string text = written(model);
    RevocationModel back;
    REQUIRE_NOTHROW(back = io::revocation_model_from_json(io::parse_json(text, "fitted")));
    CHECK(written(back) == text);
    ++fitted;
  }
  CHECK(fitted > 150);
}

TEST_CASE("the three us-east-1 fixture traces fitted together give market states, written after the regions") {
  const RevocationModel& m = regimes_model();
  REQUIRE(m.regimes.size() == 1);
  const io::Json j = io::to_json(m);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  REQUIRE(keys.size() == 9);
  CHECK(keys[7] == "regions");
  CHECK(keys[8] == "regimes");
  const io::Json& r = j.at("regimes")[0];
  CHECK(r.at("region") == "us-east-1");
  CHECK(r.at("pools") == io::Json::array({"r5.16xlarge@us-east-1b", "r5.16xlarge@us-east-1c", "r5.16xlarge@us-east-1d"}));
  CHECK(r.at("states").size() == 2);
  CHECK(r.at("joint_up_share_by_state").size() == 2);
  CHECK(r.at("joint_up_share_by_state")[0].size() == 8);  // 2^3 patterns of the three pools
  for (const io::Json& pool : j.at("pools")) {
    REQUIRE(pool.at("in_state").size() == 2);
    CHECK(pool.at("in_state")[0].at("start").at("wait").contains("none_share"));
    CHECK(pool.at("in_state")[1].at("gang").is_null());  // lifetimes: no gang
  }
}

TEST_CASE("a model with market states reads back exactly: the same figures and the same text") {
  for (const RevocationModel& m : {regimes_model(), sample_model_with_regimes()}) {
    const std::string text = io::to_json(m).dump(2);
    const RevocationModel back = io::revocation_model_from_json(io::parse_json(text, "model.json"));
    CHECK(io::to_json(back).dump(2) == text);
    REQUIRE(back.regimes.size() == m.regimes.size());
    for (std::size_t k = 0; k < m.regimes.size(); ++k) {
      const MarketRegimes &x = m.regimes[k], &y = back.regimes[k];
      CHECK(x.region == y.region);
      CHECK(x.pools == y.pools);
      CHECK(x.bin_s == y.bin_s);
      CHECK(x.bins == y.bins);
      CHECK(x.log_likelihood == y.log_likelihood);
      CHECK(x.one_state_log_likelihood == y.one_state_log_likelihood);
      REQUIRE(y.states.size() == 2);
      for (std::size_t s = 0; s < 2; ++s) {
        CHECK(x.states[s].time_share == y.states[s].time_share);
        CHECK(x.states[s].hazard_multiplier == y.states[s].hazard_multiplier);
        CHECK(x.states[s].arrival_multiplier == y.states[s].arrival_multiplier);
        CHECK(x.states[s].leave_rate_per_hour == y.states[s].leave_rate_per_hour);
      }
      CHECK(x.joint_up_share_by_state == y.joint_up_share_by_state);
    }
    REQUIRE(back.pools.size() == m.pools.size());
    for (std::size_t k = 0; k < m.pools.size(); ++k) {
      REQUIRE(back.pools[k].in_state.size() == m.pools[k].in_state.size());
      for (std::size_t s = 0; s < m.pools[k].in_state.size(); ++s) {
        const PoolInMarketState &x = m.pools[k].in_state[s], &y = back.pools[k].in_state[s];
        CHECK(x.observed_s == y.observed_s);
        CHECK(x.start.up_share == y.start.up_share);
        CHECK(x.start.age_quantiles_s == y.start.age_quantiles_s);
        CHECK(x.start.wait.quantiles_s == y.start.wait.quantiles_s);
        CHECK(x.replacement_wait.quantiles_s == y.replacement_wait.quantiles_s);
        CHECK(x.shock_rate_per_hour == y.shock_rate_per_hour);
        REQUIRE(x.gang.has_value() == y.gang.has_value());
        if (x.gang) CHECK(x.gang->count_share == y.gang->count_share);
      }
    }
  }
  // The hand-made model's second state keeps its own gang.
  const RevocationModel back = io::revocation_model_from_json(io::to_json(sample_model_with_regimes()));
  REQUIRE(back.pools[2].in_state.size() == 2);
  CHECK(back.pools[2].in_state[1].gang->count_share == std::vector<double>{0.7, 0.2, 0.1});
  CHECK(back.pools[0].in_state.empty());
}

TEST_CASE("a document written before market states (no regimes, no in_state) still reads, and is written with them empty") {
  io::Json old = io::to_json(sample_model());
  old.erase("regimes");
  for (io::Json& pool : old.at("pools")) pool.erase("in_state");
  RevocationModel m;
  REQUIRE_NOTHROW(m = io::revocation_model_from_json(old));
  CHECK(m.regimes.empty());
  for (const PoolModel& p : m.pools) CHECK(p.in_state.empty());
  CHECK(written(m) == written(sample_model()));
  const io::Json again = io::to_json(m);
  CHECK(again.at("regimes") == io::Json::array());
  CHECK(again.at("pools")[0].at("in_state") == io::Json::array());
  // The hostile matrix's document with market states (fitted by `spotdnn revocations fit` from the three
  // fixture traces) reads and is written again as the same text.
  const std::string path = std::string(SPOTDNN_TEST_SOURCE_DIR) + "/tests/hostile/revocations_model_regimes.json";
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const RevocationModel fixture = io::read_revocation_model_file(path);
  CHECK(fixture.regimes.size() == 1);
  CHECK(io::to_json(fixture).dump(2) + "\n" == text);
}

TEST_CASE("the reader refuses bad market states and in_state entries, naming the key path") {
  struct Case {
    const char* what;
    std::function<void(io::Json&)> change;
    const char* path;  // the key path named
    const char* why;   // part of the message
  };
  const std::vector<Case> cases = {
      {"regimes an object", [](io::Json& j) { j["regimes"] = io::Json::object(); }, "revocations.regimes", "expected an array"},
      {"one state", [](io::Json& j) { j["regimes"][0]["states"].erase(1); }, "revocations.regimes[0].states", "expected 2"},
      {"three states", [](io::Json& j) { j["regimes"][0]["states"].push_back(j["regimes"][0]["states"][0]); }, "regimes[0].states", "expected 2"},
      {"time share 2", [](io::Json& j) { j["regimes"][0]["states"][0]["time_share"] = 2; }, "regimes[0].states[0].time_share", "from 0 to 1"},
      {"time shares both 0", [](io::Json& j) { j["regimes"][0]["states"][0]["time_share"] = 0; j["regimes"][0]["states"][1]["time_share"] = 0; },
       "regimes[0].states[1].time_share", "must not both be 0"},
      {"negative hazard multiplier", [](io::Json& j) { j["regimes"][0]["states"][1]["hazard_multiplier"] = -0.5; },
       "regimes[0].states[1].hazard_multiplier", "must not be negative"},
      {"null arrival multiplier", [](io::Json& j) { j["regimes"][0]["states"][0]["arrival_multiplier"] = nullptr; },
       "regimes[0].states[0].arrival_multiplier", "expected a number"},
      {"leave rate above 3600", [](io::Json& j) { j["regimes"][0]["states"][0]["leave_rate_per_hour"] = 3601; },
       "regimes[0].states[0].leave_rate_per_hour", "from 0 to 3600"},
      {"unknown state key", [](io::Json& j) { j["regimes"][0]["states"][0]["extra"] = 1; }, "regimes[0].states[0].extra", "unknown key"},
      {"bin 0 s", [](io::Json& j) { j["regimes"][0]["bin_s"] = 0; }, "regimes[0].bin_s", "greater than zero"},
      {"fractional bins", [](io::Json& j) { j["regimes"][0]["bins"] = 1.5; }, "regimes[0].bins", "whole number"},
      {"bins missing", [](io::Json& j) { j["regimes"][0].erase("bins"); }, "regimes[0].bins", "missing"},
      {"log-likelihood a string", [](io::Json& j) { j["regimes"][0]["log_likelihood"] = "-5"; }, "regimes[0].log_likelihood", "expected a number"},
      {"empty region", [](io::Json& j) { j["regimes"][0]["region"] = ""; }, "regimes[0].region", ""},
      {"region twice", [](io::Json& j) { j["regimes"].push_back(j["regimes"][0]); }, "regimes[1].region", "given once"},
      {"unknown pool", [](io::Json& j) { j["regimes"][0]["pools"][0] = "x9.huge@us-east-1b"; }, "regimes[0].pools[0]", "not a pool of the document"},
      {"pool of another region", [](io::Json& j) { j["regimes"][0]["region"] = "us-west-2"; }, "regimes[0].pools[0]", "in region \"us-east-1\""},
      {"pool listed twice", [](io::Json& j) { j["regimes"][0]["pools"].push_back(j["regimes"][0]["pools"][1]); }, "regimes[0].pools[3]", "listed once"},
      {"listed pool without in_state", [](io::Json& j) { j["pools"][1]["in_state"] = io::Json::array(); }, "regimes[0].pools[1]", "needs its in_state"},
      {"in_state of a pool not listed", [](io::Json& j) { j["regimes"][0]["pools"].erase(2); }, "revocations.pools[2].in_state", "not listed"},
      {"in_state without regimes", [](io::Json& j) { j.erase("regimes"); }, "revocations.pools[0].in_state", "not listed"},
      {"in_state of 1", [](io::Json& j) { j["pools"][0]["in_state"].erase(1); }, "revocations.pools[0].in_state", "expected 2"},
      {"in_state of 3", [](io::Json& j) { j["pools"][0]["in_state"].push_back(j["pools"][0]["in_state"][0]); }, "pools[0].in_state", "expected 2"},
      {"negative observed time", [](io::Json& j) { j["pools"][0]["in_state"][0]["observed_s"] = -1; }, "pools[0].in_state[0].observed_s", "must not be negative"},
      {"shock rate above 3600", [](io::Json& j) { j["pools"][1]["in_state"][1]["shock_rate_per_hour"] = 1e9; },
       "pools[1].in_state[1].shock_rate_per_hour", "from 0 to 3600"},
      {"start wait share 2", [](io::Json& j) { j["pools"][1]["in_state"][1]["start"]["wait"]["none_share"] = 2; },
       "revocations.pools[1].in_state[1].start.wait.none_share", "from 0 to 1"},
      {"replacement quantiles decreasing", [](io::Json& j) { j["pools"][0]["in_state"][0]["replacement_wait"]["quantiles_s"][0] = 1e12; },
       "pools[0].in_state[0].replacement_wait.quantiles_s[1]", "must not decrease"},
      {"gang shares off", [](io::Json& j) { j["pools"][2]["in_state"][1]["gang"] = {{"requested", 1}, {"count_share", {0.5, 0.6}}}; },
       "pools[2].in_state[1].gang.count_share", "sum to 1"},
      {"unknown in_state key", [](io::Json& j) { j["pools"][0]["in_state"][1]["extra"] = 1; }, "pools[0].in_state[1].extra", "unknown key"},
      {"one joint list", [](io::Json& j) { j["regimes"][0]["joint_up_share_by_state"].erase(1); }, "regimes[0].joint_up_share_by_state", "one per state"},
      {"joint list of 4", [](io::Json& j) { j["regimes"][0]["joint_up_share_by_state"][1] = {0.25, 0.25, 0.25, 0.25}; },
       "regimes[0].joint_up_share_by_state[1]", "as many as the region's joint_up_share (8)"},
      {"joint share above 1", [](io::Json& j) { j["regimes"][0]["joint_up_share_by_state"][1][0] = 1.5; },
       "regimes[0].joint_up_share_by_state[1][0]", "from 0 to 1"},
      {"joint shares off", [](io::Json& j) { j["regimes"][0]["joint_up_share_by_state"][0][0] = 0.5; },
       "regimes[0].joint_up_share_by_state[0]", "sum to 1"},
      {"joint lists without the region's pattern", [](io::Json& j) { j["regions"][0]["joint_pools"] = j["regions"][0]["joint_up_share"] = io::Json::array(); },
       "regimes[0].joint_up_share_by_state", "no joint up pattern"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const std::string message = refusal(regimes_changed(c.change));
    CAPTURE(message);
    CHECK(message.find(std::string(c.path) + " = ") != std::string::npos);
    CHECK(message.find(c.why) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.rfind("revocation_model_from_json: revocations.", 0) == 0);
  }
  CHECK(refusal(io::to_json(regimes_model())).empty());  // the unchanged documents are read
  CHECK(refusal(io::to_json(sample_model_with_regimes())).empty());
}
