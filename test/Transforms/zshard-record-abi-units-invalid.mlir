// RUN: zshard-opt %s --verify-diagnostics --zshard-record-abi -o /dev/null

// Tests that a unit member whose init spec neither the unit's param_shard
// nor a param of the step gives is refused, naming it, instead of recording
// the member without one.
shard.grid @world(shape = 2)
// expected-error @+1 {{zshard-record-abi: member 'fc.ghost' of unit @u has no init spec: neither the unit's param_shard nor a param of the step gives one}}
zshard.unit @u on @world[0] full_shard padded(8) param(f32) reduce(f32) ["fc.weight" : 4 at 0, "fc.ghost" : 4 at 4]
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"})
    attributes {zshard.step} {
  %l = tensor.empty() : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
