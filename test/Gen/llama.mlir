// Tests that `zshard-gen llama` writes the contract step of a 2-layer Llama
// with grouped-query attention: parameters named and shaped as a Hugging Face
// LlamaForCausalLM state_dict (linear weights [out, in], no biases, untied
// head) in its order; the RoPE tables computed once with cos / sin; the
// attention as zshard.causal_attention on 6 query and 2 kv heads (the op maps
// heads to kv heads: nothing is repeated, no group sum) and its grad giving
// dk, dv per kv head; the module paths of the ops; that --kv-heads defaults
// to --heads; and that a bf16 step
// verifies with bf16 parameters and f32 master copies.

// RUN: zshard-gen llama --layers 2 --d-model 12 --heads 6 --kv-heads 2 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 | zshard-opt --zshard-verify-contract | FileCheck %s
// RUN: zshard-gen llama --layers 2 --d-model 12 --heads 6 --kv-heads 2 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 | zshard-opt --mlir-print-debuginfo=false | FileCheck %s --check-prefix=PATH
// RUN: zshard-gen llama --layers 1 --d-model 8 --heads 2 --ffn-hidden 8 --vocab 16 --seq 4 --batch 1 | FileCheck %s --check-prefix=MHA
// RUN: zshard-gen llama --layers 1 --d-model 12 --heads 6 --kv-heads 2 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 --dtype bf16 | zshard-opt --zshard-verify-contract | FileCheck %s --check-prefix=BF16

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg0: tensor<17x12xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.embed_tokens.weight"
// CHECK-SAME: %arg1: tensor<12x12xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.self_attn.q_proj.weight"
// CHECK-SAME: %arg2: tensor<4x12xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.self_attn.k_proj.weight"
// CHECK-SAME: %arg3: tensor<4x12xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.self_attn.v_proj.weight"
// CHECK-SAME: %arg4: tensor<12x12xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.self_attn.o_proj.weight"
// CHECK-SAME: %arg5: tensor<20x12xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.mlp.gate_proj.weight"
// CHECK-SAME: %arg6: tensor<20x12xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.mlp.up_proj.weight"
// CHECK-SAME: %arg7: tensor<12x20xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.mlp.down_proj.weight"
// CHECK-SAME: %arg8: tensor<12xf32> {zshard.init = #zshard.init<ones>, zshard.name = "model.layers.0.input_layernorm.weight"
// CHECK-SAME: %arg9: tensor<12xf32> {zshard.init = #zshard.init<ones>, zshard.name = "model.layers.0.post_attention_layernorm.weight"
// CHECK-SAME: zshard.name = "model.layers.1.post_attention_layernorm.weight"
// CHECK-SAME: %arg19: tensor<12xf32> {zshard.init = #zshard.init<ones>, zshard.name = "model.norm.weight"
// CHECK-SAME: %arg20: tensor<17x12xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "lm_head.weight"
// CHECK-NOT: bias
// CHECK-SAME: tensor<2x4xi32> {zshard.name = "tokens"
// The rotary tables, [T, hd/2].
// CHECK: math.cos
// CHECK: math.sin
// CHECK: -> (tensor<4x1xf32>, tensor<4x1xf32>)
// Three kv heads repeated to six query heads.
// CHECK-NOT: floordiv
// CHECK: %{{.*}}, %{{.*}} = zshard.causal_attention %{{.*}}, %{{.*}}, %{{.*}} scale(0.707106769) {{.*}}: tensor<2x6x4x2xf32>, tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>
// CHECK-NOT: floordiv
// CHECK: zshard.causal_attention_grad {{.*}} : tensor<2x6x4x2xf32>, tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>, tensor<2x6x4x2xf32>, tensor<2x6x4xf32>, tensor<2x6x4x2xf32>

// PATH: {zshard.path = "model.rotary_emb"}
// PATH: math.cos
// PATH: linalg.matmul {{.*}}{zshard.path = "model.layers.0.self_attn.q_proj"} ins(%{{.*}}, %arg1 : tensor<8x12xf32>, tensor<12x12xf32>)
// PATH: zshard.causal_attention {{.*}} {zshard.path = "model.layers.0.self_attn"}
// PATH: {zshard.path = "model.layers.0.mlp"}
// PATH: math.exp
// PATH: {zshard.path = "model.layers.1.mlp.down_proj"}
// PATH: {zshard.path = "model.norm"}
// PATH: linalg.matmul {{.*}}{zshard.path = "lm_head"}
// Backward, last layer first.
// PATH: {zshard.path = "model.layers.1.mlp.down_proj"}
// PATH: {zshard.path = "model.layers.0.input_layernorm"}
// PATH: {zshard.path = "model.embed_tokens"}

// MHA-NOT: floordiv
// MHA: zshard.name = "model.layers.0.self_attn.k_proj.weight"
// MHA-NOT: floordiv

// BF16: %arg0: tensor<17x12xbf16> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.embed_tokens.weight"
// BF16: zshard.name = "model.embed_tokens.weight.master"
