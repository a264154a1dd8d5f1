// Every named bad file (bad_files.hpp) is refused by qfold-tosa's checks with exit code 1 and an
// error that names what is wrong where; none of them reaches undefined behaviour (the sanitizer
// build runs this too).
#include "tosa_fb_adapter/bad_files.hpp"

#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "tosa_fb/tosa_tool.hpp"

TEST_CASE("every named bad file is refused, exit 1, naming the problem") {
  const auto cases = tosa_fb_test::bad_files();
  CHECK(cases.size() >= 40);
  for (const auto& c : cases) {
    INFO(c.name);
    std::ostringstream errors;
    try {
      (void)qfold_tosa_fb_tool::read_checked(c.data, c.name, errors);
      FAIL("accepted");
    } catch (const qfold_tool::tool_error& e) {
      CHECK(e.code() == qfold_tool::exit_bad_input);
      const std::string all = errors.str() + e.what();
      INFO(all);
      CHECK(all.find(c.expected) != std::string::npos);
    }
  }
}

TEST_CASE("the good scenarios pass the checks and fold to files that pass them too") {
  for (const auto& b : {tosa_fb_test::dyt_alpha().build(), tosa_fb_test::rescale_pair().build(),
                        tosa_fb_test::dyt_affine().build()}) {
    std::ostringstream errors;
    const auto m = qfold_tosa_fb_tool::read_checked(b, "scenario", errors);
    const auto r = qfold_tosa_fb_tool::fold_model(m, {}, errors);
    CHECK(r.changed);
    CHECK(errors.str().empty());
  }
}
