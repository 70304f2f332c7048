// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard --zshard-async --zshard-verify-contract \
// RUN:   | FileCheck %s
// RUN: zshard-opt %S/Inputs/mlp2-step.mlir --zshard-form-units="pattern=fc.<i> ranks=2 strategy=no_shard" --zshard-shard --zshard-async --canonicalize \
// RUN:   | FileCheck %s --check-prefix=CANON

// Tests that every collective becomes its start and a wait right after it,
// with the same unit, grid and reduction, and that releases name the
// wait's result; no synchronous collective is left.
// CHECK-NOT:  zshard.all_gather {{.*}} on
// CHECK:      %[[T0:.*]] = zshard.all_gather_start %{{.*}} on @world[0] unit @fc.0 : tensor<15xf32> -> !zshard.token<tensor<30xf32>>
// CHECK-NEXT: %[[G0:.*]] = zshard.wait %[[T0]] : !zshard.token<tensor<30xf32>>
// CHECK:      zshard.release %[[G0]] : tensor<30xf32>
// CHECK:      %[[R:.*]] = zshard.reduce_scatter_start avg %{{.*}} on @world[0] unit @fc.1 : tensor<22xf32> -> !zshard.token<tensor<11xf32>>
// CHECK-NEXT: zshard.wait %[[R]] : !zshard.token<tensor<11xf32>>
// CHECK-NOT:  zshard.reduce_scatter avg

// A start waited for right away is the synchronous collective: the
// canonicalizer folds the pair back.
// CANON-NOT:  zshard.all_reduce_start
// CANON:      zshard.all_reduce avg %{{.*}} unit @fc.1 : tensor<22xf32>
