// RUN: zshard-opt %s --split-input-file --verify-diagnostics --zshard-shard

// One hand-written case for each diagnostic of zshard-shard's unit planning
// and gradient sums (lib/Transforms/Shard.cpp, GradientSums.cpp); the
// optimizer-update diagnostics are in zshard-shard-adamw.mlir, the gradient
// read outside its update and the missing units in zshard-shard-grad-norm.mlir
// and zshard-shard.mlir.

// A unit on a grid of dynamic size: its shard size is unknown.
shard.grid @world(shape = ?)
// expected-error @+1 {{zshard-shard needs a grid of static size}}
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      %q = arith.addf %a, %a : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A member that names no parameter of the step.
shard.grid @world(shape = 2)
// expected-error @+1 {{member 'fc.bias' is not a parameter of the step}}
zshard.unit @fc on @world[0] full_shard padded(8) param(f32) reduce(f32) ["fc.weight" : 4 at 0, "fc.bias" : 4 at 4]
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      %q = arith.addf %a, %a : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A unit sharded over two axes.
shard.grid @world(shape = 2x2)
// expected-error @+1 {{zshard-shard supports one shard axis for now}}
zshard.unit @fc on @world[0, 1] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      %q = arith.addf %a, %a : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A scalar parameter in a unit: its flat piece cannot be split by rows.
shard.grid @world(shape = 2)
// expected-error @+1 {{member 'fc.b' is a scalar; zshard-shard needs rank >= 1}}
zshard.unit @fc on @world[0] full_shard padded(6) param(f32) reduce(f32) ["fc.a" : 4 at 0, "fc.b" : scalar at 4]
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.a", zshard.init = #zshard.init<zeros>},
    %am: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %av: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg_sq", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %b: tensor<f32> {zshard.role = #zshard.role<param>, zshard.name = "fc.b", zshard.init = #zshard.init<zeros>},
    %bm: tensor<f32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %bv: tensor<f32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg_sq", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.a"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg_sq"},
        tensor<f32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.b"},
        tensor<f32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.b.exp_avg"},
        tensor<f32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.b.exp_avg_sq"})
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
  %a2, %am2, %av2 = zshard.adamw textbook %a, %ga, %am, %av lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  %gb = arith.constant dense<1.0> : tensor<f32> loc("fc")
  %b2, %bm2, %bv2 = zshard.adamw textbook %b, %gb, %bm, %bv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32> loc("fc")
  return %loss, %a2, %am2, %av2, %b2, %bm2, %bv2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32> loc("")
}

// -----

