// SPDX-License-Identifier: MIT
// The serverless planners: the exact branch and bound against exhaustive enumeration (the same
// configuration, figures and message on seeded random problems, under both iteration roundings), the
// reference optimum and fastest configuration (docs/model.md, "Serverless reference figures", with FasDL's
// rounding down), plans that train at least the samples asked by default, and FasDL's greedy search as a
// baseline.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <spotdnn/errors.hpp>
#include <spotdnn/serverless/exact_search.hpp>
#include <spotdnn/serverless/exhaustive_search.hpp>
#include <spotdnn/serverless/fasdl_search.hpp>
#include <spotdnn/serverless/serverless_frontier.hpp>

#include "support/error_of.hpp"

using namespace spotdnn::serverless;
using spotdnn::Status;
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

/// The reference work (10 epochs). `rounding`: the reference figures were computed with FasDL's
/// I = ⌊D·E/P⌋ (IterationRounding::fasdl_floor); spotdnn rounds up by default.
ServerlessModel reference_model(ServerlessPricing pricing = ServerlessPricing::aws(), std::optional<int> batch = std::nullopt,
                                IterationRounding rounding = IterationRounding::up, int max_global_batch = 1024) {
  ServerlessWork work;
  work.epochs = 10;
  work.pricing = pricing;
  work.batch = batch;
  work.iteration_rounding = rounding;
  work.max_global_batch = max_global_batch;
  return ServerlessModel(reference_profile(), work);
}

/// The reference model with FasDL's rounding down: what reproduces the reference figures.
ServerlessModel fasdl_rounding_model(ServerlessPricing pricing = ServerlessPricing::aws()) {
  return reference_model(pricing, std::nullopt, IterationRounding::fasdl_floor);
}

ServerlessPlanOptions grid(double deadline_s, int min_mb = 128, int step_mb = 64, int max_mb = 10240) {
  ServerlessPlanOptions o;
  o.deadline_s = deadline_s;
  o.min_memory_mb = min_mb;
  o.memory_step_mb = step_mb;
  o.max_memory_mb = max_mb;
  return o;
}

bool rounds_to(double value, double quoted, int decimals) {
  return std::fabs(value - quoted) <= 0.5 * std::pow(10.0, -decimals) * (1 + 1e-9);
}

bool same_configuration(const ServerlessEstimate& x, const ServerlessEstimate& y) {
  return x.configuration.workers == y.configuration.workers && x.configuration.memory_mb == y.configuration.memory_mb &&
         x.configuration.aggregators == y.configuration.aggregators;
}

/// Exact and exhaustive give the same answer: status, message, configuration and every figure.
void check_same_answer(const ServerlessPlanResult& exact, const ServerlessPlanResult& exhaustive) {
  CHECK(exact.algorithm == ServerlessAlgorithm::exact);
  CHECK(exhaustive.algorithm == ServerlessAlgorithm::exhaustive);
  REQUIRE(exact.status == exhaustive.status);
  CHECK(exact.message == exhaustive.message);
  CHECK(exact.deadline_s == exhaustive.deadline_s);
  if (exact.has_plan()) {
    CHECK(same_configuration(exact.plan, exhaustive.plan));
    CHECK(exact.plan.cost_usd() == exhaustive.plan.cost_usd());  // bit for bit
    CHECK(exact.plan.training_time_s == exhaustive.plan.training_time_s);
    CHECK(exact.plan.iterations == exhaustive.plan.iterations);
    CHECK(exact.plan.non_aggregator_batch == exhaustive.plan.non_aggregator_batch);
    CHECK(exact.plan.samples_trained == exhaustive.plan.samples_trained);
  }
  REQUIRE(exact.fastest.has_value() == exhaustive.fastest.has_value());
  if (exact.fastest) {
    CHECK(same_configuration(*exact.fastest, *exhaustive.fastest));
    CHECK(exact.fastest->training_time_s == exhaustive.fastest->training_time_s);
  }
}

