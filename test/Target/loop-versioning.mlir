// RUN: zshard-gen gpt --layers 1 --d-model 32 --heads 2 --vocab 64 --seq 8 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --emit=llvm-ir | FileCheck %s

// Tests that a row reduction into a buffer (LayerNorm's row sum over 32
// features: an input read-only, the sums read and written), summed in lanes
// by zshard-lane-reductions four rows at a time, is vector code: two vector
// loads a row added lane by lane, no stack buffer, each row's lanes added
// to its sum in lane order and the four sums stored once each.
// CHECK-LABEL: define void @train_step.compute.2(ptr noalias readonly captures(none) %0, ptr noalias captures(none) %1)
// CHECK-NOT:   alloca
// CHECK-COUNT-4: load float
// CHECK-NOT:   store
// CHECK:       load <16 x float>
// CHECK-NOT:   store
// CHECK:       fadd <16 x float>
// CHECK-NOT:   store
// CHECK-COUNT-64: fadd float
// CHECK-NOT:   store
// CHECK-COUNT-4: store float
// CHECK-NOT:   store
// CHECK:       ret void

// LayerNorm's backward sums two products per row into two outputs (which
// zshard-lane-reductions and zshard-interleave-reductions leave) over seven
// buffers. Its outputs, and the buffers it reads that the step allocated,
// are private to the call (zshard-outline-compute-ops marks them noalias):
// LICM keeps both sums in registers with no run-time check of overlaps (no
// copy of the loop by LoopVersioningLICM, which the kernels whose buffers
// are the step's arguments still get), each stored once after the row.
// CHECK-LABEL: define void @train_step.compute.20(ptr noalias readonly
// CHECK-NOT:   .lver.check
// CHECK:       phi float
// CHECK-NEXT:  phi float
// CHECK-NOT:   store
// CHECK:       fadd float
// CHECK-NOT:   store
// CHECK:       fadd float
// CHECK-NOT:   {{^}}}
// CHECK:       store float
// CHECK-NEXT:  store float
