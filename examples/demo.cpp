// Placeholder demo: prints the qfold version (the real demo replaces this file).
#include <cstdio>
#include <qfold/qfold.hpp>

int main() {
  std::printf("qfold %d.%d.%d\n", qfold::version_major, qfold::version_minor, qfold::version_patch);
  return 0;
}
