// Conan test package: the packaged headers compile and agree on the version.
#include <cstdio>
#include <qfold/qfold.hpp>

// The README's quick start: exact TOSA arithmetic at compile time through the installed package.
static_assert(qfold::apply_scale_32(-3, 1 << 30, 31) == -1);  // -1.5 rounds half up
static_assert(QFOLD_VERSION ==
              qfold::version_major * 10000 + qfold::version_minor * 100 + qfold::version_patch);

int main() {
  std::printf("qfold %d.%d.%d\n", qfold::version_major, qfold::version_minor, qfold::version_patch);
  return 0;
}
