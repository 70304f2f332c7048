// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank 500KiB --device cpu --link eth10 -o %t.zsa | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.zsa/manifest.json
// RUN: zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank 360KiB --device cpu --link eth10 --memory-report -o %t-offload.zsa | FileCheck %s --check-prefix=OFFLOAD
// RUN: FileCheck %s --check-prefix=OFFLOAD-MANIFEST < %t-offload.zsa/manifest.json
// RUN: zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank 8MiB --device cpu --link eth10 --emit=memory-plan | FileCheck %s --check-prefix=ROOMY
// RUN: not zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank 300KiB --device cpu --link eth10 --emit=memory-plan 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: not zshard-compile %t.mlir --auto --ranks 4 --memory-per-rank lots 2>&1 | FileCheck %s --check-prefix=BADSIZE

// Tests --auto on a 2-block GPT over 4 ranks: the six candidates in FSDP's
// decision order, each with its predicted peak per rank (memory plan),
// step time and exposed communication (cost model with the prefetch
// schedule) and a verdict. With 500 KiB per rank no_shard does not fit and
// shard_grad_op, the fastest of the rest on this device and link, is
// chosen and compiled; offloading is not tried for candidates that fit.
// CHECK:      auto: 4 ranks, 500.00 KiB per rank, cpu over eth10
// CHECK-NEXT: candidate peak/rank step (ms) exposed (ms) verdict
// CHECK-NEXT: no_shard {{.*}} does not fit: {{.*}} over
// CHECK-NEXT: no_shard+remat {{.*}} does not fit: {{.*}} over
// CHECK-NEXT: shard_grad_op {{.*}} chosen: the fastest that fits
// CHECK-NEXT: shard_grad_op+remat {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op
// CHECK-NEXT: full_shard {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op
// CHECK-NEXT: full_shard+remat {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op
// CHECK-NEXT: no_shard+offload {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op
// CHECK-NEXT: no_shard+remat+offload {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op
// CHECK-NOT:  offload
// MANIFEST: "strategy": "shard_grad_op"
// MANIFEST-NOT: "placement"

// With 360 KiB nothing fits with its optimizer state in device memory; each
// candidate is tried again with it offloaded (its held optimizer state off
// the device peak, its step longer by moving that state over the host link
// and back), and the fastest of those that fit is chosen. The compiled
// plan agrees with the prediction and puts the state in the host pool; the
// manifest places it there and the updates are in place.
// OFFLOAD:      full_shard+remat {{.*}} does not fit
// OFFLOAD-NEXT: no_shard+offload [[NSPEAK:[0-9.]+ KiB]] {{.*}} fits, {{[0-9.]+}}x slower than shard_grad_op+offload
// OFFLOAD-NEXT: no_shard+remat+offload
// OFFLOAD-NEXT: shard_grad_op+offload [[PEAK:[0-9.]+ KiB]] {{.*}} chosen: the fastest that fits
// OFFLOAD:      host pool per rank for shard_grad_op+offload: [[HOST:[0-9.]+ KiB]]
// OFFLOAD:      optimizer_state 0 0 0
// OFFLOAD:      host_offload {{[0-9]+}} {{[0-9]+}} {{[0-9]+}}
// OFFLOAD:      peak per rank: [[PEAK]]
// OFFLOAD-NEXT: host pool per rank (offloaded, not in the peak): [[HOST]]
// OFFLOAD-MANIFEST: "placement": "host"
// OFFLOAD-MANIFEST: "in_place": true
// OFFLOAD-MANIFEST: "strategy": "shard_grad_op"

// With room for everything the fastest candidate wins whatever its memory.
// ROOMY: no_shard {{.*}} fits
// ROOMY: chosen: the fastest that fits

// When nothing fits, the error names the smallest candidate and the
// shortfall in bytes.
// TIGHT: zshard-compile: error: auto: nothing fits 307200 bytes per rank; the smallest peak is {{[a-z_+]+}}'s {{[0-9]+}} bytes, {{[0-9]+}} bytes short
// TIGHT-NOT: error

// BADSIZE: zshard-compile: error: --auto needs --memory-per-rank as a byte size such as 80GiB, got 'lots'
