// Compile-time checks of the version macros; this file passes by compiling.
#include <qfold/qfold.hpp>

static_assert(QFOLD_VERSION ==
              qfold::version_major * 10000 + qfold::version_minor * 100 + qfold::version_patch);
// QFOLD_VERSION gives minor and patch two decimal digits each.
static_assert(0 <= qfold::version_minor && qfold::version_minor < 100);
static_assert(0 <= qfold::version_patch && qfold::version_patch < 100);
