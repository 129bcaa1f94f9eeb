// SPDX-License-Identifier: MIT
// The FasDL model (docs/model.md eqs. (S1)–(S6)) against the reference figures of an independent
// implementation (docs/model.md, "Serverless reference figures", computed with FasDL's rounding down of the
// iteration count), hand-computed vectors, and the iteration count rounded up by default.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <doctest/doctest.h>

#include <spotdnn/errors.hpp>
#include <spotdnn/serverless/serverless_model.hpp>

#include "support/error_of.hpp"

using namespace spotdnn::serverless;
using spotdnn::test::error_of;

namespace {

ServerlessProfile reference_profile() {
  ServerlessProfile p;
  p.name = "reference";
  p.model_size_mb = 44.7;
  p.samples_per_epoch = 50000;
  p.a = 60;
  p.b = 8;
  p.m = 200;
  p.k1 = 20;
  p.k2 = -0.8;
  return p;
}

/// The reference work (10 epochs). The reference figures were computed with FasDL's I = ⌊D·E/P⌋, so the
/// tests that reproduce them ask for IterationRounding::fasdl_floor.
ServerlessModel reference_model(ServerlessPricing pricing = ServerlessPricing::aws(),
                                IterationRounding rounding = IterationRounding::fasdl_floor) {
  ServerlessWork work;
  work.epochs = 10;
  work.pricing = pricing;
  work.iteration_rounding = rounding;
  return ServerlessModel(reference_profile(), work);
}

/// True when `value` rounds to the reference figure `quoted`, given to `decimals` decimals.
bool rounds_to(double value, double quoted, int decimals) {
  return std::fabs(value - quoted) <= 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9);
}

}  // namespace

TEST_CASE("serverless model: the reference configuration W 6, M 1024, K 2") {
  const ServerlessModel model = reference_model();
  CHECK(model.batch() == 32);
  CHECK(model.max_workers() == 32);
  const ServerlessEstimate e = model.estimate({6, 1024, 2});
  REQUIRE(e.runnable());
  CHECK(e.non_aggregator_batch == 79);
  CHECK(e.iterations == 1315);
  CHECK(rounds_to(e.iteration_time_s, 5.322067, 6));
  CHECK(rounds_to(e.training_time_s, 6998.5186, 4));
  CHECK(rounds_to(e.cost_usd(), 0.789283, 6));
  CHECK(rounds_to(e.cost.lambda_usd, 0.699863, 6));
  CHECK(rounds_to(e.cost.s3_usd, 0.089420, 6));
  CHECK(e.samples_trained == 1315.0 * (2 * 32 + 4 * 79));
  CHECK(e.samples_asked == 500000);
  CHECK_FALSE(e.extrapolated);
}

TEST_CASE("serverless model: by default the iteration count rounds up, so a configuration trains at least the samples asked") {
  const ServerlessModel up = reference_model(ServerlessPricing::aws(), IterationRounding::up);
  const ServerlessModel floor = reference_model();
  CHECK(ServerlessWork{}.iteration_rounding == IterationRounding::up);
  // W 6, M 1024, K 2: a global batch of 2·32 + 4·79 = 380 samples; 500,000/380 = 1315.8.
  const ServerlessEstimate e = up.estimate({6, 1024, 2});
  const ServerlessEstimate f = floor.estimate({6, 1024, 2});
  REQUIRE(e.runnable());
  CHECK(e.iterations == 1316);
  CHECK(f.iterations == 1315);
  CHECK(e.samples_trained == 1316.0 * 380);  // 500,080 ≥ 500,000
  CHECK(e.samples_asked == 500000);
  CHECK(e.samples_trained >= e.samples_asked);
  CHECK(f.samples_trained < f.samples_asked);  // 499,700: FasDL's rounding trains less than asked
  // Only the count changes: the same iteration, one more of it, and the cost of 1316 iterations.
  CHECK(e.iteration_time_s == f.iteration_time_s);
  CHECK(e.non_aggregator_batch == f.non_aggregator_batch);
  CHECK(e.training_time_s == doctest::Approx(1316 * e.iteration_time_s).epsilon(1e-15));
  const ServerlessCost cost = serverless_cost(up.work().pricing, 6, 2, 1024, 1316, e.training_time_s);
  CHECK(e.cost_usd() == cost.total_usd);
  CHECK(e.cost_usd() > f.cost_usd());
  // All aggregators, W 13, M 1280, K 13: 13·32 = 416 samples per iteration, 500,000/416 = 1201.9.
  CHECK(up.estimate({13, 1280, 13}).iterations == 1202);
  CHECK(floor.estimate({13, 1280, 13}).iterations == 1201);
}

