# cmake -DPYTHON=python3 -DSCRIPT=make_modules.py -DMODULES=modules -DWORK_DIR=dir
#       -P check_generated.cmake
#
# The committed modules, expected outputs and manifest are what make_modules.py writes: it is
# run again into WORK_DIR and every file it writes must equal the committed one byte for byte
# (the generator is deterministic: a fixed seed, no network).
cmake_minimum_required(VERSION 3.19)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" "${WORK_DIR}" RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SCRIPT} failed (${rc}):\n${err}")
endif()
file(GLOB written RELATIVE "${WORK_DIR}" "${WORK_DIR}/*")
file(GLOB committed RELATIVE "${MODULES}" "${MODULES}/*")
list(SORT written)
list(SORT committed)
if(NOT written STREQUAL committed)
  message(FATAL_ERROR "the generator writes [${written}], ${MODULES} holds [${committed}]")
endif()
foreach(f IN LISTS written)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK_DIR}/${f}" "${MODULES}/${f}"
                  RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${MODULES}/${f} differs from what ${SCRIPT} writes now (${WORK_DIR}/${f}): "
                        "run it and commit the result")
  endif()
endforeach()
list(LENGTH written n)
message(STATUS "${n} files up to date")
