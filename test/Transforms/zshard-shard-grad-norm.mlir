// RUN: zshard-opt %S/Inputs/mlp2-clip-step.mlir \
// RUN:   --zshard-form-units="pattern=fc.<i> ranks=2 strategy=full_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=FULL
// RUN: zshard-opt %S/Inputs/mlp2-clip-step.mlir \
// RUN:   --zshard-form-units="pattern=fc.<i> ranks=4 replicas=2 strategy=hybrid_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=HYBRID
// RUN: zshard-opt %S/Inputs/mlp2-clip-step.mlir \
// RUN:   --zshard-form-units="pattern=fc.<i> ranks=2 strategy=no_shard" --zshard-shard --zshard-verify-contract \
// RUN:   | FileCheck %s --check-prefix=DDP
// RUN: not zshard-opt %s --zshard-form-units="pattern=fc ranks=2 strategy=full_shard" --zshard-shard 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADUSE

// Tests global gradient-norm clipping under sharding (Inputs/mlp2-clip-step.mlir
// has, as zshard-gen --clip-grad-norm writes, one sum of squares per
// gradient and one scalar op turning them into the clipping coefficient
// that every update reads).
// full_shard: each sum is rebuilt over this rank's part of the member in its
// unit's reduce-scattered gradient shard; the four partial sums (fc.0.weight,
// fc.0.bias, fc.1.weight, fc.1.bias) travel in one all_reduce sum over the
// shard axis, after the last of them; the coefficient and every sharded
// update come after it; no sum over a whole local gradient is left.
// FULL:       %[[R1:.*]] = zshard.reduce_scatter avg %{{.*}} unit @fc.1 : tensor<22xf32> -> tensor<11xf32>
// FULL:       %[[R0:.*]] = zshard.reduce_scatter avg %{{.*}} unit @fc.0 : tensor<30xf32> -> tensor<15xf32>
// FULL:       %[[P0:.*]] = tensor.extract_slice %[[R0]][%{{.*}}] [%{{.*}}] [1] : tensor<15xf32> to tensor<?xf32>
// FULL:       linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P0]] : tensor<?xf32>) outs(%{{.*}} : tensor<f32>)
// FULL:       %[[P1:.*]] = tensor.extract_slice %[[R1]][%{{.*}}] [%{{.*}}] [1] : tensor<11xf32> to tensor<?xf32>
// FULL:       linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P1]] : tensor<?xf32>) outs(%{{.*}} : tensor<f32>)
// FULL:       %[[ALL:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>
// FULL-NEXT:  %[[TOT:.*]] = zshard.all_reduce sum %[[ALL]] on @world[0] : tensor<4xf32>
// FULL-NOT:   zshard.all_reduce
// FULL:       tensor.extract %[[TOT]][%{{.*}}] : tensor<4xf32>
// FULL:       %[[COEF:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>)
// FULL:       arith.minimumf
// FULL:       zshard.adamw textbook {{.*}} grad_scale %[[COEF]] betas({{.*}} : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
// FULL-NOT:   iterator_types = ["reduction", "reduction"]} ins(%{{.*}} : tensor<4x6xf32>)
// FULL:       return

// hybrid_shard on 2x2: the partial sums are taken after the replicas'
// all_reduce (over the replica axis 0) and added up over the shard axis (1)
// only.
// HYBRID:     zshard.all_reduce avg %{{.*}} on @world[0] unit @fc.0 : tensor<15xf32>
// HYBRID:     %[[ALL:.*]] = tensor.from_elements {{.*}} : tensor<4xf32>
// HYBRID-NEXT: zshard.all_reduce sum %[[ALL]] on @world[1] : tensor<4xf32>

// no_shard: every rank holds the whole averaged gradient, so the sums read
// it and need no collective of their own.
// DDP:        %[[A0:.*]] = zshard.all_reduce avg %{{.*}} unit @fc.0 : tensor<30xf32>
// DDP:        %[[W0F:.*]] = tensor.extract_slice %[[A0]][0] [24] [1] : tensor<30xf32> to tensor<24xf32>
// DDP:        %[[W0:.*]] = tensor.expand_shape %[[W0F]]
// DDP:        linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[W0]] : tensor<4x6xf32>) outs(%{{.*}} : tensor<f32>)
// DDP-NOT:    zshard.all_reduce sum
// DDP:        arith.minimumf
// DDP:        return

// A gradient read by anything but its update and whole sums (here a max, not
// a sum) is refused rather than left reading the unreduced local gradient.
// BADUSE: error: loc("fc"): zshard-shard: the gradient of 'fc.weight' is read here, outside its optimizer update; besides the update only whole sums of a gradient (such as the terms of a global gradient norm) can be sharded
func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.weight", zshard.init = #zshard.init<zeros>},
    %m: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %v: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.weight.exp_avg_sq", zshard.param = "fc.weight", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.weight"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.weight.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %c1 = arith.constant 1.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %ge = tensor.empty() : tensor<4xf32> loc("fc")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%a: f32, %out: f32):
      %q = arith.mulf %a, %c1 : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %gmax = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%g : tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %mx = arith.maximumf %acc, %a : f32
      linalg.yield %mx : f32
    } -> tensor<f32> loc("fc")
  %w2, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t grad_scale %gmax
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.0)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %w2, %m2, %v2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}
