# What the TOSA MLIR integration needs: MLIR 16 (Debian: llvm-16-dev libmlir-16-dev
# mlir-16-tools), as the IMPORTED target qfold::mlir_libraries (MLIR's and LLVM's headers as
# SYSTEM, the shared libMLIR and libLLVM-16). Sets QFOLD_MLIR_DEPENDENCIES_FOUND, or
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
add_library(qfold::mlir_libraries INTERFACE IMPORTED GLOBAL)
# SYSTEM (as every imported target's): MLIR's and LLVM's headers do not trip the user's warnings.
set_target_properties(qfold::mlir_libraries PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${MLIR_INCLUDE_DIRS};${LLVM_INCLUDE_DIRS}"
  INTERFACE_LINK_LIBRARIES "${QFOLD_MLIR_LIBRARY};${QFOLD_LLVM_LIBRARY}"
  # GCC warns about null dereferences in LLVM's inlined ilist code (a middle-end warning that
  # SYSTEM does not silence): after qfold's own -Wnull-dereference when linked after it.
  INTERFACE_COMPILE_OPTIONS "$<$<CXX_COMPILER_ID:GNU>:-Wno-null-dereference>")
set(QFOLD_MLIR_DEPENDENCIES_FOUND TRUE)
