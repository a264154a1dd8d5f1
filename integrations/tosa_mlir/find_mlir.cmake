# The TOSA MLIR integration (TOSA 1.0): finds MLIR 22 (mlir_dependencies.cmake) and defines qfold::tosa_mlir
# (target qfold_tosa_mlir: the adapter's headers under include/qfold_tosa_mlir/, qfold, MLIR).
# Sets QFOLD_TOSA_FOUND, or QFOLD_TOSA_WHY. The top level includes this first; the package
# installs it as the `tosa_mlir` component: find_package(qfold COMPONENTS tosa_mlir).
# -DQFOLD_TOSA=OFF skips everything TOSA.
option(QFOLD_TOSA "Build the TOSA MLIR adapter, qfold-tosa-opt and their tests when MLIR 22 is found" ON)
set(QFOLD_TOSA_FOUND FALSE)
if(NOT QFOLD_TOSA)
  set(QFOLD_TOSA_WHY "QFOLD_TOSA is OFF")
  return()
endif()
if(TARGET qfold_tosa_mlir)
  set(QFOLD_TOSA_FOUND TRUE)
  return()
endif()
include("${CMAKE_CURRENT_LIST_DIR}/mlir_dependencies.cmake")
if(NOT QFOLD_MLIR_DEPENDENCIES_FOUND)
  return()
endif()
qfold_add_integration(qfold_tosa_mlir tosa_mlir "${CMAKE_CURRENT_LIST_DIR}")
# Link qfold_dev_flags before qfold_tosa_mlir, so that MLIR's warning exception comes after it.
target_link_libraries(qfold_tosa_mlir INTERFACE qfold::qfold qfold::mlir_libraries)
set(QFOLD_TOSA_FOUND TRUE)
message(STATUS "qfold: MLIR ${LLVM_PACKAGE_VERSION} found (${MLIR_INCLUDE_DIRS})")
