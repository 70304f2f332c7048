// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-matmul-to-runtime --split-input-file | FileCheck %s

// Tests that a plain f32 matmul becomes one sgemm call: no transposes,
// batch 1, M N K from the shapes, leading dimensions from the strides.
// CHECK-LABEL: func.func @plain
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xf32>, %[[B:.*]]: memref<4x2xf32>, %[[C:.*]]: memref<8x2xf32>)
func.func @plain(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %c: memref<8x2xf32>) {
  // CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[ACC:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
  // CHECK-DAG: %[[M:.*]] = arith.constant 8 : i64
  // CHECK-DAG: %[[N:.*]] = arith.constant 2 : i64
  // CHECK-DAG: %[[K:.*]] = arith.constant 4 : i64
  // CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i64
  // CHECK-DAG: memref.extract_aligned_pointer_as_index %[[A]]
  // CHECK-DAG: %[[PA:.*]] = llvm.inttoptr
  // CHECK:     call @zshard_rt_step_sgemm(%[[F]], %[[F]], %[[ONE]], %[[M]], %[[N]], %[[K]], %[[PA]], %[[K]], %[[Z]], %{{.*}}, %[[N]], %[[Z]], %{{.*}}, %[[N]], %[[Z]], %[[ACC]])
  // CHECK-NOT: linalg.matmul
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  return
}
// CHECK: func.func private @zshard_rt_step_sgemm(i32, i32, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i32)

// -----

// Tests that indexing maps reading A transposed (A^T B with A stored K x M)
// set transA, with lda the stored row length M.
// CHECK-LABEL: func.func @transposed_a
func.func @transposed_a(%a: memref<4x8xf32>, %b: memref<4x2xf32>, %c: memref<8x2xf32>) {
  // CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[M:.*]] = arith.constant 8 : i64
  // CHECK-DAG: %[[N:.*]] = arith.constant 2 : i64
  // CHECK-DAG: %[[K:.*]] = arith.constant 4 : i64
  // CHECK:     call @zshard_rt_step_sgemm(%[[T]], %[[F]], %{{.*}}, %[[M]], %[[N]], %[[K]], %{{.*}}, %[[M]], %{{.*}}, %{{.*}}, %[[N]],
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : memref<4x8xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  return
}

// -----

// Tests that B read transposed sets transB, and that a column-major operand
// (a transposed view) flips its flag back: here A is a transpose of a
// row-major 4x8 buffer, so BLAS reads that buffer transposed.
// CHECK-LABEL: func.func @column_major_view
func.func @column_major_view(%buf: memref<4x8xf32>, %b: memref<2x4xf32>, %c: memref<8x2xf32>) {
  // CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[M:.*]] = arith.constant 8 : i64
  // CHECK-DAG: %[[K:.*]] = arith.constant 4 : i64
  // CHECK:     call @zshard_rt_step_sgemm(%[[T]], %[[T]], %{{.*}}, %[[M]], %{{.*}}, %[[K]], %{{.*}}, %[[M]],
  %a = memref.transpose %buf (i, j) -> (j, i) : memref<4x8xf32> to memref<8x4xf32, strided<[1, 8]>>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : memref<8x4xf32, strided<[1, 8]>>, memref<2x4xf32>) outs(%c : memref<8x2xf32>)
  return
}

// -----

// Tests that batch_matmul passes the batch count and per-matrix strides (32
// for A, and for the output view into a 3x8x4 buffer), and that a static
// offset (a subview) moves the base pointer.
// CHECK-LABEL: func.func @batched
func.func @batched(%a: memref<3x8x4xf32>, %b: memref<3x4x2xf32>, %big: memref<3x8x4xf32>) {
  // CHECK:      %[[SUB:.*]] = memref.subview
  // CHECK-DAG:  %[[B3:.*]] = arith.constant 3 : i64
  // CHECK-DAG:  %[[SA:.*]] = arith.constant 32 : i64
  // CHECK:      %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[SUB]]
  // CHECK-NEXT: %[[OFF:.*]] = arith.constant 2 : index
  // CHECK-NEXT: %[[FOUR:.*]] = arith.constant 4 : index
  // CHECK-NEXT: %[[BYTES:.*]] = arith.muli %[[OFF]], %[[FOUR]] : index
  // CHECK-NEXT: arith.addi %[[BASE]], %[[BYTES]] : index
  // CHECK:     call @zshard_rt_step_sgemm(%{{.*}}, %{{.*}}, %[[B3]], {{.*}}, %[[SA]], {{.*}}, %[[SA]], %{{.*}})
  %c = memref.subview %big[0, 0, 2] [3, 8, 2] [1, 1, 1] : memref<3x8x4xf32> to memref<3x8x2xf32, strided<[32, 4, 1], offset: 2>>
  linalg.batch_matmul ins(%a, %b : memref<3x8x4xf32>, memref<3x4x2xf32>) outs(%c : memref<3x8x2xf32, strided<[32, 4, 1], offset: 2>>)
  return
}

