//===- CudaSelfTest.cpp - Run the CUDA self-test on every device ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Labelled requires-gpu. Exits 77 (ctest: skipped) when there is no usable
// driver or device, 1 when a device fails the self-test, 0 when all pass.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <cstdio>

int main() {
  constexpr int skipped = 77;
  int count = 0;
  zshard_rt_status status = zshard_rt_cuda_device_count(&count);
  if (status == ZSHARD_RT_ERROR_UNAVAILABLE) {
    std::printf("skipped: %s\n", zshard_rt_last_error_message());
    return skipped;
  }
  if (status != ZSHARD_RT_OK) {
    std::fprintf(stderr, "error: %s\n", zshard_rt_last_error_message());
    return 1;
  }

  // Empty, one element, a partial block, and more elements than the grid
  // covers in one pass (the kernels' grid-stride loops).
  const int64_t sizes[] = {0, 1, 257, (int64_t(1) << 22) + 3};
  int failures = 0;
  for (int device = 0; device < count; ++device) {
    for (int64_t n : sizes) {
      status = zshard_rt_cuda_self_test(device, n);
      if (status == ZSHARD_RT_OK) {
        std::printf("device %d, n = %lld: ok\n", device,
                    static_cast<long long>(n));
        continue;
      }
      std::fprintf(stderr, "device %d, n = %lld: %s: %s\n", device,
                   static_cast<long long>(n), zshard_rt_status_string(status),
                   zshard_rt_last_error_message());
      ++failures;
    }
  }
  return failures ? 1 : 0;
}
