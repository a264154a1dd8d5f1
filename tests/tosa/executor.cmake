# Shared by run_lowered.cmake and compare_folded.cmake: validate a TOSA 1.0 module with MLIR 22's
# TOSA validator, and lower it with MLIR 22's own pipeline (TOSA -> linalg/arith/tensor ->
# bufferized loops -> LLVM) and run its @main with mlir-runner, writing what @main prints.
#
# Needs MLIR_OPT and MLIR_RUNNER (paths; defaults: /usr/lib/llvm-22/bin/mlir-opt and mlir-runner)
# and MLIR_LIB_DIR (holding libmlir_runner_utils.so and libmlir_c_runner_utils.so; default
# /usr/lib/llvm-22/lib).

if(NOT MLIR_OPT)
  set(MLIR_OPT /usr/lib/llvm-22/bin/mlir-opt)
endif()
if(NOT MLIR_RUNNER)
  set(MLIR_RUNNER /usr/lib/llvm-22/bin/mlir-runner)
endif()
if(NOT MLIR_LIB_DIR)
  set(MLIR_LIB_DIR /usr/lib/llvm-22/lib)
endif()

# qfold_tosa_validate(<module.mlir> <extensions> <work dir>): fatal error unless MLIR's TOSA
# validator accepts the module as TOSA 1.0, integer profile, with the extensions named
# (comma-separated: int16, doubleround, inexactround, dynamic, ...), strict alignment with the
# specification (e.g. a uint8 -> int32 RESCALE, an int32 CLAMP or a RESCALE multiplier computed
# at run time without `dynamic` are refused).
function(qfold_tosa_validate module extensions work)
  get_filename_component(name "${module}" NAME)
  set(err "${work}/${name}.validate.stderr")
  execute_process(
    COMMAND "${MLIR_OPT}" "${module}"
      "--tosa-attach-target=profiles=pro_int extensions=${extensions}"
      "--tosa-validate=strict-op-spec-alignment" -o /dev/null
    ERROR_FILE "${err}"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(READ "${err}" msg)
    message(FATAL_ERROR "${module} is not valid TOSA 1.0 (pro_int, extensions ${extensions}) "
                        "by ${MLIR_OPT} --tosa-validate:\n${msg}")
  endif()
endfunction()

# qfold_tosa_execute(<module.mlir> <output file>): fatal error, naming the stage's message, when
# the module does not lower or does not run.
function(qfold_tosa_execute module output)
  set(err "${output}.stderr")
  execute_process(
    COMMAND "${MLIR_OPT}" "${module}"
      "--pass-pipeline=builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith{include-apply-rescale=true},tosa-to-tensor))"
    COMMAND "${MLIR_OPT}" "--one-shot-bufferize=bufferize-function-boundaries"
      --convert-linalg-to-loops --convert-vector-to-scf --convert-scf-to-cf
      --expand-strided-metadata --lower-affine --convert-vector-to-llvm
      --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm
      --convert-math-to-llvm --convert-func-to-llvm --convert-cf-to-llvm
      --reconcile-unrealized-casts
    COMMAND "${MLIR_RUNNER}" -e main -entry-point-result=void
      "-shared-libs=${MLIR_LIB_DIR}/libmlir_runner_utils.so,${MLIR_LIB_DIR}/libmlir_c_runner_utils.so"
    OUTPUT_FILE "${output}"
    ERROR_FILE "${err}"
    RESULTS_VARIABLE rcs)
  foreach(rc IN LISTS rcs)
    if(NOT rc EQUAL 0)
      file(READ "${err}" msg)
      message(FATAL_ERROR "lowering or running ${module} failed (exit codes: ${rcs}):\n${msg}")
    endif()
  endforeach()
  file(SIZE "${output}" size)
  if(size EQUAL 0)
    message(FATAL_ERROR "running ${module} printed nothing")
  endif()
endfunction()

# qfold_tosa_first_difference(<a> <b> <var>): the first line where two printed outputs differ
# (1-based, with both lines), for the failure message.
function(qfold_tosa_first_difference a b var)
  file(STRINGS "${a}" la)
  file(STRINGS "${b}" lb)
  list(LENGTH la na)
  list(LENGTH lb nb)
  set(i 0)
  while(i LESS na AND i LESS nb)
    list(GET la ${i} x)
    list(GET lb ${i} y)
    if(NOT x STREQUAL y)
      math(EXPR line "${i} + 1")
      set(${var} "line ${line}: '${x}' vs '${y}'" PARENT_SCOPE)
      return()
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  set(${var} "lengths differ: ${na} vs ${nb} lines" PARENT_SCOPE)
endfunction()
