// RUN: zshard-gen mlp --widths 4,3 --batch 2 -o %t-mlp.mlir
// RUN: zshard-compile %t-mlp.mlir --microbatches 2 -o %t-mlp.zsa
// RUN: FileCheck %s --check-prefix=MANIFEST < %t-mlp.zsa/manifest.json
// RUN: zshard-compile %t-mlp.mlir --strategy full_shard --ranks 2 --microbatches 3 --microbatch-gathers keep --prefetch none --emit=sharded-mlir | FileCheck %s --check-prefix=SHARDED
// RUN: not zshard-compile %t-mlp.mlir --microbatches 0 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=ZERO
// RUN: not zshard-compile %t-mlp.mlir --microbatches 2 --microbatch-gathers keep --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=NOSTRATEGY
// RUN: not zshard-compile %t-mlp.mlir --strategy full_shard --ranks 2 --microbatch-gathers keep --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=ONE
// RUN: not zshard-compile %t-mlp.mlir --auto --ranks 2 --memory-per-rank 1GiB --microbatches 2 --microbatch-gathers keep --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=AUTO
// RUN: not zshard-compile %t-mlp.mlir --microbatches 2 --microbatches 3 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=TWICE
// RUN: zshard-opt %t-mlp.mlir --zshard-form-units="pattern=fc.<i> ranks=2" --zshard-shard -o %t-sharded.mlir
// RUN: not zshard-compile %t-sharded.mlir --microbatches 2 --emit=memory-plan 2>&1 | FileCheck %s --match-full-lines --check-prefix=SHARDEDIN
// RUN: zshard-gen gpt --layers 8 --d-model 128 --heads 4 --vocab 64 --seq 8 --batch 1 -o %t.mlir
// RUN: zshard-compile %t.mlir --auto --ranks 8 --memory-per-rank 12MiB --microbatches 2 --device cpu --link eth10 --emit=memory-plan | FileCheck %s --check-prefix=TIGHT
// RUN: zshard-compile %t.mlir --auto --ranks 8 --memory-per-rank 16MiB --microbatches 2 --device cpu --link eth10 --emit=memory-plan | FileCheck %s --check-prefix=ROOMY

// Tests that an unsharded step compiled with --microbatches 2 takes twice
// the rows of each batch argument (the step was written for 2).
// MANIFEST: "name": "x"
// MANIFEST-NEXT: "role": "batch"
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 4,
// MANIFEST-NEXT: 4

// Tests that --strategy with --microbatches accumulates before sharding:
// 3 copies, one gather per unit kept through them, one reduce-scatter per
// unit.
// SHARDED:     zshard.microbatches = 3 : i64
// SHARDED:     zshard.all_gather {{.*}} unit @fc.0
// SHARDED-NOT: zshard.all_gather
// SHARDED:     zshard.microbatch = 2
// SHARDED:     zshard.reduce_scatter avg {{.*}} unit @fc.0
// SHARDED-NOT: zshard.reduce_scatter

// Tests the errors of the options, one line each.
// ZERO: zshard-compile: error: --microbatches must be at least 1, got 0
// NOSTRATEGY: zshard-compile: error: --microbatch-gathers needs --strategy: it places the gathers of a sharded step
// ONE: zshard-compile: error: --microbatch-gathers needs --microbatches K with K > 1
// AUTO: zshard-compile: error: --auto chooses the microbatch gathers: give --auto or --microbatch-gathers, not both
// TWICE: zshard-compile: error: --microbatches given more than once
// SHARDEDIN: {{.*}}error: zshard-accumulate: the step is already sharded (it declares zshard.unit @fc.0); accumulate the unsharded step, before zshard-form-units

// Tests --auto with 2 microbatches on an 8-block GPT over 8 ranks:
// full_shard is tried gathering in every microbatch and keeping its gathers
// through both (+keep): keeping holds every block's parameters whole (the
// peak of shard_grad_op) and gathers half as often, so the cost model
// predicts it faster. With 12 MiB per rank only the regathering full_shard
// variants fit and full_shard is chosen; with 16 MiB full_shard+keep is.
// TIGHT:      auto: 8 ranks, 12.00 MiB per rank, cpu over eth10, 2 microbatches
// TIGHT:      shard_grad_op [[KEEPPEAK:[0-9.]+ MiB]] {{.*}} does not fit
// TIGHT:      full_shard [[PEAK:[0-9.]+ MiB]] {{.*}} chosen: the fastest that fits
// TIGHT-NEXT: full_shard+remat {{.*}} fits
// TIGHT-NEXT: full_shard+keep [[KEEPPEAK]] {{.*}} does not fit
// TIGHT-NEXT: full_shard+keep+remat {{.*}} does not fit
// TIGHT:      peak per rank: [[PEAK]]
// ROOMY:      full_shard {{.*}} fits, {{[0-9.]+}}x slower than full_shard+keep
// ROOMY:      full_shard+keep [[PEAK:[0-9.]+ MiB]] {{.*}} chosen: the fastest that fits
// ROOMY:      peak per rank: [[PEAK]]