// -----

// Tests that products BLAS sgemm cannot take are kept: f64 elements, and
// tensors (the pass runs after bufferization).
// CHECK-LABEL: func.func @kept
func.func @kept(%a: memref<8x4xf64>, %b: memref<4x2xf64>, %c: memref<8x2xf64>,
                %ta: tensor<8x4xf32>, %tb: tensor<4x2xf32>, %tc: tensor<8x2xf32>) -> tensor<8x2xf32> {
  // CHECK-NOT: call @zshard_rt_step_sgemm
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x4xf64>, memref<4x2xf64>)
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf64>, memref<4x2xf64>) outs(%c : memref<8x2xf64>)
  %r = linalg.matmul ins(%ta, %tb : tensor<8x4xf32>, tensor<4x2xf32>) outs(%tc : tensor<8x2xf32>) -> tensor<8x2xf32>
  return %r : tensor<8x2xf32>
}

// -----

// Tests that a bf16 x bf16 -> f32 matmul calls gemm_bf16 with the arguments
// sgemm would get (leading dimensions in elements of the operand's type),
// here with B read transposed.
// CHECK-LABEL: func.func @bf16
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xbf16>, %[[B:.*]]: memref<2x4xbf16>, %[[C:.*]]: memref<8x2xf32>)
func.func @bf16(%a: memref<8x4xbf16>, %b: memref<2x4xbf16>, %c: memref<8x2xf32>) {
  // CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
  // CHECK-DAG: %[[M:.*]] = arith.constant 8 : i64
  // CHECK-DAG: %[[N:.*]] = arith.constant 2 : i64
  // CHECK-DAG: %[[K:.*]] = arith.constant 4 : i64
  // CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i64
  // CHECK-DAG: memref.extract_aligned_pointer_as_index %[[A]]
  // CHECK-DAG: memref.extract_aligned_pointer_as_index %[[B]]
  // CHECK-DAG: memref.extract_aligned_pointer_as_index %[[C]]
  // CHECK:     call @zshard_rt_step_gemm_bf16(%[[F]], %[[T]], %[[ONE]], %[[M]], %[[N]], %[[K]], %{{.*}}, %[[K]], %[[Z]], %{{.*}}, %[[K]], %[[Z]], %{{.*}}, %[[N]], %[[Z]], %[[T]])
  // CHECK-NOT: linalg.matmul
  // CHECK-NOT: call @zshard_rt_step_sgemm
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : memref<8x4xbf16>, memref<2x4xbf16>) outs(%c : memref<8x2xf32>)
  return
}
// CHECK: func.func private @zshard_rt_step_gemm_bf16(i32, i32, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i32)

// -----

// Tests that a bf16 batch_matmul into f32 calls gemm_bf16 with the batch
// count and per-matrix strides counted in elements.
// CHECK-LABEL: func.func @bf16_batch
func.func @bf16_batch(%a: memref<3x8x4xbf16>, %b: memref<3x4x2xbf16>, %c: memref<3x8x2xf32>) {
  // CHECK-DAG: %[[BATCH:.*]] = arith.constant 3 : i64
  // CHECK-DAG: %[[SA:.*]] = arith.constant 32 : i64
  // CHECK-DAG: %[[SC:.*]] = arith.constant 16 : i64
  // CHECK:     call @zshard_rt_step_gemm_bf16(%{{.*}}, %{{.*}}, %[[BATCH]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SA]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SC]], %{{.*}})
  // CHECK-NOT: linalg.batch_matmul
  linalg.batch_matmul ins(%a, %b : memref<3x8x4xbf16>, memref<3x4x2xbf16>) outs(%c : memref<3x8x2xf32>)
  return
}

// -----

