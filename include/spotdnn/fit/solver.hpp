#pragma once
// SPDX-License-Identifier: MIT
/// @file fit/solver.hpp Ceres plumbing the fits share: solver settings, the status of a solve, and the
/// unit-variance covariance with identifiability checks.

#include <cmath>
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <ceres/ceres.h>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/fit/fit_result.hpp"

namespace spotdnn {

/// The dense linear solver of each Levenberg–Marquardt step.
enum class DenseLinearSolver {
  qr,                ///< ceres::DENSE_QR: Householder QR of the m × p Jacobian (most robust)
  normal_cholesky,   ///< ceres::DENSE_NORMAL_CHOLESKY: Cholesky of the p × p JᵀJ (fastest for m ≫ p)
};

/// Settings of each Ceres solve (Levenberg–Marquardt, one thread).
struct SolverSettings {
  int max_iterations = 500;
  DenseLinearSolver linear_solver = DenseLinearSolver::qr;
  double function_tolerance = 1e-15;   ///< relative cost decrease that counts as converged
  double gradient_tolerance = 1e-15;   ///< max-norm of the projected gradient
  double parameter_tolerance = 1e-13;  ///< relative step size (parameters are scaled to O(1) first)
};

namespace detail {

inline ceres::Solver::Options ceres_options(const SolverSettings& settings) {
  ceres::Solver::Options options;
  options.minimizer_type = ceres::TRUST_REGION;
  options.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  options.linear_solver_type =
      settings.linear_solver == DenseLinearSolver::qr ? ceres::DENSE_QR : ceres::DENSE_NORMAL_CHOLESKY;
  options.max_num_iterations = settings.max_iterations;
  options.function_tolerance = settings.function_tolerance;
  options.gradient_tolerance = settings.gradient_tolerance;
  options.parameter_tolerance = settings.parameter_tolerance;
  options.num_threads = 1;
  options.logging_type = ceres::SILENT;
  options.minimizer_progress_to_stdout = false;
  return options;
}

/// converged / no_convergence / failure from a Ceres summary.
inline FitStatus status_of(const ceres::Solver::Summary& summary) {
  switch (summary.termination_type) {
    case ceres::CONVERGENCE: return FitStatus::converged;
    case ceres::NO_CONVERGENCE: return FitStatus::no_convergence;
    default: return FitStatus::failure;
  }
}

/// (JᵀJ)⁻¹ of the free parameter blocks, in block order, assuming unit residual variance.
struct UnitCovariance {
  bool ok = false;
  std::string why;          ///< when !ok: which parameters the data cannot determine
  Eigen::MatrixXd matrix;   ///< p × p
};

/// Checks that every free parameter moves the residuals (a zero Jacobian column means the data says
/// nothing about it: e.g. contention parameters when no cluster is network bound), then that the
/// column-scaled JᵀJ is well conditioned (λ_min/λ_max ≥ 1e-14), and returns (JᵀJ)⁻¹. When not, `why`
/// names the parameters concerned: those with a zero column, or those that carry the near-null directions
/// of the scaled JᵀJ ("the data cannot separate gamma1, gamma2, gamma3: ...").
/// @param normal JᵀJ (p × p) of the free parameters, J the Jacobian of the residuals Ceres minimises
/// @param names  one name per parameter, in order, for the message
inline UnitCovariance unit_covariance_from_normal(const Eigen::MatrixXd& normal, const std::vector<std::string>& names) {
  UnitCovariance out;
  const std::size_t p = names.size();
  if (p == 0) {
    out.ok = true;
    return out;
  }
  std::vector<double> column_norm(p, 0.0);
  double largest = 0;
  for (std::size_t c = 0; c < p; ++c) {
    column_norm[c] = std::sqrt(std::max(0.0, normal(Eigen::Index(c), Eigen::Index(c))));
    largest = std::max(largest, column_norm[c]);
  }
  std::string flat;
  for (std::size_t c = 0; c < p; ++c) {
    if (!(column_norm[c] > 1e-12 * largest)) flat += (flat.empty() ? "" : ", ") + names[c];
  }
  if (!flat.empty()) {
    out.why = "the data do not depend on " + flat + " at the estimate (zero Jacobian column)";
    return out;
  }
  // Columns scaled to unit norm: the eigenvalues give the condition number and the inverse the
  // unit-variance covariance Ceres' Covariance (DENSE_SVD) would give.
  Eigen::VectorXd inverse_norm(static_cast<Eigen::Index>(p));
  for (std::size_t c = 0; c < p; ++c) inverse_norm(Eigen::Index(c)) = 1.0 / column_norm[c];
  const Eigen::MatrixXd scaled = inverse_norm.asDiagonal() * normal * inverse_norm.asDiagonal();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(scaled);
  const Eigen::VectorXd& lambda = eigen.eigenvalues();  // ascending
  const double reciprocal_condition = lambda(0) / lambda(lambda.size() - 1);
  // The ceres::Covariance default: λ_min/λ_max of JᵀJ ≥ 1e-14 (σ_min/σ_max ≥ 1e-7), here after column scaling.
  constexpr double kMinReciprocalCondition = 1e-14;
  if (!(reciprocal_condition >= kMinReciprocalCondition)) {
    // The parameters that move together along the (near-)null directions: the components of weight ≥ 0.05
    // of each unit eigenvector whose eigenvalue is below the limit (those combinations leave the residuals
    // unchanged; in the column-scaled space a component is the share of the parameter's own effect on the
    // residuals); every name when the eigenvalues are not finite.
    std::vector<bool> involved(p, !lambda.allFinite());
    for (Eigen::Index k = 0; k < lambda.size(); ++k) {
      if (lambda.allFinite() && lambda(k) >= kMinReciprocalCondition * lambda(lambda.size() - 1)) break;
      for (std::size_t c = 0; c < p; ++c) {
        if (!(std::abs(eigen.eigenvectors()(Eigen::Index(c), k)) < 0.05)) involved[c] = true;
      }
    }
    std::string tied, all;
    for (std::size_t c = 0; c < p; ++c) {
      if (involved[c]) tied += (tied.empty() ? "" : ", ") + names[c];
      all += (all.empty() ? "" : ", ") + names[c];
    }
    if (tied.empty()) tied = all;  // a direction spread evenly over very many parameters
    out.why = "the data cannot separate " + tied +
              ": the Jacobian is rank-deficient at the estimate (reciprocal condition number of the scaled JtJ " +
              format_number(reciprocal_condition) + "), so some combination of them leaves every residual unchanged";
    return out;
  }
  const Eigen::MatrixXd scaled_inverse =
      eigen.eigenvectors() * lambda.cwiseInverse().asDiagonal() * eigen.eigenvectors().transpose();
  out.matrix = inverse_norm.asDiagonal() * scaled_inverse * inverse_norm.asDiagonal();
  out.ok = true;
  return out;
}

/// unit_covariance_from_normal with JᵀJ built from the Jacobian Ceres evaluates for `blocks` (robust loss
/// applied), i.e. what ceres::Covariance computes, without densifying the m × p Jacobian.
/// @param blocks free parameter blocks
/// @param names  one name per scalar of the blocks, in order, for the message
inline UnitCovariance unit_covariance(ceres::Problem& problem, const std::vector<double*>& blocks,
                                      const std::vector<std::string>& names) {
  const std::size_t p = names.size();
  if (p == 0) return unit_covariance_from_normal(Eigen::MatrixXd(), names);
  ceres::Problem::EvaluateOptions evaluate;
  evaluate.parameter_blocks = blocks;
  evaluate.apply_loss_function = true;
  ceres::CRSMatrix jacobian;
  double cost = 0;
  if (!problem.Evaluate(evaluate, &cost, nullptr, nullptr, &jacobian)) {
    UnitCovariance out;
    out.why = "the model cannot be evaluated at the estimate";
    return out;
  }
  Eigen::MatrixXd normal = Eigen::MatrixXd::Zero(Eigen::Index(p), Eigen::Index(p));
  for (int r = 0; r < jacobian.num_rows; ++r) {
    const int begin = jacobian.rows[std::size_t(r)], end = jacobian.rows[std::size_t(r) + 1];
    for (int a = begin; a < end; ++a) {
      for (int b = begin; b < end; ++b) {
        normal(jacobian.cols[std::size_t(a)], jacobian.cols[std::size_t(b)]) +=
            jacobian.values[std::size_t(a)] * jacobian.values[std::size_t(b)];
      }
    }
  }
  return unit_covariance_from_normal(normal, names);
}

}  // namespace detail
}  // namespace spotdnn
