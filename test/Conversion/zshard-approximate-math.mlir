// RUN: zshard-opt %s --zshard-approximate-math | FileCheck %s

// Tests that tanh and exp inside a linalg body become arithmetic (no libm
// call left to block vectorisation), while powf, which has no approximation,
// stays.
// CHECK-LABEL: func.func @gelu_like
func.func @gelu_like(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // CHECK:     linalg.generic
  // CHECK-NOT: math.tanh
  // CHECK-NOT: math.exp
  // CHECK:     math.powf
  // CHECK:     linalg.yield
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    %x2 = math.exp %t : f32
    %p = math.powf %x2, %in : f32
    linalg.yield %p : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