/// One seeded random problem: a profile (with unusual signs of m and k2, small and large models), the
/// work (epochs, Bg, --batch, pricing) and a grid; the deadline is chosen by the caller.
struct RandomProblem {
  ServerlessProfile profile;
  ServerlessWork work;
  ServerlessPlanOptions options;
  std::shared_ptr<const TransferTable> transfer;  ///< null: FasDL's measured table
};

RandomProblem random_problem(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, unit(rng)); };
  const auto pick = [&](int n) { return int(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
  RandomProblem p;
  p.profile.name = "random";
  p.profile.model_size_mb = log_uniform(0.2, 3000);
  p.profile.samples_per_epoch = std::round(log_uniform(500, 2e6));
  p.profile.a = log_uniform(0.5, 2000);
  p.profile.b = pick(6) == 0 ? -log_uniform(0.1, 40) : log_uniform(0.3, 60);
  switch (pick(4)) {
    case 0: p.profile.m = -log_uniform(0.5, 127); break;  // negative: 128 + m > 0 still holds
    case 1: p.profile.m = 0; break;
    default: p.profile.m = log_uniform(1, 3000); break;
  }
  p.profile.k1 = pick(8) == 0 ? 0.0 : log_uniform(0.01, 500);
  switch (pick(5)) {
    case 0: p.profile.k2 = unit(rng) * 1.5; break;  // transforming slows with memory
    case 1: p.profile.k2 = 0; break;
    default: p.profile.k2 = -unit(rng) * 2.0; break;
  }
  p.work.epochs = pick(10) == 0 ? log_uniform(0.0005, 0.05) : log_uniform(0.1, 60);
  p.work.max_global_batch = int(std::round(log_uniform(16, 4096)));
  switch (pick(10)) {
    case 0:  // free: every cost is 0, the tie rule alone decides
      p.work.pricing.lambda_usd_per_mb_s = p.work.pricing.lambda_usd_per_request = 0;
      p.work.pricing.s3_usd_per_put = p.work.pricing.s3_usd_per_get = 0;
      break;
    case 1:  // the request fee alone: W·⌈T/900⌉ × $0.2·10⁻⁶, many exact ties
      p.work.pricing.lambda_usd_per_mb_s = p.work.pricing.s3_usd_per_put = p.work.pricing.s3_usd_per_get = 0;
      break;
    default: p.work.pricing = pick(2) == 0 ? ServerlessPricing::aws() : ServerlessPricing::fasdl_accounting(); break;
  }
  // The batch: the profile's rule when it gives 1..Bg, else explicit; keep ⌊Bg/B⌋ ≤ 40 so that the
  // enumeration stays quick.
  const double rule = std::round(p.profile.b / (1.0 / kFasdlTrainingShare - 1.0));
  if (pick(3) == 0 || !(rule >= 1 && rule <= p.work.max_global_batch) || p.work.max_global_batch / int(rule) > 40) {
    const int least = std::max(1, (p.work.max_global_batch + 39) / 40);
    p.work.batch = std::uniform_int_distribution<int>(least, p.work.max_global_batch)(rng);
  }
  // A quarter of the problems bring their own transfer table: a few memory columns anywhere in Lambda's
  // range, a few sizes each, times that need not fall with memory or rise with size.
  if (pick(4) == 0) {
    std::vector<TransferCell> cells;
    const int columns = 1 + pick(6);
    for (int c = 0; c < columns; ++c) {
      const double memory_mb = 128 + c * 1700 + pick(1700);
      const int sizes = 1 + pick(5);
      for (int x = 0; x < sizes; ++x) {
        cells.push_back({memory_mb, 0.5 + x * 30 + pick(30), log_uniform(0.01, 10), log_uniform(0.01, 10)});
      }
    }
    p.transfer = std::make_shared<const TransferTable>(cells);
  }
  // The grid: the default one, coarse or odd steps, or the 1 MB lattice on a narrowed range.
  switch (pick(5)) {
    case 0: p.options = grid(1); break;
    case 1: {
      const int lo = std::uniform_int_distribution<int>(128, 10000)(rng);
      p.options = grid(1, lo, 1, std::min(10240, lo + std::uniform_int_distribution<int>(0, 150)(rng)));
      break;
    }
    case 2: {
      const int lo = std::uniform_int_distribution<int>(128, 3000)(rng);
      p.options = grid(1, lo, std::uniform_int_distribution<int>(7, 400)(rng), std::uniform_int_distribution<int>(lo, 10240)(rng));
      break;
    }
    case 3: p.options = grid(1, 128, 1024, 10240); break;
    default: {
      const int lo = std::uniform_int_distribution<int>(128, 10240)(rng);
      p.options = grid(1, lo, std::uniform_int_distribution<int>(1, 10240)(rng), lo);  // one memory size
      break;
    }
  }
  return p;
}

}  // namespace

