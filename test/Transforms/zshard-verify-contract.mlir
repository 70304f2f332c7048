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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
}

// -----

// Tests that only optimizer state is placed in host memory (zshard-offload).
// expected-error @+1 {{argument #0 ('fc.0.weight'): only optimizer state can be placed in host memory (zshard.placement = #zshard.placement<host>)}}
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>, zshard.placement = #zshard.placement<host>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
}

// -----

// Tests that a name location may wrap a file location, an op in the root
// module has the empty path, and a constant needs no module path.
func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("/tmp/hoisted.py":1:1)
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("h.0.mlp"("model.py":12:5))
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
}

// -----

// Tests that the loss is a scalar float.
// expected-error @+1 {{result #0 (loss) must be a rank-0 floating-point tensor, got 'tensor<2xf32>'}}
func.func @train_step(%x: tensor<2xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<2xf32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step} {
  return %x : tensor<2xf32> loc("")
}

// -----

// Tests that an updated parameter has the parameter's type.
// expected-error @+1 {{result #1 ('w') has type 'tensor<2xf16>' but argument #0 has type 'tensor<2xf32>'}}
func.func @train_step(%w: tensor<2xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<zeros>},
                      %l: tensor<f32> {zshard.role = #zshard.role<batch>, zshard.name = "l"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<2xf16> {zshard.role = #zshard.role<param_out>, zshard.name = "w"})
    attributes {zshard.step} {
  %h = arith.truncf %w : tensor<2xf32> to tensor<2xf16> loc("")
  return %l, %h : tensor<f32>, tensor<2xf16> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
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
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x2xf32> loc("fc.0")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32> loc("fc.0")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %oe = tensor.empty() : tensor<8x2xf32> loc("")
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32> loc("")
  %ge = tensor.empty() : tensor<4x2xf32> loc("fc.0")
  %gz = linalg.fill ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %m2 = linalg.add ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.0")
  %lrv = tensor.extract %lr[] : tensor<f32> loc("fc.0")
  %w2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32> loc("fc.0")
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32> loc("")
}
}

// -----

// Tests that a step has a body.
// expected-error @+1 {{the step has no body}}
func.func private @train_step(%w: tensor<2xf32>) attributes {zshard.step}

// -----

// Tests that an eval step (zshard.eval, from --zshard-extract-eval) returns
// the loss alone: it needs no update results, and may have no other result.
func.func @train_step(%w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<zeros>} loc(""))
    -> (tensor<f32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step, zshard.eval} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%w : tensor<4xf32>) outs(%lz : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  return %loss : tensor<f32> loc("")
}

// -----

// expected-error @+1 {{result #1 (param_out): an eval step (zshard.eval) returns the loss alone}}
func.func @train_step(%w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<zeros>} loc(""))
    -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "w"})
    attributes {zshard.step, zshard.eval} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.reduce ins(%w : tensor<4xf32>) outs(%lz : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("")
  return %loss, %w : tensor<f32>, tensor<4xf32> loc("")
}
