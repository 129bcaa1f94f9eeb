// SPDX-License-Identifier: MIT
// The interruption model: Spot Advisor bands, hazards from the catalog, Weibull lifetimes, sampling.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <spotdnn/revocation.hpp>

using namespace spotdnn;

namespace {

PerformanceModel preset_model(Catalog catalog = presets::resnet110_catalog()) {
  return PerformanceModel(presets::resnet110_workload(), std::move(catalog));
}

std::size_t type_index(const PerformanceModel& model, const char* name) { return *model.worker_type_index(name); }

}  // namespace

TEST_CASE("each Spot Advisor band converts to lambda = -ln(1 - r)/720 h at its representative share") {
  const double expected_shares[] = {0.025, 0.075, 0.125, 0.175, 0.25};
  for (std::size_t i = 0; i < 5; ++i) {
    const std::string band(kInterruptionBands[i]);
    CAPTURE(band);
    CHECK(interruption_band(band).representative_monthly_share == expected_shares[i]);
    const double lambda = hazard_per_hour_from_band(band);
    CHECK(lambda == doctest::Approx(-std::log(1 - expected_shares[i]) / 720.0).epsilon(1e-14));
    // The share interrupted within one month is the representative share again.
    CHECK(interrupted_share(lambda, 720.0 * 3600.0) == doctest::Approx(expected_shares[i]).epsilon(1e-12));
  }
  CHECK(hazard_per_hour_from_band("5-10%") == doctest::Approx(1.0827955e-4).epsilon(1e-6));
  CHECK(hazard_per_hour_from_band("5\xE2\x80\x93" "10%") == hazard_per_hour_from_band("5-10%"));
  CHECK_THROWS_AS((void)hazard_per_hour_from_band("7%"), spotdnn::invalid_argument);
  CHECK_THROWS_AS((void)hazard_per_hour_from_monthly_share(1.0), spotdnn::invalid_argument);
}

TEST_CASE("a type's hazard comes from an override, on-demand, the catalog hazard, its band, then the fallback") {
  Catalog catalog = presets::resnet110_catalog();
  catalog.instance_types[0].revocation_hazard_per_hour = 0.01;  // p3.2xlarge
  catalog.instance_types[0].interruption_band = ">20%";         // the hazard wins over the band
  catalog.instance_types[1].interruption_band = "10-15%";       // g4dn.4xlarge
  catalog.instance_types[2].market = Market::on_demand;         // g3.8xlarge
  catalog.instance_types[2].revocation_hazard_per_hour = 0.5;
  const PerformanceModel model = preset_model(catalog);

  InterruptionOptions options;
  options.fallback_hazard_per_hour = 0.002;
  options.hazard_overrides = {{"p2.8xlarge", 0.03}};
  const InterruptionModel m(model, options);
  CHECK(m.hazard_per_hour(type_index(model, "p3.2xlarge")) == 0.01);
  CHECK(m.types()[type_index(model, "p3.2xlarge")].source == HazardSource::catalog_hazard);
  CHECK(m.hazard_per_hour(type_index(model, "g4dn.4xlarge")) == hazard_per_hour_from_band("10-15%"));
  CHECK(m.types()[type_index(model, "g4dn.4xlarge")].source == HazardSource::catalog_band);
  CHECK(m.hazard_per_hour(type_index(model, "g3.8xlarge")) == 0.0);
  CHECK(m.types()[type_index(model, "g3.8xlarge")].source == HazardSource::on_demand);
  CHECK(m.hazard_per_hour(type_index(model, "g3.16xlarge")) == 0.002);
  CHECK(m.types()[type_index(model, "g3.16xlarge")].source == HazardSource::fallback);
  CHECK(m.hazard_per_hour(type_index(model, "p2.8xlarge")) == 0.03);
  CHECK(m.types()[type_index(model, "p2.8xlarge")].source == HazardSource::override_value);
}

