// RUN: zshard-opt %s --split-input-file --zshard-outline-compute-ops --mlir-print-debuginfo=false | FileCheck %s

// Tests that the same op of two blocks (other buffers, other phases and
// module paths) becomes one function called twice, each call keeping its
// op's phase, and that an op of another shape gets a function of its own.
// CHECK-LABEL: func.func private @step.compute.0
// CHECK-SAME:    (%[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>) attributes {no_inline}
// CHECK-NEXT:    linalg.generic
// CHECK-NOT:     zshard.phase
// CHECK-SAME:    ins(%[[X]] : memref<4x8xf32>) outs(%[[Y]] : memref<4x8xf32>)
// CHECK:         math.tanh
// CHECK:         return
// CHECK-LABEL: func.func private @step.compute.1
// CHECK-SAME:    (%{{.*}}: memref<2x8xf32>, %{{.*}}: memref<2x8xf32>) attributes {no_inline}
// CHECK-LABEL: func.func @step
// CHECK-SAME:    (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>, %[[C:.*]]: memref<4x8xf32>, %[[D:.*]]: memref<4x8xf32>, %[[E:.*]]: memref<2x8xf32>, %[[F:.*]]: memref<2x8xf32>)
// CHECK-NEXT:    call @step.compute.0(%[[A]], %[[B]]) {zshard.phase = #zshard.phase<forward>}
// CHECK-NEXT:    call @step.compute.0(%[[C]], %[[D]]) {zshard.phase = #zshard.phase<backward>}
// CHECK-NEXT:    call @step.compute.1(%[[E]], %[[F]]) :
// CHECK-NEXT:    return
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @step(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>, %d: memref<4x8xf32>, %e: memref<2x8xf32>, %f: memref<2x8xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) attrs = {zshard.phase = #zshard.phase<forward>} {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } loc("h.0.mlp")
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32>) outs(%d : memref<4x8xf32>) attrs = {zshard.phase = #zshard.phase<backward>} {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } loc("h.1.mlp")
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%e : memref<2x8xf32>) outs(%f : memref<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Tests that constants and views with constant operands move into the
// function (the buffer under the view is the argument), that a scalar
// computed outside and used in the body is an argument, and that two fills
// of different values are two functions.
// CHECK-LABEL: func.func private @views.compute.0
// CHECK-SAME:    (%[[BUF:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<2x4xf32>, %[[S:.*]]: f32)
// CHECK-NEXT:    %[[V:.*]] = memref.expand_shape %[[BUF]] {{\[\[}}0, 1]] output_shape [2, 4]
// CHECK-NEXT:    linalg.generic
// CHECK-SAME:    ins(%[[V]] : memref<2x4xf32>) outs(%[[OUT]] : memref<2x4xf32>)
// CHECK:         arith.mulf %{{.*}}, %[[S]]
// CHECK-LABEL: func.func private @views.compute.1
// CHECK-SAME:    (%{{.*}}: memref<2x4xf32>)
// CHECK-NEXT:    arith.constant 0.000000e+00
// CHECK-NEXT:    linalg.fill
// CHECK-LABEL: func.func private @views.compute.2
// CHECK-NEXT:    arith.constant 1.000000e+00
// CHECK-LABEL: func.func @views
// CHECK-SAME:    (%[[B:.*]]: memref<8xf32>, %[[X:.*]]: f32, %[[O:.*]]: memref<2x4xf32>)
// CHECK:         %[[S2:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT:    call @views.compute.0(%[[B]], %[[O]], %[[S2]])
// CHECK-NEXT:    call @views.compute.1(%[[O]])
// CHECK-NEXT:    call @views.compute.2(%[[O]])
// CHECK-NEXT:    return
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @views(%b: memref<8xf32>, %x: f32, %o: memref<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %s = arith.mulf %x, %x : f32
  %v = memref.expand_shape %b [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%v : memref<2x4xf32>) outs(%o : memref<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<2x4xf32>)
  linalg.fill ins(%one : f32) outs(%o : memref<2x4xf32>)
  return
}

// -----

// Tests that an op on a buffer the bare-pointer calling convention cannot
// pass (a dynamic shape) stays inline.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:   call
// CHECK:       linalg.fill
func.func @dynamic(%a: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%a : memref<?xf32>)
  return
}

// -----

// Tests which arguments are marked noalias: a buffer the step allocated,
// at every call of the function (views move into the function, so an
// argument is the buffer itself). Not a step argument (the runtime passes
// one buffer for an argument and its in-place out-parameter), and not an
// argument that is an allocation at one call but a step argument at
// another, and nothing at a call with a buffer of unknown origin (a
// function's result, which might be any buffer).
// CHECK-LABEL: func.func private @private.compute.0
// CHECK-SAME:    (%{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @private.compute.1
// CHECK-SAME:    (%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @private.compute.2
// CHECK-SAME:    (%{{.*}}: memref<2xf32>, %{{.*}}: memref<2xf32>) attributes
// CHECK-LABEL: func.func @private
#id = affine_map<(d0) -> (d0)>
func.func private @buffer() -> memref<2xf32>
func.func @private(%arg: memref<4xf32>, %other: memref<4xf32>, %third: memref<8xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  %d = memref.alloc() : memref<4xf32>
  // (a, arg) -> b, then (c, other) -> d: the first and the last are
  // allocations at both calls.
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %arg : memref<4xf32>, memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%c, %other : memref<4xf32>, memref<4xf32>) outs(%d : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  // e -> f, then third -> g: the input is a step argument at one call.
  %e = memref.alloc() : memref<8xf32>
  %f = memref.alloc() : memref<8xf32>
  %g = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%e : memref<8xf32>) outs(%f : memref<8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%third : memref<8xf32>) outs(%g : memref<8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  // An allocation beside a buffer a call returned.
  %h = memref.alloc() : memref<2xf32>
  %u = call @buffer() : () -> memref<2xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%u : memref<2xf32>) outs(%h : memref<2xf32>) {
  ^bb0(%x: f32, %out: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}
