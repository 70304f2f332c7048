//===- Shape.h - Tensor shapes ----------------------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CORE_SHAPE_H
#define ZSHARD_RUNTIME_LIB_CORE_SHAPE_H

#include <cstdint>
#include <string>
#include <vector>

namespace zshard::rt {

/// Writes the number of elements of \p shape (1 for a scalar) to \p count;
/// false on a negative dimension or overflow.
inline bool shapeElements(const std::vector<int64_t> &shape, uint64_t &count) {
  count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(count, uint64_t(dim), &count))
      return false;
  return true;
}

/// "[2, 16]", for messages.
inline std::string shapeString(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CORE_SHAPE_H
