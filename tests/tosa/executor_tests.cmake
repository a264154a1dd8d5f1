# The executor tests of tests/tosa (make_modules.py), included by the marked block at the end of
# tests/tosa/CMakeLists.txt. Kept in this file so that the adapter's CMakeLists.txt holds only
# the one include line.
# qfold's folds proven on MLIR's own TOSA 1.0 lowering (MLIR 22), executed by mlir-runner
# (tests/tosa/modules/, written by make_modules.py with its model of TOSA's integer semantics):
#   tosa.exec.generated        the committed modules are what make_modules.py writes
#   tosa.exec.model.<m>        every executed module is valid TOSA 1.0 (MLIR's --tosa-validate,
#                              integer profile, extensions int16 and doubleround), lowers and
#                              runs; its output equals the model's
#   tosa.exec.model_fold.<m>   the DyT modules folded by make_modules.py (docs/folds.md's
#                              rewrites) are valid and print the same: the folds proven without
#                              the tool
#   tosa.exec.fold.<m>         qfold-tosa-opt's report matches the manifest, its output is valid
#                              TOSA 1.0, ORIGINAL and FOLDED print the same, all-refused modules
#                              stay the same module (params: report and unchanged only, it is
#                              not executed)
#   tosa.exec.fold.<m>.<pass>  the same for the manifest's entry <m>.<pass>: one of the newer
#                              passes (merge_rescales, compose_tables, collapse_to_table) alone
#                              on module m, with make_modules.py's model-derived expectations
#   tosa.exec.fold_all.<m>     the tool with every pass: ORIGINAL and FOLDED print the same
#                              (the report is not checked)
#   tosa.exec.negative.table   a module with one table entry changed makes the comparison fail
#   tosa.exec.negative.manifest  a flipped expectation makes the report check fail
# The model tests need only mlir-opt and mlir-runner (LLVM 22); the fold tests also need the
# target qfold-tosa-opt (QFOLD_BUILD_TOOLS, MLIR 22's development files) and are defined only
# when it exists.
find_program(QFOLD_MLIR_OPT NAMES mlir-opt-22 mlir-opt HINTS /usr/lib/llvm-22/bin
             DOC "mlir-opt of LLVM 22 (TOSA 1.0), for the TOSA executor tests")
find_program(QFOLD_MLIR_RUNNER NAMES mlir-runner-22 mlir-runner HINTS /usr/lib/llvm-22/bin
             DOC "mlir-runner of LLVM 22, for the TOSA executor tests")
set(_qfold_exec_skip "")
if(NOT QFOLD_MLIR_OPT OR NOT QFOLD_MLIR_RUNNER)
  set(_qfold_exec_skip
      "mlir-opt or mlir-runner (LLVM 22) not found; give -DQFOLD_MLIR_OPT=.. -DQFOLD_MLIR_RUNNER=..")
else()
  # The modules are TOSA 1.0 as MLIR 22 writes it: an older mlir-opt cannot parse them.
  execute_process(COMMAND "${QFOLD_MLIR_OPT}" --version OUTPUT_VARIABLE _qfold_mlir_version
                  ERROR_QUIET RESULT_VARIABLE _qfold_mlir_rc)
  if(NOT _qfold_mlir_rc EQUAL 0 OR NOT _qfold_mlir_version MATCHES "LLVM version ([0-9]+)\\.")
    set(_qfold_exec_skip "${QFOLD_MLIR_OPT} --version does not name an LLVM version")
  elseif(CMAKE_MATCH_1 LESS 22)
    string(CONCAT _qfold_exec_skip "${QFOLD_MLIR_OPT} is LLVM ${CMAKE_MATCH_1}; the modules need "
                  "MLIR 22's TOSA 1.0 dialect")
  elseif(CMAKE_MATCH_1 GREATER 22)
    message(STATUS "qfold: TOSA executor tests with LLVM ${CMAKE_MATCH_1} (written for 22)")
  endif()
endif()
if(_qfold_exec_skip)
  message(STATUS "qfold: TOSA executor tests skipped: ${_qfold_exec_skip}")
