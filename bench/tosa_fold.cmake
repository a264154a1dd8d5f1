# bench_tosa_fold links the TOSA MLIR integration and the tool's pieces (qfold_tosa_tool, tools/) when
# MLIR 22 is found; without it the program only says so. Its module,
# 1,000 DyT blocks, is generated into the build directory by tests/tosa/make_modules.py --bench
# (about a minute: the generator proves every site on its model), never committed.
find_program(QFOLD_BENCH_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(QFOLD_BENCH_PYTHON3 python3)
if(TARGET qfold_tosa_tool AND QFOLD_BENCH_PYTHON3)
  set(_qfold_tosa_bench_module "${CMAKE_CURRENT_BINARY_DIR}/tosa_bench_1000.mlir")
  add_custom_command(OUTPUT "${_qfold_tosa_bench_module}"
    COMMAND "${QFOLD_BENCH_PYTHON3}" "${PROJECT_SOURCE_DIR}/tests/tosa/make_modules.py" --bench 1000
            "${_qfold_tosa_bench_module}"
    DEPENDS "${PROJECT_SOURCE_DIR}/tests/tosa/make_modules.py"
    COMMENT "Generating the 1,000-block TOSA module for bench_tosa_fold (about a minute)"
    VERBATIM)
  add_custom_target(bench_tosa_fold_module DEPENDS "${_qfold_tosa_bench_module}")
  add_dependencies(bench_tosa_fold bench_tosa_fold_module)
  # qfold_dev_flags comes first (bench/CMakeLists.txt): the integration's GCC flag after it.
  target_link_libraries(bench_tosa_fold PRIVATE qfold_tosa_tool)
  target_compile_definitions(bench_tosa_fold PRIVATE QFOLD_TOSA_BENCH
    "QFOLD_TOSA_BENCH_MODULE=\"${_qfold_tosa_bench_module}\"")
elseif(NOT QFOLD_TOSA_FOUND)
  message(STATUS "qfold: bench_tosa_fold built without MLIR: ${QFOLD_TOSA_WHY}")
else()
  message(STATUS "qfold: bench_tosa_fold built without MLIR: python3 (for make_modules.py) not found")
endif()
