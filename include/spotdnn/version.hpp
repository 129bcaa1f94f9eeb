#pragma once
// SPDX-License-Identifier: MIT
/// @file version.hpp The spotdnn version, as macros and as a constexpr string.

#define SPOTDNN_VERSION_MAJOR 0
#define SPOTDNN_VERSION_MINOR 1
#define SPOTDNN_VERSION_PATCH 0

namespace spotdnn {
inline constexpr const char* kVersionString = "0.1.0";
}  // namespace spotdnn