else()
  get_filename_component(_qfold_mlir_runner_real "${QFOLD_MLIR_RUNNER}" REALPATH)
  get_filename_component(_qfold_mlir_lib "${_qfold_mlir_runner_real}" DIRECTORY)
  get_filename_component(_qfold_mlir_lib "${_qfold_mlir_lib}/../lib" ABSOLUTE)
  set(QFOLD_MLIR_LIB_DIR "${_qfold_mlir_lib}" CACHE PATH
      "Directory of libmlir_runner_utils.so and libmlir_c_runner_utils.so")
  set(_qfold_exec_dir "${CMAKE_CURRENT_LIST_DIR}")
  set(_qfold_exec_work "${CMAKE_CURRENT_BINARY_DIR}/exec")
  set(_qfold_exec_mlir -DMLIR_OPT=${QFOLD_MLIR_OPT} -DMLIR_RUNNER=${QFOLD_MLIR_RUNNER}
      -DMLIR_LIB_DIR=${QFOLD_MLIR_LIB_DIR})
  # the modules lowered and run; params (run-time parameters) is only folded (reported on)
  set(_qfold_exec_modules chains dyt_affine dyt_alpha dyt_blocks refusals rescale_pairs
      table_chains unsigned)
  set(_qfold_exec_all_modules ${_qfold_exec_modules} params)
  # TOSA 1.0 extensions the modules use (--tosa-validate): int16 (int16 TABLE, RESCALE and
  # CLAMP), doubleround (DOUBLE_ROUND); params also inexactround and dynamic (its run-time
  # parameters)
  set(_qfold_exec_ext "int16,doubleround")
  set(_qfold_exec_ext_params "int16,doubleround,inexactround,dynamic")
  # the manifest's further entries (<module>.<pass>: one newer pass on a module)
  set(_qfold_exec_entries "")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               "${_qfold_exec_dir}/modules/manifest.json")
  file(READ "${_qfold_exec_dir}/modules/manifest.json" _qfold_exec_manifest)
  string(JSON _qfold_exec_n LENGTH "${_qfold_exec_manifest}" modules)
  math(EXPR _qfold_exec_n "${_qfold_exec_n} - 1")
  foreach(_i RANGE ${_qfold_exec_n})
    string(JSON _qfold_exec_id GET "${_qfold_exec_manifest}" modules ${_i} id)
    if(_qfold_exec_id MATCHES "^([a-z0-9_]+)\\.[a-z0-9_]+$")
      list(APPEND _qfold_exec_entries "${_qfold_exec_id}")
    endif()
  endforeach()

  find_program(QFOLD_EXEC_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(QFOLD_EXEC_PYTHON3 python3)
  if(QFOLD_EXEC_PYTHON3)
    add_test(NAME tosa.exec.generated
      COMMAND "${CMAKE_COMMAND}" -DPYTHON=${QFOLD_EXEC_PYTHON3}
        -DSCRIPT=${_qfold_exec_dir}/make_modules.py -DMODULES=${_qfold_exec_dir}/modules
        -DWORK_DIR=${_qfold_exec_work}/generated -P ${_qfold_exec_dir}/check_generated.cmake)
  endif()
  foreach(_m IN LISTS _qfold_exec_modules)
    add_test(NAME tosa.exec.model.${_m}
      COMMAND "${CMAKE_COMMAND}" ${_qfold_exec_mlir} -DMODULE=${_qfold_exec_dir}/modules/${_m}.mlir
        -DOUTPUT=${_qfold_exec_work}/model/${_m}.out
        -DEXPECTED=${_qfold_exec_dir}/modules/${_m}.expected -DEXTENSIONS=${_qfold_exec_ext}
        -P ${_qfold_exec_dir}/run_lowered.cmake)
  endforeach()

  foreach(_m IN ITEMS dyt_alpha dyt_affine dyt_blocks)
    add_test(NAME tosa.exec.model_fold.${_m}
      COMMAND "${CMAKE_COMMAND}" ${_qfold_exec_mlir}
        -DMODULE=${_qfold_exec_dir}/modules/${_m}.model_folded.mlir
        -DOUTPUT=${_qfold_exec_work}/model_fold/${_m}.out
        -DEXPECTED=${_qfold_exec_dir}/modules/${_m}.expected -DEXTENSIONS=${_qfold_exec_ext}
        -P ${_qfold_exec_dir}/run_lowered.cmake)
  endforeach()

  # The fold tests are registered at the end of the top-level directory, once every target
  # exists.
  function(_qfold_tosa_exec_fold_tests dir work modules all_modules mlir entries ext ext_params)
    if(NOT TARGET qfold-tosa-opt)
      message(STATUS "qfold: TOSA fold-vs-executor tests skipped: no qfold-tosa-opt target")
      return()
    endif()
    foreach(_m IN LISTS all_modules)
      set(_e "${ext}")
      if(_m STREQUAL "params")
        set(_e "${ext_params}")
      endif()
      add_test(NAME tosa.exec.fold.${_m}
        COMMAND "${CMAKE_COMMAND}" ${mlir} -DTOOL=$<TARGET_FILE:qfold-tosa-opt>
          -DMODULE=${dir}/modules/${_m}.mlir -DWORK_DIR=${work}/fold/${_m} -DEXTENSIONS=${_e}
          -P ${dir}/compare_folded.cmake)
    endforeach()
    foreach(_e IN LISTS entries)
      string(REGEX REPLACE "\\..*" "" _m "${_e}")
      add_test(NAME tosa.exec.fold.${_e}
        COMMAND "${CMAKE_COMMAND}" ${mlir} -DTOOL=$<TARGET_FILE:qfold-tosa-opt>
          -DMODULE=${dir}/modules/${_m}.mlir -DENTRY=${_e} -DWORK_DIR=${work}/fold/${_e}
          -DEXTENSIONS=${ext} -P ${dir}/compare_folded.cmake)
    endforeach()
    foreach(_m IN LISTS modules)
      add_test(NAME tosa.exec.fold_all.${_m}
        COMMAND "${CMAKE_COMMAND}" ${mlir} -DTOOL=$<TARGET_FILE:qfold-tosa-opt>
          -DMODULE=${dir}/modules/${_m}.mlir -DWORK_DIR=${work}/fold_all/${_m} -DALL_PASSES=ON
          -DEXTENSIONS=${ext} -P ${dir}/compare_folded.cmake)
    endforeach()
    foreach(_neg IN ITEMS table manifest)
      add_test(NAME tosa.exec.negative.${_neg}
        COMMAND "${CMAKE_COMMAND}" ${mlir} -DTOOL=$<TARGET_FILE:qfold-tosa-opt>
          -DMODULE=${dir}/modules/dyt_alpha.mlir -DWORK_DIR=${work}/negative/${_neg}
          -DNEGATIVE=${_neg} -P ${dir}/compare_folded.cmake)
    endforeach()
  endfunction()
  cmake_language(EVAL CODE "
    cmake_language(DEFER DIRECTORY [[${PROJECT_SOURCE_DIR}]] CALL _qfold_tosa_exec_fold_tests
      [[${_qfold_exec_dir}]] [[${_qfold_exec_work}]] [[${_qfold_exec_modules}]]
      [[${_qfold_exec_all_modules}]] [[${_qfold_exec_mlir}]] [[${_qfold_exec_entries}]]
      [[${_qfold_exec_ext}]] [[${_qfold_exec_ext_params}]])")
endif()
