//===- LowerStridedCopies.cpp - --zshard-lower-strided-copies -------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir {
namespace zshard {
#define GEN_PASS_DEF_LOWERSTRIDEDCOPIES
#include "zshard/Conversion/Passes.h.inc"
} // namespace zshard
} // namespace mlir

using namespace mlir;

namespace {

/// True when the LLVM lowering turns a copy of `type` into a memcpy.
bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.getLayout().isIdentity();
}

/// True when `a` and `b` name the same memory: one value, or two equal
/// subviews (same operands and static offsets, sizes and strides) of it.
bool isSameView(Value a, Value b) {
  if (a == b)
    return true;
  auto viewA = a.getDefiningOp<memref::SubViewOp>();
  auto viewB = b.getDefiningOp<memref::SubViewOp>();
  return viewA && viewB &&
         OperationEquivalence::isEquivalentTo(
             viewA, viewB, OperationEquivalence::exactValueMatch, nullptr,
             OperationEquivalence::IgnoreLocations);
}

struct LowerStridedCopiesPass
    : public mlir::zshard::impl::LowerStridedCopiesBase<
          LowerStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies, selfCopies;
    getOperation().walk([&](memref::CopyOp copy) {
      // What the bufferization of an in-place tensor.parallel_insert_slice
      // leaves: a copy of a view onto itself.
      if (isSameView(copy.getSource(), copy.getTarget()))
        selfCopies.push_back(copy);
      else if (!isContiguous(copy.getSource().getType()) ||
               !isContiguous(copy.getTarget().getType()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : selfCopies)
      copy.erase();
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
