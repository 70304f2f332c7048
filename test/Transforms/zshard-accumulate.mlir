// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=2 --zshard-verify-contract \
// RUN:   | FileCheck %s
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=2 --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=REGATHER
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=2 --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard=microbatch-gathers=keep --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=KEEP
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=3 --zshard-form-units="pattern=fc.<i> ranks=2 strategy=no_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=DDP
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-shard-step="strategy=full_shard ranks=2 pattern=fc.<i> microbatches=2 schedule=false" \
// RUN:   | FileCheck %s --check-prefix=PIPE
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-shard-step="strategy=full_shard ranks=2 pattern=fc.<i> microbatches=2 microbatch-gathers=keep schedule=false" \
// RUN:   | FileCheck %s --check-prefix=PIPEKEEP
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-accumulate=microbatches=1 \
// RUN:   | FileCheck %s --check-prefix=ONE

// Tests that 2 microbatches of a batch-2 MLP step make a step taking 4 rows
// of each batch argument: forward and backward run once on rows [0, 2) and
// once on rows [2, 4), every op of each copy tagged with its microbatch;
// the loss and each gradient are added into the first microbatch's buffer
// after the second microbatch makes them and halved; the unchanged AdamW
// updates read the averaged gradients.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x4xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>}
// CHECK-SAME:    %[[T:[a-z0-9]+]]: tensor<4x3xf32> {zshard.name = "target", zshard.role = #zshard.role<batch>}
// CHECK-SAME:    attributes {zshard.microbatches = 2 : i64, zshard.step}
// CHECK-NEXT:  %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 4] [1, 1] {zshard.microbatch = 0 : i64{{.*}}} : tensor<4x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:  tensor.extract_slice %[[T]][0, 0] [2, 3] [1, 1] {zshard.microbatch = 0 : i64{{.*}}} : tensor<4x3xf32> to tensor<2x3xf32>
// CHECK:       linalg.matmul {zshard.microbatch = 0 : i64{{.*}}} ins(%[[X0]], %{{.*}} : tensor<2x4xf32>, tensor<4x6xf32>)
// CHECK:       %[[LOSS0:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<f32>) attrs =  {zshard.microbatch = 0 : i64{{.*}}}
// CHECK:       %[[GB0:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<3xf32>) attrs =  {zshard.microbatch = 0 : i64{{.*}}}
// CHECK-NOT:   zshard.microbatch = 2
// CHECK:       %[[X1:.*]] = tensor.extract_slice %[[X]][2, 0] [2, 4] [1, 1] {zshard.microbatch = 1 : i64{{.*}}} : tensor<4x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:  tensor.extract_slice %[[T]][2, 0] [2, 3] [1, 1] {zshard.microbatch = 1 : i64{{.*}}} : tensor<4x3xf32> to tensor<2x3xf32>
// CHECK:       linalg.matmul {zshard.microbatch = 1 : i64{{.*}}} ins(%[[X1]], %{{.*}} : tensor<2x4xf32>, tensor<4x6xf32>)
// CHECK:       %[[LOSS1:.*]] = linalg.generic {{.*}} ins(%{{[0-9]+}} : tensor<f32>) outs(%{{.*}} : tensor<f32>) attrs =  {zshard.microbatch = 1 : i64{{.*}}}
// CHECK:       %[[LOSS:.*]] = linalg.generic {{.*}} ins(%[[LOSS1]] : tensor<f32>) outs(%[[LOSS0]] : tensor<f32>) attrs =  {zshard.microbatch = 1 : i64{{.*}}}
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f32 {{.*}}, %[[OUT:.*]]: f32 {{.*}}):
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[MEAN:.*]] = arith.mulf %[[SUM]], %[[HALF]] : f32
// CHECK-NEXT:    linalg.yield %[[MEAN]] : f32
// CHECK:       %[[GB1:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<3xf32>) attrs =  {zshard.microbatch = 1 : i64{{.*}}}
// CHECK:       %[[GB:.*]] = linalg.generic {{.*}} ins(%[[GB1]] : tensor<3xf32>) outs(%[[GB0]] : tensor<3xf32>) attrs =  {zshard.microbatch = 1 : i64{{.*}}}
// CHECK:       zshard.adamw textbook %{{.*}}, %[[GB]], %{{.*}}, %{{.*}} lr {{.*}} : tensor<3xf32>
// CHECK:       return %[[LOSS]],

