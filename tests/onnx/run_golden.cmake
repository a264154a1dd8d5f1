# One golden ONNX model through qfold-onnx (ctest runs this with cmake -P):
#   regenerate its weights, fold it with qfold-onnx, compare with the expectations; for the
#   model named in JSON_CHECK also check --dry-run --json (valid JSON, same totals, no file).
# Variables: GOLDEN_TOOL, QFOLD_ONNX, MODEL (stripped .onnx), EXPECTED, WORK (a directory).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (exit ${rc}): ${ARGN}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

run("${GOLDEN_TOOL}" inflate "${MODEL}" "${WORK}/model.onnx")
run("${QFOLD_ONNX}" "${WORK}/model.onnx" "${WORK}/folded.onnx")
file(WRITE "${WORK}/report.txt" "${run_output}")
run("${GOLDEN_TOOL}" compare "${WORK}/folded.onnx" "${EXPECTED}" "${WORK}/report.txt")

if(JSON_CHECK)
  run("${QFOLD_ONNX}" --dry-run --json "${WORK}/model.onnx" "${WORK}/dry.onnx")
  if(EXISTS "${WORK}/dry.onnx")
    message(FATAL_ERROR "--dry-run wrote a file")
  endif()
  file(STRINGS "${EXPECTED}" model_line REGEX "^model ")
  string(REGEX MATCH "folded ([0-9]+) refused ([0-9]+)" _ "${model_line}")
  set(folded "${CMAKE_MATCH_1}")
  set(refused "${CMAKE_MATCH_2}")
  string(JSON dry ERROR_VARIABLE json_error GET "${run_output}" dry_run)
  if(json_error)
    message(FATAL_ERROR "--json printed invalid JSON: ${json_error}")
  endif()
  string(JSON got_folded GET "${run_output}" folded)
  string(JSON got_rejected GET "${run_output}" rejected)
  string(JSON sites LENGTH "${run_output}" sites)
  string(JSON written TYPE "${run_output}" output_bytes)
  math(EXPR expected_sites "${folded} + ${refused}")
  if(NOT dry STREQUAL "ON" OR NOT got_folded EQUAL folded OR NOT got_rejected EQUAL refused
     OR NOT sites EQUAL expected_sites OR NOT written STREQUAL "NULL")
    message(FATAL_ERROR "--dry-run --json: dry_run=${dry} folded=${got_folded} "
                        "rejected=${got_rejected} sites=${sites} output_bytes=${written}; "
                        "expected ${folded} folded, ${refused} rejected")
  endif()
  message("--dry-run --json: valid JSON, ${got_folded} folded, ${got_rejected} rejected, no file")
endif()
file(REMOVE_RECURSE "${WORK}")  # the inflated models are large (ResNet-18: 2 x 45 MB)
