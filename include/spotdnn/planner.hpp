#pragma once
// SPDX-License-Identifier: MIT
/// @file planner.hpp Umbrella: everything a scheduler needs except Ceres fitting and the AWS launcher.

#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/errors.hpp"
#include "spotdnn/model/cluster_rates.hpp"
#include "spotdnn/model/contention.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/model/loss_model.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/presets.hpp"
#include "spotdnn/status.hpp"
#include "spotdnn/units.hpp"
#include "spotdnn/version.hpp"
#include "spotdnn/workload.hpp"
