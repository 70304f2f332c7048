// Tests that the embedding backward of `zshard-gen gpt` is a scatter-add in
// O(tokens x d), with no loop over the vocabulary around the tokens: an
// scf.forall over the 8 columns of the [1000, 8] gradient, one scf.for per
// token dim (batch 2, seq 4) walking the tokens in order (so repeated ids
// accumulate), one read and one write of the column at the token's id per
// token. Bufferized, the forall updates a subview of the gradient in place
// (no allocation, no copy inside it); the CPU target lowers it to loops, the
// CUDA target to one kernel of one thread per column with the token loops
// inside, so no host code touches device memory.

// RUN: zshard-gen gpt --layers 1 --d-model 8 --heads 2 --vocab 1000 --seq 4 --batch 2 -o %t.mlir
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo=false | FileCheck %s
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo=false --zshard-bufferize-step | FileCheck %s --check-prefix=BUF
// RUN: zshard-opt %t.mlir --zshard-lower-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo=false --zshard-bufferize-step --zshard-bufferized-step-to-cuda=format=isa --mlir-print-ir-after=zshard-check-host-memory-access -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[TOKENS:arg51]]: tensor<2x4xi32> {zshard.name = "tokens", zshard.role = #zshard.role<batch>}
// CHECK: %[[ZERO:.*]] = linalg.fill {zshard.path = "wte"} {{.*}} -> tensor<1000x8xf32>
// CHECK-NEXT: %[[GRAD:.*]] = scf.forall (%[[J:.*]]) in (8) shared_outs(%[[OUT:.*]] = %[[ZERO]]) -> (tensor<1000x8xf32>) {
// CHECK-NEXT: %[[COL:.*]] = tensor.extract_slice %[[OUT]][0, %[[J]]] [1000, 1] [1, 1] : tensor<1000x8xf32> to tensor<1000xf32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[BLOOP:.*]] = scf.for %[[B:.*]] = %[[C0]] to %[[C2]] step %[[C1]] iter_args(%[[ACC0:.*]] = %[[COL]]) -> (tensor<1000xf32>) {
// CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[TLOOP:.*]] = scf.for %[[T:.*]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ACC0]]) -> (tensor<1000xf32>) {
// CHECK-NEXT: %[[ID:.*]] = tensor.extract %[[TOKENS]][%[[B]], %[[T]]] : tensor<2x4xi32>
// CHECK-NEXT: %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT: %[[G:.*]] = tensor.extract %{{.*}}[%[[B]], %[[T]], %[[J]]] : tensor<2x4x8xf32>
// CHECK-NEXT: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[ROW]]] : tensor<1000xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OLD]], %[[G]] : f32
// CHECK-NEXT: %[[NEW:.*]] = tensor.insert %[[SUM]] into %[[ACC]][%[[ROW]]] : tensor<1000xf32>
// CHECK-NEXT: scf.yield %[[NEW]] : tensor<1000xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[TLOOP]] : tensor<1000xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[BLOOP]] into %[[OUT]][0, %[[J]]] [1000, 1] [1, 1] : tensor<1000xf32> into tensor<1000x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: } {zshard.path = "wte"}
// The gradient goes to AdamW.
// CHECK: zshard.adamw textbook %arg0, %[[GRAD]], %arg17, %arg34 lr

// BUF: %[[G:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1000x8xf32>
// BUF-NEXT: linalg.fill {zshard.phase = #zshard.phase<backward>} ins(%{{.*}} : f32) outs(%[[G]] : memref<1000x8xf32>)
// BUF-NEXT: scf.forall (%[[J:.*]]) in (8) {
// BUF-NEXT: %[[COL:.*]] = memref.subview %[[G]][0, %[[J]]] [1000, 1] [1, 1] : memref<1000x8xf32> to memref<1000xf32, strided<[8], offset: ?>>
// BUF-NEXT: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// BUF-NEXT: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// BUF-NEXT: %[[ID:.*]] = memref.load %arg51[%[[B]], %[[T]]] : memref<2x4xi32>
// BUF-NEXT: %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// BUF-NEXT: %[[D:.*]] = memref.load %{{.*}}[%[[B]], %[[T]], %[[J]]] : memref<2x4x8xf32>
// BUF-NEXT: %[[OLD:.*]] = memref.load %[[COL]][%[[ROW]]]
// BUF-NEXT: %[[SUM:.*]] = arith.addf %[[OLD]], %[[D]] : f32
// BUF-NEXT: memref.store %[[SUM]], %[[COL]][%[[ROW]]]
// BUF-NEXT: }
// BUF-NEXT: }
// BUF-NOT: copy
// BUF-NOT: memref.alloc
// BUF: } {zshard.phase = #zshard.phase<backward>}

// LLVM: llvm.func @train_step(
// LLVM-NOT: scf.

// CUDA: gpu.launch_func @train_step_kernel::@[[SCATTER:train_step_kernel_[0-9]+]] blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%{{.*}} : memref<1000x8xf32>, %arg51 : memref<2x4xi32>, %{{.*}} : memref<2x4x8xf32>,
// CUDA: gpu.module @train_step_kernel
// CUDA: gpu.func @[[SCATTER]](
// CUDA: %[[J:.*]] = gpu.thread_id x
// CUDA: %[[COL:.*]] = memref.subview %{{.*}}[0, %[[J]]] [1000, 1] [1, 1]
// CUDA-NEXT: scf.for
// CUDA-NEXT: scf.for
// CUDA-NEXT: memref.load %{{.*}} : memref<2x4xi32>
// CUDA-NEXT: arith.index_cast
// CUDA-NEXT: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[J]]] : memref<2x4x8xf32>
// CUDA-NEXT: memref.load %[[COL]]
// CUDA-NEXT: arith.addf
// CUDA-NEXT: memref.store %{{.*}}, %[[COL]]
