//===- Safetensors.h - safetensors files ------------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// safetensors reading and writing, from the format itself (the layout and the
/// checks are those of python/zshard_ref/safetensors_io.py, so the two read
/// each other's files and reject the same broken ones):
///
///   8 bytes   N, the header length, unsigned little-endian
///   N bytes   UTF-8 JSON object: name -> {"dtype", "shape", "data_offsets"}
///             (offsets relative to the data section), and optionally
///             "__metadata__": {string: string}
///   the rest  the data section, each tensor row-major little-endian
///
/// Every problem of a file read is a Failure
/// "<path>: invalid safetensors file: <problem>".
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_IO_SAFETENSORS_H
#define ZSHARD_RUNTIME_LIB_IO_SAFETENSORS_H

#include "core/DType.h"
#include "core/Shape.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zshard::rt {

/// One tensor of a file read: a view into the file's buffer.
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const unsigned char *data = nullptr;
  uint64_t bytes = 0;
  uint64_t elements = 0;
};

/// The largest header accepted (as the reference safetensors library).
constexpr uint64_t maxSafetensorsHeader = 100ull * 1000 * 1000;

/// A whole safetensors file in memory, checked.
class SafetensorsFile {
public:
  /// Reads and checks \p path. Throws a Failure naming the path and the
  /// problem.
  static SafetensorsFile read(const std::string &path);

  /// Checks \p bytes, the contents of a file called \p path (for messages).
  static SafetensorsFile parse(std::vector<unsigned char> bytes,
                               std::string path);

  SafetensorsFile(SafetensorsFile &&) = default;
  SafetensorsFile &operator=(SafetensorsFile &&) = default;
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;

  const std::string &path() const { return filePath; }
  /// The tensors in header order.
  const std::vector<TensorView> &tensors() const { return views; }
  /// The tensor called \p name, or NULL.
  const TensorView *find(std::string_view name) const;
  /// __metadata__ in header order (empty when absent).
  const std::vector<std::pair<std::string, std::string>> &metadata() const {
    return meta;
  }
  /// The metadata value of \p key, or NULL.
  const std::string *findMetadata(std::string_view key) const;

private:
  SafetensorsFile() = default;

  std::string filePath;
  std::vector<unsigned char> buffer;
  std::vector<TensorView> views;
  std::vector<std::pair<std::string, std::string>> meta;
};

/// A tensor to write: \p data holds its elements, dense row-major.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
};

/// Writes \p tensors in the order given, packed, after \p metadata (omitted
/// when empty), with a compact ASCII JSON header space-padded to a multiple of
/// 8 bytes, exactly as zshard_ref writes. The file appears whole or not at
/// all (written beside it, then renamed). Throws a Failure naming \p path.
/// The metadata key under which checkpoints record the checksum of their data.
inline constexpr const char *checksumKey = "zshard.checksum";

/// "fnv1a64:<16 hex digits>" over the tensors' data, in order.
std::string dataChecksum(const std::vector<TensorToWrite> &tensors);
std::string dataChecksum(const std::vector<TensorView> &tensors);

/// Fails naming the file when its recorded checksum (if any) does not match
/// its data: a file cut short or corrupted after it was written.
void verifyChecksum(const SafetensorsFile &file);

void writeSafetensors(
    const std::string &path, const std::vector<TensorToWrite> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_IO_SAFETENSORS_H
