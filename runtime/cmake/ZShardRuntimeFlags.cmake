#===- ZShardRuntimeFlags.cmake - runtime compile settings -----*- cmake -*-===//
#
# Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
#
# zshard_rt_configure_target(<target>) gives a runtime target its language
# standards (C++17, C11, CUDA C++17, no extensions), hidden symbol visibility
# and warnings (-Wall -Wextra, and -Werror under ZSHARD_WERROR). Settings go on
# the target, never on the directory, so the runtime behaves the same in the
# zshard tree and alone.
#
#===----------------------------------------------------------------------===//

function(zshard_rt_configure_target target)
  set_target_properties(${target} PROPERTIES
    CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
    C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
    CXX_VISIBILITY_PRESET hidden C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ZSHARD_HAS_CUDA)
    set_target_properties(${target} PROPERTIES
      CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
      CUDA_VISIBILITY_PRESET hidden)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  if(ZSHARD_WERROR)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:C,CXX>:-Werror>
      $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Werror>)
  endif()
endfunction()