// no_shard: one all-reduce per unit after its last gradient; an update that
// runs before that gradient (fc.a's, before fc.b's gradient) cannot read it.
shard.grid @world(shape = 2)
// expected-error @+1 {{the optimizer update of 'fc.a' runs before the unit's last gradient}}
zshard.unit @fc on @world[0] no_shard padded(8) param(f32) reduce(f32) ["fc.a" : 4 at 0, "fc.b" : 4 at 4]
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
  %a2, %am2, %av2 = zshard.adamw textbook %a, %ga, %am, %av lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  %gbe = tensor.empty() : tensor<4xf32> loc("fc")
  %gb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%gbe : tensor<4xf32>) {
    ^bb0(%p0: f32, %out: f32):
      %q = arith.mulf %p0, %p0 : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %b2, %bm2, %bv2 = zshard.adamw textbook %b, %gb, %bm, %bv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %a2, %am2, %av2, %b2, %bm2, %bv2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// Whole sums of gradients (a global gradient norm) of units on two grids:
// their partial sums have no one group to be added up over.
shard.grid @world(shape = 2)
shard.grid @other(shape = 2)
zshard.unit @ua on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.a" : 4 at 0]
// expected-error @+1 {{shards gradients that a whole sum adds up on another grid or shard axes than unit 'ua'; zshard-shard needs one shard group for a sum across units}}
zshard.unit @ub on @other[0] full_shard padded(4) param(f32) reduce(f32) ["fc.b" : 4 at 0]
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
  %gbe = tensor.empty() : tensor<4xf32> loc("fc")
  %gb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%gbe : tensor<4xf32>) {
    ^bb0(%p0: f32, %out: f32):
      %q = arith.mulf %p0, %p0 : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %naz = tensor.empty() : tensor<f32> loc("")
  %na = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%ga : tensor<4xf32>) outs(%naz : tensor<f32>) {
    ^bb0(%p0: f32, %acc: f32):
      %q = arith.mulf %p0, %p0 : f32
      %s = arith.addf %acc, %q : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("")
  %nbz = tensor.empty() : tensor<f32> loc("")
  %nb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%gb : tensor<4xf32>) outs(%nbz : tensor<f32>) {
    ^bb0(%p0: f32, %acc: f32):
      %q = arith.mulf %p0, %p0 : f32
      %s = arith.addf %acc, %q : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("")
  %a2, %am2, %av2 = zshard.adamw textbook %a, %ga, %am, %av lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  %b2, %bm2, %bv2 = zshard.adamw textbook %b, %gb, %bm, %bv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %a2, %am2, %av2, %b2, %bm2, %bv2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// Whole sums of an f32 and a bf16 gradient: their partial sums are packed
// into one all-reduce, which takes one element type.
shard.grid @world(shape = 2)
zshard.unit @ua on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.a" : 4 at 0]
zshard.unit @ub on @world[0] full_shard padded(4) param(bf16) reduce(bf16) ["fc.b" : 4 at 0]
func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.a", zshard.init = #zshard.init<zeros>},
    %am: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %av: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg_sq", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %b: tensor<4xbf16> {zshard.role = #zshard.role<param>, zshard.name = "fc.b", zshard.init = #zshard.init<zeros>},
    %bm: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %bv: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg_sq", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.a"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg_sq"},
        tensor<4xbf16> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.b"},
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
  %gb = arith.constant dense<1.0> : tensor<4xbf16> loc("fc")
  %naz = tensor.empty() : tensor<f32> loc("")
  %na = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%ga : tensor<4xf32>) outs(%naz : tensor<f32>) {
    ^bb0(%p0: f32, %acc: f32):
      %q = arith.mulf %p0, %p0 : f32
      %s = arith.addf %acc, %q : f32
      linalg.yield %s : f32
    } -> tensor<f32>
  %nbz = tensor.empty() : tensor<bf16> loc("")
  // expected-error @+1 {{zshard-shard: whole sums over gradients of different element types cannot be reduced together}}
  %nb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%gb : tensor<4xbf16>) outs(%nbz : tensor<bf16>) {
    ^bb0(%p0: bf16, %acc: bf16):
      %q = arith.mulf %p0, %p0 : bf16
      %s = arith.addf %acc, %q : bf16
      linalg.yield %s : bf16
    } -> tensor<bf16>
  %a2, %am2, %av2 = zshard.adamw textbook %a, %ga, %am, %av lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  %b2, %bm2, %bv2 = zshard.adamw textbook %b, %gb, %bm, %bv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %a2, %am2, %av2, %b2, %bm2, %bv2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A step whose body is not one block: the phases are derived on one block.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{zshard-shard: cannot derive the phases of the step}}
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
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
  cf.br ^next loc("")
^next:
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      %q = arith.addf %a, %a : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// Two units on different grids in a step with a batch mean: the mean is
// over the ranks that hold slices of the batch, which must be one group.
shard.grid @g1(shape = 2)
shard.grid @g2(shape = 2)
zshard.unit @fc on @g1[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{spans other grid axes than unit 'fc'; zshard-shard needs one data-parallel group for the batch means}}
zshard.unit @fc2 on @g2[0] full_shard padded(4) param(f32) reduce(f32) ["fc2.weight" : 4 at 0]
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %w2: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc2.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m2: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc2.weight.exp_avg", zshard.param = "fc2.weight", zshard.init = #zshard.init<zeros>},
    %v2: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc2.weight.exp_avg_sq", zshard.param = "fc2.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc2.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc2.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc2.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %sum = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %w2, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %a2: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %p2 = arith.mulf %a2, %b : f32
      %s = arith.addf %acc, %p : f32
      %s2 = arith.addf %s, %p2 : f32
      linalg.yield %s2 : f32
    } -> tensor<f32> loc("fc")
  %n = zshard.batch_mean %lz : tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
    ins(%sum, %n : tensor<f32>, tensor<f32>) outs(%le : tensor<f32>) {
    ^bb0(%in: f32, %cnt: f32, %out: f32):
      %q = arith.divf %in, %cnt : f32
      linalg.yield %q : f32
    } -> tensor<f32> loc("")
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      %q = arith.addf %a, %a : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %ge2 = tensor.empty() : tensor<4xf32> loc("fc2")
  %g2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge2 : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      %q = arith.mulf %a, %a : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc2")
  %wn, %mn, %vn = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  %w2n, %m2n, %v2n = zshard.adamw textbook %w2, %g2, %m2, %v2 lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc2")
  return %loss, %wn, %w2n, %mn, %vn, %m2n, %v2n : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}
