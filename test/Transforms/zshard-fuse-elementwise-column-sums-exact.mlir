// REQUIRES: mlir-runner
// DEFINE: %{lower} = --one-shot-bufferize=bufferize-function-boundaries --convert-linalg-to-loops --expand-strided-metadata --finalize-memref-to-llvm --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils
// RUN: mlir-opt %s %{lower} | %{run} | FileCheck %s
// RUN: zshard-opt %s --zshard-fuse-elementwise | mlir-opt %{lower} | %{run} | FileCheck %s
// RUN: zshard-opt %s --zshard-fuse-elementwise | FileCheck %s --check-prefix=FUSED

// Tests that a column sum computed by its elementwise producer is the
// reduction's result bit for bit: the same function run as written and
// after zshard-fuse-elementwise prints the same bits. Each column's six
// rows (a [3, 2, 4] op's result seen as [6, 4]) are chosen so that another
// order of the additions gives another sum: in order, 1e8 + 1 rounds to 1e8
// and the column ends at 3 (column 0) or 4 (column 1); the rows backwards
// give 0. The op's result, printed too, is the same as well.
// FUSED:     iterator_types = ["reduction", "reduction", "parallel"]
// FUSED-NOT: iterator_types = ["reduction", "parallel"]
// CHECK:      [1077936128,  1082130432,  2139095040,  2139095040]
// CHECK:      {{\[\[}}1287568416,   -859915232,   1065353216,   1900671690],
// CHECK-NEXT:  [1065353216,   1287568416,   1075838976,   -246811958],
// CHECK-NEXT:  [-859915232,   1065353216,   -1082130432,   2139095040],
// CHECK-NEXT:  [1065353216,   1065353216,   1073741824,   1084227584],
// CHECK-NEXT:  [1065353216,   1065353216,   2139095040,   1065353216],
// CHECK-NEXT:  [1065353216,   1065353216,   -1073741824,   1065353216]]

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func private @printMemrefI32(memref<*xi32>)

func.func @main() {
  %x = arith.constant dense<[[[1.0e8, -1.0e8, 1.0, 1.0e30], [1.0, 1.0e8, 2.5, -1.0e30]],
                              [[-1.0e8, 1.0, -1.0, 0x7F800000], [1.0, 1.0, 2.0, 5.0]],
                              [[1.0, 1.0, 0x7F800000, 1.0], [1.0, 1.0, -2.0, 1.0]]]> : tensor<3x2x4xf32>
  %y = arith.constant dense<-1.0> : tensor<3x2x4xf32>
  %e = tensor.empty() : tensor<3x2x4xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %y : tensor<3x2x4xf32>, tensor<3x2x4xf32>) outs(%e : tensor<3x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %n = arith.negf %m : f32
    linalg.yield %n : f32
  } -> tensor<3x2x4xf32>
  %flat = tensor.collapse_shape %g [[0, 1], [2]] : tensor<3x2x4xf32> into tensor<6x4xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<4xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%flat : tensor<6x4xf32>) outs(%sz : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // The op's result has another reader (printed too): the pattern keeps it.
  %si = tensor.empty() : tensor<4xi32>
  %bits = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<4xf32>) outs(%si : tensor<4xi32>) {
  ^bb0(%in: f32, %out: i32):
    %b = arith.bitcast %in : f32 to i32
    linalg.yield %b : i32
  } -> tensor<4xi32>
  %m = bufferization.to_buffer %bits : tensor<4xi32> to memref<4xi32>
  %u = memref.cast %m : memref<4xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  %fi = tensor.empty() : tensor<6x4xi32>
  %fbits = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%flat : tensor<6x4xf32>) outs(%fi : tensor<6x4xi32>) {
  ^bb0(%in: f32, %out: i32):
    %b = arith.bitcast %in : f32 to i32
    linalg.yield %b : i32
  } -> tensor<6x4xi32>
  %fm = bufferization.to_buffer %fbits : tensor<6x4xi32> to memref<6x4xi32>
  %fu = memref.cast %fm : memref<6x4xi32> to memref<*xi32>
  call @printMemrefI32(%fu) : (memref<*xi32>) -> ()
  return
}
