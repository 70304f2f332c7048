// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-matmul-to-runtime=fuse-bias=true --split-input-file | FileCheck %s
// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-matmul-to-runtime --split-input-file | FileCheck %s --check-prefix=OFF

// Tests that with fuse-bias a product into a fresh, zero-filled output
// followed by a bias add of that output becomes one
// zshard_rt_step_sgemm_bias call writing the bias add's output (the bias's
// address last), at the bias add: the add, the fill and the product's own
// allocation (with the category call zshard-tag-allocations put before it)
// are gone. Without the option the product and the add stay two.

#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @zshard_rt_step_set_alloc_category(i32)

// CHECK-LABEL: func.func @fused
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xf32>, %[[B:.*]]: memref<2x4xf32>, %[[BIAS:.*]]: memref<2xf32>, %[[OUT:.*]]: memref<8x2xf32>)
// CHECK:         call @zshard_rt_step_set_alloc_category
// CHECK-NOT:     call @zshard_rt_step_set_alloc_category
// CHECK:         %[[D:.*]] = memref.alloc() : memref<8x2xf32>
// CHECK-NOT:     linalg.
// CHECK:         memref.extract_aligned_pointer_as_index %[[D]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[BIAS]]
// CHECK:         %[[PBIAS:.*]] = llvm.inttoptr
// CHECK:         call @zshard_rt_step_sgemm_bias(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[PBIAS]])
// CHECK-NEXT:    memref.copy %[[D]], %[[OUT]]
// CHECK-NOT:     memref.alloc
// OFF-LABEL:   func.func @fused
// OFF:           call @zshard_rt_step_sgemm(
// OFF:           linalg.generic
func.func @fused(%a: memref<8x4xf32>, %b: memref<2x4xf32>, %bias: memref<2xf32>, %out: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %cat = arith.constant 3 : i32
  call @zshard_rt_step_set_alloc_category(%cat) : (i32) -> ()
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<8x4xf32>, memref<2x4xf32>) outs(%c : memref<8x2xf32>)
  %cat2 = arith.constant 1 : i32
  call @zshard_rt_step_set_alloc_category(%cat2) : (i32) -> ()
  %d = memref.alloc() : memref<8x2xf32>
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  memref.copy %d, %out : memref<8x2xf32> to memref<8x2xf32>
  return
}

// -----

// Tests that a product whose output something else reads too keeps its
// output and its own call.

#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @read_twice
// CHECK:         call @zshard_rt_step_sgemm(
// CHECK:         linalg.generic
// CHECK-NOT:     sgemm_bias
func.func @read_twice(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %bias: memref<2xf32>, %d: memref<8x2xf32>, %e: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %e : memref<8x2xf32> to memref<8x2xf32>
  return
}

// -----

// Tests that a vector added along the rows (one value a row, not a
// column bias) is not taken over.

