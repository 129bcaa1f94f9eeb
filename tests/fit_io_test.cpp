// SPDX-License-Identifier: MIT
// Trace CSV files (docs/formats.md): good files read, every bad one rejected with FILE:LINE and the reason; the
// batch rule fit.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <spotdnn/fit.hpp>
#include <spotdnn/io/csv.hpp>

#include <doctest/doctest.h>

// glog (pulled in by Ceres) defines CHECK as an abort-on-failure assertion; use doctest's.
#undef CHECK
#define CHECK DOCTEST_CHECK

using namespace spotdnn;

namespace {

const std::string kHeader = "run,workers,weighted_batch,iteration,loss\n";

void check_loss_error(const std::string& text, const std::string& expected) {
  INFO("trace:\n" << text);
  CHECK_THROWS_WITH_AS(static_cast<void>(parse_loss_trace(text, "f.csv")), doctest::Contains(expected.c_str()),
                       spotdnn::invalid_argument);
  // The columnar reader (what `spotdnn fit loss` uses) rejects the same rows with the same words.
  CHECK_THROWS_WITH_AS(static_cast<void>(parse_loss_table(text, "f.csv")), doctest::Contains(expected.c_str()),
                       spotdnn::invalid_argument);
}

std::string test_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const spotdnn::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a loss trace file with quoted cells, any column order and R is read with line numbers") {
  const std::string path = std::string(SPOTDNN_TEST_BINARY_DIR) + "/fit_io_loss_trace.csv";
  {
    std::ofstream out(path);
    out << "loss,iteration,run,weighted_batch,workers,convergence_coefficient\n"
           "3.5,0,\"a\",1024,2,0.7071\n"
           "\n"
           "1.25 , 100 ,a,1024,2,0.7071\n";
  }
  const LossTrace trace = read_loss_trace(path);
  std::remove(path.c_str());
  REQUIRE(trace.samples.size() == 2);
  CHECK(trace.samples[1].line == 4);
  CHECK(trace.samples[1].loss == 1.25);
  CHECK(trace.samples[1].iteration == 100);
  CHECK(trace.samples[1].run == "a");
  CHECK(*trace.samples[0].convergence_coefficient == 0.7071);
}

TEST_CASE("a loss trace read into columns keeps one row per run and the line of every sample") {
  const std::string text = kHeader + "a,2,1024,0,3\nb,4,2048,0,2.5\na,2,1024,10,2\nb,4,2048,10,1.5\n";
  const LossTable table = parse_loss_table(text, "f.csv");
  REQUIRE(table.size() == 4);
  REQUIRE(table.runs.size() == 2);
  CHECK(table.runs[1].name == "b");
  CHECK(table.runs[1].workers == 4);
  CHECK(table.runs[1].weighted_batch == 2048);
  CHECK(table.runs[1].line == 3);
  CHECK_FALSE(table.runs[0].convergence_coefficient.has_value());
  CHECK(table.run == std::vector<std::uint32_t>{0, 1, 0, 1});
  CHECK(table.iteration == std::vector<double>{0, 0, 10, 10});
  CHECK(table.loss == std::vector<double>{3, 2.5, 2, 1.5});
  CHECK(table.line.empty());  // rows on consecutive lines: no line column is stored
  for (std::size_t i = 0; i < 4; ++i) CHECK(table.line_of(i) == i + 2);

  // A blank line and a comment-free gap: lines are stored from then on, and R is kept per run.
  const LossTable gaps = parse_loss_table(
      "run,workers,weighted_batch,iteration,loss,convergence_coefficient\na,2,1024,0,3,0.7\n\n\na,2,1024,10,2,0.7\n", "g.csv");
  REQUIRE(gaps.size() == 2);
  CHECK(gaps.line_of(0) == 2);
  CHECK(gaps.line_of(1) == 5);
  CHECK(*gaps.runs[0].convergence_coefficient == 0.7);
  // A run that changes R names both lines.
  CHECK_THROWS_WITH_AS(static_cast<void>(parse_loss_table(
                           "run,workers,weighted_batch,iteration,loss,convergence_coefficient\na,2,1024,0,3,0.7\n"
                           "a,2,1024,10,2,0.8\n", "h.csv")),
                       doctest::Contains("h.csv:3: convergence_coefficient = 0.8: run \"a\" had 0.7 at h.csv:2"),
                       spotdnn::invalid_argument);
}

