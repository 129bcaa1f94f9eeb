// SPDX-License-Identifier: MIT
// Young's and Daly's checkpoint intervals against Daly's published values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <spotdnn/revocation.hpp>

using namespace spotdnn;

namespace {
constexpr double kMinute = 60.0;
constexpr double kHour = 3600.0;
}  // namespace

TEST_CASE("Young and Daly match the published intervals for a 5 minute write") {
  struct Row {
    double mtti_s, young_min, daly_min;
  };
  // Daly (2006), for δ = 5 min: Young / Daly in minutes, to the published 0.1 min.
  const Row rows[] = {{24 * kHour, 120.0, 116.7}, {6 * kHour, 60.0, 56.7}, {15 * kMinute, 12.2, 9.1}};
  for (const Row& row : rows) {
    CAPTURE(row.mtti_s);
    const double young = young_checkpoint_interval_s(5 * kMinute, row.mtti_s) / kMinute;
    const double daly = daly_checkpoint_interval_s(5 * kMinute, row.mtti_s) / kMinute;
    CHECK(std::round(young * 10) / 10 == doctest::Approx(row.young_min).epsilon(1e-12));
    CHECK(std::round(daly * 10) / 10 == doctest::Approx(row.daly_min).epsilon(1e-12));
    CHECK(daly < young);
  }
  CHECK(young_checkpoint_interval_s(5 * kMinute, 24 * kHour) == doctest::Approx(7200.0).epsilon(1e-15));
}

TEST_CASE("Daly's interval is the MTTI once the write takes at least twice the MTTI") {
  CHECK(daly_checkpoint_interval_s(100.0, 50.0) == 50.0);
  CHECK(daly_checkpoint_interval_s(100.0, 40.0) == 40.0);
  CHECK(daly_checkpoint_interval_s(99.0, 50.0) < 50.0 + 1e-9);
}

TEST_CASE("checkpoint_plan gives both intervals, and never checkpoints when nothing is revoked") {
  const CheckpointPlan plan = checkpoint_plan(5 * kMinute, 24 * kHour);
  CHECK(plan.young_interval_s == doctest::Approx(7200.0).epsilon(1e-15));
  CHECK(plan.daly_interval_s / kMinute == doctest::Approx(116.69).epsilon(1e-4));
  CHECK(plan.overhead_fraction_at_daly > 0.0);
  CHECK(plan.overhead_fraction_at_daly < 0.1);
  const CheckpointPlan never = checkpoint_plan(5 * kMinute, std::numeric_limits<double>::infinity());
  CHECK(std::isinf(never.young_interval_s));
  CHECK(std::isinf(never.daly_interval_s));
}

TEST_CASE("checkpoint intervals reject a write time or MTTI that is not positive") {
  CHECK_THROWS_AS((void)young_checkpoint_interval_s(0.0, 3600.0), spotdnn::invalid_argument);
  CHECK_THROWS_AS((void)daly_checkpoint_interval_s(60.0, -1.0), spotdnn::invalid_argument);
  CHECK_THROWS_AS((void)checkpoint_plan(-1.0, 3600.0), spotdnn::invalid_argument);
}
