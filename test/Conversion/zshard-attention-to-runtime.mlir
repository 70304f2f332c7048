// RUN: zshard-opt %s --mlir-print-debuginfo=false --split-input-file --zshard-attention-to-runtime --cse | FileCheck %s \
// RUN:   --implicit-check-not=zshard.causal_attention

// Tests that zshard.causal_attention and its grad become calls of the
// runtime's strided tiled kernels on buffers bridged to tensors: the operands
// through read-only to_buffer, each result a fresh allocation charged to
// activations and handed back by to_tensor; the sizes (batch, heads, kv
// heads, seq, head size) and the scale come first, then each operand's
// address and its batch, head and seq strides (lse: its address alone), and
// the call keeps the op's annotations. Operands that are not views of
// another tensor are read contiguous.

// CHECK-DAG: func.func private @zshard_rt_step_attention_strided_fwd(i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr)
// CHECK-DAG: func.func private @zshard_rt_step_attention_strided_bwd(i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64)
// CHECK-LABEL: func.func @step
func.func @step(%q: tensor<2x6x13x8xf32>, %k: tensor<2x2x13x8xf32>, %v: tensor<2x2x13x8xf32>, %do: tensor<2x6x13x8xf32>) -> (tensor<2x6x13x8xf32>, tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>) {
  // CHECK-DAG:  %[[B:.*]] = arith.constant 2 : i64
  // CHECK-DAG:  %[[H:.*]] = arith.constant 6 : i64
  // CHECK-DAG:  %[[T:.*]] = arith.constant 13 : i64
  // CHECK-DAG:  %[[D:.*]] = arith.constant 8 : i64
  // CHECK-DAG:  %[[S:.*]] = arith.constant 0.353553385 : f32
  // CHECK-DAG:  %[[QB:.*]] = arith.constant 624 : i64
  // CHECK-DAG:  %[[QH:.*]] = arith.constant 104 : i64
  // CHECK-DAG:  %[[KB:.*]] = arith.constant 208 : i64
  // CHECK-DAG:  bufferization.to_buffer %arg0 read_only : tensor<2x6x13x8xf32> to memref<2x6x13x8xf32>
  // CHECK-DAG:  bufferization.to_buffer %arg1 read_only : tensor<2x2x13x8xf32> to memref<2x2x13x8xf32>
  // CHECK-DAG:  bufferization.to_buffer %arg2 read_only
  // CHECK-DAG:  %[[O:.*]] = memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x6x13x8xf32>
  // CHECK-DAG:  %[[L:.*]] = memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x6x13xf32>
  // CHECK:      call @zshard_rt_step_attention_strided_fwd(%[[B]], %[[H]], %{{.*}}, %[[T]], %[[D]], %[[S]], %{{.*}}, %[[QB]], %[[QH]], %[[D]], %{{.*}}, %[[KB]], %[[QH]], %[[D]], %{{.*}}, %[[KB]], %[[QH]], %[[D]], %{{.*}}, %[[QB]], %[[QH]], %[[D]], %{{[^,]*}}) {zshard.phase = #zshard.phase<forward>}
  // CHECK:      %[[OT:.*]] = bufferization.to_tensor %[[O]] restrict writable
  // CHECK:      %[[LT:.*]] = bufferization.to_tensor %[[L]] restrict writable
  %o, %lse = zshard.causal_attention %q, %k, %v scale(0.35355339) {zshard.phase = #zshard.phase<forward>} : tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
  // CHECK:      bufferization.to_buffer %[[OT]] read_only
  // CHECK:      bufferization.to_buffer %[[LT]] read_only : tensor<2x6x13xf32> to memref<2x6x13xf32>
  // CHECK:      memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x6x13x8xf32>
  // CHECK:      memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x2x13x8xf32>
  // CHECK:      memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x2x13x8xf32>
  // CHECK:      call @zshard_rt_step_attention_strided_bwd(
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %k, %v, %o, %lse, %do scale(0.35355339) : tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x6x13x8xf32>, tensor<2x6x13xf32>, tensor<2x6x13x8xf32>
  return %o, %dq, %dk, %dv : tensor<2x6x13x8xf32>, tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
}

// -----

// Tests that the heads' split and merge are read through: q, k and v are
// the column blocks of one projection [batch, seq, 3 * heads * head] (the
// exporter's slice copies: at offset 0 a generic extracting at its loop
// indices, else a copy through a shifted map; the reshape and the
// transposes to [batch, heads, seq, head], as a generic and as
// linalg.transpose), so the call reads the projection in place (k and v at
// element offsets 16 and 32) with its strides and the copies are gone; out
// is written in the [batch, seq, heads, head] layout its merge reads, which
// then reads the buffer itself, and the grad reads out, dout and the
// projection the same way and writes dq straight into the layout of its
// merge.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#k3 = affine_map<(d0, d1, d2) -> (d0, d1, d2 + 16)>
#v3 = affine_map<(d0, d1, d2) -> (d0, d1, d2 + 32)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#swap = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>

// CHECK-LABEL: func.func @heads
// CHECK-NOT:   linalg.generic
// CHECK-NOT:   linalg.transpose
// CHECK:       %[[D:.*]] = arith.constant 8 : i64
// CHECK:       bufferization.to_buffer %arg0 read_only : tensor<2x13x48xf32> to memref<2x13x48xf32>
// CHECK:       %[[QP:.*]] = llvm.inttoptr
// CHECK-DAG:   %[[PB:.*]] = arith.constant 624 : i64
// CHECK-DAG:   %[[PT:.*]] = arith.constant 48 : i64
// CHECK-DAG:   %[[OT:.*]] = arith.constant 16 : i64
// CHECK-DAG:   %[[KP:.*]] = llvm.getelementptr %[[QP]][%[[OT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-DAG:   %[[V32:.*]] = arith.constant 32 : i64
// CHECK-DAG:   %[[VP:.*]] = llvm.getelementptr %[[QP]][%[[V32]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-DAG:   %[[O:.*]] = memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x13x2x8xf32>
// CHECK-DAG:   %[[OB:.*]] = arith.constant 208 : i64
// CHECK:       call @zshard_rt_step_attention_strided_fwd({{.*}}, %[[QP]], %[[PB]], %[[D]], %[[PT]], %[[KP]], %[[PB]], %[[D]], %[[PT]], %[[VP]], %[[PB]], %[[D]], %[[PT]], %{{.*}}, %[[OB]], %[[D]], %[[OT]], %{{[^,]*}})
// CHECK:       %[[OM:.*]] = bufferization.to_tensor %[[O]] restrict writable : memref<2x13x2x8xf32> to tensor<2x13x2x8xf32>
// CHECK:       bufferization.to_buffer %[[OM]] read_only : tensor<2x13x2x8xf32>
// CHECK:       bufferization.to_buffer %arg1 read_only : tensor<2x13x2x8xf32>
// CHECK:       %[[DQ:.*]] = memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x13x2x8xf32>
// CHECK:       memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x2x13x8xf32>
// CHECK:       %[[OH:.*]] = arith.constant 104 : i64
// CHECK:       memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x2x13x8xf32>
// CHECK:       call @zshard_rt_step_attention_strided_bwd({{.*}}, %[[QP]], %[[PB]], %[[D]], %[[PT]], %[[KP]], %[[PB]], %[[D]], %[[PT]], %[[VP]], %[[PB]], %[[D]], %[[PT]], %{{.*}}, %[[OB]], %[[D]], %[[OT]], %{{[^,]*}}, %{{.*}}, %[[OB]], %[[D]], %[[OT]], %{{.*}}, %[[OB]], %[[D]], %[[OT]], %{{.*}}, %[[OB]], %[[OH]], %[[D]], %{{.*}}, %[[OB]], %[[OH]], %[[D]])
// CHECK:       %[[DQM:.*]] = bufferization.to_tensor %[[DQ]] restrict writable : memref<2x13x2x8xf32> to tensor<2x13x2x8xf32>
// CHECK:       return %[[OM]], %[[DQM]], %{{.*}}, %{{.*}} : tensor<2x13x2x8xf32>, tensor<2x13x2x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
func.func @heads(%qkv: tensor<2x13x48xf32>, %domerged: tensor<2x13x2x8xf32>) -> (tensor<2x13x2x8xf32>, tensor<2x13x2x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>) {
  %e3 = tensor.empty() : tensor<2x13x16xf32>
  %qs = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e3 : tensor<2x13x16xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %l = linalg.index 2 : index
    %x = tensor.extract %qkv[%i, %j, %l] : tensor<2x13x48xf32>
    linalg.yield %x : f32
  } -> tensor<2x13x16xf32>
  %ks = linalg.generic {indexing_maps = [#k3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qkv : tensor<2x13x48xf32>) outs(%e3 : tensor<2x13x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x13x16xf32>
  %vs = linalg.generic {indexing_maps = [#v3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qkv : tensor<2x13x48xf32>) outs(%e3 : tensor<2x13x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x13x16xf32>
  %q4 = tensor.expand_shape %qs [[0], [1], [2, 3]] output_shape [2, 13, 2, 8] : tensor<2x13x16xf32> into tensor<2x13x2x8xf32>
  %k4 = tensor.expand_shape %ks [[0], [1], [2, 3]] output_shape [2, 13, 2, 8] : tensor<2x13x16xf32> into tensor<2x13x2x8xf32>
  %v4 = tensor.expand_shape %vs [[0], [1], [2, 3]] output_shape [2, 13, 2, 8] : tensor<2x13x16xf32> into tensor<2x13x2x8xf32>
  %e4 = tensor.empty() : tensor<2x2x13x8xf32>
  %q = linalg.generic {indexing_maps = [#swap, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q4 : tensor<2x13x2x8xf32>) outs(%e4 : tensor<2x2x13x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x13x8xf32>
  %k = linalg.transpose ins(%k4 : tensor<2x13x2x8xf32>) outs(%e4 : tensor<2x2x13x8xf32>) permutation = [0, 2, 1, 3]
  %v = linalg.transpose ins(%v4 : tensor<2x13x2x8xf32>) outs(%e4 : tensor<2x2x13x8xf32>) permutation = [0, 2, 1, 3]
  %o, %lse = zshard.causal_attention %q, %k, %v scale(0.35355339) : tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
  %m4 = tensor.empty() : tensor<2x13x2x8xf32>
  %omerged = linalg.generic {indexing_maps = [#swap, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : tensor<2x2x13x8xf32>) outs(%m4 : tensor<2x13x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x13x2x8xf32>
  %do = linalg.transpose ins(%domerged : tensor<2x13x2x8xf32>) outs(%e4 : tensor<2x2x13x8xf32>) permutation = [0, 2, 1, 3]
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %k, %v, %o, %lse, %do scale(0.35355339) : tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13xf32>, tensor<2x2x13x8xf32>
  %dqmerged = linalg.transpose ins(%dq : tensor<2x2x13x8xf32>) outs(%m4 : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  return %omerged, %dqmerged, %dk, %dv : tensor<2x13x2x8xf32>, tensor<2x13x2x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
}

// -----

// Tests that the grad's dq, dk and dv, each merged into [batch, seq, heads,
// head], reshaped to [batch, seq, heads * head] and inserted side by side
// into one fresh tensor (the gradient of a fused q, k, v projection), are
// written straight into that tensor's buffer: one allocation, dq, dk and dv
// at element offsets 0, 16 and 32 with the buffer's strides (batch 624,
// head 8, seq 48), and no insert, reshape or merge left. The tensor.empty
// may have other uses (CSE shares it).

#swap2 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id42 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @side_by_side
// CHECK:       %[[D:.*]] = arith.constant 8 : i64
// CHECK:       %[[G:.*]] = memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x13x48xf32>
// CHECK:       %[[B:.*]] = llvm.inttoptr
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG:   %[[PB:.*]] = arith.constant 624 : i64
// CHECK-DAG:   %[[PT:.*]] = arith.constant 48 : i64
// CHECK-DAG:   %[[C16:.*]] = arith.constant 16 : i64
// CHECK-DAG:   %[[C32:.*]] = arith.constant 32 : i64
// CHECK-DAG:   %[[DQ:.*]] = llvm.getelementptr %[[B]][%[[C0]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-DAG:   %[[DK:.*]] = llvm.getelementptr %[[B]][%[[C16]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-DAG:   %[[DV:.*]] = llvm.getelementptr %[[B]][%[[C32]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:       call @zshard_rt_step_attention_strided_bwd({{.*}}, %[[DQ]], %[[PB]], %[[D]], %[[PT]], %[[DK]], %[[PB]], %[[D]], %[[PT]], %[[DV]], %[[PB]], %[[D]], %[[PT]])
// CHECK-NOT:   memref.alloc
// CHECK:       %[[T:.*]] = bufferization.to_tensor %[[G]] restrict writable : memref<2x13x48xf32> to tensor<2x13x48xf32>
// CHECK-NOT:   tensor.insert_slice
// CHECK-NOT:   tensor.collapse_shape
// CHECK-NOT:   linalg.transpose
// CHECK:       return %[[T]], %{{.*}} : tensor<2x13x48xf32>, tensor<2x13x48xf32>
func.func @side_by_side(%q: tensor<2x2x13x8xf32>, %k: tensor<2x2x13x8xf32>, %v: tensor<2x2x13x8xf32>, %o: tensor<2x2x13x8xf32>, %lse: tensor<2x2x13xf32>, %do: tensor<2x2x13x8xf32>) -> (tensor<2x13x48xf32>, tensor<2x13x48xf32>) {
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %k, %v, %o, %lse, %do scale(0.35355339) : tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13xf32>, tensor<2x2x13x8xf32>
  %m = tensor.empty() : tensor<2x13x2x8xf32>
  %qm = linalg.transpose ins(%dq : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  %km = linalg.generic {indexing_maps = [#swap2, #id42], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dk : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x13x2x8xf32>
  %vm = linalg.transpose ins(%dv : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  %qr = tensor.collapse_shape %qm [[0], [1], [2, 3]] : tensor<2x13x2x8xf32> into tensor<2x13x16xf32>
  %kf = tensor.collapse_shape %km [[0, 1, 2, 3]] : tensor<2x13x2x8xf32> into tensor<416xf32>
  %kr = tensor.expand_shape %kf [[0, 1, 2]] output_shape [2, 13, 16] : tensor<416xf32> into tensor<2x13x16xf32>
  %vr = tensor.collapse_shape %vm [[0], [1], [2, 3]] : tensor<2x13x2x8xf32> into tensor<2x13x16xf32>
  %e = tensor.empty() : tensor<2x13x48xf32>
  %s0 = tensor.insert_slice %qr into %e[0, 0, 0] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  %s1 = tensor.insert_slice %kr into %s0[0, 0, 16] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  %s2 = tensor.insert_slice %vr into %s1[0, 0, 32] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  return %s2, %e : tensor<2x13x48xf32>, tensor<2x13x48xf32>
}

// -----

// Tests the side-by-side results the grad does not write in place: dk read
// by another op as well (CHECK-LABEL @shared_result), and two results
// inserted at overlapping columns (@overlapping): each result gets its own
// buffer and the inserts stay.

// CHECK-LABEL: func.func @shared_result
// CHECK-COUNT-3: memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x13x2x8xf32>
// CHECK-COUNT-3: tensor.insert_slice
// CHECK-LABEL: func.func @overlapping
// CHECK-COUNT-3: memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x13x2x8xf32>
// CHECK-COUNT-3: tensor.insert_slice
func.func @shared_result(%q: tensor<2x2x13x8xf32>, %o: tensor<2x2x13x8xf32>, %lse: tensor<2x2x13xf32>) -> (tensor<2x13x48xf32>, tensor<2x2x13x8xf32>) {
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %q, %q, %o, %lse, %o scale(0.35355339) : tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13xf32>, tensor<2x2x13x8xf32>
  %m = tensor.empty() : tensor<2x13x2x8xf32>
  %qm = linalg.transpose ins(%dq : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  %km = linalg.transpose ins(%dk : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  %vm = linalg.transpose ins(%dv : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  %qr = tensor.collapse_shape %qm [[0], [1], [2, 3]] : tensor<2x13x2x8xf32> into tensor<2x13x16xf32>
  %kr = tensor.collapse_shape %km [[0], [1], [2, 3]] : tensor<2x13x2x8xf32> into tensor<2x13x16xf32>
  %vr = tensor.collapse_shape %vm [[0], [1], [2, 3]] : tensor<2x13x2x8xf32> into tensor<2x13x16xf32>
  %e = tensor.empty() : tensor<2x13x48xf32>
  %s0 = tensor.insert_slice %qr into %e[0, 0, 0] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  %s1 = tensor.insert_slice %kr into %s0[0, 0, 16] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  %s2 = tensor.insert_slice %vr into %s1[0, 0, 32] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  return %s2, %dk : tensor<2x13x48xf32>, tensor<2x2x13x8xf32>
}
func.func @overlapping(%q: tensor<2x2x13x8xf32>, %o: tensor<2x2x13x8xf32>, %lse: tensor<2x2x13xf32>) -> tensor<2x13x48xf32> {
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %q, %q, %o, %lse, %o scale(0.35355339) : tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13xf32>, tensor<2x2x13x8xf32>
  %m = tensor.empty() : tensor<2x13x2x8xf32>
  %qm = linalg.transpose ins(%dq : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  %km = linalg.transpose ins(%dk : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  %vm = linalg.transpose ins(%dv : tensor<2x2x13x8xf32>) outs(%m : tensor<2x13x2x8xf32>) permutation = [0, 2, 1, 3]
  %qr = tensor.collapse_shape %qm [[0], [1], [2, 3]] : tensor<2x13x2x8xf32> into tensor<2x13x16xf32>
  %kr = tensor.collapse_shape %km [[0], [1], [2, 3]] : tensor<2x13x2x8xf32> into tensor<2x13x16xf32>
  %vr = tensor.collapse_shape %vm [[0], [1], [2, 3]] : tensor<2x13x2x8xf32> into tensor<2x13x16xf32>
  %e = tensor.empty() : tensor<2x13x48xf32>
  %s0 = tensor.insert_slice %qr into %e[0, 0, 0] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  %s1 = tensor.insert_slice %kr into %s0[0, 0, 8] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  %s2 = tensor.insert_slice %vr into %s1[0, 0, 32] [2, 13, 16] [1, 1, 1] : tensor<2x13x16xf32> into tensor<2x13x48xf32>
  return %s2 : tensor<2x13x48xf32>
}

// -----

// Tests that a view the strides cannot express is read from where it can:
// q is a transpose collapsed across dimensions that are not adjacent in
// memory, then expanded again, so the call reads the collapsed tensor as
// [1, 2, 4, 8] contiguous (the expand looked through) and the transpose and
// the collapse stay.

// CHECK-LABEL: func.func @unexpressible
// CHECK:       %[[T:.*]] = linalg.transpose
// CHECK:       %[[C:.*]] = tensor.collapse_shape %[[T]]
// CHECK:       %[[D:.*]] = arith.constant 8 : i64
// CHECK:       bufferization.to_buffer %[[C]] read_only : tensor<64xf32> to memref<64xf32>
// CHECK-DAG:   %[[B:.*]] = arith.constant 64 : i64
// CHECK-DAG:   %[[H:.*]] = arith.constant 32 : i64
// CHECK:       call @zshard_rt_step_attention_strided_fwd({{.*}}, %{{.*}}, %[[B]], %[[H]], %[[D]], %{{.*}}, %[[B]], %[[H]], %[[D]], %{{.*}}, %[[B]], %[[H]], %[[D]], %{{.*}}, %[[B]], %[[H]], %[[D]], %{{[^,]*}})
func.func @unexpressible(%x: tensor<1x8x4x2xf32>, %k: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %e = tensor.empty() : tensor<1x2x4x8xf32>
  %t = linalg.transpose ins(%x : tensor<1x8x4x2xf32>) outs(%e : tensor<1x2x4x8xf32>) permutation = [0, 3, 2, 1]
  %c = tensor.collapse_shape %t [[0, 1, 2, 3]] : tensor<1x2x4x8xf32> into tensor<64xf32>
  %q = tensor.expand_shape %c [[0, 1, 2, 3]] output_shape [1, 2, 4, 8] : tensor<64xf32> into tensor<1x2x4x8xf32>
  %o, %lse = zshard.causal_attention %q, %k, %k scale(0.35355339) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
