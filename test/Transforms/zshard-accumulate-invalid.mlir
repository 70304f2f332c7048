// RUN: zshard-opt %s --split-input-file --verify-diagnostics --zshard-accumulate=microbatches=2
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=-3 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" \
// RUN:   | not zshard-opt --zshard-accumulate=microbatches=2 2>&1 | FileCheck %s --check-prefix=UNITS
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard \
// RUN:   | not zshard-opt --zshard-accumulate=microbatches=2 2>&1 | FileCheck %s --check-prefix=UNITS
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=2 \
// RUN:   | not zshard-opt --zshard-accumulate=microbatches=2 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=2 \
// RUN:   | not zshard-opt --zshard-remat=policy=all 2>&1 | FileCheck %s --check-prefix=REMAT

// Tests every error of zshard-accumulate, one line each.
// ZERO: {{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-accumulate: microbatches must be at least 1, got 0
// NEGATIVE: {{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-accumulate: microbatches must be at least 1, got -3
// A step with units (sharded or about to be) is refused: accumulate first.
// UNITS: {{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-accumulate: the step is already sharded (it declares zshard.unit @fc.0); accumulate the unsharded step, before zshard-form-units
// TWICE: {{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-accumulate: the step already accumulates 2 microbatches
// Checkpointing an accumulating step would recompute every microbatch's
// forward before the first backward: zshard-remat refuses it.
// REMAT: {{.*}}-step.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zshard-remat: the step accumulates 2 microbatches; checkpoint it before zshard-accumulate, so that each microbatch recomputes its blocks in its own backward

// A step without batch arguments has nothing to split.
// expected-error@+1 {{zshard-accumulate: the step has no batch argument to split into microbatches}}
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %w : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%w : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      linalg.yield %a : f32
    } -> tensor<4xf32> loc("fc")
  
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A scalar batch argument has no rows.
// expected-error@+1 {{zshard-accumulate: batch argument 's' is a scalar; microbatches are rows of the first dimension of every batch argument}}
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %sb: tensor<f32> {zshard.role = #zshard.role<batch>, zshard.name = "s"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
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
      linalg.yield %a : f32
    } -> tensor<4xf32> loc("fc")
  
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A batch argument read by the optimizer (here as the clipping
// coefficient) is outside what the microbatches compute.
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %sb: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "scale"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
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
      linalg.yield %a : f32
    } -> tensor<4xf32> loc("fc")
  %c0i = arith.constant 0 : index loc("fc")
  %e = tensor.extract %sb[%c0i] : tensor<4xf32>  // expected-error {{zshard-accumulate: batch argument 'scale' is read here, outside what the loss and the gradients are made of; it cannot be split into microbatches}}
  %sc = tensor.from_elements %e : tensor<f32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t grad_scale %sc
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A forward value other than the loss and the gradients read by the
// optimizer would be that of one microbatch only.
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
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
      linalg.yield %a : f32
    } -> tensor<4xf32> loc("fc")
  %e = tensor.extract %lz[] : tensor<f32>  // expected-error {{zshard-accumulate: this op reads a value of the forward or backward other than the loss and the gradients; only those are averaged over microbatches}}
  %sc = tensor.from_elements %e : tensor<f32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t grad_scale %sc
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A step with no parameters that returns a hyper-parameter as its loss:
// nothing is computed per microbatch.
// expected-error @+1 {{zshard-accumulate: neither the loss nor any gradient is computed in the step}}
func.func @train_step(
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>})
    attributes {zshard.step} {
  return %lr : tensor<f32> loc("")
}

// -----

// A batch mean is made for every microbatch before the first runs, so its
// input may read only the batch (here it reads the parameter).
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %dot = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %loss = zshard.batch_mean %dot : tensor<f32>  // expected-error {{zshard-accumulate: this zshard.batch_mean reads argument #0, which is not a batch argument; a batch mean's input must be made of the batch and constants only}}
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      linalg.yield %a : f32
    } -> tensor<4xf32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}

// -----

// A batch mean of a batch mean has no per-microbatch input.
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %count = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%x : tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%b: f32, %acc: f32):
      %s = arith.addf %acc, %b : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("")
  %n = zshard.batch_mean %count : tensor<f32> loc("")
  %nn = zshard.batch_mean %n : tensor<f32>  // expected-error {{zshard-accumulate: the input of this zshard.batch_mean reads another batch mean}}
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%nn : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      linalg.yield %a : f32
    } -> tensor<4xf32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}
