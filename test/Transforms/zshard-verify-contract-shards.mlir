// RUN: zshard-opt %s -split-input-file -verify-diagnostics --zshard-verify-contract

// The signature rules of a sharded step's shard arguments (docs/contract.md),
// one diagnostic each; the unsharded rules are in zshard-verify-contract.mlir.

// A parameter shard without its unit.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{argument #0 ('fc') needs a zshard.unit naming its unit}}
func.func @train_step(
    %p: tensor<2xf32> {zshard.inits = [#zshard.init<zeros>], zshard.name = "fc", zshard.role = #zshard.role<param_shard>},
    %s: tensor<2xf32> {zshard.inits = [#zshard.init<zeros>], zshard.name = "fc.exp_avg", zshard.role = #zshard.role<opt_state_shard>, zshard.slot = "exp_avg", zshard.unit = @fc},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<2xf32> {zshard.name = "fc", zshard.role = #zshard.role<param_shard_out>, zshard.unit = @fc},
        tensor<2xf32> {zshard.name = "fc.exp_avg", zshard.role = #zshard.role<opt_state_shard_out>, zshard.unit = @fc})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %loss = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  return %loss, %p, %s : tensor<f32>, tensor<2xf32>, tensor<2xf32> loc("")
}

// -----

// An optimizer-state shard without its slot.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{argument #1 ('fc.exp_avg') needs a zshard.slot}}
func.func @train_step(
    %p: tensor<2xf32> {zshard.inits = [#zshard.init<zeros>], zshard.name = "fc", zshard.role = #zshard.role<param_shard>, zshard.unit = @fc},
    %s: tensor<2xf32> {zshard.inits = [#zshard.init<zeros>], zshard.name = "fc.exp_avg", zshard.role = #zshard.role<opt_state_shard>, zshard.unit = @fc},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<2xf32> {zshard.name = "fc", zshard.role = #zshard.role<param_shard_out>, zshard.unit = @fc},
        tensor<2xf32> {zshard.name = "fc.exp_avg", zshard.role = #zshard.role<opt_state_shard_out>, zshard.unit = @fc})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %loss = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  return %loss, %p, %s : tensor<f32>, tensor<2xf32>, tensor<2xf32> loc("")
}

// -----

// A shard without the init specs of its members.
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
// expected-error @+1 {{argument #0 ('fc') needs zshard.inits, one init spec per member}}
func.func @train_step(
    %p: tensor<2xf32> {zshard.name = "fc", zshard.role = #zshard.role<param_shard>, zshard.unit = @fc},
    %s: tensor<2xf32> {zshard.inits = [#zshard.init<zeros>], zshard.name = "fc.exp_avg", zshard.role = #zshard.role<opt_state_shard>, zshard.slot = "exp_avg", zshard.unit = @fc},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<2xf32> {zshard.name = "fc", zshard.role = #zshard.role<param_shard_out>, zshard.unit = @fc},
        tensor<2xf32> {zshard.name = "fc.exp_avg", zshard.role = #zshard.role<opt_state_shard_out>, zshard.unit = @fc})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %loss = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  return %loss, %p, %s : tensor<f32>, tensor<2xf32>, tensor<2xf32> loc("")
}
