#===- ZShardRuntimeOptions.cmake - runtime options and deps ---*- cmake -*-===//
#
# Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
#
# Defines the runtime's options, finds its dependencies and prints one status
# line per backend. Defaults follow what this machine has: CUDA is ON when the
# CUDA toolkit is found and nvcc compiles; MPI is ON when MPI is found.
#
#===----------------------------------------------------------------------===//

# The top level may already define it; the runtime only fills it in when alone.
if(NOT DEFINED ZSHARD_WERROR)
  option(ZSHARD_WERROR "Treat compiler warnings as errors" ON)
endif()
option(ZSHARD_RUNTIME_BUILD_TESTS "Build the runtime tests (needs GoogleTest)"
       ON)

find_package(Threads REQUIRED)

# nlohmann/json (header-only; Debian: nlohmann-json3-dev) for the manifests and
# safetensors headers the host library reads.
find_package(nlohmann_json 3.2 QUIET)
if(NOT nlohmann_json_FOUND)
  message(FATAL_ERROR "zshard runtime needs nlohmann/json 3.2 or later "
                      "(Debian: apt-get install nlohmann-json3-dev)")
endif()

#===----------------------------------------------------------------------===//
# BLAS: OpenBLAS through its CBLAS interface (required).
#===----------------------------------------------------------------------===//

find_package(OpenBLAS CONFIG QUIET)
find_path(ZSHARD_CBLAS_INCLUDE_DIR cblas.h
  HINTS ${OpenBLAS_INCLUDE_DIRS}
  PATH_SUFFIXES openblas-pthread openblas openblas-openmp openblas-serial)
find_library(ZSHARD_OPENBLAS_LIBRARY openblas HINTS ${OpenBLAS_LIBRARIES})
if(OpenBLAS_LIBRARIES AND NOT ZSHARD_OPENBLAS_LIBRARY)
  set(ZSHARD_OPENBLAS_LIBRARY "${OpenBLAS_LIBRARIES}")
endif()
if(NOT ZSHARD_CBLAS_INCLUDE_DIR OR NOT ZSHARD_OPENBLAS_LIBRARY)
  message(FATAL_ERROR "zshard runtime needs OpenBLAS (cblas.h and libopenblas; "
                      "Debian: apt-get install libopenblas-dev)")
endif()
add_library(ZShardRT::OpenBLAS INTERFACE IMPORTED)
target_include_directories(ZShardRT::OpenBLAS SYSTEM INTERFACE
                           "${ZSHARD_CBLAS_INCLUDE_DIR}")
target_link_libraries(ZShardRT::OpenBLAS INTERFACE "${ZSHARD_OPENBLAS_LIBRARY}")
message(STATUS "zshard runtime: BLAS OpenBLAS ${OpenBLAS_VERSION} "
               "(${ZSHARD_OPENBLAS_LIBRARY})")

#===----------------------------------------------------------------------===//
# oneDNN (optional): bf16 products where the CPU multiplies bf16 natively.
#===----------------------------------------------------------------------===//

