// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 4 --remat all --compile-to=shard -o %t.compile.mlir
// RUN: zshard-opt %t.mlir --zshard-pipeline="phases=verify,remat,units,shard strategy=full_shard ranks=4 remat=all" -o %t.opt.mlir
// RUN: diff %t.compile.mlir %t.opt.mlir
// RUN: FileCheck %s < %t.opt.mlir
// RUN: zshard-opt %t.mlir --zshard-pipeline="strategy=zero1 ranks=2" | FileCheck %s --check-prefix=LOWER
// RUN: not zshard-opt %t.mlir --zshard-pipeline="phases=verify,emit" 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that zshard-opt's --zshard-pipeline runs the phases of
// zshard-compile: the step after verify, remat, units and shard is byte for
// byte the one `zshard-compile --compile-to=shard` writes; with no phases
// listed it runs verify to lower.
// CHECK: zshard.unit @h.0 on @world[0] full_shard
// CHECK: zshard.remat = "h.0"
// CHECK: zshard.all_gather {{.*}}unit @h.0
// LOWER-NOT: func.func
// LOWER: llvm.func
// BAD: zshard-pipeline: 'emit' is not a phase with passes: verify, remat, units, shard, schedule, plan, lower
