// Tests that zshard-opt's diagnostics are their one line by default: an
// error is not followed by a dump of the op or the module
// (--mlir-print-op-on-diagnostic is off unless asked for), and a pass's
// error about a generated step is located at `zshard-gen:0:0`, not at
// `loc("")`. The hints of the pattern errors are in zshard-form-units.mlir
// and zshard-remat.mlir, the remarks in zshard-cost-model.mlir and
// zshard-memory-plan.mlir.

// RUN: not zshard-opt %s 2>&1 | FileCheck %s --check-prefix=ONE --implicit-check-not=note:
// RUN: not zshard-opt %s --mlir-print-op-on-diagnostic 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: zshard-gen mlp --widths 4,3 --batch 2 \
// RUN:   | not zshard-opt --zshard-form-units="pattern=layers.<i>" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PASS --implicit-check-not=note: --implicit-check-not='loc(""'

// ONE: zshard-opt-diagnostics.mlir:[[@LINE+6]]:8: error: 'zshard.all_gather' op result rank 2 differs from the input rank 1{{$}}
// DUMP: zshard-opt-diagnostics.mlir:[[@LINE+5]]:8: error: 'zshard.all_gather' op result rank 2 differs from the input rank 1{{$}}
// DUMP: zshard-opt-diagnostics.mlir:[[@LINE+4]]:8: note: see current operation:
// PASS: {{^}}zshard-gen:0:0: error: zshard-form-units: pattern 'layers.<i>' matches no parameter; every parameter would land in @root (the step's repeated blocks are fc.<i>; or use policy=size){{$}}
shard.grid @world(shape = 4)
func.func @f(%x: tensor<4xf32>) {
  %0 = zshard.all_gather %x on @world[0] : tensor<4xf32> -> tensor<16x1xf32>
  return
}