TEST_CASE("a type without hazard, band or fallback is recorded as missing, an error only where it is used") {
  Catalog catalog = presets::resnet110_catalog();
  catalog.instance_types[1].interruption_band = "5-10%";  // g4dn.4xlarge
  const PerformanceModel model = preset_model(catalog);
  const InterruptionModel m(model);  // the preset gives no hazards: not an error by itself
  const std::size_t p3 = type_index(model, "p3.2xlarge"), g4dn = type_index(model, "g4dn.4xlarge");
  CHECK(m.types()[p3].source == HazardSource::missing);
  CHECK_FALSE(m.has_hazard(p3));
  CHECK(m.has_hazard(g4dn));
  CHECK(m.hazard_per_hour(g4dn) == hazard_per_hour_from_band("5-10%"));
  // Asking for a missing hazard names the type and the ways to give one.
  const std::string error = [&] {
    try {
      (void)m.hazard_per_hour(p3);
    } catch (const spotdnn::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  CHECK(error.find("hazard of \"p3.2xlarge\" = missing") != std::string::npos);
  CHECK(error.find("--hazard p3.2xlarge=RATE") != std::string::npos);
  CHECK(error.find("--fallback-band") != std::string::npos);
  CHECK_THROWS_AS((void)m.mean_lifetime_s(p3), spotdnn::invalid_argument);
  std::vector<bool> used(model.worker_types().size(), false);
  used[g4dn] = true;
  m.require_hazards(used, "test", "the test uses it");  // g4dn.4xlarge alone: fine
  used[p3] = true;
  CHECK_THROWS_WITH_AS(m.require_hazards(used, "test", "the test uses it"),
                       doctest::Contains("test: hazard of \"p3.2xlarge\" = missing: the test uses it"), spotdnn::invalid_argument);
  // The cluster's MTTI needs hazards only for the types it counts.
  std::vector<int> counts(model.worker_types().size(), 0);
  counts[g4dn] = 3;
  CHECK(m.mean_time_to_interruption_s(counts) == doctest::Approx(3600.0 / (3 * hazard_per_hour_from_band("5-10%"))).epsilon(1e-12));
  counts[p3] = 1;
  CHECK_THROWS_AS((void)m.mean_time_to_interruption_s(counts), spotdnn::invalid_argument);

  InterruptionOptions bad;
  bad.hazard_overrides = {{"t2.nano", 0.1}};
  bad.fallback_hazard_per_hour = 0.0;
  CHECK_THROWS_AS((void)InterruptionModel(model, bad), spotdnn::invalid_argument);
  InterruptionOptions negative;
  negative.fallback_hazard_per_hour = -1.0;
  CHECK_THROWS_AS((void)InterruptionModel(model, negative), spotdnn::invalid_argument);
}

TEST_CASE("a Weibull shape keeps the share interrupted within the reference month and inverts its survival") {
  for (double shape : {0.5, 1.0, 2.0}) {
    CAPTURE(shape);
    const InterruptionModel m = InterruptionModel::from_hazards({hazard_per_hour_from_band("15-20%")}, shape);
    CHECK(1.0 - m.survival(0, 720.0 * 3600.0) == doctest::Approx(0.175).epsilon(1e-12));
    for (double e : {0.01, 0.3, 1.0, 4.0}) {
      CHECK(m.survival(0, m.lifetime_s(0, e)) == doctest::Approx(std::exp(-e)).epsilon(1e-12));
    }
  }
  const InterruptionModel exponential = InterruptionModel::from_hazards({0.5});
  CHECK(exponential.lifetime_s(0, 1.0) == doctest::Approx(7200.0).epsilon(1e-14));
  CHECK(exponential.mean_lifetime_s(0) == doctest::Approx(7200.0).epsilon(1e-14));
  CHECK(std::isinf(InterruptionModel::from_hazards({0.0}).lifetime_s(0, 1.0)));
}

TEST_CASE("the cluster's mean time to interruption is 1/sum(n_k lambda_k) for exponential lifetimes") {
  const InterruptionModel m = InterruptionModel::from_hazards({0.01, 0.02, 0.0});
  CHECK(m.mean_time_to_interruption_s({2, 3, 7}) == doctest::Approx(3600.0 / 0.08).epsilon(1e-14));
  CHECK(std::isinf(m.mean_time_to_interruption_s({0, 0, 4})));
  // Weibull: the minimum of Weibulls with one shape is Weibull with the summed rate.
  const InterruptionModel w = InterruptionModel::from_hazards({0.01, 0.02}, 2.0);
  const InterruptionModel w_total = InterruptionModel::from_hazards({0.05}, 2.0);
  CHECK(w.mean_time_to_interruption_s({3, 1}) == doctest::Approx(w_total.mean_lifetime_s(0)).epsilon(1e-14));
}

TEST_CASE("sampled lifetimes have the mean of their law within the Monte Carlo interval") {
  for (double shape : {1.0, 0.7, 1.5}) {
    CAPTURE(shape);
    const InterruptionModel m = InterruptionModel::from_hazards({0.2}, shape);
    std::mt19937_64 rng(42);
    const int n = 200000;
    double sum = 0, sum_sq = 0;
    for (int i = 0; i < n; ++i) {
      const double life = m.lifetime_s(0, detail::unit_exponential(rng()));
      sum += life;
      sum_sq += life * life;
    }
    const double mean = sum / n;
    const double standard_error = std::sqrt((sum_sq / n - mean * mean) / n);
    CHECK(std::abs(mean - m.mean_lifetime_s(0)) < 4 * standard_error);
  }
}

TEST_CASE("scenario seeds differ for every index and seed") {
  CHECK(detail::scenario_seed(1, 0) != detail::scenario_seed(1, 1));
  CHECK(detail::scenario_seed(1, 0) != detail::scenario_seed(2, 0));
  CHECK(detail::unit_exponential(0) == 0.0);
  CHECK(std::isfinite(detail::unit_exponential(~std::uint64_t(0))));
}
