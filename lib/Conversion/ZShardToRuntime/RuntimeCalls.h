//===- RuntimeCalls.h - building calls of the runtime's C ABI ---*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Helpers shared by the passes that turn ops into calls of the runtime's
/// zshard_rt_step_* entries: declaring an entry, and passing a memref as the
/// address of its first element.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_LIB_CONVERSION_RUNTIMECALLS_H
#define ZSHARD_LIB_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace zshard {

/// The runtime entry that returns the rank's coordinate on a grid axis, and
/// the attribute its calls carry when the axis has a static size.
inline constexpr StringLiteral kGridCoordFn = "zshard_rt_step_grid_coord";
inline constexpr StringLiteral kAxisSizeAttr = "zshard.axis_size";

/// The private declaration of runtime entry `name` in `module`, created with
/// `type` when missing.
func::FuncOp getOrDeclareRuntimeFunction(ModuleOp module, StringRef name,
                                         FunctionType type);

/// The address of the first element of `memref` (aligned base pointer plus
/// its offset), as an !llvm.ptr.
Value getElementPointer(OpBuilder &builder, Location loc, Value memref);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_LIB_CONVERSION_RUNTIMECALLS_H
