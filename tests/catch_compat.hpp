// Catch2 v2/v3 shim: tests include this instead of Catch2, so they build with Debian's 2.13 and
// with v3. Use only what both have: TEST_CASE, SECTION, REQUIRE/CHECK, STATIC_REQUIRE(_FALSE),
// TEMPLATE_TEST_CASE, CHECK_THAT with Catch::Matchers::WithinULP/WithinAbs/WithinRel.
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#else
#include <catch2/catch.hpp>
#endif
