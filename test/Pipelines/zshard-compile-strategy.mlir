// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --emit=sharded-mlir -o %t.one.mlir
// RUN: FileCheck %s < %t.one.mlir
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo --zshard-form-units="pattern=h.<i> ranks=4 strategy=full_shard" --zshard-shard --zshard-async --zshard-prefetch -o %t.chain.mlir
// RUN: diff %t.chain.mlir %t.one.mlir
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo --zshard-shard-step="strategy=full_shard ranks=4" | diff %t.chain.mlir -
// RUN: zshard-compile %t.mlir --strategy FULL_SHARD --ranks 4 --emit=sharded-mlir | diff %t.chain.mlir -
// RUN: zshard-compile %t.mlir --strategy _HYBRID_SHARD_ZERO2 --ranks 4 --replicas 2 --remat budget=32KiB --prefetch backward=post,max-inflight=2 --emit=sharded-mlir -o %t.hybrid.mlir 2>/dev/null
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo --zshard-remat="policy=budget=32768 pattern=h.<i>" --zshard-form-units="pattern=h.<i> ranks=4 replicas=2 strategy=hybrid_shard_zero2" --zshard-shard --zshard-async --zshard-prefetch="backward=post max-inflight=2" 2>/dev/null | diff - %t.hybrid.mlir
// RUN: FileCheck %s --check-prefix=HYBRID < %t.hybrid.mlir
// RUN: zshard-compile %t.mlir --strategy shard_grad_op --ranks 2 --prefetch none --emit=sharded-mlir | FileCheck %s --check-prefix=SYNC
// RUN: zshard-compile %t.mlir --strategy zero1 --ranks 2 --wrap size=20000 --emit=sharded-mlir | FileCheck %s --check-prefix=SIZE
// RUN: sed 's/"h\./"transformer.h./g' %t.mlir > %t.exported.mlir
// RUN: zshard-compile %t.exported.mlir --strategy full_shard --ranks 2 --remat all --emit=sharded-mlir | FileCheck %s --check-prefix=EXPORTED
// RUN: zshard-compile %t.exported.mlir --auto --ranks 4 --memory-per-rank 500KiB --device cpu --link eth10 --emit=memory-plan | FileCheck %s --check-prefix=AUTO
// RUN: zshard-compile %t.mlir --strategy no_shard --ranks 2 -o %t.zsa
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.zsa/manifest.json

// Tests that `zshard-compile --strategy S --ranks N` runs the sharding
// stages itself, with FSDP's defaults: one unit per block found in the
// parameter names (h.<i> for a zshard-gen step), async collectives with
// BACKWARD_PRE and forward prefetch one unit ahead. The sharded step it
// writes (--emit=sharded-mlir) is, byte for byte, what the explicit
// zshard-opt chain and the zshard-shard-step pipeline write.
// CHECK:     shard.grid @world(shape = 4)
// CHECK:     zshard.unit @root on @world[0] full_shard
// CHECK:     zshard.unit @h.0 on @world[0] full_shard
// CHECK:     zshard.unit @h.1 on @world[0] full_shard
// CHECK-NOT: zshard.unit @
// CHECK:     zshard.all_gather_start {{.*}} unit @h.0
// CHECK:     zshard.wait
// CHECK:     zshard.reduce_scatter_start

// FSDP's names in any case, --replicas, a checkpointing budget with a
// unit, and prefetch options: the same passes as the chain with them.
// HYBRID: shard.grid @world(shape = 2x2)
// HYBRID: zshard.unit @h.0 on @world[1] replicate [0] hybrid_shard_zero2
// HYBRID: zshard.remat = "h.0"

// --prefetch none leaves every collective synchronous.
// SYNC-NOT: _start
// SYNC:     zshard.all_gather
// SYNC-NOT: _start

// --wrap size=N: units of at least N elements, in argument order.
// SIZE: zshard.unit @unit0 on @world[0] zero1
// SIZE: zshard.unit @unit1 on @world[0] zero1

// An exported step's blocks are transformer.h.<i>: units and checkpointed
// blocks follow them without being told (also for --auto).
// EXPORTED:     zshard.unit @root
// EXPORTED:     zshard.unit @transformer.h.0
// EXPORTED:     zshard.unit @transformer.h.1
// EXPORTED-NOT: zshard.unit @
// EXPORTED-DAG: zshard.remat = "transformer.h.0"
// EXPORTED-DAG: zshard.remat = "transformer.h.1"
// AUTO: chosen: the fastest that fits

// The artifact records the grid and the strategy.
// MANIFEST: "strategy": "no_shard"
