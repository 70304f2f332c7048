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

// Tests that a cheap producer with several uses is computed again in each
// consumer when that moves no more bytes and keeps no buffer longer: a
// LayerNorm backward's normalised input (x - mean) * rstd, read by the
// weight gradient's column sum and by the input gradient, becomes part of
// both and is gone; x (an argument) is read in its place.
// CHECK-LABEL: func.func @recompute_normalised
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["reduction", "parallel"]
// CHECK:         arith.subf
// CHECK-NEXT:    arith.mulf
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel"]
// CHECK:         arith.subf
// CHECK-NEXT:    arith.mulf
// CHECK-NOT:   linalg.generic
func.func @recompute_normalised(%x: tensor<4x8xf32>, %mean: tensor<4xf32>, %rstd: tensor<4xf32>, %dy: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %xhat = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean, %rstd : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %r: f32, %out: f32):
    %0 = arith.subf %a, %m : f32
    %1 = arith.mulf %0, %r : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%z : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %dgamma = linalg.generic {indexing_maps = [#id, #id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%xhat, %dy : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %dx = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xhat, %dy : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.subf %b, %a : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %dgamma, %dx : tensor<8xf32>, tensor<4x8xf32>
}

// Tests the producers with several uses that stay: one reading two tensors
// element for element (a residual add: computing it again would read both
// in each consumer), one whose broadcast input is a slice of a larger
// buffer used nowhere later (computing it in the last consumer would keep
// that buffer alive until then), and one also used by a matmul.
// CHECK-LABEL: func.func @kept_producers
// CHECK-COUNT-9: linalg.generic
// CHECK-NOT:   linalg.generic
func.func @kept_producers(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.mulf %x, %x : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.negf %x : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  // A bias that is row 0 of a product's 8 x 8 result, read only here.
  %e88 = tensor.empty() : tensor<8x8xf32>
  %big = linalg.matmul ins(%w, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e88 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %bias = tensor.extract_slice %big[0, 0] [1, 8] [1, 1] : tensor<8x8xf32> to tensor<8xf32>
  %biased = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %b1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.mulf %x, %x : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %b2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.negf %x : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.mulf %x, %x : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %m = linalg.matmul ins(%scaled, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scaled : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.negf %x : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %c2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scaled : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %0 = arith.addf %x, %x : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %s1, %s2, %b1, %b2, %c1, %c2, %m : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// Tests the second round's allowance for broadcast inputs: in a step,
// x - mean reads a product's result x, which dies there, and the row means,
// which die there too. Computing it again in both consumers keeps x's
// buffer (as large as the result) and the means' (32 bytes, within 1/64 of
// the result's 8 KiB) alive until the last consumer: fused, no tensor of
// x - mean is left.
// CHECK-LABEL: func.func @recompute_with_row_means
// CHECK:       linalg.matmul
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "reduction"]
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["reduction", "parallel"]
// CHECK:         arith.subf
// CHECK-NEXT:    arith.mulf
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel"]
// CHECK:         arith.subf
// CHECK-NEXT:    arith.subf
// CHECK-NOT:   linalg.generic
func.func @recompute_with_row_means(%a: tensor<8x16xf32>, %w: tensor<16x256xf32>, %dy: tensor<8x256xf32>) -> (tensor<256xf32>, tensor<8x256xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x256xf32>
  %x0 = linalg.fill ins(%z : f32) outs(%e : tensor<8x256xf32>) -> tensor<8x256xf32>
  %x = linalg.matmul ins(%a, %w : tensor<8x16xf32>, tensor<16x256xf32>) outs(%x0 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%z : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %mean = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.addf %acc, %v : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %xc = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<8x256xf32>, tensor<8xf32>) outs(%e : tensor<8x256xf32>) {
  ^bb0(%v: f32, %m: f32, %out: f32):
    %0 = arith.subf %v, %m : f32
    linalg.yield %0 : f32
  } -> tensor<8x256xf32>
  %e256 = tensor.empty() : tensor<256xf32>
  %g0 = linalg.fill ins(%z : f32) outs(%e256 : tensor<256xf32>) -> tensor<256xf32>
  %dgamma = linalg.generic {indexing_maps = [#id, #id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%xc, %dy : tensor<8x256xf32>, tensor<8x256xf32>) outs(%g0 : tensor<256xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %0 = arith.mulf %u, %v : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<256xf32>
  %dx = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xc, %dy : tensor<8x256xf32>, tensor<8x256xf32>) outs(%e : tensor<8x256xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %0 = arith.subf %v, %u : f32
    linalg.yield %0 : f32
  } -> tensor<8x256xf32>
  return %dgamma, %dx : tensor<256xf32>, tensor<8x256xf32>
}

// Tests the allowance's bound: the same at 4 x 8, where the row means'
// 16 bytes exceed 1/64 of the result's 128: x - mean stays a tensor.
// CHECK-LABEL: func.func @kept_with_large_means
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "reduction"]
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel"]
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    arith.subf
// CHECK-NEXT:    linalg.yield
func.func @kept_with_large_means(%a: tensor<4x16xf32>, %w: tensor<16x8xf32>, %dy: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<4x8xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %x0 = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x = linalg.matmul ins(%a, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%x0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%z : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %mean = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.addf %acc, %v : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %xc = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %m: f32, %out: f32):
    %0 = arith.subf %v, %m : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %g0 = linalg.fill ins(%z : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %dgamma = linalg.generic {indexing_maps = [#id, #id, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%xc, %dy : tensor<4x8xf32>, tensor<4x8xf32>) outs(%g0 : tensor<8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %0 = arith.mulf %u, %v : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %dx = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xc, %dy : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %0 = arith.subf %v, %u : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %dgamma, %dx : tensor<8xf32>, tensor<4x8xf32>
}
