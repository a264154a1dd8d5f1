// Catch2 v2 main, compiled only when the installed Catch2 has no Catch2WithMain library.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
