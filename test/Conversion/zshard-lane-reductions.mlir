// RUN: zshard-opt %s --mlir-print-debuginfo=false --split-input-file --zshard-lane-reductions="rows=1" | FileCheck %s
// RUN: zshard-opt %s --mlir-print-debuginfo=false --split-input-file --zshard-lane-reductions="lanes=4 rows=1" | FileCheck %s --check-prefix=FOUR
// RUN: zshard-opt %s --mlir-print-debuginfo=false --split-input-file --zshard-lane-reductions | FileCheck %s --check-prefix=ROWS
// RUN: not zshard-opt %s --split-input-file --zshard-lane-reductions="lanes=1" 2>&1 | FileCheck %s --check-prefix=LANES
// RUN: not zshard-opt %s --split-input-file --zshard-lane-reductions="rows=0" 2>&1 | FileCheck %s --check-prefix=NOROWS

// Tests that a row dot product (a LayerNorm backward's) becomes, per row, a
// vector of 16 partial sums started from the first 16 elements and advanced
// 16 at a time, its lanes added to the output's value in lane order, then
// the elements past the last whole group in order. The row's inputs are
// vector loads; a per-row input and a constant from above are broadcast.

// CHECK-LABEL: func.func @row_dot
// CHECK-SAME:  (%[[X:[^:]*]]: memref<4x100xf32>, %[[Y:[^:]*]]: memref<4x100xf32>, %[[M:[^:]*]]: memref<4xf32>, %[[DOT:[^:]*]]: memref<4xf32>)
// CHECK-DAG:   %[[TWO:[^ ]*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG:   %[[C0:[^ ]*]] = arith.constant 0 : index
// CHECK-DAG:   %[[C1:[^ ]*]] = arith.constant 1 : index
// CHECK-DAG:   %[[C16:[^ ]*]] = arith.constant 16 : index
// CHECK-DAG:   %[[C4:[^ ]*]] = arith.constant 4 : index
// CHECK-DAG:   %[[C96:[^ ]*]] = arith.constant 96 : index
// CHECK-DAG:   %[[C100:[^ ]*]] = arith.constant 100 : index
// CHECK:       scf.for %[[I:[^ ]*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK:         %[[OI:[^ ]*]] = affine.apply affine_map<(d0, d1) -> (d0)>(%[[I]], %[[C0]])
// CHECK:         %[[INIT:[^ ]*]] = memref.load %[[DOT]][%[[OI]]]
// CHECK:         %[[X0:[^ ]*]] = vector.load %[[X]][%{{[^,]*}}, %{{[^]]*}}] : memref<4x100xf32>, vector<16xf32>
// CHECK:         %[[Y0:[^ ]*]] = vector.load %[[Y]][%{{[^,]*}}, %{{[^]]*}}] : memref<4x100xf32>, vector<16xf32>
// CHECK:         %[[M0:[^ ]*]] = memref.load %[[M]]
// CHECK:         %[[MB:[^ ]*]] = vector.broadcast %[[M0]] : f32 to vector<16xf32>
// CHECK:         %[[D0:[^ ]*]] = arith.subf %[[X0]], %[[MB]] : vector<16xf32>
// CHECK:         %[[P0:[^ ]*]] = arith.mulf %[[D0]], %[[Y0]] : vector<16xf32>
// CHECK:         %[[TB:[^ ]*]] = vector.broadcast %[[TWO]] : f32 to vector<16xf32>
// CHECK:         %[[Q0:[^ ]*]] = arith.mulf %[[P0]], %[[TB]] : vector<16xf32>
// CHECK:         %[[PART:[^ ]*]] = scf.for %[[J:[^ ]*]] = %[[C16]] to %[[C96]] step %[[C16]] iter_args(%[[V:[^ ]*]] = %[[Q0]]) -> (vector<16xf32>) {
// CHECK:           vector.load %[[X]]
// CHECK:           vector.load %[[Y]]
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           %[[Q:[^ ]*]] = arith.mulf %{{[^ ]*}}, %{{[^ ]*}} : vector<16xf32>
// CHECK-NEXT:      %[[V2:[^ ]*]] = arith.addf %[[V]], %[[Q]] : vector<16xf32>
// CHECK:           scf.yield %[[V2]] : vector<16xf32>
// CHECK:         }
// CHECK:         %[[L0:[^ ]*]] = vector.extract %[[PART]][0] : f32 from vector<16xf32>
// CHECK:         %[[S0:[^ ]*]] = arith.addf %[[INIT]], %[[L0]] : f32
// CHECK:         %[[L1:[^ ]*]] = vector.extract %[[PART]][1] : f32 from vector<16xf32>
// CHECK:         %[[S1:[^ ]*]] = arith.addf %[[S0]], %[[L1]] : f32
// CHECK-COUNT-13: vector.extract %[[PART]]
// CHECK:         %[[L15:[^ ]*]] = vector.extract %[[PART]][15] : f32 from vector<16xf32>
// CHECK:         %[[S15:[^ ]*]] = arith.addf %{{[^ ]*}}, %[[L15]] : f32
// CHECK:         %[[ALL:[^ ]*]] = scf.for %[[T:[^ ]*]] = %[[C96]] to %[[C100]] step %[[C1]] iter_args(%[[A:[^ ]*]] = %[[S15]]) -> (f32) {
// CHECK:           memref.load %[[X]]
// CHECK:           memref.load %[[Y]]
// CHECK:           %[[QS:[^ ]*]] = arith.mulf %{{[^ ]*}}, %[[TWO]] : f32
// CHECK:           %[[AS:[^ ]*]] = arith.addf %[[A]], %[[QS]] : f32
// CHECK:           scf.yield %[[AS]] : f32
// CHECK:         }
// CHECK:         memref.store %[[ALL]], %[[DOT]][%[[OI]]]
// CHECK:       }
// CHECK-NOT:   linalg.generic
// With 4 lanes, 25 whole groups and no tail loop.
// FOUR-LABEL: func.func @row_dot
// FOUR-DAG:   %[[C4:[^ ]*]] = arith.constant 4 : index
// FOUR-DAG:   %[[C100:[^ ]*]] = arith.constant 100 : index
// FOUR:       scf.for %{{[^ ]*}} = %[[C4]] to %[[C100]] step %[[C4]] iter_args(%{{[^ ]*}} = %{{[^ ]*}}) -> (vector<4xf32>)
// FOUR-COUNT-4: vector.extract
// FOUR-NOT:   scf.for
// FOUR:       memref.store
// LANES: error: zshard-lane-reductions: lanes must be at least 2, got 1
// NOROWS: error: zshard-lane-reductions: rows must be at least 1, got 0

