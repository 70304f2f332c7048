// RUN: zshard-opt %s --cse | FileCheck %s --check-prefix=KEPT
// RUN: zshard-opt %s --zshard-drop-module-paths --cse | FileCheck %s --check-prefix=DROPPED

// Tests that zshard-drop-module-paths removes every zshard.path, so that CSE
// merges identical ops of different modules (the bufferization pipeline runs
// it first); with the paths, the two zero-fills stay apart.

// KEPT-COUNT-2: linalg.fill {zshard.path = "h.{{[01]}}"}

// DROPPED-NOT:   zshard.path
// DROPPED:       %[[Z:.*]] = linalg.fill ins
// DROPPED-NOT:   linalg.fill
// DROPPED:       return %[[Z]], %[[Z]]
func.func @f() -> (tensor<2xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() {zshard.path = "h.0"} : tensor<2xf32>
  %z0 = linalg.fill {zshard.path = "h.0"} ins(%c0 : f32) outs(%e0 : tensor<2xf32>) -> tensor<2xf32>
  %e1 = tensor.empty() {zshard.path = "h.1"} : tensor<2xf32>
  %z1 = linalg.fill {zshard.path = "h.1"} ins(%c0 : f32) outs(%e1 : tensor<2xf32>) -> tensor<2xf32>
  return %z0, %z1 : tensor<2xf32>, tensor<2xf32>
}
