// RUN: zshard-opt %s --zshard-fuse-elementwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Tests the log-softmax of a cross-entropy, read by the loss (one element
// a row, tensor.extract) and by the backward: the log of each row's sum
// moves into an op over the rows, the loss's read is computed from the
// logits, the max and that log, and the log-softmax fuses into the
// backward: no [rows, classes] tensor is written for it.
// CHECK-LABEL: func.func @log_softmax_read_twice
// CHECK-SAME:    (%[[X:[a-z0-9]+]]: tensor<4x8xf32>{{.*}}, %[[MAX:[a-z0-9]+]]: tensor<4xf32>{{.*}}, %[[SUM:[a-z0-9]+]]: tensor<4xf32>
// CHECK:       %[[LOG:.*]] = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel"]
// CHECK-SAME:    ins(%[[SUM]] : tensor<4xf32>)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    math.log
// CHECK-NEXT:    linalg.yield
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["reduction"]
// CHECK:         %[[E:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}]
// CHECK-NEXT:    %[[M:.*]] = tensor.extract %[[MAX]][%{{.*}}]
// CHECK-NEXT:    %[[L:.*]] = tensor.extract %[[LOG]][%{{.*}}]
// CHECK-NEXT:    %[[S1:.*]] = arith.subf %[[E]], %[[M]]
// CHECK-NEXT:    arith.subf %[[S1]], %[[L]]
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel"]
// CHECK-SAME:    ins(%[[X]], %[[MAX]], %[[LOG]] :
// CHECK:         arith.subf
// CHECK-NEXT:    arith.subf
// CHECK-NEXT:    math.exp
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @log_softmax_read_twice(%x: tensor<4x8xf32>, %max: tensor<4xf32>, %sum: tensor<4xf32>, %t: tensor<4xindex>) -> (tensor<f32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %logp = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max, %sum : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32, %out: f32):
    %0 = arith.subf %v, %m : f32
    %1 = math.log %s : f32
    %2 = arith.subf %0, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%t : tensor<4xindex>) outs(%l0 : tensor<f32>) {
  ^bb0(%c: index, %acc: f32):
    %r = linalg.index 0 : index
    %p = tensor.extract %logp[%r, %c] : tensor<4x8xf32>
    %n = arith.subf %acc, %p : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %grad = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%logp : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%lp: f32, %out: f32):
    %0 = math.exp %lp : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  return %loss, %grad : tensor<f32>, tensor<4x8xf32>
}

// Tests what stays: math of an input read element for element (exp(x)),
// math of a broadcast input together with another input (powf(x, s)),
// and an element read of a producer whose body is not a few arith ops
// (it has math) or that reads the loop index.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:   linalg.generic
// CHECK:       tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32>
// CHECK:       tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32>
// CHECK:       tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32>
// CHECK-NOT:   tensor.extract
func.func @kept(%x: tensor<4x8xf32>, %s: tensor<4xf32>, %i: index, %j: index) -> (f32, f32, f32) {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %0 = math.exp %v : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %w: f32, %out: f32):
    %0 = math.powf %v, %w : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %out: f32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %0 = arith.addf %v, %kf : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %ea = tensor.extract %a[%i, %j] : tensor<4x8xf32>
  %eb = tensor.extract %b[%i, %j] : tensor<4x8xf32>
  %ec = tensor.extract %c[%i, %j] : tensor<4x8xf32>
  return %ea, %eb, %ec : f32, f32, f32
}

// Tests an element read through a transposing result map: loop index d0
// is the read's second index.
// CHECK-LABEL: func.func @transposed_read
// CHECK-SAME:    (%[[X:[a-z0-9]+]]: tensor<4x8xf32>{{.*}}, %[[I:[a-z0-9]+]]: index{{.*}}, %[[J:[a-z0-9]+]]: index
// CHECK:         %[[E:.*]] = tensor.extract %[[X]][%[[J]], %[[I]]]
// CHECK-NEXT:    arith.addf %[[E]], %[[E]]
// CHECK-NOT:   linalg.generic
func.func @transposed_read(%x: tensor<4x8xf32>, %i: index, %j: index) -> f32 {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%v: f32, %out: f32):
    %0 = arith.addf %v, %v : f32
    linalg.yield %0 : f32
  } -> tensor<8x4xf32>
  %r = tensor.extract %t[%i, %j] : tensor<8x4xf32>
  return %r : f32
}
