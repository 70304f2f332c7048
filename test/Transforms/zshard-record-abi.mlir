// RUN: zshard-opt %s --split-input-file --zshard-record-abi | FileCheck %s
// RUN: zshard-opt %s --split-input-file --zshard-record-abi="target=cuda chip=sm_80" | FileCheck %s --check-prefix=CUDA
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-shard-step="pattern=fc.<i> strategy=hybrid_shard ranks=4 replicas=2 offload=true" --zshard-record-abi | FileCheck %s --check-prefix=SHARDED
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-record-abi --zshard-record-abi | FileCheck %s --check-prefix=TWICE

// Tests that the record holds every argument in order with its role, name,
// type and init spec, the optimizer state's parameter, a buffer's
// persistence and a hyper's recorded value; the results with their roles
// and names, none in place yet; no units and no grid on an unsharded step,
// one rank, the module's string attributes, and the target given (cpu by
// default, cuda with its chip).
// CHECK-LABEL: module attributes
// CHECK-SAME:  zshard.abi = #zshard.step_abi<step = "train_step",
// CHECK-SAME:  arguments = [#zshard.abi_argument<role = param, name = "fc.weight", type = tensor<4xf32>, init = #zshard.init<zeros>>,
// CHECK-SAME:  #zshard.abi_argument<role = buffer, name = "fc.scale", type = tensor<4xf32>, init = #zshard.init<ones>, persistent = true>,
// CHECK-SAME:  #zshard.abi_argument<role = opt_state, name = "fc.weight.exp_avg", type = tensor<4xf32>, init = #zshard.init<zeros>, param = "fc.weight">,
// CHECK-SAME:  #zshard.abi_argument<role = batch, name = "x", type = tensor<2x4xf32>>,
// CHECK-SAME:  #zshard.abi_argument<role = hyper, name = "lr", type = tensor<f32>, recorded = 2.500000e-01 : f64>],
// CHECK-SAME:  results = [#zshard.abi_result<role = loss, type = tensor<f32>>,
// CHECK-SAME:  #zshard.abi_result<role = param_out, name = "fc.weight", type = tensor<4xf32>>,
// CHECK-SAME:  #zshard.abi_result<role = opt_state_out, name = "fc.weight.exp_avg", type = tensor<4xf32>>],
// CHECK-SAME:  units = [], ranks = 1, module_attrs = {zshard.model = "tiny"}>
// CHECK-SAME:  zshard.model = "tiny"
// CUDA-LABEL:  module attributes
// CUDA-SAME:   ranks = 1, module_attrs = {zshard.model = "tiny"}, target = cuda, chip = "sm_80">
module attributes {zshard.model = "tiny"} {
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %s: tensor<4xf32> {zshard.role = #zshard.role<buffer>, zshard.name = "fc.scale", zshard.init = #zshard.init<ones>, zshard.persistent = true},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<2x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr", zshard.default = 2.5e-01 : f64})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"})
    attributes {zshard.step} {
  return %lr, %w, %m : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
}

// -----

// Tests that a step without string module attributes records none, and
// that a non-persistent buffer is recorded so.
// CHECK-LABEL: module attributes
// CHECK-SAME:  #zshard.abi_argument<role = buffer, name = "rope", type = tensor<4xf32>, init = #zshard.init<zeros>, persistent = false>
// CHECK-SAME:  units = [], ranks = 1>}
// CHECK-NOT:   module_attrs
// CUDA-LABEL:  module attributes
// CUDA-SAME:   ranks = 1, target = cuda, chip = "sm_80">}
func.func @step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %r: tensor<4xf32> {zshard.role = #zshard.role<buffer>, zshard.name = "rope", zshard.init = #zshard.init<zeros>, zshard.persistent = false})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"})
    attributes {zshard.step} {
  %l = tensor.empty() : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// Tests that a sharded step's record names each shard's unit and slot, its
// members' init specs, the host placement of offloaded state, the results'
// units and slots, each unit's layout and slots, the grid and the ranks.
// SHARDED-LABEL: module attributes
// SHARDED-SAME:  #zshard.abi_argument<role = batch, name = "x", type = tensor<2x4xf32>>
// SHARDED-SAME:  #zshard.abi_argument<role = param_shard, name = "fc.0", type = tensor<15xf32>, unit = "fc.0">
// SHARDED-SAME:  #zshard.abi_argument<role = opt_state_shard, name = "fc.0.exp_avg", type = tensor<15xf32>, unit = "fc.0", slot = "exp_avg", placement = host>
// SHARDED-SAME:  results = [#zshard.abi_result<role = loss, type = tensor<f32>>
// SHARDED-SAME:  #zshard.abi_result<role = param_shard_out, name = "fc.0", type = tensor<15xf32>, unit = "fc.0">
// SHARDED-SAME:  #zshard.abi_result<role = opt_state_shard_out, name = "fc.0.exp_avg", type = tensor<15xf32>, unit = "fc.0", slot = "exp_avg">
// SHARDED-SAME:  units = [#zshard.abi_unit<name = "fc.0", strategy = hybrid_shard, shard_axes = [1], replicate_axes = [0], padded = 30, shard_size = 15, param_type = f32, reduce_type = f32,
// SHARDED-SAME:  members = [#zshard.member<"fc.0.weight" : 4x6 at 0>, #zshard.member<"fc.0.bias" : 6 at 24>], inits = [#zshard.init<normal(0, 0.02)>, #zshard.init<zeros>],
// SHARDED-SAME:  slots = [#zshard.abi_slot<slot = "exp_avg", type = f32, inits = [#zshard.init<zeros>, #zshard.init<zeros>]>, #zshard.abi_slot<slot = "exp_avg_sq", type = f32, inits = [#zshard.init<zeros>, #zshard.init<zeros>]>]>
// SHARDED-SAME:  grid = "world", grid_shape = [2, 2], ranks = 4>

// Tests that recording again replaces the record by an equal one.
// TWICE:     zshard.abi = #zshard.step_abi<
// TWICE-NOT: zshard.abi =
