#pragma once
// SPDX-License-Identifier: MIT
/// @file launcher.hpp Umbrella for the optional AWS launcher: launch script, bootstrap user data, EC2 Fleet
/// requests, and the quoting and validation they rely on. Nothing else in spotdnn depends on it.

#include "spotdnn/launcher/aws_cli.hpp"
#include "spotdnn/launcher/aws_config.hpp"
#include "spotdnn/launcher/bootstrap.hpp"
#include "spotdnn/launcher/fleet.hpp"
#include "spotdnn/launcher/shell.hpp"
#include "spotdnn/launcher/tags.hpp"