// Tests full_shard of the accumulating step, regathering (FSDP's no_sync):
// each microbatch gathers fc.0 for forward and fc.1 for forward and again
// for backward, each gather released before the next of its unit; each
// unit's accumulated gradients are reduce-scattered once, after the last
// microbatch.
// REGATHER-LABEL: func.func @train_step(
// REGATHER-SAME:    tensor<4x4xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>}
// REGATHER:       %[[A:.*]] = zshard.all_gather {{.*}} unit @fc.0
// REGATHER:       zshard.release %[[A]]
// REGATHER:       %[[B:.*]] = zshard.all_gather {{.*}} unit @fc.1
// REGATHER:       zshard.release %[[B]]
// REGATHER:       %[[C:.*]] = zshard.all_gather {{.*}} unit @fc.1
// REGATHER:       zshard.release %[[C]]
// REGATHER:       zshard.microbatch = 1
// REGATHER:       %[[D:.*]] = zshard.all_gather {{.*}} unit @fc.0
// REGATHER:       zshard.release %[[D]]
// REGATHER:       %[[E:.*]] = zshard.all_gather {{.*}} unit @fc.1
// REGATHER:       zshard.release %[[E]]
// REGATHER:       %[[F:.*]] = zshard.all_gather {{.*}} unit @fc.1
// REGATHER:       zshard.release %[[F]]
// REGATHER-NOT:   zshard.all_gather
// REGATHER:       zshard.reduce_scatter avg {{.*}} unit @fc.1 : tensor<22xf32> -> tensor<11xf32>
// REGATHER-NOT:   zshard.reduce_scatter {{.*}} unit @fc.1
// REGATHER:       zshard.reduce_scatter avg {{.*}} unit @fc.0 : tensor<30xf32> -> tensor<15xf32>
// REGATHER-NOT:   zshard.reduce_scatter
// REGATHER:       return

// Tests microbatch-gathers=keep: one gather of each unit, kept until its
// last backward use in the last microbatch; still one reduce-scatter each.
// KEEP-LABEL: func.func @train_step(
// KEEP:       %[[A:.*]] = zshard.all_gather {{.*}} unit @fc.0
// KEEP:       %[[B:.*]] = zshard.all_gather {{.*}} unit @fc.1
// KEEP-NOT:   zshard.all_gather
// KEEP:       zshard.microbatch = 1
// KEEP:       zshard.release %[[A]]
// KEEP:       zshard.release %[[B]]
// KEEP-NOT:   zshard.all_gather
// KEEP:       zshard.reduce_scatter avg {{.*}} unit @fc.1
// KEEP:       zshard.reduce_scatter avg {{.*}} unit @fc.0
// KEEP-NOT:   zshard.reduce_scatter
// KEEP:       return

// Tests no_shard with 3 microbatches: 6 rows a batch argument, the running
// sums scaled by 1/3 after the third microbatch, and one all-reduce per
// unit per step.
// DDP-LABEL: func.func @train_step(
// DDP-SAME:    tensor<6x4xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>}
// DDP-SAME:    attributes {zshard.microbatches = 3 : i64, zshard.step}
// DDP:       tensor.extract_slice %{{.*}}[4, 0] [2, 4] [1, 1] {zshard.microbatch = 2 : i64{{.*}}}
// DDP:       arith.constant 0.333333343 : f32
// DDP:       zshard.all_reduce avg {{.*}} unit @fc.1 : tensor<22xf32>
// DDP-NOT:   zshard.all_reduce {{.*}} unit @fc.1
// DDP:       zshard.all_reduce avg {{.*}} unit @fc.0 : tensor<30xf32>
// DDP-NOT:   zshard.all_reduce
// DDP:       return

// Tests that one microbatch leaves the step as it is.
// ONE:     tensor<2x4xf32> {zshard.name = "x", zshard.role = #zshard.role<batch>}
// ONE-NOT: zshard.microbatch

// Tests the zshard-shard-step pipeline's options: accumulation, then the
// six gathers of regathering or the two of keeping.
// PIPE:          zshard.microbatches = 2 : i64
// PIPE-COUNT-6:  zshard.all_gather
// PIPE-NOT:      zshard.all_gather
// PIPEKEEP:      zshard.microbatches = 2 : i64
// PIPEKEEP-COUNT-2: zshard.all_gather
// PIPEKEEP-NOT:  zshard.all_gather
