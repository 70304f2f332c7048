// RUN: zshard-gen gpt --layers 2 --d-model 8 --heads 2 --vocab 16 --seq 4 --batch 1 -o %t.mlir
// RUN: zshard-opt %t.mlir --zshard-remat --canonicalize --cse | FileCheck %s --check-prefix=ALL
// RUN: zshard-opt %t.mlir --zshard-remat="policy=every=2" | FileCheck %s --check-prefix=EVERY
// RUN: zshard-opt %t.mlir --zshard-remat="policy=selective" | FileCheck %s --check-prefix=SEL
// RUN: zshard-opt %t.mlir --zshard-remat="blocks=h.1" | FileCheck %s --check-prefix=NAMED
// RUN: zshard-opt %t.mlir --zshard-remat="policy=none" | FileCheck %s --check-prefix=NONE
// RUN: zshard-opt %t.mlir --zshard-remat="policy=budget=1000000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET --implicit-check-not=note:
// RUN: not zshard-opt %t.mlir --zshard-remat="policy=budget=100" 2>&1 | FileCheck %s --check-prefix=TOOSMALL
// RUN: zshard-opt %t.mlir --zshard-remat="policy=budget=1MiB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MIB
// RUN: zshard-opt %t.mlir --zshard-remat="policy=every=3 blocks=h.0,h.1" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: zshard-opt %t.mlir --pass-pipeline="builtin.module(zshard-remat{blocks={h.0,h.1} pattern=h.<i> policy=every=3})" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not zshard-opt %t.mlir --zshard-remat="policy=sometimes" 2>&1 | FileCheck %s --check-prefix=BADPOLICY --implicit-check-not=error:
// RUN: not zshard-opt %t.mlir --zshard-remat="blocks=h.7" 2>&1 | FileCheck %s --check-prefix=BADBLOCK
// RUN: not zshard-opt %t.mlir --zshard-remat="pattern=layers.<i>" 2>&1 | FileCheck %s --check-prefix=NOMATCH
// RUN: zshard-opt %t.mlir --zshard-remat --zshard-verify-contract \
// RUN:   --zshard-form-units="ranks=2 strategy=full_shard" --zshard-shard -o /dev/null

// Tests activation checkpointing on a 2-block GPT. With policy=all, the
// forward of each block is cloned (tagged zshard.remat, so CSE keeps the
// clones apart from the forward) right before backward first reads it, in
// reverse block order: h.1's clones come first, including its matrix
// products, and h.0's later; backward reads the clones, so h.1's forward
// matmul output is read by nothing after the loss.
// ALL:      %[[QKV:.*]] = linalg.matmul {{.*}}ins(%{{.*}}, %arg16 : tensor<4x8xf32>, tensor<8x24xf32>)
// ALL:      linalg.generic {{.*}}zshard.remat = "h.1"
// ALL:      linalg.matmul {zshard.path = "h.1.attn.c_attn", zshard.remat = "h.1"} ins(%{{.*}}, %arg16 : tensor<4x8xf32>, tensor<8x24xf32>)
// ALL:      linalg.matmul {zshard.path = "h.0.attn.c_attn", zshard.remat = "h.0"} ins(%{{.*}}, %arg4 : tensor<4x8xf32>, tensor<8x24xf32>)
// ALL-NOT:  %[[QKV]]
// ALL:      return

// every=2: blocks 0, 2, ...: only h.0.
// EVERY:     zshard.remat = "h.0"
// EVERY-NOT: zshard.remat = "h.1"

// selective: matrix products stay saved; only the cheap ops between them
// are recomputed.
// SEL:     zshard.remat = "h.1"
// SEL-NOT: linalg.matmul {zshard.remat
// SEL:     zshard.remat = "h.0"
// SEL-NOT: linalg.matmul {zshard.remat

// NAMED:     zshard.remat = "h.1"
// NAMED-NOT: zshard.remat = "h.0"

// NONE-NOT: zshard.remat

// BUDGET: {{^}}zshard-gen:0:0: remark: zshard-remat: budget=1000000 bytes: checkpointing 0 of 2 blocks (); {{[0-9]+}} bytes of activations live across forward and backward

// TOOSMALL: {{^}}zshard-gen:0:0: error: zshard-remat: budget=100 bytes cannot be met: with 2 of 2 blocks checkpointed {{[0-9]+}} bytes of activations still live across forward and backward, {{[0-9]+}} bytes too many
// A budget is a byte size; the policy prints as it parses, budgets in bytes.
// MIB: remark: zshard-remat: budget=1048576 bytes: checkpointing 0 of 2 blocks
// PIPELINE: zshard-remat{blocks={h.0,h.1} pattern=h.<i> policy=every=3}
// BADPOLICY: {{^}}zshard-opt: for the --policy option: unknown policy 'sometimes'; expected none, all, every=K, selective or budget=BYTES{{$}}
// BADBLOCK: {{^}}zshard-gen:0:0: error: zshard-remat: blocks names 'h.7', which is not a block of pattern 'h.<i>' (its blocks are h.0, h.1){{$}}
// NOMATCH: {{^}}zshard-gen:0:0: error: zshard-remat: pattern 'layers.<i>' matches no forward op; no block to checkpoint (the step's repeated blocks are h.<i>){{$}}
