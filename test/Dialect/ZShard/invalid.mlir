// RUN: zshard-opt %s -split-input-file -verify-diagnostics

// Tests one diagnostic for every verifier rule of the zshard dialect.

//===----------------------------------------------------------------------===//
// Unit members
//===----------------------------------------------------------------------===//

shard.grid @world(shape = 4)
// expected-error @+1 {{unit member needs a non-empty name}}
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["" : 4 at 0]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{unit member 'a' has negative offset -4}}
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at -4]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{unit member 'a' has a negative extent or too many elements}}
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4611686018427387904x4 at 0]

// -----

//===----------------------------------------------------------------------===//
// Units
//===----------------------------------------------------------------------===//

shard.grid @world(shape = 4)
// expected-error @+1 {{unit @u has no members}}
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) []

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{member 'a' appears twice}}
zshard.unit @u on @world[0] full_shard padded(8) param(f32) reduce(f32) ["a" : 4 at 0, "a" : 4 at 4]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{member 'b' at offset 3 overlaps or precedes member 'a', which ends at 4}}
zshard.unit @u on @world[0] full_shard padded(8) param(f32) reduce(f32) ["a" : 4 at 0, "b" : 4 at 3]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{padded size 4 is smaller than the members' extent 6}}
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 6 at 0]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{needs at least one shard axis}}
zshard.unit @u on @world[] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{shard axis -1 is negative}}
zshard.unit @u on @world[-1] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

shard.grid @world(shape = 4x2)
// expected-error @+1 {{shard axis 0 is repeated}}
zshard.unit @u on @world[0, 0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

shard.grid @world(shape = 4x2)
// expected-error @+1 {{grid axis 0 is both a shard and a replicate axis}}
zshard.unit @u on @world[0] replicate [0] hybrid_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

shard.grid @world(shape = 4x2)
// expected-error @+1 {{strategy hybrid_shard needs replicate axes}}
zshard.unit @u on @world[0] hybrid_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

shard.grid @world(shape = 4x2)
// expected-error @+1 {{strategy full_shard takes no replicate axes; use a hybrid strategy}}
zshard.unit @u on @world[0] replicate [1] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

// expected-error @+1 {{grid @nowhere does not name a shard.grid}}
zshard.unit @u on @nowhere[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{grid axis 1 is out of range for grid @world of rank 1}}
zshard.unit @u on @world[1] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{padded size 12 must be the members' extent 6 rounded up to a multiple of the shard group size 4 (expected 8)}}
zshard.unit @u on @world[0] full_shard padded(12) param(f32) reduce(f32) ["a" : 6 at 0]

// -----

shard.grid @world(shape = 4)
// expected-error @+1 {{attribute 'param_type' failed to satisfy constraint: type attribute of floating-point}}
zshard.unit @u on @world[0] full_shard padded(4) param(i32) reduce(f32) ["a" : 4 at 0]

// -----

//===----------------------------------------------------------------------===//
// Collectives: structure
//===----------------------------------------------------------------------===//

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xbf16>) {
  // expected-error @+1 {{element type of the result ('f32') differs from the input ('bf16'); convert explicitly before or after the collective}}
  %0 = zshard.all_gather %x on @world[0] : tensor<4xbf16> -> tensor<16xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result rank 2 differs from the input rank 1}}
  %0 = zshard.all_gather %x on @world[0] : tensor<4xf32> -> tensor<16x1xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %0 = "zshard.all_reduce"(%x) <{grid = @world, grid_axes = array<i64: 0>, reduce = 0 : i32}> : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result type 'tensor<8xf32>' differs from the input type 'tensor<4xf32>'}}
  %0 = zshard.all_reduce_start sum %x on @world[0] : tensor<4xf32> -> !zshard.token<tensor<8xf32>>
  %1 = zshard.wait %0 : !zshard.token<tensor<8xf32>>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{needs a tensor of rank at least 1 to scatter along dimension 0}}
  %0 = zshard.reduce_scatter sum %x on @world[0] : tensor<f32> -> tensor<f32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{input and result may differ only in dimension 0}}
  %0 = zshard.all_gather %x on @world[0] : tensor<2x3xf32> -> tensor<8x4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs at least one grid axis}}
  %0 = zshard.all_reduce sum %x on @world[] : tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{grid axis 0 is repeated}}
  %0 = zshard.all_reduce sum %x on @world[0, 0] : tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{token must be consumed by exactly one zshard.wait (found 0 uses)}}
  %0 = zshard.all_reduce_start sum %x on @world[0] : tensor<4xf32> -> !zshard.token<tensor<4xf32>>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{token must be consumed by exactly one zshard.wait (found 2 uses)}}
  %0 = zshard.all_reduce_start sum %x on @world[0] : tensor<4xf32> -> !zshard.token<tensor<4xf32>>
  %1 = zshard.wait %0 : !zshard.token<tensor<4xf32>>
  %2 = zshard.wait %0 : !zshard.token<tensor<4xf32>>
  return
}

// -----

shard.grid @world(shape = 4)
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<1xf32>) {
  // expected-note @+1 {{previous gather here}}
  %0 = zshard.all_gather %x on @world[0] unit @u : tensor<1xf32> -> tensor<4xf32>
  // expected-error @+1 {{gathers unit @u again before its previous gather is released}}
  %1 = zshard.all_gather_start %x on @world[0] unit @u : tensor<1xf32> -> !zshard.token<tensor<4xf32>>
  %2 = zshard.wait %1 : !zshard.token<tensor<4xf32>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Collectives: grid and group size
//===----------------------------------------------------------------------===//

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{grid @world does not name a shard.grid}}
  %0 = zshard.all_reduce sum %x on @world[0] : tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{grid axis 2 is out of range for grid @world of rank 1}}
  %0 = zshard.all_gather %x on @world[2] : tensor<4xf32> -> tensor<16xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{shard dimension 0 (4) times the group size (4) must equal the full dimension 0 (12)}}
  %0 = zshard.all_gather %x on @world[0] : tensor<4xf32> -> tensor<12xf32>
  return
}

