// RUN: not zshard-opt %s --zshard-annotate-phases 2>&1 | FileCheck %s --check-prefix=ANNOTATE --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-prefetch 2>&1 | FileCheck %s --check-prefix=PREFETCH --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-remat="policy=all pattern=fc" 2>&1 | FileCheck %s --check-prefix=REMAT --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-extract-eval 2>&1 | FileCheck %s --check-prefix=EVAL --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-cost-model 2>&1 | FileCheck %s --check-prefix=COST --implicit-check-not=error:

// Passes that derive the phases of the step (forward, backward, optimizer)
// or walk it in order refuse a step whose body is not one block, each with
// its own line (the cost model priced the entry block alone before). The
// contract verifier's rule is in zshard-verify-contract-ops.mlir,
// zshard-shard's in zshard-shard-invalid.mlir.
// ANNOTATE: [[@LINE+7]]:1: error: cannot derive phases: the step needs a loss result and a single-block body
// PREFETCH: [[@LINE+6]]:1: error: zshard-prefetch: cannot derive the phases of the step
// REMAT: error: zshard-remat: cannot derive the phases of the step
// EVAL: [[@LINE+4]]:1: error: zshard-extract-eval: the step must have a single-block body
// COST: [[@LINE+3]]:1: error: cost model: the step body must be a single block (no top-level control flow)
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
  cf.br ^next loc("")
^next:
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
