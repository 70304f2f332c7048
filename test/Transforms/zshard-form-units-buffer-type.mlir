// RUN: zshard-opt %S/Inputs/buffer-step.mlir --zshard-form-units="pattern=fc ranks=2 buffer-type=bf16" | FileCheck %s --check-prefix=BF16
// RUN: zshard-opt %S/Inputs/buffer-step.mlir --zshard-form-units="pattern=fc ranks=2 buffer-type=f16 reduce-type=bf16" | FileCheck %s --check-prefix=F16
// RUN: zshard-opt %S/Inputs/buffer-step.mlir --zshard-form-units="pattern=fc ranks=2" | FileCheck %s --check-prefix=OWN
// RUN: zshard-opt %S/Inputs/buffer-step.mlir --zshard-form-units="pattern=fc ranks=2 buffer-type=bf16" | zshard-opt | FileCheck %s --check-prefix=BF16
// RUN: not zshard-opt %S/Inputs/buffer-step.mlir --zshard-form-units="buffer-type=f64" 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=error:
// RUN: not zshard-opt %S/Inputs/buffer-step.mlir --zshard-form-units="buffer-type=bfloat16" 2>&1 | FileCheck %s --check-prefix=TORCH --implicit-check-not=error:
// RUN: zshard-compile %S/Inputs/buffer-step.mlir --strategy full_shard --ranks 2 --wrap transformer=fc --buffer-dtype bf16 --emit=sharded-mlir | FileCheck %s --check-prefix=COMPILE
// RUN: not zshard-compile %S/Inputs/buffer-step.mlir --strategy full_shard --ranks 2 --buffer-dtype fp8 2>&1 | FileCheck %s --check-prefix=CBAD --implicit-check-not=error:
// RUN: not zshard-compile %S/Inputs/buffer-step.mlir --buffer-dtype bf16 2>&1 | FileCheck %s --check-prefix=CNOSTRAT --implicit-check-not=error:

// zshard-form-units buffer-type=T (FSDP's MixedPrecision(buffer_dtype=T))
// gives every unit buffer(T), printed after reduce(...) and read back;
// without it the units have none (buffers are used in their own type).
// zshard-compile --buffer-dtype passes it through; zshard-shard then
// rounds the step's buffer fc.scale to bf16 before its first use. A type
// other than f32, bf16 or f16 is one line.

// BF16: zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) buffer(bf16) [
// F16: zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(bf16) buffer(f16) [
// OWN: zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) [

// BAD: zshard-opt: for the --buffer-type option: 'f64' is not one of own, f32, bf16, f16
// TORCH: zshard-opt: for the --buffer-type option: 'bfloat16' is not one of own, f32, bf16, f16

// COMPILE: zshard.unit @fc on @world[0] full_shard padded(4) param(f32) reduce(f32) buffer(bf16) [
// COMPILE: func.func @train_step(
// COMPILE-SAME: %[[S:[a-z0-9]+]]: tensor<4xf32> {{{[^}]*}}zshard.name = "fc.scale"
// COMPILE: %[[R:.+]] = arith.truncf %[[S]] : tensor<4xf32> to tensor<4xbf16>
// COMPILE: %[[E:.+]] = arith.extf %[[R]] : tensor<4xbf16> to tensor<4xf32>
// COMPILE: linalg.generic {{.*}} ins(%{{.*}}, %[[E]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// COMPILE: linalg.generic {{.*}} ins(%[[E]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)

// CBAD: zshard-compile: for the --buffer-dtype option: 'fp8' is not one of own, f32, bf16, f16
// CNOSTRAT: zshard-compile: error: --buffer-dtype needs --strategy (or --auto): without one the step is compiled as it is