TEST_CASE("with FasDL's rounding the exact search finds the reference optimum for a 3000 s deadline") {
  const ServerlessModel model = fasdl_rounding_model();
  const ServerlessPlanResult r = plan_serverless_exact(model, grid(3000));
  REQUIRE(r.status == Status::optimal);
  CHECK(r.algorithm == ServerlessAlgorithm::exact);
  CHECK(r.deadline_s == 3000);
  CHECK(r.plan.configuration.workers == 9);
  CHECK(r.plan.configuration.memory_mb == 1536);
  CHECK(r.plan.configuration.aggregators == 2);
  CHECK(r.plan.non_aggregator_batch == 130);
  CHECK(r.plan.iterations == 513);
  CHECK(rounds_to(r.plan.training_time_s, 2911.8008, 4));
  CHECK(rounds_to(r.plan.cost_usd(), 0.707900, 6));
  CHECK_FALSE(r.fastest.has_value());
  CHECK(r.message == "the cheapest configuration finishing by the deadline of 3000 s is W 9 × 1536 MB with 2 aggregators: 2911.80 s "
                     "for $0.707900");
  // It prunes: far fewer estimates than the 83,952 of the grid.
  CHECK(r.stats.configurations_evaluated < 2000);
  CHECK(r.stats.worker_aggregator_pairs + r.stats.pairs_pruned == 32 * 33 / 2);
  check_same_answer(r, plan_serverless_exhaustive(model, grid(3000)));
}

TEST_CASE("exhaustive enumeration evaluates every configuration of the grid") {
  const ServerlessPlanResult r = plan_serverless_exhaustive(fasdl_rounding_model(), grid(3000));
  CHECK(r.stats.configurations_evaluated == std::size_t(32 * 33 / 2) * 159);
  CHECK(r.stats.worker_aggregator_pairs == 32 * 33 / 2);
  CHECK(r.stats.pairs_pruned == 0);
  CHECK(r.plan.configuration.workers == 9);
}

TEST_CASE("a deadline below the fastest time is infeasible and names the fastest configuration") {
  const ServerlessModel model = fasdl_rounding_model();
  const ServerlessPlanResult r = plan_serverless_exact(model, grid(1000));
  REQUIRE(r.status == Status::infeasible);
  CHECK_FALSE(r.has_plan());
  REQUIRE(r.fastest.has_value());
  CHECK(r.fastest->configuration.workers == 6);
  CHECK(r.fastest->configuration.memory_mb == 10240);
  CHECK(r.fastest->configuration.aggregators == 3);
  CHECK(rounds_to(r.fastest->training_time_s, 1389.08, 2));
  CHECK(r.message ==
        "no configuration finishes by the deadline of 1000 s: the fastest, W 6 × 10240 MB with 3 aggregators, takes 1389.08 s "
        "(its S3 transfer times are extrapolated beyond the measured table)");
  check_same_answer(r, plan_serverless_exhaustive(model, grid(1000)));
  // The same configuration by the standalone search, and feasible from its own time on (inclusive).
  const std::optional<ServerlessEstimate> fastest = fastest_serverless_configuration(model, grid(1));
  REQUIRE(fastest.has_value());
  CHECK(same_configuration(*fastest, *r.fastest));
  const ServerlessPlanResult at = plan_serverless_exact(model, grid(r.fastest->training_time_s));
  CHECK(at.status == Status::optimal);
  CHECK(same_configuration(at.plan, *r.fastest));
  CHECK(plan_serverless_exact(model, grid(std::nextafter(r.fastest->training_time_s, 0.0))).status == Status::infeasible);
}

