# qfold_add_integration(<target> <component> <folder>): the INTERFACE target of an integration,
# qfold::<component> for users, with the headers <folder>/include/<target>/*.hpp as a header set
# (installed with the component, each compiled on its own by all_verify_interface_header_sets).
function(qfold_add_integration target component folder)
  file(GLOB _headers CONFIGURE_DEPENDS "${folder}/include/${target}/*.hpp")
  add_library(${target} INTERFACE)
  add_library(qfold::${component} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${component}
                        VERIFY_INTERFACE_HEADER_SETS ${PROJECT_IS_TOP_LEVEL})
  target_sources(${target} INTERFACE
    FILE_SET HEADERS BASE_DIRS "${folder}/include" FILES ${_headers})
endfunction()