TEST_CASE("every bad loss trace is rejected with its file, line and reason") {
  check_loss_error("", "f.csv = <empty>: the file is empty");
  check_loss_error(kHeader, "the file has a header but no data rows");
  check_loss_error(kHeader + "a,2,1024,0,abc\n", "f.csv:2: loss = \"abc\": not a number");
  check_loss_error(kHeader + "a,2,1024,0,3\na,2,1024,10,nan\n", "f.csv:3: loss = \"nan\": NaN is not a measurement");
  check_loss_error(kHeader + "a,2,1024,inf,3\n", "f.csv:2: iteration = \"inf\": infinity is not a measurement");
  check_loss_error(kHeader + "a,2,1024,0,-0.5\n", "f.csv:2: loss = \"-0.5\": must not be negative");
  check_loss_error(kHeader + "a,2,1024,0,\n", "f.csv:2: loss = \"\": the cell is empty");
  check_loss_error(kHeader + "a,2,1024,0\n", "f.csv:2 = <row>: too few cells");
  check_loss_error(kHeader + "a,2,1024,0,1,9\n", "f.csv:2 = <row>: too many cells");
  check_loss_error("run,workers,weighted_batch,iteration,loss,loss\n", "header = \"loss\": duplicate column");
  check_loss_error("run,workers,batch,iteration,loss\n", "header = \"batch\": unknown column");
  check_loss_error("run,workers,iteration,loss\n", "header = \"weighted_batch\": missing column");
  check_loss_error(kHeader + "a,2,1024,0,3\n" + kHeader, "f.csv:3 = <row>: the header row is repeated");
  check_loss_error(kHeader + "a,2.5,1024,0,3\n", "f.csv:2: workers = 2.5: must be a whole number");
  check_loss_error(kHeader + "a,2,1024,0,3\na,4,1024,10,2\n", "f.csv:3: workers = 4: run \"a\" had 2 workers");
  check_loss_error(kHeader + "a,2,0,0,3\n", "f.csv:2: weighted_batch = 0: must be greater than zero");
  CHECK_THROWS_WITH_AS(static_cast<void>(read_loss_trace("/nonexistent/trace.csv")),
                       doctest::Contains("cannot open the file: No such file or directory"), spotdnn::invalid_argument);
}

TEST_CASE("a quoted header cell that is not closed names the header's line") {
  // The former parser reported line 18446744073709551615 (its "no line" marker) here.
  check_loss_error("\n\"run,workers,weighted_batch,iteration,loss\n", "f.csv:2 = <row>: a quoted cell is not closed");
  check_loss_error(kHeader + "a,2,1024,0,\"3\n", "f.csv:2 = <row>: a quoted cell is not closed");
}

