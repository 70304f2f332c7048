// RUN: zshard-opt %s | FileCheck %s
// RUN: zshard-opt %s | zshard-opt | FileCheck %s
// RUN: zshard-opt %s --mlir-print-op-generic | zshard-opt | FileCheck %s
// RUN: zshard-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Tests that every zshard op round-trips through its custom form and through
// the generic form.

shard.grid @world(shape = 4)
shard.grid @mesh(shape = 2x4)

// CHECK-LABEL: zshard.unit @h.0 on @world[0] full_shard padded(16) param(bf16) reduce(f32) [
// CHECK-NEXT:    "h.0.w" : 3x4 at 0,
// CHECK-NEXT:    "h.0.b" : 3 at 12,
// CHECK-NEXT:    "h.0.scale" : scalar at 15
// CHECK-NEXT:  ]
// GENERIC: "zshard.unit"() <{grid = @world, members = [#zshard.member<"h.0.w" : 3x4 at 0>, #zshard.member<"h.0.b" : 3 at 12>, #zshard.member<"h.0.scale" : scalar at 15>], padded_size = 16 : i64, param_type = bf16, reduce_type = f32, replicate_axes = array<i64>, shard_axes = array<i64: 0>, strategy = 3 : i32, sym_name = "h.0"}>
zshard.unit @h.0 on @world[0] full_shard padded(16) param(bf16) reduce(f32) [
  "h.0.w" : 3x4 at 0,
  "h.0.b" : 3 at 12,
  "h.0.scale" : scalar at 15
]

// CHECK-LABEL: zshard.unit @dp on @world[0] no_shard padded(4) param(f32) reduce(f32) [
zshard.unit @dp on @world[0] no_shard padded(4) param(f32) reduce(f32) ["dp.w" : 2x2 at 0]
// CHECK-LABEL: zshard.unit @z1 on @world[0] zero1 padded(8)
zshard.unit @z1 on @world[0] zero1 padded(8) param(f32) reduce(f32) ["z1.w" : 7 at 0]
// CHECK-LABEL: zshard.unit @z2 on @world[0] shard_grad_op padded(8)
zshard.unit @z2 on @world[0] shard_grad_op padded(8) param(f32) reduce(bf16) ["z2.w" : 7 at 0]
// CHECK-LABEL: zshard.unit @hy on @mesh[1] replicate [0] hybrid_shard padded(12)
zshard.unit @hy on @mesh[1] replicate [0] hybrid_shard padded(12) param(bf16) reduce(f32) ["hy.w" : 10 at 0]
// CHECK-LABEL: zshard.unit @hy2 on @mesh[1] replicate [0] hybrid_shard_zero2 padded(8)
zshard.unit @hy2 on @mesh[1] replicate [0] hybrid_shard_zero2 padded(8) param(f32) reduce(f32) ["hy2.w" : 5 at 0, "hy2.b" : 2 at 6]

