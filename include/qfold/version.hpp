// qfold version: the single source of truth, read by CMake and by the Conan recipe.
// Bump the three numbers together; QFOLD_VERSION is (major * 10000 + minor * 100 + patch).
#pragma once

#define QFOLD_VERSION_MAJOR 0
#define QFOLD_VERSION_MINOR 1
#define QFOLD_VERSION_PATCH 0
#define QFOLD_VERSION \
  (QFOLD_VERSION_MAJOR * 10000 + QFOLD_VERSION_MINOR * 100 + QFOLD_VERSION_PATCH)

namespace qfold {
inline constexpr int version_major = QFOLD_VERSION_MAJOR;
inline constexpr int version_minor = QFOLD_VERSION_MINOR;
inline constexpr int version_patch = QFOLD_VERSION_PATCH;
}  // namespace qfold