TEST_CASE("the exact search equals exhaustive enumeration on 400 seeded random problems, under both roundings") {
  std::mt19937_64 rng(20250217);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int optimal = 0, infeasible = 0, nothing_runnable = 0;
  for (int n = 0; n < 400; ++n) {
    RandomProblem p = random_problem(rng);
    CAPTURE(n);
    // Odd problems round the iteration count down as FasDL does, even ones up (the default).
    p.work.iteration_rounding = n % 2 ? IterationRounding::fasdl_floor : IterationRounding::up;
    CAPTURE(to_string(p.work.iteration_rounding));
    const ServerlessModel model(p.profile, p.work, p.transfer);
    // The deadline: around the fastest time, from infeasible (×0.7) to loose (×30).
    p.options.deadline_s = 1e9;
    const search_detail::Enumeration all = search_detail::enumerate_all(model, p.options, {}, "");
    // (A profile with B + b < 0 can have a negative fastest time: then any positive deadline.)
    const bool timed = all.fastest && all.fastest->training_time_s > 0;
    p.options.deadline_s = timed ? all.fastest->training_time_s * 0.7 * std::pow(30 / 0.7, unit(rng)) : 100 + 1e5 * unit(rng);
    if (timed && n % 17 == 0) p.options.deadline_s = all.fastest->training_time_s;  // exactly the fastest time
    CAPTURE(p.profile.model_size_mb);
    CAPTURE(p.profile.samples_per_epoch);
    CAPTURE(p.profile.a);
    CAPTURE(p.profile.b);
    CAPTURE(p.profile.m);
    CAPTURE(p.profile.k1);
    CAPTURE(p.profile.k2);
    CAPTURE(p.work.epochs);
    CAPTURE(p.work.max_global_batch);
    CAPTURE(model.batch());
    CAPTURE(p.options.min_memory_mb);
    CAPTURE(p.options.memory_step_mb);
    CAPTURE(p.options.max_memory_mb);
    CAPTURE(p.options.deadline_s);
    const ServerlessPlanResult exact = plan_serverless_exact(model, p.options);
    const ServerlessPlanResult exhaustive = plan_serverless_exhaustive(model, p.options);
    check_same_answer(exact, exhaustive);
    if (exact.has_plan()) {
      // Rounding up trains at least the samples asked and less than one global batch more; FasDL's floor
      // trains at most the samples asked.
      const double asked = model.samples_to_train();
      CHECK(exact.plan.samples_asked == asked);
      if (p.work.iteration_rounding == IterationRounding::up) {
        CHECK(exact.plan.samples_trained >= asked);
        CHECK(exact.plan.samples_trained - asked < exact.plan.samples_trained / double(exact.plan.iterations));
      } else {
        CHECK(exact.plan.samples_trained <= asked);
      }
    }
    if (exact.status == Status::optimal) ++optimal;
    if (exact.status == Status::infeasible) ++(exact.fastest ? infeasible : nothing_runnable);
    // The fastest configuration agrees with the enumeration's too.
    const std::optional<ServerlessEstimate> fastest = fastest_serverless_configuration(model, p.options);
    REQUIRE(fastest.has_value() == all.fastest.has_value());
    if (fastest) CHECK(same_configuration(*fastest, *all.fastest));
    // FasDL's greedy search never beats the optimum, and answers feasible or infeasible.
    const ServerlessPlanResult fasdl = plan_serverless_fasdl(model, p.options);
    CHECK(fasdl.algorithm == ServerlessAlgorithm::fasdl);
    CHECK((fasdl.status == Status::feasible || fasdl.status == Status::infeasible));
    if (fasdl.status == Status::feasible) {
      REQUIRE(exact.status == Status::optimal);
      CHECK(fasdl.plan.samples_trained == model.estimate(fasdl.plan.configuration).samples_trained);
      CHECK(fasdl.plan.training_time_s <= p.options.deadline_s);
      CHECK(fasdl.plan.cost_usd() >= exact.plan.cost_usd());
      CHECK(fasdl.plan.runnable());
    } else {
      CHECK(fasdl.message.find("FasDL's search found no plan") == 0);
    }
  }
  MESSAGE("random problems: " << optimal << " optimal, " << infeasible << " infeasible, " << nothing_runnable << " with nothing runnable");
  CHECK(optimal >= 150);
  CHECK(infeasible >= 25);
  CHECK(nothing_runnable >= 10);
}

