// Smoke test: the unit-test build links and runs, and the version macros agree.
#include <qfold/qfold.hpp>

#include "catch_compat.hpp"

TEST_CASE("QFOLD_VERSION packs major, minor and patch", "[version]") {
  STATIC_REQUIRE(QFOLD_VERSION ==
                 qfold::version_major * 10000 + qfold::version_minor * 100 + qfold::version_patch);
  REQUIRE(QFOLD_VERSION_MAJOR == qfold::version_major);
  REQUIRE(QFOLD_VERSION_MINOR == qfold::version_minor);
  REQUIRE(QFOLD_VERSION_PATCH == qfold::version_patch);
}
