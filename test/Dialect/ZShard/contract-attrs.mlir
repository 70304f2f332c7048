// RUN: zshard-opt %s | zshard-opt | FileCheck %s

// Tests that the contract's typed attributes round-trip on a step's
// arguments and results: every role, both placements, every init kind, a
// number with an exponent (printed with a '.' so that it parses back) and
// the member inits of a shard.
// CHECK-LABEL: func.func private @train_step(
// CHECK-SAME:  zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "w", zshard.role = #zshard.role<param>
// CHECK-SAME:  zshard.init = #zshard.init<uniform(-0.5, 0.5)>, zshard.name = "b", zshard.role = #zshard.role<param>
// CHECK-SAME:  zshard.init = #zshard.init<normal(-3, 1.0e-10)>, zshard.name = "e", zshard.role = #zshard.role<param>
// CHECK-SAME:  zshard.init = #zshard.init<zeros>, zshard.name = "w.exp_avg", zshard.param = "w", zshard.placement = #zshard.placement<host>, zshard.role = #zshard.role<opt_state>
// CHECK-SAME:  zshard.init = #zshard.init<param>, zshard.name = "w.master", zshard.param = "w", zshard.placement = #zshard.placement<device>, zshard.role = #zshard.role<opt_state>
// CHECK-SAME:  zshard.init = #zshard.init<ones>, zshard.name = "scale", zshard.persistent = true, zshard.role = #zshard.role<buffer>
// CHECK-SAME:  zshard.name = "x", zshard.role = #zshard.role<batch>
// CHECK-SAME:  zshard.default = 1.000000e-03 : f64, zshard.name = "lr", zshard.role = #zshard.role<hyper>
// CHECK-SAME:  zshard.inits = [#zshard.init<zeros>, #zshard.init<normal(0, 0.02)>], zshard.name = "h.0", zshard.role = #zshard.role<param_shard>, zshard.unit = @h.0
// CHECK-SAME:  zshard.inits = [#zshard.init<zeros>, #zshard.init<zeros>], zshard.name = "h.0.exp_avg", zshard.role = #zshard.role<opt_state_shard>, zshard.slot = "exp_avg", zshard.unit = @h.0
// CHECK-SAME:  -> (tensor<f32> {zshard.role = #zshard.role<loss>}
// CHECK-SAME:  {zshard.name = "w", zshard.role = #zshard.role<param_out>}
// CHECK-SAME:  {zshard.name = "w.exp_avg", zshard.role = #zshard.role<opt_state_out>}
// CHECK-SAME:  {zshard.name = "h.0", zshard.role = #zshard.role<param_shard_out>, zshard.unit = @h.0}
// CHECK-SAME:  {zshard.name = "h.0.exp_avg", zshard.role = #zshard.role<opt_state_shard_out>, zshard.slot = "exp_avg", zshard.unit = @h.0}
func.func private @train_step(
    tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<normal(0, 0.02)>},
    tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "b", zshard.init = #zshard.init<uniform(-0.5, 0.5)>},
    tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "e", zshard.init = #zshard.init<normal(-3.0, 1.0e-10)>},
    tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "w.exp_avg", zshard.param = "w", zshard.init = #zshard.init<zeros>, zshard.placement = #zshard.placement<host>},
    tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "w.master", zshard.param = "w", zshard.init = #zshard.init<param>, zshard.placement = #zshard.placement<device>},
    tensor<4xf32> {zshard.role = #zshard.role<buffer>, zshard.name = "scale", zshard.init = #zshard.init<ones>, zshard.persistent = true},
    tensor<8xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr", zshard.default = 1.0e-03 : f64},
    tensor<2xf32> {zshard.role = #zshard.role<param_shard>, zshard.name = "h.0", zshard.unit = @h.0, zshard.inits = [#zshard.init<zeros>, #zshard.init<normal(0, 0.02)>]},
    tensor<2xf32> {zshard.role = #zshard.role<opt_state_shard>, zshard.name = "h.0.exp_avg", zshard.unit = @h.0, zshard.slot = "exp_avg", zshard.inits = [#zshard.init<zeros>, #zshard.init<zeros>]})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "w"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "w.exp_avg"},
        tensor<2xf32> {zshard.role = #zshard.role<param_shard_out>, zshard.name = "h.0", zshard.unit = @h.0},
        tensor<2xf32> {zshard.role = #zshard.role<opt_state_shard_out>, zshard.name = "h.0.exp_avg", zshard.unit = @h.0, zshard.slot = "exp_avg"})

// Tests that a bufferized step's output argument keeps the role of the
// result it replaced.
// CHECK-LABEL: func.func private @bufferized(
// CHECK-SAME:  memref<4xf32> {zshard.in_place, zshard.name = "w", zshard.role = #zshard.role<param_out>})
func.func private @bufferized(
    memref<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<zeros>},
    memref<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "w", zshard.in_place})

// Tests that the three phases round-trip on ops, and that other zshard
// attributes on ops are left to the passes that read them.
// CHECK-LABEL: func.func @phases(
// CHECK:       arith.constant {zshard.phase = #zshard.phase<forward>} 1.0
// CHECK:       arith.constant {zshard.phase = #zshard.phase<backward>} 2.0
// CHECK:       arith.constant {zshard.phase = #zshard.phase<optimizer>, zshard.remat = "h.0"} 3.0
func.func @phases() -> (f32, f32, f32) {
  %a = arith.constant {zshard.phase = #zshard.phase<forward>} 1.0 : f32
  %b = arith.constant {zshard.phase = #zshard.phase<backward>} 2.0 : f32
  %c = arith.constant {zshard.phase = #zshard.phase<optimizer>, zshard.remat = "h.0"} 3.0 : f32
  return %a, %b, %c : f32, f32, f32
}

// Tests that every memory category round-trips on an allocation.
// CHECK-LABEL: func.func @categories(
// CHECK-COUNT-8: memref.alloc() {zshard.category = #zshard.category<{{parameters|gradients|optimizer_state|activations|communication|other|host_offload|buffers}}>}
func.func @categories() {
  %0 = memref.alloc() {zshard.category = #zshard.category<parameters>} : memref<4xf32>
  %1 = memref.alloc() {zshard.category = #zshard.category<gradients>} : memref<4xf32>
  %2 = memref.alloc() {zshard.category = #zshard.category<optimizer_state>} : memref<4xf32>
  %3 = memref.alloc() {zshard.category = #zshard.category<activations>} : memref<4xf32>
  %4 = memref.alloc() {zshard.category = #zshard.category<communication>} : memref<4xf32>
  %5 = memref.alloc() {zshard.category = #zshard.category<other>} : memref<4xf32>
  %6 = memref.alloc() {zshard.category = #zshard.category<host_offload>} : memref<4xf32>
  %7 = memref.alloc() {zshard.category = #zshard.category<buffers>} : memref<4xf32>
  return
}
