// RUN: zshard-opt %s | FileCheck %s
// RUN: zshard-opt %s | zshard-opt | FileCheck %s
// RUN: zshard-opt %s --mlir-print-op-generic | zshard-opt | FileCheck %s

// Tests that zshard.causal_attention and zshard.causal_attention_grad
// round-trip, infer their result types (out as q, lse [B, H, T]; dq, dk, dv
// as q, k, v) and take grouped kv heads (6 heads over 2 kv heads).

// CHECK-LABEL: func.func @gqa
// CHECK: %[[O:.*]], %[[LSE:.*]] = zshard.causal_attention %arg0, %arg1, %arg2 scale(0.353553385) : tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
// CHECK: %dq, %dk, %dv = zshard.causal_attention_grad %arg0, %arg1, %arg2, %[[O]], %[[LSE]], %arg3 scale(0.353553385) : tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x6x13x8xf32>, tensor<2x6x13xf32>, tensor<2x6x13x8xf32>
// CHECK: return %[[O]], %[[LSE]], %dq, %dk, %dv : tensor<2x6x13x8xf32>, tensor<2x6x13xf32>, tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
func.func @gqa(%q: tensor<2x6x13x8xf32>, %k: tensor<2x2x13x8xf32>, %v: tensor<2x2x13x8xf32>, %do: tensor<2x6x13x8xf32>) -> (tensor<2x6x13x8xf32>, tensor<2x6x13xf32>, tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>) {
  %o, %lse = zshard.causal_attention %q, %k, %v scale(0.35355339) : tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
  %dq, %dk, %dv = zshard.causal_attention_grad %q, %k, %v, %o, %lse, %do scale(0.35355339) : tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x6x13x8xf32>, tensor<2x6x13xf32>, tensor<2x6x13x8xf32>
  return %o, %lse, %dq, %dk, %dv : tensor<2x6x13x8xf32>, tensor<2x6x13xf32>, tensor<2x6x13x8xf32>, tensor<2x2x13x8xf32>, tensor<2x2x13x8xf32>
}
