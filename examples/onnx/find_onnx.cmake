# Finds the ONNX C++ library and protobuf (Debian: libonnx-dev libprotobuf-dev
# protobuf-compiler) and defines the INTERFACE target qfold_onnx (the adapter in this directory,
# qfold, ONNX, protobuf). Sets QFOLD_ONNX_FOUND. Included by examples/onnx and by the tests
# (which cmake processes first); the imported targets are made global so both see them.
# -DQFOLD_ONNX=OFF skips everything ONNX.
option(QFOLD_ONNX "Build the ONNX adapter, qfold-onnx and their tests when ONNX is found" ON)
set(QFOLD_ONNX_FOUND FALSE)
if(NOT QFOLD_ONNX)
  set(QFOLD_ONNX_WHY "QFOLD_ONNX is OFF")
  return()
endif()
if(TARGET qfold_onnx)
  set(QFOLD_ONNX_FOUND TRUE)
  return()
endif()
# ONNX's package config links protobuf::libprotobuf without finding it: find protobuf first.
find_package(Protobuf QUIET)
if(Protobuf_FOUND)
  find_package(ONNX CONFIG QUIET)
endif()
if(NOT Protobuf_FOUND OR NOT ONNX_FOUND OR NOT TARGET onnx OR NOT TARGET onnx_proto
   OR NOT TARGET protobuf::libprotobuf)
  set(QFOLD_ONNX_WHY "the ONNX C++ library was not found (Debian: apt-get install libonnx-dev libprotobuf-dev protobuf-compiler)")
  return()
endif()
foreach(_t IN ITEMS onnx onnx_proto protobuf::libprotobuf)
  get_target_property(_global ${_t} IMPORTED_GLOBAL)
  if(NOT _global)
    set_target_properties(${_t} PROPERTIES IMPORTED_GLOBAL TRUE)
  endif()
endforeach()
add_library(qfold_onnx INTERFACE)
target_include_directories(qfold_onnx INTERFACE "${CMAKE_CURRENT_LIST_DIR}")
# Imported targets' include directories are SYSTEM: protobuf's and ONNX's headers do not trip
# qfold's warnings.
find_package(Threads REQUIRED)  # a second thread: the spill maps large rooms, tool_support
# removes a replaced output
target_link_libraries(qfold_onnx INTERFACE qfold::qfold onnx onnx_proto protobuf::libprotobuf
                                           Threads::Threads)
set(QFOLD_ONNX_FOUND TRUE)
message(STATUS "qfold: ONNX ${ONNX_VERSION} and protobuf ${Protobuf_VERSION} found")
