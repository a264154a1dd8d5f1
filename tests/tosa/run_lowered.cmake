# cmake -DMODULE=m.mlir -DOUTPUT=out.txt [-DEXPECTED=m.expected] [-DEXTENSIONS=int16,...]
#       [-DMLIR_OPT=..] [-DMLIR_RUNNER=..] [-DMLIR_LIB_DIR=..] -P run_lowered.cmake
#
# With EXTENSIONS, first checks that MODULE is valid TOSA 1.0 (MLIR 22's --tosa-validate, integer
# profile with those extensions). Lowers MODULE with MLIR 22's TOSA pipeline, runs its @main with
# mlir-runner and writes what it prints to OUTPUT. With EXPECTED, fails unless OUTPUT equals that
# file byte for byte (the expected outputs make_modules.py computed with its model of TOSA's
# integer semantics).

cmake_minimum_required(VERSION 3.19)
include("${CMAKE_CURRENT_LIST_DIR}/executor.cmake")

if(NOT MODULE OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DMODULE=m.mlir -DOUTPUT=out.txt [-DEXPECTED=file] "
                      "[-DEXTENSIONS=list] -P run_lowered.cmake")
endif()
get_filename_component(_dir "${OUTPUT}" DIRECTORY)
if(NOT _dir)
  set(_dir .)
endif()
file(MAKE_DIRECTORY "${_dir}")
if(EXTENSIONS)
  qfold_tosa_validate("${MODULE}" "${EXTENSIONS}" "${_dir}")
endif()
qfold_tosa_execute("${MODULE}" "${OUTPUT}")
if(EXPECTED)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUTPUT}" "${EXPECTED}"
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    qfold_tosa_first_difference("${OUTPUT}" "${EXPECTED}" where)
    message(FATAL_ERROR "${MODULE}: the executor's output ${OUTPUT} differs from the model's "
                        "${EXPECTED} (${where})")
  endif()
  message(STATUS "${MODULE}: executor output equals ${EXPECTED}")
endif()
