#pragma once
// SPDX-License-Identifier: MIT
/// @file fit.hpp Umbrella for the profiler: fit the loss and throughput models to traces with Ceres
/// (link spotdnn::fit). Trace files are read by io/csv.hpp
/// (include it beside this one).

#include "spotdnn/fit/batch_rule.hpp"
#include "spotdnn/fit/fit_result.hpp"
#include "spotdnn/fit/loss_fit.hpp"
#include "spotdnn/fit/solver.hpp"
#include "spotdnn/fit/throughput_fit.hpp"
#include "spotdnn/fit/traces.hpp"
#include "spotdnn/planner.hpp"
