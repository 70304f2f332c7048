#===- CheckInstall.cmake - install zshard and build against it -*- cmake -*-===//
#
# Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
#
#   cmake -DBUILD=<build dir> -DWORK=<scratch dir> -DCONSUMER=<source dir>
#         -DGENERATOR=<generator> -DCXX=<C++ compiler> -P CheckInstall.cmake
#
# Installs BUILD into WORK/prefix (cmake --install), configures and builds
# the consumer project against it (find_package(zshard)), writes a step
# with the installed zshard-gen and runs the consumer on it; fails with the
# step that went wrong.
#
#===----------------------------------------------------------------------===//

foreach(_var BUILD WORK CONSUMER GENERATOR CXX)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "CheckInstall.cmake needs -D${_var}=...")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

set(prefix "${WORK}/prefix")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${prefix}")
foreach(_file bin/zshard-compile bin/zshard-run bin/zshard-gen
        include/zshard/abi/ManifestSchema.h
        include/zshard/runtime/zshard_rt.h
        lib/cmake/zshard/zshardConfig.cmake)
  if(NOT EXISTS "${prefix}/${_file}")
    message(FATAL_ERROR "the installed tree has no ${_file}")
  endif()
endforeach()

run("configuring the consumer" ${CMAKE_COMMAND} -S "${CONSUMER}"
    -B "${WORK}/consumer" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_PREFIX_PATH=${prefix}")
run("building the consumer" ${CMAKE_COMMAND} --build "${WORK}/consumer")

run("the installed zshard-gen" "${prefix}/bin/zshard-gen" mlp
    --widths 8,16,4 --batch 2 -o "${WORK}/step.mlir")
run("the consumer" "${WORK}/consumer/zshard-consumer" "${WORK}/step.mlir")
if(NOT output MATCHES "^zshard-consumer: step '[a-z_]+' with [0-9]+ arguments \\([1-9][0-9]* init specs\\), runtime [0-9]+\\.[0-9]+\\.[0-9]+\n$")
  message(FATAL_ERROR "unexpected consumer output: ${output}")
endif()
message(STATUS "${output}")
