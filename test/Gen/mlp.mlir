// Tests that `zshard-gen mlp` writes the contract step of a 2-layer mlp with
// the mse loss: the argument order (parameters, every exp_avg, every
// exp_avg_sq, batch, lr, step), roles, names and inits; the results; the
// forward, backward and AdamW ops (one zshard.adamw per parameter, checked
// as written and as zshard-lower-adamw lowers it); and the module paths
// (zshard.path) of forward, loss, backward and AdamW ops.

// RUN: zshard-gen mlp --widths 8,16,4 --batch 4 | zshard-opt --mlir-print-debuginfo=false | FileCheck %s --check-prefix=OP
// RUN: zshard-gen mlp --widths 8,16,4 --batch 4 | zshard-opt --zshard-lower-adamw | FileCheck %s
// RUN: zshard-gen mlp --widths 8,16,4 --batch 4 | zshard-opt --zshard-lower-adamw --mlir-print-debuginfo=false | FileCheck %s --check-prefix=PATH
// RUN: zshard-gen mlp --widths 8,16,4 --batch 4 | zshard-opt --zshard-verify-contract --canonicalize --cse | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg0: tensor<8x16xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "fc.0.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg1: tensor<16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.0.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg2: tensor<16x4xf32> {zshard.init = #zshard.init<normal(0, 0.02)>, zshard.name = "fc.1.weight", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg3: tensor<4xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.1.bias", zshard.role = #zshard.role<param>}
// CHECK-SAME: %arg4: tensor<8x16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg5: tensor<16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.0.bias.exp_avg", zshard.param = "fc.0.bias", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg6: tensor<16x4xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.1.weight.exp_avg", zshard.param = "fc.1.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg7: tensor<4xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.1.bias.exp_avg", zshard.param = "fc.1.bias", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg8: tensor<8x16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.0.weight.exp_avg_sq", zshard.param = "fc.0.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg9: tensor<16xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.0.bias.exp_avg_sq", zshard.param = "fc.0.bias", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg10: tensor<16x4xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.1.weight.exp_avg_sq", zshard.param = "fc.1.weight", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg11: tensor<4xf32> {zshard.init = #zshard.init<zeros>, zshard.name = "fc.1.bias.exp_avg_sq", zshard.param = "fc.1.bias", zshard.role = #zshard.role<opt_state>}
// CHECK-SAME: %arg12: tensor<4x8xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg13: tensor<4x4xf32> {zshard.name = "target", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg14: tensor<f32> {zshard.name = "lr", zshard.role = #zshard.role<hyper>}
// CHECK-SAME: %arg15: tensor<f32> {zshard.name = "step", zshard.role = #zshard.role<hyper>} loc(""))
// CHECK-SAME: -> (tensor<f32> {zshard.role = #zshard.role<loss>},
// CHECK-SAME: tensor<8x16xf32> {zshard.name = "fc.0.weight", zshard.role = #zshard.role<param_out>},
// CHECK-SAME: tensor<16xf32> {zshard.name = "fc.0.bias", zshard.role = #zshard.role<param_out>},
// CHECK-SAME: tensor<16x4xf32> {zshard.name = "fc.1.weight", zshard.role = #zshard.role<param_out>},
// CHECK-SAME: tensor<4xf32> {zshard.name = "fc.1.bias", zshard.role = #zshard.role<param_out>},
// CHECK-SAME: tensor<8x16xf32> {zshard.name = "fc.0.weight.exp_avg", zshard.role = #zshard.role<opt_state_out>},
// CHECK-SAME: tensor<16xf32> {zshard.name = "fc.0.bias.exp_avg", zshard.role = #zshard.role<opt_state_out>},
// CHECK-SAME: tensor<16x4xf32> {zshard.name = "fc.1.weight.exp_avg", zshard.role = #zshard.role<opt_state_out>},
// CHECK-SAME: tensor<4xf32> {zshard.name = "fc.1.bias.exp_avg", zshard.role = #zshard.role<opt_state_out>},
// CHECK-SAME: tensor<8x16xf32> {zshard.name = "fc.0.weight.exp_avg_sq", zshard.role = #zshard.role<opt_state_out>},
// CHECK-SAME: tensor<16xf32> {zshard.name = "fc.0.bias.exp_avg_sq", zshard.role = #zshard.role<opt_state_out>},
// CHECK-SAME: tensor<16x4xf32> {zshard.name = "fc.1.weight.exp_avg_sq", zshard.role = #zshard.role<opt_state_out>},
// CHECK-SAME: tensor<4xf32> {zshard.name = "fc.1.bias.exp_avg_sq", zshard.role = #zshard.role<opt_state_out>})
// CHECK-SAME: attributes {zshard.step}

