#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher.hpp Umbrella for the optional AWS launcher: launch and join scripts, status and
/// teardown scripts, bootstrap user data, EC2 Fleet requests, the serverless (AWS Lambda) launch, status
/// and teardown scripts, the readers of plan documents and AWS configuration files, and the quoting and
/// validation they rely on; the controller of `spotdnn watch` (its decisions, journal and progress file) and
/// the cost of a run. Nothing else in spotdnn depends on it.

#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/aws_config_json.hpp"
#include "spotdnn/launcher/bash_template.hpp"
#include "spotdnn/launcher/bootstrap.hpp"
#include "spotdnn/launcher/controller.hpp"
#include "spotdnn/launcher/fleet.hpp"
#include "spotdnn/launcher/launch_plan.hpp"
#include "spotdnn/launcher/launch_plan_json.hpp"
#include "spotdnn/launcher/launch_script.hpp"
#include "spotdnn/launcher/run_cost.hpp"
#include "spotdnn/launcher/run_id.hpp"
#include "spotdnn/launcher/run_instance.hpp"
#include "spotdnn/launcher/run_instances_json.hpp"
#include "spotdnn/launcher/run_instances_request.hpp"
#include "spotdnn/launcher/run_progress_json.hpp"
#include "spotdnn/launcher/run_scripts.hpp"
#include "spotdnn/launcher/serverless_launch_plan.hpp"
#include "spotdnn/launcher/serverless_launch_script.hpp"
#include "spotdnn/launcher/serverless_plan_json.hpp"
#include "spotdnn/launcher/serverless_run_scripts.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"
#include "spotdnn/launcher/watch_journal.hpp"
