// RUN: zshard-opt %s --split-input-file --zshard-dealloc-after-last-use | FileCheck %s

// Tests that each dealloc moves to just after the last op touching its
// buffer: through a view, through an op nested in a region, and through the
// aligned pointer given to an asynchronous collective, whose handle's wait
// is the last use; a buffer nothing uses is freed right after its alloc.
// CHECK-LABEL: func.func @step
// CHECK:      %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK:      %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK:      %[[C:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK:      linalg.copy ins(%[[V:.*]] : memref<4xf32, strided<[1]>>)
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK:      %[[H:.*]] = call @zshard_rt_step_all_gather_start
// CHECK:      linalg.fill
// CHECK-NEXT: scf.for
// CHECK:      memref.store
// CHECK:      }
// CHECK-NEXT: call @zshard_rt_step_wait(%[[H]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func private @zshard_rt_step_all_gather_start(i64, !llvm.ptr, !llvm.ptr, i64, i32) -> i64
func.func private @zshard_rt_step_wait(i64)
func.func @step(%in: memref<8xf32>, %out: memref<4xf32>, %other: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  linalg.copy ins(%in : memref<8xf32>) outs(%a : memref<8xf32>)
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.copy ins(%v : memref<4xf32, strided<[1]>>) outs(%out : memref<4xf32>)
  %p = memref.extract_aligned_pointer_as_index %b : memref<8xf32> -> index
  %i = arith.index_cast %p : index to i64
  %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
  %mask = arith.constant 1 : i64
  %n = arith.constant 8 : i64
  %dt = arith.constant 0 : i32
  %h = call @zshard_rt_step_all_gather_start(%mask, %ptr, %ptr, %n, %dt) : (i64, !llvm.ptr, !llvm.ptr, i64, i32) -> i64
  linalg.fill ins(%f : f32) outs(%other : memref<8xf32>)
  scf.for %k = %c0 to %c8 step %c1 {
    memref.store %f, %b[%k] : memref<8xf32>
  }
  call @zshard_rt_step_wait(%h) : (i64) -> ()
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  memref.dealloc %c : memref<8xf32>
  return
}

// -----

// Tests that a dealloc of a buffer that is not an allocation of its block
// (a function argument) stays where it is, while the allocation's moves.
// CHECK-LABEL: func.func @argument
// CHECK:      %[[A:.*]] = memref.alloc()
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[A]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill {{.*}} outs(%arg0
// CHECK-NEXT: memref.dealloc %arg0
func.func @argument(%m: memref<8xf32>) {
  %f = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%f : f32) outs(%a : memref<8xf32>)
  linalg.fill ins(%f : f32) outs(%m : memref<8xf32>)
  memref.dealloc %m : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// RUN: zshard-opt %s --split-input-file --zshard-dealloc-after-last-use=insert-deallocs=1 | FileCheck %s --check-prefix=INSERT
// With insert-deallocs, a straight-line step with no deallocations gets one
// per allocation, right after its last use (a view's use counts, an
// unused buffer is freed at once).
// INSERT-LABEL: func.func @fresh
// INSERT:      %[[A:.*]] = memref.alloc() : memref<8xf32>
// INSERT-NEXT: %[[B:.*]] = memref.alloc() : memref<8xf32>
// INSERT-NEXT: memref.dealloc %[[B]]
// INSERT-NEXT: linalg.fill {{.*}} outs(%[[A]]
// INSERT-NEXT: %[[V:.*]] = memref.subview %[[A]]
// INSERT-NEXT: linalg.copy ins(%[[V]] {{.*}}) outs(%arg0
// INSERT-NEXT: memref.dealloc %[[A]]
// INSERT-NEXT: return
func.func @fresh(%out: memref<4xf32>) {
  %f = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  linalg.fill ins(%f : f32) outs(%a : memref<8xf32>)
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.copy ins(%v : memref<4xf32, strided<[1]>>) outs(%out : memref<4xf32>)
  return
}

// -----

// An allocation inside a loop is not straight-line: the upstream
// deallocation pipeline places its deallocation (inside the loop), and the
// top-level one is then moved after its last use.
// INSERT-LABEL: func.func @loop
// INSERT:      %[[T:.*]] = memref.alloc() : memref<8xf32>
// INSERT:      linalg.fill {{.*}} outs(%[[T]]
// INSERT-NEXT: memref.dealloc %[[T]]
// INSERT:      scf.for
// INSERT:        %[[I:.*]] = memref.alloc() : memref<2xf32>
// INSERT:        memref.dealloc %[[I]]
func.func @loop(%out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<8xf32>
  linalg.fill ins(%f : f32) outs(%t : memref<8xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %in = memref.alloc() : memref<2xf32>
    linalg.fill ins(%f : f32) outs(%in : memref<2xf32>)
    linalg.copy ins(%in : memref<2xf32>) outs(%out : memref<2xf32>)
  }
  return
}
