# Flags for qfold's own tests, examples and benchmarks (never for users of qfold::qfold):
# targets opt in by linking qfold_dev_flags.
add_library(qfold_dev_flags INTERFACE)

if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(qfold_dev_flags INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast
    -Wcast-qual -Wnull-dereference -Wformat=2)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # Deeper concept diagnostics: an unmet adapter concept should name the missing member.
    target_compile_options(qfold_dev_flags INTERFACE
      -Wduplicated-cond -Wlogical-op -fconcepts-diagnostics-depth=2)
  endif()
elseif(MSVC)
  target_compile_options(qfold_dev_flags INTERFACE /W4 /permissive-)
endif()

if(QFOLD_SANITIZE)
  # -fno-sanitize-recover: UBSan findings abort, so ctest reports them as failures.
  set(_qfold_sanitize -fsanitize=address,undefined -fno-sanitize-recover=all)
  target_compile_options(qfold_dev_flags INTERFACE ${_qfold_sanitize} -fno-omit-frame-pointer)
  target_link_options(qfold_dev_flags INTERFACE ${_qfold_sanitize})
endif()

# -std=c++20, not gnu++20: our builds must not lean on GNU extensions (in gnu++ mode, for one,
# __int128 counts as an integral type).
set(CMAKE_CXX_EXTENSIONS OFF)

# Warnings are errors in our own builds; -DCMAKE_COMPILE_WARNING_AS_ERROR=OFF (or
# cmake --compile-no-warning-as-error) turns that off, e.g. for a new compiler.
if(PROJECT_IS_TOP_LEVEL AND NOT DEFINED CMAKE_COMPILE_WARNING_AS_ERROR)
  set(CMAKE_COMPILE_WARNING_AS_ERROR ON)
endif()
