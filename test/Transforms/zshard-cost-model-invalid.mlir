// RUN: zshard-opt %s --verify-diagnostics --zshard-cost-model

// A collective over a grid of dynamic size has no bytes per rank to price.
shard.grid @dyn(shape = ?)
func.func @train_step(%x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step} {
  // expected-error @+1 {{cost model: the grid of this collective has no static size}}
  %r = zshard.all_reduce sum %x on @dyn[0] : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %e = tensor.extract %r[%c0] : tensor<4xf32>
  %l = tensor.from_elements %e : tensor<f32>
  return %l : tensor<f32>
}
