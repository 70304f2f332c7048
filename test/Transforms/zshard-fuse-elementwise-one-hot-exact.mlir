// REQUIRES: mlir-runner
// DEFINE: %{lower} = --one-shot-bufferize=bufferize-function-boundaries --convert-linalg-to-loops --expand-strided-metadata --finalize-memref-to-llvm --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils
// RUN: mlir-opt %s %{lower} | %{run} | FileCheck %s
// RUN: zshard-opt %s --zshard-fuse-elementwise | mlir-opt %{lower} | %{run} | FileCheck %s
// RUN: zshard-opt %s --zshard-fuse-elementwise | FileCheck %s --check-prefix=FOLDED

// Tests that the folded sum of a one-hot tensor is the reduction's result
// bit for bit: the same function run as written and after
// zshard-fuse-elementwise prints the same bits, on rows whose target lies in
// the row (first, last, middle column), past its end or before its start,
// and whose weight is finite, -0, 0, an infinity or NaN (the reduction then
// adds NaN off the target: 0 times the weight).
// FOLDED-NOT: iterator_types = ["parallel", "reduction"]
// FOLDED:     arith.cmpf uno
// CHECK: [1069547520,  -1073741824,  0,  2143289344,  -4194304,  0,  2143289344,  0,  -4194304,  2143289344]

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func private @printMemrefI32(memref<*xi32>)

func.func @main() {
  %targets = arith.constant dense<[0, 7, 8, -1, 3, 2, 5, 1, 0, 0]> : tensor<10xi64>
  %weight = arith.constant dense<[1.5, -2.0, 3.0, 0x7F800000, 0x7FC00000, -0.0, 0xFF800000, 0.0, 0x7FC00000, 0x7F800000]> : tensor<10xf32>
  %e = tensor.empty() : tensor<10x8xf32>
  %onehot = linalg.generic {indexing_maps = [#row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%targets, %weight : tensor<10xi64>, tensor<10xf32>) outs(%e : tensor<10x8xf32>) {
  ^bb0(%t: i64, %w: f32, %out: f32):
    %c = linalg.index 1 : index
    %ti = arith.index_cast %t : i64 to index
    %hit = arith.cmpi eq, %c, %ti : index
    %minus = arith.constant -1.0 : f32
    %zero = arith.constant 0.0 : f32
    %g = arith.select %hit, %minus, %zero : f32
    %v = arith.mulf %g, %w : f32
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<10x8xf32>
  %zero = arith.constant 0.0 : f32
  %r = tensor.empty() : tensor<10xf32>
  %init = linalg.fill ins(%zero : f32) outs(%r : tensor<10xf32>) -> tensor<10xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot : tensor<10x8xf32>) outs(%init : tensor<10xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %ri = tensor.empty() : tensor<10xi32>
  %bits = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<10xf32>) outs(%ri : tensor<10xi32>) {
  ^bb0(%in: f32, %out: i32):
    %b = arith.bitcast %in : f32 to i32
    linalg.yield %b : i32
  } -> tensor<10xi32>
  %m = bufferization.to_buffer %bits : tensor<10xi32> to memref<10xi32>
  %u = memref.cast %m : memref<10xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
