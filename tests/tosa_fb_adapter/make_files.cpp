// Writes the .tosa files of qfold-tosa's command-line tests into DIR: the scenarios (a DyT alpha
// site, a RESCALE pair, DyT affine before a conv, a refused site, a file with nothing to fold, a
// 1.1 file) and every named bad file of bad_files.hpp, listed in DIR/bad_files.txt as
// "name|expected words" lines.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "tosa_fb_adapter/bad_files.hpp"

namespace {
bool write(const std::string& path, const tosa_fb_test::bytes& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return static_cast<bool>(out);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_files DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = write(dir + "/dyt_alpha.tosa", tosa_fb_test::dyt_alpha().build()) &&
            write(dir + "/rescale_pair.tosa", tosa_fb_test::rescale_pair().build()) &&
            write(dir + "/dyt_affine.tosa", tosa_fb_test::dyt_affine().build());
  tosa_fb_test::dyt_options shared;
  shared.extra_use = true;
  ok = ok && write(dir + "/shared_mul.tosa", tosa_fb_test::dyt_alpha(shared).build());
  {
    tosa_fb_test::file_builder f;
    f.input("x", {4}, tosa::DType_INT32);
    f.op(tosa::Op_ADD, {"x", "x"}, "y", {4}, tosa::DType_INT32);
    f.output("y");
    ok = ok && write(dir + "/nothing.tosa", f.build());
  }
  {
    tosa_fb_test::file_builder f = tosa_fb_test::rescale_pair();
    f.minor = 1;
    f.draft = true;
    ok = ok && write(dir + "/v1_1.tosa", f.build());
  }
  std::ofstream manifest(dir + "/bad_files.txt");
  for (const auto& c : tosa_fb_test::bad_files()) {
    ok = ok && write(dir + "/" + c.name + ".tosa", c.data);
    manifest << c.name << "|" << c.expected << "\n";
  }
  manifest.close();
  if (!ok || !manifest) {
    std::cerr << "make_files: cannot write in " << dir << "\n";
    return 1;
  }
  return 0;
}
