// RUN: not zshard-opt %s --zshard-bufferized-step-to-cuda 2>&1 | FileCheck %s

// Tests that host code reading a buffer (here a scalar the step would
// use as a fill value) stops the CUDA pipeline with the diagnostic of
// --zshard-check-host-memory-access, instead of becoming a step that reads
// device memory on the host.
// CHECK: error: 'memref.load' would access device memory from the host ('memref<f32>'); on the CUDA target every memory access must be in a kernel
// CHECK-NOT: gpu.binary
func.func @host_read(%s: memref<f32>, %o: memref<4xf32>) {
  %x = memref.load %s[] : memref<f32>
  linalg.fill ins(%x : f32) outs(%o : memref<4xf32>)
  return
}
