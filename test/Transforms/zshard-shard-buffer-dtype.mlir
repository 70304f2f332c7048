// RUN: zshard-opt %s --zshard-shard | FileCheck %s
// RUN: sed -e 's/ buffer(bf16)//' -e 's/ buffer(f16)//' %s | zshard-opt --zshard-shard | FileCheck %s --check-prefix=NONE
// RUN: zshard-opt %s --zshard-shard --zshard-verify-contract -o /dev/null

// FSDP's MixedPrecision(buffer_dtype=...) as the units' buffer(T): each
// buffer is rounded once to the buffer type of the unit that owns it
// (BufferOwners: the unit of the innermost module containing the buffer,
// else the outermost unit), before its first use, and read back in its own
// type by every use. @h.0 (module h.0) rounds to bf16, @root (its one
// member head.w: module head) to f16:
//   h.0.mix        f32  -> @h.0, bf16: truncf and extf
//   h.0.scale      bf16 -> @h.0, bf16: its own type, unchanged
//   rope.inv_freq  f32  -> no unit's module holds rope: the outermost,
//                          @root (depth 1 < 2), f16: truncf and extf
//   head.bias      bf16 -> @root, f16: neither holds the other, through f32
// Without buffer(T) (NONE) no buffer is rounded.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME:    %[[MIX:[a-z0-9]+]]: tensor<4xf32> {{{[^}]*}}zshard.name = "h.0.mix"
// CHECK-SAME:    %[[SC:[a-z0-9]+]]: tensor<4xbf16> {{{[^}]*}}zshard.name = "h.0.scale"
// CHECK-SAME:    %[[INV:[a-z0-9]+]]: tensor<4xf32> {{{[^}]*}}zshard.name = "rope.inv_freq"
// CHECK-SAME:    %[[BIAS:[a-z0-9]+]]: tensor<4xbf16> {{{[^}]*}}zshard.name = "head.bias"
// CHECK-DAG:     %[[MIXR:.+]] = arith.truncf %[[MIX]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-DAG:     %[[MIXE:.+]] = arith.extf %[[MIXR]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-DAG:     %[[INVR:.+]] = arith.truncf %[[INV]] : tensor<4xf32> to tensor<4xf16>
// CHECK-DAG:     %[[INVE:.+]] = arith.extf %[[INVR]] : tensor<4xf16> to tensor<4xf32>
// CHECK-DAG:     %[[B32:.+]] = arith.extf %[[BIAS]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-DAG:     %[[B16:.+]] = arith.truncf %[[B32]] : tensor<4xf32> to tensor<4xf16>
// CHECK-DAG:     %[[B16E:.+]] = arith.extf %[[B16]] : tensor<4xf16> to tensor<4xf32>
// CHECK-DAG:     %[[BIASR:.+]] = arith.truncf %[[B16E]] : tensor<4xf32> to tensor<4xbf16>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[MIXE]], %[[SC]], %[[INVE]], %[[BIASR]], %{{.*}} :
// CHECK:         linalg.generic {{.*}} ins(%[[MIXE]], %[[SC]], %{{.*}} :
// CHECK:         linalg.generic {{.*}} ins(%[[INVE]], %[[BIASR]], %{{.*}} :
// CHECK-NOT:     arith.truncf %[[SC]]
// CHECK-NOT:     %[[MIX]]
// CHECK-NOT:     %[[INV]]
// CHECK:         return

// NONE-LABEL: func.func @train_step(
// NONE-NOT:    arith.truncf
// NONE-NOT:    arith.extf {{.*}} : tensor<4xbf16> to tensor<4xf32>
// NONE:        return

shard.grid @world(shape = 2)
zshard.unit @h.0 on @world[0] full_shard padded(4) param(f32) reduce(f32) buffer(bf16) [
  "h.0.w" : 4 at 0
]
zshard.unit @root on @world[0] full_shard padded(4) param(f32) reduce(f32) buffer(f16) [
  "head.w" : 4 at 0
]

func.func @train_step(
    %w: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "h.0.w", zshard.init = #zshard.init<zeros>, zshard.unit = @h.0},
    %hw: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "head.w", zshard.init = #zshard.init<zeros>, zshard.unit = @root},
    %mix: tensor<4xf32> {zshard.role = #zshard.role<buffer>, zshard.name = "h.0.mix", zshard.init = #zshard.init<ones>, zshard.persistent = true},
    %sc: tensor<4xbf16> {zshard.role = #zshard.role<buffer>, zshard.name = "h.0.scale", zshard.init = #zshard.init<ones>, zshard.persistent = true},
    %inv: tensor<4xf32> {zshard.role = #zshard.role<buffer>, zshard.name = "rope.inv_freq", zshard.init = #zshard.init<ones>, zshard.persistent = false},
    %bias: tensor<4xbf16> {zshard.role = #zshard.role<buffer>, zshard.name = "head.bias", zshard.init = #zshard.init<zeros>, zshard.persistent = true},
    %wm: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "h.0.w.exp_avg", zshard.param = "h.0.w", zshard.init = #zshard.init<zeros>},
    %wv: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "h.0.w.exp_avg_sq", zshard.param = "h.0.w", zshard.init = #zshard.init<zeros>},
    %hm: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "head.w.exp_avg", zshard.param = "head.w", zshard.init = #zshard.init<zeros>},
    %hv: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "head.w.exp_avg_sq", zshard.param = "head.w", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "h.0.w"},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "head.w"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "h.0.w.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "h.0.w.exp_avg_sq"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "head.w.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "head.w.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  // loss = sum_i w*(mix + scale)*x + hw*(inv + bias)*x
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%w, %hw, %mix, %sc, %inv, %bias, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %m: f32, %s16: bf16, %i: f32, %k16: bf16, %xi: f32, %acc: f32):
      %s = arith.extf %s16 : bf16 to f32
      %k = arith.extf %k16 : bf16 to f32
      %ms = arith.addf %m, %s : f32
      %ik = arith.addf %i, %k : f32
      %p = arith.mulf %a, %ms : f32
      %q = arith.mulf %b, %ik : f32
      %pq = arith.addf %p, %q : f32
      %r = arith.mulf %pq, %xi : f32
      %sum = arith.addf %acc, %r : f32
      linalg.yield %sum : f32
    } -> tensor<f32> loc("h.0")
  %ge = tensor.empty() : tensor<4xf32> loc("h.0")
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%mix, %sc, %x : tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) outs(%ge : tensor<4xf32>) {
    ^bb0(%m: f32, %s16: bf16, %xi: f32, %out: f32):
      %s = arith.extf %s16 : bf16 to f32
      %ms = arith.addf %m, %s : f32
      %r = arith.mulf %ms, %xi : f32
      linalg.yield %r : f32
    } -> tensor<4xf32> loc("h.0")
  %he = tensor.empty() : tensor<4xf32> loc("head")
  %hg = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%inv, %bias, %x : tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) outs(%he : tensor<4xf32>) {
    ^bb0(%i: f32, %k16: bf16, %xi: f32, %out: f32):
      %k = arith.extf %k16 : bf16 to f32
      %ik = arith.addf %i, %k : f32
      %r = arith.mulf %ik, %xi : f32
      linalg.yield %r : f32
    } -> tensor<4xf32> loc("head")
  %w2, %wm2, %wv2 = zshard.adamw textbook %w, %g, %wm, %wv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("h.0")
  %hw2, %hm2, %hv2 = zshard.adamw textbook %hw, %hg, %hm, %hv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("head")
  return %loss, %w2, %hw2, %wm2, %wv2, %hm2, %hv2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("")
}
