#pragma once
// SPDX-License-Identifier: MIT
/// @file fit.hpp Umbrella for the profiler: fit the loss and throughput models and the serverless profile
/// (FasDL's a, b, m, k1, k2) to traces with Ceres (link spotdnn::fit). Trace files are read by io/csv.hpp
/// and io/serverless_trace_csv.hpp (include them beside this one).

#include "spotdnn/fit/batch_rule.hpp"
#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/fit/loss_fit.hpp"
#include "spotdnn/fit/solver.hpp"
#include "spotdnn/fit/throughput_fit.hpp"
#include "spotdnn/fit/traces.hpp"
#include "spotdnn/planner.hpp"
#include "spotdnn/serverless/profile_fit.hpp"
