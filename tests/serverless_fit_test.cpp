// SPDX-License-Identifier: MIT
// The serverless profile fit (serverless/profile_fit.hpp): it recovers known a, b, m, k1, k2 from synthetic
// Lambda traces with and without noise (intervals cover the truth), says not_identifiable when the data
// cannot separate the coefficients, and the trace CSV reader and profile document round-trip and refuse
// hostile input naming the line, field and value.
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <ceres/jet.h>

#include <spotdnn/fit.hpp>
#include <spotdnn/io/serverless_profile_json.hpp>
#include <spotdnn/io/serverless_trace_csv.hpp>

#include <doctest/doctest.h>

// glog (pulled in by Ceres) defines CHECK as an abort-on-failure assertion; use doctest's.
#undef CHECK
#define CHECK DOCTEST_CHECK

#include "support/error_of.hpp"

using namespace spotdnn;
using namespace spotdnn::serverless;

namespace {

struct Truth {
  double a = 60, b = 8, m = 200, k1 = 20, k2 = -0.8;
};

const std::vector<double> kBatches = {8, 16, 32, 64, 128};
const std::vector<double> kMemories = {512, 1024, 1536, 2048, 2560, 3008};

/// Train times at every batch × memory, transform times once per memory; Gaussian noise of `noise` times the
/// time (relative) or, with `absolute`, of `noise` times the mean time of the part (the same for every row).
ServerlessTrace synthetic_trace(double noise, unsigned seed = 7, bool absolute = false, const Truth& t = {}) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  ServerlessTrace trace;
  for (double memory : kMemories) {
    for (double batch : kBatches) {
      ServerlessSample s;
      s.batch = batch;
      s.memory_mb = memory;
      const double f = train_time_s<double>(batch, memory, t.a, t.b, t.m);
      s.train_time_s = absolute ? f + noise * 2.0 * gauss(rng) : f * (1 + noise * gauss(rng));
      trace.samples.push_back(s);
    }
    ServerlessSample s;
    s.memory_mb = memory;
    const double f = transform_time_s<double>(memory, t.k1, t.k2);
    s.transform_time_s = absolute ? f + noise * 0.04 * gauss(rng) : f * (1 + noise * gauss(rng));
    trace.samples.push_back(s);
  }
  return trace;
}

ServerlessProfile base_profile() {
  ServerlessProfile p;
  p.name = "resnet50";
  p.model_size_mb = 97.5;
  p.samples_per_epoch = 50000;
  return p;
}

void check_covers(const FitResult& fit, const char* name, double truth) {
  const FitParameter* p = fit.find(name);
  REQUIRE(p != nullptr);
  INFO(name << " = " << p->value << " [" << p->ci95_low << ", " << p->ci95_high << "], truth " << truth);
  CHECK(p->ci95_low <= truth);
  CHECK(truth <= p->ci95_high);
  CHECK(p->standard_error > 0);
}

std::string to_csv(const ServerlessTrace& trace) {
  std::ostringstream csv;
  csv.precision(17);
  csv << "batch,memory_mb,train_time_s,transform_time_s\n";
  for (const ServerlessSample& s : trace.samples) {
    if (s.batch) csv << *s.batch;
    csv << ',' << s.memory_mb << ',';
    if (s.train_time_s) csv << *s.train_time_s;
    csv << ',';
    if (s.transform_time_s) csv << *s.transform_time_s;
    csv << '\n';
  }
  return csv.str();
}

}  // namespace

