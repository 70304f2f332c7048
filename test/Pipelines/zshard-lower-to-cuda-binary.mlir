// REQUIRES: cuda-toolkit
// RUN: zshard-opt %s --zshard-bufferized-step-to-cuda | FileCheck %s --check-prefix=PTX
// RUN: zshard-opt %s --zshard-bufferized-step-to-cuda="format=bin" | FileCheck %s --check-prefix=CUBIN
// RUN: zshard-opt %s --zshard-bufferized-step-to-cuda="format=fatbin" | FileCheck %s --check-prefix=FATBIN
// RUN: zshard-gen gpt --layers 1 --d-model 32 --heads 2 --vocab 64 --seq 8 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --target=cuda --emit=llvm-ir | FileCheck %s --check-prefix=AUTO

// Tests the binaries the CUDA toolkit makes possible: math left to
// libdevice (math.rsqrt, math.log1p are calls of __nv_* functions after
// convert-gpu-to-nvvm) is linked in, so the PTX calls nothing external; with
// ptxas the kernels become a cubin (an ELF) for the chip, with fatbinary a
// fat binary (magic 0xBA55ED50), which zshard-compile embeds by default.
// PTX:       gpu.binary @step_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.entry step_kernel(
// PTX-NOT:   __nv_
// PTX-NOT:   .extern
// CUBIN:     gpu.binary @step_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}bin = "\7FELF
// FATBIN:    gpu.binary @step_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}"P\EDU\BA

// zshard-compile's --cuda-format=auto embeds a fatbin when the toolkit has
// ptxas and fatbinary, loaded with mgpuModuleLoad (blob and size).
// AUTO:      @train_step_kernel_binary = internal constant [{{[0-9]+}} x i8] c"P\EDU\BA
// AUTO:      call ptr @mgpuModuleLoad(ptr {{.*}}@train_step_kernel_binary, i64 {{[0-9]+}})
func.func @step(%a: memref<1024xf32>, %b: memref<1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = math.rsqrt %x : f32
    %l = math.log1p %r : f32
    linalg.yield %l : f32
  }
  return
}
