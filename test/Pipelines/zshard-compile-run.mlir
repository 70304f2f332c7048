// RUN: zshard-gen gpt --layers 2 --d-model 32 --heads 4 --vocab 64 --seq 16 --batch 2 -o %t.mlir
// RUN: zshard-compile %t.mlir --strategy full_shard --ranks 2 -o %t.one.zsa
// RUN: zshard-opt %t.mlir --mlir-print-debuginfo --zshard-form-units="pattern=h.<i> ranks=2 strategy=full_shard" --zshard-shard --zshard-async --zshard-prefetch | zshard-compile - -o %t.chain.zsa
// RUN: diff %t.one.zsa/manifest.json %t.chain.zsa/manifest.json
// RUN: env OPENBLAS_NUM_THREADS=1 zshard-run %t.one.zsa --ranks 2 --steps 3 --quiet --log-json %t.one.json > /dev/null
// RUN: env OPENBLAS_NUM_THREADS=1 zshard-run %t.chain.zsa --ranks 2 --steps 3 --quiet --log-json %t.chain.json > /dev/null
// RUN: grep -o '"loss": *[^,]*' %t.one.json > %t.one.losses
// RUN: grep -o '"loss": *[^,]*' %t.chain.json > %t.chain.losses
// RUN: diff %t.one.losses %t.chain.losses
// RUN: FileCheck %s < %t.one.losses

// Tests that the artifact of the one command (`zshard-compile --strategy
// full_shard --ranks 2`) is the artifact of the explicit chain (zshard-opt
// with the same passes, then zshard-compile): the same manifest, and under
// zshard-run on 2 ranks the same losses, bit for bit, over three steps.
// CHECK:      "loss":
// CHECK-NEXT: "loss":
// CHECK-NEXT: "loss":