TEST_CASE("a trace file read from disk gives the rows, lines and NUL-byte line of the same text parsed in memory") {
  // 4.5 MB with a blank line of 3 MB; seeded noise.
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<double> loss(0.1, 5.0);
  std::string text = kHeader;
  char cell[64];
  for (int i = 0; i < 40000; ++i) {
    std::snprintf(cell, sizeof cell, "r%d,%d,%d,%d,%.17g\n", i % 3, i % 3 + 1, 512 * (i % 3 + 1), i, loss(rng));
    text += cell;
    if (i == 20000) text += std::string(3000000, ' ') + "\n";
  }
  const std::string path = (std::filesystem::temp_directory_path() / "fit_io_test_blocks.csv").string();
  const auto write = [&](const std::string& content) { std::ofstream(path, std::ios::binary) << content; };
  write(text);
  const LossTable from_file = read_loss_table(path), from_text = parse_loss_table(text, path);
  CHECK(from_file.size() == 40000);
  CHECK(from_file.iteration == from_text.iteration);
  CHECK(from_file.loss == from_text.loss);
  CHECK(from_file.line_of(39999) == from_text.line_of(39999));
  CHECK(from_file.line_of(39999) == 40002);  // the header, 40000 rows and the blank line
  write(text + std::string("a,1,1,1\0\n", 9));
  const std::string nul = test_error_of([&] { (void)read_loss_table(path); });
  CHECK(nul.find(path + ":40003 = <NUL byte>") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("trace numbers are the doubles std::from_chars gives, on the fast path and off it") {
  // Random decimals of 1 to 23 digits (beyond 19 from_chars parses them), a point anywhere, and every third
  // one an exponent that moves it across and past the converter's exponents (-27..27): bit for bit the
  // double std::from_chars gives, alone (parse_csv_non_negative) and as cells of a trace (converted while
  // the row is cut).
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> digits(1, 23), point(0, 23), exponent(-45, 45), digit(0, 9), form(0, 2);
  std::vector<std::string> cells = {"9007199254740993", "9007199254740995", "9007199254740992.5", "72057594037927933",
                                    "0.80003200128005125", "3.2636162511429854", "3998.559942397696", "2.5e-5",
                                    "1E+22", "1e23", "0.000000000000000000000000001", "1e-28", "123456789012345678e-27",
                                    "18446744073709551615", "9999999999999999999", "99999999999999999999", "0e-500",
                                    "00000000000000000000000012.5", "1.7976931348623157e308", "4.9e-324"};
  for (int k = 0; k < 60000; ++k) {
    std::string text;
    const int n = digits(rng), at = point(rng);
    for (int d = 0; d < n; ++d) {
      if (d == at && d > 0) text += '.';
      text += char('0' + digit(rng));
    }
    if (form(rng) == 0) text += (digit(rng) < 5 ? "e" : "E") + std::to_string(exponent(rng));
    cells.push_back(text);
  }
  std::string trace = kHeader;
  for (const std::string& cell : cells) trace += "a,1,512,0," + cell + "\n";
  const LossTable table = parse_loss_table(trace, "t.csv");
  REQUIRE(table.size() == cells.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string& text = cells[i];
    double expected = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), expected);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(expected)) continue;
    const double parsed = detail::parse_csv_non_negative("test", "t.csv", 2, "loss", text);
    if (std::memcmp(&parsed, &expected, sizeof parsed) != 0 || std::memcmp(&table.loss[i], &expected, sizeof parsed) != 0) {
      INFO(text);
      CHECK(parsed == expected);
      CHECK(table.loss[i] == expected);
      if (++mismatches > 10) break;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("the decimal converter rounds w·10^q exactly, ties to even, or declines outside its exponents") {
  const auto converted = [](std::uint64_t w, int q) {
    double value = -1;
    return detail::decimal_to_double(w, q, value) ? value : -1.0;
  };
  CHECK(converted(9007199254740993u, 0) == 9007199254740992.0);  // a tie: to the even neighbour
  CHECK(converted(9007199254740995u, 0) == 9007199254740996.0);
  CHECK(converted(72057594037927933u, 0) == 72057594037927936.0);  // rounds up to a power of two
  CHECK(converted(18446744073709551615u, 0) == 18446744073709551616.0);
  CHECK(converted(5, -1) == 0.5);
  CHECK(converted(0, 400) == 0.0);
  double untouched = 7;
  CHECK_FALSE(detail::decimal_to_double(1, -28, untouched));
  CHECK_FALSE(detail::decimal_to_double(12345678901234567890u, 28, untouched));
  CHECK(untouched == 7);
  // Every exponent of the table with significands that need it (above 2^53), against from_chars.
  std::mt19937_64 rng(11);
  for (int q = detail::kDecimalMinExponent; q <= detail::kDecimalMaxExponent; ++q) {
    for (int k = 0; k < 400; ++k) {
      const std::uint64_t w = (std::uint64_t(1) << 53) + rng() % (std::uint64_t(10000000000000000000u) - (std::uint64_t(1) << 53));
      const std::string text = std::to_string(w) + "e" + std::to_string(q);
      double expected = 0;
      std::from_chars(text.data(), text.data() + text.size(), expected);
      INFO(text);
      CHECK(converted(w, q) == expected);
    }
  }
}

TEST_CASE("a trace file read whole keeps reading in blocks what it gained after it was opened, and reads short what it lost") {
  std::string text = kHeader;
  for (int i = 0; i < 3000; ++i) text += "r" + std::to_string(i % 2) + "," + std::to_string(i % 2 + 1) + ",512," + std::to_string(i) + ",0." + std::to_string(9000 - i) + "\n";
  text += "r0,1,512,3000,0.5";  // no newline at the end
  const std::string path = (std::filesystem::temp_directory_path() / "fit_io_test_grown.csv").string();
  std::ofstream(path, std::ios::binary) << text;
  const LossTable expected = parse_loss_table(text, path);
  // The size given is the size when opened: 0 (read in blocks only), one byte, a cut inside a row, and more
  // than the file holds now (it shrank after it was opened: a short read, then the end).
  for (const std::uintmax_t size : {std::uintmax_t(0), std::uintmax_t(1), std::uintmax_t(text.size() / 2 + 3),
                                    std::uintmax_t(text.size() + 4096)}) {
    INFO(size);
    const int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    detail::CsvInput input(fd, size, "read_loss_trace", path);
    const LossTable table = detail::read_loss_table_from(input, 10);
    CHECK(table.size() == expected.size());
    CHECK(table.iteration == expected.iteration);
    CHECK(table.loss == expected.loss);
    CHECK(table.run == expected.run);
    CHECK(table.line_of(table.size() - 1) == expected.line_of(expected.size() - 1));
  }
  std::filesystem::remove(path);
}

TEST_CASE("throughput traces are read and bad rows rejected with their line") {
  const ThroughputTrace trace =
      parse_throughput_trace("cluster,iterations_per_s\np3.2xlarge=2;g3.8xlarge=4,6.5\n", "t.csv");
  REQUIRE(trace.samples.size() == 1);
  CHECK(trace.samples[0].cluster.count("g3.8xlarge") == 4);
  CHECK(trace.samples[0].iterations_per_s == 6.5);
  const auto bad = [](const std::string& text, const char* expected) {
    CHECK_THROWS_WITH_AS(static_cast<void>(parse_throughput_trace(text, "t.csv")), doctest::Contains(expected),
                         spotdnn::invalid_argument);
  };
  bad("cluster,iterations_per_s\np3.2xlarge=x,1\n", "t.csv:2: cluster = \"p3.2xlarge=x\"");
  bad("cluster,iterations_per_s\np3.2xlarge=0,1\n", "t.csv:2: cluster = \"p3.2xlarge=0\": the cluster has no workers");
  bad("cluster,iterations_per_s\np3.2xlarge=1,0\n", "t.csv:2: iterations_per_s = \"0\": must be greater than zero");
  bad("cluster,iterations_per_s\np3.2xlarge=1,-3\n", "t.csv:2: iterations_per_s = \"-3\": must not be negative");
  bad("cluster,rate\n", "header = \"rate\": unknown column");
  bad("", "the file is empty");
}

TEST_CASE("the batch rule fit reproduces batches generated by the rule") {
  const BatchRule truth{100.0 / 1e9, 64.0};  // 100 samples per GB of GPU memory, plus 64
  std::vector<BatchSample> samples;
  for (double gigabytes : {4.0, 8.0, 11.0, 12.0, 16.0, 24.0, 32.0, 40.0, 80.0}) {
    samples.push_back({gigabytes * 1e9, truth.batch_per_gpu(gigabytes * 1e9)});
  }
  const BatchRuleFitResult fit = fit_batch_rule(samples);
  INFO(fit.message);
  REQUIRE(fit.status == FitStatus::converged);
  CHECK(fit.reproduced == samples.size());
  CHECK(fit.rule.alpha2_samples_per_byte > 0);
  CHECK(std::isfinite(fit.parameters[0].standard_error));
}

TEST_CASE("the batch rule needs two memory sizes and power-of-two batches") {
  CHECK(fit_batch_rule({{16e9, 512}, {16e9, 512}}).status == FitStatus::not_identifiable);
  CHECK_THROWS_WITH_AS(static_cast<void>(fit_batch_rule({{16e9, 500}, {32e9, 1024}})),
                       doctest::Contains("samples[0].batch_per_gpu = 500: must be a power of two"), spotdnn::invalid_argument);
}
