// RUN: zshard-opt %s --zshard-lower-strided-copies | FileCheck %s

// Tests that a copy between contiguous memrefs stays memref.copy (a memcpy)
// and a copy touching a strided view becomes linalg.copy (loops), since
// compiled steps link no memrefCopy.
// CHECK-LABEL: func.func @copies
func.func @copies(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<2x4xf32>) {
  // CHECK:      memref.copy %{{.*}}, %{{.*}} : memref<4x4xf32> to memref<4x4xf32>
  // CHECK:      %[[V:.*]] = memref.subview
  // CHECK-NEXT: linalg.copy ins(%[[V]] : memref<2x4xf32, strided<[4, 1], offset: 4>>) outs(%{{.*}} : memref<2x4xf32>)
  // CHECK-NOT:  memref.copy
  memref.copy %a, %b : memref<4x4xf32> to memref<4x4xf32>
  %v = memref.subview %a[1, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 4>>
  memref.copy %v, %c : memref<2x4xf32, strided<[4, 1], offset: 4>> to memref<2x4xf32>
  return
}
