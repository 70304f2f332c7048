// RUN: zshard-opt %s --split-input-file --verify-diagnostics --zshard-collectives-to-runtime

// Collectives the runtime cannot run: each is refused where it is, with the
// element types and shapes the runtime takes.

shard.grid @world(shape = 4)
func.func @f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{'zshard.all_reduce' op cannot run on the runtime: it takes static f32, bf16, f16 or i32 tensors}}
  %r = zshard.all_reduce sum %x on @world[0] : tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

shard.grid @world(shape = 4)
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'zshard.all_reduce' op cannot run on the runtime: it takes static f32, bf16, f16 or i32 tensors}}
  %r = zshard.all_reduce sum %x on @world[0] : tensor<?xf32>
  return %r : tensor<?xf32>
}
