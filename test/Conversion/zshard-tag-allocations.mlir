// RUN: zshard-opt %s --zshard-tag-allocations | FileCheck %s

// Tests that each allocation is preceded by the category call: a buffer
// written in backward and read by the optimizer is a gradient (1), forward
// and other backward buffers are activations (3), an optimizer temporary is
// other (5), a buffer whose users carry no phase is an activation, a marked
// buffer keeps its category, and users of views count.
// CHECK-LABEL: func.func private @zshard_rt_step_set_alloc_category(i32)
// CHECK-LABEL: func.func @step
func.func @step(%p: memref<4xf32>, %out: memref<4xf32>) {
  // CHECK:      %[[A:.*]] = arith.constant 3 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_alloc_category(%[[A]])
  // CHECK-NEXT: memref.alloc() : memref<4xf32>
  %act = memref.alloc() : memref<4xf32>
  linalg.copy {zshard.phase = #zshard.phase<forward>} ins(%p : memref<4xf32>) outs(%act : memref<4xf32>)
  // CHECK:      %[[G:.*]] = arith.constant 1 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_alloc_category(%[[G]])
  // CHECK-NEXT: memref.alloc() : memref<4xf32>
  %grad = memref.alloc() : memref<4xf32>
  linalg.copy {zshard.phase = #zshard.phase<backward>} ins(%act : memref<4xf32>) outs(%grad : memref<4xf32>)
  // CHECK:      %[[O:.*]] = arith.constant 5 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_alloc_category(%[[O]])
  // CHECK-NEXT: memref.alloc() : memref<4xf32>
  %tmp = memref.alloc() : memref<4xf32>
  linalg.copy {zshard.phase = #zshard.phase<optimizer>} ins(%grad : memref<4xf32>) outs(%tmp : memref<4xf32>)
  linalg.copy {zshard.phase = #zshard.phase<optimizer>} ins(%tmp : memref<4xf32>) outs(%out : memref<4xf32>)
  // CHECK:      %[[U:.*]] = arith.constant 3 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_alloc_category(%[[U]])
  // CHECK-NEXT: memref.alloc() : memref<4xf32>
  %unknown = memref.alloc() : memref<4xf32>
  linalg.copy ins(%p : memref<4xf32>) outs(%unknown : memref<4xf32>)
  // CHECK:      %[[C:.*]] = arith.constant 4 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_alloc_category(%[[C]])
  // CHECK-NEXT: memref.alloc() {zshard.category = #zshard.category<communication>}
  %gathered = memref.alloc() {zshard.category = #zshard.category<communication>} : memref<4xf32>
  // A buffer read by the optimizer only through a view is still a gradient.
  // CHECK:      %[[V:.*]] = arith.constant 1 : i32
  // CHECK-NEXT: call @zshard_rt_step_set_alloc_category(%[[V]])
  // CHECK-NEXT: memref.alloc() : memref<8xf32>
  %big = memref.alloc() : memref<8xf32>
  %view = memref.subview %big[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.copy {zshard.phase = #zshard.phase<backward>} ins(%p : memref<4xf32>) outs(%view : memref<4xf32, strided<[1]>>)
  linalg.copy {zshard.phase = #zshard.phase<optimizer>} ins(%view : memref<4xf32, strided<[1]>>) outs(%out : memref<4xf32>)
  return
}
