// RUN: zshard-opt %s | FileCheck %s
// RUN: zshard-opt %s --mlir-print-op-generic | zshard-opt | FileCheck %s
// RUN: zshard-opt %s --canonicalize | FileCheck %s --check-prefix=KEPT

// Tests that zshard.batch_mean round-trips on float tensors of any shape,
// and that canonicalization keeps it (its value depends on the other
// slices of the batch, so it never folds to its input).
// CHECK-LABEL: func.func @means(
// CHECK:       zshard.batch_mean %{{.*}} : tensor<f32>
// CHECK:       zshard.batch_mean %{{.*}} : tensor<3xbf16>
// KEPT-LABEL:  func.func @means(
// KEPT:        %[[M:.*]] = zshard.batch_mean %{{.*}} : tensor<f32>
// KEPT:        return %[[M]]
func.func @means(%c: tensor<f32>, %v: tensor<3xbf16>) -> (tensor<f32>, tensor<3xbf16>) {
  %m = zshard.batch_mean %c : tensor<f32>
  %n = zshard.batch_mean %v : tensor<3xbf16>
  return %m, %n : tensor<f32>, tensor<3xbf16>
}
