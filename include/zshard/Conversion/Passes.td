//===- Passes.td - zshard conversion passes ----------------*- tablegen -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_CONVERSION_PASSES_TD
#define ZSHARD_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MatmulToRuntime : Pass<"zshard-matmul-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Turn f32 matrix products on memrefs into runtime sgemm calls";
  let description = [{
    Runs after bufferization. Every `linalg.matmul` and `linalg.batch_matmul`
    on f32 memrefs with static strides, whose indexing maps are the default or
    transpose an operand, becomes a call of the runtime's
    `zshard_rt_step_sgemm` (BLAS on CPU). linalg accumulates into its
    output, so the call computes `C += op(A) op(B)`. An operand stored
    column-major (unit stride on its first dimension) folds into the
    transpose flag. Products the pass cannot map (other element types,
    dynamic strides, other maps) are left alone and become loops.

    Before:
    ```mlir
    linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>)
                  outs(%c : memref<8x2xf32>)
    ```
    After:
    ```mlir
    func.call @zshard_rt_step_sgemm(%false, %false, %c1, %c8, %c2, %c4,
        %pa, %c4, %c32, %pb, %c2, %c8, %pc, %c2, %c16) : (...) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numConverted", "converted", "Matrix products turned into calls">,
    Statistic<"numKept", "kept", "Matrix products left to become loops">
  ];
}

def LowerStridedCopies : Pass<"zshard-lower-strided-copies", "::mlir::ModuleOp"> {
  let summary = "Turn memref.copy of non-contiguous memrefs into linalg.copy";
  let description = [{
    The LLVM lowering of `memref.copy` calls an external `memrefCopy` for
    memrefs that are not contiguous. Compiled steps link no MLIR runtime
    library, so this pass rewrites those copies as `linalg.copy`, which
    becomes loops; contiguous copies stay `memref.copy` (a memcpy).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // ZSHARD_CONVERSION_PASSES_TD
