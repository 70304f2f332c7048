//===- TestFiles.h - Temporary files for tests ------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TEST_UNIT_TESTFILES_H
#define ZSHARD_RUNTIME_TEST_UNIT_TESTFILES_H

#include "core/Failure.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

namespace zshard::rt::test {

/// A fresh directory under /tmp, removed with its contents at the end.
class TempDir {
public:
  TempDir() {
    char pattern[] = "/tmp/zshard-rt-test-XXXXXX";
    const char *made = mkdtemp(pattern);
    path = made ? made : "/tmp";
  }
  ~TempDir() {
    std::string command = "rm -rf '" + path + "'";
    if (std::system(command.c_str()) != 0)
      std::fprintf(stderr, "cannot remove %s\n", path.c_str());
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  /// The path of \p name inside.
  std::string file(const std::string &name) const { return path + "/" + name; }

  std::string path;
};

/// Writes \p bytes to \p path.
inline void writeBytes(const std::string &path, const void *bytes,
                       size_t size) {
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes, 1, size, f) != size || std::fclose(f) != 0)
    std::abort();
}

template <typename T>
void writeVector(const std::string &path, const std::vector<T> &values) {
  writeBytes(path, values.data(), values.size() * sizeof(T));
}

/// The Failure message of \p action, or "(no error)".
inline std::string failureOf(const std::function<void()> &action) {
  try {
    action();
  } catch (const Failure &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace zshard::rt::test

#endif // ZSHARD_RUNTIME_TEST_UNIT_TESTFILES_H
