// expect: qfold_compile_fail_selftest
// Self-test of the compile-fail machinery: this TU must fail, and with this message.
#include <qfold/version.hpp>

static_assert(QFOLD_VERSION_MAJOR < 0, "qfold_compile_fail_selftest");
