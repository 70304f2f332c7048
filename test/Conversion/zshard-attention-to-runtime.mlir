// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-attention-to-runtime | FileCheck %s \
// RUN:   --implicit-check-not=zshard.causal_attention

// Tests that zshard.causal_attention and its grad become calls of the
// runtime's tiled kernels on buffers bridged to tensors: the operands through
// read-only to_buffer, each result a fresh allocation charged to activations
// and handed back by to_tensor; the sizes (batch, heads, kv heads, seq, head
// size) and the scale come first, and the call keeps the op's annotations.

// CHECK-DAG: func.func private @zshard_rt_step_attention_fwd(i64, i64, i64, i64, i64, f32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @zshard_rt_step_attention_bwd(i64, i64, i64, i64, i64, f32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: func.func @step
func.func @step(%q: tensor<2x6x13x8xf32>, %k: tensor<2x2x13x8xf32>, %v: tensor<2x2x13x8xf32>, %do: tensor<2x6x13x8xf32>) -> (tensor<2x6x13x8xf32>, tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>) {
  // CHECK-DAG:  %[[B:.*]] = arith.constant 2 : i64
  // CHECK-DAG:  %[[H:.*]] = arith.constant 6 : i64
  // CHECK-DAG:  %[[T:.*]] = arith.constant 13 : i64
  // CHECK-DAG:  %[[D:.*]] = arith.constant 8 : i64
  // CHECK-DAG:  %[[S:.*]] = arith.constant 0.353553385 : f32
  // CHECK:      bufferization.to_buffer %arg0 read_only : tensor<2x6x13x8xf32> to memref<2x6x13x8xf32>
  // CHECK:      bufferization.to_buffer %arg1 read_only : tensor<2x2x13x8xf32> to memref<2x2x13x8xf32>
  // CHECK:      bufferization.to_buffer %arg2 read_only
  // CHECK:      %[[O:.*]] = memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x6x13x8xf32>
  // CHECK:      %[[L:.*]] = memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x6x13xf32>
  // CHECK:      call @zshard_rt_step_attention_fwd(%[[B]], %[[H]], %{{.*}}, %[[T]], %[[D]], %[[S]], {{.*}}) {zshard.phase = #zshard.phase<forward>}
  // CHECK:      %[[OT:.*]] = bufferization.to_tensor %[[O]] restrict writable
  // CHECK:      %[[LT:.*]] = bufferization.to_tensor %[[L]] restrict writable
  %o, %lse = zshard.causal_attention %q, %k, %v scale(0.35355339) {zshard.phase = #zshard.phase<forward>} : tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
  // CHECK:      bufferization.to_buffer %[[OT]] read_only
  // CHECK:      bufferization.to_buffer %[[LT]] read_only : tensor<2x6x13xf32> to memref<2x6x13xf32>
  // CHECK:      memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x6x13x8xf32>
  // CHECK:      memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x2x13x8xf32>
  // CHECK:      memref.alloc() {zshard.category = #zshard.category<activations>} : memref<2x2x13x8xf32>
  // CHECK:      call @zshard_rt_step_attention_bwd(
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %k, %v, %o, %lse, %do scale(0.35355339) : tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x6x13x8xf32>, tensor<2x6x13xf32>, tensor<2x6x13x8xf32>
  return %o, %dq, %dk, %dv : tensor<2x6x13x8xf32>, tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
}
