# bench_onnx_fold links the ONNX C++ library when it is found (bench/CMakeLists.txt includes
# bench/<name>.cmake after creating bench_<name>); without it the program only says so.
if(QFOLD_ONNX_FOUND)
  target_link_libraries(bench_onnx_fold PRIVATE qfold_onnx_tool)
  target_compile_definitions(bench_onnx_fold PRIVATE QFOLD_ONNX_BENCH)
else()
  message(STATUS "qfold: bench_onnx_fold built without ONNX: ${QFOLD_ONNX_WHY}")
endif()
