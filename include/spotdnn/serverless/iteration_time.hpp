#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/iteration_time.hpp One FasDL iteration: K aggregators exchange model chunks of
/// fs = S/K MB through S3 while every function trains its batch (docs/model.md eq. (S4)).

namespace spotdnn::serverless {

/// FasDL's empirical polling term per worker and MB of chunk (s/MB), docs/model.md eq. (S4).
inline constexpr double kPollingSecondsPerWorkerMb = 0.00119;
/// FasDL's empirical polling offset (MB), docs/model.md eq. (S4).
inline constexpr double kPollingOffsetMb = 33.7;

/// The parts of one iteration (seconds).
template <typename T>
struct IterationTimes {
  T upload_s{};     ///< T_up = K·up(M, fs) + T_trans(M)
  T download_s{};   ///< T_down = (K − 1)·down(M, fs), or down(M, fs) when K = 1
  T aggregate_s{};  ///< T_agg = up(M, fs) + (W − 1)·down(M, fs) + 0.00119·W·(fs + 33.7)·(2 − K/W)
  T train_s{};      ///< T_train(B, M)
  T total_s{};      ///< t = T_up + T_down + T_agg + T_train
};

/// The time of one iteration of W functions with K aggregators.
/// @note FasDL communication model, docs/model.md eq. (S4).
/// @param workers W (≥ 1)
/// @param aggregators K (1 ≤ K ≤ W)
/// @param chunk_mb fs = S/K (MB)
/// @param upload_s up(M, fs) (s), eq. (S3)
/// @param download_s down(M, fs) (s), eq. (S3)
/// @param transform_s T_trans(M) (s), eq. (S1)
/// @param train_s T_train(B, M) (s), eq. (S1)
template <typename T>
IterationTimes<T> iteration_times(const T& workers, const T& aggregators, const T& chunk_mb, const T& upload_s,
                                  const T& download_s, const T& transform_s, const T& train_s) {
  IterationTimes<T> out;
  out.upload_s = aggregators * upload_s + transform_s;
  out.download_s = aggregators > T(1) ? (aggregators - T(1)) * download_s : download_s;
  out.aggregate_s = upload_s + (workers - T(1)) * download_s +
                    T(kPollingSecondsPerWorkerMb) * workers * (chunk_mb + T(kPollingOffsetMb)) * (T(2) - aggregators / workers);
  out.train_s = train_s;
  out.total_s = out.upload_s + out.download_s + out.aggregate_s + out.train_s;
  return out;
}

}  // namespace spotdnn::serverless
