# qfold-onnx on bad input (ctest runs this with cmake -P): the expected exit code and message,
# and OUT is never created, nor changed when it already exists. A few cases are accepted on
# purpose (exit 0) and check what was written or refused instead.
# Variables: GOLDEN_TOOL, MODELS (qfold_onnx_make_models), QFOLD_ONNX, MODEL (a stripped golden
# model), WORK, CASE. The hostile models come from `qfold_onnx_make_models bad CASE OUT`.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(out "${WORK}/out.onnx")
set(in "${WORK}/in.onnx")
set(args)
set(expect_stream stderr)  # where expect_msg must appear
set(keep_out ON)           # an existing OUT must survive unchanged
execute_process(COMMAND "${MODELS}" bad good "${WORK}/good.onnx" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot make the good model")
endif()

# Hostile models: exit 1 with the named problem. Every dims/data product below is worked out by
# hand from the model make_models.cpp builds (w: 2 x 2 x 1 x 1 float32 = 16 bytes).
set(_t "initializer 'w': ")
set(model_cases
  "wrapping_dims|${_t}dims \\(4, 4611686018427387905\\): the product of the dims overflows"
  "transpose_wrapping_dims|${_t}dims \\(4, 4611686018427387905\\): the product of the dims overflows"
  "negative_dims|${_t}dims \\(2, -2, 1, 1\\): negative dimension -2"
  "raw_data_short|${_t}raw_data holds 12 bytes, dims \\(2, 2, 1, 1\\) need 16"
  "raw_data_long|${_t}raw_data holds 20 bytes, dims \\(2, 2, 1, 1\\) need 16"
  "float_data_mismatch|${_t}float_data holds 3 values, dims \\(2, 2, 1, 1\\) need 4"
  "two_data_fields|${_t}more than one data field"
  "stride_zero|node 'conv' \\(Conv\\): strides value 0 is below 1"
  "transpose_stride_zero|node 'conv' \\(ConvTranspose\\): strides value 0 is below 1"
  "rank1_weight|node 'conv' \\(Conv\\): weight of rank 1 \\(needs 3 or more\\)"
  "transpose_rank1_weight|node 'conv' \\(ConvTranspose\\): weight of rank 1 \\(needs 3 or more\\)"
  "group_zero|node 'conv' \\(Conv\\): group 0 is not positive"
  "group_not_dividing|node 'conv' \\(Conv\\): group 4 does not divide the 2 output channels"
  "negative_pads|node 'conv' \\(Conv\\): pads value -1 is below 0"
  "external_missing|${_t}external data file 'w.bin' not found next to the model"
  "external_present|${_t}external data \\('w.bin'\\) is not supported: qfold-onnx reads and writes self-contained models only"
  "external_dotdot|${_t}external data location '../w.bin' leaves the model's directory \\(refused\\)"
  "external_absolute|${_t}external data location '/etc/passwd' is absolute \\(refused\\)"
  "checker_rejects|is not a valid ONNX model \\(checker: No Op registered for NoSuchOp"
  "garbage|is truncated or corrupt \\(protobuf parse failed\\)"
  "huge_length|is truncated or corrupt \\(protobuf parse failed\\)")
# Accepted models whose site must be refused with this reason (exit 0, the site left as it was).
set(refused_cases
  "bn_empty_scale|rejected \\(invalid_shape\\) batch norm is invalid \\(BatchNormalization scale is empty \\(dims \\(0\\)\\)\\)"
  "lying_value_info|mm -> bn: rejected \\(ambiguous_axis\\)"
  "matmul_unknown_rank|mm -> bn: rejected \\(ambiguous_axis\\)")

set(found OFF)
set(_kinds)
foreach(_c IN LISTS model_cases)
  list(APPEND _kinds "model|${_c}")
endforeach()
foreach(_c IN LISTS refused_cases)
  list(APPEND _kinds "refused|${_c}")
endforeach()
foreach(_k IN LISTS _kinds)
  string(REGEX MATCH "^([a-z]+)\\|(.*)$" _ "${_k}")  # kind|case|message
  set(_kind "${CMAKE_MATCH_1}")
  set(_c "${CMAKE_MATCH_2}")
  string(REPLACE "|" ";" _parts "${_c}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _msg)
  if(_name STREQUAL CASE)
    set(found ON)
    execute_process(COMMAND "${MODELS}" bad "${CASE}" "${in}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "cannot make the ${CASE} model")
    endif()
    if(CASE STREQUAL "external_present")
      file(WRITE "${WORK}/w.bin" "0123456789abcdef")
    endif()
    if(CASE STREQUAL "external_dotdot")  # the file exists: refused for the path, not absence
      get_filename_component(_parent "${WORK}" DIRECTORY)
      file(WRITE "${_parent}/w.bin" "0123456789abcdef")
    endif()
    set(args "${in}" "${out}")
    set(expect_msg "${_msg}")
    if(_kind STREQUAL "model")
      set(expect_rc 1)
    else()
      set(expect_rc 0)
      set(expect_stream stdout)
      set(keep_out OFF)
      set(args --dry-run "${in}")
    endif()
  endif()
endforeach()

if(found)
elseif(CASE STREQUAL "usage")
  set(args "${WORK}/only_one_argument.onnx")
  set(expect_rc 2)
  set(expect_msg "expected IN.onnx OUT.onnx")
elseif(CASE STREQUAL "unknown_option")
  set(args --frobnicate "${WORK}/good.onnx" "${out}")
  set(expect_rc 2)
  set(expect_msg "unknown option '--frobnicate'")
elseif(CASE STREQUAL "empty_output")
  set(expect_rc 2)  # the empty argument is passed literally below
  set(expect_msg "qfold-onnx: an empty path")
elseif(CASE STREQUAL "not_a_file")
  set(args "${WORK}/missing.onnx" "${out}")
  set(expect_rc 1)
  set(expect_msg "cannot read '.*missing.onnx': no such file")
elseif(CASE STREQUAL "directory")
  set(args "${WORK}" "${out}")
  set(expect_rc 1)
  set(expect_msg "is a directory, not an ONNX file")
elseif(CASE STREQUAL "not_onnx")
  file(WRITE "${WORK}/text.onnx" "This is a text file, not a model.\n")
  set(args "${WORK}/text.onnx" "${out}")
  set(expect_rc 1)
  set(expect_msg "is not an ONNX model")
elseif(CASE STREQUAL "truncated")
  execute_process(COMMAND "${GOLDEN_TOOL}" inflate "${MODEL}" "${WORK}/big.onnx"
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  file(SIZE "${WORK}/big.onnx" size)
  math(EXPR half "${size} / 2")
  execute_process(COMMAND "${GOLDEN_TOOL}" truncate "${WORK}/big.onnx" "${WORK}/cut.onnx" ${half})
  set(args "${WORK}/cut.onnx" "${out}")
  set(expect_rc 1)
  set(expect_msg "is truncated or corrupt")
elseif(CASE STREQUAL "opset_new")
  execute_process(COMMAND "${GOLDEN_TOOL}" set-opset "${WORK}/good.onnx" "${WORK}/o.onnx" 99)
  set(args "${WORK}/o.onnx" "${out}")
  set(expect_rc 1)
  set(expect_msg "unsupported opset 99 \\(supported: 7 to [0-9]+\\)")
elseif(CASE STREQUAL "opset_old")
  execute_process(COMMAND "${GOLDEN_TOOL}" set-opset "${WORK}/good.onnx" "${WORK}/o.onnx" 6)
  set(args "${WORK}/o.onnx" "${out}")
  set(expect_rc 1)
  set(expect_msg "unsupported opset 6 ")
elseif(CASE STREQUAL "unwritable")
  set(out "${WORK}/no/such/directory/out.onnx")
  set(args "${WORK}/good.onnx" "${out}")
  set(expect_rc 3)
  set(expect_msg "cannot write in '.*no/such/directory'")
  set(keep_out OFF)
elseif(CASE STREQUAL "output_is_directory")
  set(out "${WORK}/adir")
  file(MAKE_DIRECTORY "${out}")
  set(args "${WORK}/good.onnx" "${out}")
  set(expect_rc 3)
  set(expect_msg "'.*adir' is a directory")
  set(keep_out OFF)
elseif(CASE STREQUAL "output_is_fifo")  # never replaced by a regular file
  set(out "${WORK}/fifo")
  execute_process(COMMAND mkfifo "${out}" RESULT_VARIABLE rc)
  set(args "${WORK}/good.onnx" "${out}")
  set(expect_rc 3)
  set(expect_msg "'.*fifo' exists and is not a regular file")
  set(keep_out OFF)
elseif(CASE STREQUAL "output_symlink")  # the link stays; its target gets the folded model
  file(MAKE_DIRECTORY "${WORK}/real")
  file(WRITE "${WORK}/real/target.onnx" "keep me")
  file(CREATE_LINK "real/target.onnx" "${out}" SYMBOLIC)
  set(args "${WORK}/good.onnx" "${out}")
  set(expect_rc 0)
  set(expect_stream stdout)
  set(expect_msg "1 folded, 0 rejected")
  set(keep_out OFF)
elseif(CASE STREQUAL "same_path")  # in place: read whole before the rename replaces it
  file(COPY_FILE "${WORK}/good.onnx" "${in}")
  set(args "${in}" "${in}")
  set(expect_rc 0)
  set(expect_stream stdout)
  set(expect_msg "1 folded, 0 rejected, 48 bytes removed, 24 added \\(net 24 removed\\); 0 of 1 BatchNormalization left")
  set(keep_out OFF)
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()

if(keep_out)
  file(WRITE "${out}" "keep me")  # an existing OUT must survive a failure unchanged
endif()
if(CASE STREQUAL "empty_output")
  execute_process(COMMAND "${QFOLD_ONNX}" "${WORK}/good.onnx" "" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
else()
  execute_process(COMMAND "${QFOLD_ONNX}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout
                  ERROR_VARIABLE stderr)
endif()
message("exit ${rc}\nstdout: ${stdout}\nstderr: ${stderr}")
if(NOT rc EQUAL expect_rc)
  message(FATAL_ERROR "exit code ${rc}, expected ${expect_rc}")
endif()
if(NOT "${${expect_stream}}" MATCHES "${expect_msg}")
  message(FATAL_ERROR "${expect_stream} does not match '${expect_msg}'")
endif()

if(keep_out)
  file(READ "${out}" kept)
  if(NOT kept STREQUAL "keep me")
    message(FATAL_ERROR "the existing OUT was changed")
  endif()
elseif(CASE STREQUAL "unwritable")
  if(EXISTS "${out}")
    message(FATAL_ERROR "an output file was created")
  endif()
elseif(CASE STREQUAL "output_is_directory")
  if(NOT IS_DIRECTORY "${out}")
    message(FATAL_ERROR "the directory OUT was replaced")
  endif()
elseif(CASE STREQUAL "output_is_fifo")
  execute_process(COMMAND test -p "${out}" RESULT_VARIABLE is_fifo)
  if(NOT is_fifo EQUAL 0)
    message(FATAL_ERROR "the fifo OUT was replaced")
  endif()
elseif(CASE STREQUAL "output_symlink")
  if(NOT IS_SYMLINK "${out}")
    message(FATAL_ERROR "the symbolic link OUT was replaced by a file")
  endif()
  file(READ_SYMLINK "${out}" link)
  if(NOT link STREQUAL "real/target.onnx")
    message(FATAL_ERROR "the link now points to '${link}'")
  endif()
  execute_process(COMMAND "${QFOLD_ONNX}" --dry-run "${WORK}/real/target.onnx"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE again)
  if(NOT rc EQUAL 0 OR NOT again MATCHES "0 of 0 BatchNormalization left")
    message(FATAL_ERROR "the link's target does not hold the folded model: ${again}")
  endif()
elseif(CASE STREQUAL "same_path")
  execute_process(COMMAND "${QFOLD_ONNX}" --dry-run "${in}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE again)
  if(NOT rc EQUAL 0 OR NOT again MATCHES "0 of 0 BatchNormalization left")
    message(FATAL_ERROR "IN was not replaced by the folded model: ${again}")
  endif()
endif()
if(expect_stream STREQUAL "stdout" AND NOT CASE STREQUAL "output_symlink"
   AND NOT CASE STREQUAL "same_path" AND EXISTS "${out}")
  message(FATAL_ERROR "--dry-run wrote a file")
endif()
file(GLOB_RECURSE leftovers "${WORK}/.*.tmp" "${WORK}/*.tmp")
if(leftovers)
  message(FATAL_ERROR "temporary files left: ${leftovers}")
endif()
file(REMOVE_RECURSE "${WORK}")
if(CASE STREQUAL "external_dotdot")
  file(REMOVE "${_parent}/w.bin")
endif()
