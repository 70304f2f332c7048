// Tests that no [T, T] buffer is live between the forward and the backward
// of attention, for both frontends' models, at odd T (13) and with GQA: the
// generated step holds no 13x13 tensor at all (the scores exist only inside
// the runtime's tiled kernels), and after bufferization (the step as the
// memory plan reads it) the attention keeps out and lse [B, H, T] and calls
// the tiled kernels, with no 13x13 buffer anywhere.

// RUN: zshard-gen gpt --layers 2 --d-model 12 --heads 3 --vocab 16 --seq 13 --batch 2 | FileCheck %s --check-prefix=GPT --implicit-check-not=x13x13x
// RUN: zshard-gen gpt --layers 2 --d-model 12 --heads 3 --vocab 16 --seq 13 --batch 2 | zshard-opt --zshard-bufferize-step | FileCheck %s --check-prefix=BUF --implicit-check-not=x13x13x
// RUN: zshard-gen llama --layers 2 --d-model 12 --heads 6 --kv-heads 2 --ffn-hidden 20 --vocab 17 --seq 13 --batch 2 | FileCheck %s --check-prefix=LLAMA --implicit-check-not=x13x13x
// RUN: zshard-gen llama --layers 2 --d-model 12 --heads 6 --kv-heads 2 --ffn-hidden 20 --vocab 17 --seq 13 --batch 2 | zshard-opt --zshard-bufferize-step | FileCheck %s --check-prefix=BUF --implicit-check-not=x13x13x

// GPT: zshard.causal_attention {{.*}} : tensor<2x3x13x4xf32>, tensor<2x3x13x4xf32>, tensor<2x3x13x4xf32>
// GPT: zshard.causal_attention {{.*}} : tensor<2x3x13x4xf32>
// GPT: zshard.causal_attention_grad {{.*}} : tensor<2x3x13x4xf32>, tensor<2x3x13x4xf32>, tensor<2x3x13x4xf32>, tensor<2x3x13x4xf32>, tensor<2x3x13xf32>, tensor<2x3x13x4xf32>
// GPT: zshard.causal_attention_grad

// LLAMA: zshard.causal_attention {{.*}} : tensor<2x6x13x2xf32>, tensor<2x2x13x2xf32>, tensor<2x2x13x2xf32>
// LLAMA: zshard.causal_attention
// LLAMA: zshard.causal_attention_grad {{.*}} : tensor<2x6x13x2xf32>, tensor<2x2x13x2xf32>, tensor<2x2x13x2xf32>, tensor<2x6x13x2xf32>, tensor<2x6x13xf32>, tensor<2x6x13x2xf32>
// LLAMA: zshard.causal_attention_grad

// BUF: memref.alloc() {{.*}} : memref<2x{{[36]}}x13xf32>
// BUF: call @zshard_rt_step_attention_strided_fwd(
// BUF: call @zshard_rt_step_attention_strided_fwd(
// BUF: call @zshard_rt_step_attention_strided_bwd(
// BUF: call @zshard_rt_step_attention_strided_bwd(
