// A hand-written training step whose loss is a mean over counted
// positions, for the batch-mean tests: one linear layer `fc` (4 -> 3, no
// bias), batch 2, a squared error over the positions the 0/1 `mask` marks,
// divided by the number of marked positions of the global batch:
//
//   loss = sum(mask * (y - t)^2) / batch_mean(sum(mask))
//   dy   = 2 * mask * (y - t) / batch_mean(sum(mask))
//
// as the exporter writes cross-entropy with ignore_index. Module paths are
// the ops' zshard.path attributes; the unit `fc` has 12 elements.
//
// Not a test (lit excludes Inputs/).

#x = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
#scalar = affine_map<() -> ()>
#at = affine_map<(d0, d1, d2) -> (d2, d0)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

func.func @train_step(
    %w: tensor<4x3xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x3xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4x3xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<2x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %t: tensor<2x3xf32> {zshard.role = #zshard.role<batch>, zshard.name = "target"},
    %mask: tensor<2x3xf32> {zshard.role = #zshard.role<batch>, zshard.name = "mask"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %step: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x3xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4x3xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4x3xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %zero = arith.constant 0.0 : f32

  // Forward: y = x w.
  %e = tensor.empty() {zshard.path = "fc"} : tensor<2x3xf32>
  %z = linalg.fill {zshard.path = "fc"} ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = linalg.matmul {zshard.path = "fc"} ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>

  // The count of marked positions, and its mean over the global batch.
  %ce = tensor.empty() : tensor<f32>
  %cz = linalg.fill ins(%zero : f32) outs(%ce : tensor<f32>) -> tensor<f32>
  %count = linalg.generic {indexing_maps = [#x, #all], iterator_types = ["reduction", "reduction"]}
      ins(%mask : tensor<2x3xf32>) outs(%cz : tensor<f32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    } -> tensor<f32>
  %n = zshard.batch_mean %count : tensor<f32>

  // Loss and its gradient.
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %sq = linalg.generic {indexing_maps = [#x, #x, #x, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y, %t, %mask : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %k: f32, %acc: f32):
      %d = arith.subf %a, %b : f32
      %d2 = arith.mulf %d, %d : f32
      %kd2 = arith.mulf %k, %d2 : f32
      %s = arith.addf %acc, %kd2 : f32
      linalg.yield %s : f32
    } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []}
      ins(%sq, %n : tensor<f32>, tensor<f32>) outs(%le : tensor<f32>) {
    ^bb0(%in: f32, %cnt: f32, %out: f32):
      %q = arith.divf %in, %cnt : f32
      linalg.yield %q : f32
    } -> tensor<f32>
  %dye = tensor.empty() : tensor<2x3xf32>
  %dy = linalg.generic {indexing_maps = [#x, #x, #x, #all, #x], iterator_types = ["parallel", "parallel"]}
      ins(%y, %t, %mask, %n : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>) outs(%dye : tensor<2x3xf32>) {
    ^bb0(%a: f32, %b: f32, %k: f32, %cnt: f32, %out: f32):
      %two = arith.constant 2.0 : f32
      %d = arith.subf %a, %b : f32
      %kd = arith.mulf %k, %d : f32
      %g2 = arith.mulf %kd, %two : f32
      %g = arith.divf %g2, %cnt : f32
      linalg.yield %g : f32
    } -> tensor<2x3xf32>

  // fc backward: dw = x^T dy.
  %dwe = tensor.empty() {zshard.path = "fc"} : tensor<4x3xf32>
  %dwz = linalg.fill {zshard.path = "fc"} ins(%zero : f32) outs(%dwe : tensor<4x3xf32>) -> tensor<4x3xf32>
  %dw = linalg.matmul indexing_maps = [#at, #b, #c] {zshard.path = "fc"} ins(%x, %dy : tensor<2x4xf32>, tensor<2x3xf32>) outs(%dwz : tensor<4x3xf32>) -> tensor<4x3xf32>

  %nw, %nm, %nv = zshard.adamw textbook %w, %dw, %m, %v lr %lr step %step
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.0)
      {zshard.path = "fc"} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  return %loss, %nw, %nm, %nv : tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}