TEST_CASE("serverless model: iteration_count rounds D·E/P up or, as FasDL, down, exactly in 64 bits") {
  using R = IterationRounding;
  CHECK(ServerlessModel::iteration_count(500000, 380, R::up) == 1316);
  CHECK(ServerlessModel::iteration_count(500000, 380, R::fasdl_floor) == 1315);
  // A whole number of global batches: both rules agree.
  CHECK(ServerlessModel::iteration_count(500000, 500, R::up) == 1000);
  CHECK(ServerlessModel::iteration_count(500000, 500, R::fasdl_floor) == 1000);
  // Fractional samples (fractional epochs): up covers the last half sample.
  CHECK(ServerlessModel::iteration_count(1000.5, 1, R::up) == 1001);
  CHECK(ServerlessModel::iteration_count(1000.5, 1, R::fasdl_floor) == 1000);
  // The finding of issue 21: a global batch of 251,713 against 500,000 samples asked.
  CHECK(ServerlessModel::iteration_count(500000, 251713, R::up) == 2);
  CHECK(ServerlessModel::iteration_count(500000, 251713, R::fasdl_floor) == 1);
  // One global batch of exactly the work is one iteration; more than the work is none under either rule.
  CHECK(ServerlessModel::iteration_count(500000, 500000, R::up) == 1);
  CHECK(ServerlessModel::iteration_count(500000, 500001, R::up) == 0);
  CHECK(ServerlessModel::iteration_count(500000, 500001, R::fasdl_floor) == 0);
  CHECK(ServerlessModel::iteration_count(500000, 0, R::up) == 0);
  // 10¹⁵ samples (the most a model accepts) in batches of 3: ⌈10¹⁵/3⌉ = 333,333,333,333,334.
  CHECK(ServerlessModel::iteration_count(1e15, 3, R::up) == 333333333333334);
  CHECK(ServerlessModel::iteration_count(1e15, 3, R::fasdl_floor) == 333333333333333);
  // Seeded random cases: up trains at least the samples and less than one global batch more; floor at most
  // the samples and less than one global batch fewer; both never rise with a larger global batch.
  std::mt19937_64 rng(21);
  for (int n = 0; n < 2000; ++n) {
    const double samples = double(std::uniform_int_distribution<std::int64_t>(1, 1000000000000)(rng)) +
                           (n % 3 == 0 ? 0.5 : 0.0);
    const std::int64_t batch = std::uniform_int_distribution<std::int64_t>(1, 100000000)(rng);
    CAPTURE(samples);
    CAPTURE(batch);
    const std::int64_t up = ServerlessModel::iteration_count(samples, batch, R::up);
    const std::int64_t down = ServerlessModel::iteration_count(samples, batch, R::fasdl_floor);
    if (double(batch) > samples) {
      CHECK(up == 0);
      CHECK(down == 0);
      continue;
    }
    CHECK(double(up) * double(batch) >= samples);
    CHECK(double(up - 1) * double(batch) < samples);
    CHECK(double(down) * double(batch) <= samples);
    CHECK(double(down + 1) * double(batch) > samples);
    CHECK(ServerlessModel::iteration_count(samples, batch + 1, R::up) <= up);
    CHECK(ServerlessModel::iteration_count(samples, batch + 1, R::fasdl_floor) <= down);
  }
  CHECK(to_string(R::up) == "up");
  CHECK(to_string(R::fasdl_floor) == "fasdl_floor");
  CHECK(iteration_rounding_from_string("fasdl_floor") == R::fasdl_floor);
  CHECK(iteration_rounding_from_string("up") == R::up);
  CHECK_FALSE(iteration_rounding_from_string("floor").has_value());
}

