// RUN: zshard-opt %s --split-input-file --verify-diagnostics

// Tests that the dialect refuses each malformed contract attribute of a
// step's arguments and results with one line naming the argument or result.
// The semantic rules (which roles need which attributes, names, shapes) are
// zshard-verify-contract's (test/Transforms/zshard-verify-contract*.mlir).

// Tests that a role written as a string, the spelling before roles were
// typed, is told how to write it.
// expected-error @+1 {{'func.func' op argument #0 attribute 'zshard.role' must be a #zshard.role, not the string "param" (write #zshard.role<param>)}}
func.func private @f(tensor<4xf32> {zshard.role = "param"})

// -----

// Tests that a string that is no role gets an example.
// expected-error @+1 {{'func.func' op argument #0 attribute 'zshard.role' must be a #zshard.role such as #zshard.role<param>, got "input"}}
func.func private @f(tensor<4xf32> {zshard.role = "input"})

// -----

// Tests that a result's role string gets the result's example.
// expected-error @+1 {{'func.func' op result #0 attribute 'zshard.role' must be a #zshard.role such as #zshard.role<loss>, got "metric"}}
func.func private @f() -> (tensor<f32> {zshard.role = "metric"})

// -----

// Tests that an unknown role is a parse error naming the role.
// expected-error @+2 {{expected ::mlir::zshard::Role to be one of: param, opt_state, batch, hyper, param_shard, opt_state_shard, buffer, loss, param_out, opt_state_out, param_shard_out, opt_state_shard_out}}
// expected-error @+1 {{failed to parse ZShard_RoleAttr parameter 'value'}}
func.func private @f(tensor<4xf32> {zshard.role = #zshard.role<input>})

// -----

// Tests that a result's role on a tensor argument is refused.
// expected-error @+1 {{'func.func' op argument #0 has the result role #zshard.role<param_out>; an argument's role is one of param, opt_state, buffer, batch, hyper, param_shard, opt_state_shard}}
func.func private @f(tensor<4xf32> {zshard.role = #zshard.role<param_out>})

// -----

// Tests that an argument's role on a result is refused (a buffer is never
// updated).
// expected-error @+1 {{'func.func' op result #0 has the argument role #zshard.role<buffer>; a result's role is one of loss, param_out, opt_state_out, param_shard_out, opt_state_shard_out}}
func.func private @f() -> (tensor<4xf32> {zshard.role = #zshard.role<buffer>})

// -----

// Tests that an init spec written as a string is told how to write it.
// expected-error @+1 {{'func.func' op argument #0 attribute 'zshard.init' must be a #zshard.init, not the string "normal(0, 0.02)" (write #zshard.init<normal(0, 0.02)>)}}
func.func private @f(tensor<4xf32> {zshard.init = "normal(0, 0.02)"})

// -----

// Tests that a string that is no init spec gets an example.
// expected-error @+1 {{'func.func' op argument #0 attribute 'zshard.init' must be a #zshard.init such as #zshard.init<normal(0, 0.02)>, got "normal(0)"}}
func.func private @f(tensor<4xf32> {zshard.init = "normal(0)"})

// -----

// Tests that an unknown init kind is refused with the grammar.
// expected-error @+1 {{unknown init 'gaussian'; expected normal(MEAN, STD), uniform(LOW, HIGH), zeros, ones or param}}
func.func private @f(tensor<4xf32> {zshard.init = #zshard.init<gaussian(0, 1)>})

// -----

// Tests that a normal init needs both numbers.
// expected-error @+1 {{expected ','}}
func.func private @f(tensor<4xf32> {zshard.init = #zshard.init<normal(0)>})

// -----

// Tests that a negative standard deviation is refused in the runtime's words.
// expected-error @+1 {{invalid init spec 'normal(0, -1)': STD must be >= 0}}
func.func private @f(tensor<4xf32> {zshard.init = #zshard.init<normal(0, -1)>})

// -----

// Tests that an empty uniform range is refused in the runtime's words.
// expected-error @+1 {{invalid init spec 'uniform(1, 1)': LOW must be < HIGH}}
func.func private @f(tensor<4xf32> {zshard.init = #zshard.init<uniform(1, 1)>})

// -----

// Tests that member inits are an array of #zshard.init.
// expected-error @+1 {{'func.func' op argument #0 attribute 'zshard.inits' must be an array of #zshard.init, one per unit member such as [#zshard.init<zeros>, #zshard.init<ones>], got ["zeros"]}}
func.func private @f(tensor<4xf32> {zshard.inits = ["zeros"]})

// -----

// Tests that a placement written as a string is told how to write it.
// expected-error @+1 {{'func.func' op argument #0 attribute 'zshard.placement' must be #zshard.placement<device> or #zshard.placement<host>, not the string "host" (write #zshard.placement<host>)}}
func.func private @f(tensor<4xf32> {zshard.placement = "host"})

// -----

// Tests that an unknown placement is refused.
// expected-error @+1 {{'func.func' op argument #0 attribute 'zshard.placement' must be #zshard.placement<device> or #zshard.placement<host>, got "disk"}}
func.func private @f(tensor<4xf32> {zshard.placement = "disk"})

// -----

// Tests that a name is a string.
// expected-error @+1 {{'func.func' op argument #0 attribute 'zshard.name' must be a string, got 3 : i64}}
func.func private @f(tensor<4xf32> {zshard.name = 3})

// -----

// Tests that a unit is a symbol.
// expected-error @+1 {{'func.func' op result #0 attribute 'zshard.unit' must be a unit symbol (@name), got "h.0"}}
func.func private @f() -> (tensor<4xf32> {zshard.unit = "h.0"})

// -----

// Tests that an unknown argument attribute is refused with the known ones.
// expected-error @+1 {{'func.func' op argument #0 has unknown zshard attribute 'zshard.rol'; an argument's are zshard.role, zshard.name, zshard.init, zshard.param, zshard.persistent, zshard.default, zshard.placement, zshard.unit, zshard.slot and zshard.inits}}
func.func private @f(tensor<4xf32> {zshard.rol = #zshard.role<param>})

// -----

// Tests that an argument's attribute on a result is refused.
// expected-error @+1 {{'func.func' op result #0 has unknown zshard attribute 'zshard.init'; a result's are zshard.role, zshard.name, zshard.unit and zshard.slot}}
func.func private @f() -> (tensor<4xf32> {zshard.init = #zshard.init<zeros>})

// -----

// Tests that an op's phase written as a string is told how to write it.
func.func private @f() {
  // expected-error @+1 {{'arith.constant' op the attribute 'zshard.phase' must be a #zshard.phase, not the string "backward" (write #zshard.phase<backward>)}}
  %c = arith.constant {zshard.phase = "backward"} 1.0 : f32
  return
}

// -----

// Tests that an unknown phase is refused.
func.func private @f() {
  // expected-error @+1 {{'arith.constant' op the attribute 'zshard.phase' must be a #zshard.phase such as #zshard.phase<forward>, got "sideways"}}
  %c = arith.constant {zshard.phase = "sideways"} 1.0 : f32
  return
}

// -----

// Tests that an allocation's memory category written as a string is told
// how to write it.
func.func private @f() {
  // expected-error @+1 {{'memref.alloc' op the attribute 'zshard.category' must be a #zshard.category, not the string "gradients" (write #zshard.category<gradients>)}}
  %a = memref.alloc() {zshard.category = "gradients"} : memref<4xf32>
  return
}

// -----

// Tests that an unknown memory category is refused.
func.func private @f() {
  // expected-error @+1 {{'memref.alloc' op the attribute 'zshard.category' must be a #zshard.category such as #zshard.category<activations>, got "disk"}}
  %a = memref.alloc() {zshard.category = "disk"} : memref<4xf32>
  return
}
