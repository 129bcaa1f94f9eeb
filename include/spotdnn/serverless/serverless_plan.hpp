#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless/serverless_plan.hpp What a serverless planner is asked (the deadline and the memory
/// grid) and what it answers: the configuration with every figure, or why there is none.

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "spotdnn/detail/validate.hpp"
#include "spotdnn/serverless/serverless_model.hpp"
#include "spotdnn/status.hpp"

namespace spotdnn::serverless {

/// Which serverless planner produced a result.
enum class ServerlessAlgorithm {
  exact,       ///< the true optimum over (W, M, K) on the grid, with proven pruning (serverless/exact_search.hpp)
  exhaustive,  ///< every configuration on the grid (serverless/exhaustive_search.hpp): the optimum, slowly
  fasdl,       ///< FasDL's greedy search (serverless/fasdl_search.hpp): a heuristic
};

constexpr std::string_view to_string(ServerlessAlgorithm algorithm) {
  switch (algorithm) {
    case ServerlessAlgorithm::exact: return "exact";
    case ServerlessAlgorithm::exhaustive: return "exhaustive";
    case ServerlessAlgorithm::fasdl: return "fasdl";
  }
  return "exact";
}

constexpr std::optional<ServerlessAlgorithm> serverless_algorithm_from_string(std::string_view text) {
  if (text == "exact") return ServerlessAlgorithm::exact;
  if (text == "exhaustive") return ServerlessAlgorithm::exhaustive;
  if (text == "fasdl") return ServerlessAlgorithm::fasdl;
  return std::nullopt;
}

/// The question: the cheapest configuration finishing by the deadline, memory on a grid
/// M = min_memory_mb + k·memory_step_mb ≤ max_memory_mb (docs/model.md, serverless constraints).
struct ServerlessPlanOptions {
  double deadline_s = 0;         ///< T ≤ deadline (inclusive)
  int min_memory_mb = kLambdaMinMemoryMb;
  int memory_step_mb = 64;       ///< 1 is Lambda's real lattice
  int max_memory_mb = kLambdaMaxMemoryMb;

  /// Throws spotdnn::invalid_argument naming the first bad field.
  void validate() const {
    constexpr std::string_view fn = "ServerlessPlanOptions::validate";
    spotdnn::detail::require_positive(fn, "deadline_s", deadline_s);
    if (min_memory_mb < kLambdaMinMemoryMb || min_memory_mb > kLambdaMaxMemoryMb) {
      spotdnn::detail::fail(fn, "min_memory_mb", double(min_memory_mb), "must be in Lambda's 128..10240 MB");
    }
    if (max_memory_mb < min_memory_mb || max_memory_mb > kLambdaMaxMemoryMb) {
      spotdnn::detail::fail(fn, "max_memory_mb", double(max_memory_mb),
                            "must be in min_memory_mb (" + std::to_string(min_memory_mb) + ")..10240 MB");
    }
    if (memory_step_mb < 1 || memory_step_mb > kLambdaMaxMemoryMb) {
      spotdnn::detail::fail(fn, "memory_step_mb", double(memory_step_mb), "must be in 1..10240 MB");
    }
  }

  /// The number of memory sizes on the grid.
  [[nodiscard]] int memory_sizes() const { return (max_memory_mb - min_memory_mb) / memory_step_mb + 1; }
  /// The k-th memory size (MB), k in 0..memory_sizes() − 1.
  [[nodiscard]] int memory_mb(int k) const { return min_memory_mb + k * memory_step_mb; }
};

/// How much work a search did (for benchmarks; not part of the answer).
struct ServerlessSearchStats {
  std::size_t configurations_evaluated = 0;  ///< full estimates
  std::size_t worker_aggregator_pairs = 0;   ///< (W, K) pairs whose memory sizes were scanned
  std::size_t pairs_pruned = 0;              ///< (W, K) pairs ruled out by a proven bound
};

/// The answer of a serverless planner.
struct ServerlessPlanResult {
  /// optimal (exact, exhaustive), feasible (fasdl: meets the deadline, optimality not claimed),
  /// infeasible (the message names the fastest configuration and its time).
  Status status = Status::invalid_input;
  std::string message;  ///< one sentence a person can read
  ServerlessAlgorithm algorithm = ServerlessAlgorithm::exact;
  double deadline_s = 0;
  ServerlessEstimate plan;  ///< meaningful when has_plan()
  /// The fastest runnable configuration on the grid (infeasible: why the deadline cannot be met).
  std::optional<ServerlessEstimate> fastest;
  ServerlessSearchStats stats;

  [[nodiscard]] bool has_plan() const { return status == Status::optimal || status == Status::feasible; }
};

/// Ties between configurations of equal cost: fewest workers, then least memory, then fewest aggregators
/// (docs/model.md, serverless constraints). True when `x` is preferred to `y`.
inline bool preferred(const ServerlessEstimate& x, const ServerlessEstimate& y) {
  if (x.cost_usd() != y.cost_usd()) return x.cost_usd() < y.cost_usd();
  if (x.configuration.workers != y.configuration.workers) return x.configuration.workers < y.configuration.workers;
  if (x.configuration.memory_mb != y.configuration.memory_mb) return x.configuration.memory_mb < y.configuration.memory_mb;
  return x.configuration.aggregators < y.configuration.aggregators;
}

}  // namespace spotdnn::serverless
