# The TOSA 1.0 flatbuffers integration (`.tosa` files): finds flatc 2.0.x and the flatbuffers
# headers of the same version (Debian: flatbuffers-compiler libflatbuffers-dev, 2.0.8), generates
# the C++ of schema/tosa.fbs into the build tree at build time (never committed), and defines
# qfold::tosa_flatbuffers (target qfold_tosa_flatbuffers: the adapter's headers under
# include/qfold_tosa_fb/, qfold, flatbuffers' headers, the generated header as
# <qfold_tosa_fb/tosa_generated.h>). Sets QFOLD_TOSA_FB_FOUND, or QFOLD_TOSA_FB_WHY.
# QFOLD_TOSA_FB_GENERATED_HEADER names the generated header (to install it with the component).
# -DQFOLD_TOSA_FB=OFF skips it; -DQFOLD_FLATC=/path/to/flatc picks another compiler.
option(QFOLD_TOSA_FB "Build the TOSA 1.0 flatbuffer adapter, qfold-tosa and their tests when flatbuffers 2.0 is found" ON)
set(QFOLD_TOSA_FB_FOUND FALSE)
if(NOT QFOLD_TOSA_FB)
  set(QFOLD_TOSA_FB_WHY "QFOLD_TOSA_FB is OFF")
  return()
endif()
if(TARGET qfold_tosa_flatbuffers)
  set(QFOLD_TOSA_FB_FOUND TRUE)
  return()
endif()
set(_qfold_fb_install "Debian: apt-get install flatbuffers-compiler libflatbuffers-dev")
set(_qfold_fb_schema "${CMAKE_CURRENT_LIST_DIR}/schema/tosa.fbs")
if(NOT EXISTS "${_qfold_fb_schema}")
  set(QFOLD_TOSA_FB_WHY "the schema ${_qfold_fb_schema} is missing")
  return()
endif()

# The headers: flatbuffers' CMake package (Debian ships FlatBuffersConfig.cmake), else the header.
find_package(FlatBuffers CONFIG QUIET)
find_path(QFOLD_FLATBUFFERS_INCLUDE_DIR flatbuffers/flatbuffers.h
  HINTS ${FlatBuffers_DIR}/../../../../include)
if(NOT QFOLD_FLATBUFFERS_INCLUDE_DIR)
  set(QFOLD_TOSA_FB_WHY "the flatbuffers headers were not found (${_qfold_fb_install})")
  return()
endif()
file(STRINGS "${QFOLD_FLATBUFFERS_INCLUDE_DIR}/flatbuffers/base.h" _qfold_fb_lines
     REGEX "^#define FLATBUFFERS_VERSION_(MAJOR|MINOR|REVISION) +[0-9]+")
set(_qfold_fb_header_version "")
foreach(_part IN ITEMS MAJOR MINOR REVISION)
  if(NOT _qfold_fb_lines MATCHES "FLATBUFFERS_VERSION_${_part} +([0-9]+)")
    set(QFOLD_TOSA_FB_WHY "cannot read the flatbuffers version from ${QFOLD_FLATBUFFERS_INCLUDE_DIR}/flatbuffers/base.h")
    return()
  endif()
  list(APPEND _qfold_fb_header_version "${CMAKE_MATCH_1}")
endforeach()
list(JOIN _qfold_fb_header_version "." _qfold_fb_header_version)

# The compiler: its generated code static_asserts the headers' exact version, so both must agree.
if(TARGET flatbuffers::flatc AND NOT QFOLD_FLATC)
  get_target_property(_qfold_flatc flatbuffers::flatc LOCATION)
  if(_qfold_flatc AND EXISTS "${_qfold_flatc}")
    set(QFOLD_FLATC "${_qfold_flatc}" CACHE FILEPATH "flatc, the flatbuffers schema compiler")
  endif()
endif()
find_program(QFOLD_FLATC flatc)
if(NOT QFOLD_FLATC)
  set(QFOLD_TOSA_FB_WHY "flatc was not found (${_qfold_fb_install}; or -DQFOLD_FLATC=...)")
  return()
