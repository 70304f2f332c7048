// RUN: zshard-opt %s --split-input-file --verify-diagnostics \
// RUN:   --zshard-cost-model="device=cpu link=eth10 peak-flops=1024 mem-bandwidth=1e15 link-bandwidth=48 link-latency=0"
// RUN: sed /expected-remark/d %s | zshard-opt --split-input-file -o /dev/null \
// RUN:   --zshard-cost-model="device=cpu link=eth10 peak-flops=1024 mem-bandwidth=1e15 link-bandwidth=48 link-latency=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=JSON --implicit-check-not=note: --implicit-check-not=builtin.module
// RUN: sed /expected-remark/d %s | zshard-opt --split-input-file -o /dev/null \
// RUN:   --zshard-cost-model="device=cpu link=eth10 peak-flops=1024 mem-bandwidth=1e15 link-bandwidth=48 link-latency=0" 2>&1 \
// RUN:   | sed -n 's/.*remark: zshard-cost-model: //p' \
// RUN:   | %python -c "import json, sys; print([json.loads(line)['step_s'] for line in sys.stdin])" \
// RUN:   | FileCheck %s --check-prefix=PARSED
// RUN: echo "" | not zshard-opt --zshard-cost-model="device=tpu" 2>&1 | FileCheck %s --check-prefix=DEV --implicit-check-not=error
// RUN: echo "" | not zshard-opt --zshard-cost-model="link=carrier-pigeon" 2>&1 | FileCheck %s --check-prefix=LINK --implicit-check-not=error
// RUN: zshard-opt %s --split-input-file -o /dev/null --zshard-cost-model="device=h200 link=nvlink" 2>&1 | FileCheck %s --check-prefix=PRESET

// Tests the simulation with round numbers: the 8x8x8 matmul is 1024 FLOPs
// at 1024 FLOP/s (1 s; memory is free), the all_gather moves 64 bytes to
// each of 4 ranks at 48 B/s, (4-1)/4 * 64 / 48 = 1 s, the fill of the
// init 64 elements (0.0625 s). Synchronous, the gather comes first and is
// exposed: 2.0625 s.
shard.grid @world(shape = 4)
// expected-remark @+1 {{zshard-cost-model: {"collectives":1,"communication_s":1,"compute_s":1.0625,"device":"cpu","exposed_communication_s":1,"flops":1088,"link":"eth10","offload_s":0,"step_s":2.0625}}}
func.func @train_step(%s: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "s"},
                      %a: tensor<8x8xf32> {zshard.role = #zshard.role<batch>, zshard.name = "a"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step} {
  %full = zshard.all_gather %s on @world[0] : tensor<4xf32> -> tensor<16xf32> loc("")
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x8xf32> loc("")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32> loc("")
  %m = linalg.matmul ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32> loc("")
  %c0i = arith.constant 0 : index loc("")
  %x = tensor.extract %full[%c0i] : tensor<16xf32> loc("")
  %l = tensor.from_elements %x : tensor<f32> loc("")
  return %l : tensor<f32> loc("")
}

// -----

