//===- ByteSize.h - Byte sizes as users write them --------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The one reader of a byte size given on a command line or in a pass
// option (`80GiB`, `512MiB`, `1.5GB`, `1024`): zshard-compile's
// --memory-per-rank, --prefetch bucket-bytes and --remat budget, and
// zshard-remat's budget.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_SUPPORT_BYTESIZE_H
#define ZSHARD_SUPPORT_BYTESIZE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::zshard {

/// Parses a positive byte size such as `80GiB`, `512MiB`, `1.5GB` or
/// `1024` (suffixes TiB, GiB, MiB, KiB, TB, GB, MB, KB, B); std::nullopt
/// for anything else, zero, or more than 9e18 bytes.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

} // namespace mlir::zshard

#endif // ZSHARD_SUPPORT_BYTESIZE_H