endif()
execute_process(COMMAND "${QFOLD_FLATC}" --version OUTPUT_VARIABLE _qfold_flatc_out
                RESULT_VARIABLE _qfold_flatc_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _qfold_flatc_rc EQUAL 0 OR NOT _qfold_flatc_out MATCHES "([0-9]+\\.[0-9]+\\.[0-9]+)")
  set(QFOLD_TOSA_FB_WHY "${QFOLD_FLATC} --version failed")
  return()
endif()
set(_qfold_flatc_version "${CMAKE_MATCH_1}")
if(NOT _qfold_flatc_version MATCHES "^2\\.0\\.")
  set(QFOLD_TOSA_FB_WHY "flatc ${_qfold_flatc_version} was found; the TOSA adapter is written for flatbuffers 2.0.x (${_qfold_fb_install})")
  return()
endif()
if(NOT _qfold_flatc_version VERSION_EQUAL _qfold_fb_header_version)
  set(QFOLD_TOSA_FB_WHY "flatc ${_qfold_flatc_version} and the flatbuffers headers ${_qfold_fb_header_version} (${QFOLD_FLATBUFFERS_INCLUDE_DIR}) differ: the generated code needs the headers of its compiler")
  return()
endif()

# The generated header, made at build time from the schema (object API: the writer copies the
# attribute tables it does not change through it).
set(_qfold_fb_gen_root "${CMAKE_BINARY_DIR}/qfold_tosa_fb_generated")
set(_qfold_fb_gen_dir "${_qfold_fb_gen_root}/qfold_tosa_fb")
set(QFOLD_TOSA_FB_GENERATED_HEADER "${_qfold_fb_gen_dir}/tosa_generated.h")
add_custom_command(
  OUTPUT "${QFOLD_TOSA_FB_GENERATED_HEADER}"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${_qfold_fb_gen_dir}"
  COMMAND "${QFOLD_FLATC}" --cpp --gen-object-api -o "${_qfold_fb_gen_dir}" "${_qfold_fb_schema}"
  DEPENDS "${_qfold_fb_schema}"
  COMMENT "flatc: the C++ of the TOSA 1.0 schema (qfold_tosa_fb/tosa_generated.h)"
  VERBATIM)
add_custom_target(qfold_tosa_fb_generate DEPENDS "${QFOLD_TOSA_FB_GENERATED_HEADER}")

# As qfold_add_integration (cmake/qfold_integration.cmake) does, but the headers' folder is
# include/qfold_tosa_fb/, not the target's name.
file(GLOB _qfold_fb_headers CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/include/qfold_tosa_fb/*.hpp")
add_library(qfold_tosa_flatbuffers INTERFACE)
add_library(qfold::tosa_flatbuffers ALIAS qfold_tosa_flatbuffers)
set_target_properties(qfold_tosa_flatbuffers PROPERTIES EXPORT_NAME tosa_flatbuffers
                      VERIFY_INTERFACE_HEADER_SETS ${PROJECT_IS_TOP_LEVEL})
target_sources(qfold_tosa_flatbuffers INTERFACE
  FILE_SET HEADERS BASE_DIRS "${CMAKE_CURRENT_LIST_DIR}/include" FILES ${_qfold_fb_headers})
# Followed transitively: whatever links qfold_tosa_flatbuffers is built after the header exists.
add_dependencies(qfold_tosa_flatbuffers qfold_tosa_fb_generate)
# SYSTEM: the generated code and flatbuffers' headers do not trip the users' warnings.
target_include_directories(qfold_tosa_flatbuffers SYSTEM INTERFACE
  "$<BUILD_INTERFACE:${_qfold_fb_gen_root}>"
  "$<BUILD_INTERFACE:${QFOLD_FLATBUFFERS_INCLUDE_DIR}>")
target_link_libraries(qfold_tosa_flatbuffers INTERFACE qfold::qfold)
set(QFOLD_TOSA_FB_FOUND TRUE)
message(STATUS "qfold: flatbuffers ${_qfold_flatc_version} found (${QFOLD_FLATC}, ${QFOLD_FLATBUFFERS_INCLUDE_DIR})")
