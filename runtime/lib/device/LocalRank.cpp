//===- LocalRank.cpp - Which GPU of a machine a rank uses -----------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "device/LocalRank.h"

#include <cerrno>
#include <cstdlib>

using namespace zshard::rt;

int zshard::rt::localDeviceOrdinal(int32_t rank, int deviceCount,
                                   std::string &error) {
  for (const char *name : {"ZSHARD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"}) {
    const char *text = std::getenv(name);
    if (!text || !*text)
      continue;
    errno = 0;
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (*end != '\0' || errno == ERANGE || value < 0 || text[0] == ' ') {
      error =
          std::string(name) + "='" + text + "' is not a non-negative integer";
      return -1;
    }
    if (value >= deviceCount) {
      error = "local rank " + std::to_string(value) + " (" + name +
              ") has no GPU: this machine has " + std::to_string(deviceCount) +
              " CUDA device" + (deviceCount == 1 ? "" : "s");
      return -1;
    }
    return int(value);
  }
  return int(rank % deviceCount);
}
