//===- GpuMain.cpp - main() of the GoogleTest GPU tests -------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Like every requires-gpu test: exits 77 (ctest: skipped) when the runtime
// says no driver or no device is usable; any other failure is a failure.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char **argv) {
  constexpr int skipped = 77;
  int count = 0;
  if (zshard_rt_cuda_device_count(&count) == ZSHARD_RT_ERROR_UNAVAILABLE) {
    std::printf("skipped: %s\n", zshard_rt_last_error_message());
    return skipped;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
