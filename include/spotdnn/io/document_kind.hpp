#pragma once
// SPDX-License-Identifier: MIT
/// @file io/document_kind.hpp The `kind` and `schema_version` that mark spotdnn's plan documents.

#include <string_view>

namespace spotdnn::io {

/// The `kind` of a plan document: a whole cluster to launch as a new run.
inline constexpr std::string_view kPlanDocumentKind = "spotdnn.plan";
/// The `kind` of a replan document: instances to add to a run after a revocation.
inline constexpr std::string_view kReplanDocumentKind = "spotdnn.replan";
/// The `kind` of a serverless plan document: W Lambda functions of M MB, K of them aggregating (FasDL).
inline constexpr std::string_view kServerlessPlanDocumentKind = "spotdnn.serverless_plan";
/// The `schema_version` of the plan, replan and serverless plan documents this version of spotdnn writes and reads.
inline constexpr int kPlanDocumentSchemaVersion = 2;

}  // namespace spotdnn::io
