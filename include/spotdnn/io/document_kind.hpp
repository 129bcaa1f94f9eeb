#pragma once
// SPDX-License-Identifier: MIT
/// @file io/document_kind.hpp The `kind` and `schema_version` that mark spotdnn's plan documents.

#include <string_view>

namespace spotdnn::io {

/// The `kind` of a plan document: a whole cluster to launch as a new run.
inline constexpr std::string_view kPlanDocumentKind = "spotdnn.plan";
/// The `kind` of a replan document: instances to add to a run after a revocation.
inline constexpr std::string_view kReplanDocumentKind = "spotdnn.replan";
/// The `schema_version` of both documents that this version of spotdnn writes and reads.
inline constexpr int kPlanDocumentSchemaVersion = 2;

}  // namespace spotdnn::io
