// RUN: zshard-opt %s -split-input-file -verify-diagnostics

// Tests one diagnostic for every verifier rule of zshard.adamw.

func.func @f(%w: tensor<4xi32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<f32>) {
  // expected-error @+1 {{'zshard.adamw' op param must have a floating-point element type, got 'tensor<4xi32>'}}
  %0:3 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1) : tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%w: tensor<4xf32>, %g: tensor<4x2xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<f32>) {
  // expected-error @+1 {{'zshard.adamw' op grad 'tensor<4x2xf32>' does not have the shape of param 'tensor<4xf32>'}}
  %0:3 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1) : tensor<4xf32>, tensor<4x2xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%w: tensor<4xbf16>, %g: tensor<4xbf16>, %m: tensor<4xbf16>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<f32>) {
  // expected-error @+1 {{'zshard.adamw' op exp_avg must be f32, got 'tensor<4xbf16>'}}
  %0:3 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1) : tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>
  return
}

// -----

func.func @f(%w: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<f32>) {
  // expected-error @+1 {{'zshard.adamw' op beta2 must be in [0, 1), got 1.000000e+00}}
  %0:3 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t betas(0.9, 1.0) eps(1.0e-08) weight_decay(0.1) : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%w: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<f32>) {
  // expected-error @+1 {{'zshard.adamw' op weight_decay must be a finite number >= 0, got -1.000000e-01}}
  %0:3 = zshard.adamw torch %w, %g, %m, %v lr %lr step %t betas(0.9, 0.95) eps(1.0e-08) weight_decay(-0.1) : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// The scalars are 0-d f32 tensors (checked by the op's operand types).
func.func @f(%w: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<1xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{'zshard.adamw' op operand #4 must be tensor<f32>, but got 'tensor<1xf32>'}}
  %0:3 = "zshard.adamw"(%w, %g, %m, %v, %lr, %t) <{beta1 = 9.000000e-01 : f64, beta2 = 9.500000e-01 : f64, eps = 1.0e-08 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 1, 0>, order = 0 : i32, weight_decay = 1.000000e-01 : f64}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}