TEST_CASE("serverless model: all aggregators W 13, M 1280, K 13 and the optimum of a 3000 s deadline") {
  const ServerlessModel model = reference_model();
  const ServerlessEstimate all = model.estimate({13, 1280, 13});
  CHECK(all.non_aggregator_batch == 32);
  CHECK(all.iterations == 1201);
  CHECK(rounds_to(all.training_time_s, 6312.2911, 4));
  CHECK(rounds_to(all.cost_usd(), 2.874333, 6));
  const ServerlessEstimate best = model.estimate({9, 1536, 2});
  CHECK(best.non_aggregator_batch == 130);
  CHECK(best.iterations == 513);
  CHECK(rounds_to(best.training_time_s, 2911.8008, 4));
  CHECK(rounds_to(best.cost_usd(), 0.707900, 6));
  // The reference's fastest configuration (W 6, M 10,240, K 3) takes 1389.08 s; 10,240 MB is beyond the
  // table's last column (3008 MB), so its transfer times are the last column's and it is extrapolated.
  const ServerlessEstimate fastest = model.estimate({6, 10240, 3});
  CHECK(rounds_to(fastest.training_time_s, 1389.08, 2));
  CHECK(fastest.extrapolated);
}

TEST_CASE("serverless model: hand-computed iteration parts of W 6, M 1024, K 2") {
  const ServerlessModel model = reference_model();
  const ServerlessEstimate e = model.estimate({6, 1024, 2});
  // fs = 22.35 MB: between the 22 and 24 MB cells of the 1024 MB column (up 0.38, 0.37; down 0.243479,
  // 0.26304), weight 0.175.
  const double up = 0.38 + 0.175 * (0.37 - 0.38), down = 0.243479 + 0.175 * (0.26304 - 0.243479);
  const double transform = 20 * std::pow(1024.0, -0.8), train = 60.0 * (32 + 8) / (1024 + 200);
  CHECK(e.iteration.upload_s == doctest::Approx(2 * up + transform).epsilon(1e-12));
  CHECK(e.iteration.download_s == doctest::Approx(down).epsilon(1e-12));
  CHECK(e.iteration.aggregate_s == doctest::Approx(up + 5 * down + 0.00119 * 6 * (22.35 + 33.7) * (2 - 2.0 / 6)).epsilon(1e-12));
  CHECK(e.iteration.train_s == doctest::Approx(train).epsilon(1e-12));
  // A_max = round((T_agg + T_train)·(M + m)/a − b); A_con = ⌊(1024 − 64)/4⌋ = 240.
  CHECK(e.non_aggregator_batch == std::llround((e.iteration.aggregate_s + train) * 1224 / 60 - 8));
}

TEST_CASE("serverless model: FasDL's accounting charges per MB-second without the request fee") {
  const ServerlessEstimate aws = reference_model().estimate({6, 1024, 2});
  const ServerlessEstimate fasdl = reference_model(ServerlessPricing::fasdl_accounting()).estimate({6, 1024, 2});
  CHECK(fasdl.cost.lambda_usd == doctest::Approx(1.64e-8 * 1024 * 6998.51858 * 6).epsilon(1e-9));
  CHECK(aws.cost.lambda_usd == doctest::Approx(0.0000166667 * 6998.51858 * 6 + 0.2e-6 * 6 * 8).epsilon(1e-9));
  CHECK(fasdl.cost.s3_usd == aws.cost.s3_usd);
}

