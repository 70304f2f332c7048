//===- FileRendezvous.cpp - Handing rank 0's id to the others -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/nccl/FileRendezvous.h"

#include "core/Failure.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <unistd.h>

using namespace zshard::rt;

namespace {

constexpr const char *magic = "zshard-nccl-id";
constexpr int formatVersion = 1;

std::string where(const std::string &path) {
  return "nccl rendezvous: ZSHARD_NCCL_ID_FILE=" + path + ": ";
}

std::string header(int worldSize, size_t idBytes) {
  return std::string(magic) + " " + std::to_string(formatVersion) + " " +
         std::to_string(worldSize) + " " + std::to_string(idBytes) + "\n";
}

} // namespace

void zshard::rt::publishRendezvousId(const std::string &path, int worldSize,
                                     const std::vector<char> &id) {
  std::string temporary =
      path + ".tmp." + std::to_string(static_cast<long>(getpid()));
  std::string text = header(worldSize, id.size());
  text.append(id.begin(), id.end());
  FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    fail(where(path) + "cannot write " + temporary + ": " +
         std::strerror(errno));
  bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  written &= std::fflush(file) == 0 && fsync(fileno(file)) == 0;
  int error = errno;
  written &= std::fclose(file) == 0;
  if (!written) {
    std::remove(temporary.c_str());
    fail(where(path) + "cannot write " + temporary + ": " +
         std::strerror(error));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = errno;
    std::remove(temporary.c_str());
    fail(where(path) + "cannot rename " + temporary +
         " into place: " + std::strerror(error));
  }
}

std::vector<char> zshard::rt::awaitRendezvousId(const std::string &path,
                                                int worldSize, size_t idBytes,
                                                double timeoutSeconds) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeoutSeconds));
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::string text((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      size_t newline = text.find('\n');
      std::istringstream fields(text.substr(0, newline));
      std::string word;
      int version = 0, size = 0;
      size_t bytes = 0;
      fields >> word >> version >> size >> bytes;
      if (newline == std::string::npos || word != magic ||
          version != formatVersion || !fields)
        fail(where(path) + "not a zshard NCCL id file (remove it: rank 0 "
                           "writes a new one)");
      if (size != worldSize)
        fail(where(path) + "written for a world of " + std::to_string(size) +
             " ranks, this run has " + std::to_string(worldSize) +
             " (a file of another run? rank 0 replaces it when it starts)");
      if (bytes != idBytes || text.size() - newline - 1 != idBytes)
        fail(where(path) + "holds " +
             std::to_string(text.size() - newline - 1) +
             " id bytes, expected " + std::to_string(idBytes));
      return std::vector<char>(text.begin() + long(newline) + 1, text.end());
    }
    if (Clock::now() >= deadline) {
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", timeoutSeconds);
      fail(where(path) + "waited " + seconds +
           " s for rank 0 to write the id (is rank 0 running, with the same "
           "ZSHARD_NCCL_ID_FILE and ZSHARD_WORLD_SIZE?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void zshard::rt::removeRendezvousFile(const std::string &path) {
  std::remove(path.c_str());
}
