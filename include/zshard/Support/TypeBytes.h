//===- TypeBytes.h - Bytes of elements, tensors and memrefs -----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The one definition of how many bytes a value of a type occupies, shared by
// the memory plan, the cost model, selective checkpointing, the collectives'
// byte counts and the runtime-call lowering: each element takes its bit width
// rounded up to whole bytes (an i1 takes one byte, as the lowered code stores
// it), `index` and element types without a bit width take 8.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_SUPPORT_TYPEBYTES_H
#define ZSHARD_SUPPORT_TYPEBYTES_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>

namespace mlir::zshard {

/// Bytes one element of `type` occupies in memory.
int64_t getElementBytes(Type type);

/// Bytes of a statically shaped tensor or memref; std::nullopt for a dynamic
/// shape or a type that is not shaped.
std::optional<int64_t> getStaticBytes(Type type);

} // namespace mlir::zshard

#endif // ZSHARD_SUPPORT_TYPEBYTES_H
