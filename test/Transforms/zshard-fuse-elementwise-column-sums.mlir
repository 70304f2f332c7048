// RUN: zshard-opt %s --split-input-file --zshard-fuse-elementwise | FileCheck %s
// RUN: zshard-opt %s --split-input-file --zshard-fuse-elementwise=column-sums=false | FileCheck %s --check-prefix=OFF

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col3 = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Tests that the bias gradient of a Linear whose output gradient comes from
// an elementwise op (a GELU's backward: here dy * h + bias, over [batch, seq,
// features]) is computed by that op: one generic runs the op's loops with
// the leading two as reductions, writes the gradient (which the product
// still reads, through its reshape) and sums each feature's column. The
// sum's init, created after the producer, is moved before it.
// CHECK-LABEL: func.func @bias_gradient
// CHECK:       %[[ZERO:.*]] = linalg.fill
// CHECK:       %[[FUSED:.*]]:2 = linalg.generic
// CHECK-SAME:    (d0, d1, d2) -> (d2)>], iterator_types = ["reduction", "reduction", "parallel"]
// CHECK-SAME:    outs(%{{.*}}, %[[ZERO]] : tensor<2x3x4xf32>, tensor<4xf32>)
// CHECK:         %[[MUL:.*]] = arith.mulf
// CHECK:         %[[GRAD:.*]] = arith.addf %[[MUL]],
// CHECK:         %[[SUM:.*]] = arith.addf {{.*}}%[[GRAD]]
// CHECK:         linalg.yield %[[GRAD]], %[[SUM]]
// CHECK:       %[[FLAT:.*]] = tensor.collapse_shape %[[FUSED]]#0
// CHECK:       linalg.matmul ins(%[[FLAT]],
// CHECK-NOT:   linalg.generic
// CHECK:       return %{{.*}}, %[[FUSED]]#1
// OFF-LABEL:   func.func @bias_gradient
// OFF:         iterator_types = ["parallel", "parallel", "parallel"]
// OFF:         iterator_types = ["reduction", "parallel"]
func.func @bias_gradient(%dy: tensor<2x3x4xf32>, %h: tensor<2x3x4xf32>,
                         %bias: tensor<4xf32>, %w: tensor<4x5xf32>)
    -> (tensor<6x5xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3, #col3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dy, %h, %bias : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>)
      outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  %flat = tensor.collapse_shape %g [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<6x5xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<6x5xf32>) -> tensor<6x5xf32>
  %dx = linalg.matmul ins(%flat, %w : tensor<6x4xf32>, tensor<4x5xf32>)
      outs(%pz : tensor<6x5xf32>) -> tensor<6x5xf32>
  %se = tensor.empty() : tensor<4xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<4xf32>) -> tensor<4xf32>
  %db = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%flat : tensor<6x4xf32>) outs(%sz : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %dx, %db : tensor<6x5xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// Tests the sums that stay as they are: a row sum, a column maximum, a
// column sum of a product (not elementwise), of an elementwise op whose
// last dimension is not the sum's columns (its elements reshaped to rows of
// 6), and one whose init is computed from the op's result.
// CHECK-LABEL: func.func @left_alone
// CHECK:       iterator_types = ["parallel", "parallel"]
// CHECK:       iterator_types = ["parallel", "reduction"]
// CHECK:       iterator_types = ["reduction", "parallel"]
// CHECK:         arith.maximumf
// CHECK:       linalg.matmul
// CHECK:       iterator_types = ["reduction", "parallel"]
// CHECK:       iterator_types = ["reduction", "parallel"]
// CHECK:       iterator_types = ["parallel"]
// CHECK:       iterator_types = ["reduction", "parallel"]
// CHECK-NOT:   linalg.generic
func.func @left_alone(%x: tensor<4x6xf32>, %w: tensor<6x6xf32>)
    -> (tensor<4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<4xf32>, tensor<6xf32>) {
  %e = tensor.empty() : tensor<4x6xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<4xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %rows = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%g : tensor<4x6xf32>) outs(%rz : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %ce = tensor.empty() : tensor<6xf32>
  %cz = linalg.fill ins(%zero : f32) outs(%ce : tensor<6xf32>) -> tensor<6xf32>
  %max = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%g : tensor<4x6xf32>) outs(%cz : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.maximumf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x6xf32>)
      outs(%pz : tensor<4x6xf32>) -> tensor<4x6xf32>
  %psum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%p : tensor<4x6xf32>) outs(%cz : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %flat = tensor.collapse_shape %g [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %other = tensor.expand_shape %flat [[0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %osum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%other : tensor<6x4xf32>) outs(%oz : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %first = tensor.extract_slice %g[0, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
  %start = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
      ins(%first : tensor<6xf32>) outs(%ce : tensor<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<6xf32>
  %late = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%g : tensor<4x6xf32>) outs(%start : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  return %rows, %max, %psum, %osum, %late : tensor<4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<4xf32>, tensor<6xf32>
}
