#pragma once
// SPDX-License-Identifier: MIT
/// @file support/plan_comparison.hpp Test helper: two planners' answers to one problem are the same answer
/// (status, reason, counts, cost and time to 1e-9 relative, the fastest and cheapest clusters, and the vCPU
/// quota groups with what the cluster uses of each).

#include <doctest/doctest.h>

#include <cstddef>

#include <spotdnn/plan/plan_result.hpp>

namespace spotdnn::test {

/// Relative tolerance of costs and times compared between planners (they add the same terms in other orders).
inline constexpr double kPlanCostTolerance = 1e-9;

inline void check_same_plan(const PlanResult& exact, const PlanResult& reference) {
  REQUIRE(exact.status == reference.status);
  CHECK(exact.reason == reference.reason);
  CHECK(exact.counts == reference.counts);
  if (reference.has_plan()) {
    CHECK(exact.prediction.cost_usd == doctest::Approx(reference.prediction.cost_usd).epsilon(kPlanCostTolerance));
    CHECK(exact.prediction.training_time_s == doctest::Approx(reference.prediction.training_time_s).epsilon(kPlanCostTolerance));
  }
  CHECK(exact.fastest.has_value() == reference.fastest.has_value());
  if (exact.fastest && reference.fastest) CHECK(exact.fastest->cluster == reference.fastest->cluster);
  CHECK(exact.cheapest.has_value() == reference.cheapest.has_value());
  if (exact.cheapest && reference.cheapest) CHECK(exact.cheapest->cluster == reference.cheapest->cluster);
  CHECK(exact.binding_quota_group == reference.binding_quota_group);
  REQUIRE(exact.quota_groups.size() == reference.quota_groups.size());
  for (std::size_t g = 0; g < exact.quota_groups.size(); ++g) {
    CHECK(exact.quota_groups[g].code == reference.quota_groups[g].code);
    CHECK(exact.quota_groups[g].used_vcpus == reference.quota_groups[g].used_vcpus);
  }
}

}  // namespace spotdnn::test
