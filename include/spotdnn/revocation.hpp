#pragma once
// SPDX-License-Identifier: MIT
/// @file revocation.hpp Umbrella for planning under spot revocations: hazards per type, Monte Carlo
/// simulation, re-planning after a notice, plans with a confidence level, checkpoint intervals (and the
/// whole of planner.hpp). Needs Boost.Math and threads, which spotdnn::spotdnn carries.

#include "spotdnn/planner.hpp"
#include "spotdnn/revocation/chance_constrained.hpp"
#include "spotdnn/revocation/checkpoint.hpp"
#include "spotdnn/revocation/interruption.hpp"
#include "spotdnn/revocation/progress.hpp"
#include "spotdnn/revocation/replan.hpp"
#include "spotdnn/revocation/replay.hpp"
#include "spotdnn/revocation/replay_policy.hpp"
#include "spotdnn/revocation/simulate.hpp"
#include "spotdnn/revocation/work_policies.hpp"
