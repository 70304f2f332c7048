//===- zshard-rt-info.cpp - Report what the runtime has -------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Prints one line of JSON: the runtime version, the BLAS in use, whether CUDA
// was built and how many devices there are (or why there are none), the NCCL
// version, and with --mpi the MPI rank and size of this process. Under mpirun
// every rank prints its own line.
//
//   zshard-rt-info [--mpi]
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

/// Returns \p text as a JSON string literal.
std::string quote(const char *text) {
  std::string out = "\"";
  for (const char *p = text; *p; ++p) {
    unsigned char ch = static_cast<unsigned char>(*p);
    switch (ch) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (ch < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\u%04x", ch);
        out += escaped;
      } else {
        out += static_cast<char>(ch);
      }
    }
  }
  return out + "\"";
}

const char *boolean(bool value) { return value ? "true" : "false"; }

std::string cudaJson(uint32_t features) {
  std::string out = "{\"built\":";
  out += boolean(features & ZSHARD_RT_FEATURE_CUDA);
  int count = 0;
  if (zshard_rt_cuda_device_count(&count) == ZSHARD_RT_OK)
    return out + ",\"device_count\":" + std::to_string(count) + "}";
  return out + ",\"device_count\":0,\"reason\":" +
         quote(zshard_rt_last_error_message()) + "}";
}

std::string ncclJson(uint32_t features) {
  std::string out = "{\"built\":";
  out += boolean(features & ZSHARD_RT_FEATURE_NCCL);
  int code = 0;
  if (zshard_rt_nccl_version(&code) != ZSHARD_RT_OK)
    return out + ",\"reason\":" + quote(zshard_rt_last_error_message()) + "}";
  std::string version = std::to_string(code / 10000) + "." +
                        std::to_string(code / 100 % 100) + "." +
                        std::to_string(code % 100);
  return out + ",\"version\":" + quote(version.c_str()) + "}";
}

int usage(const char *argv0, int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: %s [--mpi]\n"
               "Prints the zshard runtime's build and devices as one JSON "
               "line.\n"
               "  --mpi  initialize MPI and add this process's rank and size "
               "(run under mpirun)\n",
               argv0);
  return status;
}

} // namespace

int main(int argc, char **argv) {
  bool useMpi = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mpi") == 0)
      useMpi = true;
    else if (std::strcmp(argv[i], "--help") == 0 ||
             std::strcmp(argv[i], "-h") == 0)
      return usage(argv[0], 0);
    else
      return usage(argv[0], 2);
  }

  uint32_t features = zshard_rt_build_features();
  std::string mpi = "{\"built\":";
  mpi += boolean(features & ZSHARD_RT_FEATURE_MPI);
  if (useMpi) {
    int rank = 0, size = 0;
    if (zshard_rt_mpi_init(&argc, &argv) != ZSHARD_RT_OK ||
        zshard_rt_mpi_world(&rank, &size) != ZSHARD_RT_OK) {
      std::fprintf(stderr, "zshard-rt-info: %s\n",
                   zshard_rt_last_error_message());
      return 1;
    }
    mpi += ",\"rank\":" + std::to_string(rank) +
           ",\"size\":" + std::to_string(size);
  }
  mpi += "}";

  std::string line = std::string("{\"runtime\":{\"version\":") +
                     quote(zshard_rt_version_string()) +
                     "},\"blas\":" + quote(zshard_rt_cpu_blas_info()) +
                     ",\"cuda\":" + cudaJson(features) +
                     ",\"nccl\":" + ncclJson(features) + ",\"mpi\":" + mpi +
                     "}\n";
  // One write per line, so lines of different ranks do not interleave.
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);

  if (useMpi && zshard_rt_mpi_finalize() != ZSHARD_RT_OK) {
    std::fprintf(stderr, "zshard-rt-info: %s\n",
                 zshard_rt_last_error_message());
    return 1;
  }
  return 0;
}
