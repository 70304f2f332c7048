// Tests that the manifest zshard-compile writes is the one the runtime
// reads: the runtime's reader (loadManifest) reads every field and writes
// it back unchanged, for an unsharded step and for a sharded one with a
// grid, hybrid units, optimizer-state slots placed on the host and in-place
// results; and that a manifest of another major version of the schema is
// refused with one line naming both versions.

// RUN: zshard-gen mlp --widths 8,16,4 --batch 2 -o %t-mlp.mlir
// RUN: zshard-compile %t-mlp.mlir -o %t-mlp.zsa
// RUN: zshard-rt-manifest-roundtrip %t-mlp.zsa | FileCheck %s --check-prefix=MLP
// RUN: zshard-gen gpt --layers 1 --d-model 16 --heads 2 --vocab 32 --seq 8 --batch 2 -o %t-gpt.mlir
// RUN: zshard-opt %t-gpt.mlir --mlir-print-debuginfo --zshard-shard-step="strategy=hybrid_shard ranks=4 replicas=2 offload=true" | zshard-compile - -o %t-gpt.zsa
// RUN: zshard-rt-manifest-roundtrip %t-gpt.zsa | FileCheck %s --check-prefix=GPT
// RUN: FileCheck %s --check-prefix=WRITTEN < %t-gpt.zsa/manifest.json
// RUN: sed -e 's/"version": 2$/"version": 1/' %t-mlp.zsa/manifest.json > %t-v1.json
// RUN: cp %t-v1.json %t-mlp.zsa/manifest.json
// RUN: not zshard-rt-manifest-roundtrip %t-mlp.zsa 2>&1 | FileCheck %s --check-prefix=VERSION
// RUN: env OPENBLAS_NUM_THREADS=1 not zshard-run %t-mlp.zsa --steps 1 2>&1 | FileCheck %s --check-prefix=VERSION

// MLP: round-trip: {{[0-9]+}} arguments, {{[0-9]+}} results, 0 units, grid none, signature {{[0-9a-f]{16}$}}
// GPT: round-trip: {{[0-9]+}} arguments, {{[0-9]+}} results, {{[1-9][0-9]*}} units, grid {{[a-z_0-9]+}}, signature {{[0-9a-f]{16}$}}

// WRITTEN-DAG: "format": "zshard-artifact",
// WRITTEN-DAG: "version": 2{{$}}
// WRITTEN-DAG: "placement": "host",
// WRITTEN-DAG: "strategy": "hybrid_shard"{{$}}
// WRITTEN-DAG: "in_place": true,
// WRITTEN-DAG: "slots": [

// VERSION: {{^}}{{.*}}error: {{.*}}manifest.json: manifest version 1 is not supported: this runtime reads version 2 (compile the step with a zshard-compile of the same release){{$}}
// VERSION-NOT: error
