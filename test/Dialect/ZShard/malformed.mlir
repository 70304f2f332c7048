// RUN: not zshard-opt %s -split-input-file 2>&1 | FileCheck %s
// RUN: not zshard-opt %S/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: printf '\x00\xff\xfe garbage {{{' > %t.bin && not zshard-opt %t.bin 2>&1 | FileCheck %s --check-prefix=BINARY

// Tests that malformed input gives a diagnostic and a non-zero exit, never a
// crash: `not` fails on a crash, and each case must print its own error.

// MISSING: cannot open input file {{.*}}does-not-exist.mlir{{.*}}: No such file or directory
// BINARY: error:

// CHECK: error: custom op 'zshard.frobnicate' is unknown
func.func @f() {
  zshard.frobnicate
  return
}

// -----

// CHECK: error: unknown {{ *}}type `bogus` in dialect `zshard`
func.func @f(%x: !zshard.bogus) {
  return
}

// -----

// CHECK: error: invalid kind of type specified: expected builtin.tensor, but found 'f32'
func.func @f(%x: !zshard.token<f32>) {
  return
}

// -----

shard.grid @world(shape = 4)
// CHECK: error: invalid properties {{.*}} for op zshard.unit: expected IntegerAttr for key `value`
"zshard.unit"() <{grid = @world, members = [], padded_size = "big", param_type = f32, reduce_type = f32, shard_axes = array<i64: 0>, strategy = 3 : i32, sym_name = "u"}> : () -> ()

// -----

// CHECK: error: invalid properties {grid = 3 : i64, grid_axes = array<i64: 0>} for op zshard.all_gather: Invalid attribute `grid` in property conversion: 3 : i64
func.func @f(%x: tensor<4xf32>) {
  %0 = "zshard.all_gather"(%x) <{grid = 3 : i64, grid_axes = array<i64: 0>}> : (tensor<4xf32>) -> tensor<16xf32>
  return
}

// -----

shard.grid @world(shape = 4)
// CHECK: error: expected static shape
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 3x? at 0]

// -----

shard.grid @world(shape = 4)
// CHECK: error: custom op 'zshard.unit' expected string or keyword containing one of the following enum values for attribute 'strategy' [no_shard, zero1, shard_grad_op, full_shard, hybrid_shard, hybrid_shard_zero2]
zshard.unit @u on @world[0] quarter_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // CHECK: error: custom op 'zshard.all_reduce' expected string or keyword containing one of the following enum values for attribute 'reduce' [sum, avg, max]
  %0 = zshard.all_reduce product %x on @world[0] : tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
// CHECK: error: custom op 'zshard.unit' expected 'at'
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 0]

// -----

shard.grid @world(shape = 4)
func.func @f(%x: memref<4xf32>) {
  // CHECK: error: 'zshard.all_reduce' op operand #0 must be ranked tensor of any type values, but got 'memref<4xf32>'
  %0 = "zshard.all_reduce"(%x) <{grid = @world, grid_axes = array<i64: 0>, reduce = 0 : i32}> : (memref<4xf32>) -> memref<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
// CHECK: error: expected ']' in unit member list
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0

// -----

// CHECK: error: expected '='
shard.grid @world(shape 4)

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: error: 'zshard.all_gather' op requires attribute 'grid_axes'
  %0 = "zshard.all_gather"(%x) <{grid = @world}> : (tensor<4xf32>) -> tensor<16xf32>
  return
}

// -----

shard.grid @world(shape = 4)
// CHECK: error: custom op 'extra' is unknown
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0] extra

// -----

shard.grid @world(shape = 4)
// CHECK: error: invalid properties {{.*}} for op zshard.unit: Invalid attribute `strategy` in property conversion: 9 : i32
"zshard.unit"() <{grid = @world, members = [#zshard.member<"a" : 4 at 0>], padded_size = 4 : i64, param_type = f32, reduce_type = f32, shard_axes = array<i64: 0>, strategy = 9 : i32, sym_name = "u"}> : () -> ()
