# Runs COMMAND (its words separated by '|': mpiexec -n 2
# zshard-rt-comm-mpi-timeout-test MODE, where rank 1 is stuck for 90 s before
# an all-gather) with a 2 s collective timeout and checks that the job ends
# within 30 s with a non-zero status and the timeout line instead of hanging.
# Under Open MPI, whose mpiexec exits with the code the aborting rank gave
# MPI_Abort, the status must be 70; other launchers need only fail.
string(REPLACE "|" ";" COMMAND "${COMMAND}")
list(GET COMMAND 0 mpiexec)
execute_process(COMMAND ${mpiexec} --version OUTPUT_VARIABLE version
                ERROR_QUIET TIMEOUT 30)
set(ENV{ZSHARD_COLLECTIVE_TIMEOUT_S} 2)
string(TIMESTAMP began "%s" UTC)
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc ERROR_VARIABLE err
                OUTPUT_VARIABLE out TIMEOUT 60)
string(TIMESTAMP ended "%s" UTC)
math(EXPR seconds "${ended} - ${began}")
if(NOT rc MATCHES "^[0-9]+$" OR rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit status, got '${rc}' after "
                      "${seconds} s\n${out}${err}")
endif()
if(seconds GREATER 30)
  message(FATAL_ERROR "the job took ${seconds} s to end (at most 30)\n"
                      "${out}${err}")
endif()
string(CONCAT line
  "zshard runtime: fatal: mpi allGather waited 2 s on a group of 2 ranks "
  "\\(rank 0, world rank 0\\); a rank failed or is stuck \\(collective "
  "timeout, ZSHARD_COLLECTIVE_TIMEOUT_S\\); aborting the MPI job")
if(NOT err MATCHES "${line}")
  message(FATAL_ERROR "missing the timeout line:\n${out}${err}")
endif()
if(version MATCHES "Open MPI|OpenRTE" AND NOT rc EQUAL 70)
  message(FATAL_ERROR "expected exit status 70 (MPI_Abort's code), got "
                      "'${rc}'\n${out}${err}")
endif()
message(STATUS "the stuck job ended after ${seconds} s with status ${rc} and "
               "the timeout line")
