# Compares pairs (built, committed) of generated docs; fails naming the stale
# ones and the command that refreshes them.
string(REPLACE "|" ";" files "${FILES}")
list(LENGTH files count)
set(stale)
math(EXPR last "${count} - 1")
foreach(i RANGE 0 ${last} 2)
  math(EXPR j "${i} + 1")
  list(GET files ${i} built)
  list(GET files ${j} committed)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${built} ${committed}
                  RESULT_VARIABLE different)
  if(different)
    list(APPEND stale ${committed})
  endif()
endforeach()
if(stale)
  message(FATAL_ERROR "stale generated docs: ${stale}\n"
                      "run: cmake --build build --target zshard-update-docs")
endif()
math(EXPR pairs "${count} / 2")
message(STATUS "${pairs} generated doc files checked, all up to date")
