// RUN: zshard-opt %s --mlir-print-debuginfo=false --split-input-file --zshard-gpu-split-reductions="threads=256 min-chunk=4" | FileCheck %s
// RUN: not zshard-opt %s --split-input-file --zshard-gpu-split-reductions="threads=1" 2>&1 | FileCheck %s --check-prefix=THREADS

// THREADS: error: threads must be at least 2 and min-chunk at least 1, got 1 and 16

// A column sum (32 outputs, each over 64 rows): S = 8 (32 * 8 = 256
// threads), each thread a contiguous chunk of 8 rows, S outermost so that
// consecutive threads read consecutive columns; then the 8 partials of each
// column added into the original init.

// CHECK-LABEL: func.func @column_sum
// CHECK-SAME:  (%[[X:[^:]*]]: tensor<64x32xbf16>, %[[INIT:[^:]*]]: tensor<32xf32>)
// CHECK:       %[[XS:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [8, 8, 32] : tensor<64x32xbf16> into tensor<8x8x32xbf16>
// CHECK:       %[[EMPTY:.*]] = tensor.empty() : tensor<8x32xf32>
// CHECK:       %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:       %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<8x32xf32>)
// CHECK:       %[[PART:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[XS]] : tensor<8x8x32xbf16>) outs(%[[FILL]] : tensor<8x32xf32>)
// CHECK:         arith.extf
// CHECK:         arith.addf
// CHECK:       %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME:      ins(%[[PART]] : tensor<8x32xf32>) outs(%[[INIT]] : tensor<32xf32>)
// CHECK:       ^bb0(%[[P:[^:]*]]: f32, %[[ACC:[^:]*]]: f32):
// CHECK:         %[[ADD:.*]] = arith.addf %[[P]], %[[ACC]] : f32
// CHECK:         linalg.yield %[[ADD]] : f32
// CHECK:       return %[[SUM]]
#col_in = affine_map<(d0, d1) -> (d0, d1)>
#col_out = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%x: tensor<64x32xbf16>, %init: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.generic {indexing_maps = [#col_in, #col_out], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<64x32xbf16>) outs(%init : tensor<32xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %e = arith.extf %a : bf16 to f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// A row maximum (4 rows of 64): S = 16, limited by min-chunk (64 / 16 = 4
// elements a thread); interleaved, S innermost: thread s of a row reads
// s, s + 16, ...; partials start at -inf.

// CHECK-LABEL: func.func @row_max
// CHECK:       %[[XS:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [4, 4, 16] : tensor<4x64xf32> into tensor<4x4x16xf32>
// CHECK:       %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:       %[[FILL:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:       %[[PART:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[XS]] : tensor<4x4x16xf32>) outs(%[[FILL]] : tensor<4x16xf32>)
// CHECK:       linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%[[PART]] : tensor<4x16xf32>)
// CHECK:         arith.maximumf
#row_in = affine_map<(d0, d1) -> (d0, d1)>
#row_out = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: tensor<4x64xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#row_in, #row_out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Two sums at once (a LayerNorm's weight and bias gradients): every input
// that reads the reduced dimension is expanded, a per-row input too; each
// output gets its partials and its combination.

// CHECK-LABEL: func.func @two_sums
// CHECK-SAME:  (%[[X:[^:]*]]: tensor<64x32xf32>, %[[Y:[^:]*]]: tensor<64x32xf32>, %[[RS:[^:]*]]: tensor<64xf32>, %[[I0:[^:]*]]: tensor<32xf32>, %[[I1:[^:]*]]: tensor<32xf32>)
// CHECK-DAG:   %[[XS:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [8, 8, 32]
// CHECK-DAG:   %[[YS:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [8, 8, 32]
// CHECK-DAG:   %[[RSS:.*]] = tensor.expand_shape %[[RS]] {{\[}}[0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
// CHECK:       %[[PART:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[XS]], %[[YS]], %[[RSS]] :
// CHECK:       %[[SUMS:.*]]:2 = linalg.generic
// CHECK-SAME:      ins(%[[PART]]#0, %[[PART]]#1 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%[[I0]], %[[I1]] : tensor<32xf32>, tensor<32xf32>)
// CHECK:       ^bb0(%[[P0:[^:]*]]: f32, %[[P1:[^:]*]]: f32, %[[A0:[^:]*]]: f32, %[[A1:[^:]*]]: f32):
// CHECK:         %[[S0:.*]] = arith.addf %[[P0]], %[[A0]] : f32
// CHECK:         %[[S1:.*]] = arith.addf %[[P1]], %[[A1]] : f32
// CHECK:         linalg.yield %[[S0]], %[[S1]]
// CHECK:       return %[[SUMS]]#0, %[[SUMS]]#1
#in = affine_map<(d0, d1) -> (d0, d1)>
#vec = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @two_sums(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>, %rs: tensor<64xf32>,
                    %i0: tensor<32xf32>, %i1: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#in, #in, #vec, #out, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x, %y, %rs : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>) outs(%i0, %i1 : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %acc0: f32, %acc1: f32):
    %p = arith.mulf %a, %c : f32
    %q = arith.mulf %p, %b : f32
    %s0 = arith.addf %acc0, %q : f32
    %s1 = arith.addf %acc1, %b : f32
    linalg.yield %s0, %s1 : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)
  return %r#0, %r#1 : tensor<32xf32>, tensor<32xf32>
}

// -----

// Left alone: enough outputs already (256 * 64 threads), a contraction
// (cuBLAS's), an integer sum, a reduced size with no power-of-two split of
// at least min-chunk elements (4 * 2 > 6), a dynamic size, and an output
// that is not a plain reduction (it also reads another input).

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   tensor.expand_shape
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT:   linalg.generic
#i2 = affine_map<(d0, d1) -> (d0, d1)>
#o2 = affine_map<(d0, d1) -> (d0)>
#mm_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%wide: tensor<256x64xf32>, %wi: tensor<256xf32>,
                      %a: tensor<4x64xf32>, %b: tensor<64x4xf32>, %c: tensor<4x4xf32>,
                      %ints: tensor<4x64xi32>, %ii: tensor<4xi32>,
                      %odd: tensor<4x6xf32>, %oi: tensor<4xf32>,
                      %dyn: tensor<4x?xf32>, %di: tensor<4xf32>,
                      %x: tensor<4x64xf32>, %xi: tensor<4xf32>) -> (tensor<256xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%wide : tensor<256x64xf32>) outs(%wi : tensor<256xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %1 = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x64xf32>, tensor<64x4xf32>) outs(%c : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %2 = linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%ints : tensor<4x64xi32>) outs(%ii : tensor<4xi32>) {
  ^bb0(%v: i32, %acc: i32):
    %s = arith.addi %acc, %v : i32
    linalg.yield %s : i32
  } -> tensor<4xi32>
  %3 = linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%odd : tensor<4x6xf32>) outs(%oi : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %4 = linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%dyn : tensor<4x?xf32>) outs(%di : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %5 = linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%xi : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.mulf %acc, %v : f32
    %s = arith.addf %m, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<256xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
