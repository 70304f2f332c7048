// RUN: not zshard-opt %s --zshard-form-units="pattern=fc.<i" 2>&1 | FileCheck %s --check-prefix=PATTERN --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="pattern=h.<i>,fc..a" 2>&1 | FileCheck %s --check-prefix=DOTS --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="pattern=," 2>&1 | FileCheck %s --check-prefix=NOPATTERN --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="policy=size min-params=0" 2>&1 | FileCheck %s --check-prefix=MINPARAMS --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="policy=explicit" 2>&1 | FileCheck %s --check-prefix=NOUNITS --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="policy=explicit units=abc" 2>&1 | FileCheck %s --check-prefix=FORM --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="policy=explicit units=u=fc.a;u=fc.b" 2>&1 | FileCheck %s --check-prefix=TWICE --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="pattern=fc" 2>&1 | FileCheck %s --check-prefix=MIX --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="strategy=zero1 no-reshard=fc" 2>&1 | FileCheck %s --check-prefix=NORESHARD --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="ranks=0" 2>&1 | FileCheck %s --check-prefix=RANKS --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="ranks=4 replicas=2 strategy=full_shard" 2>&1 | FileCheck %s --check-prefix=REPLICAS --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="reduce-type=f64" 2>&1 | FileCheck %s --check-prefix=REDUCE --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="reduce-type=own" 2>&1 | FileCheck %s --check-prefix=REDUCE-OWN --implicit-check-not=error:
// RUN: not zshard-opt %s --zshard-form-units="policy=size layer-classes=X" 2>&1 | FileCheck %s --check-prefix=CLASSES --implicit-check-not=error:

// One case for each diagnostic of zshard-form-units that its options or
// the step's parameters cause (lib/Transforms/FormUnits.cpp), on one
// hand-written step of two parameters, fc.a in f32 and fc.b in bf16. The
// module-class errors are in zshard-form-units-classes.mlir, the unknown
// strategy, policy and parameter ones in zshard-form-units.mlir.
// PATTERN: error: zshard-form-units: bad module path pattern 'fc.<i' (dotted names, indices and <i>, such as h.<i>)
// DOTS: error: zshard-form-units: bad module path pattern 'fc..a' (dotted names, indices and <i>, such as h.<i>)
// NOPATTERN: error: zshard-form-units: the transformer policy needs a pattern
// MINPARAMS: error: zshard-form-units: min-params must be positive, got 0
// NOUNITS: error: zshard-form-units: the explicit policy needs units="name=param,param;..."
// FORM: error: zshard-form-units: 'abc' is not of the form name=param,param
// TWICE: error: zshard-form-units: unit 'u' is listed twice
// MIX: error: zshard-form-units: unit 'fc' would mix element types 'f32' and 'bf16'
// NORESHARD: error: zshard-form-units: no-reshard applies to full_shard and hybrid_shard, not zero1
// RANKS: error: zshard-form-units: ranks must be at least 1, got 0
// REPLICAS: error: zshard-form-units: replicas applies only to the hybrid strategies
// REDUCE: zshard-opt: for the --reduce-type option: 'f64' is not one of f32, bf16, f16
// Gradients are reduced in a type: "own" is buffer-type's alone.
// REDUCE-OWN: zshard-opt: for the --reduce-type option: 'own' is not one of f32, bf16, f16
// CLASSES: error: zshard-form-units: layer-classes applies to the transformer policy, not size



func.func @train_step(
    %a: tensor<4xf32> {zshard.role = #zshard.role<param>, zshard.name = "fc.a", zshard.init = #zshard.init<zeros>},
    %am: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %av: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.a.exp_avg_sq", zshard.param = "fc.a", zshard.init = #zshard.init<zeros>},
    %b: tensor<4xbf16> {zshard.role = #zshard.role<param>, zshard.name = "fc.b", zshard.init = #zshard.init<zeros>},
    %bm: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %bv: tensor<4xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "fc.b.exp_avg_sq", zshard.param = "fc.b", zshard.init = #zshard.init<zeros>},
    %x: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"},
    %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
    %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<4xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.a"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.a.exp_avg_sq"},
        tensor<4xbf16> {zshard.role = #zshard.role<param_out>, zshard.name = "fc.b"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.b.exp_avg"},
        tensor<4xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "fc.b.exp_avg_sq"})
    attributes {zshard.step} {
  %c0 = arith.constant 0.0 : f32 loc("")
  %le = tensor.empty() : tensor<f32> loc("")
  %lz = linalg.fill ins(%c0 : f32) outs(%le : tensor<f32>) -> tensor<f32> loc("")
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
    ins(%a, %x : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
    ^bb0(%p0: f32, %p1: f32, %acc: f32):
      %p = arith.mulf %p0, %p1 : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("fc")
  %gae = tensor.empty() : tensor<4xf32> loc("fc")
  %ga = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%x : tensor<4xf32>) outs(%gae : tensor<4xf32>) {
    ^bb0(%p0: f32, %out: f32):
      %q = arith.addf %p0, %p0 : f32
      linalg.yield %q : f32
    } -> tensor<4xf32> loc("fc")
  %gb = arith.constant dense<1.0> : tensor<4xbf16> loc("fc")
  %a2, %am2, %av2 = zshard.adamw textbook %a, %ga, %am, %av lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> loc("fc")
  %b2, %bm2, %bv2 = zshard.adamw textbook %b, %gb, %bm, %bv lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32> loc("fc")
  return %loss, %a2, %am2, %av2, %b2, %bm2, %bv2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32> loc("")
}