TEST_CASE("the function-time templates take ceres::Jet so the fit differentiates the planner's code") {
  using J = ceres::Jet<double, 3>;
  const J a(60.0, 0), b(8.0, 1), m(200.0, 2);
  const J t = train_time_s(J(32.0), J(1024.0), a, b, m);
  CHECK(t.a == doctest::Approx(60.0 * 40 / 1224).epsilon(1e-14));
  CHECK(t.v[0] == doctest::Approx(40.0 / 1224).epsilon(1e-14));        // ∂/∂a = (B + b)/(M + m)
  CHECK(t.v[1] == doctest::Approx(60.0 / 1224).epsilon(1e-14));        // ∂/∂b = a/(M + m)
  CHECK(t.v[2] == doctest::Approx(-60.0 * 40 / (1224.0 * 1224)).epsilon(1e-12));
  using J2 = ceres::Jet<double, 2>;
  const J2 f = transform_time_s(J2(1024.0), J2(20.0, 0), J2(-0.8, 1));
  CHECK(f.a == doctest::Approx(20 * std::pow(1024.0, -0.8)).epsilon(1e-14));
  CHECK(f.v[1] == doctest::Approx(20 * std::pow(1024.0, -0.8) * std::log(1024.0)).epsilon(1e-12));
}

TEST_CASE("the fit recovers a b m k1 k2 exactly from a noise-free trace") {
  const ServerlessFitResult fit = fit_serverless_profile(synthetic_trace(0.0), base_profile());
  INFO(fit.message);
  REQUIRE(fit.status == FitStatus::converged);
  CHECK(fit.profile.a == doctest::Approx(60).epsilon(1e-7));
  CHECK(fit.profile.b == doctest::Approx(8).epsilon(1e-7));
  CHECK(fit.profile.m == doctest::Approx(200).epsilon(1e-7));
  CHECK(fit.profile.k1 == doctest::Approx(20).epsilon(1e-7));
  CHECK(fit.profile.k2 == doctest::Approx(-0.8).epsilon(1e-7));
  CHECK(fit.profile.name == "resnet50");
  CHECK(fit.profile.model_size_mb == 97.5);
  CHECK(fit.train.r_squared == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(fit.parameters.size() == 5);
  CHECK(fit.observations == 36);
  CHECK(!fit.optimum_may_not_be_global);
  fit.profile.validate();
}

TEST_CASE("with 2 percent noise the 95 percent intervals cover the truth and the estimates are close") {
  // Relative residuals for noise proportional to the time, absolute ones for noise of one size.
  for (bool relative : {false, true}) {
    ServerlessFitOptions options;
    options.relative_residuals = relative;
    const ServerlessFitResult fit = fit_serverless_profile(synthetic_trace(0.02, 3, !relative), base_profile(), options);
    INFO("relative = " << relative << ": " << fit.message);
    REQUIRE(fit.status == FitStatus::converged);
    const Truth t;
    check_covers(fit, "a", t.a);
    check_covers(fit, "b", t.b);
    check_covers(fit, "m", t.m);
    check_covers(fit, "k1", t.k1);
    check_covers(fit, "k2", t.k2);
    CHECK(fit.profile.a == doctest::Approx(t.a).epsilon(0.1));
    CHECK(fit.profile.k2 == doctest::Approx(t.k2).epsilon(0.05));
    CHECK(fit.relative_residuals == relative);
    CHECK(fit.train.r_squared > 0.99);
  }
}

TEST_CASE("the intervals cover the truth in about 95 percent of 100 noisy traces") {
  for (bool relative : {false, true}) {
  ServerlessFitOptions options;
  options.relative_residuals = relative;
  int covered = 0, total = 0;
  for (unsigned seed = 1; seed <= 100; ++seed) {
    const ServerlessFitResult fit = fit_serverless_profile(synthetic_trace(0.03, seed, !relative), base_profile(), options);
    REQUIRE(fit.status == FitStatus::converged);
    const Truth t;
    const std::vector<std::pair<const char*, double>> truths = {{"a", t.a}, {"b", t.b}, {"m", t.m}, {"k1", t.k1}, {"k2", t.k2}};
    for (const auto& entry : truths) {
      const FitParameter* p = fit.find(entry.first);
      covered += p->ci95_low <= entry.second && entry.second <= p->ci95_high;
      ++total;
    }
  }
  INFO("relative = " << relative << ": " << covered << " of " << total << " intervals cover the truth");
  CHECK(covered >= int(0.90 * total));
  CHECK(covered <= int(0.99 * total));
  }
}

TEST_CASE("train times at one memory are not identifiable and say why") {
  ServerlessTrace trace;
  for (const ServerlessSample& s : synthetic_trace(0.0).samples) {
    if (s.memory_mb == 1024 || s.transform_time_s) trace.samples.push_back(s);
  }
  const ServerlessFitResult fit = fit_serverless_profile(trace, base_profile());
  CHECK(fit.status == FitStatus::not_identifiable);
  CHECK(fit.train.status == FitStatus::not_identifiable);
  CHECK(fit.message.find("a/(M + m)") != std::string::npos);
  CHECK(std::isnan(fit.profile.a));
  CHECK(std::isnan(fit.find("m")->standard_error));
  CHECK(fit.transform.status == FitStatus::converged);  // the other part still answers
  CHECK(fit.profile.k2 == doctest::Approx(-0.8).epsilon(1e-7));
}

TEST_CASE("train times at one batch leave b not identifiable") {
  ServerlessTrace trace;
  for (const ServerlessSample& s : synthetic_trace(0.0).samples) {
    if (!s.train_time_s || *s.batch == 32) trace.samples.push_back(s);
  }
  const ServerlessFitResult fit = fit_serverless_profile(trace, base_profile());
  CHECK(fit.status == FitStatus::not_identifiable);
  CHECK(fit.train.message.find("at least two batches") != std::string::npos);
}

TEST_CASE("too few distinct points or no transform times are not identifiable") {
  SUBCASE("two train points") {
    ServerlessTrace trace = synthetic_trace(0.0);
    ServerlessTrace small;
    for (const ServerlessSample& s : trace.samples) {
      const bool keep = s.transform_time_s || (s.memory_mb == 512 && *s.batch == 8) || (s.memory_mb == 1024 && *s.batch == 16);
      if (keep) small.samples.push_back(s);
      if (s.memory_mb == 1024 && s.batch && *s.batch == 16) small.samples.push_back(s);  // a repeat adds no point
    }
    const ServerlessFitResult fit = fit_serverless_profile(small, base_profile());
    CHECK(fit.train.status == FitStatus::not_identifiable);
    CHECK(fit.train.message.find("3 or more distinct") != std::string::npos);
  }
  SUBCASE("no transform times") {
    ServerlessTrace trace;
    for (const ServerlessSample& s : synthetic_trace(0.0).samples) {
      if (s.train_time_s) trace.samples.push_back(s);
    }
    const ServerlessFitResult fit = fit_serverless_profile(trace, base_profile());
    CHECK(fit.status == FitStatus::not_identifiable);
    CHECK(fit.train.status == FitStatus::converged);
    CHECK(fit.transform.message.find("no transform_time_s") != std::string::npos);
  }
  SUBCASE("transform times at one memory") {
    ServerlessTrace trace;
    for (const ServerlessSample& s : synthetic_trace(0.0).samples) {
      if (s.train_time_s || s.memory_mb == 2048) trace.samples.push_back(s);
    }
    const ServerlessFitResult fit = fit_serverless_profile(trace, base_profile());
    CHECK(fit.transform.status == FitStatus::not_identifiable);
    CHECK(fit.transform.message.find("k1 and k2 cannot be separated") != std::string::npos);
  }
}

TEST_CASE("train times that do not fall with memory are not identifiable instead of tiny error bars") {
  ServerlessTrace trace = synthetic_trace(0.0);
  for (ServerlessSample& s : trace.samples) {
    if (s.train_time_s) s.train_time_s = 0.01 * (*s.batch + 8);  // the same at every memory
  }
  const ServerlessFitResult fit = fit_serverless_profile(trace, base_profile());
  INFO(fit.message);
  CHECK(fit.train.status == FitStatus::not_identifiable);
  CHECK(std::isnan(fit.profile.a));
}

TEST_CASE("exactly as many points as coefficients gives estimates without error bars") {
  ServerlessTrace trace;
  const Truth t;
  for (const auto& [batch, memory] : std::vector<std::pair<double, double>>{{8, 512}, {64, 512}, {8, 2048}}) {
    ServerlessSample s;
    s.batch = batch;
    s.memory_mb = memory;
    s.train_time_s = train_time_s<double>(batch, memory, t.a, t.b, t.m);
    trace.samples.push_back(s);
  }
  for (double memory : {512.0, 2048.0}) {
    ServerlessSample s;
    s.memory_mb = memory;
    s.transform_time_s = transform_time_s<double>(memory, t.k1, t.k2);
    trace.samples.push_back(s);
  }
  const ServerlessFitResult fit = fit_serverless_profile(trace, base_profile());
  INFO(fit.message);
  REQUIRE(fit.status == FitStatus::converged);
  CHECK(fit.profile.m == doctest::Approx(200).epsilon(1e-6));
  CHECK(fit.profile.k1 == doctest::Approx(20).epsilon(1e-6));
  CHECK(std::isnan(fit.find("a")->standard_error));
  CHECK(fit.message.find("no error bars") != std::string::npos);
}

TEST_CASE("bad arguments to the fit throw naming the field") {
  ServerlessProfile bad = base_profile();
  bad.model_size_mb = 0;
  CHECK(test::error_of([&] { (void)fit_serverless_profile(synthetic_trace(0.0), bad); }).find("base.model_size_mb = 0") != std::string::npos);
  ServerlessTrace trace = synthetic_trace(0.0);
  trace.samples[3].memory_mb = 20000;
  CHECK(test::error_of([&] { (void)fit_serverless_profile(trace, base_profile()); }).find("samples[3]: memory_mb = 20000") != std::string::npos);
  ServerlessFitOptions options;
  options.starts = 0;
  CHECK(test::error_of([&] { (void)fit_serverless_profile(synthetic_trace(0.0), base_profile(), options); }).find("options.starts") !=
        std::string::npos);
  CHECK(test::error_of([&] { (void)fit_serverless_profile(ServerlessTrace{}, base_profile()); }).find("no samples") != std::string::npos);
}

TEST_CASE("the trace CSV reads columns by name in any order with either time left empty") {
  const ServerlessTrace trace = spotdnn::io::parse_serverless_trace(
      "transform_time_s,memory_mb,train_time_s,batch\n"
      ",512,1.5,32\n"
      "0.25,512,,\n"
      "\"0.20\", 1024 ,0.9,32\r\n",
      "t.csv");
  REQUIRE(trace.samples.size() == 3);
  CHECK(*trace.samples[0].batch == 32);
  CHECK(!trace.samples[0].transform_time_s);
  CHECK(!trace.samples[1].batch);
  CHECK(*trace.samples[1].transform_time_s == 0.25);
  CHECK(*trace.samples[2].transform_time_s == 0.2);
  CHECK(trace.samples[2].line == 4);
  const ServerlessTrace only_transform = spotdnn::io::parse_serverless_trace("memory_mb,transform_time_s\n512,0.3\n");
  CHECK(only_transform.samples.size() == 1);
}

TEST_CASE("a round trip through the CSV fits the same profile") {
  const ServerlessTrace trace = synthetic_trace(0.02);
  const ServerlessTrace read = spotdnn::io::parse_serverless_trace(to_csv(trace), "t.csv");
  const ServerlessFitResult a = fit_serverless_profile(trace, base_profile());
  const ServerlessFitResult b = fit_serverless_profile(read, base_profile());
  CHECK(a.profile.a == doctest::Approx(b.profile.a).epsilon(1e-12));
  CHECK(a.profile.k2 == doctest::Approx(b.profile.k2).epsilon(1e-12));
}

TEST_CASE("hostile trace CSV cells are refused naming the line the field and the value") {
  const std::string header = "batch,memory_mb,train_time_s,transform_time_s\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"32,512,abc,\n", "t.csv:2: train_time_s = \"abc\": not a number"},
      {"32,512,nan,\n", "t.csv:2: train_time_s = \"nan\": NaN is not a measurement"},
      {"32,512,inf,\n", "t.csv:2: train_time_s = \"inf\": infinity is not a measurement"},
      {"32,512,-1,\n", "t.csv:2: train_time_s = \"-1\": must not be negative"},
      {"32,512,0,\n", "t.csv:2: train_time_s = \"0\": must be greater than zero"},
      {"32,512,,0\n", "t.csv:2: transform_time_s = \"0\": must be greater than zero"},
      {"32,0.5,1,\n", "t.csv:2: memory_mb = \"0.5\": must be in 1..10240 MB"},
      {"32,10241,1,\n", "t.csv:2: memory_mb = \"10241\": must be in 1..10240 MB"},
      {"32,512.5,1,\n", "t.csv:2: memory_mb = \"512.5\": must be a whole number"},
      {"0,512,1,\n", "t.csv:2: batch = \"0\": must be a whole number of samples"},
      {"1.5,512,1,\n", "t.csv:2: batch = \"1.5\": must be a whole number of samples"},
      {",512,1,\n", "t.csv:2: batch = \"\": the cell is empty"},
      {"32,512,,\n", "t.csv:2: train_time_s = \"\": the row has no time"},
      {"32,512,1,2,3\n", "t.csv:2 = <row>: too many cells"},
      {"32,512,1e999,\n", "t.csv:2: train_time_s = \"1e999\": the number is out of range"},
      {"batch,memory_mb,train_time_s,transform_time_s\n", "the header row is repeated"},
  };
  for (const auto& entry : cases) {
    const std::string& rows = entry.first;
    const std::string& expected = entry.second;
    const std::string error = test::error_of([&] { (void)spotdnn::io::parse_serverless_trace(header + rows, "t.csv"); });
    INFO(rows << " -> " << error);
    CHECK(error.find(expected) != std::string::npos);
  }
  CHECK(test::error_of([] { (void)spotdnn::io::parse_serverless_trace("", "t.csv"); }).find("the file is empty") != std::string::npos);
  CHECK(test::error_of([&] { (void)spotdnn::io::parse_serverless_trace(header, "t.csv"); }).find("no data rows") != std::string::npos);
  CHECK(test::error_of([] { (void)spotdnn::io::parse_serverless_trace("batch,train_time_s\n1,1\n", "t.csv"); }).find("\"memory_mb\": missing column") !=
        std::string::npos);
  CHECK(test::error_of([] { (void)spotdnn::io::parse_serverless_trace("batch,memory_mb\n1,512\n", "t.csv"); }).find("give train_time_s, transform_time_s or both") !=
        std::string::npos);
  CHECK(test::error_of([] { (void)spotdnn::io::parse_serverless_trace("memory_mb,train_time_s\n512,1\n", "t.csv"); }).find("\"batch\": missing column") !=
        std::string::npos);
  CHECK(test::error_of([] { (void)spotdnn::io::parse_serverless_trace("memory_mb,bogus,train_time_s\n512,1,1\n", "t.csv"); }).find("unknown column") !=
        std::string::npos);
  CHECK(test::error_of([] { (void)spotdnn::io::parse_serverless_trace(std::string("memory_mb,transform_time_s\n512,0.\0 3\n", 37), "t.csv"); })
            .find("NUL") != std::string::npos);
}

