// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --remat all --compile-to=verify | FileCheck %s --check-prefix=VERIFY
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --remat all --compile-to=remat | FileCheck %s --check-prefix=REMAT
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --remat all --compile-to=units | FileCheck %s --check-prefix=UNITS
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --remat all --compile-to=shard | FileCheck %s --check-prefix=SHARD
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --remat all --compile-to=schedule -o %t.schedule.mlir
// RUN: FileCheck %s --check-prefix=SCHEDULE < %t.schedule.mlir
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --remat all --emit=sharded-mlir | diff %t.schedule.mlir -
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --compile-to=plan | FileCheck %s --check-prefix=PLAN
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --compile-to=lower -o %t.lower.mlir
// RUN: FileCheck %s --check-prefix=LOWER < %t.lower.mlir
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --emit=lowered-mlir | diff %t.lower.mlir -
// RUN: rm -rf %t.a.zsa %t.b.zsa
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --compile-to=emit -o %t.a.zsa
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 -o %t.b.zsa
// RUN: diff %t.a.zsa/manifest.json %t.b.zsa/manifest.json
// RUN: test -f %t.a.zsa/step.so
// RUN: not zshard-compile %t.mlir --compile-to=bogus 2>&1 | FileCheck %s --match-full-lines --check-prefix=BAD
// RUN: not zshard-compile %t.mlir --compile-to=shard --emit=lowered-mlir 2>&1 | FileCheck %s --match-full-lines --check-prefix=BOTH
// RUN: not zshard-compile %t.mlir --compile-to=shard --eval 2>&1 | FileCheck %s --match-full-lines --check-prefix=EVAL

// Tests that `zshard-compile --compile-to=PHASE` stops after PHASE and
// writes the step as that phase left it: checkpointing (remat) before the
// units, the units before any collective, the synchronous collectives of
// shard, the async ones of schedule (what --emit=sharded-mlir writes), the
// bufferized step of plan, the LLVM dialect of lower (what
// --emit=lowered-mlir writes), and the artifact of emit.

// VERIFY: func.func @train_step
// VERIFY-NOT: zshard.remat
// VERIFY-NOT: zshard.unit

// REMAT: zshard.remat = "h.0"
// REMAT-NOT: zshard.unit @

// UNITS: zshard.unit @h.0 on @world[0] full_shard
// UNITS-NOT: zshard.all_gather

// SHARD: zshard.unit @h.0
// SHARD-NOT: zshard.all_gather_start
// SHARD: zshard.all_gather {{.*}}unit @
// SHARD-NOT: zshard.all_gather_start

// SCHEDULE: zshard.all_gather_start

// PLAN-NOT: zshard.unit @
// PLAN: func.func @train_step(%{{.*}}: memref<
// PLAN: memref.alloc
// PLAN-NOT: llvm.func

// LOWER-NOT: func.func
// LOWER: llvm.func

// BAD: zshard-compile: for the --compile-to option: 'bogus' is not one of verify, remat, units, shard, schedule, plan, lower, emit
// BOTH: zshard-compile: error: --compile-to and --emit both say what to write: give one
// EVAL: zshard-compile: error: --eval applies to the emit phase, not --compile-to=shard