#rows = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @row_vector
// CHECK:         call @zshard_rt_step_sgemm(
// CHECK:         linalg.generic
func.func @row_vector(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %v: memref<8xf32>, %d: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  linalg.generic {indexing_maps = [#rows, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %c : memref<8xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a write between the product and the bias add (here to the
// bias) keeps them apart: the call at the add would see the new bias.

#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @written_between
// CHECK:         call @zshard_rt_step_sgemm(
// CHECK:         linalg.fill
// CHECK:         linalg.generic
func.func @written_between(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %bias: memref<2xf32>, %d: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  linalg.fill ins(%zero : f32) outs(%bias : memref<2xf32>)
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that the bias add's output may not be an operand of the product:
// writing it in the call would change what the product reads.

#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @out_is_input
// CHECK:         call @zshard_rt_step_sgemm(
// CHECK:         linalg.generic
func.func @out_is_input(%a: memref<8x2xf32>, %b: memref<2x2xf32>, %bias: memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x2xf32>, memref<2x2xf32>) outs(%c : memref<8x2xf32>)
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%a : memref<8x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a residual add reading the bias add's fresh output (through a
// reshape to [batch, seq, features]) folds in too: one
// zshard_rt_step_sgemm_bias_add call at the residual add writes its output
// with the bias's address, then the residual's (X) with leading dimension
// 2 and batch stride 0; the bias add, the residual add, the reshape and the
// bias add's output (with its category call) are gone.

#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func private @zshard_rt_step_set_alloc_category(i32)

// CHECK:       func.func private @zshard_rt_step_sgemm_bias_add(i32, i32, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @residual
// CHECK-SAME:    (%[[A:.*]]: memref<8x4xf32>, %[[B:.*]]: memref<2x4xf32>, %[[BIAS:.*]]: memref<2xf32>, %[[X:.*]]: memref<2x4x2xf32>)
// CHECK:         call @zshard_rt_step_set_alloc_category
// CHECK-NOT:     call @zshard_rt_step_set_alloc_category
// CHECK:         %[[R:.*]] = memref.alloc() : memref<2x4x2xf32>
// CHECK-NOT:     linalg.
// CHECK-NOT:     memref.expand_shape
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// CHECK:         memref.extract_aligned_pointer_as_index %[[R]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[BIAS]]
// CHECK:         %[[PBIAS:.*]] = llvm.inttoptr
// CHECK:         memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:         %[[PX:.*]] = llvm.inttoptr
// CHECK:         call @zshard_rt_step_sgemm_bias_add(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C2]], %[[C0]], %[[PBIAS]], %[[PX]], %[[C2]], %[[C0]])
// CHECK-NEXT:    return %[[R]]
// OFF-LABEL:   func.func @residual
// OFF:           call @zshard_rt_step_sgemm(
// OFF-COUNT-2:   linalg.generic
func.func @residual(%a: memref<8x4xf32>, %b: memref<2x4xf32>, %bias: memref<2xf32>, %x: memref<2x4x2xf32>) -> memref<2x4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<8x4xf32>, memref<2x4xf32>) outs(%c : memref<8x2xf32>)
  %cat = arith.constant 3 : i32
  call @zshard_rt_step_set_alloc_category(%cat) : (i32) -> ()
  %d = memref.alloc() : memref<8x2xf32>
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  %d3 = memref.expand_shape %d [[0, 1], [2]] output_shape [2, 4, 2] : memref<8x2xf32> into memref<2x4x2xf32>
  call @zshard_rt_step_set_alloc_category(%cat) : (i32) -> ()
  %r = memref.alloc() : memref<2x4x2xf32>
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %d3 : memref<2x4x2xf32>, memref<2x4x2xf32>) outs(%r : memref<2x4x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  return %r : memref<2x4x2xf32>
}

// -----

// Tests the residual adds that stay apart from the product (which still
// takes its bias add): the bias add's output read again later
// (@output_read_again), a write to X between the two adds
// (@x_written_between), a residual add writing into X itself
// (@into_x: the product would read X while writing it), and the bias add's
// output added to itself (@added_to_itself: no other X to read).

#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @output_read_again
// CHECK:         call @zshard_rt_step_sgemm_bias(
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @x_written_between
// CHECK:         call @zshard_rt_step_sgemm_bias(
// CHECK:         linalg.fill
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @into_x
// CHECK:         call @zshard_rt_step_sgemm_bias(
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @added_to_itself
// CHECK:         call @zshard_rt_step_sgemm_bias(
// CHECK:         linalg.generic
func.func @output_read_again(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %bias: memref<2xf32>, %x: memref<8x2xf32>, %r: memref<8x2xf32>, %e: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  %d = memref.alloc() : memref<8x2xf32>
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %x : memref<8x2xf32>, memref<8x2xf32>) outs(%r : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.copy %d, %e : memref<8x2xf32> to memref<8x2xf32>
  return
}
func.func @x_written_between(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %bias: memref<2xf32>, %x: memref<8x2xf32>, %r: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  %d = memref.alloc() : memref<8x2xf32>
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%x : memref<8x2xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %x : memref<8x2xf32>, memref<8x2xf32>) outs(%r : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  return
}
func.func @into_x(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %bias: memref<2xf32>, %x: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  %d = memref.alloc() : memref<8x2xf32>
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %x : memref<8x2xf32>, memref<8x2xf32>) outs(%x : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  return
}
func.func @added_to_itself(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %bias: memref<2xf32>, %r: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x2xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  %d = memref.alloc() : memref<8x2xf32>
  linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<2xf32>, memref<8x2xf32>) outs(%d : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %d : memref<8x2xf32>, memref<8x2xf32>) outs(%r : memref<8x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  return
}
