// RUN: zshard-opt %s --split-input-file --zshard-interchange-scatters | FileCheck %s

// Tests that an embedding backward's scatter-add, a forall over the columns
// each walking the tokens (batch, then sequence), becomes the innermost
// loop under the token loops, and that the token's row (a load of its id,
// and the arithmetic on it) moves out of the column loop: the loads of
// dout and of acc then run along a row.
// CHECK-LABEL: func.func @embedding_backward
// CHECK-NOT:   scf.forall
// CHECK:       scf.for %[[B:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:    scf.for %[[T:.*]] = %c0 to %c3 step %c1 {
// CHECK:           %[[ID:.*]] = memref.load %[[IDS:.*]][%[[B]], %[[T]]] : memref<2x3xi64>
// CHECK-NEXT:      %[[ROW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[COL:.*]] = memref.subview %[[ACC:.*]][0, %[[J]]] [5, 1] [1, 1]
// CHECK-NEXT:        %[[V:.*]] = memref.load %{{.*}}[%[[B]], %[[T]], %[[J]]]
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[COL]][%[[ROW]]]
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]]
// CHECK-NEXT:        memref.store %[[NEW]], %[[COL]][%[[ROW]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  } {zshard.phase = #zshard.phase<backward>}
// CHECK-NEXT:  return
func.func @embedding_backward(%ids: memref<2x3xi64>, %dout: memref<2x3x4xf32>)
    -> memref<5x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %acc = memref.alloc() : memref<5x4xf32>
  scf.forall (%j) in (4) {
    %col = memref.subview %acc[0, %j] [5, 1] [1, 1] : memref<5x4xf32> to memref<5xf32, strided<[4], offset: ?>>
    scf.for %b = %c0 to %c2 step %c1 {
      scf.for %t = %c0 to %c3 step %c1 {
        %id = memref.load %ids[%b, %t] : memref<2x3xi64>
        %row = arith.index_cast %id : i64 to index
        %v = memref.load %dout[%b, %t, %j] : memref<2x3x4xf32>
        %old = memref.load %col[%row] : memref<5xf32, strided<[4], offset: ?>>
        %new = arith.addf %old, %v : f32
        memref.store %new, %col[%row] : memref<5xf32, strided<[4], offset: ?>>
      }
    }
    %unused = memref.subview %acc[0, %j] [5, 1] [1, 1] : memref<5x4xf32> to memref<5xf32, strided<[4], offset: ?>>
  } {zshard.phase = #zshard.phase<backward>}
  return %acc : memref<5x4xf32>
}

// -----

// Tests that the id load stays in the column loop when the buffer it reads
// is one the body may store to (a step argument, which another argument may
// alias), and that foralls of other shapes are left alone: one with an op
// with memory effects beside the loop, one whose loop carries a value.
// CHECK-LABEL: func.func @kept
// CHECK:       scf.for
// CHECK:         scf.for
// CHECK-NEXT:      memref.subview
// CHECK-NEXT:      memref.load %arg0
// CHECK:       scf.forall
// CHECK:         memref.store
// CHECK:       scf.forall
// CHECK:         iter_args
func.func @kept(%ids: memref<3xi64>, %dout: memref<3x4xf32>, %acc: memref<5x4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%j) in (4) {
    %col = memref.subview %acc[0, %j] [5, 1] [1, 1] : memref<5x4xf32> to memref<5xf32, strided<[4], offset: ?>>
    scf.for %t = %c0 to %c3 step %c1 {
      %id = memref.load %ids[%t] : memref<3xi64>
      %row = arith.index_cast %id : i64 to index
      %v = memref.load %dout[%t, %j] : memref<3x4xf32>
      %old = memref.load %col[%row] : memref<5xf32, strided<[4], offset: ?>>
      %new = arith.addf %old, %v : f32
      memref.store %new, %col[%row] : memref<5xf32, strided<[4], offset: ?>>
    }
  }
  scf.forall (%j) in (4) {
    memref.store %zero, %out[%j] : memref<4xf32>
    scf.for %t = %c0 to %c3 step %c1 {
      %v = memref.load %dout[%t, %j] : memref<3x4xf32>
      memref.store %v, %out[%j] : memref<4xf32>
    }
  }
  scf.forall (%j) in (4) {
    %s = scf.for %t = %c0 to %c3 step %c1 iter_args(%a = %zero) -> f32 {
      %v = memref.load %dout[%t, %j] : memref<3x4xf32>
      %n = arith.addf %a, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %out[%j] : memref<4xf32>
  }
  return
}

// -----

// Tests that with a column count known only at run time (which may be 0)
// the loops are interchanged but the id load stays in the column loop: out
// of it, it would run for a token even when no column does.
// CHECK-LABEL: func.func @dynamic
// CHECK:       scf.for %[[T:.*]] =
// CHECK:         scf.for %[[J:.*]] =
// CHECK-NEXT:      memref.subview
// CHECK-NEXT:      memref.load %{{.*}}[%[[T]]] : memref<3xi64>
func.func @dynamic(%ids: memref<3xi64>, %dout: memref<3x?xf32>, %n: index) -> memref<5x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %acc = memref.alloc(%n) : memref<5x?xf32>
  scf.forall (%j) in (%n) {
    %col = memref.subview %acc[0, %j] [5, 1] [1, 1] : memref<5x?xf32> to memref<5xf32, strided<[?], offset: ?>>
    scf.for %t = %c0 to %c3 step %c1 {
      %id = memref.load %ids[%t] : memref<3xi64>
      %row = arith.index_cast %id : i64 to index
      %v = memref.load %dout[%t, %j] : memref<3x?xf32>
      %old = memref.load %col[%row] : memref<5xf32, strided<[?], offset: ?>>
      %new = arith.addf %old, %v : f32
      memref.store %new, %col[%row] : memref<5xf32, strided<[?], offset: ?>>
    }
  }
  return %acc : memref<5x?xf32>
}
