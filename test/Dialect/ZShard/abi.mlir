// RUN: zshard-opt %s | zshard-opt | FileCheck %s

// Tests that a step ABI record round-trips: every argument, result, unit and
// slot field, the optional ones left out where they take their defaults.
// CHECK-LABEL: module attributes
// CHECK-SAME:  zshard.abi = #zshard.step_abi<step = "train_step",
// CHECK-SAME:  arguments = [#zshard.abi_argument<role = param_shard, name = "h.0", type = tensor<8xf32>, unit = "h.0">,
// CHECK-SAME:  #zshard.abi_argument<role = opt_state_shard, name = "h.0.exp_avg", type = tensor<8xf32>, init = #zshard.init<zeros>, unit = "h.0", slot = "exp_avg", placement = host>,
// CHECK-SAME:  #zshard.abi_argument<role = buffer, name = "rope", type = tensor<4xf32>, init = #zshard.init<ones>, persistent = false>,
// CHECK-SAME:  #zshard.abi_argument<role = hyper, name = "lr", type = tensor<f32>, recorded = 1.000000e-03 : f64>],
// CHECK-SAME:  results = [#zshard.abi_result<role = loss, type = tensor<f32>>,
// CHECK-SAME:  #zshard.abi_result<role = param_shard_out, name = "h.0", type = tensor<8xf32>, unit = "h.0", in_place = true>],
// CHECK-SAME:  units = [#zshard.abi_unit<name = "h.0", strategy = hybrid_shard, shard_axes = [1], replicate_axes = [0], padded = 16, shard_size = 8, param_type = bf16, reduce_type = f32, buffer_type = bf16, members = [#zshard.member<"h.0.w" : 4x3 at 0>], inits = [#zshard.init<normal(0, 0.02)>], slots = [#zshard.abi_slot<slot = "exp_avg", type = f32, inits = [#zshard.init<zeros>]>]>],
// CHECK-SAME:  grid = "world", grid_shape = [2, -1], ranks = 2, module_attrs = {zshard.model = "gpt"}, target = cuda, chip = "sm_90", peak_bytes = 1024 : i64>
module attributes {zshard.abi = #zshard.step_abi<step = "train_step",
    arguments = [
      #zshard.abi_argument<role = param_shard, name = "h.0", type = tensor<8xf32>, unit = "h.0">,
      #zshard.abi_argument<role = opt_state_shard, name = "h.0.exp_avg", type = tensor<8xf32>, init = #zshard.init<zeros>, unit = "h.0", slot = "exp_avg", placement = host>,
      #zshard.abi_argument<role = buffer, name = "rope", type = tensor<4xf32>, init = #zshard.init<ones>, persistent = false>,
      #zshard.abi_argument<role = hyper, name = "lr", type = tensor<f32>, placement = device, recorded = 1.0e-03 : f64>],
    results = [
      #zshard.abi_result<role = loss, type = tensor<f32>>,
      #zshard.abi_result<role = param_shard_out, name = "h.0", type = tensor<8xf32>, unit = "h.0", in_place = true>],
    units = [
      #zshard.abi_unit<name = "h.0", strategy = hybrid_shard, shard_axes = [1], replicate_axes = [0], padded = 16, shard_size = 8, param_type = bf16, reduce_type = f32, buffer_type = bf16, members = [#zshard.member<"h.0.w" : 4x3 at 0>], inits = [#zshard.init<normal(0, 0.02)>], slots = [#zshard.abi_slot<slot = "exp_avg", type = f32, inits = [#zshard.init<zeros>]>]>],
    grid = "world", grid_shape = [2, -1], ranks = 2,
    module_attrs = {zshard.model = "gpt"}, target = cuda, chip = "sm_90",
    peak_bytes = 1024 : i64>} {
}
