// RUN: zshard-gen gpt --layers 1 --d-model 32 --heads 2 --vocab 64 --seq 8 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --emit=llvm-ir | FileCheck %s

// Tests that a row reduction into a buffer (LayerNorm's row sum: an input
// read-only, the sums read and written) is versioned by LoopVersioningLICM:
// a run-time check that the output does not overlap the input, a copy of
// the loop for the overlapping case, and in the other the sum kept in a
// register (a phi of floats, one store after the loop).
// CHECK-LABEL: define void @train_step.compute.12(ptr readonly captures(none) %0, ptr captures(none) %1)
// CHECK:       .lver.check:
// CHECK:       br i1 %found.conflict, label %[[ORIG:.*]], label %[[FAST:[^ ,]*]]
// CHECK:       [[FAST]]:
// CHECK-NEXT:  phi i64
// CHECK-NEXT:  phi float
// CHECK-NOT:   store
// CHECK:       fadd float
// CHECK-NOT:   store
// CHECK:       br i1
// CHECK:       ret void

// LayerNorm's backward sums two products per row over seven buffers: 11
// pairs to check, more than LLVM's default limit of 8, so the limit is 16:
// both sums stay in registers and are stored once after the row.
// CHECK-LABEL: define void @train_step.compute.28(
// CHECK:       .lver.check:
// CHECK:       .ph.lver.orig:
// CHECK:       store float
// CHECK:       {{^}}.ph:
// CHECK:       phi float
// CHECK-NEXT:  phi float
// CHECK-NOT:   store
// CHECK:       fadd float
// CHECK-NOT:   store
// CHECK:       fadd float
// CHECK-NOT:   store
// CHECK:       store float {{.*}}!noalias
// CHECK-NEXT:  store float {{.*}}!noalias
