// Tests that `zshard-gen gpt --tied` has no lm_head.weight argument, computes
// the logits as x @ wte^T from the one wte argument, and accumulates wte's
// gradient from both uses: the LM-head product is the initial value of the
// embedding's scatter-add.

// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 --tied | zshard-opt | FileCheck %s --implicit-check-not=lm_head.weight
// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 --tied | zshard-opt --mlir-print-debuginfo=false | FileCheck %s --check-prefix=PATH
// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 --tied | zshard-opt --zshard-verify-contract | FileCheck %s --check-prefix=VERIFY

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg0: tensor<16x8xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "wte", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg15: tensor<8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "ln_f.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg16: tensor<16x8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "wte.exp_avg", zshard.param = "wte", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg31: tensor<8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "ln_f.bias.exp_avg", zshard.param = "ln_f.bias", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg32: tensor<16x8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "wte.exp_avg_sq", zshard.param = "wte", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg48: tensor<2x4xi32> {zshard.name = "tokens", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg49: tensor<2x4xi32> {zshard.name = "targets", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg51: tensor<f32> {zshard.name = "step", zshard.role = #zshard.role<hyper>} loc(""))

// CHECK: tensor.extract %arg0[
// logits = x @ wte^T (transposed B map on the [V, D] table).
// CHECK: linalg.matmul indexing_maps = [affine_map{{.*}}] {{.*}}ins(%{{.*}}, %arg0 : tensor<8x8xf32>, tensor<16x8xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// dx = dlogits @ wte and the head's share of dwte = dlogits^T @ x.
// CHECK: linalg.matmul {{.*}}ins(%{{.*}}, %arg0 : tensor<8x16xf32>, tensor<16x8xf32>) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: %[[HEAD:.*]] = linalg.matmul indexing_maps = [affine_map{{.*}}] {{.*}}ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x8xf32>) outs(%{{.*}} : tensor<16x8xf32>)
// The embedding's share is added onto it (a scatter-add into the product).
// CHECK: %[[DWTE:.*]] = scf.forall (%{{.*}}) in (8) shared_outs(%{{.*}} = %[[HEAD]]) -> (tensor<16x8xf32>)
// CHECK: tensor.extract %arg48[%{{.*}}, %{{.*}}] : tensor<2x4xi32>
// CHECK: zshard.adamw textbook %arg0, %[[DWTE]], %arg16, %arg32 lr

// PATH: linalg.matmul {{.*}} {zshard.path = "lm_head"} ins(%{{.*}}, %arg0 : tensor<8x8xf32>, tensor<16x8xf32>)
// PATH: linalg.matmul {zshard.path = "lm_head"} ins(%{{.*}}, %arg0 : tensor<8x16xf32>, tensor<16x8xf32>)
// PATH: linalg.matmul {{.*}} {zshard.path = "lm_head"} {{.*}} -> tensor<16x8xf32>
// PATH: scf.forall (%{{.*}}) in (8) {{.*}} -> (tensor<16x8xf32>) {
// PATH: scf.forall.in_parallel {
// PATH: } {zshard.path = "wte"}
// PATH: zshard.adamw textbook %arg0, {{.*}} {zshard.path = "wte"}

// VERIFY: func.func @train_step
