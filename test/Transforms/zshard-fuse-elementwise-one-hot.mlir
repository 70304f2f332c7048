// RUN: zshard-opt %s --zshard-fuse-elementwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Tests that the row sum of a one-hot tensor (a cross-entropy backward's
// gradient of the picked log probabilities: -1 at the target's column, 0
// elsewhere, times the row's weight) is computed from the target's element,
// and that the one-hot tensor, then read only by the log-softmax backward,
// is fused into it: no [rows, classes] tensor written for it, no reduction.
// CHECK-LABEL: func.func @cross_entropy_backward
// CHECK-NOT:   iterator_types = ["parallel", "reduction"]
// The sum: the target's element if the target is in [0, 8), the element
// off the target (+-0, or NaN when the weight is not finite) otherwise.
// CHECK:       %[[SUM:.*]] = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel"]
// CHECK:         %[[HIT:.*]] = arith.mulf
// CHECK:         %[[MISS:.*]] = arith.mulf
// CHECK:         %[[LO:.*]] = arith.cmpi slt, %{{.*}}, %c8
// CHECK:         %[[HI:.*]] = arith.cmpi sge, %{{.*}}, %c0
// CHECK:         %[[IN:.*]] = arith.andi %[[HI]], %[[LO]]
// CHECK:         %[[PICK:.*]] = arith.select %[[IN]], %[[HIT]], %[[MISS]]
// CHECK:         %[[ADD:.*]] = arith.addf %{{.*}}, %[[PICK]]
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %[[MISS]], %[[MISS]]
// CHECK:         arith.select %[[NAN]], %[[MISS]], %[[ADD]]
// The one-hot tensor lives on only inside the gradient's loop.
// CHECK:       linalg.generic
// CHECK-SAME:    ins(%{{.*}}, %{{.*}}, %[[SUM]] :
// CHECK:         linalg.index 1
// CHECK:         math.exp
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @cross_entropy_backward(%targets: tensor<4xi64>, %weight: tensor<4xf32>,
                                  %logp: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %onehot = linalg.generic {indexing_maps = [#row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%targets, %weight : tensor<4xi64>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%t: i64, %w: f32, %out: f32):
    %c = linalg.index 1 : index
    %ti = arith.index_cast %t : i64 to index
    %hit = arith.cmpi eq, %c, %ti : index
    %minus = arith.constant -1.0 : f32
    %zero = arith.constant 0.0 : f32
    %g = arith.select %hit, %minus, %zero : f32
    %v = arith.mulf %g, %w : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %r = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %grad = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%onehot, %logp, %sum : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%g: f32, %lp: f32, %s: f32, %out: f32):
    %p = math.exp %lp : f32
    %ps = arith.mulf %p, %s : f32
    %d = arith.subf %g, %ps : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %grad : tensor<4x8xf32>
}

// Tests the sums that stay reductions: off the target the element must be
// a constant zero times values that do not change along the sum (so that
// it is +-0 or NaN), the sum must start from +0, and the one-hot position
// must lie along the summed dimension.
// CHECK-LABEL: func.func @kept_sums
// CHECK-COUNT-5: iterator_types = ["parallel", "reduction"]
func.func @kept_sums(%targets: tensor<4xi64>, %weight: tensor<4xf32>,
                     %along: tensor<8xf32>, %columns: tensor<8xi64>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %r = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %init1 = linalg.fill ins(%one : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  // Off the target 0.5, not zero.
  %half = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%targets : tensor<4xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%t: i64, %out: f32):
    %c = linalg.index 1 : index
    %ti = arith.index_cast %t : i64 to index
    %hit = arith.cmpi eq, %c, %ti : index
    %minus = arith.constant -1.0 : f32
    %h = arith.constant 0.5 : f32
    %g = arith.select %hit, %minus, %h : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  %s0 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%half : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // Zero plus the weight is the weight off the target.
  %plus = linalg.generic {indexing_maps = [#row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%targets, %weight : tensor<4xi64>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%t: i64, %w: f32, %out: f32):
    %c = linalg.index 1 : index
    %ti = arith.index_cast %t : i64 to index
    %hit = arith.cmpi eq, %c, %ti : index
    %minus = arith.constant -1.0 : f32
    %z = arith.constant 0.0 : f32
    %g = arith.select %hit, %minus, %z : f32
    %v = arith.addf %g, %w : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%plus : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // A factor that changes along the sum.
  %varies = linalg.generic {indexing_maps = [#row, affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%targets, %along : tensor<4xi64>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%t: i64, %a: f32, %out: f32):
    %c = linalg.index 1 : index
    %ti = arith.index_cast %t : i64 to index
    %hit = arith.cmpi eq, %c, %ti : index
    %minus = arith.constant -1.0 : f32
    %z = arith.constant 0.0 : f32
    %g = arith.select %hit, %minus, %z : f32
    %v = arith.mulf %g, %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%varies : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // A sum that starts from 1.
  %onehot = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%targets : tensor<4xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%t: i64, %out: f32):
    %c = linalg.index 1 : index
    %ti = arith.index_cast %t : i64 to index
    %hit = arith.cmpi eq, %c, %ti : index
    %minus = arith.constant -1.0 : f32
    %z = arith.constant 0.0 : f32
    %g = arith.select %hit, %minus, %z : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  %s3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%onehot : tensor<4x8xf32>) outs(%init1 : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // One-hot along the rows, summed along the columns.
  %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%columns : tensor<8xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%t: i64, %out: f32):
    %c = linalg.index 0 : index
    %ti = arith.index_cast %t : i64 to index
    %hit = arith.cmpi eq, %c, %ti : index
    %minus = arith.constant -1.0 : f32
    %z = arith.constant 0.0 : f32
    %g = arith.select %hit, %minus, %z : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  %s4 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%rows : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %s0, %s1, %s2, %s3, %s4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Tests that the one-hot sum is folded before a producer of its chain is
// computed again in its consumers: the one-hot scaled by a row's weight
// (a tensor of the step, within the allowance for broadcast inputs) feeds
// the row sum and the gradient. Recomputed first, the scaled one-hot would
// leave the one-hot itself with two uses, written as a [rows, classes]
// tensor and summed by a reduction; folded first, neither is left.
// CHECK-LABEL: func.func @scaled_one_hot
// CHECK:       linalg.matvec
// CHECK-NOT:   iterator_types = ["parallel", "reduction"]
// CHECK:       %[[SUM:.*]] = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel"]
// CHECK:       linalg.generic
// CHECK-SAME:    ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[SUM]] :
// CHECK:         linalg.index 1
// CHECK:         math.exp
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @scaled_one_hot(%targets: tensor<4xi64>, %v: tensor<1024xf32>,
                          %logp: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %e = tensor.empty() : tensor<4x1024xf32>
  %onehot = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%targets : tensor<4xi64>) outs(%e : tensor<4x1024xf32>) {
  ^bb0(%t: i64, %out: f32):
    %c = linalg.index 1 : index
    %ti = arith.index_cast %t : i64 to index
    %hit = arith.cmpi eq, %c, %ti : index
    %minus = arith.constant -1.0 : f32
    %zero = arith.constant 0.0 : f32
    %g = arith.select %hit, %minus, %zero : f32
    linalg.yield %g : f32
  } -> tensor<4x1024xf32>
  %zero = arith.constant 0.0 : f32
  %r = tensor.empty() : tensor<4xf32>
  %w0 = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %weight = linalg.matvec ins(%logp, %v : tensor<4x1024xf32>, tensor<1024xf32>) outs(%w0 : tensor<4xf32>) -> tensor<4xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%onehot, %weight : tensor<4x1024xf32>, tensor<4xf32>) outs(%e : tensor<4x1024xf32>) {
  ^bb0(%g: f32, %w: f32, %out: f32):
    %s = arith.mulf %g, %w : f32
    linalg.yield %s : f32
  } -> tensor<4x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%scaled : tensor<4x1024xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %grad = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scaled, %logp, %sum : tensor<4x1024xf32>, tensor<4x1024xf32>, tensor<4xf32>) outs(%e : tensor<4x1024xf32>) {
  ^bb0(%g: f32, %lp: f32, %s: f32, %out: f32):
    %p = math.exp %lp : f32
    %ps = arith.mulf %p, %s : f32
    %d = arith.subf %g, %ps : f32
    linalg.yield %d : f32
  } -> tensor<4x1024xf32>
  return %grad : tensor<4x1024xf32>
}
