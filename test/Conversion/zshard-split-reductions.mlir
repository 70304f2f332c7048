// RUN: zshard-opt %s --mlir-print-debuginfo=false --split-input-file --zshard-split-reductions="min-ops=2 chunk=256" | FileCheck %s
// RUN: zshard-opt %s --split-input-file --zshard-split-reductions | FileCheck %s --check-prefix=DEFAULT
// RUN: not zshard-opt %s --split-input-file --zshard-split-reductions="chunk=0" 2>&1 | FileCheck %s --check-prefix=CHUNK

// Tests that a row reduction whose summand takes min-ops body ops becomes a
// loop computing a chunk of summands into a stack buffer and a loop adding
// them, in order, to the accumulator loaded once per output element.

// CHECK-LABEL: func.func @logsumexp
// CHECK-SAME:  (%[[X:[^:]*]]: memref<4x1000xf32>, %[[M:[^:]*]]: memref<4xf32>, %[[SUM:[^:]*]]: memref<4xf32>)
// CHECK:       %[[BUF:[^ ]*]] = memref.alloca() : memref<256xf32>
// CHECK-DAG:   %[[C0:[^ ]*]] = arith.constant 0 : index
// CHECK-DAG:   %[[C1:[^ ]*]] = arith.constant 1 : index
// CHECK-DAG:   %[[C256:[^ ]*]] = arith.constant 256 : index
// CHECK-DAG:   %[[C1000:[^ ]*]] = arith.constant 1000 : index
// CHECK-DAG:   %[[C4:[^ ]*]] = arith.constant 4 : index
// CHECK:       scf.for %[[I:[^ ]*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK:         %[[OI:[^ ]*]] = affine.apply affine_map<(d0, d1) -> (d0)>(%[[I]], %[[C0]])
// CHECK:         %[[INIT:[^ ]*]] = memref.load %[[SUM]][%[[OI]]]
// CHECK:         %[[R:[^ ]*]] = scf.for %[[JJ:[^ ]*]] = %[[C0]] to %[[C1000]] step %[[C256]] iter_args(%[[A:[^ ]*]] = %[[INIT]]) -> (f32) {
// CHECK:           %[[LEFT:[^ ]*]] = arith.subi %[[C1000]], %[[JJ]]
// CHECK:           %[[N:[^ ]*]] = arith.minsi %[[LEFT]], %[[C256]]
// CHECK:           scf.for %[[J:[^ ]*]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK:             %[[K:[^ ]*]] = arith.addi %[[JJ]], %[[J]]
// CHECK:             %[[XV:[^ ]*]] = memref.load %[[X]]
// CHECK:             %[[MV:[^ ]*]] = memref.load %[[M]]
// CHECK:             %[[D:[^ ]*]] = arith.subf %[[XV]], %[[MV]]
// CHECK:             %[[E:[^ ]*]] = math.exp %[[D]]
// CHECK:             memref.store %[[E]], %[[BUF]][%[[J]]]
// CHECK:           }
// CHECK:           %[[S:[^ ]*]] = scf.for %[[J2:[^ ]*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[B:[^ ]*]] = %[[A]]) -> (f32) {
// CHECK:             %[[T:[^ ]*]] = memref.load %[[BUF]][%[[J2]]]
// CHECK:             %[[B2:[^ ]*]] = arith.addf %[[B]], %[[T]] : f32
// CHECK:             scf.yield %[[B2]]
// CHECK:           }
// CHECK:           scf.yield %[[S]]
// CHECK:         }
// CHECK:         memref.store %[[R]], %[[SUM]][%[[OI]]]
// CHECK-NOT:   linalg.generic
// Below the default min-ops (8), the same reduction stays.
// DEFAULT-LABEL: func.func @logsumexp
// DEFAULT:       linalg.generic
// CHUNK: error: zshard-split-reductions: chunk must be positive, got 0
func.func @logsumexp(%x: memref<4x1000xf32>, %m: memref<4xf32>, %sum: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<4x1000xf32>, memref<4xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%in: f32, %max: f32, %acc: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that the loop indices reach linalg.index and the input maps in the
// split loops, two parallel dimensions deep, and that a scalar input is used
// as it is.
// CHECK-LABEL: func.func @indexed
// CHECK-SAME:  (%[[X:[^:]*]]: memref<2x3x8xf32>, %[[W:[^:]*]]: f32, %[[OUT:[^:]*]]: memref<3x2xf32>)
// CHECK:       scf.for %[[I:[^ ]*]] =
// CHECK:         scf.for %[[J:[^ ]*]] =
// CHECK:           affine.apply affine_map<(d0, d1, d2) -> (d1)>(%[[I]], %[[J]], %{{.*}})
// CHECK:           affine.apply affine_map<(d0, d1, d2) -> (d0)>(%[[I]], %[[J]], %{{.*}})
// CHECK:           memref.load %[[OUT]]
// CHECK:           scf.for %[[KK:[^ ]*]] =
// CHECK:             scf.for %[[K0:[^ ]*]] =
// CHECK:               %[[K:[^ ]*]] = arith.addi %[[KK]], %[[K0]]
// CHECK:               memref.load %[[X]]
// CHECK:               arith.index_cast %[[K]] : index to i64
// CHECK:               arith.mulf %{{.*}}, %[[W]]
// CHECK-NOT:   linalg.index
func.func @indexed(%x: memref<2x3x8xf32>, %w: f32, %out: memref<3x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d1, d0)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x8xf32>, f32) outs(%out : memref<3x2xf32>) {
  ^bb0(%in: f32, %scale: f32, %acc: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i64
    %kf = arith.sitofp %ki : i64 to f32
    %p = arith.mulf %in, %kf : f32
    %q = arith.mulf %p, %scale : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that reductions the pass does not split stay linalg.generic: a
// cheap summand (one op), a reduction over an outer dimension, a maximum,
// and a summand that reads the accumulator.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:   scf.for
func.func @kept(%x: memref<4x8xf32>, %m: memref<4xf32>, %n: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%n : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    %e = math.exp %in : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = math.exp %in : f32
    %e = math.exp %d : f32
    %s = arith.maximumf %acc, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  return
}
