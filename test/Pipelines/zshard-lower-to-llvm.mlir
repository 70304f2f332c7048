// RUN: zshard-opt %S/../Transforms/Inputs/contract-step.mlir --zshard-lower-to-llvm | FileCheck %s
// RUN: zshard-opt %S/../Transforms/Inputs/contract-step.mlir \
// RUN:   --zshard-lower-to-llvm="runtime-matmul=0 tag-allocations=0" | FileCheck %s --check-prefix=LOOPS

// Tests the whole CPU lowering of a training step: the step becomes one
// llvm.func taking one bare pointer per argument and per result (4 + 3),
// matrix products call the runtime's sgemm, allocations go through the
// runtime's hooks with their category set first, and nothing of the
// tensor, memref or linalg dialects is left.
// CHECK-DAG: llvm.func @zshard_rt_step_sgemm(i32, i32, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i32)
// CHECK-DAG: llvm.func @zshard_rt_step_set_alloc_category(i32)
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK:     llvm.func @train_step(%{{.*}}: !llvm.ptr {{.*}}, %{{.*}}: !llvm.ptr {{.*}}, %{{.*}}: !llvm.ptr {{.*}}, %{{.*}}: !llvm.ptr {{.*}}, %{{.*}}: !llvm.ptr {{.*}}, %{{.*}}: !llvm.ptr {{.*}}, %{{.*}}: !llvm.ptr {{.*}})
// CHECK-COUNT-2: llvm.call @zshard_rt_step_sgemm
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: tensor.

// Tests that without the runtime matmul and allocation tagging the products
// become loops and no runtime call but the allocation hooks remains.
// LOOPS-NOT: zshard_rt_step_sgemm
// LOOPS-NOT: zshard_rt_step_set_alloc_category
// LOOPS:     llvm.func @train_step
// LOOPS:     llvm.fmul
