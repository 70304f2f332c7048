// RUN: zshard-opt %s --zshard-gpu-tile-parallel-loops --split-input-file | FileCheck %s
// RUN: zshard-opt %s --zshard-gpu-tile-parallel-loops=block-size=128 --split-input-file | FileCheck %s --check-prefix=B128
// RUN: not zshard-opt %s --zshard-gpu-tile-parallel-loops=block-size=2048 --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// (No canonicalizer here: it would merge the two loops back and fold the
// one-iteration ones.)
// BAD: block-size must be within 1..1024, got 2048

// Tests that a 2-d loop nest is collapsed into one dimension (4 x 300
// iterations, the last dimension varying fastest) and tiled into blocks of
// 256 threads with a bounds check instead of min/max bounds.
// CHECK-LABEL: func.func @two_d
// CHECK:       %[[ROWS:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
// CHECK:       %[[N:.*]] = arith.muli %[[ROWS]], %[[C300:c300.*]] : index
// CHECK:       %[[TILE:.*]] = arith.muli %{{.*}}, %c256 : index
// CHECK:       scf.parallel (%[[BLOCK:.*]]) = (%{{.*}}) to (%[[N]]) step (%[[TILE]]) {
// CHECK-NEXT:    scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[TILE]]) step (%{{.*}}) {
// CHECK-NEXT:      %[[IV:.*]] = arith.addi %[[THREAD]], %[[BLOCK]]
// CHECK:           arith.cmpi ult, %{{.*}}, %[[N]]
// CHECK:           scf.if
// CHECK-DAG:         %[[J:.*]] = arith.remsi %[[IV]], %[[C300]]
// CHECK-DAG:         %[[I:.*]] = arith.divsi %[[IV]], %[[C300]]
// CHECK:             memref.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]]
// CHECK-NOT:   affine.min
// B128-LABEL:  func.func @two_d
// B128:        %[[C128:.*]] = arith.constant 128 : index
// B128:        %[[TILE:.*]] = arith.muli %{{.*}}, %[[C128]] : index
// B128:        scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[TILE]]) {
// B128-NEXT:     scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILE]]) step
func.func @two_d(%a: memref<4x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c300 = arith.constant 300 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c300) step (%c1, %c1) {
    memref.store %f, %a[%i, %j] : memref<4x300xf32>
    scf.reduce
  }
  return
}

// -----

// Tests that a loop with fewer iterations than a block (counting all its
// dimensions: 2 x 3) gets one block of exactly that many threads, and a
// one-iteration loop (a scalar op) a one-thread block.
// CHECK-LABEL: func.func @small
// CHECK:       %[[C6:.*]] = arith.constant 6 : index
// CHECK:       %[[TILE:.*]] = arith.muli %{{.*}}, %[[C6]] : index
// CHECK:       scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[TILE]]) {
// CHECK-NEXT:    scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILE]]) step
// CHECK:       %[[C1:.*]] = arith.constant 1 : index
// CHECK:       %[[ONE:.*]] = arith.muli %{{.*}}, %[[C1]] : index
// CHECK:       scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[ONE]]) {
// CHECK-NEXT:    scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[ONE]]) step
// CHECK-NOT:   256
func.func @small(%s: memref<f32>, %m: memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    memref.store %f, %m[%i, %j] : memref<2x3xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %f, %s[] : memref<f32>
    scf.reduce
  }
  return
}

// -----

// Tests that a dynamic trip count (a rank's part of a shard) gets full
// blocks, and that a parallel loop nested in another is left to the
// outermost one.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    %[[N:[a-z0-9]+]]: index
// CHECK:       %[[C256:.*]] = arith.constant 256 : index
// CHECK:       %[[TILE:.*]] = arith.muli %{{.*}}, %[[C256]] : index
// CHECK:       scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]]) step (%[[TILE]]) {
// CHECK-NEXT:    scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILE]]) step
// CHECK:           scf.parallel
// CHECK-NOT:   scf.parallel
func.func @dynamic(%a: memref<?x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      memref.store %f, %a[%i, %j] : memref<?x8xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
