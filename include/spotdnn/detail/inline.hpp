#pragma once
// SPDX-License-Identifier: MIT
/// @file detail/inline.hpp Inlining hints for the per-row code of the trace readers: in a large translation
/// unit (the CLI) the compiler otherwise keeps small functions called for every cell or sample out of line.

#if defined(__GNUC__) || defined(__clang__)
/// Always inlined into its caller.
#define SPOTDNN_ALWAYS_INLINE inline __attribute__((always_inline))
/// Every call inside the function inlined (what is marked SPOTDNN_NOINLINE excepted).
#define SPOTDNN_FLATTEN __attribute__((flatten))
/// Never inlined (a cold path).
#define SPOTDNN_NOINLINE __attribute__((noinline))
#else
#define SPOTDNN_ALWAYS_INLINE inline
#define SPOTDNN_FLATTEN
#define SPOTDNN_NOINLINE
#endif
