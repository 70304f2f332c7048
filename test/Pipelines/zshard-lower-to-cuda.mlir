// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-bufferized-step-to-cuda | FileCheck %s
// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-bufferized-step-to-cuda --mlir-print-ir-after=zshard-check-host-memory-access -o /dev/null 2>&1 | FileCheck %s --check-prefix=KERNELS
// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-bufferized-step-to-cuda="chip=sm_80 block-size=128" | FileCheck %s --check-prefix=SM80

// Tests the CUDA half of zshard-lower-to-cuda on a bufferized step: a fill,
// an elementwise op, a row reduction, a scalar op and a copy each become an
// outlined kernel (the KERNELS prefix reads the step right after outlining,
// where the check pass found no host access), and the result is the host
// step in the LLVM dialect launching them one after the other on one
// stream, synchronized once at the end, with one gpu.binary of PTX for
// sm_90 holding every kernel.

// KERNELS-LABEL: func.func @step
// KERNELS-NOT:   memref.load
// KERNELS-NOT:   memref.store
// KERNELS-NOT:   memref.copy
// KERNELS-NOT:   linalg.
// The fill: 4 elements, one block of 4 threads.
// KERNELS:       %[[C4:.*]] = arith.constant 4 : index
// KERNELS:       gpu.launch_func @step_kernel::@step_kernel blocks in (%[[ONE:.*]], %[[ONE]], %[[ONE]]) threads in (%[[C4]], %[[ONE]], %[[ONE]])
// The elementwise op: 4 x 300 = 1200 elements, 5 blocks of 256 threads.
// KERNELS:       gpu.launch_func @step_kernel::@step_kernel_0 blocks in (%{{.*}}, %[[ONE]], %[[ONE]]) threads in (%[[C256:.*]], %[[ONE]], %[[ONE]])
// The row sum: one thread a row.
// KERNELS:       gpu.launch_func @step_kernel::@step_kernel_1 blocks in (%[[ONE]], %[[ONE]], %[[ONE]]) threads in (%[[C4]], %[[ONE]], %[[ONE]])
// The scalar op: one thread.
// KERNELS:       gpu.launch_func @step_kernel::@step_kernel_2 blocks in (%[[ONE]], %[[ONE]], %[[ONE]]) threads in (%[[ONE]], %[[ONE]], %[[ONE]])
// The copy: a copy kernel, not a host memcpy.
// KERNELS:       gpu.launch_func @step_kernel::@step_kernel_3 blocks in (%{{.*}}, %[[ONE]], %[[ONE]]) threads in (%[[C256]], %[[ONE]], %[[ONE]])
// KERNELS-NEXT:  return
// All kernels in one gpu.module, each named after the module outlining
// gave it.
// KERNELS:       gpu.module @step_kernel {
// KERNELS:         gpu.func @step_kernel({{.*}}) kernel
// KERNELS:           gpu.thread_id x
// KERNELS:           memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<4xf32>
// KERNELS:         gpu.func @step_kernel_0({{.*}}) kernel
// KERNELS:           gpu.block_id x
// KERNELS:           gpu.thread_id x
// KERNELS:           scf.if
// KERNELS:             memref.load %{{.*}} : memref<4x300xf32>
// KERNELS:             arith.mulf
// KERNELS:             memref.store %{{.*}} : memref<4x300xf32>
// KERNELS:         gpu.func @step_kernel_1(
// KERNELS:           scf.for
// KERNELS:             arith.addf
// KERNELS:         gpu.func @step_kernel_2(%{{.*}}: memref<f32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// KERNELS-NOT:       scf.for
// KERNELS:           memref.load %{{.*}}[] : memref<f32>
// KERNELS-NEXT:      arith.mulf
// KERNELS-NEXT:      memref.store %{{.*}}[] : memref<f32>
// KERNELS-NEXT:      gpu.return
// KERNELS:         gpu.func @step_kernel_3(
// KERNELS-NOT:   gpu.module

// CHECK-LABEL: llvm.func @step
// CHECK-SAME:    (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT:   llvm.load
// CHECK-NOT:   llvm.store
// CHECK:       %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK-NOT:   llvm.call
// CHECK-COUNT-5: gpu.launch_func <%[[STREAM]] : !llvm.ptr>
// CHECK-NEXT:  llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK-NEXT:  llvm.call @mgpuStreamDestroy(%[[STREAM]])
// CHECK-NEXT:  llvm.return
// CHECK:       gpu.binary @step_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry step_kernel({{.*}}.visible .entry step_kernel_0({{.*}}.visible .entry step_kernel_1({{.*}}.visible .entry step_kernel_2({{.*}}.visible .entry step_kernel_3(
// CHECK-NOT:   gpu.binary
// CHECK-NOT:   gpu.module
// CHECK-NOT:   gpu.func
// SM80:        %[[C10:.*]] = llvm.mlir.constant(10 : index) : i64
// SM80:        %[[C128:.*]] = llvm.mlir.constant(128 : index) : i64
// SM80:        gpu.launch_func <%{{.*}}> @step_kernel::@step_kernel_0 blocks in (%[[C10]], %{{.*}}, %{{.*}}) threads in (%[[C128]], %{{.*}}, %{{.*}})
// SM80:        gpu.binary @step_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}.target sm_80
func.func @step(%a: memref<4x300xf32>, %b: memref<4x300xf32>, %s: memref<f32>,
                %r: memref<4xf32>, %c: memref<4x300xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x300xf32>) outs(%b : memref<4x300xf32>) {
  ^bb0(%x: f32, %y: f32):
    %t = arith.mulf %x, %x : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x300xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []}
      outs(%s : memref<f32>) {
  ^bb0(%y: f32):
    %t = arith.mulf %y, %y : f32
    linalg.yield %t : f32
  }
  memref.copy %b, %c : memref<4x300xf32> to memref<4x300xf32>
  return
}
