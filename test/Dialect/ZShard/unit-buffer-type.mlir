// RUN: zshard-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// A unit's optional buffer(T), FSDP's buffer_dtype: printed after reduce(T)
// and read back; absent when not given; f32, bf16 or f16 only.

shard.grid @world(shape = 2)
// CHECK: zshard.unit @a on @world[0] full_shard padded(4) param(f32) reduce(f32) buffer(bf16) [
zshard.unit @a on @world[0] full_shard padded(4) param(f32) reduce(f32) buffer(bf16) ["a.w" : 4 at 0]
// CHECK: zshard.unit @b on @world[0] no_shard padded(4) param(bf16) reduce(f32) buffer(f16) [
zshard.unit @b on @world[0] no_shard padded(4) param(bf16) reduce(f32) buffer(f16) ["b.w" : 4 at 0]
// CHECK: zshard.unit @c on @world[0] zero1 padded(4) param(f32) reduce(f32) buffer(f32) [
zshard.unit @c on @world[0] zero1 padded(4) param(f32) reduce(f32) buffer(f32) ["c.w" : 4 at 0]
// CHECK: zshard.unit @d on @world[0] full_shard padded(4) param(f32) reduce(f32) [
zshard.unit @d on @world[0] full_shard padded(4) param(f32) reduce(f32) ["d.w" : 4 at 0]

// -----

shard.grid @world(shape = 2)
// expected-error @+1 {{'zshard.unit' op buffer type must be f32, bf16 or f16, got 'f64'}}
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) buffer(f64) ["u.w" : 4 at 0]

// -----

shard.grid @world(shape = 2)
// expected-error @+1 {{'zshard.unit' op buffer type must be f32, bf16 or f16, got 'f8E4M3FN'}}
zshard.unit @u on @world[0] full_shard padded(4) param(f32) reduce(f32) buffer(f8E4M3FN) ["u.w" : 4 at 0]
