#pragma once
// SPDX-License-Identifier: MIT
/// @file serverless.hpp Umbrella of serverless planning (FasDL: AWS Lambda + S3; docs/model.md section 4):
/// the model, the exact, exhaustive and FasDL searches and the cost–deadline frontier. Standard library
/// only. The profile fit (serverless/profile_fit.hpp, Ceres) comes with <spotdnn/fit.hpp>; the readers and
/// writers of profiles, transfer tables and plans are in io/serverless_*.hpp.

#include "spotdnn/serverless/batch_rule.hpp"
#include "spotdnn/serverless/exact_search.hpp"
#include "spotdnn/serverless/exhaustive_search.hpp"
#include "spotdnn/serverless/fasdl_search.hpp"
#include "spotdnn/serverless/fasdl_transfer_figures.hpp"
#include "spotdnn/serverless/function_time.hpp"
#include "spotdnn/serverless/iteration_time.hpp"
#include "spotdnn/serverless/pricing.hpp"
#include "spotdnn/serverless/profile.hpp"
#include "spotdnn/serverless/serverless_frontier.hpp"
#include "spotdnn/serverless/serverless_model.hpp"
#include "spotdnn/serverless/serverless_plan.hpp"
#include "spotdnn/serverless/transfer_table.hpp"
