// RUN: zshard-opt %s --split-input-file --verify-diagnostics --zshard-form-units

// The step already has units: zshard-form-units runs once.
// expected-error @+1 {{zshard-form-units: the module already has units; form them once}}
module {
shard.grid @g(shape = 2)
zshard.unit @fc on @g[0] full_shard padded(8) param(f32) reduce(f32) ["fc.a" : 4 at 0, "fc.b" : 4 at 4]
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.a", zshard.init = #zshard.init<zeros>},
    %am: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %av: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg_sq", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %b: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.b", zshard.init = #zshard.init<zeros>},
    %bm: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %bv: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg_sq", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.a"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg_sq"},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.b"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.b.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.b.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%a, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%p0: f32, %p1: f32, %acc: f32):
      %p = arith.mulf %p0, %p1 : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %gae = tensor.empty() : tensor<4xf32> loc("fc")
  %ga = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%gae : tensor<4xf32>) {
    ^bb0(%p0: f32, %out: f32):
      %q = arith.addf %p0, %p0 : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %gb = arith.constant dense<1.0> : tensor<4xf32> loc("fc")
  %a2, %am2, %av2 = zshard.adamw textbook %a, %ga, %am, %av lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  %b2, %bm2, %bv2 = zshard.adamw textbook %b, %gb, %bm, %bv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %a2, %am2, %av2, %b2, %bm2, %bv2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}
}

// -----

// The grid zshard-form-units declares, @world, names another symbol.
// expected-error @+1 {{zshard-form-units: the symbol @world is taken}}
module {
shard.grid @world(shape = 2)
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.a", zshard.init = #zshard.init<zeros>},
    %am: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %av: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg_sq", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %b: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.b", zshard.init = #zshard.init<zeros>},
    %bm: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %bv: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg_sq", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.a"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg_sq"},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.b"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.b.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.b.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%a, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%p0: f32, %p1: f32, %acc: f32):
      %p = arith.mulf %p0, %p1 : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %gae = tensor.empty() : tensor<4xf32> loc("fc")
  %ga = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%gae : tensor<4xf32>) {
    ^bb0(%p0: f32, %out: f32):
      %q = arith.addf %p0, %p0 : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %gb = arith.constant dense<1.0> : tensor<4xf32> loc("fc")
  %a2, %am2, %av2 = zshard.adamw textbook %a, %ga, %am, %av lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  %b2, %bm2, %bv2 = zshard.adamw textbook %b, %gb, %bm, %bv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %a2, %am2, %av2, %b2, %bm2, %bv2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}
}
