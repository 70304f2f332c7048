//===- ViewRoot.h - The buffer a memref view reads --------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The one definition of which buffer a memref value views, shared by the
// memory plan (which allocation a dealloc frees), the in-place update of
// optimizer state and the matmul lowering (whether an input views the
// output's allocation): the source at the end of its chain of views.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_SUPPORT_VIEWROOT_H
#define ZSHARD_SUPPORT_VIEWROOT_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::zshard {

/// The buffer `value` views: the source at the end of its chain of
/// view-like ops (subview, expand_shape, ...), or `value` itself.
inline Value getViewRoot(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

} // namespace mlir::zshard

#endif // ZSHARD_SUPPORT_VIEWROOT_H
