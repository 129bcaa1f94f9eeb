#pragma once
// SPDX-License-Identifier: MIT
/// @file limits.hpp The documented limits of every reader and every count spotdnn accepts.
///
/// spotdnn reads files other people and programs wrote. Every reader refuses input beyond these limits
/// with spotdnn::invalid_argument naming the field, the value and the limit (the CLI exits 2), and every
/// input inside them is answered quickly. The README's "Limits" table lists the same values.

#include <cstddef>
#include <cstdint>

namespace spotdnn {

/// Largest JSON document read (workload, catalog, plan, replan state, AWS config): 16 MiB.
inline constexpr std::uintmax_t kMaxJsonFileBytes = std::uintmax_t(16) << 20;
/// Largest trace CSV read (loss or throughput): 1 GiB (a 10⁷-row loss trace is about 0.5 GB).
inline constexpr std::uintmax_t kMaxCsvFileBytes = std::uintmax_t(1) << 30;
/// Deepest JSON nesting accepted (objects and arrays); spotdnn's own documents need 5.
inline constexpr int kMaxJsonDepth = 64;
/// Longest text of one cluster string (--cluster, --keep, a trace's cluster cell): 1 MiB.
inline constexpr std::size_t kMaxClusterTextBytes = std::size_t(1) << 20;
/// Largest spot trace file read (a JSON series, an events CSV or a fleet log): 32 MiB. A series of the
/// longest length (kMaxTraceTicks) written as "0, " takes 30 MB, and reading it about 2 s and 0.6 GB.
inline constexpr std::uintmax_t kMaxTraceFileBytes = std::uintmax_t(32) << 20;
/// Most ticks (values) of one JSON trace series: 10⁷ (3.8 years at 12 s). The real series have 4,000–20,000.
inline constexpr std::size_t kMaxTraceTicks = 10000000;
/// Longest tick of a series (`gap_seconds`): one day.
inline constexpr double kMaxTraceTickS = 86400;
/// Longest time one trace may span (s), about 31.7 years: far beyond any trace, small enough that times in
/// milliseconds stay exact in a double and in 64 bits.
inline constexpr double kMaxTraceSpanS = 1e9;
/// Most instances requested of a `counts` trace (`--requested N`): 10,000 (the real traces ask for 16).
inline constexpr int kMaxTraceRequested = 10000;
/// Most rows of one events CSV or fleet log.
inline constexpr std::size_t kMaxTraceEvents = 10000000;
/// Most up intervals (and waits) of one pool's trace: 5·10⁶, so that any 0/1 series of kMaxTraceTicks fits
/// (160 MB). A `counts` series or a log with more is refused.
inline constexpr std::size_t kMaxTraceIntervals = 5000000;
/// Most pools read at once: trace files given together, or pools of one fleet log.
inline constexpr std::size_t kMaxTracePools = 10000;

/// Most instance types in one catalog.
inline constexpr int kMaxInstanceTypes = 1000;
/// Largest quota of one instance type (instances). AWS's own vCPU quotas allow a few thousand GPU instances.
inline constexpr int kMaxQuota = 100000;
/// Most workers of one cluster in total (all types together); sums are taken in 64 bits.
inline constexpr std::int64_t kMaxClusterWorkers = 1000000;

/// Most Monte Carlo scenarios of one simulation or confidence search.
inline constexpr int kMaxScenarios = 10000000;
/// Most events one simulation may handle: instances drawn, revocations, notices and joins, over all its
/// scenarios (a re-plan counts 10, plus 5 per instance that stays, plus the nodes its search visits). It
/// bounds the work: the worst cases measured (10⁴ workers replaced, same type or re-planned, at one
/// revocation per hour until 10× the deadline) are refused after 1.1 s and 2.1 s; the preset's clusters
/// need a few dozen events per scenario. scenarios × workers above it is refused before anything runs.
inline constexpr std::int64_t kMaxSimulatedEvents = 10000000;
/// The work one exact plan search may do by default (PlanOptions::max_search_steps): a step is one worker
/// type looked at by one bound (10–30 ns; the default is about a second of one core). A search that
/// reaches it stops and answers with the best plan it found and a proven lower bound on the optimum
/// (status feasible), or, having found none, undecided; it never runs on unbounded.
inline constexpr std::int64_t kDefaultPlanSearchSteps = 50000000;
/// Largest PlanOptions::max_search_steps (--search-steps).
inline constexpr std::int64_t kMaxPlanSearchSteps = std::int64_t(1) << 50;
/// Most threads of one simulation (0 means one per core).
inline constexpr int kMaxThreads = 256;
/// Most evenly spaced deadlines a frontier is sampled at (--deadlines FROM:TO:COUNT).
inline constexpr int kMaxDeadlineSamples = 100000;
/// Most cells of one S3 transfer table (--transfer): every serverless search interpolates the whole table
/// once per aggregator count, so the table's size bounds the search's work. FasDL's table has 456.
inline constexpr std::size_t kMaxTransferCells = 100000;
/// Most configurations (W, M, K) one serverless enumeration evaluates (`--algorithm exhaustive`, or the
/// exact search's fallback for a profile with B + b < 0): about 30 s on one core. The 1 MB lattice with
/// W ≤ 256 has 3.3·10⁸; the exact search needs no such limit.
inline constexpr double kMaxServerlessConfigurations = 1e9;
/// Most local solves of one loss fit (--starts).
inline constexpr int kMaxFitStarts = 1000;
/// Largest per-GPU batch a training profile may hold (the training example's --profile-batches limit).
inline constexpr int kMaxBatchPerGpu = 65536;
/// Most training profiles one `workload build` reads (one per instance type), and most measurements in one.
inline constexpr int kMaxTrainingProfiles = kMaxInstanceTypes;
inline constexpr int kMaxProfileMeasurements = 1000;

}  // namespace spotdnn
