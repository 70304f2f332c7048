func.func @train_step(
    %w: tensor<4x2xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.0.weight", zshard.init = #zshard.init<normal(0, 0.02)>},
    %m: tensor<4x2xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.0.weight.exp_avg", zshard.param = "fc.0.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<8x4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4x2xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.0.weight"},
        tensor<4x2xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.0.weight.exp_avg"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() {zshard.path = "fc.0"} : tensor<8x2xf32>
  %z = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul {zshard.path = "fc.0"} ins(%x, %w : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<8x2xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %c1 = arith.constant 1.0 : f32
  %oe = tensor.empty() : tensor<8x2xf32>
  %ones = linalg.fill ins(%c1 : f32) outs(%oe : tensor<8x2xf32>) -> tensor<8x2xf32>
  %ge = tensor.empty() {zshard.path = "fc.0"} : tensor<4x2xf32>
  %gz = linalg.fill {zshard.path = "fc.0"} ins(%c0 : f32) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {zshard.path = "fc.0"}
    ins(%x, %ones : tensor<8x4xf32>, tensor<8x2xf32>) outs(%gz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = linalg.add {zshard.path = "fc.0"} ins(%m, %g : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) -> tensor<4x2xf32>
  %lrv = tensor.extract %lr[] {zshard.path = "fc.0"} : tensor<f32>
  %w2 = linalg.generic {zshard.path = "fc.0", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%w, %m2 : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ge : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %p = arith.mulf %lrv, %b : f32
      %q = arith.subf %a, %p : f32
      linalg.yield %q : f32
    } -> tensor<4x2xf32>
  return %loss, %w2, %m2 : tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>
}