// CHECK-LABEL: func.func @sync
func.func @sync(%shard: tensor<4xbf16>, %grad: tensor<16xf32>) -> tensor<4xf32> {
  // CHECK:      %[[FULL:.*]] = zshard.all_gather %{{.*}} on @world[0] unit @h.0 : tensor<4xbf16> -> tensor<16xbf16>
  // CHECK-NEXT: zshard.release %[[FULL]] : tensor<16xbf16>
  // CHECK-NEXT: %[[G:.*]] = zshard.reduce_scatter avg %{{.*}} on @world[0] unit @h.0 : tensor<16xf32> -> tensor<4xf32>
  // CHECK-NEXT: zshard.all_reduce sum %[[G]] on @world[0] : tensor<4xf32>
  // GENERIC: "zshard.all_gather"(%{{.*}}) <{grid = @world, grid_axes = array<i64: 0>, unit = @h.0}> : (tensor<4xbf16>) -> tensor<16xbf16>
  // GENERIC: "zshard.release"
  // GENERIC: "zshard.reduce_scatter"(%{{.*}}) <{grid = @world, grid_axes = array<i64: 0>, reduce = 1 : i32, unit = @h.0}>
  // GENERIC: "zshard.all_reduce"(%{{.*}}) <{grid = @world, grid_axes = array<i64: 0>, reduce = 0 : i32}>
  %full = zshard.all_gather %shard on @world[0] unit @h.0 : tensor<4xbf16> -> tensor<16xbf16>
  zshard.release %full : tensor<16xbf16>
  %g = zshard.reduce_scatter avg %grad on @world[0] unit @h.0 : tensor<16xf32> -> tensor<4xf32>
  %r = zshard.all_reduce sum %g on @world[0] : tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @async
func.func @async(%shard: tensor<4xbf16>, %grad: tensor<16xf32>, %x: tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>) {
  // CHECK:      %[[T:.*]] = zshard.all_gather_start %{{.*}} on @world[0] unit @h.0 : tensor<4xbf16> -> !zshard.token<tensor<16xbf16>>
  // CHECK-NEXT: %[[S:.*]] = zshard.reduce_scatter_start avg %{{.*}} on @world[0] unit @h.0 : tensor<16xf32> -> !zshard.token<tensor<4xf32>>
  // CHECK-NEXT: %[[R:.*]] = zshard.all_reduce_start max %{{.*}} on @mesh[0, 1] : tensor<2x3xf32> -> !zshard.token<tensor<2x3xf32>>
  // CHECK-NEXT: %[[FULL:.*]] = zshard.wait %[[T]] : !zshard.token<tensor<16xbf16>>
  // CHECK-NEXT: zshard.release %[[FULL]]
  // CHECK-NEXT: zshard.wait %[[S]] : !zshard.token<tensor<4xf32>>
  // CHECK-NEXT: zshard.wait %[[R]] : !zshard.token<tensor<2x3xf32>>
  // GENERIC: "zshard.all_gather_start"(%{{.*}}) <{grid = @world, grid_axes = array<i64: 0>, unit = @h.0}> : (tensor<4xbf16>) -> !zshard.token<tensor<16xbf16>>
  // GENERIC: "zshard.wait"(%{{.*}}) : (!zshard.token<tensor<16xbf16>>) -> tensor<16xbf16>
  %t = zshard.all_gather_start %shard on @world[0] unit @h.0 : tensor<4xbf16> -> !zshard.token<tensor<16xbf16>>
  %s = zshard.reduce_scatter_start avg %grad on @world[0] unit @h.0 : tensor<16xf32> -> !zshard.token<tensor<4xf32>>
  %r = zshard.all_reduce_start max %x on @mesh[0, 1] : tensor<2x3xf32> -> !zshard.token<tensor<2x3xf32>>
  %full = zshard.wait %t : !zshard.token<tensor<16xbf16>>
  zshard.release %full : tensor<16xbf16>
  %gs = zshard.wait %s : !zshard.token<tensor<4xf32>>
  %m = zshard.wait %r : !zshard.token<tensor<2x3xf32>>
  return %gs, %m : tensor<4xf32>, tensor<2x3xf32>
}

// Tests that a unit may be gathered again once its previous gather is
// released (full_shard re-gathers in backward).
// CHECK-LABEL: func.func @regather
func.func @regather(%shard: tensor<4xbf16>) {
  // CHECK: zshard.all_gather
  // CHECK: zshard.release
  // CHECK: zshard.all_gather
  // CHECK: zshard.release
  %a = zshard.all_gather %shard on @world[0] unit @h.0 : tensor<4xbf16> -> tensor<16xbf16>
  zshard.release %a : tensor<16xbf16>
  %b = zshard.all_gather %shard on @world[0] unit @h.0 : tensor<4xbf16> -> tensor<16xbf16>
  zshard.release %b : tensor<16xbf16>
  return
}

// Tests the unit-bound collectives of the other strategies: zero1 gathers
// updated parameters, no_shard and hybrid all-reduce gradients, and
// collectives of 2-D tensors gather along dimension 0.
// CHECK-LABEL: func.func @strategies
func.func @strategies(%dpg: tensor<4xf32>, %z1: tensor<2xf32>, %hyg: tensor<3xf32>, %act: tensor<2x8xf32>) {
  // CHECK: zshard.all_reduce avg %{{.*}} on @world[0] unit @dp : tensor<4xf32>
  %0 = zshard.all_reduce avg %dpg on @world[0] unit @dp : tensor<4xf32>
  // CHECK: zshard.all_gather %{{.*}} on @world[0] unit @z1 : tensor<2xf32> -> tensor<8xf32>
  %1 = zshard.all_gather %z1 on @world[0] unit @z1 : tensor<2xf32> -> tensor<8xf32>
  // CHECK: zshard.all_reduce sum %{{.*}} on @mesh[0] unit @hy : tensor<3xf32>
  %2 = zshard.all_reduce sum %hyg on @mesh[0] unit @hy : tensor<3xf32>
  // CHECK: zshard.all_gather %{{.*}} on @mesh[0, 1] : tensor<2x8xf32> -> tensor<16x8xf32>
  %3 = zshard.all_gather %act on @mesh[0, 1] : tensor<2x8xf32> -> tensor<16x8xf32>
  return
}
