// mlp2-step.mlir with a ReLU after fc.0 and, inside fc.0's forward, the
// op that only the backward needs: the ReLU's mask (h0 > 0), placed between
// the bias add and the ReLU, as a frontend may place it. The mask is in the
// backward phase (the loss does not depend on it) yet sits before the end
// of fc.0's forward; zshard-remat moves it down to its first user before it
// checkpoints fc.0 (test/Transforms/zshard-remat-rules.mlir).
//
// Not a test (lit excludes Inputs/).

#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> ()>
#scalar = affine_map<() -> ()>
// A[m, k] * B[n, k]^T and A[k, m]^T * B[k, n] as matmul indexing maps.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#at = affine_map<(d0, d1, d2) -> (d2, d0)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>

func.func @train_step(
    %w0: tensor<4x6xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %b0: tensor<6xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.bias", zshard.init = #zshard.init<zeros>},
    %w1: tensor<6x3xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.1.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %b1: tensor<3xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.1.bias", zshard.init = #zshard.init<zeros>},
    %mw0: tensor<4x6xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %mb0: tensor<6xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.bias.exp_avg", zshard.param = "fc.0.bias", zshard.init = #zshard.init<zeros>},
    %mw1: tensor<6x3xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.1.weight.exp_avg", zshard.param = "fc.1.weight", zshard.init = #zshard.init<zeros>},
    %mb1: tensor<3xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.1.bias.exp_avg", zshard.param = "fc.1.bias", zshard.init = #zshard.init<zeros>},
    %vw0: tensor<4x6xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg_sq", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %vb0: tensor<6xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.bias.exp_avg_sq", zshard.param = "fc.0.bias", zshard.init = #zshard.init<zeros>},
    %vw1: tensor<6x3xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.1.weight.exp_avg_sq", zshard.param = "fc.1.weight", zshard.init = #zshard.init<zeros>},
    %vb1: tensor<3xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.1.bias.exp_avg_sq", zshard.param = "fc.1.bias", zshard.init = #zshard.init<zeros>},
    %x: tensor<2x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %t: tensor<2x3xf32> {zshard.role = #zshard.role<batch>, zshard.name = "target"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %step: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x6xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<6xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.bias"},
        tensor<6x3xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.1.weight"},
        tensor<3xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.1.bias"},
        tensor<4x6xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"},
        tensor<6xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.bias.exp_avg"},
        tensor<6x3xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.1.weight.exp_avg"},
        tensor<3xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.1.bias.exp_avg"},
        tensor<4x6xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg_sq"},
        tensor<6xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.bias.exp_avg_sq"},
        tensor<6x3xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.1.weight.exp_avg_sq"},
        tensor<3xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.1.bias.exp_avg_sq"})
    attributes {zshard.step} {
  %zero = arith.constant 0.0 : f32

  // Forward: h0 = x w0 + b0, y = h0 w1 + b1.
  %e0 = tensor.empty() {zshard.path = "fc.0"} : tensor<2x6xf32>
  %z0 = linalg.fill {zshard.path = "fc.0"} ins(%zero : f32) outs(%e0 : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p0 = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w0 : tensor<2x4xf32>, tensor<4x6xf32>) outs(%z0 : tensor<2x6xf32>) -> tensor<2x6xf32>
  %h0 = linalg.generic {zshard.path = "fc.0", indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%p0, %b0 : tensor<2x6xf32>, tensor<6xf32>) outs(%e0 : tensor<2x6xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %s = arith.addf %in, %bias : f32
      linalg.yield %s : f32
    } -> tensor<2x6xf32>
  %mask = linalg.generic {zshard.path = "fc.0", indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<2x6xf32>) outs(%e0 : tensor<2x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %zf = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %pos = arith.cmpf ogt, %in, %zf : f32
      %m = arith.select %pos, %one, %zf : f32
      linalg.yield %m : f32
    } -> tensor<2x6xf32>
  %r0 = linalg.generic {zshard.path = "fc.0", indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<2x6xf32>) outs(%e0 : tensor<2x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %zf = arith.constant 0.0 : f32
      %r = arith.maximumf %in, %zf : f32
      linalg.yield %r : f32
    } -> tensor<2x6xf32>
  %e1 = tensor.empty() {zshard.path = "fc.1"} : tensor<2x3xf32>
  %z1 = linalg.fill {zshard.path = "fc.1"} ins(%zero : f32) outs(%e1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %p1 = linalg.matmul {zshard.path = "fc.1"} ins(%r0, %w1 : tensor<2x6xf32>, tensor<6x3xf32>) outs(%z1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = linalg.generic {zshard.path = "fc.1", indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%p1, %b1 : tensor<2x3xf32>, tensor<3xf32>) outs(%e1 : tensor<2x3xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %s = arith.addf %in, %bias : f32
      linalg.yield %s : f32
    } -> tensor<2x3xf32>

  // Loss = sum((y - t)^2) / 6 and its gradient dy = (y - t) / 3.
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %sq = linalg.generic {indexing_maps = [#x, #x, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y, %t : tensor<2x3xf32>, tensor<2x3xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %d = arith.subf %a, %b : f32
      %d2 = arith.mulf %d, %d : f32
      %s = arith.addf %acc, %d2 : f32
      linalg.yield %s : f32
    } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%sq : tensor<f32>) outs(%le : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %n = arith.constant 6.0 : f32
      %m = arith.divf %in, %n : f32
      linalg.yield %m : f32
    } -> tensor<f32>
  %dye = tensor.empty() : tensor<2x3xf32>
  %dy = linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%y, %t : tensor<2x3xf32>, tensor<2x3xf32>) outs(%dye : tensor<2x3xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %third = arith.constant 0.333333343 : f32
      %d = arith.subf %a, %b : f32
      %g = arith.mulf %d, %third : f32
      linalg.yield %g : f32
    } -> tensor<2x3xf32>

  // fc.1 backward: dh0 = dy w1^T, dw1 = h0^T dy, db1 = sum over rows of dy.
  %dh0e = tensor.empty() {zshard.path = "fc.1"} : tensor<2x6xf32>
  %dh0z = linalg.fill {zshard.path = "fc.1"} ins(%zero : f32) outs(%dh0e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %dh0 = linalg.matmul indexing_maps = [#a, #bt, #c] {zshard.path = "fc.1"} ins(%dy, %w1 : tensor<2x3xf32>, tensor<6x3xf32>) outs(%dh0z : tensor<2x6xf32>) -> tensor<2x6xf32>
  %dw1e = tensor.empty() {zshard.path = "fc.1"} : tensor<6x3xf32>
  %dw1z = linalg.fill {zshard.path = "fc.1"} ins(%zero : f32) outs(%dw1e : tensor<6x3xf32>) -> tensor<6x3xf32>
  %dw1 = linalg.matmul indexing_maps = [#at, #b, #c] {zshard.path = "fc.1"} ins(%r0, %dy : tensor<2x6xf32>, tensor<2x3xf32>) outs(%dw1z : tensor<6x3xf32>) -> tensor<6x3xf32>
  %db1e = tensor.empty() {zshard.path = "fc.1"} : tensor<3xf32>
  %db1z = linalg.fill {zshard.path = "fc.1"} ins(%zero : f32) outs(%db1e : tensor<3xf32>) -> tensor<3xf32>
  %db1 = linalg.generic {zshard.path = "fc.1", indexing_maps = [#x, #row], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<2x3xf32>) outs(%db1z : tensor<3xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    } -> tensor<3xf32>

  // fc.0 backward (no input gradient), through the ReLU's mask.
  %dpe = tensor.empty() {zshard.path = "fc.0"} : tensor<2x6xf32>
  %dp0 = linalg.generic {zshard.path = "fc.0", indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%dh0, %mask : tensor<2x6xf32>, tensor<2x6xf32>) outs(%dpe : tensor<2x6xf32>) {
    ^bb0(%g: f32, %k: f32, %out: f32):
      %p = arith.mulf %g, %k : f32
      linalg.yield %p : f32
    } -> tensor<2x6xf32>
  %dw0e = tensor.empty() {zshard.path = "fc.0"} : tensor<4x6xf32>
  %dw0z = linalg.fill {zshard.path = "fc.0"} ins(%zero : f32) outs(%dw0e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %dw0 = linalg.matmul indexing_maps = [#at, #b, #c] {zshard.path = "fc.0"} ins(%x, %dp0 : tensor<2x4xf32>, tensor<2x6xf32>) outs(%dw0z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %db0e = tensor.empty() {zshard.path = "fc.0"} : tensor<6xf32>
  %db0z = linalg.fill {zshard.path = "fc.0"} ins(%zero : f32) outs(%db0e : tensor<6xf32>) -> tensor<6xf32>
  %db0 = linalg.generic {zshard.path = "fc.0", indexing_maps = [#x, #row], iterator_types = ["reduction", "parallel"]}
      ins(%dp0 : tensor<2x6xf32>) outs(%db0z : tensor<6xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    } -> tensor<6xf32>

  // AdamW, weight decay on the weights only.
  %nw0, %nmw0, %nvw0 = zshard.adamw textbook %w0, %dw0, %mw0, %vw0 lr %lr step %step
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      {zshard.path = "fc.0"} : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
  %nb0, %nmb0, %nvb0 = zshard.adamw textbook %b0, %db0, %mb0, %vb0 lr %lr step %step
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.0)
      {zshard.path = "fc.0"} : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
  %nw1, %nmw1, %nvw1 = zshard.adamw textbook %w1, %dw1, %mw1, %vw1 lr %lr step %step
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      {zshard.path = "fc.1"} : tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>
  %nb1, %nmb1, %nvb1 = zshard.adamw textbook %b1, %db1, %mb1, %vb1 lr %lr step %step
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.0)
      {zshard.path = "fc.1"} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>

  return %loss, %nw0, %nb0, %nw1, %nb1,
         %nmw0, %nmb0, %nmw1, %nmb1,
         %nvw0, %nvb0, %nvw1, %nvb1
      : tensor<f32>, tensor<4x6xf32>, tensor<6xf32>, tensor<6x3xf32>, tensor<3xf32>,
        tensor<4x6xf32>, tensor<6xf32>, tensor<6x3xf32>, tensor<3xf32>,
        tensor<4x6xf32>, tensor<6xf32>, tensor<6x3xf32>, tensor<3xf32>
}
