// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 -o %t.mlir
// RUN: rm -rf %t.zsa %t.plain.zsa
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 2 --eval --memory-report -o %t.zsa | FileCheck %s --check-prefix=PLAN
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.zsa/manifest.json
// RUN: llvm-nm -D --defined-only %t.zsa/eval.so | FileCheck %s --check-prefix=SYMBOLS
// RUN: zshard-compile %t.mlir --eval --emit=memory-plan | FileCheck %s --check-prefix=PLANONLY
// RUN: head -c 4098 /dev/zero > %t.val.bin
// RUN: env OPENBLAS_NUM_THREADS=1 zshard-run %t.zsa --ranks 2 --steps 3 --eval-data %t.val.bin --eval-every 2 --log %t.log --log-json %t.jsonl > /dev/null
// RUN: FileCheck %s --check-prefix=LOG < %t.log
// RUN: FileCheck %s --check-prefix=JSONL < %t.jsonl
// RUN: printf '\377\377' > %t.bad.bin
// RUN: head -c 4096 /dev/zero >> %t.bad.bin
// RUN: not zshard-run %t.zsa --ranks 2 --steps 1 --eval-data %t.bad.bin 2>&1 | FileCheck %s --check-prefix=BADDATA
// RUN: rm -rf %t.cuda.zsa
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 2 --target=cuda --cuda-format=isa --eval -o %t.cuda.zsa
// RUN: llvm-nm -D --undefined-only %t.cuda.zsa/eval.so | FileCheck %s --check-prefix=CUDA
// RUN: not zshard-compile %t.mlir --eval --emit=lowered-mlir 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: zshard-compile %t.mlir -o %t.plain.zsa
// RUN: not test -e %t.plain.zsa/eval.so
// RUN: not zshard-run %t.plain.zsa --eval-data %t.val.bin 2>&1 | FileCheck %s --check-prefix=NOEVAL

// Tests that `zshard-compile --eval` writes the eval entry next to the
// step: eval.so exporting zshard_eval and its signature function, named by
// the manifest's "eval" with the peak of its own memory plan, which
// --memory-report prints after the step's (it has no gradients; that its
// peak is below the step's is checked by test/e2e/eval_checks.py).
// PLAN:      memory plan per rank of {{.*}}.mlir:
// PLAN:      gradients {{ *}}0 {{ *}}{{[1-9][0-9]*}}
// PLAN:      total
// PLAN:      memory plan per rank of the eval entry of {{.*}}.mlir:
// PLAN:      gradients {{ *}}0 {{ *}}0 {{ *}}0
// PLAN:      total
// MANIFEST:      "eval": {
// MANIFEST-NEXT:   "entry": "zshard_eval",
// MANIFEST-NEXT:   "library": "eval.so",
// MANIFEST-NEXT:   "peak_bytes": {{[0-9]+}},
// MANIFEST-NEXT:   "signature": "{{[0-9a-f]+}}"
// SYMBOLS-DAG: T zshard_eval{{$}}
// SYMBOLS-DAG: T zshard_eval_signature{{$}}
// PLANONLY: memory plan per rank of {{.*}}.mlir:
// PLANONLY: memory plan per rank of the eval entry of {{.*}}.mlir:

// zshard-run --eval-data: the eval loss at the end of the lines of the steps
// that evaluated (every second, and the last), and in their --log-json
// objects.
// LOG:      zshard-run: {{.*}}; data: {{.*}}; eval: {{.*}}.val.bin, 1 batch every 2 steps and after the last step; lr
// LOG-NEXT: step 1/3  loss {{[0-9.]+}}  tok/s {{[0-9]+$}}
// LOG-NEXT: step 2/3  loss {{[0-9.]+}}  tok/s {{[0-9]+}}  eval_loss {{[0-9.]+$}}
// LOG-NEXT: step 3/3  loss {{[0-9.]+}}  tok/s {{[0-9]+}}  eval_loss {{[0-9.]+$}}
// JSONL:     {"step":1,
// JSONL-NOT: eval_loss
// JSONL:     {"step":2,{{.*}}"eval_loss":{{[0-9.]+}},"eval_ms":
// JSONL:     {"step":3,{{.*}}"eval_loss":{{[0-9.]+}},"eval_ms":

// An eval file that does not fit the step: the message --data would give,
// after --eval-data.
// BADDATA: zshard-run: error: --eval-data: {{.*}}.bad.bin: token 65535 at index 0 is not below the vocabulary size 64 (the rows of param 'wte'); read as u16: is it a file of u32 tokens? (--data-dtype u32)

// --target=cuda: the eval entry is lowered by the CUDA pipeline too, its
// kernels launched through MLIR's GPU host ABI.
// CUDA-DAG: U mgpuLaunchKernel
// CUDA-DAG: U zshard_rt_step_all_gather_start

// EMIT: zshard-compile: error: --eval applies to --emit=artifact and --emit=memory-plan
// NOEVAL: zshard-run: error: {{.*}}.plain.zsa: --eval-data needs the artifact's eval entry, and it has none (compile the step with zshard-compile --eval)
