// Tests that `zshard-gen gpt` (untied) writes the contract step of a 2-block
// GPT: parameters in the order of docs/models.md with their shapes and inits,
// then every exp_avg, every exp_avg_sq, the i32 batch and the hyper-parameters;
// the attention as zshard.causal_attention and its grad; the module paths of ops, forward
// and backward; and the AdamW update of each parameter at its owner's path.

// RUN: zshard-gen gpt --layers 2 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 | zshard-opt --zshard-lower-adamw | FileCheck %s
// RUN: zshard-gen gpt --layers 2 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 | zshard-opt --zshard-lower-adamw --mlir-print-debuginfo=false | FileCheck %s --check-prefix=PATH
// RUN: zshard-gen gpt --layers 2 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 | zshard-opt --zshard-verify-contract --canonicalize --cse | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg0: tensor<16x8xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "wte", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg1: tensor<4x8xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "wpe", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg2: tensor<8xf32> {zshard.init = #zshard.init<ones>, zshard.name = "h.0.ln_1.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg3: tensor<8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "h.0.ln_1.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg4: tensor<8x24xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "h.0.attn.c_attn.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg5: tensor<24xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "h.0.attn.c_attn.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg6: tensor<8x8xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "h.0.attn.c_proj.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg7: tensor<8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "h.0.attn.c_proj.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg8: tensor<8xf32> {zshard.init = #zshard.init<ones>, zshard.name = "h.0.ln_2.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg9: tensor<8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "h.0.ln_2.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg10: tensor<8x32xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "h.0.mlp.c_fc.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg11: tensor<32xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "h.0.mlp.c_fc.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg12: tensor<32x8xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "h.0.mlp.c_proj.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg13: tensor<8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "h.0.mlp.c_proj.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg14: tensor<8xf32> {zshard.init = #zshard.init<ones>, zshard.name = "h.1.ln_1.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: zshard.name = "h.1.mlp.c_proj.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg26: tensor<8xf32> {zshard.init = #zshard.init<ones>, zshard.name = "ln_f.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg27: tensor<8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "ln_f.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg28: tensor<8x16xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "lm_head.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg29: tensor<16x8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "wte.exp_avg", zshard.param = "wte", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg57: tensor<8x16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "lm_head.weight.exp_avg", zshard.param = "lm_head.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg58: tensor<16x8xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "wte.exp_avg_sq", zshard.param = "wte", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg86: tensor<8x16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "lm_head.weight.exp_avg_sq", zshard.param = "lm_head.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg87: tensor<2x4xi32> {zshard.name = "tokens", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg88: tensor<2x4xi32> {zshard.name = "targets", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg89: tensor<f32> {zshard.name = "lr", zshard.role = #zshard.role<hyper>}
// CHECK-SAME: %arg90: tensor<f32> {zshard.name = "step", zshard.role = #zshard.role<hyper>} loc(""))
// CHECK-SAME: -> (tensor<f32> {zshard.role = #zshard.role<loss>},
// CHECK-SAME: tensor<16x8xf32> {zshard.name = "wte", zshard.role = #zshard.role<param_out>}
// CHECK-SAME: tensor<8x16xf32> {zshard.name = "lm_head.weight", zshard.role = #zshard.role<param_out>}
// CHECK-SAME: tensor<16x8xf32> {zshard.name = "wte.exp_avg", zshard.role = #zshard.role<opt_state_out>}
// CHECK-SAME: tensor<8x16xf32> {zshard.name = "lm_head.weight.exp_avg_sq", zshard.role = #zshard.role<opt_state_out>})
// CHECK-SAME: attributes {zshard.module_classes = {h.0 = "GPT2Block", h.0.attn = "GPT2Attention", h.0.attn.c_attn = "Conv1D", {{.*}}, h.1.mlp.c_proj = "Conv1D", lm_head = "Linear", ln_f = "LayerNorm"}, zshard.step}

// The embedding gather: a tensor.extract of wte at the token and column.
// CHECK: linalg.generic {{.*}} ins(%arg87 : tensor<2x4xi32>) outs(%{{.*}} : tensor<2x4x8xf32>)
// CHECK: arith.index_cast
// CHECK: tensor.extract %arg0[
// Heads: q, k, v sliced out of the fused qkv by constant indices in the maps.
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2, 3, 4]] output_shape [2, 4, 3, 2, 4] {{.*}}: tensor<8x24xf32> into tensor<2x4x3x2x4xf32>
// CHECK: %{{.*}}:3 = linalg.generic
// The attention of the split heads [B, H, T, D/H], scale 1/sqrt(D/H); the
// backward takes its out and lse (test/Gen/attention-memory.mlir: no [T, T]
// tensor anywhere).
// CHECK: %[[O:.*]], %[[LSE:.*]] = zshard.causal_attention %{{.*}}#0, %{{.*}}#1, %{{.*}}#2 scale(5.000000e-01) {{.*}}: tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
// The logits use lm_head.weight directly.
// CHECK: linalg.matmul {{.*}}ins(%{{.*}}, %arg28 : tensor<8x8xf32>, tensor<8x16xf32>)
// Backward of the logits: dx = dlogits @ lm_head^T, dlm_head = x^T @ dlogits.
// CHECK: linalg.matmul indexing_maps = [affine_map{{.*}}] {{.*}}ins(%{{.*}}, %arg28 : tensor<8x16xf32>, tensor<8x16xf32>)
// The embedding gradient adds each token's row of the upstream gradient into
// the row of its id, in token order (so repeated tokens add up): a parallel
// loop over the 8 columns, a loop over the 2x4 tokens, nothing over the vocab
// (test/Gen/embedding-backward.mlir checks the shape in full).
// CHECK: scf.forall (%{{.*}}) in (8) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<16x8xf32>)
// CHECK: tensor.extract %arg87[%{{.*}}, %{{.*}}] : tensor<2x4xi32>
// CHECK: tensor.insert
// CHECK: tensor.parallel_insert_slice
// AdamW for wte, first of the parameters.
// CHECK: linalg.generic {{.*}} ins(%arg90 : tensor<f32>)
// CHECK: math.powf
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}}, %arg29, %arg58, %arg89,