TEST_CASE("the exact search equals enumeration on Lambda's 1 MB lattice with up to 256 workers on a narrowed range") {
  const ServerlessModel model = reference_model(ServerlessPricing::aws(), 4);  // B = 4: W ≤ 256
  CHECK(model.max_workers() == 256);
  for (double deadline : {1500.0, 3000.0, 9000.0}) {
    CAPTURE(deadline);
    const ServerlessPlanOptions o = grid(deadline, 2400, 1, 2560);
    check_same_answer(plan_serverless_exact(model, o), plan_serverless_exhaustive(model, o));
  }
  // The whole lattice: the exact search alone (the enumeration takes about 11 s; see bench/bench_serverless.cpp).
  const ServerlessPlanResult full = plan_serverless_exact(model, grid(3000, 128, 1, 10240));
  REQUIRE(full.status == Status::optimal);
  CHECK(full.plan.training_time_s <= 3000);
  CHECK(full.stats.worker_aggregator_pairs + full.stats.pairs_pruned == std::size_t(256) * 257 / 2);
  // It is at least as cheap as the optimum of the coarser 64 MB grid, which the lattice contains.
  CHECK(full.plan.cost_usd() <= plan_serverless_exact(model, grid(3000)).plan.cost_usd());
}

TEST_CASE("ties of equal cost go to fewest workers, then least memory, then fewest aggregators") {
  // Free Lambda and S3: every configuration costs 0, so the tie rule alone decides.
  ServerlessPricing free;
  free.lambda_usd_per_mb_s = 0;
  free.lambda_usd_per_request = 0;
  free.s3_usd_per_put = 0;
  free.s3_usd_per_get = 0;
  const ServerlessModel model = reference_model(free);
  for (double deadline : {1500.0, 5000.0, 60000.0}) {
    CAPTURE(deadline);
    const ServerlessPlanResult exact = plan_serverless_exact(model, grid(deadline, 128, 256, 10240));
    check_same_answer(exact, plan_serverless_exhaustive(model, grid(deadline, 128, 256, 10240)));
    REQUIRE(exact.status == Status::optimal);
    CHECK(exact.plan.cost_usd() == 0);
  }
}

TEST_CASE("with nothing runnable the message says why") {
  SUBCASE("one aggregator batch is more than the samples to train") {
    ServerlessWork work;
    work.epochs = 0.0005;  // 25 samples, B = 32
    const ServerlessModel model(reference_profile(), work);
    const ServerlessPlanResult r = plan_serverless_exact(model, grid(3000));
    CHECK(r.status == Status::infeasible);
    CHECK_FALSE(r.fastest.has_value());
    CHECK(r.message == "no configuration can run: one aggregator's batch of 32 samples is more than the 25 samples to train "
                       "(samples_per_epoch × epochs)");
    check_same_answer(r, plan_serverless_exhaustive(model, grid(3000)));
    CHECK(plan_serverless_fasdl(model, grid(3000)).message.find("one aggregator's batch of 32 samples") != std::string::npos);
  }
  SUBCASE("every iteration is longer than Lambda's 900 s") {
    ServerlessProfile slow = reference_profile();
    slow.a = 3e6;  // T_train(32, 10240 MB) = 3·10⁶·40/10440 > 11,000 s
    ServerlessWork work;
    work.epochs = 10;
    const ServerlessModel model(slow, work);
    const ServerlessPlanResult r = plan_serverless_exact(model, grid(1e9));
    CHECK(r.status == Status::infeasible);
    CHECK_FALSE(r.fastest.has_value());
    // Two functions of 10,240 MB, each aggregating half the model, iterate quicker than one alone.
    CHECK(r.message.find("longer per iteration than Lambda's 900 s invocation limit; the quickest iteration, W 2 × 10240 MB with "
                         "2 aggregators, takes 11495.86 s") != std::string::npos);
    check_same_answer(r, plan_serverless_exhaustive(model, grid(1e9)));
  }
}