// -----

shard.grid @world(shape = 2x3)
func.func @f(%x: tensor<12xf32>) {
  // expected-error @+1 {{shard dimension 0 (3) times the group size (6) must equal the full dimension 0 (12)}}
  %0 = zshard.reduce_scatter avg %x on @world[0, 1] : tensor<12xf32> -> tensor<3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Collectives: against their unit
//===----------------------------------------------------------------------===//

shard.grid @world(shape = 4)
func.func @f(%x: tensor<1xf32>) {
  // expected-error @+1 {{unit @u does not name a zshard.unit}}
  %0 = zshard.all_gather %x on @world[0] unit @u : tensor<1xf32> -> tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
shard.grid @other(shape = 4)
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<1xf32>) {
  // expected-error @+1 {{runs over grid @other but unit @u lives on grid @world}}
  %0 = zshard.all_gather %x on @other[0] unit @u : tensor<1xf32> -> tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
zshard.unit @u on @world[0] no_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<1xf32>) {
  // expected-error @+1 {{unit @u is not sharded (no_shard); it is never gathered or reduce-scattered}}
  %0 = zshard.all_gather %x on @world[0] unit @u : tensor<1xf32> -> tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4x4)
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<1xf32>) {
  // expected-error @+1 {{must run over the shard axes of unit @u}}
  %0 = zshard.all_gather %x on @world[1] unit @u : tensor<1xf32> -> tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
zshard.unit @u on @world[0] full_shard padded(8) param(f32) reduce(f32) ["a" : 8 at 0]
func.func @f(%x: tensor<1xf32>) {
  // expected-error @+1 {{full buffer 'tensor<4xf32>' must be 1-D of unit @u's padded size 8}}
  %0 = zshard.all_gather %x on @world[0] unit @u : tensor<1xf32> -> tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
zshard.unit @u on @world[0] full_shard padded(4) param(bf16) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<1xf32>) {
  // expected-error @+1 {{element type 'f32' must be unit @u's parameter type 'bf16'}}
  %0 = zshard.all_gather %x on @world[0] unit @u : tensor<1xf32> -> tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
zshard.unit @u on @world[0] full_shard padded(4) param(bf16) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<4xbf16>) {
  // expected-error @+1 {{element type 'bf16' must be unit @u's reduce type 'f32'}}
  %0 = zshard.reduce_scatter avg %x on @world[0] unit @u : tensor<4xbf16> -> tensor<1xbf16>
  return
}

// -----

shard.grid @world(shape = 4x2)
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{must run over the shard or replicate axes of unit @u}}
  %0 = zshard.all_reduce sum %x on @world[1] unit @u : tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
zshard.unit @u on @world[0] no_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<4xbf16>) {
  // expected-error @+1 {{element type 'bf16' must be unit @u's reduce type 'f32'}}
  %0 = zshard.all_reduce sum %x on @world[0] unit @u : tensor<4xbf16>
  return
}

// -----

shard.grid @world(shape = 4)
zshard.unit @u on @world[0] no_shard padded(4) param(f32) reduce(f32) ["a" : 4 at 0]
func.func @f(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{buffer of unit @u must be 1-D}}
  %0 = zshard.all_reduce sum %x on @world[0] unit @u : tensor<2x2xf32>
  return
}

// -----

shard.grid @world(shape = 4x2)
zshard.unit @u on @world[0] replicate [1] hybrid_shard padded(8) param(f32) reduce(f32) ["a" : 8 at 0]
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{buffer of 4 elements is neither the padded size nor the shard size of unit @u}}
  %0 = zshard.all_reduce sum %x on @world[1] unit @u : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Waits
//===----------------------------------------------------------------------===//

func.func @f(%t: !zshard.token<tensor<4xf32>>) {
  // expected-error @+1 {{token must come straight from a zshard collective start op}}
  %0 = zshard.wait %t : !zshard.token<tensor<4xf32>>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  %0 = zshard.all_reduce_start sum %x on @world[0] : tensor<4xf32> -> !zshard.token<tensor<4xf32>>
  // expected-error @+1 {{failed to verify that result type matches the token's payload}}
  %1 = "zshard.wait"(%0) : (!zshard.token<tensor<4xf32>>) -> tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Releases
//===----------------------------------------------------------------------===//

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{operand must be a gathered buffer: the result of zshard.all_gather or of zshard.wait on zshard.all_gather_start}}
  zshard.release %x : tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  %0 = zshard.all_reduce_start sum %x on @world[0] : tensor<4xf32> -> !zshard.token<tensor<4xf32>>
  %1 = zshard.wait %0 : !zshard.token<tensor<4xf32>>
  // expected-error @+1 {{operand must be a gathered buffer}}
  zshard.release %1 : tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<1xf32>) {
  %0 = zshard.all_gather %x on @world[0] : tensor<1xf32> -> tensor<4xf32>
  // expected-error @+1 {{buffer is released more than once}}
  zshard.release %0 : tensor<4xf32>
  zshard.release %0 : tensor<4xf32>
  return
}

// -----

shard.grid @world(shape = 4)
func.func @f(%x: tensor<1xf32>) -> tensor<4xf32> {
  %0 = zshard.all_gather %x on @world[0] : tensor<1xf32> -> tensor<4xf32>
  // expected-error @+1 {{gathered buffer is used after its release}}
  zshard.release %0 : tensor<4xf32>
  // expected-note @+1 {{used here}}
  return %0 : tensor<4xf32>
}
