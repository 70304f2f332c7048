// RUN: zshard-opt %s --split-input-file --verify-diagnostics --zshard-record-abi="chip=sm_90"

// Tests that a chip without target=cuda is refused with one line.
// expected-error @+1 {{zshard-record-abi: chip=sm_90 is for target=cuda only}}
module {
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"})
    attributes {zshard.step} {
  %l = tensor.empty() : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
}
