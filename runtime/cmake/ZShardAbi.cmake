#===- ZShardAbi.cmake - the header-only ABI library ------------*- cmake -*-===//
#
# Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
#
# zshard_abi (zshard::abi): the headers of runtime/include/zshard/abi/, the
# facts compiler and runtime share (unit layout, init specs, FNV-1a, runtime
# codes, strategies, the manifest's schema). Both the top level and the
# runtime alone include this file; the target is made once.
#
#===----------------------------------------------------------------------===//

if(NOT TARGET zshard_abi)
  get_filename_component(_zshard_abi_include
    "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)
  add_library(zshard_abi INTERFACE)
  add_library(zshard::abi ALIAS zshard_abi)
  target_include_directories(zshard_abi INTERFACE
    $<BUILD_INTERFACE:${_zshard_abi_include}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  set_target_properties(zshard_abi PROPERTIES EXPORT_NAME abi)
  install(TARGETS zshard_abi EXPORT zshardTargets)
  install(DIRECTORY "${_zshard_abi_include}/zshard/abi"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/zshard")
endif()