// The embedding gather, then the layers' forward.
// PATH: ins(%arg87 : tensor<2x4xi32>) outs(%{{.*}} : tensor<2x4x8xf32>) attrs = {{ *}}{zshard.path = "wte"}
// PATH-NEXT: ^bb0
// PATH: tensor.extract %arg0
// PATH: outs(%{{[^:]*}} : tensor<2x4x8xf32>) attrs = {{ *}}{zshard.path = "wpe"}
// PATH: outs(%{{[^:]*}} : tensor<8x8xf32>) attrs = {{ *}}{zshard.path = "h.0.ln_1"}
// PATH: linalg.matmul {zshard.path = "h.0.attn.c_attn"} ins(%{{.*}}, %arg4
// PATH: tensor.expand_shape {{.*}} {zshard.path = "h.0.attn"} :
// PATH: zshard.causal_attention {{.*}} scale(5.000000e-01) {zshard.path = "h.0.attn"} : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
// PATH: linalg.matmul {zshard.path = "h.0.attn.c_proj"} ins(%{{.*}}, %arg6
// PATH: outs(%{{[^:]*}} : tensor<8x8xf32>) attrs = {{ *}}{zshard.path = "h.0"}
// PATH: outs(%{{[^:]*}} : tensor<8x8xf32>) attrs = {{ *}}{zshard.path = "h.0.ln_2"}
// PATH: linalg.matmul {zshard.path = "h.0.mlp.c_fc"} ins(%{{.*}}, %arg10
// PATH: attrs = {{ *}}{zshard.path = "h.0.mlp"}
// PATH: math.tanh
// PATH: linalg.matmul {zshard.path = "h.0.mlp.c_proj"} ins(%{{.*}}, %arg12
// PATH: outs(%{{[^:]*}} : tensor<8x8xf32>) attrs = {{ *}}{zshard.path = "h.0"}
// PATH: zshard.causal_attention {{.*}} {zshard.path = "h.1.attn"}
// PATH: outs(%{{[^:]*}} : tensor<8x8xf32>) attrs = {{ *}}{zshard.path = "ln_f"}
// PATH: linalg.matmul {zshard.path = "lm_head"} ins(%{{.*}}, %arg28
// The loss is at the root module: no path.
// PATH: outs(%{{[^:]*}} : tensor<f32>) {{[{]$}}
// Backward, in reverse module order, with the same paths.
// PATH: linalg.matmul {{.*}} {zshard.path = "lm_head"} ins(%{{.*}}, %arg28
// PATH: outs(%{{[^:]*}} : tensor<8xf32>, tensor<8xf32>) attrs = {{ *}}{zshard.path = "ln_f"}
// PATH: linalg.matmul {{.*}} {zshard.path = "h.1.mlp.c_proj"} ins(%{{.*}}, %arg24
// PATH: attrs = {{ *}}{zshard.path = "h.1.mlp"}
// PATH: math.tanh
// PATH: zshard.causal_attention_grad {{.*}} {zshard.path = "h.1.attn"}
// PATH: linalg.matmul {{.*}} {zshard.path = "h.1.attn.c_attn"} ins(%{{.*}}, %arg16
// PATH: linalg.matmul {{.*}} {zshard.path = "h.0.attn.c_attn"} ins(%{{.*}}, %arg4
// PATH: outs(%{{[^:]*}} : tensor<8xf32>, tensor<8xf32>) attrs = {{ *}}{zshard.path = "h.0.ln_1"}
// PATH: outs(%{{[^:]*}} : tensor<4x8xf32>) attrs = {{ *}}{zshard.path = "wpe"}
// PATH: scf.forall (%{{.*}}) in (8) {{.*}} -> (tensor<16x8xf32>) {
// PATH: scf.forall.in_parallel {
// PATH: } {zshard.path = "wte"}
// AdamW ops carry the path of the parameter's module.
// PATH: ins(%arg90 : tensor<f32>) {{.*}} attrs = {{ *}}{zshard.path = "wte"}
// PATH: math.powf
// PATH: ins(%arg0, {{.*}} attrs = {{ *}}{zshard.path = "wte"}
// PATH: ins(%arg4, {{.*}} attrs = {{ *}}{zshard.path = "h.0.attn.c_attn"}
// PATH: ins(%arg28, {{.*}} attrs = {{ *}}{zshard.path = "lm_head"}
// PATH: return

// CANON: func.func @train_step(
// CANON: return