// Tests that products no runtime gemm takes are kept: bf16 inputs with a
// bf16 output, and mixed f32 x bf16 inputs.
// CHECK-LABEL: func.func @bf16_kept
func.func @bf16_kept(%a: memref<8x4xbf16>, %b: memref<4x2xbf16>, %c: memref<8x2xbf16>,
                     %fa: memref<8x4xf32>, %fc: memref<8x2xf32>) {
  // CHECK-NOT: call
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x4xbf16>, memref<4x2xbf16>) outs(%{{.*}} : memref<8x2xbf16>)
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<8x4xf32>, memref<4x2xbf16>) outs(%{{.*}} : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x2xbf16>) outs(%c : memref<8x2xbf16>)
  linalg.matmul ins(%fa, %b : memref<8x4xf32>, memref<4x2xbf16>) outs(%fc : memref<8x2xf32>)
  return
}

// -----

// Tests that the zero-fill of a fresh output folds into the product: the
// fill is gone and the call overwrites C (accumulate 0), with pure ops and
// another allocation between them.
// CHECK-LABEL: func.func @folded_fill
func.func @folded_fill(%a: memref<8x4xf32>, %b: memref<4x2xf32>) -> memref<8x2xf32> {
  // CHECK-NOT:  linalg.fill
  // CHECK:      call @zshard_rt_step_sgemm({{(%[^,]*, )+}}%c0_i32{{(_[0-9]+)?}})
  // CHECK-NOT:  linalg.fill
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  %other = memref.alloc() : memref<4xf32>
  %view = memref.subview %c[0, 0] [8, 1] [1, 1] : memref<8x2xf32> to memref<8xf32, strided<[2]>>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  memref.dealloc %other : memref<4xf32>
  return %c : memref<8x2xf32>
}

// -----

// Tests that a fill the product cannot take over stays and the call
// accumulates: a non-zero fill; a fill of the whole buffer where the product
// writes a part; an op writing memory in between; an output that is no
// allocation of the step (an argument, which callers may alias); and an
// input viewing the output's buffer (the fill changes what it reads).
// CHECK-LABEL: func.func @kept_fills
func.func @kept_fills(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %arg: memref<8x2xf32>, %d: memref<8x2xf32>) {
  // CHECK:      linalg.fill
  // CHECK:      call @zshard_rt_step_sgemm({{(%[^,]*, )+}}%c1_i32{{(_[0-9]+)?}})
  // CHECK:      linalg.fill
  // CHECK:      call @zshard_rt_step_sgemm({{(%[^,]*, )+}}%c1_i32{{(_[0-9]+)?}})
  // CHECK:      linalg.fill
  // CHECK:      memref.copy
  // CHECK:      call @zshard_rt_step_sgemm({{(%[^,]*, )+}}%c1_i32{{(_[0-9]+)?}})
  // CHECK:      linalg.fill
  // CHECK:      call @zshard_rt_step_sgemm({{(%[^,]*, )+}}%c1_i32{{(_[0-9]+)?}})
  // CHECK:      linalg.fill
  // CHECK:      call @zshard_rt_step_sgemm({{(%[^,]*, )+}}%c1_i32{{(_[0-9]+)?}})
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c1 = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%one : f32) outs(%c1 : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c1 : memref<8x2xf32>)
  %big = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%big : memref<8x4xf32>)
  %part = memref.subview %big[0, 0] [8, 2] [1, 1] : memref<8x4xf32> to memref<8x2xf32, strided<[4, 1]>>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%part : memref<8x2xf32, strided<[4, 1]>>)
  %c3 = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c3 : memref<8x2xf32>)
  memref.copy %c3, %d : memref<8x2xf32> to memref<8x2xf32>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c3 : memref<8x2xf32>)
  linalg.fill ins(%zero : f32) outs(%arg : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%arg : memref<8x2xf32>)
  %sq = memref.alloc() : memref<4x4xf32>
  %sqa = memref.subview %sq[0, 0] [4, 2] [1, 1] : memref<4x4xf32> to memref<4x2xf32, strided<[4, 1]>>
  %sqc = memref.subview %sq[0, 2] [4, 2] [1, 1] : memref<4x4xf32> to memref<4x2xf32, strided<[4, 1], offset: 2>>
  %a4 = memref.subview %a[0, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1]>>
  linalg.fill ins(%zero : f32) outs(%sqc : memref<4x2xf32, strided<[4, 1], offset: 2>>)
  linalg.matmul ins(%a4, %sqa : memref<4x4xf32, strided<[4, 1]>>, memref<4x2xf32, strided<[4, 1]>>) outs(%sqc : memref<4x2xf32, strided<[4, 1], offset: 2>>)
  return
}
