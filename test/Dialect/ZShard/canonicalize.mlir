// RUN: zshard-opt %s --mlir-print-debuginfo=false -canonicalize -split-input-file | FileCheck %s
// RUN: zshard-opt %s --mlir-print-debuginfo=false -cse -split-input-file | FileCheck %s --check-prefix=CSE

// Tests that an async start waited on right away becomes the sync collective,
// keeping its unit, axes and reduction.
shard.grid @world(shape = 4)
zshard.unit @u on @world[0] full_shard padded(8) param(f32) reduce(f32) ["a" : 7 at 0]
// CHECK-LABEL: func.func @wait_right_after_start
func.func @wait_right_after_start(%shard: tensor<2xf32>, %grad: tensor<8xf32>, %x: tensor<3xf32>) -> (tensor<8xf32>, tensor<2xf32>, tensor<3xf32>) {
  // CHECK-NEXT: %[[A:.*]] = zshard.all_gather %{{.*}} on @world[0] unit @u : tensor<2xf32> -> tensor<8xf32>
  // CHECK-NEXT: %[[B:.*]] = zshard.reduce_scatter avg %{{.*}} on @world[0] unit @u : tensor<8xf32> -> tensor<2xf32>
  // CHECK-NEXT: %[[C:.*]] = zshard.all_reduce max %{{.*}} on @world[0] : tensor<3xf32>
  // CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
  %t0 = zshard.all_gather_start %shard on @world[0] unit @u : tensor<2xf32> -> !zshard.token<tensor<8xf32>>
  %a = zshard.wait %t0 : !zshard.token<tensor<8xf32>>
  %t1 = zshard.reduce_scatter_start avg %grad on @world[0] unit @u : tensor<8xf32> -> !zshard.token<tensor<2xf32>>
  %b = zshard.wait %t1 : !zshard.token<tensor<2xf32>>
  %t2 = zshard.all_reduce_start max %x on @world[0] : tensor<3xf32> -> !zshard.token<tensor<3xf32>>
  %c = zshard.wait %t2 : !zshard.token<tensor<3xf32>>
  return %a, %b, %c : tensor<8xf32>, tensor<2xf32>, tensor<3xf32>
}

// -----

// Tests that a start with work between it and its wait stays async.
shard.grid @world(shape = 4)
// CHECK-LABEL: func.func @overlapped_stays_async
func.func @overlapped_stays_async(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // CHECK-NEXT: %[[T:.*]] = zshard.all_reduce_start sum
  // CHECK-NEXT: arith.addf
  // CHECK-NEXT: zshard.wait %[[T]]
  %t = zshard.all_reduce_start sum %x on @world[0] : tensor<3xf32> -> !zshard.token<tensor<3xf32>>
  %z = arith.addf %y, %y : tensor<3xf32>
  %r = zshard.wait %t : !zshard.token<tensor<3xf32>>
  return %r, %z : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that collectives over a group of one rank fold away, with the
// releases of what they gathered, in sync and async form.
shard.grid @solo(shape = 1x4)
zshard.unit @u on @solo[0] full_shard padded(3) param(f32) reduce(f32) ["a" : 3 at 0]
// CHECK-LABEL: func.func @group_of_one
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
func.func @group_of_one(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  // CHECK-NOT: zshard.
  // CHECK: %[[S:.*]] = arith.addf %[[X]], %[[Y]]
  // CHECK-NEXT: %[[W:.*]] = arith.mulf %[[Y]], %[[Y]]
  // CHECK-NOT: zshard.
  // CHECK: return %[[S]], %[[X]], %[[Y]], %[[W]]
  %full = zshard.all_gather %x on @solo[0] unit @u : tensor<3xf32> -> tensor<3xf32>
  %s = arith.addf %full, %y : tensor<3xf32>
  zshard.release %full : tensor<3xf32>
  %g = zshard.reduce_scatter avg %x on @solo[0] unit @u : tensor<3xf32> -> tensor<3xf32>
  %r = zshard.all_reduce sum %y on @solo[0] : tensor<3xf32>
  %t = zshard.all_gather_start %y on @solo[0] unit @u : tensor<3xf32> -> !zshard.token<tensor<3xf32>>
  %w = zshard.wait %t : !zshard.token<tensor<3xf32>>
  %m = arith.mulf %w, %w : tensor<3xf32>
  zshard.release %w : tensor<3xf32>
  return %s, %g, %r, %m : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that collectives over more than one rank, or over a grid axis of
// unknown size, are kept.
shard.grid @mesh(shape = 1x4)
shard.grid @dyn(shape = ?)
// CHECK-LABEL: func.func @kept
func.func @kept(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  // CHECK: zshard.all_reduce sum %{{.*}} on @mesh[1]
  // CHECK: zshard.all_reduce sum %{{.*}} on @mesh[0, 1]
  // CHECK: zshard.all_reduce sum %{{.*}} on @dyn[0]
  %a = zshard.all_reduce sum %x on @mesh[1] : tensor<3xf32>
  %b = zshard.all_reduce sum %x on @mesh[0, 1] : tensor<3xf32>
  %c = zshard.all_reduce sum %x on @dyn[0] : tensor<3xf32>
  return %a, %b, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that two identical collectives are not merged by CSE and an unused
// one is not erased: each is a separate communication (full_shard gathers a
// unit again in backward on purpose).
shard.grid @world(shape = 4)
// CSE-LABEL: func.func @not_merged
func.func @not_merged(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // CSE-COUNT-3: zshard.all_reduce sum
  %a = zshard.all_reduce sum %x on @world[0] : tensor<3xf32>
  %b = zshard.all_reduce sum %x on @world[0] : tensor<3xf32>
  %c = zshard.all_reduce sum %x on @world[0] : tensor<3xf32>
  return %a, %b : tensor<3xf32>, tensor<3xf32>
}
