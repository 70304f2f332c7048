// Tests that `gpt --preset llama2-7b` / `llama2-70b` (GPT-2 blocks at Llama-2
// sizes) write the full-size shapes
// (32 / 80 blocks, d-model 4096 / 8192, 32 / 64 heads, vocab 32000, seq 4096,
// batch 1, untied) as function arguments only, mark the module
// `zshard.shapes_only`, and that an explicit option overrides the preset.

// RUN: zshard-gen gpt --preset llama2-7b | zshard-opt --zshard-verify-contract | FileCheck %s --check-prefix=L7
// RUN: zshard-gen gpt --preset llama2-70b | FileCheck %s --check-prefix=L70
// RUN: zshard-gen gpt --preset llama2-7b --layers 2 --tied | FileCheck %s --check-prefix=OVERRIDE
// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 2 | FileCheck %s --check-prefix=PLAIN
// The GPT-2-block presets say what they are on stderr.
// RUN: zshard-gen gpt --preset llama2-70b --layers 1 2>&1 >/dev/null | FileCheck %s --check-prefix=NOTE
// NOTE: zshard-gen: gpt --preset llama2-70b: GPT-2 blocks at Llama-2 sizes, not the Llama architecture (that is `zshard-gen llama --preset llama2-70b`){{$}}
// NOTE-NOT: zshard-gen

// L7: module attributes {zshard.shapes_only}
// L7: func.func @train_step(%arg0: tensor<32000x4096xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "wte", zshard.role = #zshard.role<param>}
// L7-SAME: %arg1: tensor<4096x4096xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "wpe", zshard.role = #zshard.role<param>}
// L7-SAME: %arg4: tensor<4096x12288xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "h.0.attn.c_attn.weight", zshard.role = #zshard.role<param>}
// L7-SAME: tensor<16384x4096xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "h.31.mlp.c_proj.weight", zshard.role = #zshard.role<param>}
// L7-SAME: tensor<4096x32000xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "lm_head.weight", zshard.role = #zshard.role<param>}
// L7-SAME: tensor<1x4096xi32> {zshard.name = "tokens", zshard.role = #zshard.role<batch>}
// Scores per head: [B*H, T, T].
// L7: zshard.causal_attention {{.*}} : tensor<1x32x4096x128xf32>, tensor<1x32x4096x128xf32>, tensor<1x32x4096x128xf32>

// L70: module attributes {zshard.shapes_only}
// L70: func.func @train_step(%arg0: tensor<32000x8192xf32>
// L70-SAME: zshard.name = "h.79.mlp.c_proj.bias"
// L70-SAME: tensor<8192x32000xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "lm_head.weight", zshard.role = #zshard.role<param>}
// L70: zshard.causal_attention {{.*}} : tensor<1x64x4096x128xf32>, tensor<1x64x4096x128xf32>, tensor<1x64x4096x128xf32>

// OVERRIDE: module attributes {zshard.shapes_only}
// OVERRIDE: zshard.name = "h.1.ln_1.weight"
// OVERRIDE-NOT: h.2.ln_1.weight
// OVERRIDE-NOT: lm_head.weight

// PLAIN-NOT: zshard.shapes_only
// PLAIN: func.func @train_step
