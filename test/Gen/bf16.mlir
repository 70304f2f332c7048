// Tests that `--dtype bf16` makes parameters, activations and gradients bf16,
// keeps the batch, the loss and the AdamW moments f32, adds an f32 `master`
// copy of every parameter as a third optimizer slot (init "param", after all
// exp_avg and all exp_avg_sq), multiplies bf16 operands into f32 accumulators
// that are then truncated, and runs AdamW on the master copy, returning its
// bf16 rounding as the new parameter.

// RUN: zshard-gen mlp --widths 8,16,4 --batch 4 --dtype bf16 | zshard-opt --zshard-lower-adamw | FileCheck %s
// RUN: zshard-gen mlp --widths 8,16,4 --batch 4 --dtype bf16 | zshard-opt | FileCheck %s --check-prefix=OP
// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 --tied --dtype bf16 | zshard-opt | FileCheck %s --check-prefix=GPT
// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 --dtype bf16 | zshard-opt --canonicalize --cse | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg0: tensor<8x16xbf16> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "fc.0.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg3: tensor<4xbf16> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.1.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg4: tensor<8x16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg8: tensor<8x16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.0.weight.exp_avg_sq", zshard.param = "fc.0.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg12: tensor<8x16xf32> {zshard.init = #zshard.init<param>, zshard.name = "fc.0.weight.master", zshard.param = "fc.0.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg15: tensor<4xf32> {zshard.init = #zshard.init<param>, zshard.name = "fc.1.bias.master", zshard.param = "fc.1.bias", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg16: tensor<4x8xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg17: tensor<4x4xf32> {zshard.name = "target", zshard.role = #zshard.role<batch>}
// CHECK-SAME: -> (tensor<f32> {zshard.role = #zshard.role<loss>}, tensor<8x16xbf16> {zshard.name = "fc.0.weight", zshard.role = #zshard.role<param_out>}
// CHECK-SAME: tensor<4xf32> {zshard.name = "fc.1.bias.exp_avg_sq", zshard.role = #zshard.role<opt_state_out>}
// CHECK-SAME: tensor<8x16xf32> {zshard.name = "fc.0.weight.master", zshard.role = #zshard.role<opt_state_out>}
// CHECK-SAME: tensor<4xf32> {zshard.name = "fc.1.bias.master", zshard.role = #zshard.role<opt_state_out>})

// The f32 batch is rounded to bf16 once.
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%arg16 : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// bf16 x bf16 -> f32, then the bias add truncates to bf16.
// CHECK: %[[ACC:.*]] = linalg.matmul {{.*}}ins(%[[X]], %arg0 : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %arg1 : tensor<4x16xf32>, tensor<16xbf16>) outs(%{{.*}} : tensor<4x16xbf16>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// Weight gradients: f32 accumulators truncated to bf16.
// CHECK: %[[DW:.*]] = linalg.matmul indexing_maps = {{.*}} outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[DW]] : tensor<16x4xf32>) outs(%{{.*}} : tensor<16x4xbf16>)
// AdamW on the master copy (%arg12) with the bf16 gradient; four results:
// master, exp_avg, exp_avg_sq (f32) and the rounded parameter (bf16).
// CHECK: %[[W0:.*]]:4 = linalg.generic {{.*}} ins(%arg12, %{{.*}}, %arg4, %arg8, %arg18, %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x16xbf16>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) outs(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xbf16>)
// CHECK: %[[ROUNDED:.*]] = arith.truncf %[[NEW:.*]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[NEW]], %{{.*}}, %{{.*}}, %[[ROUNDED]] : f32, f32, f32, bf16
// CHECK: return %{{.*}}, %[[W0]]#3, {{.*}}, %[[W0]]#1, {{.*}}, %[[W0]]#2, {{.*}}, %[[W0]]#0,

// The update as zshard-gen writes it: the master copy as an operand, four
// results (parameter, moments, master).
// OP: %[[W0:[a-z_0-9]+]], %[[W0M:[a-z_0-9]+]], %[[W0V:[a-z_0-9]+]], %[[W0W:[a-z_0-9]+]] = zshard.adamw textbook %arg0, %{{.*}}, %arg4, %arg8 master %arg12 : tensor<8x16xf32> lr %arg18 step %arg19 betas(9.000000e-01, 0.94999999999999996) eps(1.000000e-08) weight_decay(1.000000e-01) {zshard.path = "fc.0"} : tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<8x16xf32>, tensor<8x16xf32>
// OP: return %{{.*}}, %[[W0]], {{.*}}, %[[W0M]], {{.*}}, %[[W0V]], {{.*}}, %[[W0W]],

// GPT-LABEL: func.func @train_step(
// GPT-SAME: %arg0: tensor<16x8xbf16> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "wte", zshard.role = #zshard.role<param>}
// GPT-SAME: tensor<16x8xf32> {zshard.init = #zshard.init<param>, zshard.name = "wte.master", zshard.param = "wte", zshard.role = #zshard.role<opt_state>}
// GPT-SAME: tensor<2x4xi32> {zshard.name = "tokens", zshard.role = #zshard.role<batch>}
// The embedding gathers bf16 rows.
// GPT: tensor.extract %arg0[{{.*}}] : tensor<16x8xbf16>
// Attention: bf16 q, k, v widened to f32 for zshard.causal_attention.
// GPT: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2x4x4xbf16>) outs(%{{.*}} : tensor<2x2x4x4xf32>)
// GPT: zshard.causal_attention {{.*}} : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
// The tied head's f32 gradient accumulates the embedding's share, then is rounded.
// GPT: %[[HEAD:.*]] = linalg.matmul indexing_maps = {{.*}} outs(%{{.*}} : tensor<16x8xf32>)
// GPT: %[[SUM:.*]] = scf.forall {{.*}} shared_outs(%{{.*}} = %[[HEAD]]) -> (tensor<16x8xf32>)
// GPT: linalg.generic {{.*}} ins(%[[SUM]] : tensor<16x8xf32>) outs(%{{.*}} : tensor<16x8xbf16>)
// The loss stays f32.
// GPT: return %{{.*}} : tensor<f32>, tensor<16x8xbf16>,

// CANON: func.func @train_step(
// CANON: return
