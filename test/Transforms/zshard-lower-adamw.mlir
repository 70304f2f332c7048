// RUN: zshard-opt %s --split-input-file --zshard-lower-adamw --mlir-print-debuginfo=false | FileCheck %s

// Tests that zshard-lower-adamw writes each zshard.adamw as a 0-d generic of
// its bias corrections and one fused elementwise generic, with the
// floating-point operations in the op's order: `textbook` as docs/models.md
// writes AdamW (what zshard-gen's reference computes), `torch` as
// torch.optim.AdamW's single-tensor step (what zshard-export's does).

// The textbook order, with weight decay: bc1 = 1 - beta1^t, bc2 = 1 - beta2^t
// in f32; p = p - lr * wd * p; m = beta1 * m + (1 - beta1) * g with
// 1 - beta1 rounded from the f32 beta1 (0.100000024); v = beta2 * v +
// (1 - beta2) * g * g; p = p - lr * (m / bc1) / (sqrt(v / bc2) + eps).
// CHECK-LABEL: func.func @textbook(
// CHECK:      %[[BC:.*]]:2 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%arg5 : tensor<f32>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>) {
// CHECK-NEXT: ^bb0(%[[T:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[B1:.*]] = arith.constant 0.899999976 : f32
// CHECK-NEXT:   %[[P1:.*]] = math.powf %[[B1]], %[[T]] : f32
// CHECK-NEXT:   %[[BC1:.*]] = arith.subf %[[ONE]], %[[P1]] : f32
// CHECK-NEXT:   %[[B2:.*]] = arith.constant 0.949999988 : f32
// CHECK-NEXT:   %[[P2:.*]] = math.powf %[[B2]], %[[T]] : f32
// CHECK-NEXT:   %[[BC2:.*]] = arith.subf %[[ONE]], %[[P2]] : f32
// CHECK-NEXT:   linalg.yield %[[BC1]], %[[BC2]] : f32, f32
// CHECK:      %[[U:.*]]:3 = linalg.generic {indexing_maps = [{{.*}}, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, {{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1, %arg2, %arg3, %arg4, %[[BC]]#0, %[[BC]]#1 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<f32>, tensor<f32>, tensor<f32>) outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
// CHECK-NEXT: ^bb0(%[[P:[^:]*]]: f32, %[[G:[^:]*]]: f32, %[[M:[^:]*]]: f32, %[[V:[^:]*]]: f32, %[[LR:[^:]*]]: f32, %[[C1:[^:]*]]: f32, %[[C2:[^:]*]]: f32,
// CHECK-NEXT:   %[[WD:.*]] = arith.constant 1.000000e-01 : f32
// CHECK-NEXT:   %[[LRWD:.*]] = arith.mulf %[[LR]], %[[WD]] : f32
// CHECK-NEXT:   %[[DEC:.*]] = arith.mulf %[[LRWD]], %[[P]] : f32
// CHECK-NEXT:   %[[PD:.*]] = arith.subf %[[P]], %[[DEC]] : f32
// CHECK-NEXT:   %[[B1:.*]] = arith.constant 0.899999976 : f32
// CHECK-NEXT:   %[[B1M:.*]] = arith.mulf %[[B1]], %[[M]] : f32
// CHECK-NEXT:   %[[W1:.*]] = arith.constant 0.100000024 : f32
// CHECK-NEXT:   %[[W1G:.*]] = arith.mulf %[[W1]], %[[G]] : f32
// CHECK-NEXT:   %[[M2:.*]] = arith.addf %[[B1M]], %[[W1G]] : f32
// CHECK-NEXT:   %[[B2:.*]] = arith.constant 0.949999988 : f32
// CHECK-NEXT:   %[[B2V:.*]] = arith.mulf %[[B2]], %[[V]] : f32
// CHECK-NEXT:   %[[W2:.*]] = arith.constant 0.0500000119 : f32
// CHECK-NEXT:   %[[W2G:.*]] = arith.mulf %[[W2]], %[[G]] : f32
// CHECK-NEXT:   %[[W2GG:.*]] = arith.mulf %[[W2G]], %[[G]] : f32
// CHECK-NEXT:   %[[V2:.*]] = arith.addf %[[B2V]], %[[W2GG]] : f32
// CHECK-NEXT:   %[[VH:.*]] = arith.divf %[[V2]], %[[C2]] : f32
// CHECK-NEXT:   %[[SQ:.*]] = math.sqrt %[[VH]] : f32
// CHECK-NEXT:   %[[EPS:.*]] = arith.constant 9.99999993E-9 : f32
// CHECK-NEXT:   %[[DEN:.*]] = arith.addf %[[SQ]], %[[EPS]] : f32
// CHECK-NEXT:   %[[MH:.*]] = arith.divf %[[M2]], %[[C1]] : f32
// CHECK-NEXT:   %[[STEP:.*]] = arith.mulf %[[LR]], %[[MH]] : f32
// CHECK-NEXT:   %[[UPD:.*]] = arith.divf %[[STEP]], %[[DEN]] : f32
// CHECK-NEXT:   %[[P2:.*]] = arith.subf %[[PD]], %[[UPD]] : f32
// CHECK-NEXT:   linalg.yield %[[P2]], %[[M2]], %[[V2]] : f32, f32, f32
// CHECK:      return %[[U]]#0, %[[U]]#1, %[[U]]#2
func.func @textbook(%w: tensor<4x6xf32>, %g: tensor<4x6xf32>, %m: tensor<4x6xf32>, %v: tensor<4x6xf32>,
                    %lr: tensor<f32>, %t: tensor<f32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %p2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
  return %p2, %m2, %v2 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// No weight decay (weight_decay 0: not even p - 0 * p), and the gradient
// scaled by grad_scale before anything else.
// CHECK-LABEL: func.func @scaled(
// CHECK:      linalg.generic {{.*}} ins(%arg0, %arg1, %arg2, %arg3, %arg4, %{{.*}}#0, %{{.*}}#1, %arg6 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[P:[^:]*]]: f32, %[[G:[^:]*]]: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %[[S:[^:]*]]: f32,
// CHECK-NEXT:   %[[GS:.*]] = arith.mulf %[[G]], %[[S]] : f32
// CHECK-NOT:    arith.constant 1.000000e-01
// CHECK:        arith.mulf %{{.*}}, %[[GS]] : f32
// CHECK:        arith.subf %[[P]], %{{.*}} : f32
// CHECK-NEXT:   linalg.yield
func.func @scaled(%w: tensor<3xf32>, %g: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>,
                  %lr: tensor<f32>, %t: tensor<f32>, %s: tensor<f32>) -> tensor<3xf32> {
  %p2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t grad_scale %s
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.0)
      : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return %p2 : tensor<3xf32>
}

