// RUN: zshard-opt %s --zshard-annotate-phases | FileCheck %s

// Tests that PhaseAnalysis puts what the loss depends on in forward, what
// depends on optimizer state or hyper-parameters in optimizer, the rest in
// backward, and constants and empty tensors in the earliest phase of their
// users.

// CHECK-LABEL: func.func @train_step
// CHECK:      arith.constant {zshard.phase = #zshard.phase<forward>} 0.0
// CHECK-NEXT: tensor.empty() {zshard.phase = #zshard.phase<forward>}
// CHECK-NEXT: linalg.fill {zshard.phase = #zshard.phase<forward>}
// CHECK-NEXT: linalg.matmul {zshard.phase = #zshard.phase<forward>}
// CHECK-NEXT: tensor.empty() {zshard.phase = #zshard.phase<forward>}
// CHECK-NEXT: linalg.fill {zshard.phase = #zshard.phase<forward>}
// CHECK-NEXT: linalg.reduce {{.*}} {zshard.phase = #zshard.phase<forward>}
// CHECK:      arith.constant {zshard.phase = #zshard.phase<backward>} 1.0
// CHECK-NEXT: tensor.empty() {zshard.phase = #zshard.phase<backward>}
// CHECK-NEXT: linalg.fill {zshard.phase = #zshard.phase<backward>}
// CHECK-NEXT: tensor.empty() {zshard.phase = #zshard.phase<backward>}
// CHECK-NEXT: linalg.fill {zshard.phase = #zshard.phase<backward>}
// CHECK-NEXT: linalg.matmul {{.*}}zshard.phase = #zshard.phase<backward>
// CHECK-NEXT: linalg.add {zshard.phase = #zshard.phase<optimizer>}
// CHECK-NEXT: tensor.extract {{.*}}{zshard.phase = #zshard.phase<optimizer>}
// CHECK-NEXT: linalg.generic {{.*}}zshard.phase = #zshard.phase<optimizer>
// CHECK-NOT:  arith.mulf {{.*}}zshard.phase
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
}
