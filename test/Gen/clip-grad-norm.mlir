// Tests `zshard-gen --clip-grad-norm`: one sum of squares per gradient (at
// the parameter's module path), one scalar op turning them into
// min(1, max_norm / (sqrt(total) + 1e-6)), and every AdamW update scaling its
// gradient by that coefficient before anything else, as
// torch.nn.utils.clip_grad_norm_ followed by torch.optim.AdamW.

// RUN: zshard-gen mlp --widths 4,3 --batch 2 --clip-grad-norm 0.5 | zshard-opt --zshard-verify-contract --zshard-lower-adamw --mlir-print-debuginfo=false | FileCheck %s
// RUN: zshard-gen mlp --widths 4,3 --batch 2 --clip-grad-norm 0.5 | zshard-opt --mlir-print-debuginfo=false | FileCheck %s --check-prefix=OP
// RUN: zshard-gen mlp --widths 4,3 --batch 2 | zshard-opt --mlir-print-debuginfo=false | FileCheck %s --check-prefix=OFF

// CHECK:      %[[W:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%[[GW:.*]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT:   %[[SQ:.*]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK-NEXT:   arith.addf %[[OUT]], %[[SQ]] : f32
// CHECK:      %[[B:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[GB:.*]] : tensor<3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:      %[[COEF:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%[[W]], %[[B]] : tensor<f32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[T:.*]] = arith.addf %[[A]], %[[C]] : f32
// CHECK-NEXT:   %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK-NEXT:   %[[N:.*]] = math.sqrt %[[T]] : f32
// CHECK-NEXT:   %[[D:.*]] = arith.addf %[[N]], %[[EPS]] : f32
// CHECK-NEXT:   %[[MAX:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   %[[R:.*]] = arith.divf %[[MAX]], %[[D]] : f32
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[M:.*]] = arith.minimumf %[[ONE]], %[[R]] : f32
// CHECK-NEXT:   linalg.yield %[[M]] : f32
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[GW]], %arg2, %arg4, %arg8, %{{.*}}, %{{.*}}, %[[COEF]] :
// CHECK-NEXT: ^bb0(%{{[a-z0-9_]+}}: f32, %[[G:[a-z0-9_]+]]: f32, %{{[a-z0-9_]+}}: f32, %{{[a-z0-9_]+}}: f32, %{{[a-z0-9_]+}}: f32, %{{[a-z0-9_]+}}: f32, %{{[a-z0-9_]+}}: f32, %[[S:[a-z0-9_]+]]: f32,
// CHECK-NEXT:   arith.mulf %[[G]], %[[S]] : f32
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%arg1, %[[GB]], %arg3, %arg5, %arg8, %{{.*}}, %{{.*}}, %[[COEF]] :

// OFF-NOT: arith.minimumf

// The coefficient is every update's grad_scale.
// OP: %[[COEF:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
// OP: zshard.adamw textbook %arg0, %{{.*}}, %arg2, %arg4 lr %arg8 step %arg9 grad_scale %[[COEF]] betas
// OP: zshard.adamw textbook %arg1, %{{.*}}, %arg3, %arg5 lr %arg8 step %arg9 grad_scale %[[COEF]] betas
