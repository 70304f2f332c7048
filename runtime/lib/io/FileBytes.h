//===- FileBytes.h - Whole-file reads and all-or-nothing writes -*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// File access with errors that name the file: "<path>: cannot open: No such
/// file or directory". Writes go to a temporary file beside the target that
/// is renamed over it once complete, so a checkpoint is never half written.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_IO_FILEBYTES_H
#define ZSHARD_RUNTIME_LIB_IO_FILEBYTES_H

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace zshard::rt {

/// The whole contents of \p path. Throws a Failure naming it on any error.
std::vector<unsigned char> readFileBytes(const std::string &path);

/// A file written in pieces that replaces \p path only on commit().
class AtomicFileWriter {
public:
  /// Opens a temporary file beside \p path. Throws a Failure on error.
  explicit AtomicFileWriter(std::string path);
  /// Removes the temporary file unless committed.
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;

  /// Appends \p size bytes. Throws a Failure on error.
  void write(const void *data, size_t size);
  /// Flushes, closes and renames over the target. Throws a Failure on error.
  void commit();

private:
  [[noreturn]] void failWithErrno(const char *what);

  std::string path;
  std::string tempPath;
  std::FILE *file = nullptr;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_IO_FILEBYTES_H