// -----

// The torch order: lr / bc1 and sqrt(bc2) in the 0-d generic; p = p * (1 -
// lr * wd); m = m + (1 - beta1) * (g - m) with 1 - beta1 rounded from f64
// (0.2 for beta1 0.8, where 1 - 0.8 in f32 is 0.199999988); v = v * beta2 +
// (1 - beta2) * g * g; p = p + (-step_size) * m / (sqrt(v) / sqrt(bc2) + eps).
// CHECK-LABEL: func.func @torch(
// CHECK:      %[[SC:.*]]:2 = linalg.generic {{.*}} iterator_types = []} ins(%arg4, %arg5 : tensor<f32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[LR:[^:]*]]: f32, %[[T:[^:]*]]: f32,
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[B1:.*]] = arith.constant 8.000000e-01 : f32
// CHECK-NEXT:   %[[P1:.*]] = math.powf %[[B1]], %[[T]] : f32
// CHECK-NEXT:   %[[BC1:.*]] = arith.subf %[[ONE]], %[[P1]] : f32
// CHECK-NEXT:   %[[B2:.*]] = arith.constant 9.990000e-01 : f32
// CHECK-NEXT:   %[[P2:.*]] = math.powf %[[B2]], %[[T]] : f32
// CHECK-NEXT:   %[[BC2:.*]] = arith.subf %[[ONE]], %[[P2]] : f32
// CHECK-NEXT:   %[[SS:.*]] = arith.divf %[[LR]], %[[BC1]] : f32
// CHECK-NEXT:   %[[SQ2:.*]] = math.sqrt %[[BC2]] : f32
// CHECK-NEXT:   linalg.yield %[[SS]], %[[SQ2]] : f32, f32
// CHECK:      linalg.generic {{.*}} ins(%arg0, %arg1, %arg2, %arg3, %arg4, %[[SC]]#0, %[[SC]]#1 :
// CHECK-NEXT: ^bb0(%[[P:[^:]*]]: f32, %[[G:[^:]*]]: f32, %[[M:[^:]*]]: f32, %[[V:[^:]*]]: f32, %[[LR:[^:]*]]: f32, %[[C1:[^:]*]]: f32, %[[C2:[^:]*]]: f32,
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[WD:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   %[[LRWD:.*]] = arith.mulf %[[LR]], %[[WD]] : f32
// CHECK-NEXT:   %[[KEEP:.*]] = arith.subf %[[ONE]], %[[LRWD]] : f32
// CHECK-NEXT:   %[[PD:.*]] = arith.mulf %[[P]], %[[KEEP]] : f32
// CHECK-NEXT:   %[[W1:.*]] = arith.constant 2.000000e-01 : f32
// CHECK-NEXT:   %[[GM:.*]] = arith.subf %[[G]], %[[M]] : f32
// CHECK-NEXT:   %[[W1GM:.*]] = arith.mulf %[[W1]], %[[GM]] : f32
// CHECK-NEXT:   %[[M2:.*]] = arith.addf %[[M]], %[[W1GM]] : f32
// CHECK-NEXT:   %[[B2:.*]] = arith.constant 9.990000e-01 : f32
// CHECK-NEXT:   %[[VB2:.*]] = arith.mulf %[[V]], %[[B2]] : f32
// CHECK-NEXT:   %[[W2:.*]] = arith.constant 1.000000e-03 : f32
// CHECK-NEXT:   %[[W2G:.*]] = arith.mulf %[[W2]], %[[G]] : f32
// CHECK-NEXT:   %[[W2GG:.*]] = arith.mulf %[[W2G]], %[[G]] : f32
// CHECK-NEXT:   %[[V2:.*]] = arith.addf %[[VB2]], %[[W2GG]] : f32
// CHECK-NEXT:   %[[SQ:.*]] = math.sqrt %[[V2]] : f32
// CHECK-NEXT:   %[[SQD:.*]] = arith.divf %[[SQ]], %[[C2]] : f32
// CHECK-NEXT:   %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK-NEXT:   %[[DEN:.*]] = arith.addf %[[SQD]], %[[EPS]] : f32
// CHECK-NEXT:   %[[NSS:.*]] = arith.negf %[[C1]] : f32
// CHECK-NEXT:   %[[NUM:.*]] = arith.mulf %[[NSS]], %[[M2]] : f32
// CHECK-NEXT:   %[[UPD:.*]] = arith.divf %[[NUM]], %[[DEN]] : f32
// CHECK-NEXT:   %[[P2:.*]] = arith.addf %[[PD]], %[[UPD]] : f32
// CHECK-NEXT:   linalg.yield %[[P2]], %[[M2]], %[[V2]] : f32, f32, f32
func.func @torch(%w: tensor<5x2xf32>, %g: tensor<5x2xf32>, %m: tensor<5x2xf32>, %v: tensor<5x2xf32>,
                 %lr: tensor<f32>, %t: tensor<f32>) -> tensor<5x2xf32> {
  %p2, %m2, %v2 = zshard.adamw torch %w, %g, %m, %v lr %lr step %t
      betas(0.8, 0.999) eps(1.0e-06) weight_decay(0.5)
      : tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xf32>
  return %p2 : tensor<5x2xf32>
}

// -----

// With a master copy: the update reads the master (not the bf16 parameter)
// and the bf16 gradient extended to f32; it writes the new master, the
// moments and last the new master rounded to bf16, which is new_param.
// CHECK-LABEL: func.func @master(
// CHECK:      %[[U:.*]]:4 = linalg.generic {{.*}} ins(%arg4, %arg1, %arg2, %arg3, %arg5, %{{.*}}#0, %{{.*}}#1 : tensor<8xf32>, tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<f32>, tensor<f32>) outs(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>)
// CHECK-NEXT: ^bb0(%{{[^:]*}}: f32, %[[G:[^:]*]]: bf16,
// CHECK-NEXT:   arith.extf %[[G]] : bf16 to f32
// CHECK:        %[[R:.*]] = arith.truncf %[[NEW:.*]] : f32 to bf16
// CHECK-NEXT:   linalg.yield %[[NEW]], %{{.*}}, %{{.*}}, %[[R]] : f32, f32, f32, bf16
// CHECK:      return %[[U]]#3, %[[U]]#1, %[[U]]#2, %[[U]]#0 : tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
func.func @master(%w: tensor<8xbf16>, %g: tensor<8xbf16>, %m: tensor<8xf32>, %v: tensor<8xf32>,
                  %master: tensor<8xf32>, %lr: tensor<f32>, %t: tensor<f32>)
    -> (tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %p2, %m2, %v2, %w2 = zshard.adamw textbook %w, %g, %m, %v master %master : tensor<8xf32>
      lr %lr step %t betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<8xbf16>, tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>
  return %p2, %m2, %v2, %w2 : tensor<8xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A piece of a shard (dynamic size, as zshard-shard rebuilds updates): the
// outputs take the size of the parameter.
// CHECK-LABEL: func.func @piece(
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[N:.*]] = tensor.dim %arg0, %[[C0]] : tensor<?xf32>
// CHECK-NEXT: tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel"]}
// CHECK:      } -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
func.func @piece(%w: tensor<?xf32>, %g: tensor<?xf32>, %m: tensor<?xf32>, %v: tensor<?xf32>,
                 %lr: tensor<f32>, %t: tensor<f32>) -> tensor<?xf32> {
  %p2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
  return %p2 : tensor<?xf32>
}