TEST_CASE("serverless transfer table: bilinear inside, flagged outside") {
  const TransferTable& table = TransferTable::fasdl_measured();
  CHECK(table.cells().size() == 456);
  const TransferTime cell = table.at(1024, 10);
  CHECK(cell.upload_s == 0.2);
  CHECK(cell.download_s == 0.115036);
  CHECK_FALSE(cell.extrapolated);
  // Halfway between the 1024 and 1280 MB columns at 10 MB.
  const TransferTime between = table.at(1152, 10);
  CHECK(between.upload_s == doctest::Approx((0.2 + table.at(1280, 10).upload_s) / 2));
  CHECK_FALSE(between.extrapolated);
  // 40 MB from 384 MB: the 384 MB column ends at 20 MB, so it scales by 40/20.
  const TransferTime beyond = table.at(384, 40);
  CHECK(beyond.upload_s == doctest::Approx(table.at(384, 20).upload_s * 2));
  CHECK(beyond.extrapolated);
  CHECK(table.at(448, 40).extrapolated);  // between 384 (extrapolated) and 512 (measured)
  CHECK_FALSE(table.at(512, 40).extrapolated);
  CHECK(table.at(1024, 0.5).extrapolated);
  CHECK(table.at(1024, 0.5).upload_s == table.at(1024, 1).upload_s);
  CHECK(table.at(1024, 200).upload_s == doctest::Approx(table.at(1024, 100).upload_s * 2));
  CHECK(table.at(4096, 10).upload_s == table.at(3008, 10).upload_s);
  CHECK(table.at(4096, 10).extrapolated);
}

TEST_CASE("serverless model: configurations that cannot run say why") {
  const ServerlessModel model = reference_model();
  // 900 s per invocation: a huge model makes an iteration too long.
  ServerlessProfile huge = reference_profile();
  huge.model_size_mb = 1e6;
  ServerlessWork work;
  work.epochs = 10;
  CHECK(ServerlessModel(huge, work).estimate({2, 128, 1}).problem == ConfigurationProblem::iteration_over_invocation_limit);
  // Less than one global batch of work: under either rule (rounding up would train 32 samples for 5).
  ServerlessWork tiny;
  tiny.epochs = 1e-4;  // 5 samples
  CHECK(ServerlessModel(reference_profile(), tiny).estimate({1, 1024, 1}).problem == ConfigurationProblem::batch_exceeds_work);
  tiny.iteration_rounding = IterationRounding::fasdl_floor;
  CHECK(ServerlessModel(reference_profile(), tiny).estimate({1, 1024, 1}).problem == ConfigurationProblem::batch_exceeds_work);
  CHECK(error_of([&] { (void)model.estimate({33, 1024, 1}); }).find("workers = 33") != std::string::npos);
  CHECK(error_of([&] { (void)model.estimate({3, 1024, 4}); }).find("aggregators = 4") != std::string::npos);
  CHECK(error_of([&] { (void)model.estimate({3, 127, 1}); }).find("memory_mb = 127") != std::string::npos);
  ServerlessProfile bad = reference_profile();
  bad.b = 0.1;  // B = round(0.4) = 0
  CHECK(error_of([&] { ServerlessModel(bad, work); }).find("--batch") != std::string::npos);
  work.batch = 2000;
  CHECK(error_of([&] { ServerlessModel(reference_profile(), work); }).find("batch = 2000") != std::string::npos);
  work.batch.reset();
  work.epochs = std::nan("");
  CHECK(error_of([&] { ServerlessModel(reference_profile(), work); }).find("epochs") != std::string::npos);
}

TEST_CASE("serverless model: figures that overflow make a configuration unrunnable, never a NaN plan") {
  ServerlessProfile p = reference_profile();
  p.k1 = 0;
  p.k2 = 1000;  // 0 · 1024^1000 = 0 · inf = NaN
  ServerlessWork work;
  work.epochs = 10;
  const ServerlessEstimate e = ServerlessModel(p, work).estimate({2, 1024, 1});
  CHECK(e.problem == ConfigurationProblem::figures_not_finite);
  CHECK_FALSE(e.runnable());
  CHECK(to_string(e.problem) == "figures_not_finite");
}
