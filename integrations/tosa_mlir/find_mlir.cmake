# The TOSA MLIR integration: finds MLIR 16 (Debian: llvm-16-dev libmlir-16-dev mlir-16-tools) and
# defines qfold::tosa_mlir (target qfold_tosa_mlir: the adapter's headers under
# include/qfold_tosa_mlir/, qfold, MLIR's headers as SYSTEM, the shared MLIR and LLVM-16
# libraries). Sets QFOLD_TOSA_FOUND, or QFOLD_TOSA_WHY. The top level includes this first.
# -DQFOLD_TOSA=OFF skips everything TOSA; MLIR_DIR / LLVM_DIR point at another install.
option(QFOLD_TOSA "Build the TOSA MLIR adapter, qfold-tosa-opt and their tests when MLIR 16 is found" ON)
set(QFOLD_TOSA_FOUND FALSE)
if(NOT QFOLD_TOSA)
  set(QFOLD_TOSA_WHY "QFOLD_TOSA is OFF")
  return()
endif()
if(TARGET qfold_tosa_mlir)
  set(QFOLD_TOSA_FOUND TRUE)
  return()
endif()
# LLVMConfig.cmake runs C checks (FindFFI, FindTerminfo): C must be enabled, though nothing of
# qfold is C.
include(CheckLanguage)
check_language(C)
if(NOT CMAKE_C_COMPILER)
  set(QFOLD_TOSA_WHY "MLIR's CMake package needs a C compiler, and none was found")
  return()
endif()
enable_language(C)
find_package(MLIR 16 CONFIG QUIET
  HINTS /usr/lib/llvm-16/lib/cmake/mlir /usr/lib/llvm-16)
if(NOT MLIR_FOUND OR NOT MLIR_INCLUDE_DIRS)
  set(QFOLD_TOSA_WHY "MLIR 16 was not found (Debian: apt-get install llvm-16-dev libmlir-16-dev mlir-16-tools; or -DMLIR_DIR=/usr/lib/llvm-16/lib/cmake/mlir -DLLVM_DIR=/usr/lib/llvm-16/lib/cmake/llvm)")
  return()
endif()
find_library(QFOLD_MLIR_LIBRARY NAMES MLIR HINTS "${LLVM_LIBRARY_DIR}" NO_DEFAULT_PATH)
find_library(QFOLD_LLVM_LIBRARY NAMES LLVM-16 LLVM HINTS "${LLVM_LIBRARY_DIR}" NO_DEFAULT_PATH)
if(NOT QFOLD_MLIR_LIBRARY OR NOT QFOLD_LLVM_LIBRARY)
  set(QFOLD_TOSA_WHY "MLIR 16's headers were found but not the shared libMLIR / libLLVM-16 in ${LLVM_LIBRARY_DIR} (Debian: libmlir-16-dev)")
  return()
endif()
add_library(qfold_tosa_mlir INTERFACE)
add_library(qfold::tosa_mlir ALIAS qfold_tosa_mlir)
target_include_directories(qfold_tosa_mlir INTERFACE "${CMAKE_CURRENT_LIST_DIR}/include")
# SYSTEM: MLIR's and LLVM's headers do not trip qfold's warnings (-Werror stays on for ours).
target_include_directories(qfold_tosa_mlir SYSTEM INTERFACE ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
# GCC warns about null dereferences in LLVM's inlined ilist code (a middle-end warning that SYSTEM
# does not silence). Link qfold_dev_flags before qfold_tosa_mlir so that this comes after it.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(qfold_tosa_mlir INTERFACE -Wno-null-dereference)
endif()
target_link_libraries(qfold_tosa_mlir INTERFACE qfold::qfold "${QFOLD_MLIR_LIBRARY}"
                                               "${QFOLD_LLVM_LIBRARY}")
set(QFOLD_TOSA_FOUND TRUE)
message(STATUS "qfold: MLIR ${LLVM_PACKAGE_VERSION} found (${MLIR_INCLUDE_DIRS})")
