// RUN: not zshard-opt %s --zshard-remat="policy=every=0" 2>&1 | FileCheck %s --check-prefix=EVERY --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-remat="policy=budget=lots" 2>&1 | FileCheck %s --check-prefix=BUDGET --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-remat="policy=budget=0" 2>&1 | FileCheck %s --check-prefix=ZERO --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-remat="policy=all pattern=fc.<i" 2>&1 | FileCheck %s --check-prefix=PATTERN --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-prefetch="forward-depth=-1" 2>&1 | FileCheck %s --check-prefix=DEPTH --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-prefetch="bucket-bytes=-8" 2>&1 | FileCheck %s --check-prefix=DEPTH --implicit-check-not=error:

// Option values zshard-remat and zshard-prefetch refuse, one line each (the
// unknown policy, block and backward mode are in zshard-remat.mlir and
// zshard-prefetch.mlir). The remat policy is a typed option: its parser
// (RematOptions.h) names what is wrong, and MLIR adds no empty error after it.
// EVERY: {{^}}zshard-opt: for the --policy option: every=K needs a positive K, got '0'{{$}}
// BUDGET: {{^}}zshard-opt: for the --policy option: budget=BYTES needs a byte size such as 1048576 or 64MiB, got 'lots'{{$}}
// ZERO: {{^}}zshard-opt: for the --policy option: budget=BYTES needs a byte size such as 1048576 or 64MiB, got '0'{{$}}
// PATTERN: error: zshard-remat: bad module path pattern 'fc.<i' (dotted names, indices and <i>, such as h.<i>)
// DEPTH: error: zshard-prefetch: forward-depth, max-inflight and bucket-bytes must not be negative
shard.grid @world(shape = 2)
zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) ["fc.weight" : 4 at 0]
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
      %q = arith.addf %a, %a : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}
