#===- ZShardInstall.cmake - cmake --install and find_package --*- cmake -*-===//
#
# Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
#
# `cmake --install build --prefix P` installs the tools, the headers and the
# libraries, and P/lib/cmake/zshard/zshardConfig.cmake, so that a project
# with CMAKE_PREFIX_PATH=P uses them as
#
#   find_package(zshard CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE zshard::compiler zshard::runtime)
#
# zshard::compiler: the compiler's libraries (dialect, analyses, passes,
#   pipelines, artifact writer, registration, step builder) as one target;
#   it brings MLIR (find_package(MLIR) of the LLVM zshard was built with).
# zshard::runtime: libzshard_rt.so and its C ABI (zshard/runtime/zshard_rt.h).
# zshard::abi: the headers compiler and runtime share (zshard/abi/).
# See docs/install.md.
#
#===----------------------------------------------------------------------===//

include(CMakePackageConfigHelpers)

if(NOT ZSHARD_RT_VERSION) # built without the runtime
  set(ZSHARD_RT_VERSION 0.0.0)
endif()

# The compiler's libraries. A new library under lib/ joins this list.
set(ZSHARD_COMPILER_LIBRARIES
  ZShardSupport ZShardDialect ZShardAnalysis ZShardTransforms
  ZShardConversion ZShardPipelines ZShardTarget ZShardCompiler ZShardRegistration
  ZShardGen)

add_library(zshard_compiler INTERFACE)
add_library(zshard::compiler ALIAS zshard_compiler)
set_target_properties(zshard_compiler PROPERTIES EXPORT_NAME compiler)
target_link_libraries(zshard_compiler INTERFACE ${ZSHARD_COMPILER_LIBRARIES})
target_include_directories(zshard_compiler INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

install(TARGETS zshard_compiler ${ZSHARD_COMPILER_LIBRARIES}
  EXPORT zshardTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")

# The headers: written ones and those TableGen generates.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/zshard/"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/zshard"
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY "${PROJECT_BINARY_DIR}/include/zshard/"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/zshard"
  FILES_MATCHING PATTERN "*.inc" PATTERN "*.h"
  PATTERN "CMakeFiles" EXCLUDE)

# The tools, finding libMLIR where they were linked against it.
install(TARGETS zshard-compile zshard-opt zshard-gen zshard-translate
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
set_target_properties(zshard-compile zshard-opt zshard-gen zshard-translate
  PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

set(_zshard_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/zshard")
install(EXPORT zshardTargets NAMESPACE zshard::
  DESTINATION "${_zshard_cmake_dir}")
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/zshardConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/zshardConfig.cmake"
  INSTALL_DESTINATION "${_zshard_cmake_dir}"
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cmake/zshardConfigVersion.cmake"
  VERSION "${ZSHARD_RT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/zshardConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/zshardConfigVersion.cmake"
  DESTINATION "${_zshard_cmake_dir}")
