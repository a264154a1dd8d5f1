# What the TOSA flatbuffers integration needs at build and at use time: the flatbuffers headers
# of version 2.0.x (Debian bookworm: libflatbuffers-dev 2.0.8), as the IMPORTED target
# qfold::flatbuffers_headers (SYSTEM: their code does not trip the user's warnings). Sets
# QFOLD_FLATBUFFERS_DEPENDENCIES_FOUND and QFOLD_FLATBUFFERS_VERSION, or QFOLD_TOSA_FB_WHY. Used by
# the build (find_flatbuffers.cmake) and by an installed package's `tosa_flatbuffers` component,
# so that both find the same headers the same way. QFOLD_FLATBUFFERS_INCLUDE_DIR points at others.
set(QFOLD_FLATBUFFERS_DEPENDENCIES_FOUND FALSE)
if(TARGET qfold::flatbuffers_headers)
  set(QFOLD_FLATBUFFERS_DEPENDENCIES_FOUND TRUE)
  return()
endif()
set(_qfold_fb_install "Debian: apt-get install flatbuffers-compiler libflatbuffers-dev")
# flatbuffers' own CMake package (Debian ships FlatBuffersConfig.cmake), then the header itself.
find_package(FlatBuffers CONFIG QUIET)
find_path(QFOLD_FLATBUFFERS_INCLUDE_DIR flatbuffers/flatbuffers.h
  HINTS "${FlatBuffers_DIR}/../../../../include")
if(NOT QFOLD_FLATBUFFERS_INCLUDE_DIR)
  set(QFOLD_TOSA_FB_WHY "the flatbuffers headers were not found (${_qfold_fb_install})")
  return()
endif()
file(STRINGS "${QFOLD_FLATBUFFERS_INCLUDE_DIR}/flatbuffers/base.h" _qfold_fb_lines
     REGEX "^#define FLATBUFFERS_VERSION_(MAJOR|MINOR|REVISION) +[0-9]+")
set(QFOLD_FLATBUFFERS_VERSION "")
foreach(_part IN ITEMS MAJOR MINOR REVISION)
  if(NOT _qfold_fb_lines MATCHES "FLATBUFFERS_VERSION_${_part} +([0-9]+)")
    set(QFOLD_TOSA_FB_WHY "cannot read the flatbuffers version from ${QFOLD_FLATBUFFERS_INCLUDE_DIR}/flatbuffers/base.h")
    return()
  endif()
  list(APPEND QFOLD_FLATBUFFERS_VERSION "${CMAKE_MATCH_1}")
endforeach()
list(JOIN QFOLD_FLATBUFFERS_VERSION "." QFOLD_FLATBUFFERS_VERSION)
if(NOT QFOLD_FLATBUFFERS_VERSION MATCHES "^2\\.0\\.")
  set(QFOLD_TOSA_FB_WHY "flatbuffers ${QFOLD_FLATBUFFERS_VERSION} was found (${QFOLD_FLATBUFFERS_INCLUDE_DIR}); the TOSA adapter is written for flatbuffers 2.0.x (${_qfold_fb_install})")
  return()
endif()
add_library(qfold::flatbuffers_headers INTERFACE IMPORTED GLOBAL)
set_target_properties(qfold::flatbuffers_headers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${QFOLD_FLATBUFFERS_INCLUDE_DIR}")
set(QFOLD_FLATBUFFERS_DEPENDENCIES_FOUND TRUE)
