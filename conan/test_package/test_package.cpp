// Conan test package: the packaged headers compile and agree on the version.
#include <cstdio>
#include <qfold/qfold.hpp>

static_assert(QFOLD_VERSION ==
              qfold::version_major * 10000 + qfold::version_minor * 100 + qfold::version_patch);

int main() {
  std::printf("qfold %d.%d.%d\n", qfold::version_major, qfold::version_minor, qfold::version_patch);
  return 0;
}
