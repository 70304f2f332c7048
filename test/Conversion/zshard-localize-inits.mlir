// RUN: zshard-opt %s --pass-pipeline="builtin.module(func.func(zshard-localize-inits))" | FileCheck %s

// Tests that an init shared by ops of different phases (as CSE leaves it)
// becomes one copy per user, right before that user and in the user's
// phase; a fill of an empty is copied with its empty; an init used by the
// op right after it stays.
// CHECK-LABEL: func.func @step
// CHECK:      %[[F:.*]] = linalg.generic {{.*}} ins(%arg0
// CHECK-NEXT:   ^bb0
// CHECK:      } -> tensor<4xf32>
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() {zshard.phase = #zshard.phase<backward>} : tensor<4xf32>
// CHECK-NEXT: %[[Z1:.*]] = linalg.fill {zshard.phase = #zshard.phase<backward>} ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: linalg.add {zshard.phase = #zshard.phase<backward>} ins(%[[F]], %[[F]] : tensor<4xf32>, tensor<4xf32>) outs(%[[Z1]] : tensor<4xf32>)
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() {zshard.phase = #zshard.phase<optimizer>} : tensor<4xf32>
// CHECK-NEXT: %[[Z2:.*]] = linalg.fill {zshard.phase = #zshard.phase<optimizer>} ins(%{{.*}} : f32) outs(%[[E2]] : tensor<4xf32>)
// CHECK-NEXT: linalg.add {zshard.phase = #zshard.phase<optimizer>} ins(%arg1, %arg1 : tensor<4xf32>, tensor<4xf32>) outs(%[[Z2]] : tensor<4xf32>)
// CHECK-NOT:  tensor.empty
// CHECK:      return
func.func @step(%x: tensor<4xf32>, %p: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant {zshard.phase = #zshard.phase<forward>} 0.0 : f32
  %e = tensor.empty() {zshard.phase = #zshard.phase<forward>} : tensor<4xf32>
  %z = linalg.fill {zshard.phase = #zshard.phase<forward>} ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"], zshard.phase = #zshard.phase<forward>}
    ins(%x : tensor<4xf32>) outs(%z : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
  %g = linalg.add {zshard.phase = #zshard.phase<backward>} ins(%f, %f : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  %u = linalg.add {zshard.phase = #zshard.phase<optimizer>} ins(%p, %p : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  return %f, %g, %u : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
