# Runs PROGRAM (a rank that waits for a peer that never comes) with a 1 s
# collective timeout and checks it ends with status 70 and the timeout
# message instead of hanging.
set(ENV{ZSHARD_COLLECTIVE_TIMEOUT_S} 1)
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE rc ERROR_VARIABLE err
                OUTPUT_VARIABLE out TIMEOUT 60)
if(NOT rc EQUAL 70)
  message(FATAL_ERROR "expected exit status 70, got '${rc}'\n${out}${err}")
endif()
if(NOT err MATCHES "a collective waited 1 s for 1 of 2 ranks; a rank failed or is stuck")
  message(FATAL_ERROR "missing the timeout message:\n${err}")
endif()
message(STATUS "the stuck collective ended with the timeout message")
