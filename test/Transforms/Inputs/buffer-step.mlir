func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %s: tensor<4xf32> {zshard.role = #zshard.role<buffer>, zshard.name = "fc.scale", zshard.init = #zshard.init<ones>, zshard.persistent = true},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {zshard.path = "fc", indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %s, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %k: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %k : f32
      %q = arith.mulf %p, %b : f32
      %r = arith.addf %acc, %q : f32
      linalg.yield %r : f32
    } -> tensor<f32>
  %ge = tensor.empty() {zshard.path = "fc"} : tensor<4xf32>
  %g = linalg.generic {zshard.path = "fc", indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%s, %x : tensor<4xf32>, tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%k: f32, %b: f32, %out: f32):
      %q = arith.mulf %k, %b : f32
      linalg.yield %q : f32
    } -> tensor<4xf32>
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      {zshard.path = "fc"} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
