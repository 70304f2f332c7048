// RUN: zshard-opt %s --split-input-file --verify-diagnostics --zshard-shard | FileCheck %s

// Tests, on hand-written steps, how zshard-shard finds each parameter's
// zshard.adamw (OptimizerAnalysis) and rebuilds it on this rank's piece of
// the shards (ShardOptimizer), and one diagnostic for every form of update it
// refuses.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[LR:[a-z0-9]+]]: tensor<f32> {zshard.name = "lr", zshard.role = #zshard.role<hyper>}
// CHECK-SAME:    %[[T:[a-z0-9]+]]: tensor<f32> {zshard.name = "step", zshard.role = #zshard.role<hyper>}
// CHECK-SAME:    %[[PS:[a-z0-9]+]]: tensor<2xf32> {{{[^}]*}}zshard.role = #zshard.role<param_shard>
// CHECK-SAME:    %[[MS:[a-z0-9]+]]: tensor<2xf32> {{{[^}]*}}zshard.slot = "exp_avg"
// CHECK-SAME:    %[[VS:[a-z0-9]+]]: tensor<2xf32> {{{[^}]*}}zshard.slot = "exp_avg_sq"
// CHECK:       %[[GS:.*]] = zshard.reduce_scatter avg %{{.*}} on @world[0] unit @fc : tensor<4xf32> -> tensor<2xf32>
// CHECK:       %[[GP:.*]] = tensor.extract_slice %[[GS]][%[[AT:[0-9a-z_]+]]] [%[[LEN:[0-9a-z_]+]]] [1] : tensor<2xf32> to tensor<?xf32>
// CHECK-NEXT:  %[[PP:.*]] = tensor.extract_slice %[[PS]][%[[AT]]] [%[[LEN]]] [1] : tensor<2xf32> to tensor<?xf32>
// CHECK-NEXT:  %[[MP:.*]] = tensor.extract_slice %[[MS]][%[[AT]]] [%[[LEN]]] [1] : tensor<2xf32> to tensor<?xf32>
// CHECK-NEXT:  %[[VP:.*]] = tensor.extract_slice %[[VS]][%[[AT]]] [%[[LEN]]] [1] : tensor<2xf32> to tensor<?xf32>
// CHECK-NEXT:  %[[U0:[a-z_]+]], %[[U1:[a-z_]+]], %[[U2:[a-z_]+]] = zshard.adamw textbook %[[PP]], %[[GP]], %[[MP]], %[[VP]] lr %[[LR]] step %[[T]] betas(9.000000e-01, 0.94999999999999996) eps(1.000000e-08) weight_decay(1.000000e-01) : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32> loc("fc")
// CHECK-NEXT:  %[[P2:.*]] = tensor.insert_slice %[[U0]] into %[[PS]][%[[AT]]] [%[[LEN]]] [1] : tensor<?xf32> into tensor<2xf32>
// CHECK-NEXT:  %[[M2:.*]] = tensor.insert_slice %[[U1]] into %[[MS]][%[[AT]]] [%[[LEN]]] [1] : tensor<?xf32> into tensor<2xf32>
// CHECK-NEXT:  %[[V2:.*]] = tensor.insert_slice %[[U2]] into %[[VS]][%[[AT]]] [%[[LEN]]] [1] : tensor<?xf32> into tensor<2xf32>
// CHECK:       return %{{.*}}, %[[P2]], %[[M2]], %[[V2]] :

// full_shard: the update is rebuilt on this rank's piece of each operand, with
// the same order, scalars and hyper-parameters, and lands in the shards.
shard.grid @world(shape = 2)
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

// A param_out that no zshard.adamw makes.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{cannot shard the optimizer update of 'fc.weight': its param_out is not the new_param of a zshard.adamw}}
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
  return %loss, %g, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// An update the loss depends on is forward, not optimizer.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{cannot shard the optimizer update of 'fc.weight': its zshard.adamw is not in the optimizer phase}}
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%m2, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// An update of another value than the parameter.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{cannot shard the optimizer update of 'fc.weight': its zshard.adamw does not update the parameter argument}}
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
  %w2, %m2, %v2 = zshard.adamw textbook %x, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A moment that is not an argument.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{cannot shard the optimizer update of 'fc.weight': its exp_avg is not an argument of the step}}
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
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %g, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A moment that is another argument.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{cannot shard the optimizer update of 'fc.weight': its exp_avg_sq is argument 'x', which is not its own optimizer state}}
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
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %x lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A gradient the step does not compute.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{cannot shard the optimizer update of 'fc.weight': its gradient is not computed by the step}}
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
  %w2, %m2, %v2 = zshard.adamw textbook %w, %x, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A new moment that is not returned.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{cannot shard the optimizer update of 'fc.weight': result #1 of its update is not returned exactly once}}
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
  return %loss, %w2, %m, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}
