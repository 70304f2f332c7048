// RUN: not zshard-compile %s --strategy full_shard --ranks 2 2>&1 | FileCheck %s --check-prefix=SHARD --implicit-check-not=error --implicit-check-not=note
// RUN: sed 's/zshard.init = #zshard.init<zeros>},/zshard.init = #zshard.init<param>},/' %s > %t.contract.mlir
// RUN: not zshard-compile %t.contract.mlir 2>&1 | FileCheck %s --check-prefix=CONTRACT --implicit-check-not=error --implicit-check-not=note
// RUN: not zshard-compile %t.contract.mlir --mlir-print-op-on-diagnostic 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sed 's/zshard.init = #zshard.init<zeros>},/zshard.init = "zeros"},/' %s > %t.string.mlir
// RUN: not zshard-compile %t.string.mlir 2>&1 | FileCheck %s --check-prefix=STRING --implicit-check-not=error --implicit-check-not=note
// RUN: echo 'func.func @f(' | not zshard-compile - 2>&1 | FileCheck %s --check-prefix=PARSE --implicit-check-not=error
// RUN: not zshard-compile %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// Tests that zshard-compile prints each diagnostic as one line a person can
// place: `FILE:LINE:COL: error: ...` for a file location, `zshard-compile:
// error: ... (at PATH)` for an op's module path, no `<unknown>:0:` or
// `loc("")` prefix, no source excerpt, no "see current operation" dump
// (unless --mlir-print-op-on-diagnostic asks for it), and no second line
// repeating that it failed. The step below reads the gradient of fc.weight
// outside its update (a max), which zshard-shard refuses.
// SHARD: {{^}}zshard-compile: error: zshard-shard: the gradient of 'fc.weight' is read here, outside its optimizer update; besides the update only whole sums of a gradient (such as the terms of a global gradient norm) can be sharded (at fc){{$}}

// A step written with the contract's old string attributes: the dialect says
// how to write the typed one, once, before any pass runs.
// STRING: {{^}}{{.*}}string.mlir:[[#@LINE+7]]:1: error: 'func.func' op argument #0 attribute 'zshard.init' must be a #zshard.init, not the string "zeros" (write #zshard.init<zeros>){{$}}

// A contract error on the step function, which has a file location.
// CONTRACT: {{^}}{{.*}}contract.mlir:[[#@LINE+4]]:1: error: argument #0 ('fc.weight'): init 'param' copies the parameter an optimizer state belongs to; a parameter cannot use it{{$}}
// DUMP: error: argument #0
// DUMP: note: see current operation:

func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.init = #zshard.init<zeros>, zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight"},
    %v: tensor<4xf32> {zshard.init = #zshard.init<zeros>, zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight"},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
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
      %q = arith.mulf %a, %c1 : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %gmax = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%g : tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %mx = arith.maximumf %acc, %a : f32
      linalg.yield %mx : f32
    } -> tensor<f32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t grad_scale %gmax
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.0)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// A parse error: the position in the input, one line.
// PARSE: {{^}}<stdin>:1:14: error: expected non-function type{{$}}

// An input that cannot be opened.
// MISSING: {{^}}zshard-compile: error: cannot open input file '{{.*}}missing.mlir': No such file or directory{{$}}
