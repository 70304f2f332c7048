// RUN: zshard-opt %s --zshard-fuse-elementwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// Tests that an elementwise producer fuses into an elementwise generic
// consumer, but a transpose feeding a named matmul stays apart, so the
// matmul can still become a BLAS call.
// CHECK-LABEL: func.func @fusion
func.func @fusion(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x4xf32>
  // The matmul keeps its transpose producer and stays a named op.
  // CHECK:     %[[T:.*]] = linalg.generic
  // CHECK:     linalg.matmul ins(%[[T]], %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
  %m = linalg.matmul ins(%t, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  // The two elementwise generics become one.
  // CHECK:     linalg.generic
  // CHECK:       arith.mulf
  // CHECK-NEXT:  arith.addf
  // CHECK-NOT: linalg.generic
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sq, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<4x4xf32>
  return %m, %sum : tensor<4x4xf32>, tensor<4x4xf32>
}
