// RUN: zshard-opt %s --zshard-check-host-memory-access --split-input-file --verify-diagnostics | FileCheck %s

// Tests that host code that only allocates, takes views and pointers, calls
// the runtime and launches kernels passes unchanged, and that memory
// accesses inside a gpu.module are the kernels' own business.
// CHECK-LABEL: func.func @clean
// CHECK:       memref.alloc
// CHECK:       memref.collapse_shape
// CHECK:       call @zshard_rt_step_sgemm_like
// CHECK:       gpu.launch_func @kernels::@fill
// CHECK:       memref.dealloc
// CHECK:       gpu.module @kernels
// CHECK:       memref.store
module attributes {gpu.container_module} {
  func.func private @zshard_rt_step_sgemm_like(index)
  func.func @clean(%arg: memref<4x8xf32>) {
    %c1 = arith.constant 1 : index
    %buf = memref.alloc() : memref<2x16xf32>
    %flat = memref.collapse_shape %buf [[0, 1]] : memref<2x16xf32> into memref<32xf32>
    %p = memref.extract_aligned_pointer_as_index %flat : memref<32xf32> -> index
    func.call @zshard_rt_step_sgemm_like(%p) : (index) -> ()
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%flat : memref<32xf32>)
    memref.dealloc %buf : memref<2x16xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @fill(%out: memref<32xf32>) kernel {
      %c0 = arith.constant 0 : index
      %f = arith.constant 1.0 : f32
      memref.store %f, %out[%c0] : memref<32xf32>
      gpu.return
    }
  }
}

// -----

// Tests that each host-side load, store and copy is reported by name.
func.func @host_accesses(%a: memref<4xf32>, %b: memref<4xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' would access device memory from the host ('memref<4xf32>'); on the CUDA target every memory access must be in a kernel}}
  %x = memref.load %a[%c0] : memref<4xf32>
  // expected-error @+1 {{'memref.store' would access device memory from the host ('memref<f32>')}}
  memref.store %x, %s[] : memref<f32>
  // expected-error @+1 {{'memref.copy' would access device memory from the host}}
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Tests that a linalg op left on the host is reported once, not for each
// access in its body, and that a host loop holding a load is caught too.
func.func @host_linalg(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'linalg.copy' would access device memory from the host}}
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{'memref.load' would access device memory from the host}}
    %x = memref.load %a[%i] : memref<4xf32>
  }
  return
}