// Forward: x @ W0 + b0, GELU (tanh form), @ W1 + b1.
// CHECK: %[[H0:.*]] = linalg.matmul {{.*}}ins(%arg12, %arg0 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[H0]], %arg1 : tensor<4x16xf32>, tensor<16xf32>)
// CHECK: math.tanh
// CHECK: linalg.matmul {{.*}}ins(%{{.*}}, %arg2 : tensor<4x16xf32>, tensor<16x4xf32>)
// The mse loss: a full reduction, then the division by B * d_L = 16.
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: arith.constant 1.600000e+01 : f32
// Backward: dx = dy @ W1^T, dW1 = h^T @ dy (transposed indexing maps), db1.
// CHECK: linalg.matmul indexing_maps = [affine_map{{.*}}] {{.*}}ins(%{{.*}}, %arg2 : tensor<4x4xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: linalg.matmul indexing_maps = [affine_map{{.*}}] {{.*}}ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: iterator_types = ["reduction", "parallel"]
// The first layer's dx is not needed: only dW0 = x^T @ dy.
// CHECK: linalg.matmul indexing_maps = [affine_map{{.*}}] {{.*}}ins(%arg12, %{{.*}} : tensor<4x8xf32>, tensor<4x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK-NOT: tensor<4x8xf32>) outs
// AdamW of fc.0.weight: bias corrections from `step`, then one fused update.
// CHECK: linalg.generic {{.*}} iterator_types = []} ins(%arg15 : tensor<f32>)
// CHECK: math.powf
// CHECK: %[[W0:.*]]:3 = linalg.generic {{.*}} ins(%arg0, %{{.*}}, %arg4, %arg8, %arg14, %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<f32>, tensor<f32>, tensor<f32>)
// Weight decay (rank 2, p - lr * 0.1 * p), the moments and the update.
// CHECK-DAG: arith.constant 1.000000e-01 : f32
// CHECK-DAG: arith.constant 0.899999976 : f32
// CHECK-DAG: arith.constant 0.949999988 : f32
// CHECK-DAG: arith.constant 9.99999993E-9 : f32
// CHECK-DAG: math.sqrt
// CHECK: linalg.yield
// No weight decay on the bias (rank 1).
// CHECK: %[[B0:.*]]:3 = linalg.generic {{.*}} ins(%arg1,
// CHECK-NOT: 1.000000e-01
// CHECK: linalg.yield
// CHECK: %[[W1:.*]]:3 = linalg.generic {{.*}} ins(%arg2,
// CHECK: %[[B1:.*]]:3 = linalg.generic {{.*}} ins(%arg3,
// CHECK: return %{{.*}}, %[[W0]]#0, %[[B0]]#0, %[[W1]]#0, %[[B1]]#0, %[[W0]]#1, %[[B0]]#1, %[[W1]]#1, %[[B1]]#1, %[[W0]]#2, %[[B0]]#2, %[[W1]]#2, %[[B1]]#2 :

// AdamW as zshard-gen writes it: the textbook order, the models.md constants,
// weight decay on the rank-2 weights only, at the owning module's path.
// OP: %[[W0:[a-z_0-9]+]], %[[W0M:[a-z_0-9]+]], %[[W0V:[a-z_0-9]+]] = zshard.adamw textbook %arg0, %{{.*}}, %arg4, %arg8 lr %arg14 step %arg15 betas(9.000000e-01, 0.94999999999999996) eps(1.000000e-08) weight_decay(1.000000e-01) {zshard.path = "fc.0"} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
// OP: %[[B0:[a-z_0-9]+]], %[[B0M:[a-z_0-9]+]], %[[B0V:[a-z_0-9]+]] = zshard.adamw textbook %arg1, %{{.*}}, %arg5, %arg9 lr %arg14 step %arg15 betas(9.000000e-01, 0.94999999999999996) eps(1.000000e-08) weight_decay(0.000000e+00) {zshard.path = "fc.0"} : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
// OP: %[[W1:[a-z_0-9]+]], %[[W1M:[a-z_0-9]+]], %[[W1V:[a-z_0-9]+]] = zshard.adamw textbook %arg2, {{.*}} weight_decay(1.000000e-01) {zshard.path = "fc.1"}
// OP: %[[B1:[a-z_0-9]+]], %[[B1M:[a-z_0-9]+]], %[[B1V:[a-z_0-9]+]] = zshard.adamw textbook %arg3, {{.*}} weight_decay(0.000000e+00) {zshard.path = "fc.1"}
// OP: return %{{.*}}, %[[W0]], %[[B0]], %[[W1]], %[[B1]], %[[W0M]], %[[B0M]], %[[W1M]], %[[B1M]], %[[W0V]], %[[B0V]], %[[W1V]], %[[B1V]] :

// PATH: linalg.matmul {zshard.path = "fc.0"} ins(%arg12, %arg0
// PATH: attrs = {{ *}}{zshard.path = "fc.0"}
// PATH: math.tanh
// PATH: linalg.matmul {zshard.path = "fc.1"} ins(%{{.*}}, %arg2
// The loss is at the root module: no path.
// PATH: {{^ *%[0-9]+ = linalg.generic .*iterator_types = \["reduction", "reduction"\]\} ins\(.*\) outs\([^)]*\) \{$}}
// Backward ops carry their layer's path too.
// PATH: linalg.matmul {{.*}} {zshard.path = "fc.1"} ins(%{{.*}}, %arg2
// PATH: linalg.matmul {{.*}} {zshard.path = "fc.0"} ins(%arg12,
// The lowered AdamW ops carry the path of the module owning the parameter.
// PATH: ins(%arg0, {{.*}} attrs = {{ *}}{zshard.path = "fc.0"}
// PATH: ins(%arg3, {{.*}} attrs = {{ *}}{zshard.path = "fc.1"}
// PATH: return

// CANON: func.func @train_step(
// CANON: return
