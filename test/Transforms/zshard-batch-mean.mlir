// RUN: zshard-opt %S/Inputs/masked-linear-step.mlir --zshard-verify-contract --zshard-form-units="pattern=fc ranks=4 strategy=full_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=SHARD
// RUN: zshard-opt %S/Inputs/masked-linear-step.mlir --zshard-form-units="pattern=fc ranks=4 replicas=2 strategy=hybrid_shard" --zshard-shard \
// RUN:   | FileCheck %s --check-prefix=HYBRID
// RUN: zshard-opt %S/Inputs/masked-linear-step.mlir --zshard-form-units="pattern=fc ranks=2 strategy=no_shard" --zshard-shard \
// RUN:   | FileCheck %s --check-prefix=DDP
// RUN: zshard-opt %S/Inputs/masked-linear-step.mlir --zshard-accumulate=microbatches=2 --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=ACC
// RUN: zshard-opt %S/Inputs/masked-linear-step.mlir --zshard-accumulate=microbatches=2 \
// RUN:   | FileCheck %s --check-prefix=ACCCOUNT
// RUN: zshard-opt %S/Inputs/masked-linear-step.mlir --zshard-accumulate=microbatches=2 --zshard-form-units="pattern=fc ranks=2 strategy=full_shard" --zshard-shard \
// RUN:   | FileCheck %s --check-prefix=ACCSHARD
// RUN: zshard-opt %S/Inputs/masked-linear-step.mlir --zshard-lower-batch-means \
// RUN:   | FileCheck %s --check-prefix=ONE
// RUN: zshard-opt %S/Inputs/masked-linear-step.mlir --zshard-form-units="pattern=fc ranks=1 strategy=full_shard" --zshard-shard --canonicalize \
// RUN:   | FileCheck %s --check-prefix=ONE

// Tests what becomes of zshard.batch_mean, the count a mean loss divides
// by, averaged over the slices of the global batch.

// Sharded: every rank holds a slice of the batch, so the count is averaged
// over the whole grid, where the batch mean was.
// SHARD-LABEL: func.func @train_step(
// SHARD:       %[[COUNT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>)
// SHARD:       %[[N:.*]] = zshard.all_reduce avg %[[COUNT]] on @world[0] : tensor<f32>
// SHARD-NOT:   zshard.batch_mean
// SHARD:       arith.divf
// SHARD:       } -> tensor<f32>
// SHARD:       zshard.reduce_scatter avg

// Hybrid: over the replicate axis too, since replicas hold other rows.
// HYBRID:      zshard.all_reduce avg %{{.*}} on @world[0, 1] : tensor<f32>
// HYBRID-NOT:  zshard.batch_mean

// no_shard (DDP) has the same all_reduce, beside the gradients' own.
// DDP:         zshard.all_reduce avg %{{.*}} on @world[0] : tensor<f32>
// DDP:         zshard.all_reduce avg %{{.*}} on @world[0] unit @fc : tensor<12xf32>

// Microbatches: the count of each microbatch's rows is made first (the
// copies read only the mask), their mean is the one batch mean, and the
// microbatches' forward and backward read it without counting again.
// ACC-LABEL:   func.func @train_step(
// ACC-SAME:      tensor<4x3xf32> {zshard.name = "mask", zshard.role = #zshard.role<batch>}
// ACC:         %[[M0:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 3] [1, 1] {zshard.microbatch = 0 : i64{{.*}}} : tensor<4x3xf32> to tensor<2x3xf32>
// ACC:         %[[C0:.*]] = linalg.generic {{.*}} ins(%[[M0]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>) attrs =  {zshard.microbatch = 0 : i64{{.*}}}
// ACC:         %[[M1:.*]] = tensor.extract_slice %{{.*}}[2, 0] [2, 3] [1, 1] {zshard.microbatch = 1 : i64{{.*}}} : tensor<4x3xf32> to tensor<2x3xf32>
// ACC:         %[[C1:.*]] = linalg.generic {{.*}} ins(%[[M1]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>) attrs =  {zshard.microbatch = 1 : i64{{.*}}}
// ACC:         %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[C1]] : tensor<f32>) outs(%[[C0]] : tensor<f32>)
// ACC:           arith.addf
// ACC:           arith.constant 5.000000e-01 : f32
// ACC:         %[[N:.*]] = zshard.batch_mean %[[MEAN]] : tensor<f32>
// ACC-NOT:     zshard.batch_mean
// ACC:         linalg.matmul {zshard.microbatch = 0 : i64{{.*}}}
// ACC:         ins(%{{.*}}, %[[N]] : tensor<f32>, tensor<f32>) {{.*}}{zshard.microbatch = 0 : i64{{.*}}}
// ACC:         linalg.matmul {zshard.microbatch = 1 : i64{{.*}}}
// ACC:         ins(%{{.*}}, %[[N]] : tensor<f32>, tensor<f32>) {{.*}}{zshard.microbatch = 1 : i64{{.*}}}
// ACC:         zshard.adamw

// The counts are made once per microbatch, the microbatches' own copies
// of them removed.
// ACCCOUNT-COUNT-2: ins(%{{[a-z0-9_]+}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>)
// ACCCOUNT-NOT:     ins(%{{[a-z0-9_]+}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>)

// ACCSHARD:    %[[MEAN:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<f32>)
// ACCSHARD:    zshard.all_reduce avg %[[MEAN]] on @world[0] : tensor<f32>
// ACCSHARD-NOT: zshard.batch_mean

// One slice (lowering, or a grid of one rank): the mean is the count.
// ONE-LABEL:   func.func @train_step(
// ONE-NOT:     zshard.batch_mean
// ONE-NOT:     zshard.all_reduce
// ONE:         %[[COUNT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<f32>)
// ONE:         ins(%{{.*}}, %[[COUNT]] : tensor<f32>, tensor<f32>)
