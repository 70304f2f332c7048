// RUN: zshard-opt %s --mlir-print-debuginfo=false --zshard-gpu-merge-kernel-modules --split-input-file | FileCheck %s

// Tests that the kernels of three outlined modules end up in the first one,
// each named after the module it came from (the first keeps its name), and
// that every launch, sync or async, names its kernel's new place.
// CHECK-LABEL: func.func @step
// CHECK:       gpu.launch_func @step_kernel::@step_kernel blocks
// CHECK:       gpu.launch_func async [%{{.*}}] @step_kernel::@step_kernel_0 blocks
// CHECK:       gpu.launch_func @step_kernel::@step_kernel_1 blocks
// CHECK:       gpu.module @step_kernel {
// CHECK-NEXT:    gpu.func @step_kernel(%{{.*}}: memref<4xf32>) kernel {
// CHECK:         gpu.func @step_kernel_0(%{{.*}}: memref<8xf32>) kernel {
// CHECK:         gpu.func @step_kernel_1(%{{.*}}: f32) kernel {
// CHECK-NOT:   gpu.module
module attributes {gpu.container_module} {
  func.func @step(%a: memref<4xf32>, %b: memref<8xf32>, %f: f32) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    %t = gpu.wait async
    %t1 = gpu.launch_func async [%t] @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t1]
    gpu.launch_func @step_kernel_1::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%f : f32)
    return
  }
  gpu.module @step_kernel {
    gpu.func @step_kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    gpu.func @step_kernel(%x: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @step_kernel_1 {
    gpu.func @step_kernel(%x: f32) kernel {
      gpu.return
    }
  }
}

// -----

// Tests that a module holding more than kernels (here a device function a
// kernel calls) is left as it is, and that its launch keeps its name.
// CHECK-LABEL: func.func @other
// CHECK:       gpu.launch_func @a::@a blocks
// CHECK:       gpu.launch_func @b::@b blocks
// CHECK:       gpu.module @a
// CHECK:       gpu.module @b
// CHECK:         func.func @helper
module attributes {gpu.container_module} {
  func.func @other() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @a {
    gpu.func @a() kernel {
      gpu.return
    }
  }
  gpu.module @b {
    func.func @helper() {
      return
    }
    gpu.func @b() kernel {
      func.call @helper() : () -> ()
      gpu.return
    }
  }
}
