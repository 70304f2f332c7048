// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank 1MiB --device cpu --link eth10 -o %t.zsa | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.zsa/manifest.json
// RUN: zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank 8MiB --device cpu --link eth10 --emit=memory-plan | FileCheck %s --check-prefix=ROOMY
// RUN: not zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank 300KiB --device cpu --link eth10 --emit=memory-plan 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: not zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank lots 2>&1 | FileCheck %s --check-prefix=BADSIZE

// Tests --auto on a 2-block GPT over 4 ranks: the six candidates in FSDP's
// decision order, each with its predicted peak per rank (memory plan),
// step time and exposed communication (cost model with the prefetch
// schedule) and a verdict. With 1 MiB per rank no_shard does not fit and
// shard_grad_op, the fastest of the rest on this device and link, is
// chosen and compiled.
// CHECK:      auto: 4 ranks, 1.00 MiB per rank, cpu over eth10
// CHECK-NEXT: candidate peak/rank step (ms) exposed (ms) verdict
// CHECK-NEXT: no_shard {{.*}} does not fit: {{.*}} over
// CHECK-NEXT: no_shard+remat {{.*}} does not fit: {{.*}} over
// CHECK-NEXT: shard_grad_op {{.*}} chosen: the fastest that fits
// CHECK-NEXT: shard_grad_op+remat {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op
// CHECK-NEXT: full_shard {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op
// CHECK-NEXT: full_shard+remat {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op
// CHECK-NEXT: offload optimizer state - - - not tried: the runtime has no host pool yet
// MANIFEST: "strategy": "shard_grad_op"

// With room for everything the fastest candidate wins whatever its memory.
// ROOMY: no_shard {{.*}} fits
// ROOMY: chosen: the fastest that fits

// When nothing fits, the error names the smallest candidate and the
// shortfall in bytes.
// TIGHT: error: {{.*}}auto: nothing fits 307200 bytes per rank; the smallest peak is {{[a-z_+]+}}'s {{[0-9]+}} bytes, {{[0-9]+}} bytes short
// TIGHT: zshard-compile: --auto found no strategy for

// BADSIZE: zshard-compile: --auto needs --memory-per-rank as a byte size such as 80GiB, got 'lots'
