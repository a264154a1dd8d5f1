# What the TOSA MLIR integration needs: MLIR 22, whose TOSA dialect is TOSA 1.0 (Debian
# bookworm-security: llvm-22-dev libmlir-22-dev mlir-22-tools), as the IMPORTED target
# qfold::mlir_libraries (MLIR's and LLVM's headers as SYSTEM, the shared libMLIR and libLLVM). Sets QFOLD_MLIR_DEPENDENCIES_FOUND, or
# QFOLD_TOSA_WHY. Used by the build (find_mlir.cmake) and by the installed package's `tosa_mlir`
# component (qfoldConfig.cmake), so that both find the same things the same way.
# MLIR_DIR / LLVM_DIR point at another install.
set(QFOLD_MLIR_DEPENDENCIES_FOUND FALSE)
if(TARGET qfold::mlir_libraries)
  set(QFOLD_MLIR_DEPENDENCIES_FOUND TRUE)
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
# MLIR's package has no version file: found by path, then its LLVM's major version checked.
find_package(MLIR CONFIG QUIET
  HINTS /usr/lib/llvm-22/lib/cmake/mlir /usr/lib/llvm-22)
set(_qfold_mlir_install "Debian: apt-get install llvm-22-dev libmlir-22-dev mlir-22-tools; or -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm")
if(NOT MLIR_FOUND OR NOT MLIR_INCLUDE_DIRS)
  set(QFOLD_TOSA_WHY "MLIR 22 was not found (${_qfold_mlir_install})")
  return()
endif()
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  set(QFOLD_TOSA_WHY "MLIR ${LLVM_PACKAGE_VERSION} was found, but the TOSA 1.0 adapter is written for MLIR 22 (${_qfold_mlir_install})")
  return()
endif()
find_library(QFOLD_MLIR_LIBRARY NAMES MLIR HINTS "${LLVM_LIBRARY_DIR}" NO_DEFAULT_PATH)
find_library(QFOLD_LLVM_LIBRARY NAMES LLVM-22 LLVM HINTS "${LLVM_LIBRARY_DIR}" NO_DEFAULT_PATH)
if(NOT QFOLD_MLIR_LIBRARY OR NOT QFOLD_LLVM_LIBRARY)
  set(QFOLD_TOSA_WHY "MLIR 22's headers were found but not the shared libMLIR / libLLVM in ${LLVM_LIBRARY_DIR} (Debian: libmlir-22-dev)")
  return()
endif()
add_library(qfold::mlir_libraries INTERFACE IMPORTED GLOBAL)
# SYSTEM (as every imported target's): MLIR's and LLVM's headers do not trip the user's warnings.
set_target_properties(qfold::mlir_libraries PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${MLIR_INCLUDE_DIRS};${LLVM_INCLUDE_DIRS}"
  INTERFACE_LINK_LIBRARIES "${QFOLD_MLIR_LIBRARY};${QFOLD_LLVM_LIBRARY}"
  # GCC warns about null dereferences in LLVM's inlined ilist code (a middle-end warning that
  # SYSTEM does not silence): after qfold's own -Wnull-dereference when linked after it.
  INTERFACE_COMPILE_OPTIONS "$<$<CXX_COMPILER_ID:GNU>:-Wno-null-dereference>")
set(QFOLD_MLIR_DEPENDENCIES_FOUND TRUE)
