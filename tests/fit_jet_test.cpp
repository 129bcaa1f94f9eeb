// SPDX-License-Identifier: MIT
// The model templates (docs/model.md) instantiated with ceres::Jet: they compile, and their derivatives match
// central finite differences. A Jet-unsafe edit to the model fails this build or these checks.
#include <array>
#include <cmath>
#include <cstddef>

#include <ceres/jet.h>

#include <spotdnn/fit.hpp>

#include <doctest/doctest.h>

// glog (pulled in by Ceres) defines CHECK as an abort-on-failure assertion; use doctest's.
#undef CHECK
#define CHECK DOCTEST_CHECK

using namespace spotdnn;

namespace {

constexpr double kDerivativeTolerance = 1e-6;  // relative, against central differences with h = 1e-6·|x|

// Compares ∂f/∂x_k from Jets with (f(x + h e_k) − f(x − h e_k)) / 2h for every input k.
template <std::size_t N, typename F>
void check_derivatives(const F& f, const std::array<double, N>& x) {
  using Jet = ceres::Jet<double, int(N)>;
  std::array<Jet, N> xj;
  for (std::size_t k = 0; k < N; ++k) xj[k] = Jet(x[k], int(k));
  const Jet value = f(xj.data());
  CHECK(value.a == doctest::Approx(f(x.data())).epsilon(1e-15));
  for (std::size_t k = 0; k < N; ++k) {
    const double h = 1e-6 * std::max(std::abs(x[k]), 1e-3);
    std::array<double, N> up = x, down = x;
    up[k] += h;
    down[k] -= h;
    const double central = (f(up.data()) - f(down.data())) / (2 * h);
    INFO("input " << k << ": jet " << value.v[int(k)] << ", central difference " << central);
    CHECK(value.v[int(k)] == doctest::Approx(central).epsilon(kDerivativeTolerance).scale(std::abs(value.a) / std::max(std::abs(x[k]), 1e-3)));
  }
}

}  // namespace

TEST_CASE("the contention probability differentiates with Jets inside its clamp") {
  check_derivatives<3>([](const auto* x) { return contention_probability(x[0], x[1], x[2]); },
                       std::array<double, 3>{10.0, 0.8, -1.92});
}

TEST_CASE("the contended worker bandwidth differentiates with Jets in all four inputs") {
  // n = 12, B_ps = 1.2 GB/s, B_req = 142 MB/s: the PS link is oversubscribed.
  check_derivatives<4>([](const auto* x) { return worker_bandwidth_bytes_per_s(x[0], x[1], x[2], x[3]); },
                       std::array<double, 4>{12.0, 1.2e9, 1.42e8, 0.85});
}

TEST_CASE("the iteration time and the compute time from a profile differentiate with Jets") {
  check_derivatives<5>([](const auto* x) { return iteration_time_s(x[0], x[1], x[2], x[3], x[4]); },
                       std::array<double, 5>{0.4, 11.5e6, 1.1e8, 2.0, 1e10});
  check_derivatives<5>([](const auto* x) { return compute_time_from_profile_s(x[0], x[1], x[2], x[3], x[4]); },
                       std::array<double, 5>{1.0, 11.5e6, 1.42e8, 2.0, 1e10});
}

TEST_CASE("ClusterRates with Jets differentiates throughput, weighted batch and the convergence coefficient") {
  // Two groups: 2 workers of batch x0 at time x1, 3 workers of batch x2 at time x3.
  auto rates = [](const auto* x) {
    using T = std::remove_const_t<std::remove_reference_t<decltype(x[0])>>;
    ClusterRates<T> r;
    r.add(2, x[0], x[1]);
    r.add(3, x[2], x[3]);
    return r;
  };
  const std::array<double, 4> x{1024.0, 0.55, 512.0, 0.9};
  check_derivatives<4>([&](const auto* y) { return rates(y).iterations_per_s(); }, x);
  check_derivatives<4>([&](const auto* y) { return rates(y).samples_per_s(); }, x);
  check_derivatives<4>([&](const auto* y) { return rates(y).weighted_batch(); }, x);
  check_derivatives<4>([&](const auto* y) { return rates(y).convergence_coefficient(); }, x);
}

TEST_CASE("both loss forms differentiate with Jets in gamma, the iteration and the batch") {
  // x = (j, b_w, γ1..γ4)
  check_derivatives<6>(
      [](const auto* x) {
        using T = std::remove_const_t<std::remove_reference_t<decltype(x[0])>>;
        return loss_seed_form(x[0], T(4.0), x[1], x + 2);
      },
      std::array<double, 6>{5000.0, 1024.0, 876.5, -0.2, 2507.6, 0.5});
  // x = (j, b_w, R, γ1..γ5)
  check_derivatives<8>(
      [](const auto* x) {
        using T = std::remove_const_t<std::remove_reference_t<decltype(x[0])>>;
        return loss_cc_form(x[0], T(6.0), x[1], x[2], x + 3);
      },
      std::array<double, 8>{5000.0, 1024.0, 0.91, 876.5, -0.2, 2507.6, 0.3, 0.5});
}