TEST_CASE("bad options and negative prices are refused with the field named") {
  const ServerlessModel model = reference_model();
  CHECK(error_of([&] { (void)plan_serverless_exact(model, grid(0)); }).find("deadline_s = 0") != std::string::npos);
  CHECK(error_of([&] { (void)plan_serverless_exhaustive(model, grid(3000, 100)); }).find("min_memory_mb = 100") != std::string::npos);
  CHECK(error_of([&] { (void)plan_serverless_fasdl(model, grid(3000, 128, 0)); }).find("memory_step_mb = 0") != std::string::npos);
  ServerlessPricing odd;
  odd.s3_usd_per_get = -1e-6;
  CHECK(error_of([&] { (void)plan_serverless_exact(reference_model(odd), grid(3000)); }) ==
        "plan_serverless_exact: pricing.s3_usd_per_get = -1e-06: must not be negative");
  odd = ServerlessPricing::aws();
  odd.lambda_usd_per_mb_s = std::nan("");
  CHECK(error_of([&] { (void)plan_serverless_fasdl(reference_model(odd), grid(3000)); }).find("pricing.lambda_usd_per_mb_s = nan") !=
        std::string::npos);
}

TEST_CASE("a profile with a negative training time falls back to enumeration and still agrees") {
  ServerlessProfile odd = reference_profile();
  odd.b = -40;  // with --batch 4, B + b < 0: T_train < 0, outside the bounds' premises
  ServerlessWork work;
  work.epochs = 10;
  work.batch = 8;
  const ServerlessModel model(odd, work);
  for (double deadline : {500.0, 3000.0}) {
    check_same_answer(plan_serverless_exact(model, grid(deadline, 128, 512)), plan_serverless_exhaustive(model, grid(deadline, 128, 512)));
  }
}

TEST_CASE("the planners report progress from start to end, and a throwing callback aborts them") {
  const ServerlessModel model = reference_model();
  for (int planner = 0; planner < 3; ++planner) {
    CAPTURE(planner);
    std::vector<spotdnn::Progress> seen;
    const spotdnn::ProgressCallback record = [&](const spotdnn::Progress& p) { seen.push_back(p); };
    const ServerlessPlanResult r = planner == 0   ? plan_serverless_exact(model, grid(3000), record)
                                   : planner == 1 ? plan_serverless_exhaustive(model, grid(3000), record)
                                                  : plan_serverless_fasdl(model, grid(3000), record);
    REQUIRE(seen.size() >= 2);
    CHECK(seen.front().done == 0);
    for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i].done >= seen[i - 1].done);
    if (seen.back().total > 0) CHECK(seen.back().done == seen.back().total);
    CHECK(r.status != Status::invalid_input);
    const spotdnn::ProgressCallback abort = [](const spotdnn::Progress&) { throw std::runtime_error("stop"); };
    CHECK_THROWS_AS((void)(planner == 0   ? plan_serverless_exact(model, grid(3000), abort)
                           : planner == 1 ? plan_serverless_exhaustive(model, grid(3000), abort)
                                          : plan_serverless_fasdl(model, grid(3000), abort)),
                    std::runtime_error);
  }
}

