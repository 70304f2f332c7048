// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-prepare-linalg-for-gpu --split-input-file | FileCheck %s

// Tests that every memref.copy, contiguous or not, becomes a linalg.copy
// (a copy kernel later), never a host memcpy.
// CHECK-LABEL: func.func @copies
// CHECK-SAME:    (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>, %[[C:.*]]: memref<4x4xf32, strided<[8, 1]>>, %[[D:.*]]: memref<4x4xf32>)
// CHECK-NEXT:    linalg.copy ins(%[[A]] : memref<4x8xf32>) outs(%[[B]] : memref<4x8xf32>)
// CHECK-NEXT:    linalg.copy ins(%[[C]] : memref<4x4xf32, strided<[8, 1]>>) outs(%[[D]] : memref<4x4xf32>)
// CHECK-NEXT:    return
func.func @copies(%a: memref<4x8xf32>, %b: memref<4x8xf32>,
                  %c: memref<4x4xf32, strided<[8, 1]>>, %d: memref<4x4xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %c, %d : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  return
}

// -----

// Tests that a 0-d computation and a full reduction (no parallel dimension)
// are each wrapped in a one-iteration scf.parallel, and that an op with
// parallel dimensions first is left alone.
// CHECK-LABEL: func.func @scalars
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
// CHECK:       scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]]) {
// CHECK-NEXT:    linalg.generic {{.*}}iterator_types = []
// CHECK:           math.exp
// CHECK:         scf.reduce
// CHECK:       scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT:    linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// CHECK:         scf.reduce
// CHECK:       }
// CHECK:       linalg.fill
// CHECK-NEXT:  return
func.func @scalars(%a: memref<4x300xf32>, %s: memref<f32>, %t: memref<f32>, %r: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%s : memref<f32>) outs(%t : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<4x300xf32>) outs(%t : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %u = arith.addf %x, %y : f32
    linalg.yield %u : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<4xf32>)
  return
}

// -----

// Tests that a reduction outside a parallel dimension (a column sum) is
// interchanged so the parallel dimension comes first, with linalg.index
// renumbered: index 0 (the old reduction dimension) is now d1.
// CHECK-LABEL: func.func @column_sum
// CHECK:       linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK:         %[[I0:.*]] = linalg.index 0
// CHECK:         %[[I1:.*]] = linalg.index 1
// CHECK:         affine.apply affine_map<(d0, d1) -> (d1)>(%[[I0]], %[[I1]])
// CHECK-NOT:   scf.parallel
func.func @column_sum(%a: memref<4x300xf32>, %r: memref<300xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<4x300xf32>) outs(%r : memref<300xf32>) {
  ^bb0(%x: f32, %y: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %x, %f : f32
    %u = arith.addf %m, %y : f32
    linalg.yield %u : f32
  }
  return
}

// -----

// Tests that a named op with a reduction outside its parallel dimension
// (linalg.reduce over dimension 0) is generalized, then interchanged.
// CHECK-LABEL: func.func @named_reduce
// CHECK-NOT:   linalg.reduce
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
func.func @named_reduce(%a: memref<4x300xf32>, %r: memref<300xf32>) {
  linalg.reduce ins(%a : memref<4x300xf32>) outs(%r : memref<300xf32>) dimensions = [0]
    (%x: f32, %y: f32) {
      %u = arith.addf %x, %y : f32
      linalg.yield %u : f32
    }
  return
}

// -----

// Tests that an scf.for at the top level (a scatter-add into a vector: its
// one-column scf.forall folded into a host loop) is wrapped in a
// one-iteration scf.parallel, loads and stores inside, so that it becomes a
// one-thread kernel.
// CHECK-LABEL: func.func @scatter_vector
// CHECK-SAME:    (%[[IDS:.*]]: memref<6xi32>, %[[G:.*]]: memref<6xf32>, %[[ACC:.*]]: memref<10xf32>)
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT:      scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        memref.load %[[IDS]][%[[T]]] : memref<6xi32>
// CHECK:             memref.store %{{.*}}, %[[ACC]][%{{.*}}] : memref<10xf32>
// CHECK:           }
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @scatter_vector(%ids: memref<6xi32>, %g: memref<6xf32>, %acc: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %t = %c0 to %c6 step %c1 {
    %id = memref.load %ids[%t] : memref<6xi32>
    %row = arith.index_cast %id : i32 to index
    %v = memref.load %g[%t] : memref<6xf32>
    %old = memref.load %acc[%row] : memref<10xf32>
    %sum = arith.addf %old, %v : f32
    memref.store %sum, %acc[%row] : memref<10xf32>
  }
  return
}
