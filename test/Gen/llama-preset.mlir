// Tests that `zshard-gen llama --preset` writes the published Llama shapes
// (Llama-2-7B: 32 layers, d 4096, 32 heads, ffn 11008, vocab 32000;
// Llama-2-70B: 80 layers, d 8192, 64 heads, 8 kv heads, ffn 28672;
// Llama-3-8B: 32 layers, d 4096, 32 heads, 8 kv heads, ffn 14336, vocab
// 128256, rope theta 500000) as a shapes-only module, prints the parameter
// count of each on stderr (6.74e9, 6.90e10, 8.03e9, as Hugging Face counts
// them), and that explicit options override the preset (and its count).

// RUN: zshard-gen llama --preset llama2-7b 2>&1 >/dev/null | FileCheck %s --check-prefix=C7
// RUN: zshard-gen llama --preset llama2-70b 2>&1 >/dev/null | FileCheck %s --check-prefix=C70
// RUN: zshard-gen llama --preset llama3-8b 2>&1 >/dev/null | FileCheck %s --check-prefix=C8
// RUN: zshard-gen llama --preset llama2-7b --layers 2 2>&1 >/dev/null | FileCheck %s --check-prefix=C7L2
// RUN: zshard-gen llama --preset llama2-70b --layers 1 2>/dev/null | zshard-opt --zshard-verify-contract | FileCheck %s --check-prefix=L70
// RUN: zshard-gen llama --preset llama3-8b --layers 1 2>/dev/null | FileCheck %s --check-prefix=L8

// C7: zshard-gen: llama --preset llama2-7b: 6738415616 parameters (6.74e9)
// C70: zshard-gen: llama --preset llama2-70b: 68976648192 parameters (6.90e10)
// C8: zshard-gen: llama --preset llama3-8b: 8030261248 parameters (8.03e9)
// 2 * 32000 * 4096 + 2 * 202383360 + 4096 (two layers)
// C7L2: zshard-gen: llama --preset llama2-7b: 666914816 parameters (6.67e8)

// L70: module attributes {zshard.shapes_only}
// L70: func.func @train_step(%arg0: tensor<32000x8192xf32>
// L70-SAME: %arg1: tensor<8192x8192xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.self_attn.q_proj.weight"
// L70-SAME: %arg2: tensor<1024x8192xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.self_attn.k_proj.weight"
// L70-SAME: %arg5: tensor<28672x8192xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "model.layers.0.mlp.gate_proj.weight"
// L70-SAME: tensor<1x4096xi32> {zshard.name = "tokens"
// Eight kv heads repeated to 64: [B*H, T, T] scores.
// 64 query heads over 8 kv heads in one op; no [T, T] scores.
// L70: zshard.causal_attention {{.*}} : tensor<1x64x4096x128xf32>, tensor<1x8x4096x128xf32>, tensor<1x8x4096x128xf32>

// L8: module attributes {zshard.shapes_only}
// L8: func.func @train_step(%arg0: tensor<128256x4096xf32>
// L8-SAME: %arg2: tensor<1024x4096xf32>
// L8-SAME: tensor<14336x4096xf32>
// L8-SAME: tensor<1x8192xi32> {zshard.name = "tokens"
