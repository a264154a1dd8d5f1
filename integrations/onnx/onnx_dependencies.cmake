# What the ONNX integration needs: the ONNX C++ library, protobuf and threads (Debian:
# libonnx-dev libprotobuf-dev protobuf-compiler). Sets QFOLD_ONNX_DEPENDENCIES_FOUND, or
# QFOLD_ONNX_WHY. Used by the build (find_onnx.cmake) and by the installed package's `onnx`
# component (qfoldConfig.cmake), so that both find the same things the same way.
set(QFOLD_ONNX_DEPENDENCIES_FOUND FALSE)
# ONNX's package config links protobuf::libprotobuf without finding it: find protobuf first.
find_package(Protobuf QUIET)
if(Protobuf_FOUND)
  find_package(ONNX CONFIG QUIET)
endif()
find_package(Threads QUIET)  # the spill hands a large room's mapping to a second thread
if(NOT Protobuf_FOUND OR NOT ONNX_FOUND OR NOT TARGET onnx OR NOT TARGET onnx_proto
   OR NOT TARGET protobuf::libprotobuf)
  set(QFOLD_ONNX_WHY "the ONNX C++ library was not found (Debian: apt-get install libonnx-dev libprotobuf-dev protobuf-compiler)")
elseif(NOT Threads_FOUND)
  set(QFOLD_ONNX_WHY "no threads library was found")
else()
  set(QFOLD_ONNX_DEPENDENCIES_FOUND TRUE)
endif()
