// RUN: zshard-opt %s --split-input-file --verify-diagnostics

// Tests that each malformed part of a step ABI record is refused with one
// line naming it.

// expected-error @+1 {{abi_argument has the result role 'param_out'}}
module attributes {zshard.abi = #zshard.abi_argument<role = param_out, name = "w", type = tensor<4xf32>>} {}

// -----

// expected-error @+1 {{abi_argument (param) needs a non-empty name}}
module attributes {zshard.abi = #zshard.abi_argument<role = param, name = "", type = tensor<4xf32>>} {}

// -----

// expected-error @+1 {{abi_result has the argument role 'param'}}
module attributes {zshard.abi = #zshard.abi_result<role = param, type = tensor<4xf32>>} {}

// -----

// expected-error @+1 {{abi_slot needs a non-empty slot name}}
module attributes {zshard.abi = #zshard.abi_slot<slot = "", type = f32, inits = []>} {}

// -----

// expected-error @+1 {{abi_slot init #0 is 3 : i64, not a #zshard.init}}
module attributes {zshard.abi = #zshard.abi_slot<slot = "m", type = f32, inits = [3]>} {}

// -----

// expected-error @+1 {{abi_unit needs a non-empty name}}
module attributes {zshard.abi = #zshard.abi_unit<name = "", strategy = full_shard, shard_axes = [0], padded = 4, shard_size = 2, param_type = f32, reduce_type = f32, members = [], inits = [], slots = []>} {}

// -----

// expected-error @+1 {{abi_unit member #0 is "w", not a #zshard.member}}
module attributes {zshard.abi = #zshard.abi_unit<name = "u", strategy = full_shard, shard_axes = [0], padded = 4, shard_size = 2, param_type = f32, reduce_type = f32, members = ["w"], inits = [#zshard.init<zeros>], slots = []>} {}

// -----

// expected-error @+1 {{abi_unit slot #0 is "m", not a #zshard.abi_slot}}
module attributes {zshard.abi = #zshard.abi_unit<name = "u", strategy = full_shard, shard_axes = [0], padded = 4, shard_size = 2, param_type = f32, reduce_type = f32, members = [], inits = [], slots = ["m"]>} {}

// -----

// expected-error @+1 {{abi_unit 'u' has 1 members but 0 inits}}
module attributes {zshard.abi = #zshard.abi_unit<name = "u", strategy = full_shard, shard_axes = [0], padded = 4, shard_size = 2, param_type = f32, reduce_type = f32, members = [#zshard.member<"u.w" : 4 at 0>], inits = [], slots = []>} {}

// -----

// expected-error @+1 {{step_abi needs the name of its step}}
module attributes {zshard.abi = #zshard.step_abi<step = "", arguments = [], results = [], units = [], ranks = 1>} {}

// -----

// expected-error @+1 {{step_abi argument #0 is "w", not a #zshard.abi_argument}}
module attributes {zshard.abi = #zshard.step_abi<step = "s", arguments = ["w"], results = [], units = [], ranks = 1>} {}

// -----

// expected-error @+1 {{step_abi result #0 is "l", not a #zshard.abi_result}}
module attributes {zshard.abi = #zshard.step_abi<step = "s", arguments = [], results = ["l"], units = [], ranks = 1>} {}

// -----

// expected-error @+1 {{step_abi unit #0 is "u", not a #zshard.abi_unit}}
module attributes {zshard.abi = #zshard.step_abi<step = "s", arguments = [], results = [], units = ["u"], ranks = 1>} {}

// -----

// expected-error @+1 {{step_abi needs at least one rank, got 0}}
module attributes {zshard.abi = #zshard.step_abi<step = "s", arguments = [], results = [], units = [], ranks = 0>} {}

// -----

// expected-error @+1 {{step_abi has a chip ('sm_90') but its target is not cuda}}
module attributes {zshard.abi = #zshard.step_abi<step = "s", arguments = [], results = [], units = [], ranks = 1, chip = "sm_90">} {}

// -----

// An argument's init spec is a #zshard.init, checked as the contract's are.
// expected-error @+2 {{invalid init spec 'uniform(1, 1)': LOW must be < HIGH}}
// expected-error @+1 {{failed to parse ZShard_ABIArgumentAttr parameter 'init'}}
module attributes {zshard.abi = #zshard.abi_argument<role = param, name = "w", type = tensor<4xf32>, init = #zshard.init<uniform(1, 1)>>} {}

// -----

// expected-error @+1 {{abi_slot init #0 is "", not a #zshard.init}}
module attributes {zshard.abi = #zshard.abi_slot<slot = "m", type = f32, inits = [""]>} {}

// -----

// expected-error @+1 {{abi_unit init #1 is "random", not a #zshard.init}}
module attributes {zshard.abi = #zshard.abi_unit<name = "u", strategy = full_shard, shard_axes = [0], padded = 8, shard_size = 4, param_type = f32, reduce_type = f32, members = [#zshard.member<"u.w" : 4 at 0>, #zshard.member<"u.b" : 4 at 4>], inits = [#zshard.init<zeros>, "random"], slots = []>} {}
