// RUN: zshard-opt %s | FileCheck %s
// RUN: zshard-opt %s | zshard-opt | FileCheck %s
// RUN: zshard-opt %s --mlir-print-op-generic | zshard-opt | FileCheck %s
// RUN: zshard-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Tests that zshard.adamw round-trips through its custom and generic forms,
// in both orders, with and without a master copy and a gradient scale, on
// static and dynamic shapes, and that its result types are its operands'.

// CHECK-LABEL: func.func @plain
// CHECK: %new_param, %new_exp_avg, %new_exp_avg_sq = zshard.adamw textbook %arg0, %arg1, %arg2, %arg3 lr %arg4 step %arg5 betas(9.000000e-01, 0.94999998807907104) eps(9.9999999392252903E-9) weight_decay(1.000000e-01) : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
// GENERIC: "zshard.adamw"(%{{.*}}) <{beta1 = 9.000000e-01 : f64, beta2 = 0.94999998807907104 : f64, eps = 9.9999999392252903E-9 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 1, 0>, order = 0 : i32, weight_decay = 1.000000e-01 : f64}> : (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<f32>, tensor<f32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>)
func.func @plain(%w: tensor<4x6xf32>, %g: tensor<4x6xf32>, %m: tensor<4x6xf32>, %v: tensor<4x6xf32>,
                 %lr: tensor<f32>, %t: tensor<f32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %p2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.94999998807907104) eps(9.9999999392252903E-9) weight_decay(0.1)
      : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
  return %p2, %m2, %v2 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

// CHECK-LABEL: func.func @mixed
// CHECK: %new_param, %new_exp_avg, %new_exp_avg_sq, %new_master = zshard.adamw torch %arg0, %arg1, %arg2, %arg3 master %arg4 : tensor<8xf32> lr %arg5 step %arg6 grad_scale %arg7 betas(8.000000e-01, 0.99899999999999999) eps(9.9999999999999995E-7) weight_decay(0.000000e+00) : tensor<8xbf16>, tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1>, order = 1 : i32
// GENERIC-SAME: -> (tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
func.func @mixed(%w: tensor<8xbf16>, %g: tensor<8xbf16>, %m: tensor<8xf32>, %v: tensor<8xf32>,
                 %master: tensor<8xf32>, %lr: tensor<f32>, %t: tensor<f32>, %scale: tensor<f32>)
    -> (tensor<8xbf16>, tensor<8xf32>) {
  %p2, %m2, %v2, %w2 = zshard.adamw torch %w, %g, %m, %v master %master : tensor<8xf32>
      lr %lr step %t grad_scale %scale betas(0.8, 0.999) eps(1.0e-06) weight_decay(0.0)
      : tensor<8xbf16>, tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>
  return %p2, %w2 : tensor<8xbf16>, tensor<8xf32>
}

// CHECK-LABEL: func.func @piece
// CHECK: zshard.adamw textbook {{.*}} : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
func.func @piece(%w: tensor<?xf32>, %g: tensor<?xf32>, %m: tensor<?xf32>, %v: tensor<?xf32>,
                 %lr: tensor<f32>, %t: tensor<f32>) -> tensor<?xf32> {
  %p2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
  return %p2 : tensor<?xf32>
}
