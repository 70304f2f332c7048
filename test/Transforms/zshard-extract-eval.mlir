// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard --zshard-async --zshard-prefetch -o %t.full.mlir
// RUN: zshard-opt %t.full.mlir --zshard-extract-eval --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=FULL --implicit-check-not=reduce_scatter --implicit-check-not=all_reduce --implicit-check-not=zshard.adamw
// RUN: zshard-opt %t.full.mlir --zshard-extract-eval | zshard-opt --zshard-extract-eval | zshard-opt --zshard-extract-eval -o %t.twice.mlir
// RUN: zshard-opt %t.full.mlir --zshard-extract-eval -o %t.once.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=shard_grad_op" --zshard-shard --zshard-async --zshard-prefetch --zshard-extract-eval \
// RUN:   | FileCheck %s --check-prefix=GRADOP --implicit-check-not=reduce_scatter --implicit-check-not=all_reduce --implicit-check-not=zshard.adamw
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=zero1" --zshard-shard --zshard-async --zshard-prefetch --zshard-extract-eval \
// RUN:   | FileCheck %s --check-prefix=ZERO1 --implicit-check-not=zshard.all_gather --implicit-check-not=reduce_scatter --implicit-check-not=all_reduce --implicit-check-not=zshard.adamw
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=no_shard" --zshard-shard --zshard-extract-eval \
// RUN:   | FileCheck %s --check-prefix=NOSHARD --implicit-check-not=all_reduce --implicit-check-not=zshard.adamw
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-extract-eval | FileCheck %s --check-prefix=PLAIN --implicit-check-not=zshard.adamw
// RUN: zshard-opt %s -verify-diagnostics --zshard-extract-eval -o /dev/null
// RUN: zshard-opt %S/Inputs/mlp-step.mlir --zshard-record-abi --zshard-extract-eval | FileCheck %s --check-prefix=RECORD

// Tests that the eval step of a full_shard step keeps every argument and
// returns the loss alone, marked zshard.eval; that it keeps the forward's
// all-gathers (started one unit ahead, waited before use) and their
// releases, each after the last op that reads the gathered buffer or a
// slice of it; and that the backward's gathers, the gradients'
// reduce-scatters and the optimizer are gone. The result is a valid step
// (--zshard-verify-contract) and the pass leaves an eval step alone.
// FULL-LABEL: func.func @train_step(
// FULL-SAME:    zshard.name = "fc.0", zshard.role = #zshard.role<param_shard>
// FULL-SAME:    zshard.name = "fc.0.exp_avg", zshard.role = #zshard.role<opt_state_shard>
// FULL-SAME:    -> (tensor<f32> {zshard.role = #zshard.role<loss>}) attributes {zshard.eval, zshard.step}
// FULL:      %[[T0:.*]] = zshard.all_gather_start %{{.*}} unit @fc.0
// FULL-NEXT: %[[G0:.*]] = zshard.wait %[[T0]]
// FULL-NEXT: %[[T1:.*]] = zshard.all_gather_start %{{.*}} unit @fc.1
// FULL:      linalg.matmul {{.*}}ins(%arg0, %{{.*}} : tensor<2x4xf32>, tensor<4x6xf32>)
// FULL:      linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x6xf32>, tensor<6xf32>)
// FULL:      zshard.release %[[G0]] : tensor<30xf32>
// FULL:      %[[G1:.*]] = zshard.wait %[[T1]]
// FULL-NEXT: %[[T2:.*]] = zshard.all_gather_start %{{.*}} unit @fc.2
// FULL:      linalg.matmul
// FULL:      zshard.release %[[G1]] : tensor<36xf32>
// FULL:      %[[G2:.*]] = zshard.wait %[[T2]]
// FULL:      linalg.matmul
// FULL:      zshard.release %[[G2]] : tensor<18xf32>
// FULL-NOT:  zshard.all_gather_start
// FULL-NOT:  zshard.wait
// FULL:      return %{{.*}} : tensor<f32>
// FULL-NEXT: }

// shard_grad_op gathers once for forward and backward and releases after
// the backward; the eval step releases each unit when the forward is done
// with it, before the next unit's products.
// GRADOP:      %[[G0:.*]] = zshard.wait %{{.*}} : !zshard.token<tensor<30xf32>>
// GRADOP:      linalg.matmul {{.*}}ins(%arg0
// GRADOP:      zshard.release %[[G0]] : tensor<30xf32>
// GRADOP:      linalg.matmul {{.*}}ins(
// GRADOP:      zshard.release %{{.*}} : tensor<36xf32>
// GRADOP:      linalg.matmul {{.*}}ins(
// GRADOP:      zshard.release %{{.*}} : tensor<18xf32>
// GRADOP:      return %{{.*}} : tensor<f32>

// zero1 holds whole parameters: its only gathers rebuild them after the
// optimizer, and go with it; no_shard's gradient all-reduces go too.
// ZERO1:   attributes {zshard.eval, zshard.step}
// ZERO1-COUNT-3: linalg.matmul
// ZERO1:   return %{{.*}} : tensor<f32>
// NOSHARD: attributes {zshard.eval, zshard.step}
// NOSHARD-COUNT-3: linalg.matmul
// NOSHARD: return %{{.*}} : tensor<f32>

// An unsharded step: the forward's three products, not the backward's.
// PLAIN:   -> (tensor<f32> {zshard.role = #zshard.role<loss>}) attributes {zshard.eval, zshard.step}
// PLAIN-COUNT-3: linalg.matmul
// PLAIN-NOT: linalg.matmul
// PLAIN:   return %{{.*}} : tensor<f32>

// Tests that the step's ABI record, when there is one, now describes the
// eval entry: every argument still, the loss alone as its result.
// RECORD:      zshard.abi = #zshard.step_abi<step = "train_step", arguments = [#zshard.abi_argument<role = param
// RECORD-SAME: results = [#zshard.abi_result<role = loss, type = tensor<f32>>], units = []

// Tests that a step without a loss result is refused: it has nothing to
// evaluate.
// expected-error @+1 {{zshard-extract-eval: the step has no loss result, so it has nothing to evaluate}}
func.func @step(%w: tensor<2xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<zeros>})
    -> (tensor<2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "w"}) attributes {zshard.step} {
  return %w : tensor<2xf32>
}