// With the default four rows at a time (4 rows: one group), the four rows'
// lane sums advance in one loop, each row's own chain, and each row's
// lanes go onto its output in lane order.
// ROWS-LABEL: func.func @row_dot
// ROWS-DAG:   %[[STEP:[^ ]*]] = arith.constant 4 : index
// ROWS-DAG:   %[[END:[^ ]*]] = arith.constant 4 : index
// ROWS:       scf.for %[[I:[^ ]*]] = %{{[^ ]*}} to %[[END]] step %[[STEP]] {
// ROWS-COUNT-3: arith.addi %[[I]], %{{[^ ]*}} : index
// ROWS-COUNT-4: memref.load %{{[^ ]*}}[%{{[^]]*}}] : memref<4xf32>
// ROWS:         %[[PART:[^:]*]]:4 = scf.for %{{[^ ]*}} = %{{[^ ]*}} to %{{[^ ]*}} step %{{[^ ]*}} iter_args(%[[V0:[^ ]*]] = %{{[^,]*}}, %[[V1:[^ ]*]] = %{{[^,]*}}, %[[V2:[^ ]*]] = %{{[^,]*}}, %[[V3:[^ ]*]] = %{{[^)]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// ROWS:           arith.addf %[[V0]], %{{[^ ]*}} : vector<16xf32>
// ROWS:           arith.addf %[[V1]], %{{[^ ]*}} : vector<16xf32>
// ROWS:           arith.addf %[[V2]], %{{[^ ]*}} : vector<16xf32>
// ROWS:           arith.addf %[[V3]], %{{[^ ]*}} : vector<16xf32>
// ROWS:           scf.yield
// ROWS:         vector.extract %[[PART]]#0[0]
// ROWS-COUNT-15: vector.extract %[[PART]]#0
// ROWS:         vector.extract %[[PART]]#1[0]
// ROWS-COUNT-15: vector.extract %[[PART]]#1
// ROWS:         vector.extract %[[PART]]#3[15]
// ROWS:         scf.for {{.*}} -> (f32, f32, f32, f32) {
// ROWS-COUNT-4: memref.store
func.func @row_dot(%x: memref<4x100xf32>, %y: memref<4x100xf32>, %m: memref<4xf32>, %dot: memref<4xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %y, %m : memref<4x100xf32>, memref<4x100xf32>, memref<4xf32>) outs(%dot : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32, %mean: f32, %acc: f32):
    %d = arith.subf %a, %mean : f32
    %p = arith.mulf %d, %b : f32
    %q = arith.mulf %p, %two : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests a LayerNorm's row sum on a strided view with an offset (rows of an
