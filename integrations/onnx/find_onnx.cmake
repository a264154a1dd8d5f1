# The ONNX integration: finds the ONNX C++ library and protobuf (Debian: libonnx-dev
# libprotobuf-dev protobuf-compiler) and defines qfold::onnx (target qfold_onnx), the adapter's
# headers under include/qfold_onnx/ with qfold, ONNX, protobuf and threads. Sets QFOLD_ONNX_FOUND,
# or QFOLD_ONNX_WHY. The top level includes this first; tests, tools and benchmarks see the target.
# The package installs it as the `onnx` component: find_package(qfold COMPONENTS onnx).
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
include("${CMAKE_CURRENT_LIST_DIR}/onnx_dependencies.cmake")
if(NOT QFOLD_ONNX_DEPENDENCIES_FOUND)
  return()
endif()
foreach(_t IN ITEMS onnx onnx_proto protobuf::libprotobuf)
  get_target_property(_global ${_t} IMPORTED_GLOBAL)
  if(NOT _global)
    set_target_properties(${_t} PROPERTIES IMPORTED_GLOBAL TRUE)
  endif()
endforeach()
qfold_add_integration(qfold_onnx onnx "${CMAKE_CURRENT_LIST_DIR}")
# Imported targets' include directories are SYSTEM: protobuf's and ONNX's headers do not trip
# qfold's warnings.
target_link_libraries(qfold_onnx INTERFACE qfold::qfold onnx onnx_proto protobuf::libprotobuf
                                           Threads::Threads)
set(QFOLD_ONNX_FOUND TRUE)
message(STATUS "qfold: ONNX ${ONNX_VERSION} and protobuf ${Protobuf_VERSION} found")
