// RUN: zshard-opt %s --split-input-file --verify-diagnostics --mlir-print-op-on-diagnostic=false \
// RUN:   --zshard-cost-model="device=cpu link=eth10 peak-flops=1024 mem-bandwidth=1e15 link-bandwidth=48 link-latency=0"
// RUN: not zshard-opt %s --split-input-file --zshard-cost-model="device=tpu" 2>&1 | FileCheck %s --check-prefix=DEV
// RUN: not zshard-opt %s --split-input-file --zshard-cost-model="link=carrier-pigeon" 2>&1 | FileCheck %s --check-prefix=LINK

// Tests the simulation with round numbers: the 8x8x8 matmul is 1024 FLOPs
// at 1024 FLOP/s (1 s; memory is free), the all_gather moves 64 bytes to
// each of 4 ranks at 48 B/s, (4-1)/4 * 64 / 48 = 1 s, the fill of the
// init 64 elements (0.0625 s). Synchronous, the gather comes first and is
// exposed: 2.0625 s.
shard.grid @world(shape = 4)
// expected-remark @+1 {{cost model (cpu, eth10): step 2.0625 s, compute 1.0625 s, communication 1 s, exposed 1 s}}
func.func @train_step(%s: tensor<4xf32> {zshard.role = "batch", zshard.name = "s"},
                      %a: tensor<8x8xf32> {zshard.role = "batch", zshard.name = "a"})
    -> (tensor<f32> {zshard.role = "loss"}) attributes {zshard.step} {
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
// expected-remark @+1 {{cost model (cpu, eth10): step 1.0625 s, compute 1.0625 s, communication 1 s, exposed 0 s}}
func.func @train_step(%s: tensor<4xf32> {zshard.role = "batch", zshard.name = "s"},
                      %a: tensor<8x8xf32> {zshard.role = "batch", zshard.name = "a"})
    -> (tensor<f32> {zshard.role = "loss"}) attributes {zshard.step} {
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

// DEV: error: {{.*}}zshard-cost-model: unknown device 'tpu'; presets: a100, h100, h200, cpu
// LINK: error: {{.*}}zshard-cost-model: unknown link 'carrier-pigeon'; presets: nvlink, ib, eth100, eth10