TEST_CASE("a trace of more than the row limit is refused at the first row beyond it") {
  std::string csv = "memory_mb,transform_time_s\n";
  csv.reserve(kMaxServerlessTraceSamples * 10 + 100);
  for (std::size_t i = 0; i <= kMaxServerlessTraceSamples; ++i) csv += "512,0.3\n";
  const std::string error = test::error_of([&] { (void)spotdnn::io::parse_serverless_trace(csv, "t.csv"); });
  INFO(error);
  CHECK(error.find("t.csv:" + std::to_string(kMaxServerlessTraceSamples + 2) + " = <row>") != std::string::npos);
  CHECK(error.find("too large") != std::string::npos);
}

TEST_CASE("the profile document round-trips and carries the fit's intervals") {
  const ServerlessFitResult fit = fit_serverless_profile(synthetic_trace(0.02), base_profile());
  REQUIRE(fit.ok());
  const spotdnn::io::Json doc = spotdnn::io::serverless_profile_document(fit);
  CHECK(doc["kind"] == "spotdnn.serverless_profile");
  CHECK(doc["fit"]["status"] == "converged");
  CHECK(doc["fit"]["residuals"] == "absolute");
  CHECK(doc["fit"]["a"]["estimate"].get<double>() == fit.profile.a);
  CHECK(doc["fit"]["m"]["ci95_low"].get<double>() < fit.profile.m);
  CHECK(doc["fit"]["train"]["rows"] == 30);
  CHECK(doc["fit"]["transform"]["rmse_s"].get<double>() > 0);
  const ServerlessProfile back = spotdnn::io::serverless_profile_from_json(spotdnn::io::parse_json(doc.dump(), "doc"));
  CHECK(back.name == fit.profile.name);
  CHECK(back.a == fit.profile.a);  // doubles round-trip exactly
  CHECK(back.b == fit.profile.b);
  CHECK(back.m == fit.profile.m);
  CHECK(back.k1 == fit.profile.k1);
  CHECK(back.k2 == fit.profile.k2);
  CHECK(back.samples_per_epoch == 50000);
  // The plain document (no "fit") reads too, and unknown keys are ignored.
  spotdnn::io::Json plain = spotdnn::io::serverless_profile_document(fit.profile);
  plain["comment"] = "measured on 2025-01-01";
  CHECK(spotdnn::io::serverless_profile_from_json(plain).a == fit.profile.a);
}

