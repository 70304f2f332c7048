//===- LowerStridedCopies.cpp - --zshard-lower-strided-copies -------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Conversion/Passes.h"

#include "mlir/IR/Builders.h"

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

struct LowerStridedCopiesPass
    : public mlir::zshard::impl::LowerStridedCopiesBase<
          LowerStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!isContiguous(copy.getSource().getType()) ||
          !isContiguous(copy.getTarget().getType()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
