#pragma once
// SPDX-License-Identifier: MIT
/// @file planner.hpp Umbrella: the performance model, the planners and the presets, on the standard
/// library alone. Revocations (simulation, re-planning, confidence) are in revocation.hpp, fitting in
/// fit.hpp, the AWS launcher in launcher.hpp.

#include "spotdnn/availability_zone.hpp"
#include "spotdnn/catalog.hpp"
#include "spotdnn/cluster.hpp"
#include "spotdnn/errors.hpp"
#include "spotdnn/model/cluster_rates.hpp"
#include "spotdnn/model/contention.hpp"
#include "spotdnn/model/iteration_time.hpp"
#include "spotdnn/model/loss_model.hpp"
#include "spotdnn/model/performance_model.hpp"
#include "spotdnn/model/prediction.hpp"
#include "spotdnn/plan/brute_force.hpp"
#include "spotdnn/plan/exact.hpp"
#include "spotdnn/plan/frontier.hpp"
#include "spotdnn/plan/plan_options.hpp"
#include "spotdnn/plan/plan_result.hpp"
#include "spotdnn/plan/sliding_window.hpp"
#include "spotdnn/placement_score.hpp"
#include "spotdnn/plan/slo.hpp"
#include "spotdnn/presets.hpp"
#include "spotdnn/region_choice.hpp"
#include "spotdnn/status.hpp"
#include "spotdnn/units.hpp"
#include "spotdnn/version.hpp"
#include "spotdnn/workload.hpp"
