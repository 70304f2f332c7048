// RUN: zshard-opt %s --zshard-gpu-async-launches --split-input-file | FileCheck %s

// Tests that the launches of a straight-line function are chained on one
// stream: a token at entry, each launch asynchronous on the previous one's
// token (the runtime call in between is left alone, the runtime orders it
// on the same stream), and one wait before the return.
// CHECK-LABEL: func.func @step
// CHECK-NEXT:  %[[T0:.*]] = gpu.wait async
// CHECK:       %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @k::@k blocks in (%{{.*}}) threads in (%{{.*}}) args(%{{.*}} : memref<4xf32>)
// CHECK-NEXT:  call @zshard_rt_step_sgemm_like()
// CHECK-NEXT:  %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @k::@k
// CHECK-NEXT:  gpu.wait [%[[T2]]]
// CHECK-NEXT:  return
module attributes {gpu.container_module} {
  func.func private @zshard_rt_step_sgemm_like()
  func.func @step(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    func.call @zshard_rt_step_sgemm_like() : () -> ()
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Tests that a function without launches is left alone, and that launches
// in a function of several blocks stay synchronous.
// CHECK-LABEL: func.func @host_only
// CHECK-NOT:   gpu.wait
// CHECK-LABEL: func.func @branches
// CHECK-NOT:   gpu.wait
// CHECK:       gpu.launch_func @k::@k blocks
// CHECK-NOT:   gpu.wait
module attributes {gpu.container_module} {
  func.func @host_only() {
    return
  }
  func.func @branches(%a: memref<4xf32>, %p: i1) {
    %c1 = arith.constant 1 : index
    cf.cond_br %p, ^run, ^done
  ^run:
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    cf.br ^done
  ^done:
    return
  }
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
