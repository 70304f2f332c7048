// RUN: zshard-opt %s -split-input-file -verify-diagnostics --zshard-verify-contract | FileCheck %s

// Tests that a well-formed step passes unchanged, and that every signature
// rule of docs/contract.md has its own diagnostic naming the argument or
// result. Rules on ops are in zshard-verify-contract-ops.mlir.

// CHECK-LABEL: func.func @train_step
// CHECK: linalg.matmul
// CHECK: return
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that a step argument is a static tensor.
// expected-error @+1 {{argument #4 must be a statically shaped ranked tensor, got 'tensor<?x4xf32>'}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %extra: tensor<?x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "e"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that every argument has a role.
// expected-error @+1 {{argument #2 has no zshard.role}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that arguments are named.
// expected-error @+1 {{argument #2 (batch) needs a zshard.name}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that names are dotted paths.
// expected-error @+1 {{argument #4 ('fc..bias'): 'fc..bias' is not a dotted path}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %extra: tensor<2xf32> {zshard.role = #zshard.role<batch>, zshard.name = "fc..bias"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that names are unique.
// expected-error @+1 {{name 'lr' is used by arguments #2 and #3}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "lr"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that parameters have an init spec.
// expected-error @+1 {{argument #0 ('fc.0.weight') needs a zshard.init}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight"},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that parameters are floating point.
// expected-error @+2 {{argument #4 ('p') must have a floating-point element type}}
// expected-error @+1 {{argument #4 ('p') has no param_out result}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %extra: tensor<2xi32> {zshard.role = #zshard.role<param>, zshard.name = "p", zshard.init = #zshard.init<zeros>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that only optimizer state copies its parameter.
// expected-error @+1 {{argument #0 ('fc.0.weight'): init 'param' copies the parameter an optimizer state belongs to; a parameter cannot use it}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<param>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that optimizer state names its parameter.
// expected-error @+1 {{argument #1 ('fc.0.weight.exp_avg') needs a zshard.param naming its parameter}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that optimizer state belongs to an existing parameter.
// expected-error @+1 {{argument #1 ('fc.0.weight.exp_avg') belongs to unknown parameter 'fc.1.weight'}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.1.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that optimizer state has the shape of its parameter.
// expected-error @+2 {{argument #4 ('fc.0.weight.exp_avg_sq') has shape [8] but its parameter 'fc.0.weight' has shape [4, 2]}}
// expected-error @+1 {{argument #4 ('fc.0.weight.exp_avg_sq') has no opt_state_out result}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %extra: tensor<8xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg_sq", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that hyper-parameters are scalar floats.
// expected-error @+1 {{argument #4 ('beta') must be a rank-0 floating-point tensor, got 'tensor<2xf32>'}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %extra: tensor<2xf32> {zshard.role = #zshard.role<hyper>, zshard.name = "beta"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that results have a role.
// expected-error @+2 {{result #0 has no zshard.role}}
// expected-error @+1 {{the step has no loss result}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32>,
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that a step has one loss.
// expected-error @+2 {{results #0 and #1 are both the loss; a step has one}}
// expected-error @+1 {{argument #0 ('fc.0.weight') has no param_out result}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that updated parameters are named.
// expected-error @+2 {{result #1 (param_out) needs a zshard.name}}
// expected-error @+1 {{argument #0 ('fc.0.weight') has no param_out result}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that updated parameters exist.
// expected-error @+2 {{result #1 updates unknown parameter 'fc.9.weight'}}
// expected-error @+1 {{argument #0 ('fc.0.weight') has no param_out result}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.9.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that updated optimizer state exists and all state is updated.
// expected-error @+2 {{result #2 updates unknown optimizer state 'fc.0.weight.exp_avg_sq'}}
// expected-error @+1 {{argument #1 ('fc.0.weight.exp_avg') has no opt_state_out result}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that a parameter is updated once.
// expected-error @+2 {{'fc.0.weight' is updated by results #1 and #2}}
// expected-error @+1 {{argument #1 ('fc.0.weight.exp_avg') has no opt_state_out result}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that ops may carry name and file locations as debug information
// beside their module paths, and that an op of the root module has no path.
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32> loc("/tmp/model.py":1:1)
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32 loc("h.0.mlp"("model.py":12:5))
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Tests that the loss is a scalar float.
// expected-error @+1 {{result #0 (loss) must be a rank-0 floating-point tensor, got 'tensor<2xf32>'}}
func.func @train_step(%x: tensor<2xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<2xf32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step} {
  return %x : tensor<2xf32>
}

// -----

// Tests that an updated parameter has the parameter's type.
// expected-error @+1 {{result #1 ('w') has type 'tensor<2xf16>' but argument #0 has type 'tensor<2xf32>'}}
func.func @train_step(%w: tensor<2xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<zeros>},
                      %l: tensor<f32> {zshard.role = #zshard.role<batch>, zshard.name = "l"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<2xf16> {zshard.role = #zshard.role<param_out>, zshard.name = "w"})
    attributes {zshard.step} {
  %h = arith.truncf %w : tensor<2xf32> to tensor<2xf16>
  return %l, %h : tensor<f32>, tensor<2xf16>
}

// -----

// Tests that a module without a step is rejected.
// expected-error @+1 {{no func.func is marked zshard.step}}
module {
  func.func @helper() {
    return
  }
}

// -----

// Tests that a module holds one step.
module {
// expected-note @+1 {{first step here}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}
// expected-error @+1 {{second function marked zshard.step; a module holds exactly one step}}
func.func @second(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}
}

// -----

// Tests that a step has a body.
// expected-error @+1 {{the step has no body}}
func.func private @train_step(%w: tensor<2xf32>) attributes {zshard.step}
