#===- AddZShard.cmake - zshard CMake helpers ---------------------*- cmake -*-===//

# zshard_add_doc(<td file> <doc name> <tblgen flags...>)
# Generates docs/generated/<doc name>.md in the build tree from ODS. The `docs`
# test fails when the copy committed under docs/generated/ is stale; the
# `zshard-update-docs` target refreshes it.
function(zshard_add_doc td_file doc_name)
  set(LLVM_TARGET_DEFINITIONS ${td_file})
  mlir_tablegen(${doc_name}.md ${ARGN})
  set(out ${PROJECT_BINARY_DIR}/docs/generated/${doc_name}.md)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E copy
            ${CMAKE_CURRENT_BINARY_DIR}/${doc_name}.md ${out}
    DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/${doc_name}.md)
  add_custom_target(zshard-doc-${doc_name} ALL DEPENDS ${out})
  set_property(GLOBAL APPEND PROPERTY ZSHARD_DOCS ${doc_name})
endfunction()