TEST_CASE("FasDL's greedy search is dearer than the optimum on the reference profile and not monotone in the deadline") {
  const ServerlessModel model = reference_model();
  // Below about 3,800 s it finds nothing: with K = W every function aggregates, and no W is fast enough.
  const ServerlessPlanResult at3000 = plan_serverless_fasdl(model, grid(3000));
  CHECK(at3000.status == Status::infeasible);
  CHECK(at3000.algorithm == ServerlessAlgorithm::fasdl);
  CHECK(at3000.message ==
        "FasDL's search found no plan for the deadline of 3000 s (no worker count with K = W meets it at any memory of the grid), "
        "though W 9 × 1536 MB with 2 aggregators meets it for $0.709280 (the exact search); the fastest, W 6 × 10240 MB with 3 "
        "aggregators, takes 1391.92 s (its S3 transfer times are extrapolated beyond the measured table)");
  REQUIRE(at3000.fastest.has_value());
  CHECK(at3000.fastest->configuration.memory_mb == 10240);
  // Where it finds a plan, the plan meets the deadline and costs more than the optimum: found, 1.4 to 9 times.
  for (double deadline : {4000.0, 5000.0, 6000.0, 9000.0, 12000.0}) {
    CAPTURE(deadline);
    const ServerlessPlanResult fasdl = plan_serverless_fasdl(model, grid(deadline));
    const ServerlessPlanResult exact = plan_serverless_exact(model, grid(deadline));
    REQUIRE(fasdl.status == Status::feasible);
    REQUIRE(exact.status == Status::optimal);
    CHECK(fasdl.plan.training_time_s <= deadline);
    CHECK(fasdl.plan.cost_usd() > 1.3 * exact.plan.cost_usd());
    CHECK(fasdl.message.find("FasDL's greedy search picks W ") == 0);
  }
  // Its figures are the configuration's own (A recomputed for the K it ends with).
  const ServerlessPlanResult f = plan_serverless_fasdl(model, grid(5000));
  const ServerlessEstimate again = model.estimate(f.plan.configuration);
  CHECK(again.cost_usd() == f.plan.cost_usd());
  CHECK(again.non_aggregator_batch == f.plan.non_aggregator_batch);
  // A looser deadline can give a dearer plan (11,728 s costs more than 11,456 s: $0.568 against $0.497).
  const double c11456 = plan_serverless_fasdl(model, grid(11456.4)).plan.cost_usd();
  const double c11728 = plan_serverless_fasdl(model, grid(11728.2)).plan.cost_usd();
  CHECK(c11728 > c11456);
}

TEST_CASE("FasDL's gap to the optimum over 40 deadlines from 1400 s to 12000 s") {
  // Set SPOTDNN_PRINT_GAP_TABLE=1 to print the table (the README's figures).
  const ServerlessModel model = reference_model();
  const bool print = std::getenv("SPOTDNN_PRINT_GAP_TABLE") != nullptr;
  std::vector<double> ratios;
  int found = 0, dearer = 0, rises = 0;
  double previous = -1, previous_optimum = 1e300;
  if (print) std::printf("deadline_s,optimum,optimum_usd,fasdl,fasdl_usd,ratio\n");
  for (int i = 0; i < 40; ++i) {
    const double deadline = 1400 + i * (12000.0 - 1400) / 39;
    const ServerlessPlanResult exact = plan_serverless_exact(model, grid(deadline));
    const ServerlessPlanResult fasdl = plan_serverless_fasdl(model, grid(deadline));
    REQUIRE(exact.status == Status::optimal);  // the fastest takes 1389.08 s
    CHECK(exact.plan.cost_usd() <= previous_optimum);  // the optimum never rises with a looser deadline
    previous_optimum = exact.plan.cost_usd();
    if (fasdl.has_plan()) {
      ++found;
      const double ratio = fasdl.plan.cost_usd() / exact.plan.cost_usd();
      CHECK(ratio >= 1);
      ratios.push_back(ratio);
      if (ratio > 1) ++dearer;
      if (previous >= 0 && fasdl.plan.cost_usd() > previous) ++rises;
      previous = fasdl.plan.cost_usd();
    }
    if (print) {
      const auto label = [](const ServerlessEstimate& e) {
        return "W" + std::to_string(e.configuration.workers) + "/" + std::to_string(e.configuration.memory_mb) + "MB/K" +
               std::to_string(e.configuration.aggregators);
      };
      std::printf("%.1f,%s,%.6f,%s,%s,%s\n", deadline, label(exact.plan).c_str(), exact.plan.cost_usd(),
                  fasdl.has_plan() ? label(fasdl.plan).c_str() : "none",
                  fasdl.has_plan() ? std::to_string(fasdl.plan.cost_usd()).c_str() : "",
                  fasdl.has_plan() ? std::to_string(fasdl.plan.cost_usd() / exact.plan.cost_usd()).c_str() : "");
    }
  }
  std::sort(ratios.begin(), ratios.end());
  REQUIRE(!ratios.empty());
  const double median = ratios.size() % 2 ? ratios[ratios.size() / 2] : (ratios[ratios.size() / 2 - 1] + ratios[ratios.size() / 2]) / 2;
  MESSAGE("FasDL finds a plan for " << found << " of 40 deadlines, dearer than the optimum for " << dearer << "; cost ratio median "
                                    << median << ", max " << ratios.back() << "; its cost rises with a looser deadline " << rises
                                    << " times");
  CHECK(found == 31);  // the README's table: with the iteration count rounded up (the default)
  CHECK(dearer == found);
  CHECK(median > 1.4);
  CHECK(ratios.back() > 5);
  CHECK(rises > 0);  // not monotone in the deadline
}

