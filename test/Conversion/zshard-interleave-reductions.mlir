// RUN: zshard-opt %s --mlir-print-debuginfo=false --split-input-file --zshard-interleave-reductions="lanes=8" | FileCheck %s
// RUN: zshard-opt %s --mlir-print-debuginfo=false --split-input-file --zshard-interleave-reductions="lanes=4" | FileCheck %s --check-prefix=FOUR
// RUN: not zshard-opt %s --split-input-file --zshard-interleave-reductions="lanes=0" 2>&1 | FileCheck %s --check-prefix=LANES

// Tests that a row sum becomes tiles of `lanes` rows whose accumulators go
// into a stack buffer, a reduced loop outside a loop over the lanes, and the
// accumulators back; rows past the last whole tile form one smaller tile.

// CHECK-LABEL: func.func @row_sum
// CHECK-SAME:  (%[[X:[^:]*]]: memref<20x768xf32>, %[[SUM:[^:]*]]: memref<20xf32>)
// CHECK:       %[[BUF:[^ ]*]] = memref.alloca() : memref<8xf32>
// CHECK-DAG:   %[[C0:[^ ]*]] = arith.constant 0 : index
// CHECK-DAG:   %[[C1:[^ ]*]] = arith.constant 1 : index
// CHECK-DAG:   %[[C8:[^ ]*]] = arith.constant 8 : index
// CHECK-DAG:   %[[C16:[^ ]*]] = arith.constant 16 : index
// CHECK-DAG:   %[[C768:[^ ]*]] = arith.constant 768 : index
// CHECK-DAG:   %[[C4:[^ ]*]] = arith.constant 4 : index
// CHECK:       scf.for %[[R:[^ ]*]] = %[[C0]] to %[[C16]] step %[[C8]] {
// CHECK:         scf.for %[[L:[^ ]*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK:           %[[I:[^ ]*]] = arith.addi %[[R]], %[[L]]
// CHECK:           %[[OI:[^ ]*]] = affine.apply affine_map<(d0, d1) -> (d0)>(%[[I]], %[[C0]])
// CHECK:           %[[A:[^ ]*]] = memref.load %[[SUM]][%[[OI]]]
// CHECK:           memref.store %[[A]], %[[BUF]][%[[L]]]
// CHECK:         }
// CHECK:         scf.for %[[J:[^ ]*]] = %[[C0]] to %[[C768]] step %[[C1]] {
// CHECK:           scf.for %[[L2:[^ ]*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK:             %[[I2:[^ ]*]] = arith.addi %[[R]], %[[L2]]
// CHECK:             %[[XI:[^ ]*]] = affine.apply affine_map<(d0, d1) -> (d0)>(%[[I2]], %[[J]])
// CHECK:             %[[XJ:[^ ]*]] = affine.apply affine_map<(d0, d1) -> (d1)>(%[[I2]], %[[J]])
// CHECK:             %[[XV:[^ ]*]] = memref.load %[[X]][%[[XI]], %[[XJ]]]
// CHECK:             %[[B:[^ ]*]] = memref.load %[[BUF]][%[[L2]]]
// CHECK:             %[[S:[^ ]*]] = arith.addf %[[B]], %[[XV]] : f32
// CHECK:             memref.store %[[S]], %[[BUF]][%[[L2]]]
// CHECK:           }
// CHECK:         }
// CHECK:         scf.for %[[L3:[^ ]*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK:           %[[I3:[^ ]*]] = arith.addi %[[R]], %[[L3]]
// CHECK:           %[[OI3:[^ ]*]] = affine.apply affine_map<(d0, d1) -> (d0)>(%[[I3]], %[[C0]])
// CHECK:           %[[V:[^ ]*]] = memref.load %[[BUF]][%[[L3]]]
// CHECK:           memref.store %[[V]], %[[SUM]][%[[OI3]]]
// CHECK:         }
// CHECK:       }
// The remainder: rows 16 to 19, four lanes.
// CHECK:       scf.for %[[RL:[^ ]*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK:         arith.addi %[[C16]], %[[RL]]
// CHECK:         memref.load %[[SUM]]
// CHECK:       scf.for %{{[^ ]*}} = %[[C0]] to %[[C768]] step %[[C1]] {
// CHECK:         scf.for %{{[^ ]*}} = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK:           arith.addf
// CHECK:       scf.for %{{[^ ]*}} = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK:         memref.store %{{[^ ]*}}, %[[SUM]]
// CHECK-NOT:   linalg.generic
// With 4 lanes, 20 rows are five whole tiles and no remainder.
// FOUR-LABEL: func.func @row_sum
// FOUR:       memref.alloca() : memref<4xf32>
// FOUR-DAG:   %[[C20:[^ ]*]] = arith.constant 20 : index
// FOUR-DAG:   %[[C4:[^ ]*]] = arith.constant 4 : index
// FOUR:       scf.for %{{[^ ]*}} = %{{[^ ]*}} to %[[C20]] step %[[C4]] {
// FOUR-COUNT-3: scf.for %{{[^ ]*}} = %{{[^ ]*}} to %[[C4]] step
// FOUR-NOT:   scf.for
// FOUR:       return
// LANES: error: zshard-interleave-reductions: lanes must be positive, got 0
func.func @row_sum(%x: memref<20x768xf32>, %sum: memref<20xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<20x768xf32>) outs(%sum : memref<20xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that the lanes are the innermost parallel loop the output uses (d1
// of a per-batch column product, with the batch d0 an outer loop), that the
// combiner is kept (a product) and that a scalar input and linalg.index
// reach the body.
// CHECK-LABEL: func.func @column_product
// CHECK-SAME:  (%[[X:[^:]*]]: memref<3x16x10xf32>, %[[W:[^:]*]]: f32, %[[OUT:[^:]*]]: memref<3x10xf32>)
// CHECK:       memref.alloca() : memref<8xf32>
// CHECK:       %[[C2:[^ ]*]] = arith.constant 2 : index
// CHECK:       scf.for %[[A:[^ ]*]] = %{{[^ ]*}} to %{{[^ ]*}} step %{{[^ ]*}} {
// CHECK:         scf.for %[[R:[^ ]*]] = %{{[^ ]*}} to %{{[^ ]*}} step %{{[^ ]*}} {
// CHECK:           scf.for
// CHECK:             memref.load %[[OUT]]
// CHECK:           scf.for %[[K:[^ ]*]] =
// CHECK:             scf.for %[[L:[^ ]*]] =
// CHECK:               %[[D:[^ ]*]] = arith.addi %[[R]], %[[L]]
// CHECK:               affine.apply affine_map<(d0, d1, d2) -> (d0)>(%[[A]], %[[D]], %[[K]])
// CHECK:               memref.load %[[X]]
// CHECK:               arith.index_cast %[[K]] : index to i64
// CHECK:               arith.mulf %{{.*}}, %[[W]]
// CHECK:               arith.mulf %{{[^ ]*}}, %{{[^ ]*}} : f32
// CHECK-NEXT:          memref.store
// The remainder tile, two columns, inside the batch loop.
// CHECK:         scf.for %{{[^ ]*}} = %{{[^ ]*}} to %[[C2]] step
// CHECK-NOT:   linalg
func.func @column_product(%x: memref<3x16x10xf32>, %w: f32, %out: memref<3x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<3x16x10xf32>, f32) outs(%out : memref<3x10xf32>) {
  ^bb0(%in: f32, %scale: f32, %acc: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i64
    %kf = arith.sitofp %ki : i64 to f32
    %p = arith.mulf %in, %kf : f32
    %q = arith.mulf %p, %scale : f32
    %s = arith.mulf %acc, %q : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that the reductions the pass cannot or need not interleave stay: no
// parallel loop, a single row, an output two rows share, a summand that
// reads the accumulator, a reduction over an outer loop, a maximum (exact
// in any order, which LLVM vectorises along the row), and a row dot product
// (two inputs whose rows are not adjacent: two gathers an element).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-7: linalg.generic
// CHECK-NOT:   scf.for
func.func @kept(%x: memref<4x8xf32>, %v: memref<8xf32>, %s: memref<f32>,
                %one: memref<1x8xf32>, %r: memref<1xf32>, %m: memref<4xf32>,
                %n: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%v : memref<8xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%one : memref<1x8xf32>) outs(%r : memref<1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0 floordiv 2)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %d = arith.subf %in, %acc : f32
    %a = arith.addf %acc, %d : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%n : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.maximumf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %in2: f32, %acc: f32):
    %p = arith.mulf %in, %in2 : f32
    %a = arith.addf %acc, %p : f32
    linalg.yield %a : f32
  }
  return
}
