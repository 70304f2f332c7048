// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-collectives-to-runtime | FileCheck %s \
// RUN:   --implicit-check-not=zshard.all_ --implicit-check-not=zshard.reduce_ \
// RUN:   --implicit-check-not=zshard.wait --implicit-check-not=zshard.release \
// RUN:   --implicit-check-not=zshard.unit --implicit-check-not=shard.grid

// Tests that every collective becomes its runtime call on buffers bridged to
// tensors: the input through a read-only to_buffer, the result a fresh
// allocation handed back by to_tensor; that the mask, count, dtype and
// reduction codes are right; that an async start becomes a _start call whose
// handle the wait call consumes before the result is read; and that
// releases, units and the grid are gone afterwards. Received buffers say what
// they hold: a gathered unit is communication, a reduced unit gradient a
// gradient. Before each call, the collective is named for the runtime's
// traces by its unit's index among the module's units (-1 without a unit).
shard.grid @world(shape = ?x?)
zshard.unit @u on @world[1] full_shard padded(8) param(bf16) reduce(f32) ["w" : 8 at 0]

// CHECK-DAG: func.func private @zshard_rt_step_all_gather_start(i64, !llvm.ptr, !llvm.ptr, i64, i32) -> i64
// CHECK-DAG: func.func private @zshard_rt_step_wait(i64)
// CHECK-DAG: func.func private @zshard_rt_step_set_collective_unit(i32)
// CHECK-DAG: func.func private @zshard_rt_step_reduce_scatter(i64, !llvm.ptr, !llvm.ptr, i64, i32, i32)
// CHECK-DAG: func.func private @zshard_rt_step_all_reduce(i64, !llvm.ptr, !llvm.ptr, i64, i32, i32)
// CHECK-LABEL: func.func @step
// CHECK-SAME:    (%[[S:.*]]: tensor<2xbf16>, %[[G:.*]]: tensor<8xf32>)
func.func @step(%s: tensor<2xbf16>, %g: tensor<8xf32>) -> (tensor<8xbf16>, tensor<2xf32>, tensor<8xf32>) {
  // CHECK:      %[[SRC:.*]] = bufferization.to_buffer %[[S]] read_only : tensor<2xbf16> to memref<2xbf16>
  // CHECK-NEXT: %[[DST:.*]] = memref.alloc() {zshard.category = #zshard.category<communication>} : memref<8xbf16>
  // CHECK-NEXT: %[[MASK2:.*]] = arith.constant 2 : i64
  // CHECK:      %[[C2:.*]] = arith.constant 2 : i64
  // CHECK-NEXT: %[[BF16:.*]] = arith.constant 1 : i32
  // CHECK-NEXT: %[[U0:.*]] = arith.constant 0 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_collective_unit(%[[U0]]) : (i32) -> ()
  // CHECK-NEXT: %[[H:.*]] = call @zshard_rt_step_all_gather_start(%[[MASK2]], %{{.*}}, %{{.*}}, %[[C2]], %[[BF16]])
  %t = zshard.all_gather_start %s on @world[1] unit @u : tensor<2xbf16> -> !zshard.token<tensor<8xbf16>>
  // CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8xbf16>
  %e = tensor.empty() : tensor<8xbf16>
  // CHECK-NEXT: call @zshard_rt_step_wait(%[[H]]) : (i64) -> ()
  // CHECK-NEXT: %[[FULL:.*]] = bufferization.to_tensor %[[DST]] restrict writable : memref<8xbf16> to tensor<8xbf16>
  %full = zshard.wait %t : !zshard.token<tensor<8xbf16>>
  // CHECK-NEXT: %[[Y:.*]] = arith.addf %[[FULL]], %[[FULL]]
  %y = arith.addf %full, %full : tensor<8xbf16>
  zshard.release %full : tensor<8xbf16>
  // CHECK:      memref.alloc() {zshard.category = #zshard.category<gradients>} : memref<2xf32>
  // CHECK:      %[[F32:.*]] = arith.constant 0 : i32
  // CHECK-NEXT: %[[AVG:.*]] = arith.constant 1 : i32
  // CHECK-NEXT: arith.constant 0 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_collective_unit
  // CHECK-NEXT: call @zshard_rt_step_reduce_scatter(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[F32]], %[[AVG]])
  %r = zshard.reduce_scatter avg %g on @world[1] unit @u : tensor<8xf32> -> tensor<2xf32>
  // CHECK:      memref.alloc() {zshard.category = #zshard.category<other>} : memref<8xf32>
  // CHECK:      %[[MASK3:.*]] = arith.constant 3 : i64
  // CHECK:      %[[C8:.*]] = arith.constant 8 : i64
  // CHECK:      %[[MAX:.*]] = arith.constant 2 : i32
  // CHECK-NEXT: %[[NONE:.*]] = arith.constant -1 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_collective_unit(%[[NONE]]) : (i32) -> ()
  // CHECK-NEXT: call @zshard_rt_step_all_reduce(%[[MASK3]], %{{.*}}, %{{.*}}, %[[C8]], %{{.*}}, %[[MAX]])
  %a = zshard.all_reduce max %g on @world[0, 1] : tensor<8xf32>
  return %y, %r, %a : tensor<8xbf16>, tensor<2xf32>, tensor<8xf32>
}
