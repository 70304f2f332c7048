//===- RuntimeCalls.cpp - building calls of the runtime's C ABI -----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "ZShardToRuntime/RuntimeCalls.h"

#include "zshard/Support/TypeBytes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

func::FuncOp zshard::getOrDeclareRuntimeFunction(ModuleOp module,
                                                 StringRef name,
                                                 FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto func = func::FuncOp::create(builder, module.getLoc(), name, type);
  func.setPrivate();
  return func;
}

Value zshard::getElementPointer(OpBuilder &builder, Location loc,
                                Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, memref);
  SmallVector<int64_t> strides;
  int64_t staticOffset;
  (void)type.getStridesAndOffset(strides, staticOffset);
  Value offset;
  if (ShapedType::isDynamic(staticOffset))
    offset = memref::ExtractStridedMetadataOp::create(builder, loc, memref)
                 .getOffset();
  else
    offset = arith::ConstantIndexOp::create(builder, loc, staticOffset);
  int64_t elementBytes = zshard::getElementBytes(type.getElementType());
  Value size = arith::ConstantIndexOp::create(builder, loc, elementBytes);
  Value bytes = arith::MulIOp::create(builder, loc, offset, size);
  Value address = arith::AddIOp::create(builder, loc, aligned, bytes);
  Value asInt =
      arith::IndexCastOp::create(builder, loc, builder.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      builder, loc, LLVM::LLVMPointerType::get(builder.getContext()), asInt);
}