TEST_CASE("every plan trains at least the samples asked, where FasDL's rounding down let the search profit from half the work") {
  // Issue 21: --batch 1 --max-global-batch 100000000, 10 epochs of 50,000 samples, 3000 s. With I = ⌊D·E/P⌋
  // the cheapest configuration was one iteration of a 251,713-sample global batch: half the work.
  const ServerlessModel floor = reference_model(ServerlessPricing::aws(), 1, IterationRounding::fasdl_floor, 100000000);
  const ServerlessPlanResult cheat = plan_serverless_exact(floor, grid(3000));
  REQUIRE(cheat.status == Status::optimal);
  CHECK(cheat.plan.configuration.workers == 185);
  CHECK(cheat.plan.configuration.memory_mb == 128);
  CHECK(cheat.plan.iterations == 1);
  CHECK(cheat.plan.samples_trained == 251713);
  CHECK(cheat.plan.samples_asked == 500000);
  // Rounded up (the default), the plan trains the 500,000 samples asked, and costs more for it.
  const ServerlessModel up = reference_model(ServerlessPricing::aws(), 1, IterationRounding::up, 100000000);
  const ServerlessPlanResult honest = plan_serverless_exact(up, grid(3000));
  REQUIRE(honest.status == Status::optimal);
  CHECK(honest.plan.samples_trained >= 500000);
  CHECK(honest.plan.samples_trained < 500000 + honest.plan.samples_trained / double(honest.plan.iterations));
  CHECK(honest.plan.training_time_s <= 3000);
  CHECK(honest.plan.cost_usd() > cheat.plan.cost_usd());
  // With Bg = 100,000 FasDL's rounding trained 84% of the work; rounded up, all of it.
  const ServerlessPlanResult floor_100k =
      plan_serverless_exact(reference_model(ServerlessPricing::aws(), 1, IterationRounding::fasdl_floor, 100000), grid(3000));
  const ServerlessPlanResult up_100k = plan_serverless_exact(reference_model(ServerlessPricing::aws(), 1, IterationRounding::up, 100000), grid(3000));
  REQUIRE(floor_100k.has_plan());
  REQUIRE(up_100k.has_plan());
  CHECK(floor_100k.plan.samples_trained / 500000 == doctest::Approx(0.84).epsilon(0.01 / 0.84));
  CHECK(up_100k.plan.samples_trained >= 500000);
}

TEST_CASE("FasDL's search and the frontier follow the model's rounding: plans train at least the samples asked") {
  const ServerlessModel model = reference_model();
  const ServerlessPlanResult fasdl = plan_serverless_fasdl(model, grid(6000));
  REQUIRE(fasdl.status == Status::feasible);
  CHECK(fasdl.plan.samples_trained >= 500000);
  const ServerlessFrontier frontier = serverless_cost_deadline_frontier(model, grid(1), 1500, 12000);
  REQUIRE(!frontier.steps.empty());
  for (const ServerlessFrontierStep& step : frontier.steps) {
    CAPTURE(step.to_deadline_s);
    CHECK(step.plan.samples_trained >= 500000);
    CHECK(step.plan.samples_asked == 500000);
  }
  // Under FasDL's rounding the same staircase trains less than asked at some step.
  const ServerlessFrontier floor = serverless_cost_deadline_frontier(fasdl_rounding_model(), grid(1), 1500, 12000);
  bool less = false;
  for (const ServerlessFrontierStep& step : floor.steps) less = less || step.plan.samples_trained < 500000;
  CHECK(less);
}
