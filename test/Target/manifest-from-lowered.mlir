// RUN: zshard-gen gpt --layers 1 --d-model 16 --heads 2 --vocab 32 --seq 8 --batch 2 -o %t-gpt.mlir
// RUN: zshard-opt %t-gpt.mlir --mlir-print-debuginfo --zshard-shard-step="strategy=hybrid_shard ranks=4 replicas=2 offload=true" -o %t-sharded.mlir
// RUN: zshard-compile %t-sharded.mlir --compile-to=lower -o %t-sharded.lower.mlir
// RUN: FileCheck %s --check-prefix=LOWER < %t-sharded.lower.mlir
// RUN: rm -rf %t-sharded.zsa
// RUN: zshard-compile %t-sharded.mlir -o %t-sharded.zsa
// RUN: zshard-translate --zshard-to-manifest %t-sharded.lower.mlir -o %t-sharded.json
// RUN: diff %t-sharded.json %t-sharded.zsa/manifest.json
// RUN: zshard-gen mlp --widths 8,16,4 --batch 2 -o %t-mlp.mlir
// RUN: zshard-compile %t-mlp.mlir --compile-to=lower -o %t-mlp.lower.mlir
// RUN: rm -rf %t-mlp.zsa
// RUN: zshard-compile %t-mlp.mlir -o %t-mlp.zsa
// RUN: zshard-translate --zshard-to-manifest %t-mlp.lower.mlir | diff - %t-mlp.zsa/manifest.json
// RUN: zshard-compile %t-mlp.mlir --compile-to=lower --target=cuda --cuda-chip=sm_80 --cuda-format=isa -o %t-cuda.lower.mlir
// RUN: zshard-translate --zshard-to-manifest %t-cuda.lower.mlir | FileCheck %s --check-prefix=CUDA

// Tests that the manifest comes from the lowered module alone: the step
// lowered to the LLVM dialect keeps no contract attribute and no unit, only
// its ABI record (with the results updated in place marked so), and the
// manifest written from that module is byte for byte the artifact's, for a
// sharded step (hybrid units, a grid, optimizer state on the host, in-place
// results) and an unsharded one; a CUDA step's record gives its target and
// chip.

// LOWER:     module attributes
// LOWER-SAME: zshard.abi = #zshard.step_abi<step = "train_step"
// LOWER-SAME: in_place = true
// LOWER-SAME: units = [#zshard.abi_unit<name = "root", strategy = hybrid_shard
// LOWER-SAME: grid = "world", grid_shape = [2, 2], ranks = 4
// LOWER-NOT: zshard.role
// LOWER-NOT: zshard.unit @
// LOWER:     llvm.func @train_step

// CUDA: "chip": "sm_80",
// CUDA: "target": "cuda",
