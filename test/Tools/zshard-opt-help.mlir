// Tests that `zshard-opt --help` lists zshard's passes and the mlir-opt
// options, with the defaults zshard-opt changes, but not LLVM's code
// generation and debug options, which `--help-hidden` still lists.

// RUN: zshard-opt --help | FileCheck %s --implicit-check-not=--asm-show-inst \
// RUN:   --implicit-check-not=--aarch64-neon-syntax --implicit-check-not=--amdgpu-
// RUN: zshard-opt --help-hidden | FileCheck %s --check-prefix=HIDDEN

// CHECK: OVERVIEW: zshard optimizer driver
// CHECK-DAG: --mlir-print-debuginfo {{.*}} (default on in zshard-opt)
// CHECK-DAG: --mlir-print-local-scope {{.*}} (default on in zshard-opt)
// CHECK-DAG: --mlir-print-op-on-diagnostic {{.*}} (default off in zshard-opt)
// CHECK-DAG: --zshard-form-units
// CHECK-DAG: --zshard-shard
// CHECK-DAG: --zshard-verify-contract
// CHECK-DAG: --split-input-file
// CHECK-DAG: --verify-diagnostics

// HIDDEN: --asm-show-inst
