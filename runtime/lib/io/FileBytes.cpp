//===- FileBytes.cpp - Whole-file reads and all-or-nothing writes ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "io/FileBytes.h"

#include "core/Failure.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <sys/stat.h>
#include <unistd.h>

using namespace zshard::rt;

namespace {
std::string errnoText() { return std::strerror(errno); }
} // namespace

std::vector<unsigned char> zshard::rt::readFileBytes(const std::string &path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(
      std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file)
    fail(path + ": cannot open: " + errnoText());
  struct stat info;
  if (fstat(fileno(file.get()), &info) != 0)
    fail(path + ": cannot stat: " + errnoText());
  if (S_ISDIR(info.st_mode))
    fail(path + ": is a directory, not a file");
  std::vector<unsigned char> bytes(static_cast<size_t>(info.st_size));
  size_t got =
      bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), file.get());
  if (got != bytes.size())
    fail(path + ": cannot read: " +
         (std::ferror(file.get()) ? errnoText()
                                  : std::string("file shrank while reading")));
  return bytes;
}

AtomicFileWriter::AtomicFileWriter(std::string target)
    : path(std::move(target)),
      tempPath(path + ".tmp." + std::to_string(getpid())) {
  file = std::fopen(tempPath.c_str(), "wb");
  if (!file)
    fail(path + ": cannot write: " + errnoText());
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file) {
    std::fclose(file);
    std::remove(tempPath.c_str());
  }
}

void AtomicFileWriter::failWithErrno(const char *what) {
  std::string message = path + ": " + what + ": " + errnoText();
  if (file)
    std::fclose(file);
  file = nullptr;
  std::remove(tempPath.c_str());
  fail(message);
}

void AtomicFileWriter::write(const void *data, size_t size) {
  if (size && std::fwrite(data, 1, size, file) != size)
    failWithErrno("cannot write");
}

void AtomicFileWriter::commit() {
  if (std::fflush(file) != 0)
    failWithErrno("cannot write");
  if (std::fclose(file) != 0) {
    file = nullptr;
    failWithErrno("cannot write");
  }
  file = nullptr;
  // Fault injection for the crash-during-save test: die after writing, before
  // the rename that publishes the file; the previous file must survive.
  if (const char *crash = std::getenv("ZSHARD_TEST_CRASH_BEFORE_RENAME");
      crash && *crash)
    std::_Exit(71);
  if (std::rename(tempPath.c_str(), path.c_str()) != 0)
    failWithErrno("cannot rename the written file into place");
}
