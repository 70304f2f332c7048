// RUN: zshard-opt %s --split-input-file --verify-diagnostics

// Tests one diagnostic for every verifier rule of zshard.batch_mean.

// Tests that the input is a float tensor.
func.func @integer(%c: tensor<i32>) -> tensor<i32> {
  // expected-error @+1 {{'zshard.batch_mean' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<i32>'}}
  %m = zshard.batch_mean %c : tensor<i32>
  return %m : tensor<i32>
}

// -----

// Tests that the result has the input's type (generic form).
func.func @types(%c: tensor<f32>) -> tensor<f16> {
  // expected-error @+1 {{'zshard.batch_mean' op failed to verify that all of {input, result} have same type}}
  %m = "zshard.batch_mean"(%c) : (tensor<f32>) -> tensor<f16>
  return %m : tensor<f16>
}
