#===- CheckRtInfo.cmake - check zshard-rt-info output ---------*- cmake -*-===//
#
# Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
#
# Runs zshard-rt-info, directly (RANKS=0) or under mpiexec with RANKS ranks and
# --mpi, parses every output line as JSON and checks it against the build:
#
#   cmake -DINFO=<zshard-rt-info> -DEXPECT_VERSION=<x.y.z>
#         -DEXPECT_CUDA=ON|OFF -DEXPECT_NCCL=ON|OFF -DEXPECT_MPI=ON|OFF
#         -DRANKS=<n> [-DMPIEXEC=<mpiexec> -DMPIEXEC_NUMPROC_FLAG=<-np>
#         -DMPIEXEC_FLAGS=<flag,flag,...>] -P CheckRtInfo.cmake
#
# Under MPI every rank 0..RANKS-1 must report itself exactly once, with size
# RANKS.
#
#===----------------------------------------------------------------------===//

cmake_minimum_required(VERSION 3.20)

function(fail message)
  message(FATAL_ERROR "${message}\n--- stdout:\n${out}\n--- stderr:\n${err}")
endfunction()

# json_get(<var> <line> <path>...): the value at <path>, or fail.
function(json_get var line)
  string(JSON value ERROR_VARIABLE error GET "${line}" ${ARGN})
  if(error)
    fail("'${ARGN}' missing in: ${line} (${error})")
  endif()
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

# expect_bool(<what> <actual> <expected>): both true or both false.
function(expect_bool what actual expected)
  if((actual AND NOT expected) OR (expected AND NOT actual))
    fail("${what} is ${actual}, expected ${expected}")
  endif()
endfunction()

if(RANKS EQUAL 0)
  set(command "${INFO}")
else()
  string(REPLACE "," ";" flags "${MPIEXEC_FLAGS}")
  set(command "${MPIEXEC}" ${MPIEXEC_NUMPROC_FLAG} ${RANKS} ${flags}
              "${INFO}" --mpi)
endif()
execute_process(COMMAND ${command}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
if(NOT rc EQUAL 0)
  fail("'${command}' exited with ${rc}")
endif()

set(lines 0)
set(seen_ranks "")
set(rest "${out}")
while(NOT rest STREQUAL "")
  string(FIND "${rest}" "\n" eol)
  if(eol EQUAL -1)
    fail("output does not end in a newline")
  endif()
  string(SUBSTRING "${rest}" 0 ${eol} line)
  math(EXPR next "${eol} + 1")
  string(SUBSTRING "${rest}" ${next} -1 rest)
  math(EXPR lines "${lines} + 1")

  json_get(version "${line}" runtime version)
  if(NOT version STREQUAL EXPECT_VERSION)
    fail("runtime.version is '${version}', expected '${EXPECT_VERSION}'")
  endif()
  json_get(blas "${line}" blas)
  if(NOT blas MATCHES "^OpenBLAS ")
    fail("blas is '${blas}', expected OpenBLAS")
  endif()

  json_get(cuda_built "${line}" cuda built)
  expect_bool("cuda.built" "${cuda_built}" "${EXPECT_CUDA}")
  json_get(devices "${line}" cuda device_count)
  if(devices EQUAL 0)
    json_get(reason "${line}" cuda reason)
    if(NOT EXPECT_CUDA AND NOT reason MATCHES "ZSHARD_ENABLE_CUDA=OFF")
      fail("cuda.reason '${reason}' does not say CUDA was not built")
    elseif(reason STREQUAL "")
      fail("no CUDA device and no reason")
    endif()
  elseif(NOT EXPECT_CUDA)
    fail("cuda.device_count is ${devices} in a build without CUDA")
  endif()

  json_get(nccl_built "${line}" nccl built)
  expect_bool("nccl.built" "${nccl_built}" "${EXPECT_NCCL}")
  if(EXPECT_NCCL)
    json_get(nccl_version "${line}" nccl version)
    if(NOT nccl_version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
      fail("nccl.version '${nccl_version}' is not MAJOR.MINOR.PATCH")
    endif()
  else()
    json_get(reason "${line}" nccl reason)
  endif()

  json_get(mpi_built "${line}" mpi built)
  expect_bool("mpi.built" "${mpi_built}" "${EXPECT_MPI}")
  if(RANKS GREATER 0)
    json_get(rank "${line}" mpi rank)
    json_get(size "${line}" mpi size)
    if(NOT size EQUAL RANKS)
      fail("mpi.size is ${size}, expected ${RANKS}")
    endif()
    if(rank IN_LIST seen_ranks)
      fail("rank ${rank} reported twice")
    endif()
    list(APPEND seen_ranks ${rank})
  else()
    string(JSON rank ERROR_VARIABLE error GET "${line}" mpi rank)
    if(NOT error)
      fail("mpi.rank reported without --mpi")
    endif()
  endif()
endwhile()

if(RANKS EQUAL 0)
  if(NOT lines EQUAL 1)
    fail("expected one line of JSON, got ${lines}")
  endif()
else()
  if(NOT lines EQUAL RANKS)
    fail("expected ${RANKS} lines of JSON, one per rank, got ${lines}")
  endif()
  math(EXPR last "${RANKS} - 1")
  foreach(rank RANGE ${last})
    if(NOT rank IN_LIST seen_ranks)
      fail("rank ${rank} did not report")
    endif()
  endforeach()
endif()
message(STATUS "zshard-rt-info: ${lines} line(s) of JSON match the build")
