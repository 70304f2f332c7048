// Tests that zshard-paths-from-locations reads module paths written as name
// locations into zshard.path: a name wrapping a file location gives its name,
// an op with a path keeps it (whatever its location says), the root path
// loc("") and constants give none. Without it zshard-remat finds no block and
// says why; with it, and in zshard-compile, which runs it first, the blocks
// are checkpointed.

// RUN: zshard-opt %S/Inputs/mlp2-step-locations.mlir --zshard-paths-from-locations --mlir-print-debuginfo=false | FileCheck %s
// RUN: not zshard-opt %S/Inputs/mlp2-step-locations.mlir --zshard-remat="pattern=fc.<i>" 2>&1 | FileCheck %s --check-prefix=HINT
// RUN: zshard-opt %S/Inputs/mlp2-step-locations.mlir --zshard-paths-from-locations --zshard-remat="pattern=fc.<i>" --mlir-print-debuginfo=false | FileCheck %s --check-prefix=REMAT
// RUN: zshard-compile %S/Inputs/mlp2-step-locations.mlir --strategy=full_shard --ranks=2 --wrap transformer='fc.<i>' --remat=all --compile-to=remat --mlir-print-debuginfo=false -o - | FileCheck %s --check-prefix=REMAT
// RUN: not zshard-opt %s --split-input-file --zshard-paths-from-locations --mlir-print-debuginfo=false 2>&1 | FileCheck %s --check-prefix=SPLIT

// CHECK-LABEL: func.func @train_step
// CHECK-NEXT:  arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  tensor.empty() {zshard.path = "fc.0"} : tensor<2x6xf32>
// CHECK-NEXT:  linalg.fill {zshard.path = "fc.0"} ins
// CHECK-NEXT:  linalg.matmul {zshard.path = "fc.0"} ins
// CHECK:       linalg.matmul {zshard.path = "fc.1"} ins
// The loss, at the root module.
// CHECK:       tensor.empty() : tensor<f32>
// CHECK:       zshard.adamw {{.*}} {zshard.path = "fc.1"}
// CHECK:       return

// HINT: error: zshard-remat: pattern 'fc.<i>' matches no forward op; no block to checkpoint (the step's ops carry their module paths as name locations (loc("h.0.attn")), not as zshard.path attributes: run --zshard-paths-from-locations first)

// REMAT-DAG: {zshard.path = "fc.0", zshard.remat = "fc.0"}
// REMAT-DAG: {zshard.path = "fc.1", zshard.remat = "fc.1"}

// An op with a path keeps it; a name location that is no module path is an
// error on its op, which keeps the attribute it has.
// SPLIT: zshard-paths-from-locations.mlir:[[# @LINE + 14]]:1: error: zshard-paths-from-locations: the name location "h-0" is not a module path (identifiers and decimal indices joined by '.', such as "h.0.attn")
// SPLIT-NOT: error:
// SPLIT: tensor.empty() {zshard.path = "fc.1"} : tensor<2xf32>
// SPLIT-NEXT: tensor.empty() {zshard.path = "h.0"} : tensor<2xf32>
// SPLIT-NOT: error:
func.func @train_step(%x: tensor<2xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<2xf32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step} {
  %e = tensor.empty() {zshard.path = "fc.1"} : tensor<2xf32> loc("fc.0")
  %f = tensor.empty() : tensor<2xf32> loc("h.0")
  return %x : tensor<2xf32>
}

// -----

func.func @train_step(%x: tensor<2xf32> {zshard.role = #zshard.role<batch>, zshard.name = "x"})
    -> (tensor<2xf32> {zshard.role = #zshard.role<loss>}) attributes {zshard.step} {
  %e = tensor.empty() : tensor<2xf32> loc("h-0")
  %f = tensor.empty() : tensor<2xf32> loc("h.0")
  return %x : tensor<2xf32>
}
