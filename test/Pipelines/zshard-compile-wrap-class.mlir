// RUN: zshard-gen llama --layers 2 --d-model 12 --heads 6 --kv-heads 2 --ffn-hidden 20 --vocab 17 --seq 4 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 2 --wrap transformer=LlamaDecoderLayer --emit=sharded-mlir -o %t.class.mlir
// RUN: FileCheck %s < %t.class.mlir
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 2 '--wrap=transformer=model.layers.<i>' --emit=sharded-mlir | diff %t.class.mlir -
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo --zshard-form-units="layer-classes=LlamaDecoderLayer ranks=2" --zshard-shard --zshard-async --zshard-prefetch | diff %t.class.mlir -
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 2 --wrap transformer=LlamaDecoderLayer,LlamaMLP --emit=sharded-mlir | FileCheck %s --check-prefix=NESTED
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 2 --wrap transformer=LlamaDecoderLayer --remat all --emit=sharded-mlir | FileCheck %s --check-prefix=REMAT
// RUN: not zshard-compile %t.mlir --strategy full_shard --ranks 2 --wrap transformer=GPT2Block --emit=sharded-mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN --match-full-lines

// Tests --wrap transformer=CLASS (FSDP's transformer_layer_cls): zshard-gen
// llama records the Hugging Face class of each module it builds
// (zshard.module_classes), and wrapping by LlamaDecoderLayer gives, byte for
// byte, the step that the path pattern model.layers.<i> and the
// zshard-form-units layer-classes option give.
// CHECK:     zshard.unit @root on @world[0] full_shard
// CHECK:     zshard.unit @model.layers.0 on @world[0] full_shard
// CHECK:     zshard.unit @model.layers.1 on @world[0] full_shard
// CHECK-NOT: zshard.unit @

// Nested classes: each mlp is its own unit inside its decoder layer's.
// NESTED:     zshard.unit @model.layers.0 on @world[0] full_shard
// NESTED-NEXT:  "model.layers.0.self_attn.q_proj.weight"
// NESTED-NOT:   mlp
// NESTED:       "model.layers.0.post_attention_layernorm.weight"
// NESTED-NEXT: ]
// NESTED-NEXT: zshard.unit @model.layers.0.mlp on @world[0] full_shard
// NESTED-NEXT:  "model.layers.0.mlp.gate_proj.weight"
// NESTED:     zshard.unit @model.layers.1.mlp on @world[0] full_shard

// Checkpointing uses the class's blocks too.
// REMAT: zshard.remat = "model.layers.0"

// UNKNOWN: zshard-compile: error: --wrap transformer=GPT2Block: 'GPT2Block' matches no parameter of {{.+}}.mlir; its blocks are model.layers.<i>; its module classes are Embedding, Linear, LlamaAttention, LlamaDecoderLayer, LlamaMLP, LlamaModel, LlamaRMSNorm
// UNKNOWN-NOT: {{.+}}
