// Tests that `zshard-gen mlp --loss xent` takes i32 `labels` instead of a
// `target`, writes the cross-entropy (max, sum of exp, log-sum-exp minus the
// picked logit, mean) and its gradient (softmax minus one-hot, over B) in
// place of the logits, and that a one-layer mlp has no GELU.

// RUN: zshard-gen mlp --widths 8,4 --batch 3 --loss xent | zshard-opt | FileCheck %s --implicit-check-not=math.tanh
// RUN: zshard-gen mlp --widths 8,4 --batch 3 --loss xent | zshard-opt --zshard-verify-contract | FileCheck %s --check-prefix=VERIFY

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg6: tensor<3x8xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg7: tensor<3xi32> {zshard.name = "labels", zshard.role = #zshard.role<batch>}
// CHECK-SAME: %arg8: tensor<f32> {zshard.name = "lr", zshard.role = #zshard.role<hyper>}
// CHECK-SAME: %arg9: tensor<f32> {zshard.name = "step", zshard.role = #zshard.role<hyper>} loc(""))

// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<3x4xf32>, tensor<4xf32>)
// Row max, then the row sum of exp(y - max).
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[Y]] : tensor<3x4xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[Y]], %[[MAX]] : tensor<3x4xf32>, tensor<3xf32>)
// CHECK: math.exp
// sum_n (max + log(sum) - y[n, labels[n]]), the label gathered with tensor.extract.
// CHECK: %[[TOTAL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[MAX]], %[[SUM]], %arg7 : tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) outs(%{{.*}} : tensor<f32>)
// CHECK-DAG: math.log
// CHECK-DAG: arith.index_cast %{{.*}} : i32 to index
// CHECK-DAG: tensor.extract %[[Y]][%{{.*}}, %{{.*}}] : tensor<3x4xf32>
// CHECK: linalg.yield
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%[[TOTAL]] : tensor<f32>)
// CHECK: arith.constant 3.000000e+00 : f32
// The gradient: (softmax - onehot(labels)) * (1/3), written over the logits
// (their last use: one [B, C] buffer, not two).
// CHECK: linalg.generic {{.*}} ins(%[[MAX]], %[[SUM]], %arg7 : tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) outs(%[[Y]] : tensor<3x4xf32>)
// CHECK-DAG: linalg.index 1 : index
// CHECK-DAG: arith.cmpi eq
// CHECK-DAG: arith.select
// CHECK-DAG: arith.constant 0.333333343 : f32
// CHECK: linalg.yield
// CHECK: return %[[LOSS]],

// VERIFY: func.func @train_step