# Found by its header and library rather than its CMake package: Debian's
# dnnl-config.cmake requires OpenCL (its GPU runtime), which a machine
# without opencl-headers lacks, and find_package(dnnl QUIET) then fails the
# configure; the CPU matmul needs neither.
set(_zshard_dnnl_default OFF)
if(NOT DEFINED ZSHARD_ENABLE_DNNL OR ZSHARD_ENABLE_DNNL)
  find_path(ZSHARD_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
  find_library(ZSHARD_DNNL_LIBRARY NAMES dnnl)
  find_package(OpenMP QUIET COMPONENTS CXX)
  if(ZSHARD_DNNL_INCLUDE_DIR AND ZSHARD_DNNL_LIBRARY AND OpenMP_CXX_FOUND)
    set(_zshard_dnnl_default ON)
  endif()
endif()
option(ZSHARD_ENABLE_DNNL
       "bf16 products on oneDNN on CPUs with AVX512-BF16 or AMX (default: ON when oneDNN and OpenMP are found; Debian: libdnnl-dev)"
       ${_zshard_dnnl_default})
set(ZSHARD_HAS_DNNL OFF)
if(ZSHARD_ENABLE_DNNL)
  if(NOT ZSHARD_DNNL_INCLUDE_DIR OR NOT ZSHARD_DNNL_LIBRARY)
    message(FATAL_ERROR "ZSHARD_ENABLE_DNNL=ON needs oneDNN "
                        "(oneapi/dnnl/dnnl.hpp and libdnnl; Debian: "
                        "apt-get install libdnnl-dev)")
  endif()
  find_package(OpenMP REQUIRED COMPONENTS CXX)
  add_library(ZShardRT::DNNL INTERFACE IMPORTED)
  target_include_directories(ZShardRT::DNNL SYSTEM INTERFACE
                             "${ZSHARD_DNNL_INCLUDE_DIR}")
  target_link_libraries(ZShardRT::DNNL INTERFACE "${ZSHARD_DNNL_LIBRARY}")
  file(STRINGS "${ZSHARD_DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h"
       _zshard_dnnl_version REGEX "#define DNNL_VERSION_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^0-9;]" "" _zshard_dnnl_version
         "${_zshard_dnnl_version}")
  string(REPLACE ";" "." _zshard_dnnl_version "${_zshard_dnnl_version}")
  set(ZSHARD_HAS_DNNL ON)
  message(STATUS "zshard runtime: oneDNN ${_zshard_dnnl_version} for bf16 "
                 "products (${ZSHARD_DNNL_LIBRARY})")
else()
  message(STATUS "zshard runtime: no oneDNN (bf16 products widen to f32 for "
                 "sgemm)")
endif()

#===----------------------------------------------------------------------===//
# CUDA (and NCCL with it).
#===----------------------------------------------------------------------===//

set(ZSHARD_CUDA_ARCHITECTURES "80;90" CACHE STRING
    "CUDA architectures the runtime's kernels are compiled for")

set(_zshard_cuda_default OFF)
set(_zshard_cuda_off_reason "ZSHARD_ENABLE_CUDA=OFF")
if(NOT DEFINED ZSHARD_ENABLE_CUDA OR ZSHARD_ENABLE_CUDA)
  set(_zshard_cuda_off_reason "no CUDA toolkit with a working nvcc found")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    # check_language() tries nvcc in a scratch project; point it at the
    # toolkit's nvcc when nothing else names a CUDA compiler.
    if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
       AND CUDAToolkit_NVCC_EXECUTABLE)
      set(ENV{CUDACXX} "${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(_zshard_cuda_default ON)
    endif()
  endif()
endif()
option(ZSHARD_ENABLE_CUDA
       "Build the CUDA device (default: ON when the toolkit and nvcc work)"
       ${_zshard_cuda_default})

set(ZSHARD_HAS_CUDA OFF)
set(ZSHARD_HAS_NCCL OFF)
if(ZSHARD_ENABLE_CUDA)
  find_package(CUDAToolkit REQUIRED)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "${ZSHARD_CUDA_ARCHITECTURES}")
  endif()
  enable_language(CUDA)
  set(ZSHARD_HAS_CUDA ON)
  message(STATUS "zshard runtime: CUDA ON (nvcc "
                 "${CMAKE_CUDA_COMPILER_VERSION}, architectures "
                 "${ZSHARD_CUDA_ARCHITECTURES})")

  find_path(ZSHARD_NCCL_INCLUDE_DIR nccl.h
    HINTS ENV NCCL_HOME ${CUDAToolkit_INCLUDE_DIRS}
          "${CUDAToolkit_LIBRARY_ROOT}"
    PATH_SUFFIXES include)
  find_library(ZSHARD_NCCL_LIBRARY nccl
    HINTS ENV NCCL_HOME "${CUDAToolkit_LIBRARY_DIR}"
          "${CUDAToolkit_LIBRARY_ROOT}"
    PATH_SUFFIXES lib lib64)
  if(ZSHARD_NCCL_INCLUDE_DIR AND ZSHARD_NCCL_LIBRARY)
    set(ZSHARD_HAS_NCCL ON)
    add_library(ZShardRT::NCCL INTERFACE IMPORTED)
    target_include_directories(ZShardRT::NCCL SYSTEM INTERFACE
                               "${ZSHARD_NCCL_INCLUDE_DIR}")
    target_link_libraries(ZShardRT::NCCL INTERFACE "${ZSHARD_NCCL_LIBRARY}")
    message(STATUS "zshard runtime: NCCL ON (${ZSHARD_NCCL_LIBRARY})")
  else()
    message(STATUS "zshard runtime: NCCL OFF (nccl.h or libnccl not found; "
                   "set NCCL_HOME)")
  endif()
else()
  message(STATUS "zshard runtime: CUDA OFF (${_zshard_cuda_off_reason})")
  message(STATUS "zshard runtime: NCCL OFF (needs CUDA)")
endif()

#===----------------------------------------------------------------------===//
# MPI.
#===----------------------------------------------------------------------===//

set(_zshard_mpi_default OFF)
set(_zshard_mpi_off_reason "ZSHARD_ENABLE_MPI=OFF")
if(NOT DEFINED ZSHARD_ENABLE_MPI OR ZSHARD_ENABLE_MPI)
  set(_zshard_mpi_off_reason "MPI not found")
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(_zshard_mpi_default ON)
  endif()
endif()
option(ZSHARD_ENABLE_MPI "Build the MPI backend (default: ON when MPI is found)"
       ${_zshard_mpi_default})

set(ZSHARD_HAS_MPI OFF)
if(ZSHARD_ENABLE_MPI)
  find_package(MPI REQUIRED COMPONENTS C)
  set(ZSHARD_HAS_MPI ON)
  # Open MPI's launcher refuses root, and more ranks than cores, unless told.
  set(_zshard_mpiexec_flags "")
  execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version
    OUTPUT_VARIABLE _zshard_mpiexec_version ERROR_QUIET TIMEOUT 30)
  if(_zshard_mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(_zshard_mpiexec_flags "--allow-run-as-root;--oversubscribe")
  endif()
  # A user value wins; otherwise the detected flags apply (never cached, so a
  # failed detection in one configure does not stick).
  set(ZSHARD_MPIEXEC_FLAGS "" CACHE STRING
      "Extra mpiexec flags for the runtime's MPI tests (empty: detect)")
  if(ZSHARD_MPIEXEC_FLAGS)
    set(ZSHARD_RT_MPIEXEC_FLAGS "${ZSHARD_MPIEXEC_FLAGS}")
  else()
    set(ZSHARD_RT_MPIEXEC_FLAGS "${_zshard_mpiexec_flags}")
  endif()
  message(STATUS "zshard runtime: MPI ON (${MPIEXEC_EXECUTABLE}, "
                 "MPI ${MPI_C_VERSION})")
else()
  message(STATUS "zshard runtime: MPI OFF (${_zshard_mpi_off_reason})")
endif()

if(ZSHARD_RUNTIME_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