TEST_CASE("the profile reader checks kind types and the profile strictly") {
  spotdnn::io::Json good = spotdnn::io::serverless_profile_document(fit_serverless_profile(synthetic_trace(0.0), base_profile()).profile);
  const auto error = [](const spotdnn::io::Json& j) {
    return test::error_of([&] { (void)spotdnn::io::serverless_profile_from_json(j, "profile", "read_serverless_profile_file(p.json)"); });
  };
  spotdnn::io::Json j = good;
  j["kind"] = "spotdnn.plan";
  CHECK(error(j).find("profile.kind = \"spotdnn.plan\": expected \"spotdnn.serverless_profile\"") != std::string::npos);
  j = good;
  j.erase("kind");
  CHECK(error(j).find("profile.kind = missing") != std::string::npos);
  j = good;
  j["a"] = "60";
  CHECK(error(j).find("profile.a = \"60\": expected a number") != std::string::npos);
  j = good;
  j["a"] = nullptr;
  CHECK(error(j).find("profile.a = null: expected a number") != std::string::npos);
  j = good;
  j["a"] = -1;
  CHECK(error(j).find("profile.a = -1: must be greater than zero") != std::string::npos);
  j = good;
  j["k1"] = -1;
  CHECK(error(j).find("profile.k1 = -1: must not be negative") != std::string::npos);
  j = good;
  j["name"] = "bad\nname";
  CHECK(error(j).find("profile.name") != std::string::npos);
  j = good;
  j["fit"] = 3;
  CHECK(error(j).find("profile.fit = 3: expected a JSON object") != std::string::npos);
  CHECK(error(spotdnn::io::Json::array()).find("expected a JSON object") != std::string::npos);
  CHECK(error(j).rfind("read_serverless_profile_file(p.json): ", 0) == 0);
}
