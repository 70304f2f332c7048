// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 2 --vocab 64 --seq 8 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --emit=llvm-ir | FileCheck %s
// RUN: zshard-compile %t.mlir -o %t.zsa
// RUN: llvm-nm --undefined-only %t.zsa/step.so | FileCheck %s --check-prefix=UNDEF
// RUN: llvm-nm --defined-only %t.zsa/step.so | FileCheck %s --check-prefix=DEFINED
// RUN: ls %t.zsa | FileCheck %s --check-prefix=FILES

// Tests that zshard-compile writes the step's straight-line glue (its
// allocations and calls) and its entry points as an LLVM module of their
// own, compiled as at -O0, beside the module of the functions it calls,
// optimised at -O3: the code module defines the outlined ops and not the
// step, the glue module declares them and defines the step (untouched by
// O3: no fastcc) and the exported entries, and the two objects link into
// one shared object that leaves nothing of the step undefined (the loops
// moved out of the step become hidden symbols, not exported); the object
// files are not left in the artifact.

// CHECK:     ; ModuleID = 'zshard_step'
// CHECK-NOT: define {{.*}}@train_step(
// CHECK-NOT: define {{.*}}@zshard_step(
// CHECK:     define void @train_step.compute.0(
// CHECK-NOT: define {{.*}}@train_step(
// CHECK-NOT: define {{.*}}@zshard_step(
// CHECK:     ; ModuleID = 'zshard_step'
// CHECK-NOT: define
// CHECK:     declare void @train_step.compute.0(
// CHECK-NOT: define
// CHECK:     define internal void @train_step(
// CHECK:     call void @train_step.compute.0(
// CHECK:     ret void
// CHECK:     define void @zshard_step(ptr
// CHECK:     call void @train_step(
// CHECK:     define ptr @zshard_step_signature()
// CHECK-NOT: define

// UNDEF-NOT: train_step
// UNDEF:     _mlir_memref_to_llvm_alloc
// UNDEF-NOT: train_step

// DEFINED: T train_step.compute.0
// DEFINED: t train_step.zshard.loop
// DEFINED: T zshard_step{{$}}
// DEFINED: T zshard_step_signature

// FILES-NOT: .o
// FILES:     manifest.json
// FILES-NOT: .o