// [8, 128, 256] activation, the output indexed by the two outer loops), a
// constant inside the body broadcast, the summand's ops (a select on a
// comparison, a bitcast to integers and back) lane by lane, and the reduced
// value on the left of the combiner.

// CHECK-LABEL: func.func @strided_rows
// CHECK:       scf.for %[[B:[^ ]*]] =
// CHECK:         scf.for %[[T:[^ ]*]] =
// CHECK:           memref.load %{{[^ ]*}}[%{{[^,]*}}, %{{[^]]*}}] : memref<2x3xf32>
// CHECK:           vector.load %{{[^ ]*}}[%{{[^,]*}}, %{{[^,]*}}, %{{[^]]*}}] : memref<2x3x64xf32, strided<[384, 128, 1], offset: 32>>, vector<16xf32>
// CHECK:           %[[H:[^ ]*]] = arith.constant 5.000000e-01 : f32
// CHECK:           vector.broadcast %[[H]] : f32 to vector<16xf32>
// CHECK:           arith.cmpf ogt, %{{[^ ]*}}, %{{[^ ]*}} : vector<16xf32>
// CHECK:           arith.select %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} : vector<16xi1>, vector<16xf32>
// CHECK:           arith.bitcast %{{[^ ]*}} : vector<16xf32> to vector<16xi32>
// CHECK:           arith.bitcast %{{[^ ]*}} : vector<16xi32> to vector<16xf32>
// CHECK:           scf.for %{{[^ ]*}} = %{{[^ ]*}} to %{{[^ ]*}} step %{{[^ ]*}} iter_args(%[[V:[^ ]*]] = %{{[^ ]*}}) -> (vector<16xf32>) {
// CHECK:             %[[R:[^ ]*]] = arith.bitcast %{{[^ ]*}} : vector<16xi32> to vector<16xf32>
// CHECK:             arith.addf %[[R]], %[[V]] : vector<16xf32>
// CHECK-COUNT-16:  vector.extract
// CHECK-NOT:       scf.for
// CHECK:           memref.store
// Three rows in the innermost loop, not a multiple of four: one at a time.
// ROWS-LABEL: func.func @strided_rows
// ROWS:       scf.for
// ROWS:         scf.for %{{[^ ]*}} = %{{[^ ]*}} to %{{[^ ]*}} step %[[ONE:[^ ]*]] {
// ROWS:           scf.for %{{[^ ]*}} = %{{[^ ]*}} to %{{[^ ]*}} step %{{[^ ]*}} iter_args(%{{[^ ]*}} = %{{[^ ]*}}) -> (vector<16xf32>) {
// ROWS-COUNT-1:   memref.store
func.func @strided_rows(%x: memref<2x3x64xf32, strided<[384, 128, 1], offset: 32>>, %sum: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x3x64xf32, strided<[384, 128, 1], offset: 32>>) outs(%sum : memref<2x3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %h = arith.constant 0.5 : f32
    %c = arith.cmpf ogt, %in, %h : f32
    %v = arith.select %c, %in, %h : f32
    %i = arith.bitcast %v : f32 to i32
    %r = arith.bitcast %i : i32 to f32
    %s = arith.addf %r, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests the reductions the pass leaves: fewer than two groups of lanes, a
// row read along a strided dimension (a transposed map, a non-unit inner
// stride), an i1 input (a memref keeps a byte an i1, a vector packs bits),
// a maximum (exact in any order: LLVM vectorises it), and linalg.index in
// the summand.

// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT:   vector.
func.func @left_alone(%short: memref<4x31xf32>, %t: memref<64x4xf32>, %s: memref<4x64xf32, strided<[1, 4]>>,
                      %mask: memref<4x64xi1>, %x: memref<4x64xf32>, %out: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<4x31xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%t : memref<64x4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<4x64xf32, strided<[1, 4]>>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%mask, %x : memref<4x64xi1>, memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%m: i1, %in: f32, %acc: f32):
    %v = arith.select %m, %in, %zero : f32
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %p = arith.mulf %in, %jf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