// Started before the matmul and waited for after it, the gather hides
// behind the fill and the matmul: the step is their 1.0625 s and nothing
// is exposed.
shard.grid @world(shape = 4)
// expected-remark @+1 {{zshard-cost-model: {"collectives":1,"communication_s":1,"compute_s":1.0625,"device":"cpu","exposed_communication_s":0,"flops":1088,"link":"eth10","offload_s":0,"step_s":1.0625}}}
func.func @train_step(%s: tensor<4xf32> {zshard.role = #zshard.role<batch>, zshard.name = "s"},
                      %a: tensor<8x8xf32> {zshard.role = #zshard.role<batch>, zshard.name = "a"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step} {
  %t = zshard.all_gather_start %s on @world[0] : tensor<4xf32> -> !zshard.token<tensor<16xf32>> loc("")
  %c0 = arith.constant 0.0 : f32 loc("")
  %e = tensor.empty() : tensor<8x8xf32> loc("")
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32> loc("")
  %m = linalg.matmul ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32> loc("")
  %full = zshard.wait %t : !zshard.token<tensor<16xf32>> loc("")
  %c0i = arith.constant 0 : index loc("")
  %x = tensor.extract %full[%c0i] : tensor<16xf32> loc("")
  %l = tensor.from_elements %x : tensor<f32> loc("")
  return %l : tensor<f32> loc("")
}

// -----

// A zshard.adamw costs as the elementwise generic it lowers to: one FLOP per
// element of its parameter (8x8: 64 FLOPs at 1024 FLOP/s, 0.0625 s).
// expected-remark @+1 {{zshard-cost-model: {"collectives":0,"communication_s":0,"compute_s":0.0625,"device":"cpu","exposed_communication_s":0,"flops":64,"link":"eth10","offload_s":0,"step_s":0.0625}}}
func.func @train_step(%w: tensor<8x8xf32> {zshard.role = #zshard.role<param>, zshard.name = "w", zshard.init = #zshard.init<zeros>},
                      %m: tensor<8x8xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "w.exp_avg", zshard.param = "w", zshard.init = #zshard.init<zeros>},
                      %v: tensor<8x8xf32> {zshard.role = #zshard.role<opt_state>, zshard.name = "w.exp_avg_sq", zshard.param = "w", zshard.init = #zshard.init<zeros>},
                      %g: tensor<8x8xf32> {zshard.role = #zshard.role<batch>, zshard.name = "g"},
                      %lr: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "lr"},
                      %t: tensor<f32> {zshard.role = #zshard.role<hyper>, zshard.name = "step"})
    -> (tensor<f32> {zshard.role = #zshard.role<loss>},
        tensor<8x8xf32> {zshard.role = #zshard.role<param_out>, zshard.name = "w"},
        tensor<8x8xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "w.exp_avg"},
        tensor<8x8xf32> {zshard.role = #zshard.role<opt_state_out>, zshard.name = "w.exp_avg_sq"})
    attributes {zshard.step} {
  %p, %m2, %v2 = zshard.adamw textbook %w, %g, %m, %v lr %lr step %t
      betas(0.9, 0.95) eps(1.0e-08) weight_decay(0.1)
      : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32> loc("")
  return %lr, %p, %m2, %v2 : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32> loc("")
}

// Tests that the remark is one line whose payload is one JSON object, with
// no dump of the module after it.
// JSON: <stdin>:{{[0-9]+}}:1: remark: zshard-cost-model: {"collectives":1,"communication_s":1,"compute_s":1.0625,"device":"cpu","exposed_communication_s":1,"flops":1088,"link":"eth10","offload_s":0,"step_s":2.0625}{{$}}
// JSON: <stdin>:{{[0-9]+}}:1: remark: zshard-cost-model: {"collectives":1,"communication_s":1,"compute_s":1.0625,"device":"cpu","exposed_communication_s":0,"flops":1088,"link":"eth10","offload_s":0,"step_s":1.0625}{{$}}
// JSON: <stdin>:{{[0-9]+}}:1: remark: zshard-cost-model: {"collectives":0,"communication_s":0,"compute_s":0.0625,"device":"cpu","exposed_communication_s":0,"flops":64,"link":"eth10","offload_s":0,"step_s":0.0625}{{$}}
// PARSED: [2.0625, 1.0625, 0.0625]

// The presets are enum options (CostModel.h): an unknown one is refused
// when the pipeline is parsed, one line.
// DEV: {{^}}zshard-opt: for the --device option: 'tpu' is not one of a100, h100, h200, cpu{{$}}
// LINK: {{^}}zshard-opt: for the --link option: 'carrier-pigeon' is not one of nvlink, ib, eth100, eth10{{$}}
// PRESET: remark: zshard-cost-model: {{.*}}"device":"h200",{{.*}}"link":"nvlink",
